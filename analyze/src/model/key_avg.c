/* Key averages with PyTorch's semantics (torch.autograd.profiler_util EventList: the op tree of
 * _populate_cpu_children, _remove_dup_nodes, key_averages): per thread, an op's parent is the
 * innermost op that wholly contains it; self CPU = duration minus its children's; an op whose
 * parent has the same name and no other child is merged into it; python frames nest and take
 * time from their parent but are no rows; a CPU op's device time = the GPU work linked to it
 * (External id / correlation) plus its children's; GPU activities are rows of their own;
 * ProfilerStep#N folds into "ProfilerStep*"; a CUDA run's GPU-side annotations are rows apart
 * (gpu_annotation_row); CUPTI's overhead events are ops of the profiler's thread
 * (key_avg_overhead.c); memory as in key_avg_mem.c. The CPU sweep runs on
 * two threads over two halves of the tracks, merged in serial row order. */
#include "model/key_avg_int.h"

#include "gp/trace_schema.h"

#include <stdlib.h>
#include <string.h>

#define STEP_NAME   0xFFFFFFFEu  /* row name id standing for "ProfilerStep*" */
#define DEVICE_ROW  0xFFFFFFFEu  /* shape id of device rows */
#define MEMORY_NAME 0xFFFFFFFDu  /* row name id standing for "[memory]" */
#define ANNOT_KEY   (1ull << 63) /* key bit of user_annotation rows */

static const char *const sort_names[][2] = {
        {"cpu_time", NULL},
        {"cuda_time", "device_time"},
        {"cpu_time_total", NULL},
        {"cuda_time_total", "device_time_total"},
        {"self_cpu_time_total", NULL},
        {"self_cuda_time_total", "self_device_time_total"},
        {"count", NULL},
};

gp_status gp_sort_key_parse(const char *s, gp_sort_key *out, gp_error *err)
{
    for (int k = 0; k <= GP_SORT_COUNT; k++)
        for (int j = 0; j < 2; j++)
            if (sort_names[k][j] && strcmp(s, sort_names[k][j]) == 0) {
                *out = (gp_sort_key)k;
                return GP_OK;
            }
    return gp_error_set(err, GP_EINVAL, NULL,
                        "unknown sort key '%s' (cpu_time, cuda_time, cpu_time_total, "
                        "cuda_time_total, self_cpu_time_total, self_cuda_time_total, count, or "
                        "the device_* spellings)",
                        s);
}

gp_sort_key gp_sort_key_default(const gp_analysis *a)
{
    size_t n_dev = 0;
    gp_analysis_devices(a, &n_dev);
    return n_dev ? GP_SORT_CUDA_TIME_TOTAL : GP_SORT_CPU_TIME_TOTAL;
}

/* The utility ops _parse_kineto_results leaves out of its events (profiler_util._filter_name). */
static int is_filtered_name(const char *s)
{
    static const char *const names[] = {
            "profiler::_record_function_enter",
            "profiler::_record_function_enter_new",
            "profiler::_record_function_exit",
            "aten::is_leaf",
            "aten::output_nr",
            "aten::_version",
    };
    if (s[0] != 'p' && s[0] != 'a')
        return 0;
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (strcmp(s, names[k]) == 0)
            return 1;
    return 0;
}

int ka_is_member(const gp_analysis *a, const gp_event *e)
{
    return !(e->flags & GP_EVF_GPU) &&
           (e->kind == GP_EV_CPU_OP || e->kind == GP_EV_DRIVER ||
            e->kind == GP_EV_USER_ANNOTATION || e->kind == GP_EV_RUNTIME ||
            e->kind == GP_EV_PYTHON || e->kind == GP_EV_OVERHEAD) &&
           !(e->kind == GP_EV_CPU_OP && is_filtered_name(gp_trace_str(a->t, e->name)));
}

typedef struct ka_build {
    id_map rows_by_key;
    trace_vec rows; /* gp_keyavg_row */
    trace_vec keys; /* int64_t, the key of each row */
} ka_build;

