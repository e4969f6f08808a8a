/* cupti_convert.c: CUPTI activity records (CUDA 13 structs) -> Kineto-style trace events:
 * kernel/gpu_memcpy/gpu_memset on pid = device, tid = stream; cuda_runtime/cuda_driver on the
 * calling thread with ac2g flow starts; flow ends on the GPU activity; cuda_sync on a sync row
 * per stream; [memory] instants with running totals; overhead on its own row; device properties.
 * No CUPTI calls here: names of API calls come through a callback. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_int.h"
#include "gp/trace_schema.h"

void cupti_conv_init(cupti_conv *c, int pid, cupti_api_name_fn api_name)
{
    memset(c, 0, sizeof(*c));
    c->pid = pid;
    c->api_name = api_name;
    c->wait_for_api = 1;
}

/* ---- small helpers ---- */

static void key_u64(prof_out *o, const char *key, uint64_t v)
{
    prof_out_raw(o, ",\"", 2);
    prof_out_str(o, key);
    prof_out_raw(o, "\":", 2);
    prof_out_u64(o, v);
}

static void key_i64(prof_out *o, const char *key, int64_t v)
{
    prof_out_raw(o, ",\"", 2);
    prof_out_str(o, key);
    prof_out_raw(o, "\":", 2);
    prof_out_i64(o, v);
}

static void key_str(prof_out *o, const char *key, const char *v)
{
    prof_out_raw(o, ",\"", 2);
    prof_out_str(o, key);
    prof_out_raw(o, "\":", 2);
    prof_out_json_str(o, v, strlen(v));
}

/* Begin an event: separator, ph, cat, name (already JSON-safe if `safe`), pid, tid, ts. */
static void begin(prof_out *o, char ph, const char *cat, const char *name, int64_t pid, int64_t tid,
                  int64_t t_ns)
{
    prof_event_sep(o);
    prof_out_str(o, "{\"ph\":\"");
    prof_out_raw(o, &ph, 1);
    prof_out_str(o, "\",\"cat\":\"");
    prof_out_str(o, cat);
    prof_out_str(o, "\",\"name\":");
    prof_out_json_str(o, name, strlen(name));
    key_i64(o, "pid", pid);
    key_i64(o, "tid", tid);
    prof_out_str(o, ",\"ts\":");
    prof_out_us(o, t_ns - prof_state_session()->base_ns);
}

static void dur(prof_out *o, uint64_t start, uint64_t end)
{
    prof_out_str(o, ",\"dur\":");
    prof_out_us(o, end > start ? (int64_t)(end - start) : 0);
}

static void flow(prof_out *o, char ph, uint64_t id, int64_t pid, int64_t tid, uint64_t ts)
{
    prof_event_sep(o);
    prof_out_str(o, "{\"ph\":\"");
    prof_out_raw(o, &ph, 1);
    prof_out_str(o, "\",\"id\":");
    prof_out_u64(o, id);
    key_i64(o, "pid", pid);
    key_i64(o, "tid", tid);
    prof_out_str(o, ",\"ts\":");
    prof_out_us(o, (int64_t)ts - prof_state_session()->base_ns);
    prof_out_str(o, ",\"cat\":\"" GP_CAT_FLOW_AC2G "\",\"name\":\"" GP_CAT_FLOW_AC2G "\"");
    if (ph == 'f')
        prof_out_str(o, ",\"bp\":\"e\"");
    prof_out_raw(o, "}", 1);
}

static void note_stream(cupti_conv *c, uint32_t dev, uint32_t stream, int sync)
{
    if (dev < CUPTI_MAX_DEVICES)
        c->dev_used |= 1u << dev;
    for (int i = 0; i < c->n_streams; i++) {
        if (c->stream_dev[i] == dev && c->stream_id[i] == stream) {
            c->stream_sync[i] |= (uint8_t)sync;
            return;
        }
    }
    if (c->n_streams < CUPTI_MAX_STREAMS) {
        c->stream_dev[c->n_streams] = dev;
        c->stream_id[c->n_streams] = stream;
        c->stream_sync[c->n_streams++] = (uint8_t)sync;
    }
}

static void note_ctx(cupti_conv *c, uint32_t ctx, uint32_t dev)
{
    for (int i = 0; i < c->n_ctx; i++)
        if (c->ctx_dev[i][0] == ctx)
            return;
    if (c->n_ctx < 64) {
        c->ctx_dev[c->n_ctx][0] = ctx;
        c->ctx_dev[c->n_ctx++][1] = dev;
    }
}

