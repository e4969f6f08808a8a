/* fake_cuda.c: a simulated libcuda.so.1 for tests, built from CUDA 13's cuda.h (so each entry
 * point has the real prototype). cuInit loads CUDA_INJECTION64_PATH and calls its
 * InitializeInjection once, as the driver does; launches, copies, sets, allocations and syncs
 * make the records the real CUPTI would (through fake_cupti.h), with device work placed on its
 * stream after the work before it. "Device memory" is host memory, never touched.
 *
 * Two devices, each with its primary context, and up to 8 contexts of cuCtxCreate (resource
 * callbacks at creation and destruction); each thread has its own current context
 * (cuCtxSetCurrent, cuCtxPushCurrent), and a launch, copy, allocation or cuCtxSynchronize
 * without one fails with CUDA_ERROR_INVALID_CONTEXT, as the driver does. Functions live in a
 * fixed table: a function of an unloaded module frees its entry, and the next lookup reuses it
 * (and its name's address), as a module reload can.
 *
 * Simulation knobs: a kernel runs for gridDim.x microseconds (or the nanoseconds a scenario set
 * with fake_cuda_kernel_ns); a copy or set moves 10 bytes/ns (at least 1 us). cuMemcpyHtoD,
 * cuMemcpyDtoH and cuMemsetD8 (cudaMemcpy, cudaMemset) wait for the device, as the real ones do.
 * fake_cuda_as_runtime(1) makes the calling thread's calls look like the CUDA
 * runtime's (cudaLaunchKernel, cudaMemcpyAsync, ...: what PyTorch does) instead of the driver's
 * (cuLaunchKernel: Triton, NVRTC). CUDA graphs: launches on a stream between
 * cuStreamBeginCapture and cuStreamEndCapture become the graph's nodes; cuGraphLaunch of its
 * instantiation runs them in order on the stream under one correlation id
 * (fake_cupti_graph_launch). FAKE_CUDA_SIGNAL_AT=N raises SIGTERM inside the Nth launch, with
 * CUPTI's internal lock held. */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cupti.h"

#define EXPORT         __attribute__((visibility("default")))
#define DEFAULT_STREAM 7 /* device 0's; device 1's is 8 */
#define N_DEVICES      2
#define MAX_PINNED     256
#define MAX_FUNCS      64
#define MAX_MODULES    16
#define CTX_STACK      8

struct CUstream_st {
    uint32_t id;
    uint64_t busy_until;
};
struct CUmod_st {
    int used;
};
struct CUfunc_st {
    char name[128];
    CUmodule module; /* NULL: a free entry */
};
struct CUctx_st {
    uint32_t device, id;
    int retained;
    struct CUstream_st default_stream;
};

static struct CUctx_st contexts[N_DEVICES] = {{0, 1, 0, {DEFAULT_STREAM, 0}},
                                              {1, 2, 0, {DEFAULT_STREAM + 1, 0}}};
