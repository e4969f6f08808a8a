/* The simulated runtime's CUDA graphs, as stream capture makes them: between
 * cudaStreamBeginCapture and cudaStreamEndCapture, work enqueued on the stream (our kernels,
 * cuBLAS/cuDNN kernels, memsets, device or pinned copies) is not run but kept in order as the
 * graph's nodes, each with its arguments copied; the launch calls are still recorded, with no
 * device work. cudaGraphLaunch places every node on the stream back to back after one launch
 * latency, records each with the launch's correlation id and its graph and node ids (one
 * GRAPH_TRACE record instead while that kind is enabled, as CUPTI does) and enqueues them, to
 * run in stream order. As in global capture mode, a call that would sync or allocate while a stream
 * captures (cudaStreamSynchronize, cudaMalloc, a blocking or pageable copy, an event wait) fails
 * with cudaErrorStreamCaptureUnsupported and invalidates the capture: cudaStreamEndCapture then
 * returns cudaErrorStreamCaptureInvalidated. One stream per capture (no fork/join via events). */
#include "sim_int.h"

#include "fake_cupti.h"

#include <stdlib.h>
#include <string.h>

union sim_rec {
    CUpti_Activity any;
    CUpti_ActivityKernel10 kernel;
    CUpti_ActivityMemset4 set;
    CUpti_ActivityMemcpy6 copy;
};

struct sim_node {
    union sim_rec rec; /* its record; times, stream and ids are set at each launch */
    uint64_t ns;
    sim_run_fn run;
    void *arg; /* owned */
    size_t arg_bytes;
};

struct CUgraph_st {
    int n, cap;
    struct sim_node *node;
    int invalid; /* an illegal call during the capture */
};

struct CUgraphExec_st {
    struct CUgraph_st g; /* its own copy: the graph may be destroyed after instantiation */
    uint32_t id;
    uint64_t first_node_id;
};

#define MAX_CAPTURES 8
static struct CUgraph_st *active[MAX_CAPTURES]; /* graphs being captured (under sim_lock) */
static uint32_t next_graph_id = 1;
static uint64_t next_node_id = 1;

struct CUgraph_st *sim_capturing(struct CUstream_st *s)
{
    return s->capture;
}

cudaError_t sim_capture_invalidate(struct CUgraph_st *g)
{
    g->invalid = 1;
    return cudaErrorStreamCaptureUnsupported;
}

struct CUstream_st *sim_enter_uncaptured(cudaStream_t stream, uint64_t *t0, cudaError_t *rc)
{
    sim_thread_init();
    *t0 = fake_cupti_now();
    sim_lock();
    struct CUstream_st *s = sim_stream(stream);
    *rc = cudaSuccess;
    if (!s->capture)
        return s;
    *rc = sim_capture_invalidate(s->capture);
    sim_unlock();
    return NULL;
}

int sim_capture_unsafe(void)
{
    int any = 0;
    sim_lock();
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (active[i]) {
            active[i]->invalid = 1;
            any = 1;
        }
    sim_unlock();
    return any;
}

static cudaError_t add_node(struct CUgraph_st *g, const CUpti_Activity *rec, size_t rec_bytes,
                            uint64_t ns, sim_run_fn run, const void *arg, size_t arg_bytes)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        struct sim_node *nodes = realloc(g->node, (size_t)cap * sizeof(*nodes));
        if (!nodes)
            return cudaErrorMemoryAllocation;
        g->node = nodes;
        g->cap = cap;
    }
    struct sim_node *n = &g->node[g->n];
    memset(n, 0, sizeof(*n));
    memcpy(&n->rec, rec, rec_bytes < sizeof(n->rec) ? rec_bytes : sizeof(n->rec));
    n->ns = ns;
    n->run = run;
    n->arg = malloc(arg_bytes ? arg_bytes : 1);
    if (!n->arg)
        return cudaErrorMemoryAllocation;
    if (arg_bytes)
        memcpy(n->arg, arg, arg_bytes);
    n->arg_bytes = arg_bytes;
    g->n++;
    return cudaSuccess;
}