static uint32_t ctx_device(const cupti_conv *c, uint32_t ctx)
{
    for (int i = 0; i < c->n_ctx; i++)
        if (c->ctx_dev[i][0] == ctx)
            return c->ctx_dev[i][1];
    return 0;
}

static uint32_t corr_slot(uint32_t corr)
{
    return corr & (CUPTI_CORR_SLOTS - 1);
}

/* The API record of `corr`: 0 not seen, 1 seen, 2 written and launching work. */
static int api_state(const cupti_conv *c, uint32_t corr)
{
    uint32_t s = corr_slot(corr);
    return c->corr_id[s] == corr ? c->corr_api[s] : 0;
}

/* Both ends of the ac2g flow of GPU work on (dev, stream) at `t0`, when its launch call was
 * written: never one end alone (a launch or its work outside the window). The flow's id is the
 * correlation id (Kineto's) for the launch's first activity; a graph launch's nodes share its
 * correlation id, and a viewer binds one flow to an id, so the next ones take corr + n << 32. */
static void flow_pair(cupti_conv *c, prof_out *o, uint32_t corr, uint32_t dev, uint32_t stream,
                      uint64_t t0)
{
    if (api_state(c, corr) != 2)
        return;
    uint32_t s = corr_slot(corr);
    uint64_t id = (uint64_t)c->corr_flows[s] << 32 | corr;
    c->corr_flows[s] += c->corr_flows[s] < UINT16_MAX;
    flow(o, 's', id, c->pid, c->corr_tid[s], c->corr_t0[s]);
    flow(o, 'f', id, dev, stream, t0);
}

/* The graph and node ids of work launched from a CUDA graph (none otherwise). */
static void graph_args(prof_out *o, uint32_t graph, uint64_t node)
{
    if (!graph)
        return;
    key_u64(o, GP_ARG_GRAPH_ID, graph);
    key_u64(o, GP_ARG_GRAPH_NODE_ID, node);
}

/* External id of the API call `corr` (0 if none). */
static uint64_t ext_of(const cupti_conv *c, uint32_t corr)
{
    uint32_t s = corr & (CUPTI_CORR_SLOTS - 1);
    return c->corr_id[s] == corr ? c->corr_ext[s] : 0;
}

static void common_gpu_args(const cupti_conv *c, prof_out *o, uint32_t dev, uint32_t ctx,
                            uint32_t stream, uint32_t corr)
{
    prof_out_str(o, ",\"args\":{");
    uint64_t ext = ext_of(c, corr);
    if (ext) {
        prof_out_str(o, "\"" GP_ARG_EXTERNAL_ID "\":");
        prof_out_u64(o, ext);
        prof_out_raw(o, ",", 1);
    }
    prof_out_str(o, "\"" GP_ARG_DEVICE "\":");
    prof_out_u64(o, dev);
    key_u64(o, GP_ARG_CONTEXT, ctx);
    key_u64(o, GP_ARG_STREAM, stream);
    key_u64(o, GP_ARG_CORRELATION, corr);
}

/* ---- kernels ---- */

