/* The profiler's own time in a trace's analysed steps, and a finding's gain restated for a run
 * without the profiler. A gain computed in profiled time can promise more than the unprofiled
 * step holds (20.4 ms saved of a step that takes 11.8 ms without the profiler): the profiler's
 * cost is measured here from the trace and taken out, and the result says how sure it is. */
#include "rules/rules_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP_PERCENTILE 10 /* of the gaps between records: one record's cost, on the high side */
#define MIN_GAPS       20 /* fewer gaps estimate nothing */
/* A gap bounds a record's cost only where the program does nothing between two records. Where
 * the short gaps are longer than this, the program works in them (a sparse trace), and a record
 * is taken to cost this much: the per-op overhead PyTorch's documentation gives for its profiler
 * with CUDA events, its costliest mode (rules_anchors.md §7). */
#define GAP_COST_MAX_NS 4000
/* The gaps alone put torch.profiler's cost at 0.35-0.6x what it is (issue 24 §2: about 3x low on
 * a quiet machine): a record's work is spread over the op's own time too, not only the gap after
 * it. Measured on this project's 2-core VM (torch 2.15 on the CPU, one thread, the thread's CPU
 * time per step with minus without the profiler over interleaved windows, bench/
 * torch_profiler_cost.py on an LSTMCell loop and an MLP with Adam, and make_verdict_traces.py's
 * runs): a record costs about 2.5x the gaps' 10th percentile (1.7-3.0x in 8 of 9 runs of the
 * default options, 6.5x in one), an op with record_shapes 3x (1.9-4.5x over 6 runs); with_stack
 * costs more per record, but its gaps grow as much (1.5-3.7x over 5 runs); a memory record
 * (profile_memory) costs about the gap (0.5-1.6x in 3 of 4 runs). CUDA runtime and driver calls
 * (CUPTI's activity records, buffered) were not measured here: they keep the gaps' estimate. In
 * absolute terms a CPU op cost 0.8-2.7 us there: a ratio to the trace's own gaps carries over to a
 * faster machine, where an absolute cost would not (a trace of 1320 records in a 1.7 ms step). */
#define TORCH_RECORD_X 2.5
#define TORCH_SHAPES_X 3.0
#define TORCH_GAP_X    1.0 /* memory records, CUDA runtime and driver calls */
/* libprof reads the stepping thread's CPU time and /proc/thread-self/schedstat at each step
 * boundary (a step's gprof_thread_cpu_ns and gprof_runq_ns args): two system calls inside the
 * step, beyond the step's record (a range, at record_cost_ns). bench/prof/bench_prof_step.c on
 * this project's 2-core VM (the thread's CPU time, median of 9 rounds of 20,000 boundaries, at
 * load 9-10, in a session of its own at SCHED_FIFO): a boundary cost 1.9-2.5 us more than a
 * range (median 2.1 us over 8 runs), of which the scheduler read alone 1.7-2.3 us. */
#define STEP_SCHED_NS 2100
/* What CUPTI's tracing adds, inside the steps, to each CUDA runtime or driver call it records in
 * a libprof trace (its callback and activity record; CUPTI's "overhead" records do not hold it).
 * On an NVIDIA H200 (CUPTI 13.0, driver 580, 16-core VM, 2026-11-26), the bundled trainer run
 * with and without the profiler, alternated: the traces' mean step against the unprofiled
 * training time a step, medians of 3-4 runs each: the mlp at batch 64 383 against 350 us (about
 * 65 runtime and driver records a step: 0.5 us a call), at batch 16 258 against 200 us (42
 * records: 1.4 us), the cnn at batch 16 1.0 ms against 600 us (97 records: 4.1 us); the median
 * call, 1.4 us. Identical runs there differed by up to 40%, so this is a rough figure; the
 * records' measured cost and CUPTI's overhead records alone had said 9-17 us a step. (The
 * training time grew more, 83-470 us a step: some of the cost falls between the steps.) */
#define CUPTI_API_NS 1400

int rules_host_record(const gp_event *e)
{
    if (e->flags & GP_EVF_GPU)
        return 0;
    switch (e->kind) {
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION:
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
    case GP_EV_PYTHON:
    case GP_EV_MEMORY:
        return 1;
    default:
        return 0;
    }
}