cudaError_t sim_capture_node(struct CUgraph_st *g, const CUpti_Activity *rec, size_t rec_bytes,
                             uint64_t ns, sim_run_fn run, const void *arg, size_t arg_bytes,
                             uint32_t cbid, uint64_t t0)
{
    cudaError_t rc = add_node(g, rec, rec_bytes, ns, run, arg, arg_bytes);
    fake_cupti_enter();
    sim_api(cbid, t0, fake_cupti_correlation());
    fake_cupti_leave();
    return rc;
}

cudaError_t sim_work(cudaStream_t stream, const char *name, uint64_t ns, unsigned blocks,
                     unsigned threads, sim_run_fn run, const void *arg, size_t arg_bytes)
{
    sim_thread_init();
    uint64_t t0 = fake_cupti_now();
    sim_lock();
    struct CUgraph_st *g = sim_capturing(sim_stream(stream));
    if (g) {
        CUpti_ActivityKernel10 k;
        sim_kernel_record(&k, name, blocks, threads);
        cudaError_t rc =
                sim_capture_node(g, (CUpti_Activity *)&k, sizeof(k), ns, run, arg, arg_bytes,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t0);
        sim_unlock();
        return rc;
    }
    sim_unlock();
    if (sim_kernel(stream, name, ns, blocks, threads, run, arg, arg_bytes) != 0)
        return cudaErrorMemoryAllocation;
    return cudaSuccess;
}

static void free_nodes(struct CUgraph_st *g)
{
    for (int i = 0; i < g->n; i++)
        free(g->node[i].arg);
    free(g->node);
    g->node = NULL;
    g->n = g->cap = 0;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode; /* every mode is treated as global */
    sim_thread_init();
    if (!stream) /* the legacy stream cannot be captured */
        return cudaErrorStreamCaptureUnsupported;
    struct CUgraph_st *g = calloc(1, sizeof(*g));
    if (!g)
        return cudaErrorMemoryAllocation;
    cudaError_t rc = cudaErrorIllegalState;
    sim_lock();
    for (int i = 0; i < MAX_CAPTURES && !stream->capture; i++)
        if (!active[i]) {
            active[i] = stream->capture = g;
            rc = cudaSuccess;
        }
    sim_unlock();
    if (rc != cudaSuccess)
        free(g);
    return rc;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    *graph = NULL;
    if (!stream)
        return cudaErrorIllegalState;
    sim_lock();
    struct CUgraph_st *g = stream->capture;
    stream->capture = NULL;
    for (int i = 0; g && i < MAX_CAPTURES; i++)
        if (active[i] == g)
            active[i] = NULL;
    sim_unlock();
    if (!g)
        return cudaErrorIllegalState;
    if (g->invalid) {
        free_nodes(g);
        free(g);
        return cudaErrorStreamCaptureInvalidated;
    }
    *graph = g;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    sim_lock();
    struct CUgraph_st *g = stream ? stream->capture : NULL;
    *status = !g           ? cudaStreamCaptureStatusNone
              : g->invalid ? cudaStreamCaptureStatusInvalidated
                           : cudaStreamCaptureStatusActive;
    sim_unlock();
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    if (graph) {
        free_nodes(graph);
        free(graph);
    }
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
    (void)flags;
    *exec = NULL;
    if (!graph)
        return cudaErrorInvalidValue;
    struct CUgraphExec_st *e = calloc(1, sizeof(*e));
    if (!e)
        return cudaErrorMemoryAllocation;
    for (int i = 0; i < graph->n; i++) {
        const struct sim_node *n = &graph->node[i];
        if (add_node(&e->g, &n->rec.any, sizeof(n->rec), n->ns, n->run, n->arg, n->arg_bytes) !=
            cudaSuccess) {
            cudaGraphExecDestroy(e);
            return cudaErrorMemoryAllocation;
        }
    }
    sim_lock();
    e->id = next_graph_id++;
    e->first_node_id = next_node_id;
    next_node_id += (uint64_t)graph->n;
    sim_unlock();
    *exec = e;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    if (exec) {
        free_nodes(&exec->g);
        free(exec);
    }
    return cudaSuccess;
}

