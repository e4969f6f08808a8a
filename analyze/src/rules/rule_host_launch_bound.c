/* GT04 host_launch_bound: device idle time that HTA classifies as host wait (the launch call of
 * the next GPU activity started after the GPU went idle) in which the launching thread was
 * issuing the step's work, as a share of step time: inside operators that launch GPU work, or
 * short ones that launch nothing (views, allocations), and between operators up to the median
 * step's time there (the Python that calls them). What a CUDA graph removes, and only that: the
 * loader wait in such gaps is GT01's, a step's time outside operators past the median step's is
 * GT14's (a pause, host code run now and then), and operators that launch nothing and take longer
 * than the median launching one are host work the GPU waits for, which a graph cannot capture
 * (reported, not priced). Real traces (an H200, PyTorch 2.11): a num_workers=0 DataLoader priced
 * at 92% with a 66% loader wait in it, a 40 ms sleep every 10th step at 83%; now 25% and 27%,
 * while a deep narrow MLP stays at 89% (88% measured when captured as a graph). Evidence: the
 * operators the GPU waited on. Anchors: HTA idle-time breakdown, XProf kernel-launch 3/15 %, nsys
 * cuda_kern_exec_sum queue time. */
#include "rules/rules_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 3, "host-wait idle share of step time (XProf kernel launch, moderate)"},
        {"crit_pct", 15, "host-wait idle share for crit (XProf kernel launch, high)"},
};
RULES_INFO(host_launch_bound, "GT04", "host launch-bound", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU | RULES_HOST_TIMED |
                   RULES_WAIT_INFLATED);

static const gp_evidence_col cols[] = {{"operator while the GPU waits", GP_UNIT_TEXT},
                                       {"doing", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"idle before launch", GP_UNIT_US},
                                       {"share of step", GP_UNIT_PCT}};

/* Time outside operators in a step beyond the median step's is not the loop issuing its ops
 * (that repeats step after step) but what sets the step apart: a pause, host code run now and
 * then (GT14's outlier steps). Each step's counts up to the median step's. */
static int64_t off_ops_capped(int64_t *per_step, size_t n)
{
    int64_t *s = malloc((n ? n : 1) * sizeof(*s)), sum = 0;
    if (!s)
        return 0;
    memcpy(s, per_step, n * sizeof(*s));
    int64_t med = rules_median(s, n);
    for (size_t i = 0; i < n; i++)
        sum += per_step[i] < med ? per_step[i] : med;
    free(s);
    return sum;
}

/* Sum device gaps of each kind inside the analysed steps; split host-wait gaps by what the
 * launching thread did in them (use[], the time outside operators capped as off_ops_capped
 * says), the operators' shares into `agg`. */
static gp_status split_idle(struct rules_ctx *c, int64_t idle[GP_IDLE_COUNT],
                            int64_t use[RULES_HOST_USES], struct rules_agg *agg, int64_t *per_step)
{
    size_t ng;
    const gp_idle_gap *g = gp_analysis_device_gaps(c->a, &ng);
    const struct rules_host_map *m = NULL;
    int64_t *off = calloc(c->n_steps ? c->n_steps : 1, sizeof(*off));
    gp_status rc = off ? rules_ctx_host_map(c, &m) : GP_ENOMEM;
    for (size_t i = 0; i < ng && rc == GP_OK; i++) {
        int64_t in = rules_ivs_overlap(&c->step_ivs, g[i].ts, g[i].end), u[RULES_HOST_USES];
        if (in <= 0 || g[i].kind >= GP_IDLE_COUNT)
            continue;
        idle[g[i].kind] += in;
        uint32_t rt = g[i].next == GP_NONE ? GP_NONE : gp_analysis_runtime_of(c->a, g[i].next);
        if (g[i].kind != GP_IDLE_HOST_WAIT || rt == GP_NONE)
            continue;
        int64_t ts = g[i].ts > c->win_ts ? g[i].ts : c->win_ts;
        int64_t end = g[i].end < c->win_end ? g[i].end : c->win_end;
        rc = rules_host_split(c, m, c->ev[rt].track, ts, end, u, agg);
        for (int k = 0; k < RULES_HOST_OFF_OPS; k++)
            use[k] += u[k];
        long s = rules_step_at(c, end - 1);
        off[s < 0 ? 0 : s] += u[RULES_HOST_OFF_OPS];
        per_step[s < 0 ? 0 : s] += u[RULES_HOST_LAUNCH] + u[RULES_HOST_OFF_OPS];
    }
    use[RULES_HOST_OFF_OPS] = off ? off_ops_capped(off, c->n_steps) : 0;
    free(off);
    return rc;
}