/* Kinds of record whose cost differs (TORCH_*_X). */
enum rec_kind { REC_GAP, REC_SHAPES, REC_OTHER, REC_KINDS };

static enum rec_kind rec_kind(const struct rules_ctx *c, const gp_event *e)
{
    if (e->kind == GP_EV_MEMORY || e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER)
        return REC_GAP;
    if (e->kind == GP_EV_CPU_OP && gp_trace_event_shape(c->t, e) != GP_STR_NONE)
        return REC_SHAPES;
    return REC_OTHER;
}

struct cost_scan {
    size_t records, by_kind[REC_KINDS], api_calls;
    int64_t overhead_ns;
    int64_t *gaps;
    size_t n_gaps, cap_gaps;
};

static gp_status push_gap(struct cost_scan *s, int64_t gap)
{
    if (s->n_gaps == s->cap_gaps) {
        size_t cap = s->cap_gaps ? 2 * s->cap_gaps : 1024;
        int64_t *g = realloc(s->gaps, cap * sizeof(*g));
        if (!g)
            return GP_ENOMEM;
        s->gaps = g, s->cap_gaps = cap;
    }
    s->gaps[s->n_gaps++] = gap;
    return GP_OK;
}

/* One host track: its records in the steps, and the gap before each range that starts after
 * the previous range on the thread ended, both in the same step (ts order, parents first). */
static gp_status scan_track(const struct rules_ctx *c, const gp_track *tr, struct cost_scan *s)
{
    const gp_event *prev = NULL;
    long prev_step = -1;
    for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
        const gp_event *e = &c->ev[i];
        long step = rules_step_at(c, e->ts);
        if (!rules_host_record(e) || step < 0)
            continue;
        s->records++;
        s->by_kind[rec_kind(c, e)]++;
        s->api_calls += e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER;
        if (e->ph != 'X' || e->dur <= 0)
            continue;
        if (prev && prev_step == step && e->ts >= prev->ts + prev->dur)
            GP_TRY(push_gap(s, e->ts - (prev->ts + prev->dur)));
        prev = e, prev_step = step;
    }
    return GP_OK;
}

static double step_cv(const struct rules_ctx *c)
{
    if (c->n_steps < 2)
        return NAN;
    double sum = 0, sum2 = 0;
    for (size_t i = 0; i < c->n_steps; i++)
        sum += (double)(c->steps[i].end - c->steps[i].ts);
    double mean = sum / (double)c->n_steps;
    for (size_t i = 0; i < c->n_steps; i++) {
        double d = (double)(c->steps[i].end - c->steps[i].ts) - mean;
        sum2 += d * d;
    }
    return mean > 0 ? sqrt(sum2 / (double)(c->n_steps - 1)) / mean : NAN;
}

/* A PyTorch trace's records at torch.profiler's measured cost, a multiple of the gaps' estimate
 * (at most GAP_COST_MAX_NS, as the gaps' estimate): their total. */
static int64_t torch_cost(const struct cost_scan *s, int64_t gap)
{
    static const double x[REC_KINDS] = {TORCH_GAP_X, TORCH_SHAPES_X, TORCH_RECORD_X};
    int64_t sum = 0;
    for (int k = 0; k < REC_KINDS; k++) {
        double ns = x[k] * (double)gap;
        sum += (int64_t)s->by_kind[k] * (int64_t)(ns < GAP_COST_MAX_NS ? ns : GAP_COST_MAX_NS);
    }
    return sum;
}

/* The scheduler reads of the analysed steps that carry their figures, per step. */
static int64_t step_reads_ns(const struct rules_ctx *c)
{
    int64_t n = 0;
    for (size_t i = 0; i < c->n_steps; i++)
        n += c->steps[i].cpu_ns >= 0 || c->steps[i].runq_ns >= 0;
    return n * STEP_SCHED_NS / (int64_t)c->n_steps;
}

