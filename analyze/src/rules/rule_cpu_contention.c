/* GT19 cpu_contention: the step's threads wait for a CPU core: more runnable threads than cores
 * (intra-op or OpenBLAS threads x processes, loader workers) or other processes keeping the cores
 * busy. Where the trainer recorded its CPU accounting (the training thread's CPU time in its
 * steps, its loader threads', other processes' from /proc/stat), the metric is measured: the
 * share of step time the training thread could run but had no core; where the steps carry the
 * stepping thread's run-queue time (libprof's step args, any libprof program), it is measured
 * over the analysed steps themselves, naming the steps that waited. Otherwise it is read from
 * timing alone: leaf operators that took at least a scheduler slice (min_stall_ms) and
 * stall_ratio times longer than their own fastest call of the same name, shape and place in the
 * step (rules_stalls.c), less what first-touch page faults of their tensors could cost
 * (rules_fault_allow.c), and gaps between the ranges a slice longer than the same gap's fastest
 * (rules_gaps.c), in several steps: the machine, not one pause (GT14's). Under load the
 * stalls are few and long (two busy loops beside a 1.3 ms step: 7 calls of 897 stalled, each by
 * a slice of 10 ms and more, 10% of step time), so their count is no measure, their time is.
 * No anchor has this rule (issue 24 §2): thresholds ours. */
#include "gp/trace_schema.h"
#include "rules/rules_int.h"

#include <string.h>

enum {
    WARN_PCT,
    CRIT_PCT,
    MIN_STALL_MS,
    STALL_RATIO,
    MIN_STALL_STEPS,
    SIZE_CALL_US,
    SIZE_ELEM_NS,
    MIN_OVER_SIZE,
    FAULT_US_PAGE,
    MAX_GAP_WAIT_MS
};
static const gp_rule_param params[] = {
        {"warn_pct", 10, "step time waiting for a core, share (ours)"},
        {"crit_pct", 30, "share for crit (ours)"},
        {"min_stall_ms", 1,
         "without CPU accounting: a call this much longer than its fastest waited for a core "
         "(a scheduler slice on a busy core; ours)"},
        {"stall_ratio", 2,
         "...and at least this many times its fastest call (ours: at 1.5 a quiet CNN's "
         "convolution_backward, 2.4-7.0 ms, read as 12.9% stalled)"},
        {"min_stall_steps", 3,
         "...in at least this many steps: contention lasts, a single pause is GT14's (ours)"},
        {"size_call_us", 200,
         "without CPU accounting, on a CPU-only trace: an elementwise or reduction op should "
         "take at most this per call... (ours: 20x a small one's on a quiet core)"},
        {"size_elem_ns", 20,
         "...plus this per element of its inputs (ours: 3x the slowest seen at rest on a 2-core "
         "VM, max_pool2d at 7 ns)"},
        {"min_over_size_ops", 2,
         "...crit where even the fastest call of this many such ops is over: every call waited "
         "(ours)"},
        {"fault_us_per_page", 3,
         "without CPU accounting, on a CPU-only trace with shapes: a call's time past its "
         "fastest is first-touch page faults up to this per 4 KiB page of its inputs and "
         "one output (their broadcast envelope, or a convolution's) (measured: 2.6-3.1 us a first "
         "touch on a 2-core VM, 0.01 "
         "us a second; a quiet 1-thread CNN faulted 0-5301 pages a step, never waiting for "
         "a core)"},
        {"max_gap_wait_ms", 20,
         "without CPU accounting, on a CPU-only trace: a gap between operators past its fastest "
         "by min_stall_ms up to this waited for a core; longer, it is the program's own pause "
         "(ours: the longest such wait beside 1-3 busy loops was 8.9 ms)"},
};
RULES_INFO(cpu_contention, "GT19", "CPU contention (threads waiting for a core)", 0,
           RULES_NEEDS_STEPS | RULES_READS_CPU | RULES_HOST_TIMED);

static const gp_evidence_col cols[] = {{"operator", GP_UNIT_TEXT},  {"shape", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},    {"stalled", GP_UNIT_COUNT},
                                       {"fastest", GP_UNIT_US},     {"slowest", GP_UNIT_US},
                                       {"time stalled", GP_UNIT_US}};