/* Kernel names come mangled; demangle with the C++ runtime when the process has one. */
static uint32_t kernel_name(cupti_conv *c, const char *mangled)
{
    if (!mangled)
        return gp_prof_intern("(unknown kernel)");
    uint64_t h = 1469598103934665603ull; /* FNV-1a: cheaper than demangling again */
    for (const char *p = mangled; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    h |= 1; /* 0 is an empty slot */
    size_t slot = h & 255;
    if (c->kname_hash[slot] == h)
        return c->kname_id[slot];
    if (!c->demangle_looked) {
        c->demangle_looked = 1;
        c->demangle = (cupti_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    }
    cupti_demangle_fn demangle = c->demangle;
    int status = -1;
    char *d = demangle && mangled[0] == '_' && mangled[1] == 'Z'
                      ? demangle(mangled, NULL, NULL, &status)
                      : NULL;
    uint32_t id = gp_prof_intern(d && status == 0 ? d : mangled);
    free(d);
    c->kname_hash[slot] = h;
    c->kname_id[slot] = id;
    return id;
}

static void conv_kernel(cupti_conv *c, prof_out *o, const CUpti_ActivityKernel10 *k)
{
    note_stream(c, k->deviceId, k->streamId, 0);
    note_ctx(c, k->contextId, k->deviceId);
    const char *name = prof_name_str(kernel_name(c, k->name));
    begin(o, 'X', GP_CAT_KERNEL, name ? name : "?", k->deviceId, k->streamId, (int64_t)k->start);
    dur(o, k->start, k->end);
    common_gpu_args(c, o, k->deviceId, k->contextId, k->streamId, k->correlationId);
    key_u64(o, GP_ARG_QUEUED, k->queued > 0 && k->queued < k->start ? k->start - k->queued : 0);
    graph_args(o, k->graphId, k->graphNodeId);
    key_u64(o, GP_ARG_REGISTERS, k->registersPerThread);
    key_i64(o, GP_ARG_SHARED_MEMORY, (int64_t)k->staticSharedMemory + k->dynamicSharedMemory);
    int64_t blocks = (int64_t)k->gridX * k->gridY * k->gridZ;
    int64_t threads = (int64_t)k->blockX * k->blockY * k->blockZ;
    const cupti_device_info *d = k->deviceId < CUPTI_MAX_DEVICES ? &c->dev[k->deviceId] : NULL;
    if (d && d->known && d->sms) {
        prof_out_str(o, ",\"" GP_ARG_BLOCKS_PER_SM "\":");
        prof_out_double(o, (double)blocks / d->sms);
        prof_out_str(o, ",\"" GP_ARG_WARPS_PER_SM "\":");
        prof_out_double(o, (double)blocks * ((threads + 31) / 32) / d->sms);
    }
    prof_out_str(o, ",\"" GP_ARG_GRID "\":[");
    prof_out_i64(o, k->gridX);
    prof_out_raw(o, ",", 1);
    prof_out_i64(o, k->gridY);
    prof_out_raw(o, ",", 1);
    prof_out_i64(o, k->gridZ);
    prof_out_str(o, "],\"" GP_ARG_BLOCK "\":[");
    prof_out_i64(o, k->blockX);
    prof_out_raw(o, ",", 1);
    prof_out_i64(o, k->blockY);
    prof_out_raw(o, ",", 1);
    prof_out_i64(o, k->blockZ);
    prof_out_str(o, "]}}");
    flow_pair(c, o, k->correlationId, k->deviceId, k->streamId, k->start);
}

/* ---- memcpy / memset ---- */

static const char *copy_kind(unsigned k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "Unknown";
}

/** Kineto's memory-kind words: "Pageable", "Pinned", "Device", ... */
static const char *mem_kind(unsigned k)
{
    static const char *const names[] = {
            "Unknown", GP_MEMKIND_PAGEABLE, GP_MEMKIND_PINNED, GP_MEMKIND_DEVICE,
            "Array",   GP_MEMKIND_MANAGED,  "Device Static",   "Managed Static"};
    return k < sizeof(names) / sizeof(names[0]) ? names[k] : "Unknown";
}

/* A copy or a set on the GPU: same fields, Kineto's bandwidth arg, and the ac2g flow's end. */
struct transfer {
    const char *cat, *name;
    uint32_t device, context, stream, corr;
    uint64_t start, end, bytes;
    uint32_t graph;
    uint64_t graph_node;
};

static void emit_transfer(cupti_conv *c, prof_out *o, const struct transfer *t)
{
    note_stream(c, t->device, t->stream, 0);
    note_ctx(c, t->context, t->device);
    begin(o, 'X', t->cat, t->name, t->device, t->stream, (int64_t)t->start);
    dur(o, t->start, t->end);
    common_gpu_args(c, o, t->device, t->context, t->stream, t->corr);
    key_u64(o, GP_ARG_BYTES, t->bytes);
    graph_args(o, t->graph, t->graph_node);
    prof_out_str(o, ",\"" GP_ARG_BANDWIDTH "\":");
    prof_out_double(o, t->end > t->start ? (double)t->bytes / (double)(t->end - t->start) : 0.0);
    prof_out_str(o, "}}");
    flow_pair(c, o, t->corr, t->device, t->stream, t->start);
}

static void conv_memcpy(cupti_conv *c, prof_out *o, const CUpti_ActivityMemcpy6 *m)
{
    char name[96];
    snprintf(name, sizeof(name), GP_NAME_MEMCPY_PREFIX "%s (%s -> %s)", copy_kind(m->copyKind),
             mem_kind(m->srcKind), mem_kind(m->dstKind));
    struct transfer t = {GP_CAT_GPU_MEMCPY, name,     m->deviceId, m->contextId, m->streamId,
                         m->correlationId,  m->start, m->end,      m->bytes,     m->graphId,
                         m->graphNodeId};
    emit_transfer(c, o, &t);
}

static void conv_memset(cupti_conv *c, prof_out *o, const CUpti_ActivityMemset4 *m)
{
    char name[64];
    snprintf(name, sizeof(name), GP_NAME_MEMSET_PREFIX "(%s)", mem_kind(m->memoryKind));
    struct transfer t = {GP_CAT_GPU_MEMSET, name,     m->deviceId, m->contextId, m->streamId,
                         m->correlationId,  m->start, m->end,      m->bytes,     m->graphId,
                         m->graphNodeId};
    emit_transfer(c, o, &t);
}

/* ---- API calls ---- */

/* API names without CUPTI's version suffix ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"). */
static uint32_t api_name(cupti_conv *c, int driver, uint32_t cbid)
{
    uint32_t *cache = cbid < 1024 ? &c->api_name_cache[driver][cbid] : NULL;
    if (cache && *cache)
        return *cache;
    const char *n = c->api_name ? c->api_name(driver, cbid) : NULL;
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", n ? n : driver ? "cuda driver call" : "cuda runtime call");
    char *v = strstr(buf, "_v");
    if (v && v[2] >= '0' && v[2] <= '9')
        *v = '\0';
    uint32_t id = gp_prof_intern(buf);
    if (cache)
        *cache = id;
    return id;
}

/* API calls that put work on a GPU stream start an ac2g flow. */
static int launches_work(const char *name)
{
    static const char *const prefixes[] = {"cudaLaunch",      "cudaMemcpy",   "cudaMemset",
                                           "cudaGraphLaunch", "cuLaunch",     "cuMemcpy",
                                           "cuMemset",        "cuGraphLaunch"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* Driver calls are recorded by default only where they put work on the GPU (Triton and NVRTC
 * launch with cuLaunchKernel; the runtime's own driver calls are not reported by CUPTI). */
static int driver_launch(cupti_conv *c, uint32_t cbid)
{
    const char *name = prof_name_str(api_name(c, 1, cbid));
    return name && launches_work(name);
}

/* The calling thread, start and external id of `corr`, from its API record (every one). */
static void learn_api(cupti_conv *c, const CUpti_ActivityAPI *a)
{
    uint32_t s = corr_slot(a->correlationId);
    if (c->corr_id[s] != a->correlationId) {
        c->corr_id[s] = a->correlationId;
        c->corr_ext[s] = 0;
        c->corr_flows[s] = 0;
    }
    c->corr_tid[s] = a->threadId;
    c->corr_t0[s] = a->start;
    c->corr_api[s] = 1;
}

/* The API call's event; its flow starts with its GPU work (flow_pair). */
static void conv_api(cupti_conv *c, prof_out *o, const CUpti_ActivityAPI *a, int driver)
{
    uint32_t s = corr_slot(a->correlationId);
    const char *name = prof_name_str(api_name(c, driver, a->cbid));
    begin(o, 'X', driver ? GP_CAT_CUDA_DRIVER : GP_CAT_CUDA_RUNTIME, name ? name : "?", c->pid,
          a->threadId, (int64_t)a->start);
    dur(o, a->start, a->end);
    prof_out_str(o, ",\"args\":{\"" GP_ARG_CBID "\":");
    prof_out_u64(o, a->cbid);
    key_u64(o, GP_ARG_CORRELATION, a->correlationId);
    if (c->corr_ext[s])
        key_u64(o, GP_ARG_EXTERNAL_ID, c->corr_ext[s]);
    prof_out_str(o, "}}");
    if (name && launches_work(name))
        c->corr_api[s] = 2;
}

static void conv_external(cupti_conv *c, const CUpti_ActivityExternalCorrelation *e)
{
    /* It precedes the API record it tags (same thread, same buffer). */
    uint32_t s = corr_slot(e->correlationId);
    if (c->corr_id[s] != e->correlationId) {
        c->corr_id[s] = e->correlationId;
        c->corr_api[s] = 0;
        c->corr_flows[s] = 0;
    }
    c->corr_ext[s] = e->externalId;
}

/* ---- syncs, events ---- */

static void conv_event(cupti_conv *c, const CUpti_ActivityCudaEvent2 *e)
{
    size_t s = (size_t)(e->cudaEventSyncId & 255);
    c->evsync_id[s] = e->cudaEventSyncId;
    c->evsync_stream[s] = e->streamId;
    note_ctx(c, e->contextId, e->deviceId);
}

static void conv_sync(cupti_conv *c, prof_out *o, const CUpti_ActivitySynchronization2 *y)
{
    static const char *const kinds[] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
                                        "Stream Sync", "Context Sync"};
    const char *kind = (unsigned)y->type < 5 ? kinds[y->type] : kinds[0];
    uint32_t dev = ctx_device(c, y->contextId);
    uint32_t stream = y->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : y->streamId;
    note_stream(c, dev, stream, 1);
    begin(o, 'X', GP_CAT_CUDA_SYNC, kind, dev, (int64_t)stream + CUPTI_SYNC_TID_OFFSET,
          (int64_t)y->start);
    dur(o, y->start, y->end);
    prof_out_str(o, ",\"args\":{\"" GP_ARG_SYNC_KIND "\":");
    prof_out_json_str(o, kind, strlen(kind));
    key_u64(o, GP_ARG_DEVICE, dev);
    key_u64(o, GP_ARG_CONTEXT, y->contextId);
    key_i64(o, GP_ARG_STREAM,
            y->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int64_t)y->streamId);
    key_u64(o, GP_ARG_CORRELATION, y->correlationId);
    size_t s = (size_t)(y->cudaEventSyncId & 255);
    if (y->cudaEventSyncId && c->evsync_id[s] == y->cudaEventSyncId)
        key_u64(o, GP_ARG_WAIT_ON_STREAM, c->evsync_stream[s]);
    prof_out_str(o, "}}");
}

/* ---- memory ---- */

/* Slot of a live allocation at `addr` (linear probing; freed slots keep a tombstone address
 * of 1 so probes continue). @return the index or -1. */
static int addr_slot(cupti_conv *c, uint64_t addr, int create)
{
    uint32_t h = (uint32_t)((addr >> 8) * 2654435761u) & (CUPTI_ADDR_SLOTS - 1);
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t j = (h + i) & (CUPTI_ADDR_SLOTS - 1);
        if (c->addr[j] == addr)
            return (int)j;
        if (create && (c->addr[j] == 0 || c->addr[j] == 1)) {
            c->addr[j] = addr;
            return (int)j;
        }
        if (c->addr[j] == 0)
            return -1;
    }
    return -1;
}

static void conv_memory(cupti_conv *c, prof_out *o, const CUpti_ActivityMemory4 *m)
{
    int device_mem = m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
                     m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    int slot = CUPTI_MAX_DEVICES; /* host (pinned) memory */
    if (device_mem && m->deviceId < CUPTI_MAX_DEVICES)
        slot = (int)m->deviceId;
    int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    int live = addr_slot(c, m->address, alloc);
    int64_t bytes = (int64_t)m->bytes;
    if (!alloc && bytes == 0 && live >= 0)
        bytes = (int64_t)c->addr_bytes[live]; /* a release may not carry its size */
    if (alloc && live >= 0) {
        c->addr_bytes[live] = m->bytes;
    } else if (!alloc && live >= 0) {
        c->addr[live] = 1;
        c->addr_bytes[live] = 0;
    }
    c->allocated[slot] += alloc ? bytes : -bytes;
    if (c->allocated[slot] > c->peak[slot])
        c->peak[slot] = c->allocated[slot];
    if (!prof_window_contains((int64_t)m->timestamp)) {
        c->outside_window++; /* counted in the totals, not written */
        return;
    }
    uint32_t cs = corr_slot(m->correlationId);
    int64_t tid = api_state(c, m->correlationId) ? (int64_t)c->corr_tid[cs] : c->pid;
    begin(o, 'i', GP_CAT_CPU_INSTANT, GP_NAME_MEMORY, c->pid, tid, (int64_t)m->timestamp);
    prof_out_str(o, ",\"s\":\"t\",\"args\":{\"" GP_ARG_MEM_DEVICE_TYPE "\":");
    prof_out_i64(o, device_mem ? GP_MEM_DEVICE_TYPE_CUDA : GP_MEM_DEVICE_TYPE_CPU);
    key_i64(o, GP_ARG_MEM_DEVICE_ID, device_mem ? (int64_t)m->deviceId : -1);
    key_u64(o, GP_ARG_MEM_ADDR, m->address);
    key_i64(o, GP_ARG_MEM_BYTES, alloc ? bytes : -bytes);
    key_i64(o, GP_ARG_MEM_TOTAL_ALLOC, c->allocated[slot]);
    /* no caching allocator under CUDA's own calls: reserved == allocated */
    key_i64(o, GP_ARG_MEM_TOTAL_RESERVED, c->allocated[slot]);
    key_str(o, "Memory Kind", mem_kind(m->memoryKind));
    prof_out_str(o, "}}");
}

/* ---- overhead, devices ---- */

static void conv_overhead(cupti_conv *c, prof_out *o, const CUpti_ActivityOverhead3 *v)
{
    const char *name = "CUPTI overhead";
    switch (v->overheadKind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        name = "Driver compiler";
        break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        name = "CUPTI buffer flush";
        break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        name = "CUPTI instrumentation";
        break;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        name = "CUPTI resource";
        break;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
        name = "Lazy function loading";
        break;
    default:
        break;
    }
    c->overhead_seen = 1;
    begin(o, 'X', GP_CAT_OVERHEAD, name, c->pid, CUPTI_OVERHEAD_TID, (int64_t)v->start);
    dur(o, v->start, v->end);
    prof_out_raw(o, "}", 1);
}

static void conv_device(cupti_conv *c, const CUpti_ActivityDevice5 *d)
{
    if (d->id >= CUPTI_MAX_DEVICES)
        return;
    cupti_device_info *i = &c->dev[d->id];
    i->known = 1;
    snprintf(i->name, sizeof(i->name), "%s", d->name ? d->name : "GPU");
    i->total_mem = d->globalMemorySize;
    i->major = d->computeCapabilityMajor;
    i->minor = d->computeCapabilityMinor;
    i->sms = d->numMultiprocessors;
    i->threads_per_block = d->maxThreadsPerBlock;
    i->threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
    i->regs_per_block = d->maxRegistersPerBlock;
    i->warp = d->numThreadsPerWarp;
    i->smem_per_block = d->maxSharedMemoryPerBlock;
    i->regs_per_sm = d->maxRegistersPerMultiprocessor;
    i->smem_per_sm = d->maxSharedMemoryPerMultiprocessor;
}

/* Device timestamps of 0 mean CUPTI could not collect them (device buffers exhausted). */
static int has_time(uint64_t start, uint64_t end)
{
    return start != 0 || end != 0;
}

/* The capture-health ledger: GPU work that ends before it starts, or starts before the API call
 * that launched it (known once its API record came: work waits for it). @return has_time(start,
 * end). */
static int check_time(cupti_conv *c, uint32_t corr, uint64_t start, uint64_t end)
{
    if (!has_time(start, end))
        return 0;
    c->end_before_start += end < start;
    c->before_launch += api_state(c, corr) && c->corr_t0[corr_slot(corr)] > start;
    return 1;
}

/* Kernels, copies, sets and memory operations: the records that take something from their API
 * record. */
static size_t work_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return sizeof(CUpti_ActivityMemory4);
    default:
        return 0;
    }
}

