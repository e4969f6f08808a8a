/* sim_int.h: the simulated device's insides, shared by its runtime (sim_rt.c, sim_copy.c),
 * cuBLAS/cuBLASLt (sim_blas.c), cuDNN (sim_dnn.c) and kernel launches (sim_launch.h). Device
 * work is recorded when the host enqueues it but runs on the host later, in stream order: each
 * stream keeps a queue of closures (kernels, GEMMs, convolutions, memsets, async pinned and
 * device copies) and of waits on other streams' events, run when something depends on them (a
 * stream, event or device sync, a copy done at the call, a drained wait). So a host that reuses
 * a pinned buffer before its copy's event was waited on sees what a GPU would give it. Each
 * piece of device work gets a start and end on its stream from the timing model (sim_model.c)
 * and a record in the simulated CUPTI (tests/gpusim/fake_cupti.h), as the driver would make.
 * Work enqueued on a stream under capture (cudaStreamBeginCapture) becomes a node of the graph
 * instead, and is enqueued again, in capture order, at each launch of the graph (sim_graph.c). */
#ifndef GP_TESTS_SIM_INT_H
#define GP_TESTS_SIM_INT_H

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_CONTEXT 1u /* the simulated driver's primary context of device 0 */

/* The timing model (one named GPU's peak rates). */
struct sim_model {
    const char *name;                /* what the trace and `run` print */
    double fp32_flops, tensor_flops; /* FLOP/s: CUDA cores fp32, tensor cores fp16/bf16 */
    double mem_bw;                   /* device memory, bytes/s */
    double pinned_bw, pageable_bw;   /* PCIe host <-> device, bytes/s */
    uint64_t launch_ns;              /* from the launch call to the earliest kernel start */
    uint64_t min_kernel_ns;          /* the shortest kernel */
    size_t device_memory;
};
extern const struct sim_model sim_model;

/* Modelled duration of a kernel: FLOPs at the peak rate (tensor cores when `tensor`) or bytes
 * at the memory bandwidth, whichever is longer, and never under min_kernel_ns. */
uint64_t sim_kernel_ns(double flops, double bytes, int tensor);

struct sim_pending; /* work enqueued, not yet done (sim_copy.c) */
struct CUgraph_st;  /* a graph being captured or captured (sim_graph.c) */
struct CUstream_st {
    uint32_t id;
    uint64_t busy_until; /* modelled end of the last work enqueued */
    uint64_t seq;        /* work enqueued so far */
    struct sim_pending *head, *tail;
    struct CUgraph_st *capture; /* the graph work on this stream goes into, or NULL */
    struct CUstream_st *next;   /* every stream, for cudaDeviceSynchronize */
};
struct CUevent_st {
    struct CUstream_st *s; /* NULL: never recorded */
    uint64_t seq, at;      /* the stream's work and its end when recorded */
};

/* The thread's runtime state: its driver context current, cuInit done. */
void sim_thread_init(void);
/* Lock over streams, events and tables. */
void sim_lock(void);
void sim_unlock(void);
struct CUstream_st *sim_stream(cudaStream_t s); /* NULL means the legacy stream */
/* Do the work of `s` enqueued up to `seq` (all: UINT64_MAX), in order. Under sim_lock. */
void sim_drain(struct CUstream_st *s, uint64_t seq);
void sim_drain_all(void);
/* Place work of `ns` on `s` after its earlier work (and after `after`, an engine), no earlier
 * than launch latency from `t0`. */
void sim_place(struct CUstream_st *s, uint64_t t0, uint64_t ns, uint64_t *after, uint64_t *start,
               uint64_t *end);
/* Sleep until the modelled clock reaches `t`. */
void sim_wait_until(uint64_t t);
/* Record a runtime API call [t0, now] with correlation `corr`. Under fake_cupti_enter. */
void sim_api(uint32_t cbid, uint64_t t0, uint32_t corr);
/* A kernel `name` on `s` whose blocks `run(arg)` computes: its records, and run in stream order
 * (arg_bytes of arg copied); or, while `s` is capturing, a node of the graph, enqueued at each
 * launch. @return cudaSuccess, or cudaErrorMemoryAllocation. */
typedef void (*sim_run_fn)(void *arg);
/* Enqueue `run` (arg_bytes of arg copied) on `s` after the work placed so far; or a wait that
 * drains `on` up to on_seq when `s` reaches it. Under sim_lock. @return 0, -1 out of memory. */
int sim_defer(struct CUstream_st *s, sim_run_fn run, const void *arg, size_t arg_bytes);
int sim_defer_wait(struct CUstream_st *s, struct CUstream_st *on, uint64_t on_seq);
/* A kernel `name` on `s`: its launch's API record and its kernel record, placed by the model,
 * and `run(arg)` enqueued after the stream's earlier work. @return 0, -1 out of memory. */
int sim_kernel(cudaStream_t s, const char *name, uint64_t ns, unsigned blocks, unsigned threads,
               sim_run_fn run, const void *arg, size_t arg_bytes);
cudaError_t sim_work(cudaStream_t s, const char *name, uint64_t ns, unsigned blocks,
                     unsigned threads, sim_run_fn run, const void *arg, size_t arg_bytes);
/* A kernel's CUPTI record with what the launch decides (name, grid); times and ids not set. */
void sim_kernel_record(CUpti_ActivityKernel10 *k, const char *name, unsigned blocks,
                       unsigned threads);
/* The graph `s` is capturing into, or NULL (under sim_lock). */
struct CUgraph_st *sim_capturing(struct CUstream_st *s);
/* A node of `g` lasting `ns` whose `run(arg)` does the work (arg_bytes of arg copied), recorded
 * at each launch as `rec` (a kernel, memset or memcpy record: its times, stream and ids filled
 * in then); the capturing call's API record `cbid` from t0 is made now. Under sim_lock.
 * @return cudaSuccess or cudaErrorMemoryAllocation. */
cudaError_t sim_capture_node(struct CUgraph_st *g, const CUpti_Activity *rec, size_t rec_bytes,
                             uint64_t ns, sim_run_fn run, const void *arg, size_t arg_bytes,
                             uint32_t cbid, uint64_t t0);
/* Invalidate `g` (an illegal call on its stream during capture); @return the error for it. */
cudaError_t sim_capture_invalidate(struct CUgraph_st *g);
/* A call on `stream` that cannot be captured begins: the thread's runtime ready, *t0 now, and
 * the stream returned under sim_lock; or, if the stream is capturing, the capture invalidated,
 * NULL returned (not locked) and *rc the error. */
struct CUstream_st *sim_enter_uncaptured(cudaStream_t stream, uint64_t *t0, cudaError_t *rc);
/* A call not allowed while any stream captures in global mode (a sync, an allocation): every
 * capture is invalidated. @return 1 if that happened (the call returns
 * cudaErrorStreamCaptureUnsupported), else 0. */
int sim_capture_unsafe(void);
/* Whether [p, p+bytes) lies in pinned host memory. */
int sim_is_pinned(const void *p);
/* The last launch error of this thread, cleared (cudaGetLastError). */
cudaError_t sim_take_launch_error(void);
/* When the one host-to-device copy engine is free (under sim_lock). */
uint64_t *sim_h2d_engine(void);

#endif
