/* How sure a finding is against libprof's capture-health ledger: records of a kind its rule
 * reads (the rule's `needs`, RULES_READS_*) that were dropped, GPU records with no or impossible
 * times, and for rules whose gain is host time the profiler's own cost. A trace without a ledger
 * (PyTorch's) says nothing here. */
#include "rules/rules_int.h"

#include "gp/run_config.h"

#include <stdio.h>
#include <string.h>

/* Lost records above this share make a finding unsure (low), any loss less sure (medium):
 * GT00's crit_dropped_pct. A profiler costing this share of the span: medium, and low at the
 * share that makes a restated gain low (rules_cost.c). */
#define LOST_LOW_PCT    1.0
#define COST_MEDIUM_PCT 5.0
#define COST_LOW_PCT    25.0

void rules_ledger_read(const struct rules_ctx *c, struct rules_ledger *out)
{
    gp_run_config rc;
    gp_run_config_read(c->t, &rc);
    const gp_capture_health *h = &rc.health;
    *out = (struct rules_ledger){.known = h->known};
    if (!h->known)
        return;
    int64_t cpu = h->cpu_ranges + h->cpu_marks + h->cpu_counters + h->cpu_async;
    int64_t bad = h->gpu_no_timestamp + h->gpu_end_before_start + h->gpu_start_before_launch;
    out->cpu_dropped_pct = gp_trace_dropped_pct((uint64_t)h->cpu_dropped, (uint64_t)cpu);
    out->gpu_dropped_pct = gp_trace_dropped_pct((uint64_t)h->gpu_dropped, (uint64_t)h->gpu_records);
    out->gpu_bad_pct = h->gpu_records ? 100.0 * (double)bad / (double)h->gpu_records : 0.0;
    const gp_trace_info *in = gp_trace_get_info(c->t);
    int64_t span = in->ts_max - in->ts_min;
    out->cost_pct = span > 0 ? 100.0 * (double)h->profiler_cost_ns / (double)span : 0.0;
}

/* The rule behind a finding, for what it reads. */
static const struct rules_def *const defs[] = {
#define RULES_X(name) &rules_##name##_def,
#include "rules/rules_list.h"
#undef RULES_X
};

static int reads_of(const gp_finding *f)
{
    for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
        if (defs[i]->info == f->rule)
            return defs[i]->needs;
    return 0;
}

/* "2.1%", and "under 0.1%" for a loss too small to print as a share. */
static const char *pct_text(double pct, char *buf, size_t cap)
{
    if (pct < 0.05)
        snprintf(buf, cap, "under 0.1%%");
    else
        snprintf(buf, cap, "%.1f%%", pct);
    return buf;
}

/* One loss: keep it in *g when it is worse than what is there (the first on a tie). */
static void lose(gp_unprofiled_gain *g, double pct, double low_at, const char *what)
{
    char p[24];
    if (pct <= 0)
        return;
    gp_sureness s = pct >= low_at ? GP_SURE_LOW : GP_SURE_MEDIUM;
    if (g->capture_why[0] && s >= g->capture_sure)
        return;
    g->capture_sure = s;
    snprintf(g->capture_why, sizeof(g->capture_why), "%s %s", pct_text(pct, p, sizeof(p)), what);
}

/* The ledger's word on `f` alone, into g->capture_*. */
static void ledger_judge(const struct rules_ledger *l, const gp_finding *f, gp_unprofiled_gain *g)
{
    int reads = reads_of(f);
    g->capture_known = l->known;
    g->capture_sure = GP_SURE_HIGH;
    g->capture_why[0] = '\0';
    if (!l->known)
        return;
    if (reads & RULES_READS_CPU)
        lose(g, l->cpu_dropped_pct, LOST_LOW_PCT, "of CPU records were dropped");
    if (reads & (RULES_READS_GPU | RULES_READS_MEM))
        lose(g, l->gpu_dropped_pct, LOST_LOW_PCT,
             reads & RULES_READS_MEM ? "of GPU activity records (memory records among them) "
                                       "were dropped"
                                     : "of GPU activity records were dropped");
    if (reads & RULES_READS_GPU)
        lose(g, l->gpu_bad_pct, LOST_LOW_PCT, "of GPU records have no or impossible times");
    if ((reads & RULES_HOST_TIMED) && l->cost_pct >= COST_MEDIUM_PCT)
        lose(g, l->cost_pct, COST_LOW_PCT, "of the run's time was the profiler's own cost");
}

void rules_ledger_sureness(const gp_findings *fs, const gp_finding *f, gp_unprofiled_gain *g)
{
    ledger_judge(&fs->ledger, f, g);
    if (!g->capture_why[0])
        return;
    if (g->capture_sure < g->sure) { /* the loss is what limits it: say so alone */
        g->sure = g->capture_sure;
        snprintf(g->why, sizeof(g->why), "%s", g->capture_why);
        return;
    }
    size_t n = strlen(g->why);
    snprintf(g->why + n, sizeof(g->why) - n, "; %s", g->capture_why);
}