/* The waits between operators as one row, where their time ranks among the calls'. */
static gp_status gap_row(struct rules_out *o, const struct rules_stalls *s)
{
    return rules_row(o, (gp_cell[]){{0, "(between operators)"},
                                    {0, ""},
                                    {(double)s->gaps, NULL},
                                    {(double)s->gap_stalled, NULL},
                                    {(double)s->gap_fastest / 1e3, NULL},
                                    {(double)s->gap_worst / 1e3, NULL},
                                    {(double)s->gap_ns / 1e3, NULL}});
}

static gp_status evidence(const struct rules_ctx *c, struct rules_out *o,
                          const struct rules_stalls *s)
{
    rules_cols(o, 7, cols);
    int gap_due = s->gap_stalled > 0;
    for (size_t i = 0; i < s->n && i < RULES_MAX_ROWS; i++) {
        const struct rules_stall_row *r = &s->rows[i];
        if (gap_due && s->gap_ns >= r->stall_ns) {
            GP_TRY(gap_row(o, s));
            gap_due = 0;
        }
        const char *shape = r->shape != GP_STR_NONE ? gp_trace_str(c->t, r->shape) : "";
        GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, r->name)},
                                        {0, shape},
                                        {(double)r->calls, NULL},
                                        {(double)r->stalled, NULL},
                                        {(double)r->fastest / 1e3, NULL},
                                        {(double)r->worst / 1e3, NULL},
                                        {(double)r->stall_ns / 1e3, NULL}}));
    }
    return gap_due ? gap_row(o, s) : GP_OK;
}

/* "this run: 3 compute threads (training, 2 loader, OpenBLAS 1) on 2 cores; other processes
 * kept 1.9 cores busy meanwhile; ..." */
static const char *machine_line(const struct rules_ctx *c, const struct rules_acct *a,
                                struct rules_out *o)
{
    const struct rules_cfg *g = &c->cfg;
    long w = rules_count(g->rc.workers), b = rules_count(g->rc.blas_threads);
    long n_cores = rules_count(g->rc.cpu_count);
    const char *cores = n_cores > 0 ? rules_strf(o, " on %ld cores", n_cores) : "";
    const char *other = a->other_cores >= 0
                                ? rules_strf(o, "; other processes kept %.1f cores busy meanwhile",
                                             a->other_cores)
                                : "";
    const char *loader = a->loader_run >= 0 ? rules_strf(o,
                                                         "; the loader threads ran %.0f%% of "
                                                         "the time they could",
                                                         100 * a->loader_run)
                                            : "";
    return rules_strf(o, "this run: %ld compute thread%s (training, %ld loader%s)%s%s%s",
                      a->threads, a->threads == 1 ? "" : "s", w,
                      b > 0 ? rules_strf(o, ", OpenBLAS %ld", b) : "", cores, other, loader);
}

/* The trainer: fewer loader threads where they outnumber the free cores, OpenBLAS to one
 * thread, and the other load named with what it took. */
static gp_status advise_trainer(const struct rules_ctx *c, const struct rules_acct *a, double share,
                                struct rules_out *o)
{
    const struct rules_cfg *g = &c->cfg;
    /* our own threads beyond the cores: the loader threads GT01 would leave (all cores but one) */
    long w = rules_count(g->rc.workers), cores = rules_count(g->rc.cpu_count);
    long fit = cores > 1 ? cores - 1 : 1;
    int cut_workers = w > fit && cores > 0 && a->threads > cores;
    int busy = a->other_cores >= 0.5, unknown = a->other_cores < 0;
    const char *blas = rules_count(g->rc.blas_threads) > 1 ? "OPENBLAS_NUM_THREADS=1; " : "";
    GP_TRY(rules_knob(o, "%s%s%s", cut_workers ? rules_strf(o, "--workers %ld; ", fit) : "", blas,
                      busy || unknown || !(cut_workers || blas[0])
                              ? "stop the other load on the machine"
                              : "no more threads than cores"));
    return rules_reco(
            o,
            "%s (%s). %s%s%s%s"
            "Threads beyond the free cores take turns, and every turn lands inside a step.",
            a->known ? rules_strf(o, "The training thread waited for a core %.0f%% of the time",
                                  share)
                     : rules_strf(o,
                                  "Operators and the gaps between them took %.0f%% of step "
                                  "time past their own fastest, in stalls of a scheduler "
                                  "slice or more",
                                  share),
            machine_line(c, a, o),
            busy ? rules_strf(o,
                              "Other processes used %.1f of the %ld cores: stop them, or run "
                              "where cores are free (taskset/cgroups to reserve them). ",
                              a->other_cores, cores)
                 : "",
            unknown ? "The trace does not say what else ran: look for other processes keeping "
                      "the cores busy (top). "
                    : "",
            cut_workers ? rules_strf(o,
                                     "--workers %ld (you ran %ld): loader threads beyond "
                                     "all cores but one take turns with the training "
                                     "thread. ",
                                     fit, w)
                        : "",
            rules_count(g->rc.blas_threads) > 1
                    ? "OPENBLAS_NUM_THREADS=1 stops OpenBLAS's threads spinning "
                      "against the others. "
                    : "");
}

