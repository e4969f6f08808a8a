/* The per-trace view the rules read: analysed steps (warm-up dropped), their breakdown summed,
 * the run configuration from the "gprof" object, lazily built GPU interval unions (compute,
 * communication, copies) and a per-name classification cache for API and kernel names. */
#include "rules/rules_int.h"
#include "model/sort_runs.h"

#include "gp/run_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The run configuration, decoded, and what the rules derive from it (rules_int.h). */
static void read_cfg(struct rules_ctx *c)
{
    struct rules_cfg *g = &c->cfg;
    gp_run_config_read(c->t, &g->rc);
    const gp_run_config rc = g->rc;
    /* Knobs are `gprof-train run` flags only for the trainer's own traces; a program run under
     * `run -- CMD` (producer "inject") or linking libprof ("api") has its own settings. */
    g->libprof = rc.trainer || rc.producer != NULL;
    if (rc.step_wall.known && rc.step_cpu.known && rc.step_wall.v > 0) {
        g->step_wall = rc.step_wall.v;
        g->step_cpu = rc.step_cpu.v;
        g->loader_cpu = rc.loader_cpu.known ? rc.loader_cpu.v : 0;
    }
    g->train_runq = g->loader_runq = -1;
    if (rc.train_runq.known && rc.loader_runq.known && rc.loop_wall.known && rc.loop_wall.v > 0) {
        g->train_runq = rc.train_runq.v;
        g->loader_runq = rc.loader_runq.v;
        g->loop_wall = rc.loop_wall.v;
    }
    g->other_cpu = -1;
    if (rc.other_cpu.known && rc.loop_wall.known && rc.loop_wall.v > 0) {
        g->other_cpu = rc.other_cpu.v;
        g->loop_wall = rc.loop_wall.v;
    }
}

gp_status rules_ctx_init(struct rules_ctx *c, const gp_analysis *a, gp_error *err)
{
    memset(c, 0, sizeof(*c));
    c->a = a;
    c->t = gp_analysis_trace(a);
    c->ev = gp_trace_events(c->t, &c->n_ev);
    size_t n, nd;
    const gp_step *steps = gp_analysis_steps(a, &n);
    /* Warm-up: the first real step (tb_plugin and HTA see it as unrepresentative). */
    c->n_warmup = (n >= 2 && !steps[0].synthetic) ? 1 : 0;
    c->n_all_steps = n;
    c->steps = steps ? steps + c->n_warmup : NULL; /* no steps: NULL, not NULL + 0 (UBSan) */
    c->n_steps = n - c->n_warmup;
    for (size_t i = 0; i < c->n_steps; i++) {
        const gp_step *s = &c->steps[i];
        c->step_ns += s->end - s->ts;
        for (int k = 0; k < GP_BD_COUNT; k++)
            c->bd[k] += s->bd[k];
    }
    if (c->n_steps) {
        c->win_ts = c->steps[0].ts;
        c->win_end = c->steps[c->n_steps - 1].end;
    }
    gp_analysis_devices(a, &nd);
    c->has_gpu = nd > 0;
    c->trace_ts = gp_trace_get_info(c->t)->ts_min;
    read_cfg(c);
    for (size_t i = 0; i < c->n_steps; i++)
        if (rules_ivs_push(&c->step_ivs, c->steps[i].ts, c->steps[i].end) != GP_OK)
            return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    rules_ivs_merge(&c->step_ivs);
    return GP_OK;
}

void rules_ctx_fork(struct rules_ctx *dst, const struct rules_ctx *src)
{
    *dst = *src;
    memset(&dst->kernels, 0, sizeof(dst->kernels));
    memset(&dst->comm, 0, sizeof(dst->comm));
    memset(&dst->copies, 0, sizeof(dst->copies));
    memset(&dst->busy, 0, sizeof(dst->busy));
    memset(&dst->compute, 0, sizeof(dst->compute));
    dst->have_ivs = 0;
    dst->host = NULL;
    dst->name_cls = NULL;
    dst->n_name_cls = 0;
}

