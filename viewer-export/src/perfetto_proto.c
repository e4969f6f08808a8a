/* viewer-export/src/perfetto_proto.c: gp_export_perfetto_proto(): Perfetto's own protobuf
 * trace format (Trace / TracePacket / TrackEvent), written packet by packet as the trace is
 * walked, so memory stays bounded by the largest packet whatever the output's size.
 *
 * One packet sequence. It opens with a clock snapshot (time 0 of the trace's boot clock is the
 * trace's first event; REALTIME gives its wall-clock time) and a packet that clears the
 * sequence's incremental state and interns the categories and argument names; event names are
 * interned as they first appear (their iid is the trace's string id + 1). Tracks: a process
 * (ProcessDescriptor) per CPU process with a thread track (ThreadDescriptor) per thread, a
 * "GPU N" track with a child track per CUDA stream, and, where slices on a thread or stream
 * overlap without nesting, child tracks "NAME (overlap K)" placed as the JSON export places them
 * (export_lanes.c). Slices are SLICE_BEGIN/SLICE_END pairs with their arguments as debug
 * annotations; each launch links its runtime call to its GPU activity by a flow id; allocator
 * samples are counter tracks in bytes; the findings are slices on a "gprof-train findings"
 * track, a child track per finding spanning the ranges it cites.
 * Field numbers: Perfetto's protos/perfetto/trace (trace_packet.proto, the track_event protos,
 * interned_data/interned_data.proto, clock_snapshot.proto). */
#include "gp/export.h"
#include "gp/trace_schema.h"
#include "perfetto_px.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Argument names, interned once: iid = position + 1. */
enum annot {
    A_EXTERNAL_ID,
    A_CORRELATION,
    A_DEVICE,
    A_STREAM,
    A_REGISTERS,
    A_SHARED_MEMORY,
    A_BLOCKS_PER_SM,
    A_WARPS_PER_SM,
    A_GRID,
    A_BLOCK,
    A_OCCUPANCY,
    A_BYTES,
    A_PYTHON_ID,
    A_PYTHON_PARENT_ID,
    A_PYTHON_MODULE_ID,
    A_INPUT_DIMS,
    A_SEVERITY,
    A_RANGE,
    A_SUMMARY,
    A_RECOMMENDATION,
    A_KNOB,
    A_GAIN,
    A_COUNT
};

static const char *const annot_names[A_COUNT] = {GP_ARG_EXTERNAL_ID,
                                                 GP_ARG_CORRELATION,
                                                 GP_ARG_DEVICE,
                                                 GP_ARG_STREAM,
                                                 GP_ARG_REGISTERS,
                                                 GP_ARG_SHARED_MEMORY,
                                                 GP_ARG_BLOCKS_PER_SM,
                                                 GP_ARG_WARPS_PER_SM,
                                                 GP_ARG_GRID,
                                                 GP_ARG_BLOCK,
                                                 GP_ARG_OCCUPANCY,
                                                 GP_ARG_BYTES,
                                                 GP_ARG_PYTHON_ID,
                                                 GP_ARG_PYTHON_PARENT_ID,
                                                 GP_ARG_PYTHON_MODULE_ID,
                                                 GP_ARG_INPUT_DIMS,
                                                 "severity",
                                                 "range",
                                                 "summary",
                                                 "recommendation",
                                                 "knob",
                                                 "estimated gain"};

/* Category iids: an event kind's is kind + 1, the findings' the one after the last kind. */
#define CAT_FINDING      (GP_EV_KIND_COUNT + 1)
#define CAT_FINDING_NAME "gprof_finding"

static uint64_t rel_ts(const px *s, int64_t ts)
{
    return ts > s->t0 ? (uint64_t)(ts - s->t0) : 0;
}

/* ---- Packets. ---- */

static void packet_begin(px *s)
{
    pb_reset(&s->b);
    pb_begin(&s->b, TRACE_PACKET);
    pb_varint(&s->b, PKT_SEQUENCE_ID, s->seq);
}

