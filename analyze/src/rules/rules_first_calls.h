/* rules_first_calls.h: one-time work in a step, the first call of an operator, range or kernel
 * launch the trace has not run before (a new name, a new input shape, a new batch size, a launch
 * of a kernel not launched before): cuBLAS/cuDNN choosing an algorithm for a new shape, a lazy
 * CUDA module load, torch.compile recompiling for a new shape. GT14 reads it to tell a step
 * slow once from a stall that recurs. */
#ifndef GP_ANALYZE_RULES_FIRST_CALLS_H
#define GP_ANALYZE_RULES_FIRST_CALLS_H

#include "rules/rules_int.h"

/* The costliest first call of a step: its name, its input shape (GP_STR_NONE: none recorded),
 * the kernel a launch call launched (GP_STR_NONE: not a launch), the step's batch size where the
 * trace records one per step (-1 unknown), and its time beyond what the same work costs in
 * other calls. */
struct rules_first_call {
    gp_str name, shape, kernel;
    int64_t batch, excess;
    int fresh; /* a name no other call has: all its time counts */
};

/* Per analysed step: the time its first calls took beyond what the same work costs elsewhere
 * (novel steps: those making the first call of a key; the time of a key's first call beyond its
 * calls in the other steps, or of a key run only in novel steps beyond its name's calls in the
 * other steps, all of it for a name run only there), outermost calls only so that no time
 * counts twice, each with the untraced stretch just before it; its costliest first call, and
 * its earliest first call of a new input shape (name GP_STR_NONE: none). A step's batch size
 * differs from the run's usual one: batch[i] against usual_batch (-1 unknown). */
struct rules_first_calls {
    int64_t *excess;
    struct rules_first_call *top;
    struct rules_first_call *shaped; /* the step's earliest first call of a new input shape */
    int64_t *batch;
    int64_t usual_batch;
};

/* A CPU range the scans key: an operator, annotation or runtime call; not a step, a loader
 * wait (GT01's) or a Python frame. */
int rules_first_keyed(const gp_event *e);

/* Fill `out` for c's analysed steps (none counted in the first step of a trace without earlier
 * steps: everything is first there). GP_ENOMEM when it cannot. */
gp_status rules_first_calls_scan(const struct rules_ctx *c, struct rules_first_calls *out);
void rules_first_calls_release(struct rules_first_calls *f);

#endif
