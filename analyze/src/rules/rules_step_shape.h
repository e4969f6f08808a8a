/* rules_step_shape.h: where a step's time goes on its own thread, to tell a step slowed by one
 * long stretch (a stall: a sleep, a checkpoint, a GC pause, one preemption) from one whose every
 * part ran slower (the machine: another process taking the core in many short slices, a slower
 * core). GT14 reads it. */
#ifndef GP_ANALYZE_RULES_STEP_SHAPE_H
#define GP_ANALYZE_RULES_STEP_SHAPE_H

#include "rules/rules_int.h"

/* One analysed step on the thread that holds its ProfilerStep range: the longest stretch of it
 * in which no range on that thread starts or ends (a gap between operators, or a piece of one
 * operator's self time between its children), and how many ranges it holds. `known` is 0 for a
 * step without a range inside (nothing to split its time: all of it is one stretch) or without
 * a step event (a synthetic step). */
struct rules_step_shape {
    int64_t longest;
    uint32_t ranges;
    int known;
};

/* Fill out[0 .. c->n_steps). */
gp_status rules_step_shapes(const struct rules_ctx *c, struct rules_step_shape *out);

/* Of the outlier steps at[0 .. n) (indices among the analysed steps), those slowed all over:
 * within a tenth of the usual range count, a longest stretch grown by under half the step's
 * excess over `med` (its time, less its wait for a core with `own`) past the usual longest; or,
 * with the usual shape (as many ranges as the median step, so its stretches line up with those
 * of the other steps of that shape), the stretch that grew most past its own median holding
 * under halfway between that median's share of `med` and all of the excess. A stall (a sleep, a
 * checkpoint, a GC pause, one preemption) is one stretch that grew by most of it, or extra work; a
 * machine that runs slower (another process taking the core in many short slices, a slower core)
 * stretches every part by the step's factor. Their count and summed excess, the most any of them
 * grew a stretch by and that step's excess, and the median step's range count. */
struct rules_slowed {
    size_t n;
    int64_t excess, grew, grew_excess;
    uint32_t ranges;
};
gp_status rules_slowed_steps(const struct rules_ctx *c, const size_t *at, size_t n, int own,
                             int64_t med, struct rules_slowed *w);

#endif