void px_event_packet_begin(px *s, int64_t ts)
{
    packet_begin(s);
    pb_varint(&s->b, PKT_TIMESTAMP, rel_ts(s, ts));
    pb_varint(&s->b, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

void px_packet_end(px *s)
{
    pb_end(&s->b);
    if (s->b.failed) {
        if (!s->o->err_no)
            s->o->err_no = ENOMEM;
        return;
    }
    export_out_write(s->o, s->b.p, s->b.len);
}

void px_clock_snapshot(px *s, int64_t wall_ns)
{
    packet_begin(s);
    pb_begin(&s->b, PKT_CLOCK_SNAPSHOT);
    pb_begin(&s->b, CS_CLOCKS);
    pb_varint(&s->b, CLOCK_ID, CLOCK_BOOTTIME);
    pb_varint(&s->b, CLOCK_TIMESTAMP, 0);
    pb_end(&s->b);
    pb_begin(&s->b, CS_CLOCKS);
    pb_varint(&s->b, CLOCK_ID, CLOCK_REALTIME);
    pb_varint(&s->b, CLOCK_TIMESTAMP, (uint64_t)(wall_ns > 0 ? wall_ns : 0));
    pb_end(&s->b);
    pb_varint(&s->b, CS_PRIMARY_TRACE_CLOCK, CLOCK_BOOTTIME);
    pb_end(&s->b);
    px_packet_end(s);
}

static void interned(pb_buf *b, uint32_t field, uint64_t iid, const char *name)
{
    pb_begin(b, field);
    pb_varint(b, IID, iid);
    pb_str(b, INTERNED_NAME, name);
    pb_end(b);
}

/* The sequence's first packet: incremental state cleared, categories and argument names. */
static void sequence_start(px *s)
{
    packet_begin(s);
    pb_varint(&s->b, PKT_FIRST_ON_SEQUENCE, 1);
    pb_varint(&s->b, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    pb_begin(&s->b, PKT_INTERNED_DATA);
    for (unsigned k = 0; k < GP_EV_KIND_COUNT; k++)
        interned(&s->b, ID_EVENT_CATEGORIES, k + 1, export_kind_cat(k));
    interned(&s->b, ID_EVENT_CATEGORIES, CAT_FINDING, CAT_FINDING_NAME);
    for (unsigned k = 0; k < A_COUNT; k++)
        interned(&s->b, ID_DEBUG_ANNOTATION_NAMES, k + 1, annot_names[k]);
    pb_end(&s->b);
    px_packet_end(s);
}

/* 1 when bit `i` was clear (now set), 0 when set already, -1 when out of memory. */
static int bit_first(bitset *b, uint32_t i)
{
    size_t byte = i / 8;
    if (byte >= b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap <= byte)
            cap *= 2;
        uint8_t *p = realloc(b->v, cap);
        if (!p)
            return -1;
        memset(p + b->cap, 0, cap - b->cap);
        b->v = p;
        b->cap = cap;
    }
    if (b->v[byte] & (1u << (i % 8)))
        return 0;
    b->v[byte] |= (uint8_t)(1u << (i % 8));
    return 1;
}

/* Intern `str` as `iid` in the packet's one interned_data message (opened on first use; a
 * second one in the same packet would replace the first for some readers). */
static void intern(px *s, uint32_t field, uint64_t iid, const char *str)
{
    if (!s->interning)
        pb_begin(&s->b, PKT_INTERNED_DATA);
    s->interning = 1;
    interned(&s->b, field, iid, str);
}

static void intern_done(px *s)
{
    if (s->interning)
        pb_end(&s->b);
    s->interning = 0;
}

/* The iid of trace string `id` in `field`'s table (id + 1), interning it in the open packet the
 * first time. 0: no string. */
static uint64_t str_iid(px *s, bitset *seen, uint32_t field, gp_str id)
{
    if (id == GP_STR_NONE)
        return 0;
    int first = bit_first(seen, id);
    if (first < 0)
        s->b.failed = 1;
    if (first > 0)
        intern(s, field, (uint64_t)id + 1, gp_trace_str(s->t, id));
    return (uint64_t)id + 1;
}

/* ---- Tracks. ---- */

void px_track_descriptor(px *s, const desc *d)
{
    pb_buf *b = &s->b;
    packet_begin(s);
    pb_begin(b, PKT_TRACK_DESCRIPTOR);
    pb_varint(b, TD_UUID, d->uuid);
    if (d->parent)
        pb_varint(b, TD_PARENT_UUID, d->parent);
    if (d->kind == DESC_PROCESS) {
        pb_begin(b, TD_PROCESS);
        pb_int(b, PD_PID, d->pid);
        pb_str(b, PD_PROCESS_NAME, d->name);
        pb_end(b);
    } else if (d->kind == DESC_THREAD) {
        pb_begin(b, TD_THREAD);
        pb_int(b, THD_PID, d->pid);
        pb_int(b, THD_TID, d->tid);
        pb_str(b, THD_THREAD_NAME, d->name);
        pb_end(b);
    } else {
        pb_str(b, TD_NAME, d->name);
    }
    if (d->ordered)
        pb_varint(b, TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
    if (d->parent)
        pb_int(b, TD_SIBLING_ORDER_RANK, d->rank);
    if (d->kind == DESC_COUNTER) {
        pb_begin(b, TD_COUNTER);
        if (d->unit)
            pb_varint(b, CD_UNIT, (uint64_t)d->unit);
        pb_end(b);
    }
    pb_end(b);
    px_packet_end(s);
}

static int pid_ok(int64_t v)
{
    return v > 0 && v <= 0x7FFFFFFF;
}

/* A CPU process with a usable numeric pid is a Perfetto process; a GPU or a string pid is a
 * named track. */
static int real_process(const gp_track *tr)
{
    return !tr->is_gpu && tr->pid_str == GP_STR_NONE && pid_ok(tr->pid);
}

static void process_track(px *s, const gp_track *tr, uint32_t ti)
{
    char buf[160];
    desc d = {.kind = real_process(tr) && !s->root ? DESC_PROCESS : DESC_PLAIN,
              .uuid = s->next_uuid++,
              .parent = s->root, /* a job's rank: the trace's processes are its children */
              .name = export_process_name(s->t, tr, buf, sizeof buf),
              .pid = tr->pid,
              .ordered = tr->is_gpu};
    px_track_descriptor(s, &d);
    s->proc_uuid[ti] = d.uuid;
}

/* The uuid of lane `k` of track `ti`, describing the lane's track when it first appears. */
static uint64_t lane_track(px *s, const gp_track *tr, uint32_t ti, uint32_t k)
{
    if (k < s->n_lane_uuid)
        return s->lane_uuid[k];
    if (k >= s->lane_uuid_cap) {
        uint32_t cap = s->lane_uuid_cap ? s->lane_uuid_cap * 2 : 8;
        uint64_t *p = realloc(s->lane_uuid, cap * sizeof *p);
        if (!p) {
            s->b.failed = 1;
            return 0;
        }
        s->lane_uuid = p;
        s->lane_uuid_cap = cap;
    }
    char base[200], buf[240];
    const char *name = export_thread_name(s->t, tr, base, sizeof base);
    desc d = {.kind = DESC_PLAIN,
              .uuid = s->next_uuid++,
              .parent = k ? s->lane_uuid[0] : s->proc_uuid[ti],
              .name = name,
              .pid = tr->pid,
              .tid = tr->tid,
              .ordered = k == 0,
              .rank = k ? (int32_t)k : export_thread_sort(tr)};
    if (k) {
        snprintf(buf, sizeof buf, "%s (overlap %u)", name, k);
        d.name = buf;
    } else if (real_process(tr) && !s->root && tr->tid_str == GP_STR_NONE && pid_ok(tr->tid)) {
        d.kind = DESC_THREAD; /* its pid ties it to the process */
        d.parent = 0;
    }
    px_track_descriptor(s, &d);
    s->lane_uuid[s->n_lane_uuid++] = d.uuid; /* lanes appear in order: k == n_lane_uuid */
    return d.uuid;
}

/* ---- Events. ---- */

static void annot_begin(pb_buf *b, enum annot a)
{
    pb_begin(b, TE_DEBUG_ANNOTATIONS);
    pb_varint(b, DA_NAME_IID, (uint64_t)a + 1);
}

static void annot_int(pb_buf *b, enum annot a, int64_t v)
{
    annot_begin(b, a);
    pb_int(b, DA_INT_VALUE, v);
    pb_end(b);
}

static void annot_double(pb_buf *b, enum annot a, double v)
{
    if (!isfinite(v)) /* as the JSON export, which has no inf */
        return;
    annot_begin(b, a);
    pb_double(b, DA_DOUBLE_VALUE, v);
    pb_end(b);
}

static void annot_str(pb_buf *b, enum annot a, const char *v)
{
    if (!v)
        return;
    annot_begin(b, a);
    pb_str(b, DA_STRING_VALUE, v);
    pb_end(b);
}

static void annot_str_iid(pb_buf *b, enum annot a, uint64_t iid)
{
    if (!iid)
        return;
    annot_begin(b, a);
    pb_varint(b, DA_STRING_VALUE_IID, iid);
    pb_end(b);
}

static void annot_dim3(pb_buf *b, enum annot a, const int32_t v[3])
{
    annot_begin(b, a);
    for (int i = 0; i < 3; i++) {
        pb_begin(b, DA_ARRAY_VALUES);
        pb_int(b, DA_INT_VALUE, v[i]);
        pb_end(b);
    }
    pb_end(b);
}

static void gpu_annots(pb_buf *b, const gp_event *e, const gp_gpu_info *g)
{
    annot_int(b, A_DEVICE, g->device >= 0 ? g->device : 0);
    if (g->stream >= 0)
        annot_int(b, A_STREAM, g->stream);
    if (e->kind == GP_EV_KERNEL) {
        annot_int(b, A_REGISTERS, g->registers);
        annot_int(b, A_SHARED_MEMORY, g->shared_mem);
        annot_double(b, A_BLOCKS_PER_SM, g->blocks_per_sm);
        annot_double(b, A_WARPS_PER_SM, g->warps_per_sm);
        annot_dim3(b, A_GRID, g->grid);
        annot_dim3(b, A_BLOCK, g->block);
        if (g->occupancy >= 0)
            annot_double(b, A_OCCUPANCY, g->occupancy);
    } else if (e->kind == GP_EV_MEMCPY || e->kind == GP_EV_MEMSET) {
        annot_int(b, A_BYTES, g->bytes);
    }
}

/* The arguments the JSON export gives the event, as debug annotations; `shape` is the iid of
 * its Input Dims (0: none). */
static void event_annots(px *s, const gp_event *e, uint64_t shape)
{
    pb_buf *b = &s->b;
    if (e->ext_id != GP_ID_NONE)
        annot_int(b, A_EXTERNAL_ID, e->ext_id);
    if (e->corr != GP_ID_NONE)
        annot_int(b, A_CORRELATION, e->corr);
    const gp_gpu_info *g = gp_trace_gpu_info(s->t, e);
    if (g)
        gpu_annots(b, e, g);
    const gp_py_info *py = gp_trace_py_info(s->t, e);
    if (py && py->id >= 0)
        annot_int(b, A_PYTHON_ID, py->id);
    if (py && py->parent_id >= 0)
        annot_int(b, A_PYTHON_PARENT_ID, py->parent_id);
    if (py && py->module_id >= 0)
        annot_int(b, A_PYTHON_MODULE_ID, py->module_id);
    annot_str_iid(b, A_INPUT_DIMS, shape);
}

/* The first of `n` flow ends at event `i` (binary search), or `n`. */
static size_t first_end(const flow_end *f, size_t n, uint32_t i)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f[mid].ev < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void flow_ids(px *s, const flow_end *f, uint32_t field, uint32_t i)
{
    for (size_t k = first_end(f, s->n_flows, i); k < s->n_flows && f[k].ev == i; k++)
        pb_fixed64(&s->b, field, s->flow_base + f[k].launch + 1);
}

static void event_begin(px *s, uint32_t i, uint64_t track)
{
    const gp_event *e = &s->ev[i];
    px_event_packet_begin(s, e->ts);
    uint64_t iid = str_iid(s, &s->named, ID_EVENT_NAMES, e->name);
    uint64_t shape = str_iid(s, &s->shaped, ID_DEBUG_ANNOTATION_STRING_VALUES,
                             gp_trace_event_shape(s->t, e));
    intern_done(s);
    pb_begin(&s->b, PKT_TRACK_EVENT);
    pb_varint(&s->b, TE_TYPE, e->ph == 'X' ? TYPE_SLICE_BEGIN : TYPE_INSTANT);
    pb_varint(&s->b, TE_TRACK_UUID, track);
    pb_varint(&s->b, TE_CATEGORY_IIDS, e->kind < GP_EV_KIND_COUNT ? e->kind + 1u : 1u);
    if (iid)
        pb_varint(&s->b, TE_NAME_IID, iid);
    else
        pb_str(&s->b, TE_NAME, "");
    event_annots(s, e, shape);
    flow_ids(s, s->starts, TE_FLOW_IDS, i);
    flow_ids(s, s->ends, TE_TERMINATING_FLOW_IDS, i);
    pb_end(&s->b);
    px_packet_end(s);
}

void px_slice_end(px *s, uint64_t track, int64_t ts)
{
    px_event_packet_begin(s, ts);
    pb_begin(&s->b, PKT_TRACK_EVENT);
    pb_varint(&s->b, TE_TYPE, TYPE_SLICE_END);
    pb_varint(&s->b, TE_TRACK_UUID, track);
    pb_end(&s->b);
    px_packet_end(s);
}

static void lane_closed(void *ud, uint32_t k, int64_t end)
{
    px *s = ud;
    px_slice_end(s, s->lane_uuid[k], end);
}

static void close_lanes(px *s, int64_t ts)
{
    for (uint32_t k = 0; k < s->lanes.n; k++)
        export_lanes_close(&s->lanes, k, ts, lane_closed, s);
}

/* One track: its descriptors, then its slices in time order, each slice's end written before
 * anything that starts at or after it on the same lane. */
static gp_status track_events(px *s, const gp_track *tr, uint32_t ti)
{
    s->n_lane_uuid = 0;
    lane_track(s, tr, ti, 0);
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &s->ev[i];
        if (e->kind == GP_EV_MEMORY) /* written as counters */
            continue;
        int k = 0;
        close_lanes(s, e->ts); /* an instant too: each lane's track stays in time order */
        if (e->ph == 'X') {
            k = export_lanes_place(&s->lanes, e->ts, e->ts + e->dur);
            if (k < 0)
                return GP_ENOMEM;
        }
        event_begin(s, i, lane_track(s, tr, ti, (uint32_t)k));
    }
    close_lanes(s, INT64_MAX);
    export_lanes_free(&s->lanes);
    return s->b.failed ? GP_ENOMEM : GP_OK;
}

static gp_status all_tracks(px *s)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(s->t, &nt);
    for (size_t i = 0; i < nt; i++) {
        /* tracks are sorted by pid: a process starts where the pid changes */
        int new_proc = i == 0 || tr[i - 1].pid_str != tr[i].pid_str || tr[i - 1].pid != tr[i].pid ||
                       tr[i - 1].is_gpu != tr[i].is_gpu;
        if (new_proc)
            process_track(s, &tr[i], (uint32_t)i);
        else
            s->proc_uuid[i] = s->proc_uuid[i - 1];
        GP_TRY(track_events(s, &tr[i], (uint32_t)i));
    }
    return GP_OK;
}

/* ---- Counters: each allocator series as "<device> memory allocated|reserved", in bytes. ---- */

/* A counter's value at `ts`: `*v` when given (bytes), else `d`. */
static void counter_value(px *s, uint64_t track, int64_t ts, const int64_t *v, double d)
{
    px_event_packet_begin(s, ts);
    pb_begin(&s->b, PKT_TRACK_EVENT);
    pb_varint(&s->b, TE_TYPE, TYPE_COUNTER);
    pb_varint(&s->b, TE_TRACK_UUID, track);
    if (v)
        pb_int(&s->b, TE_COUNTER_VALUE, *v);
    else
        pb_double(&s->b, TE_DOUBLE_COUNTER_VALUE, d);
    pb_end(&s->b);
    px_packet_end(s);
}

/* The GPU track of `device`, or 0 when the trace has none. */
static uint64_t gpu_uuid(const px *s, int device)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(s->t, &nt);
    for (size_t i = 0; i < nt; i++)
        if (tr[i].is_gpu && tr[i].device == device)
            return s->proc_uuid[i];
    return 0;
}

