/* viewer-export/src/export_events.c: a gp_trace written back as Chrome-trace events that
 * importers keep whole: every X slice nested on its thread (a partially overlapping one goes to
 * an overflow "lane" thread), ids that Perfetto cannot collapse (negative or huge pids, tid 0
 * under pid != 0) remapped, process/thread names and sort order, ac2g flows in the v1 s/f style
 * with unique ids, and allocator samples as counters (Perfetto) or [memory] instants (TB). */
#include "export_int.h"
#include "gp/analysis.h"
#include "gp/trace_schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev_state {
    export_out *o;
    const gp_trace *t;
    const gp_analysis *a;
    const export_ev_opts *eo;
    int *first;
    int64_t next_id;    /* synthetic pid/tid counter */
    int64_t *track_pid; /* per track: output pid (ignored when the pid is a string) */
    int64_t *track_tid;
    uint32_t *ev_lane;  /* per event: lane index within its track */
    int64_t **lane_tid; /* per track: the tid of each lane (lane 0 = track_tid) */
    uint32_t *n_lanes;
    size_t n_devices; /* deviceProperties entries */
} ev_state;

static void sep(ev_state *s)
{
    export_out_puts(s->o, *s->first ? "\n" : ",\n");
    *s->first = 0;
}

static void put_pid(ev_state *s, const gp_track *tr, uint32_t ti)
{
    export_out_puts(s->o, "\"pid\":");
    if (s->eo->job_pid)
        export_out_printf(s->o, "%lld", (long long)s->eo->job_pid);
    else if (tr->pid_str != GP_STR_NONE)
        export_out_json_str(s->o, gp_trace_str(s->t, tr->pid_str));
    else
        export_out_printf(s->o, "%lld", (long long)s->track_pid[ti]);
}

static void put_tid(ev_state *s, const gp_track *tr, uint32_t ti, uint32_t ln)
{
    export_out_puts(s->o, ",\"tid\":");
    if (ln == 0 && tr->tid_str != GP_STR_NONE && s->eo->mode == EXPORT_EV_PERFETTO &&
        !s->eo->job_pid)
        export_out_json_str(s->o, gp_trace_str(s->t, tr->tid_str));
    else
        export_out_printf(s->o, "%lld", (long long)s->lane_tid[ti][ln]);
}

static int id_ok(int64_t v)
{
    return v >= 0 && v <= 0xFFFFFFFFLL;
}

/* Output ids of each track: Perfetto turns negative or > 2^32-1 ids into 0 and tid 0 into the
 * pid, which would merge unrelated tracks. */
static void map_track_ids(ev_state *s, const gp_track *tr, size_t nt)
{
    for (size_t i = 0; i < nt; i++) {
        s->track_pid[i] = id_ok(tr[i].pid) ? tr[i].pid : s->next_id++;
        int bad_tid = !id_ok(tr[i].tid) || (tr[i].tid == 0 && s->track_pid[i] != 0);
        /* string tids get a number too: tb needs int() of every operator's tid */
        s->track_tid[i] = bad_tid || tr[i].tid_str != GP_STR_NONE || s->eo->job_pid
                                  ? s->next_id++ /* a job's rank: a thread per track */
                                  : tr[i].tid;
    }
}

/* Assign lanes on one track; events are sorted by ts, then dur descending. For TensorBoard a
 * Python frame that partly overlaps an op or annotation yields the thread's lane to it: the
 * plugin's views are built from the ops of each thread (ProfilerStep#N, Optimizer.* stay on it). */
static gp_status lanes_for_track(ev_state *s, const gp_track *tr, uint32_t ti, const gp_event *ev)
{
    export_lanes ls = {0};
    uint8_t *yield = NULL;
    if (s->eo->mode == EXPORT_EV_TB && tr->count) {
        yield = calloc(tr->count, 1);
        if (!yield || export_lanes_python_conflicts(ev, tr->first, tr->count, yield) != 0) {
            free(yield);
            return GP_ENOMEM;
        }
    }
    gp_status rc = GP_OK;
    for (uint32_t i = tr->first; rc == GP_OK && i < tr->first + tr->count; i++) {
        uint32_t from = yield && yield[i - tr->first] ? 1 : 0;
        int k = ev[i].ph == 'X' ? export_lanes_place_from(&ls, ev[i].ts, ev[i].ts + ev[i].dur, from)
                                : 0;
        if (k < 0)
            rc = GP_ENOMEM;
        s->ev_lane[i] = (uint32_t)(k < 0 ? 0 : k);
    }
    uint32_t n = ls.n ? ls.n : 1; /* lane 0, the track's own tid, always exists */
    s->n_lanes[ti] = n;
    s->lane_tid[ti] = rc == GP_OK ? malloc(n * sizeof(int64_t)) : NULL;
    if (!s->lane_tid[ti])
        rc = GP_ENOMEM;
    for (uint32_t k = 0; rc == GP_OK && k < n; k++)
        s->lane_tid[ti][k] = k == 0 ? s->track_tid[ti] : s->next_id++;
    export_lanes_free(&ls);
    free(yield);
    return rc;
}

