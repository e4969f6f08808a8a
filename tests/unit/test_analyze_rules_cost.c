/* The profiler's own cost and a gain restated without it (issue 17 §10). A starved loader whose
 * Python frames the profiler records: each step spends `loader_us` in DataLoader.__next__, whose
 * `frames` records cost `cost_ns` each (libprof's record_cost_ns, or nothing said), `gap_ns`
 * apart; "overhead" events (CUPTI's) may sit in the steps. The analysis must take the cost out of
 * the step and bound the gain's share of what is left, and say how sure it is. */
#include "gp/rules.h"
#include "gp_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct scen {
    int steps;      /* analysed steps (one warm-up step is added before them) */
    double step_us; /* step time; odd steps get + jitter_us, even ones - jitter_us */
    double jitter_us;
    double loader_us;   /* DataLoader.__next__ per step */
    int frames;         /* python_function records in each __next__, 1 us each */
    double gap_ns;      /* between consecutive frames */
    long cost_ns;       /* "record_cost_ns" in the gprof object; 0: not written */
    double overhead_us; /* one "overhead" event per step */
    const char *health; /* libprof's capture-health ledger: "health_*" members, or NULL */
    int sched_from;     /* steps from this one on carry libprof's scheduler args; 0: none */
};

struct buf {
    char *s;
    size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->cap - b->n < 512) {
        b->cap = b->cap ? 2 * b->cap : 1 << 16;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
    }
    va_start(ap, fmt);
    b->n += (size_t)vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
}

#define EV                                                                                         \
    "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f},"

static void one_step(struct buf *b, const struct scen *sc, int k, double t0, double step)
{
    char name[32];
    snprintf(name, sizeof(name), "ProfilerStep#%d", k);
    if (sc->sched_from > 0 && k >= sc->sched_from)
        put(b,
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"%s\",\"pid\":1,\"tid\":1,"
            "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"gprof_thread_cpu_ns\":%.0f,"
            "\"gprof_runq_ns\":0}},",
            name, t0, step, step * 1e3);
    else
        put(b, EV, "user_annotation", name, t0, step);
    put(b, EV, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        t0 + 1, sc->loader_us);
    for (int j = 0; j < sc->frames; j++)
        put(b, EV, "python_function", "fetch", t0 + 2 + j * (1 + sc->gap_ns / 1e3), 1.0);
    put(b, EV, "cpu_op", "aten::mm", t0 + 2 + sc->loader_us, step - sc->loader_us - 4);
    if (sc->overhead_us > 0)
        put(b,
            "{\"ph\":\"X\",\"cat\":\"overhead\",\"name\":\"CUPTI Buffer Flush\",\"pid\":-1,"
            "\"tid\":0,\"ts\":%.3f,\"dur\":%.3f},",
            t0 + 2 + sc->loader_us, sc->overhead_us);
}

static char *trace_json(const struct scen *sc)
{
    struct buf b = {0};
    put(&b, "{");
    if (sc->cost_ns)
        put(&b, "\"gprof\":{\"record_cost_ns\":%ld%s%s},", sc->cost_ns, sc->health ? "," : "",
            sc->health ? sc->health : "");
    put(&b, "\"traceEvents\":[");
    double t = 1000;
    for (int k = 0; k <= sc->steps; k++) {
        double step = sc->step_us + (k % 2 ? sc->jitter_us : -sc->jitter_us);
        one_step(&b, sc, k, t, step);
        t += step;
    }
    b.s[b.n - 1] = ']'; /* the last comma */
    put(&b, "}");
    return b.s;
}

struct run {
    gp_trace *t;
    gp_analysis *a;
    gp_findings *f;
    const gp_finding *gt01;
};

static int diagnose(const struct scen *sc, struct run *r)
{
    gp_error err;
    char *json = trace_json(sc);
    memset(r, 0, sizeof(*r));
    gp_status rc = gp_trace_open_mem(json, strlen(json), "cost", NULL, &r->t, &err);
    free(json);
    if (rc == GP_OK)
        rc = gp_analysis_run(r->t, NULL, &r->a, &err);
    if (rc == GP_OK)
        rc = gp_rules_run(NULL, r->a, &r->f, &err);
    if (rc != GP_OK) {
        fprintf(stderr, "cannot diagnose: %s\n", err.msg);
        return -1;
    }
    size_t n;
    const gp_finding *f = gp_findings_get(r->f, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i].rule->id, "GT01") == 0)
            r->gt01 = &f[i];
    return 0;
}

static void release(struct run *r)
{
    gp_findings_free(r->f);
    gp_analysis_free(r->a);
    gp_trace_free(r->t);
}

/* The case: 20.4 ms of loader wait in a 30 ms step whose profiler records cost 18.2 ms,
 * so the step takes 11.8 ms without the profiler. The profiled share (68%) would promise more
 * than is left; the restated share is bounded by what is left, and unsure. */