static gp_status ka_build_init(ka_build *kb)
{
    trace_vec_init(&kb->rows, sizeof(gp_keyavg_row));
    trace_vec_init(&kb->keys, sizeof(int64_t));
    return id_map_init(&kb->rows_by_key, 1024);
}

static void ka_build_release(ka_build *kb)
{
    id_map_release(&kb->rows_by_key);
    trace_vec_release(&kb->keys);
}

static gp_keyavg_row *row_at(ka_build *kb, uint32_t r)
{
    return TRACE_VEC_AT(&kb->rows, gp_keyavg_row, r);
}

/* The index of the row of `key`, appended (zeroed) when new; GP_NONE when out of memory. */
static uint32_t row_of_key(ka_build *kb, int64_t key, int *is_new)
{
    uint32_t r = id_map_get(&kb->rows_by_key, key);
    *is_new = r == GP_NONE;
    if (r != GP_NONE)
        return r;
    gp_keyavg_row *row = trace_vec_push(&kb->rows);
    int64_t *k = trace_vec_push(&kb->keys);
    r = (uint32_t)(kb->rows.n - 1);
    if (!row || !k || id_map_put(&kb->rows_by_key, key, r) != 0)
        return GP_NONE;
    *k = key;
    return r;
}

static uint32_t row_name(const gp_analysis *a, const gp_event *e)
{
    if (e->flags & GP_EVF_STEP)
        return STEP_NAME;
    if (e->kind == GP_EV_GPU_USER_ANNOTATION && /* the GPU-side copy of a ProfilerStep#N */
        strncmp(gp_trace_str(a->t, e->name), "ProfilerStep#", 13) == 0)
        return STEP_NAME;
    return e->name;
}

/* The shape key of a host op when grouping by shape: "[]" and no shapes are one key, as
 * PyTorch's str(input_shapes) prints both as "[]". */
static gp_str shape_key(const gp_analysis *a, const gp_event *e)
{
    gp_str s = gp_trace_event_shape(a->t, e);
    return s != GP_STR_NONE && strcmp(gp_trace_str(a->t, s), "[]") == 0 ? GP_STR_NONE : s;
}

static uint32_t row_for(const gp_analysis *a, ka_build *kb, const gp_event *e, int dev,
                        gp_group_by group)
{
    uint32_t name = row_name(a, e);
    int annot = e->kind == GP_EV_USER_ANNOTATION || e->kind == GP_EV_GPU_USER_ANNOTATION;
    gp_str shape = dev ? DEVICE_ROW : group == GP_GROUP_NAME_SHAPE ? shape_key(a, e) : GP_STR_NONE;
    int64_t key = (int64_t)((((uint64_t)name << 32) | shape) ^ (annot ? ANNOT_KEY : 0));
    int is_new;
    uint32_t r = row_of_key(kb, key, &is_new);
    if (r != GP_NONE && is_new) {
        gp_keyavg_row *row = row_at(kb, r);
        row->name = name == STEP_NAME ? "ProfilerStep*" : gp_trace_str(a->t, name);
        row->shape = group != GP_GROUP_NAME_SHAPE  ? ""
                     : shape == GP_STR_NONE || dev ? "[]"
                                                   : gp_trace_str(a->t, shape);
        row->is_device = dev;
        row->is_annotation = annot;
    }
    return r;
}

static int64_t sort_value(const gp_keyavg_row *r, gp_sort_key key)
{
    int64_t c = r->count ? (int64_t)r->count : 1;
    switch (key) {
    case GP_SORT_CPU_TIME:
        return r->cpu_total / c;
    case GP_SORT_CUDA_TIME:
        return r->device_total / c;
    case GP_SORT_CPU_TIME_TOTAL:
        return r->cpu_total;
    case GP_SORT_CUDA_TIME_TOTAL:
        return r->device_total;
    case GP_SORT_SELF_CPU_TIME_TOTAL:
        return r->self_cpu;
    case GP_SORT_SELF_CUDA_TIME_TOTAL:
        return r->self_device;
    default:
        return (int64_t)r->count;
    }
}