static void memory_series(px *s, const gp_mem_series *m)
{
    if (!m->n_points)
        return;
    int gpu = m->device_type == GP_MEM_DEVICE_TYPE_CUDA;
    char prefix[64], name[96];
    if (gpu)
        snprintf(prefix, sizeof prefix, "GPU %d memory", m->device_id);
    else
        snprintf(prefix, sizeof prefix, "CPU memory");
    uint64_t parent =
            gpu ? gpu_uuid(s, m->device_id) : s->proc_uuid[s->ev[m->points[0].event].track];
    uint64_t uuid[2];
    static const char *const what[2] = {"allocated", "reserved"};
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof name, "%s %s", prefix, what[k]);
        desc d = {.kind = DESC_COUNTER,
                  .uuid = s->next_uuid++,
                  .parent = parent,
                  .name = name,
                  .rank = RANK_COUNTERS + k,
                  .unit = UNIT_SIZE_BYTES};
        px_track_descriptor(s, &d);
        uuid[k] = d.uuid;
    }
    for (size_t i = 0; i < m->n_points; i++) {
        counter_value(s, uuid[0], m->points[i].ts, &m->points[i].allocated, 0);
        counter_value(s, uuid[1], m->points[i].ts, &m->points[i].reserved, 0);
    }
}