#define MAX_CREATED 8
static struct CUctx_st created[MAX_CREATED];
static int created_used[MAX_CREATED];
static struct CUmod_st modules[MAX_MODULES];
static struct CUfunc_st funcs[MAX_FUNCS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_stream_id = 13;
static _Thread_local struct CUctx_st *ctx_stack[CTX_STACK];
static _Thread_local int ctx_depth; /* ctx_stack[ctx_depth - 1] is current; 0: none */
static void *pinned[MAX_PINNED];
static size_t pinned_bytes[MAX_PINNED];
static int launches;
static _Thread_local int as_runtime;
static _Thread_local uint64_t kernel_ns;
static uint64_t queue_ns, launch_ns;

/* ---- injection ---- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path)
        return;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    int (*init)(void) = NULL;
    if (h)
        *(void **)&init = dlsym(h, "InitializeInjection");
    if (!init)
        fprintf(stderr, "fake libcuda: cannot inject %s: %s\n", path,
                h ? "no InitializeInjection" : dlerror());
    else
        init();
}

EXPORT CUresult cuInit(unsigned int flags)
{
    (void)flags;
    pthread_once(&init_once, load_injection);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *version)
{
    *version = CUDA_VERSION;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    *count = N_DEVICES;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    *device = ordinal;
    return ordinal >= 0 && ordinal < N_DEVICES ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    if (dev < 0 || dev >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    __atomic_add_fetch(&contexts[dev].retained, 1, __ATOMIC_RELAXED);
    *ctx = &contexts[dev];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    if (dev < 0 || dev >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    __atomic_sub_fetch(&contexts[dev].retained, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (dev < 0 || dev >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = __atomic_load_n(&contexts[dev].retained, __ATOMIC_RELAXED) > 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!ctx) {
        ctx_depth = ctx_depth ? ctx_depth - 1 : 0;
        return CUDA_SUCCESS;
    }
    if (ctx_depth == 0)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    if (!ctx || ctx_depth == CTX_STACK)
        return CUDA_ERROR_INVALID_VALUE;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent(CUcontext *ctx)
{
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    ctx_depth--;
    if (ctx)
        *ctx = ctx_stack[ctx_depth];
    return CUDA_SUCCESS;
}

/* A context of its own on `dev`, made current (pushed), as the driver does. */
EXPORT CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                            CUdevice dev)
{
    (void)params;
    (void)flags;
    if (dev < 0 || dev >= N_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    int slot = -1;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_CREATED && slot < 0; i++)
        if (!created_used[i])
            slot = i;
    if (slot >= 0) {
        created_used[slot] = 1;
        created[slot] =
                (struct CUctx_st){(uint32_t)dev, 3u + (uint32_t)slot, 1, {20u + (uint32_t)slot, 0}};
    }
    pthread_mutex_unlock(&table_lock);
    if (slot < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pctx = &created[slot];
    fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, *pctx);
    return cuCtxPushCurrent(*pctx);
}

EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
    fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, ctx);
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_CREATED; i++)
        if (ctx == &created[i])
            created_used[i] = 0;
    pthread_mutex_unlock(&table_lock);
    return CUDA_SUCCESS;
}