/* Does the host-wait idle (`per_step`: launching and between operators, each step's) reach
 * `warn` % in the quickest quarter of the steps, those the waits for a core touched least?
 * Then those waits cannot explain it away (rules_explain.c): beside a busy loop the
 * launch-bound loop's steps alternated 2.0 ms (80% idle) and 6.1 ms (a 4 ms wait between two
 * operators), while a loop that keeps its GPU busy idles only in the waited steps. */
static int holds_unwaited(const struct rules_ctx *c, const int64_t *per_step, double warn)
{
    size_t n = c->n_steps;
    int64_t *t = malloc((n ? n : 1) * sizeof(*t)), in = 0, wall = 0;
    if (!t)
        return 0;
    for (size_t i = 0; i < n; i++)
        t[i] = c->steps[i].end - c->steps[i].ts;
    int64_t quick = rules_kth(t, n, n / 4);
    for (size_t i = 0; i < n; i++)
        if (c->steps[i].end - c->steps[i].ts <= quick)
            in += per_step[i], wall += c->steps[i].end - c->steps[i].ts;
    free(t);
    return wall > 0 && 100.0 * (double)in >= warn * (double)wall;
}

/* Median launch-call duration and the share of launches that queued (positive launch delay).
 * A call that launched several activities (cudaGraphLaunch: adjacent in the launch list) is one
 * launch, its delay its first activity's. */
static void launch_stats(const struct rules_ctx *c, int64_t *median, double *queued_pct,
                         size_t *n_in)
{
    size_t nl, k = 0, q = 0;
    const gp_launch *l = gp_analysis_launches(c->a, &nl);
    int64_t *d = malloc((nl ? nl : 1) * sizeof(*d));
    for (size_t i = 0; i < nl; i++) {
        const gp_event *r = &c->ev[l[i].runtime];
        if (rules_step_at(c, r->ts) < 0 || (i && l[i].runtime == l[i - 1].runtime))
            continue;
        if (d)
            d[k] = r->dur;
        k++;
        q += l[i].launch_delay > 0;
    }
    *median = d ? rules_median(d, k) : 0;
    *queued_pct = k ? 100.0 * (double)q / (double)k : 0;
    *n_in = k;
    free(d);
}

static const char *const doing[RULES_HOST_USES] = {"loader", "launching", "host work", ""};

/* `agg` finished: its rows by time, largest first (so are work_note's). */
static gp_status evidence(struct rules_ctx *c, struct rules_out *o, const struct rules_agg *agg)
{
    rules_cols(o, 5, cols);
    for (size_t i = 0; i < agg->n && i < 5; i++) {
        const struct rules_agg_row *r = &agg->rows[i];
        GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, r->k[0])},
                                        {0, doing[r->k[1] < RULES_HOST_USES ? r->k[1] : 0]},
                                        {(double)r->count, NULL},
                                        {(double)r->ns / 1e3, NULL},
                                        {rules_pct_of_steps(c, r->ns), NULL}}));
    }
    return GP_OK;
}

/* The host work the GPU waits for, when it is worth a word (1% of step time or more): a
 * sentence for the end of the advice, its share and its largest operator; else "". */
static void work_note(const struct rules_ctx *c, const int64_t *use, const struct rules_agg *agg,
                      char *buf, size_t cap)
{
    double w = rules_pct_of_steps(c, use[RULES_HOST_WORK]);
    const char *top = NULL;
    for (size_t i = 0; i < agg->n && !top; i++)
        if (agg->rows[i].k[1] == RULES_HOST_WORK)
            top = gp_trace_str(c->t, agg->rows[i].k[0]);
    buf[0] = 0;
    if (w >= 1 && top)
        snprintf(buf, cap,
                 " The GPU also waits %.1f%% of step time for host work that launches nothing "
                 "(%s and others, on CPU tensors): a CUDA graph cannot remove that; move it to "
                 "a DataLoader worker or let it overlap the GPU's work (no host sync just before "
                 "it: "
                 "GT08).",
                 w, top);
}