_Static_assert(sizeof(CUpti_ActivityKernel10) <= CUPTI_PEND_BYTES &&
                       sizeof(CUpti_ActivityMemcpy6) <= CUPTI_PEND_BYTES &&
                       sizeof(CUpti_ActivityMemset4) <= CUPTI_PEND_BYTES &&
                       sizeof(CUpti_ActivityMemory4) <= CUPTI_PEND_BYTES,
               "a waiting record must fit its slot");

static uint32_t work_corr(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return ((const CUpti_ActivityMemcpy6 *)(const void *)r)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return ((const CUpti_ActivityMemset4 *)(const void *)r)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return ((const CUpti_ActivityMemory4 *)(const void *)r)->correlationId;
    default:
        return ((const CUpti_ActivityKernel10 *)(const void *)r)->correlationId;
    }
}

static void conv_work(cupti_conv *c, prof_out *o, const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)r;
        if (!check_time(c, m->correlationId, m->start, m->end))
            c->no_timestamp++;
        else if (!prof_window_contains((int64_t)m->start))
            c->outside_window++;
        else
            conv_memcpy(c, o, m);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)r;
        if (!check_time(c, m->correlationId, m->start, m->end))
            c->no_timestamp++;
        else if (!prof_window_contains((int64_t)m->start))
            c->outside_window++;
        else
            conv_memset(c, o, m);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        conv_memory(c, o, (const void *)r); /* totals need every record, in or out of window */
        break;
    default: {
        const CUpti_ActivityKernel10 *k = (const void *)r;
        if (!check_time(c, k->correlationId, k->start, k->end))
            c->no_timestamp++;
        else if (!prof_window_contains((int64_t)k->start))
            c->outside_window++;
        else
            conv_kernel(c, o, k);
        break;
    }
    }
}