typedef struct ka_key {
    int64_t v;
    gp_keyavg_row row;
} ka_key;

static int cmp_row(const void *pa, const void *pb)
{
    const ka_key *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    int c = strcmp(a->row.name, b->row.name);
    if (c)
        return c;
    c = strcmp(a->row.shape, b->row.shape);
    if (c)
        return c;
    c = a->row.is_device - b->row.is_device;
    return c ? c : a->row.is_annotation - b->row.is_annotation;
}

/* Sort, dropping rows every op of which was merged into its namesake parent. */
static gp_status sort_rows(gp_keyavg *out, gp_sort_key key)
{
    ka_key *k = malloc((out->n_rows + 1) * sizeof(*k));
    if (!k)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < out->n_rows; i++)
        if (out->rows[i].count)
            k[n++] = (ka_key){sort_value(&out->rows[i], key), out->rows[i]};
    qsort(k, n, sizeof(*k), cmp_row);
    for (size_t i = 0; i < n; i++) {
        out->rows[i] = k[i].row;
        out->has_device_memory |= k[i].row.self_device_mem > 0;
    }
    out->n_rows = n;
    free(k);
    return GP_OK;
}

/* `direct` below: device time of GPU work linked straight to an op, per event (0 for the rest),
 * filled before the sweep: GPU work is scanned in stream order, which follows its ops' order,
 * and the sweep reads it in event order, so both passes touch it nearly in order. */

/* Event i's span on the GPU added to its device row: GP_OK, or GP_ENOMEM. */
static gp_status add_device_span(const gp_analysis *a, ka_build *kb, uint32_t i, gp_group_by group)
{
    const gp_event *e = &a->ev[i];
    uint32_t r = row_for(a, kb, e, 1, group);
    if (r == GP_NONE)
        return GP_ENOMEM;
    gp_keyavg_row *row = row_at(kb, r);
    row->count++;
    row->self_device += e->dur;
    row->device_total += e->dur;
    return GP_OK;
}

/* A GPU activity: a device row of its own, and device time for the op that launched it. */
static gp_status device_row(const gp_analysis *a, ka_build *kb, int64_t *direct, uint32_t i,
                            gp_group_by group, gp_keyavg *out)
{
    GP_TRY(add_device_span(a, kb, i, group));
    out->self_device_total += a->ev[i].dur;
    out->has_device = 1;
    if (a->op_of[i] != GP_NONE)
        direct[a->op_of[i]] += a->ev[i].dur;
    return GP_OK;
}

/* A closed op as its parent sees it, after its own merges: what its row got (to take back if
 * the parent absorbs it) and what the parent inherits then. */
typedef struct ka_node {
    uint32_t row;  /* GP_NONE for a python frame */
    uint32_t name; /* row_name() */
    int64_t dur, self_cpu;
    int64_t dev_total, child_dev; /* its device time and its (effective) children's */
    int64_t child_cpu;            /* its (effective) children's CPU time */
    int64_t mem[2], child_mem[2]; /* CPU and device bytes: its own and its children's */
    uint64_t flops;               /* its own (with_flops traces), never its children's */
} ka_node;

/* An open op on a track: sums over its direct children so far, and the last of them. */
typedef struct ka_frame {
    uint32_t ev, n_children;
    int64_t end, child_cpu, child_dev, child_mem[2];
    ka_node last;
} ka_frame;

typedef struct ka_sweep {
    ka_frame *st;
    size_t depth, cap;
} ka_sweep;

typedef struct ka_half {
    const gp_analysis *a;
    ka_build *kb;
    const int64_t *direct;
    const ka_mem *mem;
    const ka_overhead *ovh;
    gp_group_by group;
    int flops;     /* the trace has with_flops: estimate each op's FLOPs */
    gp_keyavg out; /* self_cpu_total */
    size_t lo, hi;
    gp_status rc;
} ka_half;