/* ---- The trace's own counters (libprof's gp_prof_counter): a track per name and process. ---- */

typedef struct counter_ref {
    gp_str name;
    int64_t pid, ts;
    uint32_t i;
} counter_ref;

static int cmp_counter_ref(const void *pa, const void *pb)
{
    const counter_ref *a = pa, *b = pb;
    if (a->name != b->name)
        return a->name < b->name ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The process track of `pid`, or 0 when it has none. */
static uint64_t process_of(const px *s, int64_t pid)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(s->t, &nt);
    for (size_t i = 0; i < nt; i++)
        if (real_process(&tr[i]) && tr[i].pid == pid)
            return s->proc_uuid[i];
    return 0;
}

/* Each counter's samples in time order on its own track (the file has them in writing order). */
static gp_status value_counters(px *s)
{
    size_t n;
    const gp_counter *c = gp_trace_counters(s->t, &n);
    counter_ref *r = malloc((n + 1) * sizeof *r);
    if (!r)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        r[i] = (counter_ref){c[i].name, c[i].pid, c[i].ts, (uint32_t)i};
    qsort(r, n, sizeof *r, cmp_counter_ref);
    uint64_t track = 0;
    for (size_t k = 0; k < n; k++) {
        if (k == 0 || r[k].name != r[k - 1].name || r[k].pid != r[k - 1].pid) {
            desc d = {.kind = DESC_COUNTER,
                      .uuid = s->next_uuid++,
                      .parent = process_of(s, r[k].pid) ? process_of(s, r[k].pid) : s->root,
                      .name = gp_trace_str(s->t, r[k].name)};
            px_track_descriptor(s, &d);
            track = d.uuid;
        }
        if (isfinite(c[r[k].i].value)) /* as the JSON export, which has no inf or nan */
            counter_value(s, track, r[k].ts, NULL, c[r[k].i].value);
    }
    free(r);
    return GP_OK;
}

