/* trainer/src/tfevents.h: a TensorBoard event-file writer for training scalars (loss, accuracy,
 * samples/s), as torch.utils.tensorboard.SummaryWriter writes them: TFRecord framing with masked
 * CRC32C around hand-encoded tensorflow.Event protobufs. No globals; one writer per file. */
#ifndef GP_TRAINER_TFEVENTS_H
#define GP_TRAINER_TFEVENTS_H

#include "gp/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An open event file. Not thread-safe: use one writer from one thread. */
typedef struct tfevents_writer tfevents_writer;

/** Longest tag accepted by tfevents_add_scalar, in bytes. */
#define TFEVENTS_TAG_MAX 256

/**
 * Create `dir` if missing (one level) and open a new event file in it named
 * `events.out.tfevents.<unix secs>.<host>` (a `.<n>` suffix is added if that name exists),
 * then write the `brain.Event:2` file-version record.
 * @param dir the run directory TensorBoard's --logdir will see (must not be NULL).
 * @param err optional details on failure.
 * @return the writer (free with tfevents_close), or NULL on failure.
 */
tfevents_writer *tfevents_open(const char *dir, gp_error *err);

/**
 * Append one scalar summary {tag, simple_value} at `step`, stamped with the current wall time.
 * Records are buffered; call tfevents_flush to make them visible to a running TensorBoard.
 * @return GP_OK, GP_EINVAL (NULL writer/tag, empty tag or longer than TFEVENTS_TAG_MAX), or
 *         GP_EIO if a previous write failed (the details come back from flush/close).
 */
gp_status tfevents_add_scalar(tfevents_writer *w, const char *tag, long long step, float value);

/** Flush buffered records to the file. @return GP_OK or GP_EIO (with details in `err`). */
gp_status tfevents_flush(tfevents_writer *w, gp_error *err);

/** Flush, close and free the writer; NULL does nothing. @return GP_OK or GP_EIO. */
gp_status tfevents_close(tfevents_writer *w, gp_error *err);

/** @return the path of the event file; valid until tfevents_close(w). */
const char *tfevents_path(const tfevents_writer *w);

/** Masked CRC32C as TFRecord frames use it (exposed for tests). */
unsigned tfevents_masked_crc(const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