/* Write the waiting record in slot `i` and free the slot. */
static void pend_write(cupti_conv *c, prof_out *o, int i)
{
    c->pend_seq[i] = 0;
    c->n_pend--;
    conv_work(c, o, (const CUpti_Activity *)(const void *)c->pend[i]);
}

/* Keep a copy of `r` until its API record comes; when every slot waits, the oldest is written
 * first, without what its API record would have given. */
static void pend_add(cupti_conv *c, prof_out *o, const CUpti_Activity *r, size_t size)
{
    int free_slot = -1, oldest = 0;
    for (int i = 0; i < CUPTI_PEND_SLOTS && (free_slot < 0 || c->n_pend == CUPTI_PEND_SLOTS); i++) {
        if (!c->pend_seq[i] && free_slot < 0)
            free_slot = i;
        if (c->pend_seq[i] && c->pend_seq[i] < c->pend_seq[oldest])
            oldest = i;
    }
    if (free_slot < 0) {
        pend_write(c, o, oldest);
        free_slot = oldest;
    }
    memcpy(c->pend[free_slot], r, size);
    c->pend_corr[free_slot] = work_corr(r);
    c->pend_seq[free_slot] = ++c->pend_next;
    c->n_pend++;
}

/* The API record of `corr` came: write what waited for it, oldest first. */
static void pend_release(cupti_conv *c, prof_out *o, uint32_t corr)
{
    for (;;) {
        int first = -1;
        for (int i = 0; i < CUPTI_PEND_SLOTS && c->n_pend; i++)
            if (c->pend_seq[i] && c->pend_corr[i] == corr &&
                (first < 0 || c->pend_seq[i] < c->pend_seq[first]))
                first = i;
        if (first < 0)
            return;
        pend_write(c, o, first);
    }
}