/* Add (sign 1) or take back (sign -1) a node's share of its row. */
static void row_add(ka_half *h, const ka_node *n, int sign)
{
    if (n->row == GP_NONE)
        return;
    gp_keyavg_row *r = row_at(h->kb, n->row);
    r->count += (uint64_t)(int64_t)sign;
    r->cpu_total += sign * n->dur;
    r->self_cpu += sign * n->self_cpu;
    r->device_total += sign * n->dev_total;
    r->self_device += sign * (n->dev_total - n->child_dev);
    r->cpu_mem += sign * n->mem[0];
    r->self_cpu_mem += sign * (n->mem[0] - n->child_mem[0]);
    r->device_mem += sign * n->mem[1];
    r->self_device_mem += sign * (n->mem[1] - n->child_mem[1]);
    r->flops += sign > 0 ? n->flops : 0 - n->flops;
    h->out.self_cpu_total += sign * n->self_cpu;
}

/* The node of a closing frame. A single child of the same name is merged into it
 * (_remove_dup_nodes): that child's row share is taken back, and this op inherits its children
 * and its linked device work in place of its own. */
static ka_node close_node(ka_half *h, const ka_frame *f)
{
    const gp_event *e = &h->a->ev[f->ev];
    ka_node n = {
            e->kind == GP_EV_PYTHON ? GP_NONE : 0, row_name(h->a, e), e->dur, 0, 0, 0, 0, {0}, {0},
            h->flops ? ka_op_flops(h->a->t, e) : 0};
    ka_mem_in(h->mem, e->ts, e->ts + e->dur, n.mem);
    if (f->n_children == 1 && f->last.name == n.name) {
        row_add(h, &f->last, -1);
        n.child_cpu = f->last.child_cpu;
        n.dev_total = f->last.dev_total;
        n.child_dev = f->last.child_dev;
        n.child_mem[0] = f->last.child_mem[0];
        n.child_mem[1] = f->last.child_mem[1];
    } else {
        n.child_cpu = f->child_cpu;
        n.child_dev = f->child_dev;
        n.dev_total = h->direct[f->ev] + f->child_dev;
        n.child_mem[0] = f->child_mem[0];
        n.child_mem[1] = f->child_mem[1];
    }
    n.self_cpu = n.dur - n.child_cpu;
    return n;
}

/* Close the innermost open op: its row, then it becomes its parent's last child. */
static gp_status pop_op(ka_half *h, ka_sweep *sw)
{
    const ka_frame *f = &sw->st[--sw->depth];
    ka_node n = close_node(h, f);
    if (n.row != GP_NONE) {
        n.row = row_for(h->a, h->kb, &h->a->ev[f->ev], 0, h->group);
        if (n.row == GP_NONE)
            return GP_ENOMEM;
    }
    row_add(h, &n, 1);
    if (sw->depth) {
        ka_frame *p = &sw->st[sw->depth - 1];
        p->n_children++;
        p->child_cpu += n.dur;
        p->child_dev += n.dev_total;
        p->child_mem[0] += n.mem[0];
        p->child_mem[1] += n.mem[1];
        p->last = n;
    }
    return GP_OK;
}

/* Open op i: first close the ops that do not wholly contain it (a partial overlap is no
 * nesting, as in _populate_cpu_children). */
static gp_status push_op(ka_half *h, ka_sweep *sw, uint32_t i)
{
    const gp_event *e = &h->a->ev[i];
    int64_t end = e->ts + e->dur;
    while (sw->depth && !(e->ts < sw->st[sw->depth - 1].end && end <= sw->st[sw->depth - 1].end))
        if (pop_op(h, sw) != 0)
            return GP_ENOMEM;
    if (sw->depth == sw->cap) {
        size_t cap = sw->cap ? sw->cap * 2 : 256;
        ka_frame *st = realloc(sw->st, cap * sizeof(*st));
        if (!st)
            return GP_ENOMEM;
        sw->st = st;
        sw->cap = cap;
    }
    sw->st[sw->depth++] = (ka_frame){.ev = i, .end = end};
    return GP_OK;
}

