/* gp_trace accessors, freeing, and the classification tables: category -> kind (both Kineto
 * schemas), name -> flags (steps, loader, communication, sync and launch APIs), memcpy names. */
#include "reader/trace_int.h"

#include "gp/log.h"
#include "gp/trace_schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *cat;
    gp_ev_kind kind;
} cat_table[] = {
        {GP_CAT_CPU_OP, GP_EV_CPU_OP},
        {GP_CAT_OLD_OPERATOR, GP_EV_CPU_OP},
        {GP_CAT_USER_ANNOTATION, GP_EV_USER_ANNOTATION},
        {GP_CAT_GPU_USER_ANNOTATION, GP_EV_GPU_USER_ANNOTATION},
        {GP_CAT_CUDA_RUNTIME, GP_EV_RUNTIME},
        {GP_CAT_OLD_RUNTIME, GP_EV_RUNTIME},
        {"cuda_runtime", GP_EV_RUNTIME},
        {"mtia_runtime", GP_EV_RUNTIME},
        {"xpu_runtime", GP_EV_RUNTIME},
        {"privateuse1_runtime", GP_EV_RUNTIME},
        {"glow_runtime", GP_EV_RUNTIME},
        {GP_CAT_CUDA_DRIVER, GP_EV_DRIVER},
        {"xpu_driver", GP_EV_DRIVER},
        {"privateuse1_driver", GP_EV_DRIVER},
        {GP_CAT_KERNEL, GP_EV_KERNEL},
        {GP_CAT_OLD_KERNEL, GP_EV_KERNEL},
        {"mtia_ccp_events", GP_EV_KERNEL},
        {GP_CAT_GPU_MEMCPY, GP_EV_MEMCPY},
        {GP_CAT_OLD_MEMCPY, GP_EV_MEMCPY},
        {GP_CAT_GPU_MEMSET, GP_EV_MEMSET},
        {GP_CAT_OLD_MEMSET, GP_EV_MEMSET},
        {GP_CAT_CUDA_SYNC, GP_EV_SYNC},
        {"xpu_sync", GP_EV_SYNC},
        {GP_CAT_CUDA_EVENT, GP_EV_CUDA_EVENT},
        {GP_CAT_PYTHON_FUNCTION, GP_EV_PYTHON},
        {"python", GP_EV_PYTHON},
        {GP_CAT_CPU_INSTANT, GP_EV_INSTANT},
        {GP_CAT_OVERHEAD, GP_EV_OVERHEAD},
        {GP_CAT_COLLECTIVE, GP_EV_COLLECTIVE},
        {GP_CAT_TRACE, GP_EV_TRACE_SPAN},
        /* known, nothing to analyse */
        {"external_correlation", GP_EV_OTHER},
        {"cuda_profiler_range", GP_EV_OTHER},
        {"hardware_counters", GP_EV_OTHER},
        {"mtia_insight", GP_EV_OTHER},
        {"mtia_counters", GP_EV_OTHER},
        {"hpu_op", GP_EV_CPU_OP},
        {"xpu_scope_profiler", GP_EV_OTHER},
};