static void meta_event(ev_state *s, const gp_track *tr, uint32_t ti, uint32_t ln, const char *what,
                       const char *name, int64_t sort)
{
    sep(s);
    export_out_printf(s->o, "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,", what);
    put_pid(s, tr, ti);
    put_tid(s, tr, ti, ln);
    export_out_puts(s->o, ",\"args\":{");
    if (name) {
        export_out_puts(s->o, "\"name\":");
        export_out_json_str(s->o, name);
    } else {
        export_out_printf(s->o, "\"sort_index\":%lld", (long long)sort);
    }
    export_out_puts(s->o, "}}");
}

const char *export_process_name(const gp_trace *t, const gp_track *tr, char *buf, size_t cap)
{
    if (tr->is_gpu)
        snprintf(buf, cap, "GPU %d", tr->device >= 0 ? tr->device : (int)tr->pid);
    else if (tr->proc_name != GP_STR_NONE)
        return gp_trace_str(t, tr->proc_name);
    else if (tr->pid_str != GP_STR_NONE)
        return gp_trace_str(t, tr->pid_str);
    else
        snprintf(buf, cap, "process %lld", (long long)tr->pid);
    return buf;
}

const char *export_thread_name(const gp_trace *t, const gp_track *tr, char *buf, size_t cap)
{
    if (tr->name != GP_STR_NONE)
        return gp_trace_str(t, tr->name);
    if (tr->is_gpu && tr->stream >= 0)
        snprintf(buf, cap, "stream %lld", (long long)tr->stream);
    else if (tr->tid_str != GP_STR_NONE)
        return gp_trace_str(t, tr->tid_str);
    else
        snprintf(buf, cap, "thread %lld", (long long)tr->tid);
    return buf;
}

int32_t export_thread_sort(const gp_track *tr)
{
    int64_t sort = tr->is_gpu && tr->stream >= 0 ? tr->stream : id_ok(tr->tid) ? tr->tid : 0;
    return (int32_t)(sort < (1 << 24) ? sort : (1 << 24)); /* sort * 64 + lane: an int32 */
}

static void process_meta(ev_state *s, const gp_track *tr, uint32_t ti)
{
    char buf[160];
    const char *name = export_process_name(s->t, tr, buf, sizeof buf);
    /* in 64 bits: "device": 2147483647 overflowed the int sum */
    int64_t sort = tr->is_gpu ? (int64_t)GP_GPU_SORT_INDEX_BASE + (tr->device >= 0 ? tr->device : 0)
                              : s->track_pid[ti];
    meta_event(s, tr, ti, 0, GP_NAME_PROCESS_NAME, name, 0);
    meta_event(s, tr, ti, 0, GP_NAME_PROCESS_SORT, NULL, sort);
}

static void thread_meta(ev_state *s, const gp_track *tr, uint32_t ti)
{
    char base_buf[200], buf[440], proc[160], both[400];
    const char *base = export_thread_name(s->t, tr, base_buf, sizeof base_buf);
    int64_t sort = export_thread_sort(tr);
    if (s->eo->job_pid) { /* a job's rank holds every process of its trace: "GPU 0 / stream 7" */
        snprintf(both, sizeof both, "%s / %s", export_process_name(s->t, tr, proc, sizeof proc),
                 base);
        base = both;
        sort = (int64_t)ti;
    }
    for (uint32_t k = 0; k < s->n_lanes[ti]; k++) {
        if (k)
            snprintf(buf, sizeof buf, "%s (overlap %u)", base, k);
        meta_event(s, tr, ti, k, GP_NAME_THREAD_NAME, k ? buf : base, 0);
        meta_event(s, tr, ti, k, GP_NAME_THREAD_SORT, NULL, sort * 64 + k);
    }
}

