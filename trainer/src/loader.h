/* trainer/src/loader.h: the batch loader. A ring of workers * prefetch slots filled by worker
 * threads (or inline in the training thread when workers == 0), delivered in sequence order.
 * The epoch's permutation comes from the seed alone, so every worker count yields the same batches.
 */
#ifndef GP_TRAINER_LOADER_H
#define GP_TRAINER_LOADER_H

#include "dataset.h"

#include <stddef.h>
#include <stdint.h>

/* Slot memory allocator (e.g. cudaHostAlloc for pinned slots); NULL ud/fns mean malloc/free.
 * Returns NULL on failure. */
typedef void *(*loader_alloc_fn)(size_t bytes, void *ud);
typedef void (*loader_free_fn)(void *p, void *ud);

struct loader_config {
    const struct dataset *ds;
    int batch;    /* samples per batch; the last batch of an epoch may be smaller */
    int workers;  /* 0 = fill in the caller's thread inside loader_next */
    int prefetch; /* slots per worker (>= 1) */
    int shuffle;  /* permute each epoch from (seed, epoch) */
    int augment;  /* random crop (padding 2) and horizontal flip */
    uint64_t seed;
    int epochs;    /* epochs to deliver */
    int drop_last; /* leave out an epoch's last batch where it holds fewer (DataLoader's) */
    loader_alloc_fn alloc;
    loader_free_fn free;
    void *alloc_ud;
};

/* A delivered batch; valid until loader_release. x and y are contiguous in one slot allocation
 * (x first), so a single copy moves both. */
struct batch {
    float *x;       /* (n, rows, cols) normalised pixels: (p / 255 - 0.5) / 0.5 */
    int32_t *y;     /* (n) labels */
    int32_t *index; /* (n) dataset indices (tests check coverage with them) */
    int n;
    int epoch;      /* 0-based */
    long long step; /* 0-based batch within the epoch */
    long long seq;  /* 0-based batch over the whole run */
    size_t bytes;   /* bytes from x to the end of y */
};

struct loader;

/* Start the workers. cfg->ds must outlive the loader. */
gp_status loader_open(struct loader **out, const struct loader_config *cfg, gp_error *err);

/* Batches per epoch: ceil(n / batch), or n / batch with drop_last. */
long long loader_epoch_batches(const struct loader *l);

/* Wait for the next batch in order. *out is NULL after the last one. A worker's failure (e.g. a
 * PNG that does not decode) comes back here. The caller holds at most one batch at a time. */
gp_status loader_next(struct loader *l, struct batch **out, gp_error *err);

/* Give a batch's slot back to the workers. */
void loader_release(struct loader *l, struct batch *b);

/* Stop the workers and wait for them. @return the CPU time they used (ns); *runq_ns (may be
 * NULL) gets their time waiting for a core, -1 if unknown. Idempotent. */
int64_t loader_join(struct loader *l, int64_t *runq_ns);

/* Stop and join the workers (even mid-epoch, with workers blocked on a full ring) and free
 * everything. NULL does nothing. */
void loader_close(struct loader *l);

/* Normalise one image into `out`, applying the crop/flip drawn for (seed, epoch, index) when
 * `augment` is set. Exposed for tests. */
void loader_transform(float *out, const uint8_t *px, int rows, int cols, int augment, uint64_t seed,
                      int epoch, int index);

#endif
