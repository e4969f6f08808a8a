/* rules_op_overhead.h: what running a loop's operators as one operation over the batch saves,
 * read from a CPU trace's operators (GT18's gain). Each operator's own time (its duration less
 * its children's) splits into a per-call cost, which the fix removes, and arithmetic on its
 * data, which the fused operation still does; the interpreter's time between top-level
 * operators is per call too. */
#ifndef GP_ANALYZE_RULES_OP_OVERHEAD_H
#define GP_ANALYZE_RULES_OP_OVERHEAD_H

#include "rules/rules_int.h"

struct rules_op_overhead {
    int64_t ns;      /* the looped operators' per-call cost and their share of the interpreter's */
    int64_t step_ns; /* the same in the median step */
    int64_t cap_ns;  /* an ATen operator's per-call cost at most (OVERHEAD_X view operators') */
    int64_t aten_self_ns, aten_counted_ns; /* the looped ATen operators' own time, what counts */
    int64_t python_ns;                     /* between top-level operators, all of it */
    size_t ops, looped; /* operators in the steps, and those called LOOP_CALLS+ times a step */
};

/* Over the analysed steps of the CPU tracks, outside the user ranges that `skip` names (the
 * DataLoader's, the optimizer's: other rules' time). */
gp_status rules_op_overhead(const struct rules_ctx *c, int (*skip)(const char *range),
                            struct rules_op_overhead *out);

#endif