/* The calling thread's current context, or NULL. */
static struct CUctx_st *current(void)
{
    return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    (void)image;
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_MODULES && rc != CUDA_SUCCESS; i++) {
        if (!modules[i].used) {
            modules[i].used = 1;
            *module = &modules[i];
            rc = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return rc;
}

EXPORT CUresult cuModuleUnload(CUmodule mod)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_FUNCS; i++)
        if (funcs[i].module == mod)
            funcs[i].module = NULL; /* its name stays until the entry is reused */
    mod->used = 0;
    pthread_mutex_unlock(&table_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_FUNCS && rc != CUDA_SUCCESS; i++) {
        if (!funcs[i].module) { /* the first free entry: a reload reuses the same one */
            funcs[i].module = mod;
            snprintf(funcs[i].name, sizeof(funcs[i].name), "%s", name);
            *fn = &funcs[i];
            rc = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&table_lock);
    return rc;
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    (void)flags;
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->id = __atomic_fetch_add(&next_stream_id, 1, __ATOMIC_RELAXED);
    *stream = s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy(CUstream stream)
{
    free(stream);
    return CUDA_SUCCESS;
}

/* ---- records ---- */

EXPORT void fake_cuda_as_runtime(int on)
{
    as_runtime = on;
}

/** A launch waits (inside the call, as when CUDA's launch queue is full) while its stream has
 * more than `ns` of work queued; 0, the default: never. */
EXPORT void fake_cuda_queue_ns(uint64_t ns)
{
    __atomic_store_n(&queue_ns, ns, __ATOMIC_RELAXED);
}

static void wait_for_queue(const struct CUstream_st *s)
{
    uint64_t limit = __atomic_load_n(&queue_ns, __ATOMIC_RELAXED);
    while (limit) {
        fake_cupti_enter(); /* busy_until is written under CUPTI's lock (place) */
        uint64_t now = fake_cupti_now(), busy = s->busy_until;
        fake_cupti_leave();
        if (busy <= now + limit)
            return;
        uint64_t wait = busy - now - limit;
        struct timespec d = {0, (long)(wait < 1000000u ? wait : 1000000u)};
        nanosleep(&d, NULL);
    }
}

/** Each launch call takes at least `ns` of host time (the driver's launch cost, a few us on a
 * real GPU); 0, the default: only what the simulation costs. */
EXPORT void fake_cuda_launch_ns(uint64_t ns)
{
    __atomic_store_n(&launch_ns, ns, __ATOMIC_RELAXED);
}

/** The calling thread's next kernels run `ns` each (0: gridDim.x microseconds again). */
EXPORT void fake_cuda_kernel_ns(uint64_t ns)
{
    kernel_ns = ns;
}

static struct CUstream_st *stream_of(CUstream s)
{
    return s ? s : &current()->default_stream;
}

/* Where work of `ns` starts on `s` (after its earlier work, after the call) and ends. */
static void place(struct CUstream_st *s, uint64_t ns, uint64_t *start, uint64_t *end)
{
    uint64_t now = fake_cupti_now() + 2000; /* launch latency */
    *start = s->busy_until > now ? s->busy_until : now;
    *end = *start + ns;
    s->busy_until = *end;
}

static void api(uint32_t driver_cbid, uint32_t runtime_cbid, uint64_t t0, uint32_t corr)
{
    fake_cupti_api(as_runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER,
                   as_runtime ? runtime_cbid : driver_cbid, t0, fake_cupti_now(), corr);
}

static void maybe_signal(void)
{
    const char *at = getenv("FAKE_CUDA_SIGNAL_AT");
    if (at && atoi(at) == launches)
        raise(SIGTERM); /* CUPTI's lock is held: the profiler must not need it to finish */
}

/* ---- CUDA graphs: stream capture, instantiation, launch ---- */

#define MAX_GRAPH_NODES 32
struct CUgraph_st {
    int n;
    struct graph_node {
        CUfunction f;
        unsigned dims[7]; /* grid x y z, block x y z, dynamic shared memory */
        uint64_t ns;
    } node[MAX_GRAPH_NODES];
};
struct CUgraphExec_st {
    struct CUgraph_st g;
    uint32_t id;
    uint64_t first_node_id;
};
static uint32_t next_graph_id = 1;
static uint64_t next_node_id = 1;
#define MAX_CAPTURES 8
static struct {
    struct CUstream_st *stream; /* NULL: a free entry */
    struct CUgraph_st *graph;   /* the graph its launches become nodes of */
} captures[MAX_CAPTURES];

/* The graph `s` is being captured into, or NULL. */
static struct CUgraph_st *capture_of(const struct CUstream_st *s)
{
    struct CUgraph_st *g = NULL;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_CAPTURES && !g; i++)
        if (captures[i].stream == s)
            g = captures[i].graph;
    pthread_mutex_unlock(&table_lock);
    return g;
}

/* Start (g != NULL) or end capturing `s`; @return the graph it was captured into. */
static struct CUgraph_st *set_capture(struct CUstream_st *s, struct CUgraph_st *g)
{
    struct CUgraph_st *was = NULL;
    int slot = -1;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < MAX_CAPTURES; i++) {
        if (captures[i].stream == s)
            was = captures[i].graph, slot = i;
        else if (!captures[i].stream && slot < 0)
            slot = i;
    }
    if (slot >= 0 && (g || was)) {
        captures[slot].stream = g ? s : NULL;
        captures[slot].graph = g;
    }
    pthread_mutex_unlock(&table_lock);
    return was;
}

/* A launch on a capturing stream: a node of the graph, nothing runs (its API call is still
 * recorded, with no work). */