/* ---- Findings: a track per fired finding under "gprof-train findings". ---- */

/* A finding's texts, the same on each of its slices: interned once. */
enum { FT_SEVERITY, FT_SUMMARY, FT_RECOMMENDATION, FT_KNOB, FT_GAIN, FT_COUNT };

static void finding_slice(px *s, uint64_t track, const gp_finding *f, const char *label,
                          const gp_time_range *r, uint64_t iid0, int first)
{
    pb_buf *b = &s->b;
    const char *text[FT_COUNT] = {gp_severity_name(f->severity), f->summary, f->recommendation,
                                  f->knob, f->gain_text};
    static const enum annot key[FT_COUNT] = {A_SEVERITY, A_SUMMARY, A_RECOMMENDATION, A_KNOB,
                                             A_GAIN};
    px_event_packet_begin(s, r->ts);
    for (int k = 0; first && k < FT_COUNT; k++)
        if (text[k])
            intern(s, ID_DEBUG_ANNOTATION_STRING_VALUES, iid0 + (uint64_t)k, text[k]);
    intern_done(s);
    pb_begin(b, PKT_TRACK_EVENT);
    pb_varint(b, TE_TYPE, TYPE_SLICE_BEGIN);
    pb_varint(b, TE_TRACK_UUID, track);
    pb_varint(b, TE_CATEGORY_IIDS, CAT_FINDING);
    pb_str(b, TE_NAME, label);
    for (int k = 0; k < FT_COUNT; k++)
        annot_str_iid(b, key[k], text[k] ? iid0 + (uint64_t)k : 0);
    annot_str(b, A_RANGE, r->label); /* one range's own */
    pb_end(b);
    px_packet_end(s);
    px_slice_end(s, track, r->end);
}