gp_status rules_profiler_cost(const struct rules_ctx *c, gp_profiler_cost *out)
{
    struct cost_scan s = {0};
    size_t n_tracks;
    const gp_track *tr = gp_trace_tracks(c->t, &n_tracks);
    *out = (gp_profiler_cost){.step_cv = step_cv(c)};
    if (c->n_steps == 0)
        return GP_OK;
    gp_status rc = GP_OK;
    for (size_t k = 0; k < n_tracks && rc == GP_OK; k++)
        if (!tr[k].is_gpu)
            rc = scan_track(c, &tr[k], &s);
    for (size_t i = 0; i < c->n_ev; i++)
        if (c->ev[i].kind == GP_EV_OVERHEAD)
            s.overhead_ns +=
                    rules_ivs_overlap(&c->step_ivs, c->ev[i].ts, c->ev[i].ts + c->ev[i].dur);
    int64_t gap = 0, records_ns = 0;
    int have_gap = rc == GP_OK && s.n_gaps >= MIN_GAPS;
    if (have_gap) {
        gap = rules_kth(s.gaps, s.n_gaps, s.n_gaps * GAP_PERCENTILE / 100);
        gap = gap < GAP_COST_MAX_NS ? gap : GAP_COST_MAX_NS;
    }
    if (rc == GP_OK && c->cfg.rc.record_cost_ns.v > 0) {
        out->source = GP_COST_MEASURED;
        records_ns = (int64_t)s.records * c->cfg.rc.record_cost_ns.v;
    } else if (have_gap && !c->cfg.libprof) {
        out->source = GP_COST_TORCH;
        records_ns = torch_cost(&s, gap);
    } else if (have_gap) {
        out->source = GP_COST_GAPS;
        records_ns = (int64_t)s.records * gap;
    }
    free(s.gaps);
    int64_t n = (int64_t)c->n_steps;
    out->records_per_step = (double)s.records / (double)n;
    /* the mean over the kinds, and the total from it: records x cost + overhead, as printed */
    out->record_cost_ns = s.records ? records_ns / (int64_t)s.records : 0;
    out->overhead_ns = s.overhead_ns / n;
    out->step_reads_ns = step_reads_ns(c);
    out->cupti_api_ns = c->cfg.libprof ? (int64_t)s.api_calls * CUPTI_API_NS / n : 0;
    out->per_step_ns = ((int64_t)s.records * out->record_cost_ns + s.overhead_ns) / n +
                       out->step_reads_ns + out->cupti_api_ns;
    return rc;
}

/* ---- a gain without the profiler ---- */

const char *gp_sureness_name(gp_sureness s)
{
    return s == GP_SURE_HIGH ? "high" : s == GP_SURE_MEDIUM ? "medium" : "low";
}

static double clamp_pct(double v)
{
    return v < 0 ? 0 : v > 100 ? 100 : v;
}

/* What makes a restated gain unsure: few steps, a large profiler cost, noisy steps (low); fewer
 * than 10 steps, a cost or range that is not small, some noise, a cost not known (medium). */
static int low_why(size_t n, double cost_pct, double cv, char *why, size_t cap)
{
    if (n < 3)
        return snprintf(why, cap, "only %zu step%s analysed", n, n == 1 ? "" : "s"), 1;
    if (cost_pct >= 25)
        return snprintf(why, cap, "the profiler's own cost is %.0f%% of the step", cost_pct), 1;
    if (cv >= 30)
        return snprintf(why, cap, "step times vary by %.0f%%", cv), 1;
    return 0;
}

static int medium_why(const gp_profiler_cost *k, size_t n, double cost_pct, double cv, double width,
                      char *why, size_t cap)
{
    if (n < 10)
        return snprintf(why, cap, "only %zu steps analysed; 10 make it firm", n), 1;
    if (cost_pct >= 5 || width >= 10)
        return snprintf(why, cap, "the profiler's own cost is %.1f%% of the step", cost_pct), 1;
    if (cv >= 10)
        return snprintf(why, cap, "step times vary by %.0f%%", cv), 1;
    if (k->source == GP_COST_NONE && k->records_per_step > 0)
        return snprintf(why, cap, "the cost of the profiler's records is not known"), 1;
    return 0;
}

static void judge(const gp_findings *fs, double cost_pct, gp_unprofiled_gain *g)
{
    const gp_profiler_cost *k = &fs->cost;
    double cv = isnan(k->step_cv) ? 0 : 100 * k->step_cv, width = g->high_pct - g->low_pct;
    size_t n = fs->n_analysed;
    if (low_why(n, cost_pct, cv, g->why, sizeof(g->why)))
        g->sure = GP_SURE_LOW;
    else if (medium_why(k, n, cost_pct, cv, width, g->why, sizeof(g->why)))
        g->sure = GP_SURE_MEDIUM;
    else {
        g->sure = GP_SURE_HIGH;
        snprintf(g->why, sizeof(g->why),
                 "%zu steps, step times within %.0f%%, the profiler's own cost %.1f%% of the step",
                 n, cv, cost_pct);
    }
}