static CUresult capture_kernel(struct CUgraph_st *g, CUfunction f, const unsigned dims[7])
{
    if (g->n == MAX_GRAPH_NODES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct graph_node *n = &g->node[g->n++];
    n->f = f;
    memcpy(n->dims, dims, sizeof(n->dims));
    n->ns = kernel_ns ? kernel_ns : (uint64_t)dims[0] * 1000u;
    fake_cupti_enter();
    uint64_t t0 = fake_cupti_now();
    api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t0,
        fake_cupti_correlation());
    fake_cupti_leave();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode)
{
    (void)mode;
    if (!current())
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = stream_of(stream);
    struct CUgraph_st *g = capture_of(s) ? NULL : calloc(1, sizeof(*g));
    if (!g)
        return CUDA_ERROR_ILLEGAL_STATE;
    set_capture(s, g);
    if (capture_of(s) != g) { /* every entry taken */
        free(g);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    struct CUgraph_st *g = current() ? set_capture(stream_of(stream), NULL) : NULL;
    if (!g)
        return CUDA_ERROR_ILLEGAL_STATE;
    *graph = g;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    (void)flags;
    struct CUgraphExec_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->g = *graph;
    e->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
    e->first_node_id =
            __atomic_fetch_add(&next_node_id, (uint64_t)graph->n, __ATOMIC_RELAXED) + 1000;
    *exec = e;
    return CUDA_SUCCESS;
}

/* One launch call for all the graph's kernels, run one after another on `stream`: each
 * kernel's record carries the launch's correlation id and its graph and node ids. */
EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    struct CUctx_st *ctx = current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = stream_of(stream);
    uint64_t t0 = fake_cupti_now(), cost = __atomic_load_n(&launch_ns, __ATOMIC_RELAXED);
    while (cost && fake_cupti_now() < t0 + cost) {
    }
    wait_for_queue(s);
    fake_cupti_enter();
    uint32_t corr = fake_cupti_correlation();
    CUpti_ActivityKernel10 k[MAX_GRAPH_NODES];
    CUpti_ActivityGraphTrace2 gr;
    memset(k, 0, sizeof(k));
    memset(&gr, 0, sizeof(gr));
    for (int i = 0; i < exec->g.n; i++) {
        const struct graph_node *n = &exec->g.node[i];
        k[i].kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        place(s, n->ns, &k[i].start, &k[i].end);
        k[i].name = n->f->name;
        k[i].gridX = (int32_t)n->dims[0], k[i].gridY = (int32_t)n->dims[1];
        k[i].gridZ = (int32_t)n->dims[2], k[i].blockX = (int32_t)n->dims[3];
        k[i].blockY = (int32_t)n->dims[4], k[i].blockZ = (int32_t)n->dims[5];
        k[i].dynamicSharedMemory = (int32_t)n->dims[6];
        k[i].registersPerThread = 32;
        k[i].deviceId = ctx->device;
        k[i].contextId = ctx->id;
        k[i].streamId = s->id;
        k[i].correlationId = corr;
        k[i].graphId = exec->id;
        k[i].graphNodeId = exec->first_node_id + (uint64_t)i;
    }
    gr.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    gr.correlationId = corr;
    gr.start = exec->g.n ? k[0].start : t0;
    gr.end = exec->g.n ? k[exec->g.n - 1].end : t0;
    gr.deviceId = gr.endDeviceId = ctx->device;
    gr.contextId = gr.endContextId = ctx->id;
    gr.graphId = exec->id;
    gr.streamId = s->id;
    fake_cupti_graph_launch(k, exec->g.n, &gr, ctx->id);
    api(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, t0,
        corr);
    fake_cupti_leave();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    free(exec);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph)
{
    free(graph);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                               CUstream stream, void **params, void **extra)
{
    (void)params;
    (void)extra;
    struct CUctx_st *ctx = current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = stream_of(stream);
    struct CUgraph_st *capturing = capture_of(s);
    if (capturing)
        return capture_kernel(capturing, f, (unsigned[]){gx, gy, gz, bx, by, bz, smem});
    uint64_t t0 = fake_cupti_now(), cost = __atomic_load_n(&launch_ns, __ATOMIC_RELAXED);
    while (cost && fake_cupti_now() < t0 + cost) {
    }
    wait_for_queue(s);
    fake_cupti_enter();
    uint32_t corr = fake_cupti_correlation();
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.queued = fake_cupti_latency() ? t0 : 0; /* CUPTI 13: 0 without latency timestamps */
    place(s, kernel_ns ? kernel_ns : (uint64_t)gx * 1000u, &k.start, &k.end);
    k.name = f->name;
    k.gridX = (int32_t)gx;
    k.gridY = (int32_t)gy;
    k.gridZ = (int32_t)gz;
    k.blockX = (int32_t)bx;
    k.blockY = (int32_t)by;
    k.blockZ = (int32_t)bz;
    k.dynamicSharedMemory = (int32_t)smem;
    k.registersPerThread = 32;
    k.deviceId = ctx->device;
    k.contextId = ctx->id;
    k.streamId = s->id;
    k.correlationId = corr;
    fake_cupti_device_record((CUpti_Activity *)&k, sizeof(k), k.end, ctx->id);
    api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t0,
        corr);
    launches++;
    maybe_signal();
    fake_cupti_leave();
    return CUDA_SUCCESS;
}