/* " Even the fastest aten::_log_softmax [[64, 10], [], []] took 2.1 ms, 10x what its size
 * warrants (...)": every call waited, and the stalled time is a floor. */
static const char *inflated_line(const struct rules_ctx *c, const struct rules_stalls *s,
                                 struct rules_out *o)
{
    if (!s->inflated)
        return "";
    char a[32], b[32];
    return rules_strf(o,
                      " Even the fastest %s %s took %s, %.0fx the most its size warrants (%s); "
                      "%zu op%s like it: every call waited, so the time counted here is a floor.",
                      gp_trace_str(c->t, s->inflated_name),
                      s->inflated_shape != GP_STR_NONE ? gp_trace_str(c->t, s->inflated_shape) : "",
                      rules_fmt_ns(a, sizeof(a), s->inflated_fastest),
                      (double)s->inflated_fastest / (double)s->inflated_ceiling,
                      rules_fmt_ns(b, sizeof(b), s->inflated_ceiling), s->inflated,
                      s->inflated == 1 ? "" : "s");
}

/* PyTorch or any other trace: name the thread pools, with what the trace says of them. */
static gp_status advise_other(const struct rules_ctx *c, const double *p,
                              const struct rules_stalls *s, struct rules_out *o)
{
    const gp_trace_info *ti = gp_trace_get_info(c->t);
    const char *procs = ti->world_size > 1 ? rules_strf(o,
                                                        " The trace is one of %d ranks: if "
                                                        "they share this machine, each one's "
                                                        "threads count.",
                                                        ti->world_size)
                                           : "";
    long n_cores = rules_count(c->cfg.rc.cpu_count);
    const char *cores = n_cores > 0 ? rules_strf(o, " (this machine has %ld cores)", n_cores)
                                    : " (the trace records no thread or core counts)";
    GP_TRY(rules_knob(o, "torch.set_num_threads(k) with k x processes + DataLoader num_workers "
                         "<= cores; stop other load on the machine"));
    return rules_reco(o,
                      "%llu operator calls took at least %s their own fastest call of the same "
                      "shape, or their size's due, in %zu of %zu steps: the signature of threads "
                      "waiting for a core%s. Keep the threads at or below the cores: "
                      "torch.set_num_threads(k) (intra-op threads, also OMP_NUM_THREADS and "
                      "MKL_NUM_THREADS) times the processes on the machine, plus DataLoader "
                      "num_workers; and stop or move other processes keeping the cores busy "
                      "(top shows them).%s%s",
                      (unsigned long long)s->stalled,
                      rules_strf(o, "%g ms and %gx", p[MIN_STALL_MS], p[STALL_RATIO]), s->steps_hit,
                      c->n_steps, cores, procs, inflated_line(c, s, o));
}

/* Any libprof program with the steps' waits for a core (not the trainer, whose threads are
 * known): the measured share, the cores, and what to cut. */
static gp_status advise_measured(const struct rules_ctx *c, const struct rules_acct *a,
                                 struct rules_out *o)
{
    long n_cores = rules_count(c->cfg.rc.cpu_count);
    const char *cores = n_cores > 0 ? rules_strf(o, " (this machine has %ld cores)", n_cores) : "";
    GP_TRY(rules_knob(o, "no more runnable threads than cores; stop other load on the machine"));
    return rules_reco(o,
                      "The stepping thread was runnable but had no core %.0f%% of step time "
                      "(the scheduler's run-queue time, per step)%s: more threads want the "
                      "cores than there are, this program's (thread pools, workers) or other "
                      "processes'. Keep this program's threads at or below the free cores and "
                      "stop or move other load (top shows it; taskset/cgroups reserve cores).",
                      a->wait_share, cores);
}

