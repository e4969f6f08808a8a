/* trainer/src/checkpoint.h: weights and optimizer state on disk. Saved atomically (temp file,
 * fsync, rename) with a CRC32, so a crash never leaves a half-written checkpoint at PATH. */
#ifndef GP_TRAINER_CHECKPOINT_H
#define GP_TRAINER_CHECKPOINT_H

#include "backend.h"

/* Before training: can a checkpoint be saved at `path`? Its folder must exist and take a new
 * file, and `path` must not be a directory or anything but a regular file (or a symlink to one,
 * which is followed: the file it names is replaced). GP_EINVAL or GP_EIO naming `path`. */
gp_status checkpoint_check_target(const char *path, gp_error *err);

/* Write `st` (n_params floats, then the optimizer moments) to `path` through a temporary file
 * beside it (a name longer than the file's, so never the file itself), keeping its mode. */
gp_status checkpoint_save(const char *path, const struct model_spec *m, enum optim_kind opt,
                          const struct backend_state *st, gp_error *err);

/* Read a checkpoint saved for the same model into `st`. When it was saved with another
 * optimizer, only the weights are loaded, the moments are zeroed and *opt_loaded is 0. */
gp_status checkpoint_load(const char *path, const struct model_spec *m, enum optim_kind opt,
                          struct backend_state *st, int *opt_loaded, gp_error *err);

#endif