void cupti_conv_finish(cupti_conv *c, prof_out *o)
{
    while (c->n_pend) {
        int oldest = -1;
        for (int i = 0; i < CUPTI_PEND_SLOTS; i++)
            if (c->pend_seq[i] && (oldest < 0 || c->pend_seq[i] < c->pend_seq[oldest]))
                oldest = i;
        pend_write(c, o, oldest);
    }
}

static void record_api(cupti_conv *c, prof_out *o, const CUpti_ActivityAPI *a)
{
    int driver = a->kind == CUPTI_ACTIVITY_KIND_DRIVER;
    learn_api(c, a);
    int kept = !driver || c->all_driver || driver_launch(c, a->cbid);
    if (kept && prof_window_contains((int64_t)a->start))
        conv_api(c, o, a, driver);
    if (c->n_pend)
        pend_release(c, o, a->correlationId);
}

void cupti_conv_record(cupti_conv *c, prof_out *o, const CUpti_Activity *r)
{
    c->records++;
    size_t work = work_size(r->kind);
    if (work) {
        uint32_t corr = work_corr(r);
        if (c->wait_for_api && corr && !api_state(c, corr))
            pend_add(c, o, r, work);
        else
            conv_work(c, o, r);
        return;
    }
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        record_api(c, o, (const void *)r);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        conv_external(c, (const void *)r);
        break;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        conv_event(c, (const void *)r);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *y = (const void *)r;
        if (prof_window_contains((int64_t)y->start))
            conv_sync(c, o, y);
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *v = (const void *)r;
        if (prof_window_contains((int64_t)v->start))
            conv_overhead(c, o, v);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
        conv_device(c, (const void *)r);
        break;
    default:
        break;
    }
}