static int pinned_slot(const void *p)
{
    for (int i = 0; i < MAX_PINNED; i++)
        if (pinned[i] && (const char *)p >= (char *)pinned[i] &&
            (const char *)p < (char *)pinned[i] + pinned_bytes[i])
            return i;
    return -1;
}

static void memory_record(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
                          uint64_t addr, uint64_t bytes, uint32_t corr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = op;
    m.memoryKind = kind;
    m.correlationId = corr;
    m.address = addr;
    m.bytes = bytes;
    m.timestamp = fake_cupti_now();
    m.processId = (uint32_t)getpid();
    m.deviceId = current()->device;
    m.contextId = current()->id;
    m.streamId = current()->default_stream.id;
    fake_cupti_host_record((CUpti_Activity *)&m, sizeof(m));
}

/* Device memory is mapped, not malloc'ed: the accuracy cases allocate tens of GiB a run
 * (near-OOM, activations), which the kernel backs only where touched; under ASan a malloc of that
 * size poisons 1/8 of it in shadow memory at each allocation and free (ckpt_95 ran past 120 s).
 * A header before the block keeps the mapping's length; blocks are 256-byte aligned, as
 * cudaMalloc's. */
#define DEVICE_HDR 256

static void *device_map(size_t bytes)
{
    size_t n = bytes + DEVICE_HDR;
    char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                   0);
    if (m == MAP_FAILED)
        return NULL;
    memcpy(m, &n, sizeof(n));
    return m + DEVICE_HDR;
}

static void device_unmap(void *p)
{
    char *m = (char *)p - DEVICE_HDR;
    size_t n;
    memcpy(&n, m, sizeof(n));
    munmap(m, n);
}

static CUresult alloc(void **p, size_t bytes, int pin)
{
    if (!current())
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_cupti_enter();
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_correlation();
    *p = pin ? malloc(bytes ? bytes : 1) : device_map(bytes);
    for (int i = 0; *p && pin && i < MAX_PINNED; i++) {
        if (!pinned[i]) {
            pinned[i] = *p;
            pinned_bytes[i] = bytes;
            break;
        }
    }
    if (*p)
        memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                      pin ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                      (uint64_t)(uintptr_t)*p, bytes, corr);
    if (pin)
        api(CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,
            t0, corr);
    else
        api(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, t0,
            corr);
    fake_cupti_leave();
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult release(void *p, int pin)
{
    if (!current())
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_cupti_enter();
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_correlation();
    int slot = pin ? pinned_slot(p) : -1;
    if (slot >= 0)
        pinned[slot] = NULL;
    memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                  pin ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                  (uint64_t)(uintptr_t)p, 0, corr);
    if (pin)
        api(CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, t0,
            corr);
    else
        api(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, t0,
            corr);
    fake_cupti_leave();
    if (pin)
        free(p);
    else if (p)
        device_unmap(p);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes)
{
    void *p = NULL;
    CUresult rc = alloc(&p, bytes, 0);
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return rc;
}

EXPORT CUresult cuMemFree(CUdeviceptr dptr)
{
    return release((void *)(uintptr_t)dptr, 0);
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    return alloc(pp, bytes, 1);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    return release(p, 1);
}

/* A blocking call's API record, once the device has finished (cudaMemcpy, cudaMemset). */
static void blocking_api(uint32_t context, uint32_t driver_cbid, uint32_t runtime_cbid, uint64_t t0,
                         uint32_t corr)
{
    fake_cupti_synchronize(context);
    fake_cupti_enter();
    api(driver_cbid, runtime_cbid, t0, corr);
    fake_cupti_leave();
}