static void all_meta(ev_state *s, const gp_track *tr, size_t nt)
{
    for (size_t i = 0; i < nt; i++) {
        /* tracks are sorted by pid: a process starts where the pid changes */
        int new_proc = i == 0 || tr[i - 1].pid_str != tr[i].pid_str ||
                       s->track_pid[i - 1] != s->track_pid[i];
        if (new_proc && !s->eo->job_pid) /* a job's rank: the rank is the process */
            process_meta(s, &tr[i], (uint32_t)i);
        thread_meta(s, &tr[i], (uint32_t)i);
    }
}

const char *export_kind_cat(unsigned kind)
{
    static const char *const cats[GP_EV_KIND_COUNT] = {"other",
                                                       GP_CAT_CPU_OP,
                                                       GP_CAT_USER_ANNOTATION,
                                                       GP_CAT_GPU_USER_ANNOTATION,
                                                       GP_CAT_CUDA_RUNTIME,
                                                       GP_CAT_CUDA_DRIVER,
                                                       GP_CAT_KERNEL,
                                                       GP_CAT_GPU_MEMCPY,
                                                       GP_CAT_GPU_MEMSET,
                                                       GP_CAT_CUDA_SYNC,
                                                       GP_CAT_CUDA_EVENT,
                                                       GP_CAT_PYTHON_FUNCTION,
                                                       GP_CAT_CPU_INSTANT,
                                                       GP_CAT_CPU_INSTANT,
                                                       GP_CAT_OVERHEAD,
                                                       GP_CAT_COLLECTIVE,
                                                       GP_CAT_TRACE};
    return kind < GP_EV_KIND_COUNT ? cats[kind] : "other";
}

static const char *cat_of(const ev_state *s, const gp_event *e)
{
    if (s->eo->old_runtime_cat && (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER))
        return GP_CAT_OLD_RUNTIME;
    /* tb 0.4.3 keeps only ProfilerStep# of the user annotations: record_function ranges, the
     * DataLoader wait included, would vanish from the Operator view and the breakdown */
    if (s->eo->mode == EXPORT_EV_TB && e->kind == GP_EV_USER_ANNOTATION &&
        !(e->flags & GP_EVF_STEP))
        return GP_CAT_CPU_OP;
    return export_kind_cat(e->kind);
}

static void arg_int(export_out *o, int *n, const char *key, long long v)
{
    export_out_printf(o, "%s\"%s\":%lld", (*n)++ ? "," : "", key, v);
}

static void arg_num(export_out *o, int *n, const char *key, double v)
{
    if (isfinite(v)) /* JSON has no inf; tb 0.4.3 fails on Kineto's "inf" string */
        export_out_printf(o, "%s\"%s\":%.6g", (*n)++ ? "," : "", key, v);
}

static void gpu_args(ev_state *s, const gp_event *e, const gp_gpu_info *g, int *n)
{
    export_out *o = s->o;
    int dev = g->device >= 0 ? g->device : 0; /* tb needs a device on every kernel */
    arg_int(o, n, GP_ARG_DEVICE, dev);
    if (g->stream >= 0)
        arg_int(o, n, GP_ARG_STREAM, g->stream);
    if (e->kind == GP_EV_KERNEL) {
        arg_int(o, n, GP_ARG_REGISTERS, g->registers);
        arg_int(o, n, GP_ARG_SHARED_MEMORY, g->shared_mem);
        arg_num(o, n, GP_ARG_BLOCKS_PER_SM, g->blocks_per_sm);
        arg_num(o, n, GP_ARG_WARPS_PER_SM, g->warps_per_sm);
        export_out_printf(o, ",\"" GP_ARG_GRID "\":[%d,%d,%d],\"" GP_ARG_BLOCK "\":[%d,%d,%d]",
                          g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1],
                          g->block[2]);
        if (g->occupancy >= 0)
            arg_num(o, n, GP_ARG_OCCUPANCY, g->occupancy);
    } else if (e->kind == GP_EV_MEMCPY || e->kind == GP_EV_MEMSET) {
        arg_int(o, n, GP_ARG_BYTES, g->bytes);
    }
}

static void mem_args(ev_state *s, const gp_mem_sample *m, int *n)
{
    arg_int(s->o, n, GP_ARG_MEM_DEVICE_TYPE, m->device_type);
    arg_int(s->o, n, GP_ARG_MEM_DEVICE_ID, m->device_id);
    if (m->addr)
        arg_int(s->o, n, GP_ARG_MEM_ADDR, m->addr);
    arg_int(s->o, n, GP_ARG_MEM_BYTES, m->bytes);
    arg_int(s->o, n, GP_ARG_MEM_TOTAL_ALLOC, m->total_allocated);
    arg_int(s->o, n, GP_ARG_MEM_TOTAL_RESERVED, m->total_reserved);
}