/* "; waiting most in ProfilerStep#12 (4.1 ms of 9.0 ms); 30 of 50 steps waited over a tenth of
 * their time": which steps, from the steps' own run-queue times. */
static const char *steps_line(const struct rules_ctx *c, struct rules_out *o)
{
    size_t worst = 0, over = 0;
    int64_t stolen = 0, wall = 0;
    for (size_t i = 0; i < c->n_steps; i++) {
        const gp_step *s = &c->steps[i];
        over += 10 * s->runq_ns > s->host_end - s->host_ts;
        worst = s->runq_ns > c->steps[worst].runq_ns ? i : worst;
        stolen += s->steal_ns;
        wall += s->host_end - s->host_ts;
    }
    const gp_step *w = &c->steps[worst];
    char a[32], b[32];
    const char *steal = stolen > 0 && wall > 0
                                ? rules_strf(o,
                                             "; besides, the host took up to %.1f%% of step time "
                                             "from the virtual machine's CPUs (steal: a busy "
                                             "host, not this machine's load)",
                                             100.0 * (double)stolen / (double)wall)
                                : "";
    return rules_strf(
            o, "; %zu of %zu steps waited over a tenth of their time, most %s (%s of %s)%s", over,
            c->n_steps, rules_ev_name(c, w->event), rules_fmt_ns(a, sizeof(a), w->runq_ns),
            rules_fmt_ns(b, sizeof(b), w->host_end - w->host_ts), steal);
}

/* How the wait was measured: over the trainer's loop, else in each step (libprof's step args),
 * else from CPU time against wall time; with the steps that waited where the steps say. */
static const char *measured_how(const struct rules_ctx *c, const struct rules_acct *a,
                                struct rules_out *o)
{
    const char *steps = a->per_step ? steps_line(c, o) : "";
    if (c->cfg.train_runq >= 0)
        return rules_strf(o, "the scheduler's run-queue time%s", steps);
    if (a->per_step)
        return rules_strf(o, "the scheduler's run-queue time in each step%s", steps);
    return "its CPU time against the steps' wall time";
}

static gp_status predict_gain(const struct rules_ctx *c, struct rules_out *o, double share,
                              const char *what)
{
    char a[32], b[32];
    double step = rules_per_step(c, (double)c->step_ns), per = step * share / 100;
    rules_fmt_ns(a, sizeof(a), (int64_t)step);
    rules_fmt_ns(b, sizeof(b), (int64_t)(step - per));
    return rules_gain(o, (int64_t)((double)c->step_ns * share / 100), (int64_t)per,
                      "if %s, the step would drop from %s to %s", what, a, b);
}

/* ", and 148 of 1490 gaps between them, 42.7%": the waits between operators (rules_gaps.c). */
static const char *gaps_part(const struct rules_ctx *c, const struct rules_stalls *s,
                             struct rules_out *o)
{
    if (!s->gap_stalled)
        return "";
    return rules_strf(o, ", and %llu of %llu gaps between them, %.1f%%",
                      (unsigned long long)s->gap_stalled, (unsigned long long)s->gaps,
                      rules_pct_of_steps(c, s->gap_ns));
}

/* "; 4 calls were slower than their fastest by no more than first-touch page faults of their
 * tensors' memory cost (...)": not counted, and what keeps the memory mapped. Said where the
 * rule stays quiet: beside real waits a slice that the faults could cover may be a wait too. */
static const char *faults_line(const struct rules_ctx *c, const struct rules_stalls *s,
                               struct rules_out *o)
{
    if (!s->faulted || o->f.severity != GP_SEV_OK)
        return "";
    return rules_strf(o,
                      "; %llu call%s slower than %s fastest by no more than first-touch page "
                      "faults of %s tensors' memory cost (%.1f%% of step time, not counted): "
                      "freed memory given back to the OS and faulted in again; a caching "
                      "allocator keeps it (jemalloc or tcmalloc by LD_PRELOAD, or glibc's "
                      "MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ raised)",
                      (unsigned long long)s->faulted, s->faulted == 1 ? " was" : "s were",
                      s->faulted == 1 ? "its" : "their", s->faulted == 1 ? "its" : "their",
                      rules_pct_of_steps(c, s->fault_ns));
}