void rules_ctx_release_fork(struct rules_ctx *c)
{
    free(c->kernels.iv);
    free(c->comm.iv);
    free(c->copies.iv);
    free(c->busy.iv);
    free(c->compute.iv);
    if (c->host)
        rules_host_map_release(c->host);
    free(c->host);
    free(c->name_cls);
}

void rules_ctx_release(struct rules_ctx *c)
{
    rules_ctx_release_fork(c); /* the lazy caches */
    free(c->step_ivs.iv);
}

/* ---- interval unions ---- */

static int cmp_iv(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

gp_status rules_ivs_push(struct rules_ivs *v, int64_t ts, int64_t end)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        void *p = realloc(v->iv, cap * sizeof(*v->iv));
        if (!p)
            return GP_ENOMEM;
        v->iv = p;
        v->cap = cap;
    }
    v->iv[v->n][0] = ts;
    v->iv[v->n][1] = end;
    v->n++;
    return GP_OK;
}

void rules_ivs_merge(struct rules_ivs *v)
{
    if (v->n == 0)
        return;
    sort_runs(v->iv, v->n, sizeof(*v->iv), cmp_iv); /* collected a track at a time */
    size_t w = 0;
    for (size_t i = 1; i < v->n; i++) {
        if (v->iv[i][0] <= v->iv[w][1]) {
            if (v->iv[i][1] > v->iv[w][1])
                v->iv[w][1] = v->iv[i][1];
        } else {
            w++;
            v->iv[w][0] = v->iv[i][0];
            v->iv[w][1] = v->iv[i][1];
        }
    }
    v->n = w + 1;
}

static gp_status collect_gpu(struct rules_ctx *c, const gp_track *tr)
{
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        struct rules_ivs *dst = NULL;
        if (e->kind == GP_EV_KERNEL)
            dst = (e->flags & GP_EVF_COMM) ? &c->comm : &c->kernels;
        else if (e->kind == GP_EV_MEMCPY)
            dst = &c->copies;
        if (dst)
            GP_TRY(rules_ivs_push(dst, e->ts, e->ts + e->dur));
        if (dst || e->kind == GP_EV_MEMSET)
            GP_TRY(rules_ivs_push(&c->busy, e->ts, e->ts + e->dur));
        if (e->kind == GP_EV_KERNEL || e->kind == GP_EV_MEMSET)
            GP_TRY(rules_ivs_push(&c->compute, e->ts, e->ts + e->dur));
    }
    return GP_OK;
}

gp_status rules_ctx_intervals(struct rules_ctx *c)
{
    if (c->have_ivs)
        return GP_OK;
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (size_t i = 0; i < nt; i++)
        if (tr[i].is_gpu)
            GP_TRY(collect_gpu(c, &tr[i]));
    rules_ivs_merge(&c->kernels);
    rules_ivs_merge(&c->comm);
    rules_ivs_merge(&c->copies);
    rules_ivs_merge(&c->busy);
    rules_ivs_merge(&c->compute);
    c->have_ivs = 1;
    return GP_OK;
}

size_t rules_ivs_lower(const struct rules_ivs *v, int64_t ts)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->iv[mid][1] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint32_t rules_track_first_at(const struct rules_ctx *c, const gp_track *tr, int64_t ts)
{
    uint32_t lo = tr->first, hi = tr->first + tr->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->ev[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

gp_status rules_reserve(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return GP_OK;
    size_t nc = *cap ? *cap * 2 : first;
    void *nv = realloc(*v, nc * size);
    if (!nv)
        return GP_ENOMEM;
    *v = nv, *cap = nc;
    return GP_OK;
}

int64_t rules_ivs_overlap(const struct rules_ivs *v, int64_t ts, int64_t end)
{
    int64_t sum = 0;
    for (size_t i = rules_ivs_lower(v, ts); i < v->n && v->iv[i][0] < end; i++) {
        int64_t a = v->iv[i][0] > ts ? v->iv[i][0] : ts;
        int64_t b = v->iv[i][1] < end ? v->iv[i][1] : end;
        if (b > a)
            sum += b - a;
    }
    return sum;
}

int64_t rules_ivs_in_steps(const struct rules_ctx *c, const struct rules_ivs *v)
{
    int64_t sum = 0;
    for (size_t i = 0; i < c->step_ivs.n; i++)
        sum += rules_ivs_overlap(v, c->step_ivs.iv[i][0], c->step_ivs.iv[i][1]);
    return sum;
}

/* ---- aggregation ---- */

static size_t agg_home(const struct rules_agg *g, const uint32_t k[3])
{
    uint64_t h = ((uint64_t)k[0] * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)k[1] << 32 | k[2]);
    h *= 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h >> 20) & g->mask;
}

