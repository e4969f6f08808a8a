/* gp_analysis_run: links (analysis_link.c), steps aligned to the device (analysis_steps.c), the
 * step-time breakdown (analysis_breakdown.c), then the GPU timeline and the lists
 * (gpu_timeline.c, analysis_lists.c) beside it; and the accessors. Independent passes run on two
 * threads through trace_par2 (reader/trace_par.c). */
#include "model/analysis_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* After the steps: the breakdown (writes the steps' bd) on one thread, the GPU timeline and the
 * lists (write their own vectors and the steps' memory totals) on the other. */
typedef struct pass_job {
    gp_analysis *a;
    gp_status rc;
} pass_job;

static void pass_breakdown(void *arg)
{
    pass_job *j = arg;
    j->rc = analysis_breakdown(j->a);
    if (j->rc == GP_OK)
        j->rc = analysis_step_stats(j->a);
}

static void pass_gpu_lists(void *arg)
{
    pass_job *j = arg;
    j->rc = analysis_gpu(j->a);
    if (j->rc == GP_OK)
        j->rc = analysis_lists(j->a);
}

/* @return GP_OK or GP_ENOMEM. */
static gp_status finish_passes(gp_analysis *a)
{
    pass_job bd = {a, GP_OK}, gpu = {a, GP_OK};
    trace_par2(a->threads, pass_breakdown, &bd, pass_gpu_lists, &gpu);
    return bd.rc != GP_OK ? bd.rc : gpu.rc;
}

static void init_vecs(gp_analysis *a)
{
    trace_vec_init(&a->steps, sizeof(gp_step));
    trace_vec_init(&a->devices, sizeof(gp_device_stats));
    trace_vec_init(&a->dev_gaps, sizeof(gp_idle_gap));
    trace_vec_init(&a->streams, sizeof(gp_stream_stats));
    trace_vec_init(&a->stream_gaps, sizeof(gp_idle_gap));
    trace_vec_init(&a->mem_series, sizeof(gp_mem_series));
    trace_vec_init(&a->mem_points, sizeof(gp_mem_point));
    trace_vec_init(&a->kernels, sizeof(gp_kernel_stat));
    trace_vec_init(&a->memcpys, sizeof(gp_memcpy));
    trace_vec_init(&a->syncs, sizeof(gp_sync));
    trace_vec_init(&a->launches, sizeof(gp_launch));
}

static gp_status alloc_links(gp_analysis *a)
{
    size_t n = a->n ? a->n : 1;
    a->link_of = malloc(n * sizeof(uint32_t));
    a->op_of = malloc(n * sizeof(uint32_t));
    if (!a->link_of || !a->op_of)
        return GP_ENOMEM;
    memset(a->link_of, 0xff, n * sizeof(uint32_t));
    memset(a->op_of, 0xff, n * sizeof(uint32_t));
    return GP_OK;
}

gp_status gp_analysis_run(const gp_trace *t, const gp_analysis_opts *opts, gp_analysis **out,
                          gp_error *err)
{
    *out = NULL;
    gp_analysis *a = calloc(1, sizeof(*a));
    if (!a)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    init_vecs(a);
    pthread_mutex_init(&a->gaps_mu, NULL);
    pthread_mutex_init(&a->launches_mu, NULL);
    a->t = t;
    a->ev = gp_trace_events(t, &a->n);
    a->kernel_wait_ns = opts && opts->kernel_wait_ns > 0 ? opts->kernel_wait_ns : 30000;
    a->threads = trace_threads(opts ? opts->threads : 0);
    gp_status rc = alloc_links(a);
    if (rc == GP_OK)
        rc = analysis_link_all(a);
    if (rc == GP_OK)
        rc = analysis_steps_from_launches(a);
    if (rc == GP_OK) /* once the steps are final */
        rc = analysis_steps_steal(a);
    if (rc == GP_OK) {
        analysis_align_steps(a);
        rc = finish_passes(a);
    }
    if (rc != GP_OK) { /* GP_EINVAL: id_map_put's key outside its range, a bug */
        gp_analysis_free(a);
        return rc == GP_EINVAL
                       ? gp_error_set(err, GP_EINVAL, gp_trace_get_info(t)->path,
                                      "internal error: an id outside the range its map was sized "
                                      "for (please report it, with the trace)")
                       : gp_error_set(err, GP_ENOMEM, gp_trace_get_info(t)->path, "out of memory");
    }
    *out = a;
    return GP_OK;
}

void gp_analysis_free(gp_analysis *a)
{
    if (!a)
        return;
    free(a->link_of);
    free(a->op_of);
    pthread_mutex_destroy(&a->gaps_mu);
    pthread_mutex_destroy(&a->launches_mu);
    trace_vec *vecs[] = {&a->steps,       &a->devices,    &a->dev_gaps,   &a->streams,
                         &a->stream_gaps, &a->mem_series, &a->mem_points, &a->kernels,
                         &a->memcpys,     &a->syncs,      &a->launches};
    for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++)
        trace_vec_release(vecs[i]);
    free(a);
}

const gp_trace *gp_analysis_trace(const gp_analysis *a)
{
    return a->t;
}

int analysis_threads_of(const gp_analysis *a)
{
    return a->threads;
}

uint32_t gp_analysis_runtime_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_runtime(a, ev) : GP_NONE;
}

uint32_t gp_analysis_op_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? a->op_of[ev] : GP_NONE;
}

uint32_t gp_analysis_parent_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_parent(a, ev) : GP_NONE;
}

int gp_analysis_step_of(const gp_analysis *a, uint32_t ev)
{
    return ev < a->n ? analysis_step_of(a, ev) : -1;
}

const gp_step *gp_analysis_steps(const gp_analysis *a, size_t *n)
{
    *n = a->steps.n;
    return (const gp_step *)a->steps.data;
}

const gp_step_stats *gp_analysis_step_stats(const gp_analysis *a)
{
    return &a->stats;
}

const char *gp_bd_cat_name(gp_bd_cat c)
{
    static const char *const names[GP_BD_COUNT] = {"Kernel",        "Memcpy",  "Memset",
                                                   "Communication", "Runtime", "DataLoader",
                                                   "CPU Exec",      "Other"};
    return (unsigned)c < GP_BD_COUNT ? names[c] : "Other";
}
