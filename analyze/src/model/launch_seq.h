/* launch_seq.h: a process's launches as one sequence, for the steps analysis_period.c cuts where
 * they repeat. */
#ifndef GP_ANALYZE_LAUNCH_SEQ_H
#define GP_ANALYZE_LAUNCH_SEQ_H

#include "model/analysis_int.h"

/* The launches of the process that launches most, in time order over its threads (PyTorch
 * launches the backward pass from another thread): what each launch call launched. */
typedef struct launch_seq {
    gp_str *name;  /* what each launch call launched (its first GPU activity's name) */
    int64_t *ts;   /* the call's start */
    int64_t *end;  /* the call's end */
    int64_t *idle; /* host time before it since the previous launch, outside CUDA calls (syncs
                      aside) */
    uint32_t *rt;  /* the call */
    uint32_t *act; /* the first GPU activity it launched */
    size_t n;
} launch_seq;

/* q for a's trace (all empty where nothing was launched). @return GP_OK or GP_ENOMEM (q then
 * empty). */
gp_status launch_seq_build(const gp_analysis *a, launch_seq *q);
void launch_seq_free(launch_seq *q);

#endif