static gp_status one_finding(px *s, uint64_t parent, int32_t rank, const gp_finding *f)
{
    char label[256];
    snprintf(label, sizeof label, "%s %s", f->rule->id, f->rule->title);
    desc d = {.kind = DESC_PLAIN,
              .uuid = s->next_uuid++,
              .parent = parent,
              .name = label,
              .rank = rank};
    px_track_descriptor(s, &d);
    size_t n;
    gp_time_range *r = export_finding_ranges(f, &n);
    if (!r)
        return GP_ENOMEM;
    uint64_t iid0 = s->next_str_iid;
    s->next_str_iid += FT_COUNT;
    for (size_t k = 0; k < n; k++)
        finding_slice(s, d.uuid, f, label, &r[k], iid0, k == 0);
    free(r);
    return GP_OK;
}

static gp_status findings_track(px *s, const gp_findings *fs)
{
    size_t n = 0;
    const gp_finding *f = fs ? gp_findings_get(fs, &n) : NULL;
    uint64_t parent = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i].severity == GP_SEV_OK)
            continue;
        if (!parent) {
            desc d = {.kind = DESC_PLAIN,
                      .uuid = s->next_uuid++,
                      .name = "gprof-train findings",
                      .ordered = 1};
            px_track_descriptor(s, &d);
            parent = d.uuid;
        }
        GP_TRY(one_finding(s, parent, (int32_t)i, &f[i]));
    }
    return GP_OK;
}