static CUresult copy(const void *host, size_t bytes, CUstream stream, int to_device, int blocking)
{
    struct CUctx_st *ctx = current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_cupti_enter();
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_correlation();
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    uint8_t host_kind = pinned_slot(host) >= 0 ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                                               : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.srcKind = to_device ? host_kind : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : host_kind;
    m.bytes = bytes;
    struct CUstream_st *s = stream_of(stream);
    place(s, bytes / 10 > 1000 ? bytes / 10 : 1000, &m.start, &m.end);
    m.deviceId = ctx->device;
    m.contextId = ctx->id;
    m.streamId = s->id;
    m.correlationId = corr;
    fake_cupti_device_record((CUpti_Activity *)&m, sizeof(m), m.end, ctx->id);
    if (!blocking)
        api(to_device ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2
                      : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
            CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, t0, corr);
    fake_cupti_leave();
    if (blocking)
        blocking_api(ctx->id,
                     to_device ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2
                               : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
                     CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, t0, corr);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
    (void)dst;
    return copy(src, bytes, stream, 1, 0);
}

EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    (void)src;
    return copy(dst, bytes, stream, 0, 0);
}

EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes)
{
    (void)dst;
    return copy(src, bytes, NULL, 1, 1);
}

EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes)
{
    (void)src;
    return copy(dst, bytes, NULL, 0, 1);
}

static CUresult memset_d8(size_t n, CUstream stream, int blocking)
{
    struct CUctx_st *ctx = current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_cupti_enter();
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_correlation();
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = n;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    struct CUstream_st *s = stream_of(stream);
    place(s, n / 10 > 1000 ? n / 10 : 1000, &m.start, &m.end);
    m.deviceId = ctx->device;
    m.contextId = ctx->id;
    m.streamId = s->id;
    m.correlationId = corr;
    fake_cupti_device_record((CUpti_Activity *)&m, sizeof(m), m.end, ctx->id);
    if (!blocking)
        api(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
            t0, corr);
    fake_cupti_leave();
    if (blocking)
        blocking_api(ctx->id, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
                     CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, t0, corr);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream)
{
    (void)dst;
    (void)value;
    return memset_d8(n, stream, 0);
}

EXPORT CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n)
{
    (void)dst;
    (void)value;
    return memset_d8(n, NULL, 1);
}

/* Wait until the work queued on `s` has ended (not the other streams': cuStreamSynchronize). */
static void stream_wait(const struct CUstream_st *s)
{
    for (;;) {
        fake_cupti_enter();
        uint64_t now = fake_cupti_now(), busy = s->busy_until;
        fake_cupti_leave();
        if (busy <= now)
            break;
        struct timespec d = {0, (long)(busy - now < 1000000u ? busy - now : 1000000u)};
        nanosleep(&d, NULL);
    }
}

/* A sync call: wait for the current context's work (or one stream's, `s`), then its API and
 * synchronization records. */
static CUresult sync_call(CUpti_ActivitySynchronizationType type, const struct CUstream_st *s,
                          uint32_t dcbid, uint32_t rcbid)
{
    struct CUctx_st *ctx = current();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t t0 = fake_cupti_now();
    uint32_t corr = fake_cupti_correlation();
    uint32_t stream = s ? s->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    if (s)
        stream_wait(s);
    else
        fake_cupti_synchronize(ctx->id);
    fake_cupti_enter();
    fake_cupti_sync_record(type, t0, corr, ctx->id, stream);
    api(dcbid, rcbid, t0, corr);
    fake_cupti_leave();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    return sync_call(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, NULL,
                     CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
                     CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    if (!current())
        return CUDA_ERROR_INVALID_CONTEXT;
    return sync_call(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream_of(stream),
                     CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
                     CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
}

/** cudaDeviceReset as CUPTI sees it: the runtime callback at entry, then device work and every
 * record not yet handed to the client are gone. */
EXPORT void fake_cuda_device_reset(void)
{
    fake_cupti_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020,
                        CUPTI_API_ENTER);
    fake_cupti_device_reset();
    for (int i = 0; i < N_DEVICES; i++)
        contexts[i].default_stream.busy_until = 0;
    fake_cupti_callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020,
                        CUPTI_API_EXIT);
}