static int same_key(const struct rules_agg_row *r, const uint32_t k[3])
{
    return r->k[0] == k[0] && r->k[1] == k[1] && r->k[2] == k[2];
}

/* Double the index (or create it) and re-insert every row. */
static gp_status agg_grow(struct rules_agg *g)
{
    size_t cap = g->slots ? (g->mask + 1) * 2 : 64;
    uint32_t *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return GP_ENOMEM;
    free(g->slots);
    g->slots = slots;
    g->mask = cap - 1;
    for (size_t r = 0; r < g->n; r++) {
        size_t i = agg_home(g, g->rows[r].k);
        while (g->slots[i])
            i = (i + 1) & g->mask;
        g->slots[i] = (uint32_t)r + 1;
    }
    return GP_OK;
}

gp_status rules_agg_add(struct rules_agg *g, uint32_t k0, uint32_t k1, uint32_t k2, int64_t ns,
                        int64_t ns2, int64_t bytes)
{
    const uint32_t k[3] = {k0, k1, k2};
    if ((!g->slots || (g->n + 1) * 2 > g->mask) && agg_grow(g) != GP_OK)
        return GP_ENOMEM;
    size_t i = agg_home(g, k);
    while (g->slots[i] && !same_key(&g->rows[g->slots[i] - 1], k))
        i = (i + 1) & g->mask;
    if (g->slots[i]) {
        struct rules_agg_row *d = &g->rows[g->slots[i] - 1];
        d->count++;
        d->ns += ns;
        d->ns2 += ns2;
        d->bytes += bytes;
        d->ns_max = ns > d->ns_max ? ns : d->ns_max;
        return GP_OK;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 64;
        void *p = realloc(g->rows, cap * sizeof(*g->rows));
        if (!p)
            return GP_ENOMEM;
        g->rows = p;
        g->cap = cap;
    }
    g->rows[g->n] = (struct rules_agg_row){{k0, k1, k2}, 1, ns, ns2, ns, bytes};
    g->slots[i] = (uint32_t)++g->n;
    return GP_OK;
}

static int cmp_keys(const struct rules_agg_row *a, const struct rules_agg_row *b)
{
    for (int i = 0; i < 3; i++)
        if (a->k[i] != b->k[i])
            return a->k[i] < b->k[i] ? -1 : 1;
    return 0;
}

static int cmp_cost(const void *pa, const void *pb)
{
    const struct rules_agg_row *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return cmp_keys(a, b);
}

void rules_agg_finish(struct rules_agg *g)
{
    if (g->n > 1)
        qsort(g->rows, g->n, sizeof(*g->rows), cmp_cost);
    free(g->slots); /* row indices change: the index is gone, the rows stay */
    g->slots = NULL;
    g->mask = 0;
}

void rules_agg_release(struct rules_agg *g)
{
    free(g->slots);
    free(g->rows);
    g->rows = NULL;
    g->slots = NULL;
    g->n = g->cap = g->mask = 0;
}

/* ---- name classes ---- */