/* ---- Setup. ---- */

static int cmp_flow_end(const void *pa, const void *pb)
{
    const flow_end *a = pa, *b = pb;
    if (a->ev != b->ev)
        return a->ev < b->ev ? -1 : 1;
    return a->launch < b->launch ? -1 : a->launch > b->launch;
}

/* Each launch's two ends, sorted by event, so a slice finds its flows by binary search. */
static gp_status index_flows(px *s, const gp_analysis *a)
{
    const gp_launch *l = gp_analysis_launches(a, &s->n_flows);
    s->starts = malloc((s->n_flows + 1) * sizeof *s->starts);
    s->ends = malloc((s->n_flows + 1) * sizeof *s->ends);
    if (!s->starts || !s->ends)
        return GP_ENOMEM;
    for (size_t i = 0; i < s->n_flows; i++) {
        s->starts[i] = (flow_end){l[i].runtime, (uint32_t)i};
        s->ends[i] = (flow_end){l[i].gpu, (uint32_t)i};
    }
    qsort(s->starts, s->n_flows, sizeof *s->starts, cmp_flow_end);
    qsort(s->ends, s->n_flows, sizeof *s->ends, cmp_flow_end);
    return GP_OK;
}

gp_status px_trace_body(px *s, const gp_analysis *a, const gp_findings *fs)
{
    size_t nt, ne, nm;
    s->t = gp_analysis_trace(a);
    gp_trace_tracks(s->t, &nt);
    s->ev = gp_trace_events(s->t, &ne);
    s->proc_uuid = calloc(nt + 1, sizeof *s->proc_uuid);
    if (!s->proc_uuid)
        return GP_ENOMEM;
    GP_TRY(index_flows(s, a));
    sequence_start(s);
    GP_TRY(all_tracks(s));
    const gp_mem_series *ms = gp_analysis_memory(a, &nm);
    for (size_t k = 0; k < nm; k++)
        memory_series(s, &ms[k]);
    GP_TRY(value_counters(s));
    GP_TRY(findings_track(s, fs));
    return s->b.failed ? GP_ENOMEM : GP_OK;
}