/* Step s without the profiler: s less the profiler's cost, but no shorter than the GPU's work in
 * it, since the profiler's host time shortens a step only where the host sets its pace. On an
 * H200 (bench/gpu_torch_cases.py) an fp32 MLP, GPU-bound, took 15.3 ms a step with torch.profiler
 * and without it, where s less the cost said 12.6 ms; a bf16 MLP 5.0 and 4.7 ms, said 3.5 ms. */
int64_t rules_unprofiled(int64_t step, int64_t cost, int64_t gpu_busy)
{
    int64_t rest = step - cost, gpu = gpu_busy < step ? gpu_busy : step;
    return rest > gpu ? rest : gpu;
}

static int64_t unprofiled_step(const gp_findings *fs, int64_t s)
{
    return rules_unprofiled(s, fs->cost.per_step_ns, fs->gpu_busy_step_ns);
}

/* The step a point gain is restated against: the median, or the mean where the median is not
 * longer than the profiler's cost. */
static int64_t point_step(int64_t median, int64_t mean, int64_t cost)
{
    return median > cost ? median : mean;
}

int64_t gp_findings_unprofiled_step_ns(const gp_findings *fs)
{
    return fs->mean_step_ns > 0 ? unprofiled_step(fs, fs->mean_step_ns) : 0;
}

/* A rule that knows the profiler's part of its gain: that gain net of it, as a share of the
 * median step without the profiler (the gain is per-step work; a few steps stalled by other
 * processes stretch the mean, not the work: an LSTMCell loop at load 17 with 2 of 7 steps
 * stalled to twice the others read 49% of the mean step where its fix gained 74%). */
void rules_unprofiled_point(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *out)
{
    int64_t g = f->gain_step_ns, o = fs->cost.per_step_ns;
    int64_t s = point_step(fs->median_step_ns, fs->mean_step_ns, o);
    int64_t net = g > f->gain_prof_step_ns ? g - f->gain_prof_step_ns : 0;
    out->step_ns = unprofiled_step(fs, s);
    out->low_pct = out->high_pct = clamp_pct(100.0 * (double)net / (double)out->step_ns);
}

/* A rule's own doubt about its pricing (gp_finding.gain_why) bounds the gain at medium and
 * leads the why. */
static void rule_doubt(const gp_finding *f, gp_unprofiled_gain *g)
{
    if (!f->gain_why)
        return;
    char why[sizeof(g->why)];
    if (g->sure == GP_SURE_HIGH)
        snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 1, f->gain_why);
    else
        snprintf(why, sizeof(why), "%.150s; %.70s", f->gain_why, g->why);
    memcpy(g->why, why, sizeof(why));
    g->sure = g->sure < GP_SURE_MEDIUM ? g->sure : GP_SURE_MEDIUM;
}

int gp_finding_unprofiled_gain(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *out)
{
    int64_t s = fs->mean_step_ns, g = f->gain_step_ns, o = fs->cost.per_step_ns;
    if (g < 0 || s <= 0)
        return 0;
    if (o >= s &&
        fs->gpu_busy_step_ns <= 0) { /* the estimate holds the whole step: nothing can be said */
        *out = (gp_unprofiled_gain){.step_ns = 0, .low_pct = 0, .high_pct = 100};
    } else if (f->gain_prof_step_ns >= 0) {
        rules_unprofiled_point(fs, f, out);
    } else {
        int64_t u = unprofiled_step(fs, s);
        double rest = (double)u;
        out->step_ns = u;
        out->low_pct = clamp_pct(100.0 * (double)(g > s - u ? g - (s - u) : 0) / rest);
        out->high_pct = clamp_pct(100.0 * (double)(g < u ? g : u) / rest);
    }
    judge(fs, 100.0 * (double)o / (double)s, out);
    rule_doubt(f, out);
    rules_ledger_sureness(fs, f, out);
    return 1;
}

const gp_profiler_cost *gp_findings_profiler_cost(const gp_findings *f)
{
    return &f->cost;
}