static int has(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

static int is_alloc_api(const char *s)
{
    static const char *const apis[] = {
            "cudaMalloc",   "cudaFree",        "cuMemAlloc",    "cuMemFree", "cuMemCreate",
            "cuMemRelease", "cudaMallocAsync", "cudaFreeAsync", "cuMemMap",  "cuMemUnmap"};
    for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
        if (strncmp(s, apis[i], strlen(apis[i])) == 0)
            return strncmp(s, "cudaMallocHost", 14) != 0 && strncmp(s, "cudaFreeHost", 12) != 0;
    return 0;
}

int gp_kernel_uses_tensor_cores(const char *s)
{
    static const char *const tc[] = {"h884",
                                     "s884",
                                     "h1688",
                                     "s1688",
                                     "hmma",
                                     "i8816",
                                     "16816",
                                     "c1688",
                                     "dgrad_1x1_stride_2x2",
                                     "first_layer_wgrad_kernel",
                                     "conv1x1",
                                     "conv2d_c1_k1",
                                     "direct_group",
                                     "xmma",
                                     "gmma",  /* Hopper's warpgroup wgmma and gmma kernels */
                                     "nvjet", /* cuBLAS's Hopper GEMMs (bf16 on an H200) */
                                     "tensorop",
                                     "_bf16",
                                     "_f16",
                                     "tensor16x8"};
    /* simt (CUTLASS) and ffma (cuBLAS/cuDNN xmma kernels on fp32 without TF32, e.g.
     * sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_...: seen on an H200 with TF32 off) run on the
     * CUDA cores */
    if (has(s, "simt") || has(s, "ffma"))
        return 0;
    for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++)
        if (has(s, tc[i]))
            return 1;
    return 0;
}

static int is_gemm_conv(const char *s)
{
    return has(s, "gemm") || has(s, "conv") || has(s, "cutlass") || has(s, "matmul") ||
           has(s, "wgrad") || has(s, "dgrad") || has(s, "fprop");
}

static enum rules_name_class classify(const gp_event *e, const char *s)
{
    if (e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER)
        return is_alloc_api(s) ? RULES_NC_MALLOC : RULES_NC_OTHER;
    if (e->kind == GP_EV_KERNEL) {
        if (gp_kernel_uses_tensor_cores(s))
            return RULES_NC_TC;
        return is_gemm_conv(s) ? RULES_NC_GEMM_FP : RULES_NC_OTHER;
    }
    return RULES_NC_OTHER;
}

enum rules_name_class rules_name_class(struct rules_ctx *c, const gp_event *e)
{
    if (e->name == GP_STR_NONE)
        return RULES_NC_NONE;
    if (e->name >= c->n_name_cls) {
        size_t n = (size_t)e->name + 1024;
        uint8_t *p = realloc(c->name_cls, n);
        if (!p)
            return classify(e, gp_trace_str(c->t, e->name)); /* uncached, still correct */
        memset(p + c->n_name_cls, 0, n - c->n_name_cls);
        c->name_cls = p;
        c->n_name_cls = n;
    }
    /* a name is only ever used by one kind of event in practice; key by name */
    if (!c->name_cls[e->name])
        c->name_cls[e->name] = (uint8_t)(1 + classify(e, gp_trace_str(c->t, e->name)));
    return (enum rules_name_class)(c->name_cls[e->name] - 1);
}

/* ---- small helpers ---- */

int rules_loader_iter(const struct rules_ctx *c, const char *iter)
{
    for (size_t i = 0; i < c->n_ev; i++)
        if ((c->ev[i].flags & GP_EVF_DATALOADER) && strstr(gp_trace_str(c->t, c->ev[i].name), iter))
            return 1;
    return 0;
}

long rules_step_at(const struct rules_ctx *c, int64_t ts)
{
    size_t lo = 0, hi = c->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->steps[mid].end <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < c->n_steps && c->steps[lo].ts <= ts) ? (long)lo : -1;
}