void px_trace_done(px *s)
{
    export_lanes_free(&s->lanes);
    free(s->named.v);
    free(s->shaped.v);
    free(s->proc_uuid);
    free(s->starts);
    free(s->ends);
    free(s->lane_uuid);
    px keep = *s; /* the output, the buffer and what goes on across a job's traces */
    *s = (px){.o = keep.o,
              .b = keep.b,
              .next_uuid = keep.next_uuid,
              .next_str_iid = PX_STR_IID0,
              .seq = keep.seq};
}

gp_status gp_export_perfetto_proto(const gp_analysis *a, const gp_export_opts *opts,
                                   const char *path, gp_error *err)
{
    static const gp_export_opts none = {0};
    opts = opts ? opts : &none;
    const gp_trace_info *info = gp_trace_get_info(gp_analysis_trace(a));
    int64_t t0 = info->n_events ? info->ts_min : 0, wall;
    if (__builtin_add_overflow(info->base_time_ns, t0, &wall))
        wall = 0; /* no wall-clock time rather than a wrong one */
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    px s = {.o = &o, .t0 = t0, .next_uuid = 1, .next_str_iid = PX_STR_IID0, .seq = 1};
    px_clock_snapshot(&s, wall);
    gp_status rc = px_trace_body(&s, a, opts->findings);
    px_trace_done(&s);
    pb_free(&s.b);
    if (rc != GP_OK) {
        export_out_abort(&o);
        return gp_error_set(err, rc, path, "out of memory");
    }
    return export_out_close(&o, err);
}

int gp_export_perfetto_is_proto_name(const char *path)
{
    static const char *const ext[] = {".pftrace", ".perfetto-trace", ".pftrace.gz",
                                      ".perfetto-trace.gz"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t m = strlen(ext[i]);
        if (n >= m && strcmp(path + n - m, ext[i]) == 0)
            return 1;
    }
    return 0;
}