int cupti_conv_device_props(const cupti_conv *c, prof_out *o)
{
    int n = 0;
    for (uint32_t id = 0; id < CUPTI_MAX_DEVICES; id++) {
        const cupti_device_info *d = &c->dev[id];
        if (!d->known)
            continue;
        if (n++)
            prof_out_raw(o, ",", 1);
        prof_out_str(o, "{\"id\":");
        prof_out_u64(o, id);
        key_str(o, "name", d->name);
        key_u64(o, "totalGlobalMem", d->total_mem);
        key_u64(o, "computeMajor", d->major);
        key_u64(o, "computeMinor", d->minor);
        key_u64(o, "maxThreadsPerBlock", d->threads_per_block);
        key_u64(o, "maxThreadsPerMultiprocessor", d->threads_per_sm);
        key_u64(o, "regsPerBlock", d->regs_per_block);
        key_u64(o, "warpSize", d->warp);
        key_u64(o, "sharedMemPerBlock", d->smem_per_block);
        key_u64(o, "numSms", d->sms);
        key_u64(o, "regsPerMultiprocessor", d->regs_per_sm);
        key_u64(o, "sharedMemPerMultiprocessor", d->smem_per_sm);
        prof_out_raw(o, "}", 1);
    }
    return n;
}

void cupti_conv_config(const cupti_conv *c, prof_out *o)
{
    for (uint32_t id = 0; id < CUPTI_MAX_DEVICES; id++) {
        if (!c->dev[id].known)
            continue;
        if (!prof_config_has(GP_CFG_DEVICE_NAME))
            key_str(o, GP_CFG_DEVICE_NAME, c->dev[id].name);
        if (!prof_config_has(GP_CFG_DEVICE_MEMORY))
            key_u64(o, GP_CFG_DEVICE_MEMORY, c->dev[id].total_mem);
        break; /* the first device names the run */
    }
    int64_t peak = 0; /* the fullest device's */
    for (int d = 0; d < CUPTI_MAX_DEVICES; d++)
        peak = c->peak[d] > peak ? c->peak[d] : peak;
    prof_out_str(o, ",\"" GP_CFG_PEAK_DEVICE_MEMORY "\":");
    prof_out_i64(o, peak);
}