/* Overhead event v goes before event i in a track's order (start, longer first). */
static int overhead_before(const ka_overhead_ev *v, const gp_event *i)
{
    return v->ts < i->ts || (v->ts == i->ts && v->dur > i->dur);
}

/* Track k's op tree, the overhead events joining it when it is theirs (ka_overhead). */
static gp_status sweep_track(ka_half *h, ka_sweep *sw, uint32_t k, const gp_track *tr)
{
    const ka_overhead *o = h->ovh;
    size_t j = 0, nj = k == o->track ? o->n : 0;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &h->a->ev[i];
        if (!ka_is_member(h->a, e) || e->kind == GP_EV_OVERHEAD)
            continue;
        for (; j < nj && overhead_before(&o->ev[j], e); j++)
            GP_TRY(push_op(h, sw, o->ev[j].ev));
        GP_TRY(push_op(h, sw, i));
    }
    for (; j < nj; j++)
        GP_TRY(push_op(h, sw, o->ev[j].ev));
    while (sw->depth)
        GP_TRY(pop_op(h, sw));
    return GP_OK;
}

/* CPU rows by a per-track stack sweep (no per-event arrays) over tracks [lo, hi). */
static void sweep_cpu(void *arg)
{
    ka_half *h = arg;
    const gp_track *tracks = gp_trace_tracks(h->a->t, &(size_t){0});
    ka_sweep sw = {0};
    for (size_t k = h->lo; k < h->hi && h->rc == 0; k++)
        h->rc = sweep_track(h, &sw, (uint32_t)k, &tracks[k]);
    free(sw.st);
}

/* Add the second half's rows into the first's: new ones appended in their order of first
 * appearance, which is the order one sweep over all tracks would have made. */
static gp_status merge_rows(ka_build *kb, const ka_build *from)
{
    for (size_t r = 0; r < from->rows.n; r++) {
        const gp_keyavg_row *src = TRACE_VEC_AT(&from->rows, gp_keyavg_row, r);
        int is_new;
        uint32_t d = row_of_key(kb, *TRACE_VEC_AT(&from->keys, int64_t, r), &is_new);
        if (d == GP_NONE)
            return GP_ENOMEM;
        gp_keyavg_row *dst = row_at(kb, d);
        if (is_new) {
            *dst = *src;
            continue;
        }
        dst->count += src->count;
        dst->self_cpu += src->self_cpu;
        dst->cpu_total += src->cpu_total;
        dst->self_device += src->self_device;
        dst->device_total += src->device_total;
        dst->cpu_mem += src->cpu_mem;
        dst->self_cpu_mem += src->self_cpu_mem;
        dst->device_mem += src->device_mem;
        dst->self_device_mem += src->self_device_mem;
        dst->flops += src->flops;
    }
    return GP_OK;
}

/* Split the tracks where half the events lie before. */
static size_t track_split(const gp_analysis *a)
{
    size_t nt, k = 0;
    const gp_track *tracks = gp_trace_tracks(a->t, &nt);
    while (k < nt && (size_t)tracks[k].first + tracks[k].count <= a->n / 2)
        k++;
    return k;
}

static gp_status sweep_halves(const gp_analysis *a, ka_build *kb, const int64_t *direct,
                              const ka_mem *mem, const ka_overhead *ovh, gp_group_by group,
                              gp_keyavg *out)
{
    size_t nt, mid = track_split(a);
    gp_trace_tracks(a->t, &nt);
    ka_build kb1;
    int flops = out->has_flops;
    ka_half h0 = {a, kb, direct, mem, ovh, group, flops, {0}, 0, mid, 0},
            h1 = {a, &kb1, direct, mem, ovh, group, flops, {0}, mid, nt, 0};
    h1.rc = ka_build_init(&kb1);
    if (h1.rc == 0)
        trace_par2(analysis_threads_of(a), sweep_cpu, &h0, sweep_cpu, &h1);
    gp_status rc = h0.rc == GP_OK && h1.rc == GP_OK ? merge_rows(kb, &kb1) : GP_ENOMEM;
    out->self_cpu_total += h0.out.self_cpu_total + h1.out.self_cpu_total;
    ka_build_release(&kb1);
    trace_vec_release(&kb1.rows);
    return rc;
}