/* The Python tracer's ids, which tb's Module view builds its tree from. */
static void py_args(ev_state *s, const gp_py_info *p, int *n)
{
    if (p->id >= 0)
        arg_int(s->o, n, GP_ARG_PYTHON_ID, p->id);
    if (p->parent_id >= 0)
        arg_int(s->o, n, GP_ARG_PYTHON_PARENT_ID, p->parent_id);
    if (p->module_id >= 0)
        arg_int(s->o, n, GP_ARG_PYTHON_MODULE_ID, p->module_id);
}

/* "Input Dims" as the nested list it is ("[[64, 64], []]") when the text is plainly one, else
 * as a string. */
static void dims_arg(export_out *o, int *n, const char *dims)
{
    export_out_printf(o, "%s\"" GP_ARG_INPUT_DIMS "\":", (*n)++ ? "," : "");
    if (dims[0] == '[' && strspn(dims, "[]0123456789, -") == strlen(dims))
        export_out_puts(o, dims);
    else
        export_out_json_str(o, dims);
}

static void event_args(ev_state *s, const gp_event *e)
{
    int n = 0;
    export_out_puts(s->o, ",\"args\":{");
    if (e->ext_id != GP_ID_NONE)
        arg_int(s->o, &n, GP_ARG_EXTERNAL_ID, e->ext_id);
    if (e->corr != GP_ID_NONE)
        arg_int(s->o, &n, GP_ARG_CORRELATION, e->corr);
    const gp_gpu_info *g = gp_trace_gpu_info(s->t, e);
    const gp_mem_sample *m = gp_trace_mem_sample(s->t, e);
    /* tb groups its operators by input shape from these dims: a tensor list (aten::stack,
     * aten::cat) must stay the list it was, not the [] of key_averages' shape text */
    gp_str shape = s->eo->mode == EXPORT_EV_TB ? gp_trace_event_dims(s->t, e)
                                               : gp_trace_event_shape(s->t, e);
    if (g)
        gpu_args(s, e, g, &n);
    if (m)
        mem_args(s, m, &n);
    const gp_py_info *py = gp_trace_py_info(s->t, e);
    if (py)
        py_args(s, py, &n);
    /* tb 0.4.3 sizes a communication op's message from Input Dims and "Input type", which the
     * reader does not keep: dims without types crash its distributed view */
    if (shape != GP_STR_NONE && !(s->eo->mode == EXPORT_EV_TB && (e->flags & GP_EVF_COMM)))
        dims_arg(s->o, &n, gp_trace_str(s->t, shape));
    export_out_puts(s->o, "}");
}

/* tb 0.4.3 parses every ProfilerStep#<x> name with int(x): keep only numeric ones as such. */
static void put_name(ev_state *s, const char *name)
{
    size_t lp = strlen(GP_NAME_STEP_PREFIX);
    char buf[256];
    if (s->eo->mode == EXPORT_EV_TB && strncmp(name, GP_NAME_STEP_PREFIX, lp) == 0) {
        const char *p = name + lp;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == name + lp || *p) {
            snprintf(buf, sizeof buf, "ProfilerStep_%s", name + lp);
            name = buf;
        }
    }
    export_out_puts(s->o, "\"name\":");
    export_out_json_str(s->o, name);
}

static int is_step_name(const char *name)
{
    return strncmp(name, GP_NAME_STEP_PREFIX, strlen(GP_NAME_STEP_PREFIX)) == 0;
}

static int skip_event(const ev_state *s, const gp_event *e)
{
    if (s->eo->mode == EXPORT_EV_PERFETTO)
        return e->kind == GP_EV_MEMORY; /* written as counters */
    /* tb counts a ProfilerStep# on a GPU stream as one more step */
    if (e->kind == GP_EV_GPU_USER_ANNOTATION)
        return is_step_name(gp_trace_str(s->t, e->name));
    /* and indexes deviceProperties by a sample's Device Id (IndexError past its end) */
    const gp_mem_sample *m = e->kind == GP_EV_MEMORY ? gp_trace_mem_sample(s->t, e) : NULL;
    return m && s->n_devices && m->device_type == GP_MEM_DEVICE_TYPE_CUDA &&
           (m->device_id < 0 || (size_t)m->device_id >= s->n_devices);
}