static void test_gain_never_exceeds_the_unprofiled_step(void)
{
    struct scen sc = {
            .steps = 10, .step_us = 30000, .loader_us = 20400, .frames = 2000, .cost_ns = 9100};
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0);
    const gp_profiler_cost *k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->source, GP_COST_MEASURED);
    GP_ASSERT_EQ_INT(k->record_cost_ns, 9100);
    GP_ASSERT_NEAR(k->records_per_step, 2000 + 3, 1e-9); /* frames, step, loader, aten::mm */
    GP_ASSERT_EQ_INT(k->per_step_ns, 2003 * 9100);
    GP_CHECK(r.gt01 && r.gt01->severity >= GP_SEV_WARN);
    GP_CHECK(r.gt01->gain_step_ns > 20000000); /* profiled: the whole wait */
    gp_unprofiled_gain g;
    GP_CHECK(gp_finding_unprofiled_gain(r.f, r.gt01, &g));
    GP_ASSERT_EQ_INT(g.step_ns, 30000000 - 2003 * 9100);
    GP_ASSERT_NEAR(g.high_pct, 100.0, 1e-9);
    double low = 100.0 * (double)(r.gt01->gain_step_ns - 2003 * 9100) / (double)g.step_ns;
    GP_ASSERT_NEAR(g.low_pct, low, 1e-6);
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_LOW);
    GP_ASSERT_CONTAINS(g.why, "the profiler's own cost is 61% of the step");
    release(&r);
}

/* 12 steady steps of 10 ms, 6 ms of them loader wait, records that cost 25 ns. */
static const struct scen cheap = {.steps = 12,
                                  .step_us = 10000,
                                  .jitter_us = 100,
                                  .loader_us = 6000,
                                  .frames = 20,
                                  .gap_ns = 100,
                                  .cost_ns = 25};

/* A cheap profiler and steady steps: the restated share is the profiled one, and sure. */
static void test_cheap_profiler_is_sure(void)
{
    struct scen sc = cheap;
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0);
    gp_unprofiled_gain g;
    GP_CHECK(r.gt01 && gp_finding_unprofiled_gain(r.f, r.gt01, &g));
    size_t analysed;
    int64_t mean;
    gp_findings_steps(r.f, &analysed, &mean);
    double share = 100.0 * (double)r.gt01->gain_step_ns / (double)mean;
    GP_CHECK(g.low_pct <= share && share <= g.high_pct && g.high_pct - g.low_pct < 0.1);
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_HIGH);
    GP_ASSERT_CONTAINS(g.why, "12 steps");
    release(&r);
}

/* What makes it unsure: few steps (low below 3, medium below 10), noisy steps. */
static void test_sureness_follows_steps_and_noise(void)
{
    struct scen sc = {.steps = 2,
                      .step_us = 10000,
                      .loader_us = 6000,
                      .frames = 20,
                      .gap_ns = 100,
                      .cost_ns = 25};
    struct run r;
    gp_unprofiled_gain g;
    GP_CHECK(diagnose(&sc, &r) == 0 && r.gt01 && gp_finding_unprofiled_gain(r.f, r.gt01, &g));
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_LOW);
    GP_ASSERT_CONTAINS(g.why, "only 2 steps");
    release(&r);
    sc.steps = 6;
    GP_CHECK(diagnose(&sc, &r) == 0 && r.gt01 && gp_finding_unprofiled_gain(r.f, r.gt01, &g));
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_MEDIUM);
    GP_ASSERT_CONTAINS(g.why, "10 make it firm");
    release(&r);
    sc.steps = 12, sc.jitter_us = 3500; /* 6.5 ms and 13.5 ms steps: 35% spread */
    GP_CHECK(diagnose(&sc, &r) == 0 && r.gt01 && gp_finding_unprofiled_gain(r.f, r.gt01, &g));
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_LOW);
    GP_ASSERT_CONTAINS(g.why, "step times vary");
    release(&r);
}

/* Without the profiler's own measure (a PyTorch trace), a record costs 2.5x the 10th percentile
 * of the gaps between records, what torch.profiler was measured to cost beyond them (issue 24
 * §2: the gaps alone said 2-3x too little); where even the short gaps are long (the program works
 * in them), 4 us. */
static void test_cost_of_torch_records(void)
{
    struct scen sc = {
            .steps = 10, .step_us = 10000, .loader_us = 6000, .frames = 200, .gap_ns = 300};
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0);
    const gp_profiler_cost *k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->source, GP_COST_TORCH);
    GP_ASSERT_EQ_INT(k->record_cost_ns, 750);
    release(&r);
    sc.frames = 20, sc.gap_ns = 50000;
    GP_CHECK(diagnose(&sc, &r) == 0);
    k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->source, GP_COST_TORCH);
    GP_ASSERT_EQ_INT(k->record_cost_ns, 4000);
    release(&r);
}

/* CUPTI's "overhead" events inside the steps are the profiler's cost too. */
static void test_overhead_events_count(void)
{
    struct scen sc = {.steps = 10,
                      .step_us = 10000,
                      .loader_us = 6000,
                      .frames = 20,
                      .gap_ns = 100,
                      .cost_ns = 25,
                      .overhead_us = 700};
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0);
    const gp_profiler_cost *k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->overhead_ns, 700000);
    GP_ASSERT_EQ_INT(k->per_step_ns, 700000 + 23 * 25);
    release(&r);
}