/* The "[memory]" row: allocator records inside no op. */
static gp_status memory_row(const gp_analysis *a, ka_build *kb, const ka_mem *mem,
                            gp_group_by group, gp_keyavg *out)
{
    uint64_t count;
    int64_t bytes[2];
    out->has_memory = mem->n > 0;
    if (ka_mem_unattributed(mem, a, &count, bytes) != 0)
        return GP_ENOMEM;
    if (count == 0)
        return GP_OK;
    int is_new;
    int64_t key = (int64_t)(((uint64_t)MEMORY_NAME << 32) | GP_STR_NONE);
    uint32_t r = row_of_key(kb, key, &is_new);
    if (r == GP_NONE)
        return GP_ENOMEM;
    gp_keyavg_row *row = row_at(kb, r);
    row->name = GP_NAME_MEMORY;
    row->shape = group == GP_GROUP_NAME_SHAPE ? "[]" : "";
    row->count = count;
    row->cpu_mem = row->self_cpu_mem = bytes[0];
    row->device_mem = row->self_device_mem = bytes[1];
    return GP_OK;
}

static gp_status fill_rows(const gp_analysis *a, ka_build *kb, gp_group_by group, gp_keyavg *out)
{
    int64_t *direct = calloc(a->n ? a->n : 1, sizeof(int64_t));
    ka_mem mem;
    gp_status rc = direct ? ka_mem_init(&mem, a) : GP_ENOMEM;
    if (rc != 0) {
        free(direct);
        return GP_ENOMEM;
    }
    for (uint32_t i = 0; i < a->n && rc == 0; i++)
        if (analysis_is_gpu_work(a->ev[i].kind))
            rc = device_row(a, kb, direct, i, group, out);
        else if (a->ev[i].kind == GP_EV_GPU_USER_ANNOTATION)
            /* a CUDA run's record_function, its GPU-side copy: a row apart, as PyTorch keys it
             * (device type CUDA, a user annotation), its span as device time, no CPU time, and
             * none of it in the self device total, as PyTorch's table leaves it out */
            rc = add_device_span(a, kb, i, group);
    ka_overhead ovh = {0};
    if (rc == 0)
        rc = ka_overhead_init(&ovh, a, direct);
    if (rc == 0)
        rc = sweep_halves(a, kb, direct, &mem, &ovh, group, out);
    if (rc == 0)
        rc = memory_row(a, kb, &mem, group, out);
    ka_overhead_release(&ovh);
    ka_mem_release(&mem);
    free(direct);
    return rc;
}

gp_status gp_keyavg_compute(const gp_analysis *a, gp_group_by group, gp_sort_key key,
                            gp_keyavg *out, gp_error *err)
{
    memset(out, 0, sizeof(*out));
    out->has_flops = ka_trace_with_flops(a->t);
    ka_build kb;
    gp_status rc = ka_build_init(&kb);
    if (rc == 0)
        rc = fill_rows(a, &kb, group, out);
    ka_build_release(&kb);
    out->rows = (gp_keyavg_row *)kb.rows.data;
    out->n_rows = kb.rows.n;
    if (rc == 0)
        rc = sort_rows(out, key);
    if (rc != 0) {
        gp_keyavg_release(out);
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    }
    return GP_OK;
}

void gp_keyavg_release(gp_keyavg *k)
{
    if (!k)
        return;
    free(k->rows);
    memset(k, 0, sizeof(*k));
}
