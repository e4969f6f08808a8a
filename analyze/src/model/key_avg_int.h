/* Key averages' internals shared by key_avg.c (the op tree and its rows), key_avg_mem.c
 * (PyTorch's memory attribution) and key_avg_overhead.c (CUPTI's overhead events). */
#ifndef GP_KEY_AVG_INT_H
#define GP_KEY_AVG_INT_H
#include "model/analysis_int.h"

/* An op of PyTorch's tree (torch.autograd.profiler_util EventList._populate_cpu_children): a
 * host range that result.events() holds, less the utility ops _parse_kineto_results drops.
 * Python frames are members (they nest and take time from their parent) but never rows;
 * CUPTI's overhead events are members of the profiler's thread (ka_overhead). */
int ka_is_member(const gp_analysis *a, const gp_event *e);

/* The [memory] records sorted by time, with prefix sums of their CPU and device bytes. */
typedef struct ka_mem {
    size_t n;
    int64_t *ts;
    int64_t *sum; /* 2 (n + 1): CPU bytes up to record k at sum[2k], device bytes at sum[2k+1] */
} ka_mem;

gp_status ka_mem_init(ka_mem *m, const gp_analysis *a);
void ka_mem_release(ka_mem *m);
/* Bytes of the records at [ts, end], both ends included (MemRecordsAcc.in_interval): out[0]
 * CPU (CPU, MKLDNN, IDEEP), out[1] device (CUDA, HIP, XPU, PrivateUse1). */
void ka_mem_in(const ka_mem *m, int64_t ts, int64_t end, int64_t out[2]);
/* The records inside no member op (PyTorch's top-level "[memory]" events): their count and
 * bytes. @return 0, or -1 when out of memory. */
gp_status ka_mem_unattributed(const ka_mem *m, const gp_analysis *a, uint64_t *count,
                              int64_t bytes[2]);

/* CUPTI's overhead events (key_avg_overhead.c), which PyTorch's op tree holds on the thread
 * that stops the profiler. */
typedef struct ka_overhead_ev {
    int64_t ts, dur;
    uint32_t ev;
} ka_overhead_ev;

typedef struct ka_overhead {
    ka_overhead_ev *ev; /* by start, longer first */
    size_t n;
    uint32_t track; /* the track whose op tree they join; GP_NONE when there are none */
} ka_overhead;

/* Find them, and set each one's device time in direct (already holding the GPU work linked
 * to each op). @return GP_OK or GP_ENOMEM. */
gp_status ka_overhead_init(ka_overhead *o, const gp_analysis *a, int64_t *direct);
void ka_overhead_release(ka_overhead *o);

/* An op's FLOPs as PyTorch estimates them with with_flops=True (key_avg_flops.c); 0 for ops
 * it has no formula for. */
uint64_t ka_op_flops(const gp_trace *t, const gp_event *e);
/* The trace was recorded with with_flops=True (its top-level "with_flops"). */
int ka_trace_with_flops(const gp_trace *t);

#endif
