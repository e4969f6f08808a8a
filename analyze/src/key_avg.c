/* Key averages with PyTorch's semantics (torch.autograd.profiler_util FunctionEvent and
 * EventList.key_averages): self CPU = duration minus direct children's on the same thread; a CPU
 * op's device time = the GPU work linked to it (External id / correlation) plus its children's;
 * GPU activities are rows of their own; ProfilerStep#N folds into "ProfilerStep*". The CPU
 * sweep runs on two threads over two halves of the tracks, merged in serial row order. */
#include "analysis_int.h"

#include <stdlib.h>
#include <string.h>

#define STEP_NAME  0xFFFFFFFEu /* row name id standing for "ProfilerStep*" */
#define DEVICE_ROW 0xFFFFFFFEu /* shape id of device rows */

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

static int is_function_cpu(const gp_event *e)
{
    return !(e->flags & GP_EVF_GPU) &&
           (e->kind == GP_EV_CPU_OP || e->kind == GP_EV_DRIVER ||
            e->kind == GP_EV_USER_ANNOTATION || e->kind == GP_EV_RUNTIME);
}

typedef struct ka_build {
    id_map rows_by_key;
    trace_vec rows; /* gp_keyavg_row */
    trace_vec keys; /* int64_t, the key of each row */
} ka_build;

static int ka_build_init(ka_build *kb)
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

/* The row of `key`, appended (zeroed) when new. */
static gp_keyavg_row *row_of_key(ka_build *kb, int64_t key, int *is_new)
{
    uint32_t r = id_map_get(&kb->rows_by_key, key);
    *is_new = r == GP_NONE;
    if (r != GP_NONE)
        return TRACE_VEC_AT(&kb->rows, gp_keyavg_row, r);
    gp_keyavg_row *row = trace_vec_push(&kb->rows);
    int64_t *k = trace_vec_push(&kb->keys);
    if (!row || !k || id_map_put(&kb->rows_by_key, key, (uint32_t)(kb->rows.n - 1)) != 0)
        return NULL;
    *k = key;
    return row;
}

static gp_keyavg_row *row_for(const gp_analysis *a, ka_build *kb, const gp_event *e, int dev,
                              gp_group_by group)
{
    uint32_t name = (e->flags & GP_EVF_STEP) ? STEP_NAME : e->name;
    gp_str shape = dev                            ? DEVICE_ROW
                   : group == GP_GROUP_NAME_SHAPE ? gp_trace_event_shape(a->t, e)
                                                  : GP_STR_NONE;
    int is_new;
    gp_keyavg_row *row = row_of_key(kb, (int64_t)(((uint64_t)name << 32) | shape), &is_new);
    if (row && is_new) {
        row->name = name == STEP_NAME ? "ProfilerStep*" : gp_trace_str(a->t, name);
        row->shape = dev || shape == GP_STR_NONE ? "" : gp_trace_str(a->t, shape);
        row->is_device = dev;
    }
    return row;
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
    return c ? c : a->row.is_device - b->row.is_device;
}

static int sort_rows(gp_keyavg *out, gp_sort_key key)
{
    ka_key *k = malloc((out->n_rows + 1) * sizeof(*k));
    if (!k)
        return -1;
    for (size_t i = 0; i < out->n_rows; i++)
        k[i] = (ka_key){sort_value(&out->rows[i], key), out->rows[i]};
    qsort(k, out->n_rows, sizeof(*k), cmp_row);
    for (size_t i = 0; i < out->n_rows; i++)
        out->rows[i] = k[i].row;
    free(k);
    return 0;
}

/* `direct` below: device time of GPU work linked straight to an op, per event (0 for the rest),
 * filled before the sweep: GPU work is scanned in stream order, which follows its ops' order,
 * and the sweep reads it in event order, so both passes touch it nearly in order. */

/* A GPU activity: a device row of its own, and self device time for the op that launched it. */
static int device_row(const gp_analysis *a, ka_build *kb, int64_t *direct, uint32_t i,
                      gp_group_by group, gp_keyavg *out)
{
    const gp_event *e = &a->ev[i];
    gp_keyavg_row *r = row_for(a, kb, e, 1, group);
    if (!r)
        return -1;
    r->count++;
    r->self_device += e->dur;
    r->device_total += e->dur;
    out->self_device_total += e->dur;
    out->has_device = 1;
    uint32_t op = a->op_of[i];
    if (op == GP_NONE)
        return 0;
    gp_keyavg_row *opr = row_for(a, kb, &a->ev[op], 0, group);
    if (!opr)
        return -1;
    direct[op] += e->dur;
    opr->self_device += e->dur; /* the op's self device time */
    return 0;
}

/* An open CPU function on a track: its children's CPU time and its subtree's device time. */
typedef struct ka_frame {
    uint32_t ev;
    int64_t child_cpu, dev;
} ka_frame;

typedef struct ka_sweep {
    ka_frame *st;
    size_t depth, cap;
} ka_sweep;

/* Close the innermost open function: its row, then its totals go to the one below (its
 * function parent, see push_function). */