int trace_cat_kind(const char *cat, size_t n)
{
    for (size_t i = 0; i < sizeof(cat_table) / sizeof(cat_table[0]); i++)
        if (strlen(cat_table[i].cat) == n && memcmp(cat_table[i].cat, cat, n) == 0)
            return (int)cat_table[i].kind;
    return TRACE_CAT_UNKNOWN;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* ProfilerStep#<digits> exactly (tb_plugin fails on other suffixes; we just do not count them). */
static int is_step_name(const char *s, size_t n)
{
    size_t k = strlen(GP_NAME_STEP_PREFIX);
    if (n <= k || memcmp(s, GP_NAME_STEP_PREFIX, k) != 0)
        return 0;
    for (size_t i = k; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static const char *const sync_apis[] = {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamWaitEvent",
        "cudaMemcpy",
        "cudaMemset",
        "cudaMemcpy2D",
        "cudaMemcpyFromSymbol",
        "cudaMemcpyToSymbol",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cuMemcpyDtoH_v2",
        "cuMemcpyHtoD_v2",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
};

static int is_launch_api(const char *s)
{
    return starts_with(s, "cudaLaunch") || starts_with(s, "cuLaunch") ||
           starts_with(s, "cudaMemcpy") || starts_with(s, "cudaMemset") ||
           starts_with(s, "cuMemcpy") || starts_with(s, "cuMemset") ||
           starts_with(s, "cudaGraphLaunch") || starts_with(s, "cuGraphLaunch") ||
           starts_with(s, "hipLaunch") || starts_with(s, "hipMemcpy") ||
           starts_with(s, "hipExtLaunch");
}

int gp_trace_is_comm_name(const char *s)
{
    if (!s)
        return 0;
    if (!strncmp(s, "void ", 5))
        s += 5;
    if (!strncmp(s, "nccl:", 5) || !strncmp(s, "gloo:", 5) || !strncmp(s, "c10d::", 6))
        return 1;
    /* ncclKernel_*, ncclDevKernel_* (2.19+, RCCL's _Generic), nccl<Op>RingLLKernel_* (<= 2.6),
     * ncclAllReduce as an op name; RCCL's MSCCL kernels */
    return !strncmp(s, "nccl", 4) || !strncmp(s, "rccl", 4) || !strncmp(s, "msccl", 5) ||
           strstr(s, "ncclKernel") != NULL || strstr(s, "ncclDevKernel") != NULL;
}

unsigned trace_name_flags(const char *s, size_t n)
{
    unsigned f = 0;
    if (is_step_name(s, n))
        f |= GP_EVF_STEP;
    if ((starts_with(s, GP_NAME_LOADER_PREFIX) && ends_with(s, n, GP_NAME_LOADER_SUFFIX)) ||
        starts_with(s, "enumerate(DataPipe)#"))
        f |= GP_EVF_DATALOADER;
    if (gp_trace_is_comm_name(s)) /* NCCL's and RCCL's kernels under every name, c10d ops */
        f |= GP_EVF_COMM;
    if (starts_with(s, "dma")) /* HTA's kernel type MEMORY: ^dma (MTIA's copies) */
        f |= GP_EVF_DMA;
    for (size_t i = 0; i < sizeof(sync_apis) / sizeof(sync_apis[0]); i++)
        if (strcmp(s, sync_apis[i]) == 0)
            f |= GP_EVF_SYNC_API;
    if (is_launch_api(s))
        f |= GP_EVF_LAUNCH_API;
    return f;
}

static const char *const copy_names[] = {"", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
static const char *const mem_names[] = {"", "Pageable", "Pinned", "Device", "Managed", "Array"};

static int find_word(const char *s, size_t n, const char *const *table, int count)
{
    for (int i = 1; i < count; i++)
        if (strlen(table[i]) == n && memcmp(table[i], s, n) == 0)
            return i;
    return 0;
}

void trace_parse_copy_name(const char *name, gp_gpu_info *gi)
{
    const char *p = name;
    if (starts_with(p, GP_NAME_MEMCPY_PREFIX)) {
        p += strlen(GP_NAME_MEMCPY_PREFIX);
        size_t n = strcspn(p, " (");
        gi->copy_kind = (uint8_t)find_word(p, n, copy_names, 6);
        p += n;
    }
    const char *open = strchr(p, '(');
    if (!open)
        return;
    open++;
    size_t n = strcspn(open, " )");
    gi->src_mem = (uint8_t)find_word(open, n, mem_names, 6);
    const char *arrow = strstr(open, "-> ");
    if (arrow) {
        arrow += 3;
        gi->dst_mem = (uint8_t)find_word(arrow, strcspn(arrow, " )"), mem_names, 6);
    }
}

const char *gp_copy_kind_name(gp_copy_kind kind)
{
    return kind > 0 && kind < 6 ? copy_names[kind] : "other";
}

const char *gp_mem_kind_name(gp_mem_kind kind)
{
    return kind > 0 && kind < 6 ? mem_names[kind] : "unknown";
}

const char *gp_ev_kind_name(gp_ev_kind kind)
{
    static const char *const names[GP_EV_KIND_COUNT] = {
            "other",     "cpu_op",  "user_annotation", "gpu_user_annotation",
            "runtime",   "driver",  "kernel",          "memcpy",
            "memset",    "sync",    "cuda_event",      "python",
            "memory",    "instant", "overhead",        "collective",
            "trace_span"};
    return (unsigned)kind < GP_EV_KIND_COUNT ? names[kind] : "other";
}

void trace_warn(gp_trace *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    GP_LOG(GP_LOG_INFO, "%s: %s", t->info.path ? t->info.path : "trace", buf);
    const char **slot = trace_vec_push(&t->warnings);
    if (slot)
        *slot = trace_arena_strdup(&t->arena, buf, strlen(buf));
}

void gp_trace_free(gp_trace *t)
{
    if (!t)
        return;
    trace_intern_release(&t->strings);
    trace_arena_release(&t->arena);
    free(t->events);
    free(t->tracks);
    trace_vec_release(&t->gpu);
    trace_vec_release(&t->mem);
    trace_vec_release(&t->py);
    trace_vec_release(&t->fwdbwd);
    trace_vec_release(&t->comm);
    trace_vec_release(&t->op_args);
    trace_vec_release(&t->step_sched);
    trace_vec_release(&t->counters);
    trace_vec_release(&t->devs);
    trace_vec_release(&t->config);
    trace_vec_release(&t->meta);
    trace_vec_release(&t->unknown_cats);
    trace_vec_release(&t->warnings);
    trace_vec_release(&t->quality_warnings);
    free(t);
}

const gp_trace_info *gp_trace_get_info(const gp_trace *t)
{
    return &t->info;
}

const gp_event *gp_trace_events(const gp_trace *t, size_t *n)
{
    *n = t->n_events;
    return t->events;
}

const gp_track *gp_trace_tracks(const gp_trace *t, size_t *n)
{
    *n = t->n_tracks;
    return t->tracks;
}

const char *gp_trace_str(const gp_trace *t, gp_str id)
{
    return id < t->strings.n ? t->strings.strs[id] : "";
}

const gp_gpu_info *gp_trace_gpu_info(const gp_trace *t, const gp_event *e)
{
    int k = e->kind;
    if ((k != GP_EV_KERNEL && k != GP_EV_MEMCPY && k != GP_EV_MEMSET && k != GP_EV_SYNC) ||
        e->aux >= t->gpu.n)
        return NULL;
    return TRACE_VEC_AT(&t->gpu, gp_gpu_info, e->aux);
}

const gp_mem_sample *gp_trace_mem_sample(const gp_trace *t, const gp_event *e)
{
    if (e->kind != GP_EV_MEMORY || e->aux >= t->mem.n)
        return NULL;
    return TRACE_VEC_AT(&t->mem, gp_mem_sample, e->aux);
}

const gp_counter *gp_trace_counters(const gp_trace *t, size_t *n)
{
    *n = t->counters.n;
    return (const gp_counter *)t->counters.data;
}

const gp_flow *gp_trace_fwdbwd_flows(const gp_trace *t, size_t *n)
{
    *n = t->fwdbwd.n;
    return (const gp_flow *)t->fwdbwd.data;
}

const gp_py_info *gp_trace_py_info(const gp_trace *t, const gp_event *e)
{
    if (e->kind != GP_EV_PYTHON || e->aux >= t->py.n)
        return NULL;
    return TRACE_VEC_AT(&t->py, gp_py_info, e->aux);
}

const gp_comm_info *gp_trace_comm_info(const gp_trace *t, int64_t ext_id)
{
    size_t lo = 0, hi = ext_id < 0 ? 0 : t->comm.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const gp_comm_info *c = TRACE_VEC_AT(&t->comm, gp_comm_info, mid);
        if (c->ext_id == ext_id)
            return c;
        if (c->ext_id < ext_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const gp_step_sched *gp_trace_step_sched(const gp_trace *t, const gp_event *e)
{
    if (!(e->flags & GP_EVF_STEP) || e->track >= t->n_tracks)
        return NULL;
    const gp_track *k = &t->tracks[e->track];
    size_t lo = 0, hi = t->step_sched.n;
    while (lo < hi) { /* the first record at or after e->ts */
        size_t mid = (lo + hi) / 2;
        if (TRACE_VEC_AT(&t->step_sched, gp_step_sched, mid)->ts < e->ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < t->step_sched.n; lo++) {
        const gp_step_sched *s = TRACE_VEC_AT(&t->step_sched, gp_step_sched, lo);
        if (s->ts != e->ts)
            break;
        if (s->pid == k->pid && s->tid == k->tid)
            return s;
    }
    return NULL;
}

static const trace_op_args *op_args_of(const gp_trace *t, const gp_event *e)
{
    size_t lo = 0, hi = e->kind != GP_EV_CPU_OP || e->ext_id < 0 ? 0 : t->op_args.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const trace_op_args *o = TRACE_VEC_AT(&t->op_args, trace_op_args, mid);
        if (o->ext_id == e->ext_id)
            return o;
        if (o->ext_id < e->ext_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

gp_str gp_trace_event_concrete(const gp_trace *t, const gp_event *e)
{
    const trace_op_args *o = op_args_of(t, e);
    return o ? o->concrete : GP_STR_NONE;
}

gp_str gp_trace_event_dims(const gp_trace *t, const gp_event *e)
{
    const trace_op_args *o = op_args_of(t, e);
    return o && o->dims != GP_STR_NONE ? o->dims : gp_trace_event_shape(t, e);
}

gp_str gp_trace_event_shape(const gp_trace *t, const gp_event *e)
{
    if (e->kind != GP_EV_CPU_OP && e->kind != GP_EV_USER_ANNOTATION)
        return GP_STR_NONE;
    return e->aux < t->strings.n ? e->aux : GP_STR_NONE;
}

const gp_device_props *gp_trace_devices(const gp_trace *t, size_t *n)
{
    *n = t->devs.n;
    return (const gp_device_props *)t->devs.data;
}

const gp_kv *gp_trace_config(const gp_trace *t, size_t *n)
{
    *n = t->config.n;
    return (const gp_kv *)t->config.data;
}

const gp_kv *gp_trace_meta(const gp_trace *t, size_t *n)
{
    *n = t->meta.n;
    return (const gp_kv *)t->meta.data;
}

const gp_kv *gp_kv_find(const gp_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return &kv[i];
    return NULL;
}

const gp_cat_count *gp_trace_unknown_cats(const gp_trace *t, size_t *n)
{
    *n = t->unknown_cats.n;
    return (const gp_cat_count *)t->unknown_cats.data;
}

const char *const *gp_trace_warnings(const gp_trace *t, size_t *n)
{
    *n = t->warnings.n;
    return (const char *const *)t->warnings.data;
}