static void meta(prof_out *o, const char *what, int64_t pid, int64_t tid, const char *sval,
                 int64_t ival)
{
    prof_event_sep(o);
    prof_out_str(o, "{\"name\":\"");
    prof_out_str(o, what);
    prof_out_str(o, "\",\"ph\":\"M\",\"ts\":0");
    key_i64(o, "pid", pid);
    key_i64(o, "tid", tid);
    prof_out_str(o, ",\"args\":{");
    if (sval) {
        prof_out_str(o, strcmp(what, GP_NAME_PROCESS_LABELS) == 0 ? "\"labels\":" : "\"name\":");
        prof_out_json_str(o, sval, strlen(sval));
    } else {
        prof_out_str(o, "\"sort_index\":");
        prof_out_i64(o, ival);
    }
    prof_out_str(o, "}}");
}

void cupti_conv_metadata(cupti_conv *c, prof_out *o)
{
    char label[64];
    for (uint32_t d = 0; d < CUPTI_MAX_DEVICES; d++) {
        if (!(c->dev_used & (1u << d)))
            continue;
        snprintf(label, sizeof(label), "GPU %u", d);
        meta(o, GP_NAME_PROCESS_NAME, d, 0, label, 0);
        meta(o, GP_NAME_PROCESS_LABELS, d, 0, label, 0);
        meta(o, GP_NAME_PROCESS_SORT, d, 0, NULL, GP_GPU_SORT_INDEX_BASE + (int64_t)d);
    }
    for (int i = 0; i < c->n_streams; i++) {
        snprintf(label, sizeof(label), "stream %u ", c->stream_id[i]); /* Kineto's trailing space */
        meta(o, GP_NAME_THREAD_NAME, c->stream_dev[i], c->stream_id[i], label, 0);
        meta(o, GP_NAME_THREAD_SORT, c->stream_dev[i], c->stream_id[i], NULL, c->stream_id[i]);
        if (c->stream_sync[i]) {
            int64_t tid = (int64_t)c->stream_id[i] + CUPTI_SYNC_TID_OFFSET;
            snprintf(label, sizeof(label), "stream %u (sync)", c->stream_id[i]);
            meta(o, GP_NAME_THREAD_NAME, c->stream_dev[i], tid, label, 0);
            meta(o, GP_NAME_THREAD_SORT, c->stream_dev[i], tid, NULL, tid);
        }
    }
    if (c->overhead_seen)
        meta(o, GP_NAME_THREAD_NAME, c->pid, CUPTI_OVERHEAD_TID, "CUPTI overhead", 0);
}