/* The step makes host syncs: a CUDA graph cannot capture it; fewer, fused ops still help. */
static gp_status advise_synced(const struct rules_ctx *c, struct rules_out *o, double h,
                               double syncs, const char *note)
{
    if (c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0)
        GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) * 2));
    else
        GP_TRY(rules_knob(o, "torch.compile(model); no .item()/sync in the loop"));
    return rules_reco(o,
                      "The GPU idles %.1f%% of step time because the host launches work too "
                      "slowly, but each step waits for the device %.1f times (syncs, blocking "
                      "copies): a CUDA graph cannot capture that. Remove the syncs first, then "
                      "capture the step (torch.cuda.graphs; the trainer's --cuda-graphs); "
                      "meanwhile fewer, fused ops (torch.compile) or a larger batch.%s",
                      h, syncs, note);
}

/* CUDA graphs: the step's launches replayed as one, so the host-wait idle goes. */
static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double h, int64_t gain_step,
                        double launches, const char *note)
{
    char a[32];
    double syncs = rules_host_syncs_per_step(c);
    if (syncs >= 1)
        return advise_synced(c, o, h, syncs, note);
    GP_TRY(rules_knob_for(c, o, "--cuda-graphs",
                          "torch.cuda.graphs / torch.compile(model, mode=\"reduce-overhead\")"));
    return rules_reco(o,
                      "The GPU idles %.1f%% of step time because the host launches work too "
                      "slowly. Capture the step in a CUDA graph (torch.cuda.graphs, or "
                      "torch.compile(mode=\"reduce-overhead\"); the bundled trainer's "
                      "--cuda-graphs): its %.0f launches replay as one, saving up to the "
                      "idle while the host issues it, %s a step. Fewer, fused ops (torch.compile; "
                      "the trainer's "
                      "--fused) or a larger batch%s cut the launches too.%s",
                      h, launches, rules_fmt_ns(a, sizeof(a), gain_step),
                      c->cfg.rc.trainer && rules_count(c->cfg.rc.batch_size) > 0 ? " (--batch-size)"
                                                                                 : "",
                      note);
}

/* The host-wait idle a CUDA graph would remove in a run without the profiler, per step. The
 * profiler's host time (torch.profiler's: 2-3 us a record) stretches a host-paced step and the
 * GPU's idle with it, and a step is never shorter than the GPU's busy time plus the idle the fix
 * leaves (loader wait, host work that launches nothing, kernel wait): the share is of that
 * unprofiled step. On an H100 (bench/gpu_torch_cases.py, two runs: each fix's step timed against
 * itself captured as one CUDA graph) the profiled share said crit 15% and 37% for a step whose
 * GPU was busy 2.7 of its 2.8-3.0 ms without the profiler (its graph gained -3% and 5%), now ok
 * in both. Two bf16 MLPs' graphs gained 24-45% and 41-58%, where this says 31% and 0% (a
 * false ok), 21% and 36%: the profiler's cost is an estimate (rules_cost.c), and there the same
 * step ran 2.7-3.4 ms unprofiled and 3.2-4.5 ms profiled from one run to the next, so the
 * estimate of one trace errs by a third either way. Taking the cost at a third of itself (what
 * a graph could gain if the profiler cost little) turned the quiet step into a false crit
 * instead: the estimate is used as it is, and the gain says it is low-sure. */
struct unprofiled {
    int64_t step, busy, left; /* a step without the profiler, the GPU's busy time in it, and
                                 the idle a graph removes */
};

static struct unprofiled without_profiler(struct rules_ctx *c, const int64_t *idle, int64_t hw)
{
    int64_t n = (int64_t)c->n_steps, all = 0;
    int64_t u = rules_unprofiled_step_ns(c);
    if (n <= 0 || u <= 0)
        return (struct unprofiled){0, 0, 0};
    for (int i = 0; i < GP_IDLE_COUNT; i++)
        all += idle[i];
    int64_t busy = rules_ivs_in_steps(c, &c->busy) / n;
    int64_t left = u - busy - (all - hw) / n;
    left = left < 0 ? 0 : left < hw / n ? left : hw / n;
    return (struct unprofiled){u, busy, left};
}