/* libprof's steps carrying the thread's CPU and run-queue time cost a scheduler read each
 * (2.1 us, bench_prof_step), which no record shows: counted per step that has them. */
static void test_step_reads_count(void)
{
    struct scen sc = cheap;
    sc.sched_from = 1; /* every analysed step (step 0 is the warm-up) */
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0);
    const gp_profiler_cost *k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->step_reads_ns, 2100);
    GP_ASSERT_EQ_INT(k->per_step_ns, 23 * 25 + 2100);
    release(&r);
    sc.sched_from = 7; /* the last 6 of 12 */
    GP_CHECK(diagnose(&sc, &r) == 0);
    k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->step_reads_ns, 1050);
    release(&r);
    sc.sched_from = 0;
    GP_CHECK(diagnose(&sc, &r) == 0);
    k = gp_findings_profiler_cost(r.f);
    GP_ASSERT_EQ_INT(k->step_reads_ns, 0);
    GP_ASSERT_EQ_INT(k->per_step_ns, 23 * 25);
    release(&r);
}

/* GT01 of the cheap, steady run with libprof's capture-health ledger `health`. */
static void gt01_with_ledger(const char *health, gp_unprofiled_gain *g)
{
    struct scen sc = cheap;
    sc.health = health;
    struct run r;
    GP_CHECK(diagnose(&sc, &r) == 0 && r.gt01 && gp_finding_unprofiled_gain(r.f, r.gt01, g));
    release(&r);
}

#define LEDGER(cpu_dropped, gpu_dropped, cost_ns)                                                  \
    "\"health_cpu_ranges\":990,\"health_cpu_dropped\":" #cpu_dropped                               \
    ",\"health_gpu_records\":500,\"health_gpu_dropped\":" #gpu_dropped                             \
    ",\"health_profiler_cost_ns\":" #cost_ns

/* GT01 reads CPU ranges: their loss makes it less sure (medium under 1%, low from 1%) and the
 * why names it; a loss of GPU records it does not read leaves it as sure as without one. */
static void test_ledger_loss_of_what_the_rule_reads(void)
{
    gp_unprofiled_gain g;
    gt01_with_ledger(LEDGER(5, 0, 0), &g); /* 5 of 995: 0.5% */
    GP_ASSERT_EQ_INT(g.capture_known, 1);
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_MEDIUM);
    GP_ASSERT_CONTAINS(g.why, "0.5% of CPU records were dropped");
    GP_ASSERT_CONTAINS(g.capture_why, "0.5% of CPU records were dropped");
    gt01_with_ledger(LEDGER(30, 0, 0), &g); /* 30 of 1020: 2.9% */
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_LOW);
    GP_ASSERT_EQ_INT(g.capture_sure, GP_SURE_LOW);
    GP_ASSERT_CONTAINS(g.why, "2.9% of CPU records were dropped");
    gt01_with_ledger(LEDGER(0, 100, 0), &g);
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_HIGH);
    GP_ASSERT_EQ_INT(g.capture_sure, GP_SURE_HIGH);
    GP_ASSERT_EQ_INT(g.capture_why[0], '\0');
}

/* GT01's gain is host time: a profiler that took 5% of the span makes it medium, 25% low. */
static void test_ledger_profiler_cost_of_host_time(void)
{
    gp_unprofiled_gain g;
    gt01_with_ledger(LEDGER(0, 0, 13000000), &g); /* 13 ms of a 130 ms span */
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_MEDIUM);
    GP_ASSERT_CONTAINS(g.why, "10.0% of the run's time was the profiler's own cost");
    gt01_with_ledger(LEDGER(0, 0, 39000000), &g);
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_LOW);
    gt01_with_ledger(LEDGER(0, 0, 1300000), &g); /* 1%: below what is said */
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_HIGH);
}

/* A trace without a ledger (PyTorch's) says nothing new. */
static void test_no_ledger_says_nothing(void)
{
    gp_unprofiled_gain g;
    gt01_with_ledger(NULL, &g);
    GP_ASSERT_EQ_INT(g.capture_known, 0);
    GP_ASSERT_EQ_INT(g.capture_why[0], '\0');
    GP_ASSERT_EQ_INT(g.sure, GP_SURE_HIGH);
}

int main(void)
{
    GP_RUN(test_gain_never_exceeds_the_unprofiled_step);
    GP_RUN(test_cheap_profiler_is_sure);
    GP_RUN(test_sureness_follows_steps_and_noise);
    GP_RUN(test_cost_of_torch_records);
    GP_RUN(test_overhead_events_count);
    GP_RUN(test_step_reads_count);
    GP_RUN(test_ledger_loss_of_what_the_rule_reads);
    GP_RUN(test_ledger_profiler_cost_of_host_time);
    GP_RUN(test_no_ledger_says_nothing);
    return gp_test_summary();
}