/* Node i's record placed on `s` (the first one a launch latency after t0). */
static int place_node(const struct CUgraphExec_st *e, int i, struct CUstream_st *s, uint64_t t0,
                      uint32_t corr, union sim_rec *r)
{
    const struct sim_node *n = &e->g.node[i];
    uint64_t start, end, node_id = e->first_node_id + (uint64_t)i;
    *r = n->rec;
    sim_place(s, i == 0 ? t0 : 0, n->ns, NULL, &start, &end);
    if (sim_defer(s, n->run, n->arg, n->arg_bytes) != 0)
        return -1;
    switch (r->any.kind) {
    case CUPTI_ACTIVITY_KIND_MEMSET:
        r->set.start = start, r->set.end = end, r->set.streamId = s->id;
        r->set.correlationId = corr, r->set.graphId = e->id, r->set.graphNodeId = node_id;
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        r->copy.start = start, r->copy.end = end, r->copy.streamId = s->id;
        r->copy.correlationId = corr, r->copy.graphId = e->id, r->copy.graphNodeId = node_id;
        break;
    default:
        r->kernel.start = start, r->kernel.end = end, r->kernel.streamId = s->id;
        r->kernel.correlationId = corr, r->kernel.graphId = e->id;
        r->kernel.graphNodeId = node_id;
        break;
    }
    return 0;
}

static size_t rec_size(const union sim_rec *r)
{
    return r->any.kind == CUPTI_ACTIVITY_KIND_MEMSET   ? sizeof(r->set)
           : r->any.kind == CUPTI_ACTIVITY_KIND_MEMCPY ? sizeof(r->copy)
                                                       : sizeof(r->kernel);
}

static uint64_t rec_end(const union sim_rec *r)
{
    return r->any.kind == CUPTI_ACTIVITY_KIND_MEMSET   ? r->set.end
           : r->any.kind == CUPTI_ACTIVITY_KIND_MEMCPY ? r->copy.end
                                                       : r->kernel.end;
}

/* The launch's device records (one per node, or the GRAPH_TRACE record alone), its nodes
 * enqueued on `s`. Under sim_lock. @return 0, -1 out of memory. */
static int launch_records(const struct CUgraphExec_st *e, struct CUstream_st *s, uint64_t t0,
                          uint32_t corr)
{
    int summary = fake_cupti_enabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
    CUpti_ActivityGraphTrace2 gr;
    memset(&gr, 0, sizeof(gr));
    gr.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    gr.start = gr.end = t0 + sim_model.launch_ns;
    for (int i = 0; i < e->g.n; i++) {
        union sim_rec r;
        if (place_node(e, i, s, t0, corr, &r) != 0)
            return -1;
        if (i == 0)
            gr.start = rec_end(&r) - e->g.node[0].ns;
        gr.end = rec_end(&r);
        if (!summary)
            fake_cupti_device_record(&r.any, rec_size(&r), rec_end(&r), SIM_CONTEXT);
    }
    gr.correlationId = corr;
    gr.contextId = gr.endContextId = SIM_CONTEXT;
    gr.graphId = e->id;
    gr.streamId = s->id;
    if (summary)
        fake_cupti_device_record((CUpti_Activity *)&gr, sizeof(gr), gr.end, SIM_CONTEXT);
    return 0;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    uint64_t t0;
    cudaError_t refused;
    /* a graph launched into a capture: not simulated */
    struct CUstream_st *s = sim_enter_uncaptured(stream, &t0, &refused);
    if (!s)
        return refused;
    sim_drain(s, UINT64_MAX);
    fake_cupti_enter();
    uint32_t corr = fake_cupti_correlation();
    int rc = launch_records(exec, s, t0, corr);
    sim_api(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, t0, corr);
    fake_cupti_leave();
    sim_unlock();
    return rc ? cudaErrorMemoryAllocation : cudaSuccess;
}