static gp_status summary(struct rules_ctx *c, struct rules_out *o, const int64_t *idle,
                         const int64_t *use, size_t *n_launch, const struct unprofiled *w)
{
    char a[32], b[32], d[32], e[32];
    int64_t med, hw = use[RULES_HOST_LAUNCH] + use[RULES_HOST_OFF_OPS];
    int64_t rest = idle[GP_IDLE_HOST_WAIT] - hw - use[RULES_HOST_LOADER] - use[RULES_HOST_WORK];
    double queued;
    launch_stats(c, &med, &queued, n_launch);
    return rules_summary(
            o,
            "GPU idle while the host issues its work %.1f%% of step time (in "
            "operators %.1f%%, between them %.1f%%); of the host wait, not counted: "
            "loader wait %.1f%% (GT01), host work that launches nothing %.1f%%, "
            "time outside operators past the median step's %.1f%% (kernel wait "
            "%.1f%%, other %.1f%%); %.0f launches per step, median launch call %s, "
            "%.0f%% of launches queued; without the profiler's own cost, %s of a %s step "
            "(the GPU busy %s of it)",
            rules_pct_of_steps(c, hw), rules_pct_of_steps(c, use[RULES_HOST_LAUNCH]),
            rules_pct_of_steps(c, use[RULES_HOST_OFF_OPS]),
            rules_pct_of_steps(c, use[RULES_HOST_LOADER]),
            rules_pct_of_steps(c, use[RULES_HOST_WORK]), rules_pct_of_steps(c, rest > 0 ? rest : 0),
            rules_pct_of_steps(c, idle[GP_IDLE_KERNEL_WAIT]),
            rules_pct_of_steps(c, idle[GP_IDLE_OTHER]), rules_per_step(c, (double)*n_launch),
            rules_fmt_ns(a, sizeof(a), med), queued, rules_fmt_ns(b, sizeof(b), w->left),
            rules_fmt_ns(d, sizeof(d), w->step), rules_fmt_ns(e, sizeof(e), w->busy));
}

gp_status rules_host_launch_bound(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int64_t idle[GP_IDLE_COUNT] = {0}, use[RULES_HOST_USES] = {0};
    size_t n_launch = 0;
    char note[320];
    struct rules_agg agg = {0};
    int64_t *per_step = calloc(c->n_steps ? c->n_steps : 1, sizeof(*per_step));
    gp_status rc = per_step ? split_idle(c, idle, use, &agg, per_step) : GP_ENOMEM;
    rules_agg_finish(&agg);
    o->cause.holds_unwaited = per_step && holds_unwaited(c, per_step, p[WARN_PCT]);
    free(per_step);
    int64_t hw = use[RULES_HOST_LAUNCH] + use[RULES_HOST_OFF_OPS];
    int64_t hw_step = (int64_t)rules_per_step(c, (double)hw);
    double h = rules_pct_of_steps(c, hw);
    struct unprofiled w = without_profiler(c, idle, hw);
    double hn = w.step > 0 ? 100.0 * (double)w.left / (double)w.step : 0;
    rules_measure(o, "host_wait_share", GP_UNIT_PCT, hn, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (rc == GP_OK)
        rc = summary(c, o, idle, use, &n_launch, &w);
    if (rc == GP_OK && o->f.severity > GP_SEV_OK) {
        rc = evidence(c, o, &agg);
        if (rc == GP_OK)
            rc = rules_gain(o, hw, hw_step,
                            "if launches kept ahead of the GPU, the idle while the host issues "
                            "its work would vanish; without the profiler, only what the GPU's "
                            "busy time leaves of the step");
        o->f.gain_prof_step_ns = hw_step - w.left;
        /* Worker processes are not in the trace, nor is their rate: a loop whose 6 workers
         * delivered a batch every 4.0-4.8 ms (H100, H200) ran 3.1-4.1 ms steps while their
         * prefetched batches lasted; GT04 said 58-66% of it, its CUDA graph gained -16-12%. */
        if (!c->cfg.rc.trainer && rules_loader_iter(c, "_MultiProcessingDataLoaderIter"))
            o->f.gain_why = "batches from DataLoader workers, whose rate the trace does not show: "
                            "a shorter step may wait for them (time the loader alone)";
        work_note(c, use, &agg, note, sizeof(note));
        if (rc == GP_OK)
            rc = advise(c, o, h, w.left, rules_per_step(c, (double)n_launch), note);
    }
    rules_agg_release(&agg);
    return rc;
}