static void one_event(ev_state *s, const gp_track *tr, uint32_t ti, uint32_t i, const gp_event *e)
{
    sep(s);
    int slice = e->ph == 'X';
    export_out_printf(s->o, "{\"ph\":\"%s\",\"cat\":", slice ? "X" : "i");
    export_out_json_str(s->o, cat_of(s, e));
    export_out_puts(s->o, ",");
    put_name(s, gp_trace_str(s->t, e->name));
    export_out_puts(s->o, ",");
    put_pid(s, tr, ti);
    put_tid(s, tr, ti, s->ev_lane[i]);
    export_out_puts(s->o, ",\"ts\":");
    export_out_us(s->o, e->ts - s->eo->t0);
    if (slice) {
        export_out_puts(s->o, ",\"dur\":");
        export_out_us(s->o, e->dur);
    } else {
        export_out_puts(s->o, ",\"s\":\"t\"");
    }
    event_args(s, e);
    export_out_puts(s->o, "}");
}

static void all_events(ev_state *s, const gp_track *tr, size_t nt, const gp_event *ev)
{
    for (size_t ti = 0; ti < nt; ti++)
        for (uint32_t i = tr[ti].first; i < tr[ti].first + tr[ti].count; i++)
            if (!skip_event(s, &ev[i]))
                one_event(s, &tr[ti], (uint32_t)ti, i, &ev[i]);
}

static void flow_end(ev_state *s, const gp_track *tr, const gp_event *ev, uint32_t i,
                     const char *ph, long long id)
{
    uint32_t ti = ev[i].track;
    sep(s);
    export_out_printf(s->o, "{\"ph\":\"%s\",\"id\":%lld,", ph, id);
    put_pid(s, &tr[ti], ti);
    put_tid(s, &tr[ti], ti, s->ev_lane[i]);
    export_out_puts(s->o, ",\"ts\":");
    export_out_us(s->o, ev[i].ts - s->eo->t0);
    export_out_printf(s->o, ",\"cat\":\"%s\",\"name\":\"%s\"%s}", GP_CAT_FLOW_AC2G,
                      GP_CAT_FLOW_AC2G, ph[0] == 'f' ? ",\"bp\":\"e\"" : "");
}

/* One v1 flow per launch (runtime call -> GPU activity). Ids are numbered here rather than
 * taken from the correlation id, which a graph launch shares among many activities. */
static void all_flows(ev_state *s, const gp_track *tr, const gp_event *ev)
{
    size_t n;
    const gp_launch *l = gp_analysis_launches(s->a, &n);
    for (size_t i = 0; i < n; i++) {
        long long id = (long long)(s->eo->flow_base + (int64_t)i + 1);
        flow_end(s, tr, ev, l[i].runtime, "s", id);
        flow_end(s, tr, ev, l[i].gpu, "f", id);
    }
}

/* The track of a flow end's (pid, tid), else the first track (tb reads only its id and ts). */
static uint32_t flow_track(const gp_track *tr, size_t nt, const gp_flow *f)
{
    for (size_t i = 0; i < nt; i++)
        if (tr[i].pid == f->pid && tr[i].tid == f->tid && tr[i].pid_str == GP_STR_NONE &&
            tr[i].tid_str == GP_STR_NONE)
            return (uint32_t)i;
    return 0;
}

/* PyTorch's forward -> backward links ("fwdbwd"), as read: tb 0.4.3 builds the backward part of
 * its Module view from them. */
static void fwdbwd_flows(ev_state *s, const gp_track *tr, size_t nt)
{
    size_t n;
    const gp_flow *f = gp_trace_fwdbwd_flows(s->t, &n);
    for (size_t i = 0; i < n && nt; i++) {
        uint32_t ti = flow_track(tr, nt, &f[i]);
        sep(s);
        export_out_printf(s->o, "{\"ph\":\"%c\",\"id\":%lld,", f[i].ph, (long long)f[i].id);
        put_pid(s, &tr[ti], ti);
        put_tid(s, &tr[ti], ti, 0);
        export_out_puts(s->o, ",\"ts\":");
        export_out_us(s->o, f[i].ts - s->eo->t0);
        export_out_printf(s->o, ",\"cat\":\"%s\",\"name\":\"%s\"%s}", GP_CAT_FLOW_FWDBWD,
                          GP_CAT_FLOW_FWDBWD, f[i].ph == 'f' ? ",\"bp\":\"e\"" : "");
    }
}