/* Without accounting: the stalled share, or, where even the fastest calls of several
 * elementwise ops took longer than their size warrants, that count (every call waited: the
 * share is then a floor, a CNN 16x slower than at rest showed 8.5%). */
static gp_status measure_timing(const struct rules_ctx *c, const double *p,
                                const struct rules_stalls *s, double stall, struct rules_out *o)
{
    const char *what = "";
    if ((double)s->inflated >= p[MIN_OVER_SIZE] && stall < p[CRIT_PCT]) {
        rules_measure(o, "ops_over_size_allowance", GP_UNIT_COUNT, (double)s->inflated,
                      ">=", p[MIN_OVER_SIZE], p[MIN_OVER_SIZE]);
        what = rules_strf(o,
                          "; in %zu elementwise op%s even the fastest call took longer than its "
                          "size warrants: every call waited",
                          s->inflated, s->inflated == 1 ? "" : "s");
    } else
        rules_measure(o, "cpu_wait_share", GP_UNIT_PCT, stall, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if ((double)s->steps_hit < p[MIN_STALL_STEPS])
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    return rules_summary(o,
                         "%.1f%% of step time is operators stalled past their fastest call or "
                         "their size (%llu of %llu calls%s, in %zu of %zu steps; no CPU "
                         "accounting in the trace)%s%s",
                         stall, (unsigned long long)s->stalled, (unsigned long long)s->calls,
                         gaps_part(c, s, o), s->steps_hit, c->n_steps, what, faults_line(c, s, o));
}

gp_status rules_cpu_contention(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    struct rules_acct a = rules_read_acct(c);
    struct rules_stalls s;
    struct rules_stall_cfg k = {.min_ns = (int64_t)(p[MIN_STALL_MS] * 1e6),
                                .ratio = p[STALL_RATIO],
                                .size_overhead_ns = (int64_t)(p[SIZE_CALL_US] * 1e3),
                                .size_ns_per_elem = p[SIZE_ELEM_NS],
                                .fault_ns_per_page = p[FAULT_US_PAGE] * 1e3,
                                .max_gap_ns = (int64_t)(p[MAX_GAP_WAIT_MS] * 1e6)};
    GP_TRY(rules_stalls_scan(c, &k, &s));
    double stall = rules_pct_of_steps(c, s.stall_ns + s.gap_ns);
    gp_status rc;
    double lost = rules_wait_lost_pct(c, &a);
    if (a.known) {
        rules_measure(o, "cpu_wait_share", GP_UNIT_PCT, lost, ">=", p[WARN_PCT], p[CRIT_PCT]);
        rc = rules_summary(o,
                           "the training thread waited for a core %.1f%% of the time (measured: "
                           "%s)%s; stalls in and between operators past their fastest: %.1f%%",
                           a.wait_share, measured_how(c, &a, o),
                           lost > a.wait_share + 0.05
                                   ? rules_strf(o,
                                                ", and for batches its loader threads made "
                                                "while waiting for a core %.0f%% of theirs: "
                                                "%.1f%% of step time in all",
                                                100 * (1 - a.loader_run), lost)
                                   : "",
                           stall);
    } else {
        rc = measure_timing(c, p, &s, stall, o);
    }
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = evidence(c, o, &s);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = predict_gain(c, o, a.known ? lost : stall,
                          a.known ? "the step's threads had a core whenever they could run"
                                  : "nothing waited for a core (at least: only the stalls seen "
                                    "are counted)");
    if (rc == GP_OK && o->f.severity != GP_SEV_OK)
        rc = c->cfg.rc.trainer ? advise_trainer(c, &a, a.known ? a.wait_share : stall, o)
             : a.per_step      ? advise_measured(c, &a, o)
                               : advise_other(c, p, &s, o);
    if (rc == GP_OK && o->f.severity != GP_SEV_OK) { /* what the stalls explain (rules_explain.c) */
        o->cause = (struct rules_cause){s.ivs, lost, "free the cores first (GT19)", 0, 0};
        s.ivs = (struct rules_ivs){0};
    }
    rules_stalls_release(&s);
    return rc;
}