static int pop_function(const gp_analysis *a, ka_build *kb, ka_sweep *sw, gp_group_by group,
                        gp_keyavg *out)
{
    const ka_frame *f = &sw->st[--sw->depth];
    const gp_event *e = &a->ev[f->ev];
    gp_keyavg_row *r = row_for(a, kb, e, 0, group);
    if (!r)
        return -1;
    int64_t self = e->dur - f->child_cpu;
    r->count++;
    r->cpu_total += e->dur;
    r->self_cpu += self;
    r->device_total += f->dev;
    out->self_cpu_total += self;
    if (sw->depth) {
        sw->st[sw->depth - 1].child_cpu += e->dur;
        sw->st[sw->depth - 1].dev += f->dev;
    }
    return 0;
}

/* Open CPU function i: close what is not its nearest enclosing function (PyTorch's parent,
 * python frames skipped). Nesting comes from the same per-track stack as parent_of, so that
 * parent is always open here and every frame sits on its parent. */
static int push_function(const gp_analysis *a, ka_build *kb, ka_sweep *sw, const int64_t *direct,
                         uint32_t i, gp_group_by group, gp_keyavg *out)
{
    uint32_t p = analysis_parent(a, i);
    while (p != GP_NONE && !is_function_cpu(&a->ev[p]))
        p = analysis_parent(a, p);
    while (sw->depth && sw->st[sw->depth - 1].ev != p)
        if (pop_function(a, kb, sw, group, out) != 0)
            return -1;
    if (sw->depth == sw->cap) {
        size_t cap = sw->cap ? sw->cap * 2 : 256;
        ka_frame *st = realloc(sw->st, cap * sizeof(*st));
        if (!st)
            return -1;
        sw->st = st;
        sw->cap = cap;
    }
    sw->st[sw->depth++] = (ka_frame){i, 0, direct[i]};
    return 0;
}

/* CPU rows by a per-track stack sweep (no per-event arrays) over tracks [lo, hi). */
typedef struct ka_half {
    const gp_analysis *a;
    ka_build *kb;
    const int64_t *direct;
    gp_group_by group;
    gp_keyavg out; /* self_cpu_total */
    size_t lo, hi;
    int rc;
} ka_half;

static void sweep_cpu(void *arg)
{
    ka_half *h = arg;
    const gp_track *tracks = gp_trace_tracks(h->a->t, &(size_t){0});
    ka_sweep sw = {0};
    for (size_t k = h->lo; k < h->hi && h->rc == 0; k++) {
        for (uint32_t i = tracks[k].first; i < tracks[k].first + tracks[k].count && h->rc == 0; i++)
            if (is_function_cpu(&h->a->ev[i]))
                h->rc = push_function(h->a, h->kb, &sw, h->direct, i, h->group, &h->out);
        while (sw.depth && h->rc == 0)
            h->rc = pop_function(h->a, h->kb, &sw, h->group, &h->out);
    }
    free(sw.st);
}

/* Add the second half's rows into the first's: new ones appended in their order of first
 * appearance, which is the order one sweep over all tracks would have made. */
static int merge_rows(ka_build *kb, const ka_build *from)
{
    for (size_t r = 0; r < from->rows.n; r++) {
        const gp_keyavg_row *src = TRACE_VEC_AT(&from->rows, gp_keyavg_row, r);
        int is_new;
        gp_keyavg_row *dst = row_of_key(kb, *TRACE_VEC_AT(&from->keys, int64_t, r), &is_new);
        if (!dst)
            return -1;
        if (is_new)
            *dst = *src;
        else {
            dst->count += src->count;
            dst->self_cpu += src->self_cpu;
            dst->cpu_total += src->cpu_total;
            dst->self_device += src->self_device;
            dst->device_total += src->device_total;
        }
    }
    return 0;
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

static int sweep_halves(const gp_analysis *a, ka_build *kb, const int64_t *direct,
                        gp_group_by group, gp_keyavg *out)
{
    size_t nt, mid = track_split(a);
    gp_trace_tracks(a->t, &nt);
    ka_build kb1;
    ka_half h0 = {a, kb, direct, group, {0}, 0, mid, 0},
            h1 = {a, &kb1, direct, group, {0}, mid, nt, 0};
    h1.rc = ka_build_init(&kb1);
    if (h1.rc == 0)
        analysis_par2(sweep_cpu, &h0, sweep_cpu, &h1);
    int rc = h0.rc == 0 && h1.rc == 0 ? merge_rows(kb, &kb1) : -1;
    out->self_cpu_total += h0.out.self_cpu_total + h1.out.self_cpu_total;
    ka_build_release(&kb1);
    trace_vec_release(&kb1.rows);
    return rc;
}

static int fill_rows(const gp_analysis *a, ka_build *kb, gp_group_by group, gp_keyavg *out)
{
    int64_t *direct = calloc(a->n ? a->n : 1, sizeof(int64_t));
    int rc = direct ? 0 : -1;
    for (uint32_t i = 0; i < a->n && rc == 0; i++)
        if (analysis_is_gpu_work(a->ev[i].kind))
            rc = device_row(a, kb, direct, i, group, out);
    if (rc == 0)
        rc = sweep_halves(a, kb, direct, group, out);
    free(direct);
    return rc;
}

gp_status gp_keyavg_compute(const gp_analysis *a, gp_group_by group, gp_sort_key key,
                            gp_keyavg *out, gp_error *err)
{
    memset(out, 0, sizeof(*out));
    ka_build kb;
    int rc = ka_build_init(&kb);
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