/* Perfetto: each allocator series as a counter track "<dev> memory allocated|reserved" on the
 * GPU's process (pid = device id) or, for the host, the sampling process. */
static void all_counters(ev_state *s, const gp_track *tr, const gp_event *ev)
{
    size_t n;
    const gp_mem_series *ms = gp_analysis_memory(s->a, &n);
    for (size_t k = 0; k < n; k++) {
        int gpu = ms[k].device_type == GP_MEM_DEVICE_TYPE_CUDA;
        for (size_t i = 0; i < ms[k].n_points; i++) {
            const gp_mem_point *p = &ms[k].points[i];
            uint32_t ti = ev[p->event].track;
            sep(s);
            if (gpu)
                export_out_printf(s->o, "{\"ph\":\"C\",\"name\":\"GPU %d memory\",\"pid\":%lld",
                                  ms[k].device_id,
                                  (long long)(s->eo->job_pid ? s->eo->job_pid : ms[k].device_id));
            else {
                export_out_puts(s->o, "{\"ph\":\"C\",\"name\":\"CPU memory\",");
                put_pid(s, &tr[ti], ti);
            }
            export_out_puts(s->o, ",\"ts\":");
            export_out_us(s->o, p->ts - s->eo->t0);
            export_out_printf(s->o, ",\"args\":{\"allocated\":%lld,\"reserved\":%lld}}",
                              (long long)p->allocated, (long long)p->reserved);
        }
    }
}

/* Perfetto: the trace's own counters (libprof's gp_prof_counter), as read, on their process. */
static void value_counters(ev_state *s)
{
    size_t n;
    const gp_counter *c = gp_trace_counters(s->t, &n);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(c[i].value))
            continue; /* JSON has no inf or nan */
        sep(s);
        export_out_puts(s->o, "{\"ph\":\"C\",\"name\":");
        export_out_json_str(s->o, gp_trace_str(s->t, c[i].name));
        long long pid = s->eo->job_pid ? s->eo->job_pid : id_ok(c[i].pid) ? c[i].pid : 0;
        export_out_printf(s->o, ",\"pid\":%lld,\"ts\":", pid);
        export_out_us(s->o, c[i].ts - s->eo->t0);
        export_out_printf(s->o, ",\"args\":{\"" GP_ARG_COUNTER_VALUE "\":%.17g}}", c[i].value);
    }
}

static void state_free(ev_state *s, size_t nt)
{
    for (size_t i = 0; s->lane_tid && i < nt; i++)
        free(s->lane_tid[i]);
    free(s->lane_tid);
    free(s->n_lanes);
    free(s->ev_lane);
    free(s->track_pid);
    free(s->track_tid);
}

gp_status export_write_events(export_out *o, const gp_analysis *a, const export_ev_opts *eo,
                              int *first, gp_error *err)
{
    const gp_trace *t = gp_analysis_trace(a);
    size_t nt, ne;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    const gp_event *ev = gp_trace_events(t, &ne);
    ev_state s = {o, t, a, eo, first, EXPORT_SYNTH_ID_BASE + 16, NULL, NULL, NULL, NULL, NULL, 0};
    gp_trace_devices(t, &s.n_devices);
    s.track_pid = calloc(nt + 1, sizeof *s.track_pid);
    s.track_tid = calloc(nt + 1, sizeof *s.track_tid);
    s.ev_lane = calloc(ne + 1, sizeof *s.ev_lane);
    s.lane_tid = calloc(nt + 1, sizeof *s.lane_tid);
    s.n_lanes = calloc(nt + 1, sizeof *s.n_lanes);
    gp_status rc =
            s.track_pid && s.track_tid && s.ev_lane && s.lane_tid && s.n_lanes ? GP_OK : GP_ENOMEM;
    if (rc == GP_OK)
        map_track_ids(&s, tr, nt);
    for (size_t i = 0; rc == GP_OK && i < nt; i++)
        rc = lanes_for_track(&s, &tr[i], (uint32_t)i, ev);
    if (rc == GP_OK) {
        all_meta(&s, tr, nt);
        all_events(&s, tr, nt, ev);
        all_flows(&s, tr, ev);
        if (eo->mode == EXPORT_EV_TB)
            fwdbwd_flows(&s, tr, nt);
        if (eo->mode == EXPORT_EV_PERFETTO) {
            all_counters(&s, tr, ev);
            value_counters(&s);
        }
    }
    state_free(&s, nt);
    if (rc != GP_OK)
        return gp_error_set(err, rc, NULL, "out of memory writing trace events");
    return GP_OK;
}