const gp_mem_point *rules_mem_at(const gp_mem_series *s, int64_t ts)
{
    size_t lo = 0, hi = s->n_points;
    if (s->n_points == 0)
        return NULL;
    while (lo < hi) { /* first point after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (s->points[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return &s->points[lo ? lo - 1 : 0];
}

int64_t rules_device_mem(const struct rules_ctx *c, int id)
{
    size_t nd;
    const gp_device_props *d = gp_trace_devices(c->t, &nd);
    if (id >= 0 && (size_t)id < nd && d[id].total_global_mem > 0)
        return d[id].total_global_mem;
    return c->cfg.rc.device_memory.v;
}

double rules_host_syncs_per_step(const struct rules_ctx *c)
{
    size_t n, k = 0;
    const gp_sync *s = gp_analysis_syncs(c->a, &n);
    for (size_t i = 0; i < n; i++)
        k += !s[i].gpu_side && s[i].kind != GP_SYNC_STREAM_WAIT && rules_step_at(c, s[i].ts) >= 0;
    return rules_per_step(c, (double)k);
}

int rules_compute_major(const struct rules_ctx *c)
{
    size_t n;
    int major = 0;
    const gp_device_props *d = gp_trace_devices(c->t, &n);
    for (size_t i = 0; i < n; i++)
        major = d[i].compute_major > major ? d[i].compute_major : major;
    return major;
}

gp_status rules_summary_no_tensor_cores(struct rules_out *o, int major)
{
    return rules_summary(o,
                         major ? "compute capability %d has no Tensor Cores: not applicable"
                               : "compute capability unknown (no deviceProperties): not "
                                 "applicable",
                         major);
}

gp_status rules_knob_for(const struct rules_ctx *c, struct rules_out *o, const char *trainer,
                         const char *torch)
{
    return rules_knob(o, "%s", c->cfg.rc.trainer ? trainer : torch);
}

const char *rules_no_device_mem_why(const struct rules_ctx *c)
{
    size_t n;
    gp_analysis_memory(c->a, &n);
    if (n)
        return "the [memory] events are host allocations only, none on a GPU";
    if (!c->has_gpu)
        return "the trace has no GPU activity";
    return c->cfg.libprof ? "no device memory records (libprof takes them from CUPTI: see "
                            "\"gpu_status\" in the trace's \"gprof\" header)"
                          : "no [memory] events (profile with profile_memory=True)";
}

long rules_step_of(const struct rules_ctx *c, uint32_t i)
{
    int s = gp_analysis_step_of(c->a, i);
    return s >= (int)c->n_warmup ? (long)(s - (int)c->n_warmup) : -1;
}

gp_str rules_op_key(const struct rules_ctx *c, uint32_t op)
{
    if (op == GP_NONE || op >= c->n_ev || (c->ev[op].flags & GP_EVF_STEP))
        return GP_STR_NONE;
    return c->ev[op].name;
}

const char *rules_ev_name(const struct rules_ctx *c, uint32_t i)
{
    return i == GP_NONE || i >= c->n_ev ? "" : gp_trace_str(c->t, c->ev[i].name);
}

double rules_per_step(const struct rules_ctx *c, double total)
{
    return c->n_steps ? total / (double)c->n_steps : 0.0;
}

double rules_pct_of_steps(const struct rules_ctx *c, int64_t ns)
{
    return c->step_ns > 0 ? 100.0 * (double)ns / (double)c->step_ns : 0.0;
}

static void swap_i64(int64_t *v, ptrdiff_t a, ptrdiff_t b)
{
    int64_t t = v[a];
    v[a] = v[b];
    v[b] = t;
}

/* Move the k-th smallest of v[0..n) to v[k], with no larger value before it and no smaller one
 * after (Hoare's selection with median-of-three pivots): O(n) on average, where a full sort of
 * every launch's duration was diagnose's largest cost after reading the trace. */
static void select_kth(int64_t *v, ptrdiff_t n, ptrdiff_t k)
{
    ptrdiff_t lo = 0, hi = n - 1;
    while (lo < hi) {
        ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
        if (v[mid] < v[lo])
            swap_i64(v, mid, lo);
        if (v[hi] < v[lo])
            swap_i64(v, hi, lo);
        if (v[hi] < v[mid])
            swap_i64(v, hi, mid);
        int64_t p = v[mid];
        while (i <= j) {
            while (v[i] < p)
                i++;
            while (v[j] > p)
                j--;
            if (i <= j)
                swap_i64(v, i++, j--);
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

int64_t rules_kth(int64_t *v, size_t n, size_t k)
{
    if (n == 0)
        return 0;
    k = k < n ? k : n - 1;
    select_kth(v, (ptrdiff_t)n, (ptrdiff_t)k);
    return v[k];
}

int64_t rules_median(int64_t *v, size_t n)
{
    if (n == 0)
        return 0;
    select_kth(v, (ptrdiff_t)n, (ptrdiff_t)(n / 2));
    int64_t upper = v[n / 2];
    if (n % 2)
        return upper;
    int64_t lower = v[0]; /* the largest of the lower half */
    for (size_t i = 1; i < n / 2; i++)
        lower = v[i] > lower ? v[i] : lower;
    return (lower + upper) / 2;
}
