/* Key averages with PyTorch's semantics (torch.autograd.profiler_util FunctionEvent and
 * EventList.key_averages): self CPU = duration minus direct children's on the same thread; a CPU
 * op's device time = the GPU work linked to it (External id / correlation) plus its children's;
 * GPU activities are rows of their own; ProfilerStep#N folds into "ProfilerStep*". */
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

/* The nearest enclosing event that PyTorch counts as a FunctionEvent (python frames skipped). */
static uint32_t fparent(const gp_analysis *a, uint32_t i)
{
    uint32_t p = a->parent_of[i];
    while (p != GP_NONE && !is_function_cpu(&a->ev[p]))
        p = a->parent_of[p];
    return p;
}

/* Per event: device time of its subtree and its children's CPU time (self device time goes
 * straight into the rows, see fill_rows, saving a third per-event array). */
typedef struct ka_acc {
    int64_t *dev_total, *child_cpu;
} ka_acc;

static int accumulate(const gp_analysis *a, ka_acc *acc)
{
    size_t n = a->n + 1;
    acc->dev_total = calloc(n, sizeof(int64_t));
    acc->child_cpu = calloc(n, sizeof(int64_t));
    if (!acc->dev_total || !acc->child_cpu)
        return -1;
    for (uint32_t i = 0; i < a->n; i++) {
        uint32_t op = a->op_of[i];
        if (analysis_is_gpu_work(a->ev[i].kind) && op != GP_NONE)
            acc->dev_total[op] += a->ev[i].dur;
    }
    /* a parent precedes its children on a track, so a reverse pass sees children first */
    for (uint32_t i = (uint32_t)a->n; i-- > 0;) {
        if (!is_function_cpu(&a->ev[i]))
            continue;
        uint32_t p = fparent(a, i);
        if (p != GP_NONE) {
            acc->child_cpu[p] += a->ev[i].dur;
            acc->dev_total[p] += acc->dev_total[i];
        }
    }
    return 0;
}

typedef struct ka_build {
    id_map rows_by_key;
    trace_vec rows; /* gp_keyavg_row */
} ka_build;

static gp_keyavg_row *row_for(const gp_analysis *a, ka_build *kb, const gp_event *e, int dev,
                              gp_group_by group)
{
    uint32_t name = (e->flags & GP_EVF_STEP) ? STEP_NAME : e->name;
    gp_str shape = dev                            ? DEVICE_ROW
                   : group == GP_GROUP_NAME_SHAPE ? gp_trace_event_shape(a->t, e)
                                                  : GP_STR_NONE;
    int64_t key = (int64_t)(((uint64_t)name << 32) | shape);
    uint32_t r = id_map_get(&kb->rows_by_key, key);
    if (r != GP_NONE)
        return TRACE_VEC_AT(&kb->rows, gp_keyavg_row, r);
    gp_keyavg_row *row = trace_vec_push(&kb->rows);
    if (!row)
        return NULL;
    row->name = name == STEP_NAME ? "ProfilerStep*" : gp_trace_str(a->t, name);
    row->shape = dev || shape == GP_STR_NONE ? "" : gp_trace_str(a->t, shape);
    row->is_device = dev;
    id_map_put(&kb->rows_by_key, key, (uint32_t)(kb->rows.n - 1));
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

static int fill_rows(const gp_analysis *a, const ka_acc *acc, ka_build *kb, gp_group_by group,
                     gp_keyavg *out)
{
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_event *e = &a->ev[i];
        int dev = analysis_is_gpu_work(e->kind);
        if (!dev && !is_function_cpu(e))
            continue;
        gp_keyavg_row *r = row_for(a, kb, e, dev, group);
        if (!r)
            return -1;
        r->count++;
        if (dev) {
            r->self_device += e->dur;
            r->device_total += e->dur;
            out->self_device_total += e->dur;
            out->has_device = 1;
            uint32_t op = a->op_of[i];
            gp_keyavg_row *opr = op == GP_NONE ? NULL : row_for(a, kb, &a->ev[op], 0, group);
            if (op != GP_NONE && !opr)
                return -1;
            if (opr)
                opr->self_device += e->dur; /* the op's self device time */
            continue;
        }
        int64_t self = e->dur - acc->child_cpu[i];
        r->cpu_total += e->dur;
        r->self_cpu += self;
        r->device_total += acc->dev_total[i];
        out->self_cpu_total += self;
    }
    return 0;
}

gp_status gp_keyavg_compute(const gp_analysis *a, gp_group_by group, gp_sort_key key,
                            gp_keyavg *out, gp_error *err)
{
    memset(out, 0, sizeof(*out));
    ka_acc acc = {0};
    ka_build kb;
    trace_vec_init(&kb.rows, sizeof(gp_keyavg_row));
    int rc = id_map_init(&kb.rows_by_key, 1024);
    if (rc == 0)
        rc = accumulate(a, &acc);
    if (rc == 0)
        rc = fill_rows(a, &acc, &kb, group, out);
    free(acc.dev_total);
    free(acc.child_cpu);
    id_map_release(&kb.rows_by_key);
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
