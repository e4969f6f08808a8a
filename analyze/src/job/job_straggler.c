/* GT16 straggler: one rank repeatedly arrives last at the job's collectives, and the others wait
 * for it. A job-level rule: it reads every rank, so it runs from gp_job_finish, not per trace, and
 * lives in job/ beside the cross-rank view it reads (the rules engine below gives its output).
 * The knob comes from the straggler's own trace against the other ranks': its loader, its host
 * (GPU idle the loader does not explain) or its kernels. Anchors: HTA's straggler analysis
 * (collective kernel durations across ranks), Holistic Trace Analysis comm/comp overlap. */
#include "job/job_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const gp_rule_param params[] = {
        {"warn_pct", 5, "the others' wait for the straggler, share of step time"},
        {"crit_pct", 15, "share for crit"},
        {"min_lag_us", 100,
         "a rank is late at a collective when it arrives this much after the "
         "median of the others"},
        {"min_share_pct", 50, "the straggler is late at this share of the late collectives"},
        {"min_count", 3, "and at this many collectives at least"},
        {"clock_us", 50, "align clocks on collectives when a rank is off by more than this"},
        {"match_us", 1000,
         "calls under one key whose ends differ by more than 8x their median difference "
         "(at least clock_us, at most this) after alignment are not the same collective"},
};
const gp_rule_info job_straggler_info = {"GT16", "straggler", "straggler rank", params,
                                         sizeof(params) / sizeof(params[0])};

static const gp_evidence_col cols[] = {
        {"rank", GP_UNIT_COUNT}, {"late at", GP_UNIT_COUNT}, {"collectives", GP_UNIT_COUNT},
        {"steps", GP_UNIT_TEXT}, {"mean lag", GP_UNIT_US},   {"held per step", GP_UNIT_US}};

/* The steps where `rank` was late, as ranges: "3-10, 12". */
static const char *late_steps(const gp_job *j, int rank, struct rules_out *o)
{
    char buf[160] = "";
    size_t len = 0;
    int64_t lo = INT64_MIN, hi = INT64_MIN;
    for (size_t i = 0; i <= j->n_colls; i++) {
        const gp_job_collective *c = i < j->n_colls ? &j->colls[i] : NULL;
        if (c && (c->last_rank != rank || (double)c->lag < j->p[JOB_MIN_LAG_US] * 1e3))
            continue;
        if (c && lo != INT64_MIN && (c->step == hi || c->step == hi + 1)) {
            hi = c->step;
            continue;
        }
        if (lo != INT64_MIN && len < sizeof(buf) - 40)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, len ? ", %lld" : "%lld",
                                    (long long)lo);
        if (lo != INT64_MIN && hi != lo && len < sizeof(buf) - 40)
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "-%lld", (long long)hi);
        if (c)
            lo = hi = c->step;
    }
    return rules_strf(o, "%s%s", buf, len >= sizeof(buf) - 40 ? ", ..." : "");
}

/* The straggler: most time held per step; ties to the lower rank. */
static size_t worst_rank(const gp_job *j, uint64_t *late_total)
{
    size_t w = 0;
    *late_total = 0;
    for (size_t r = 0; r < j->n; r++) {
        *late_total += j->ranks[r].n_last;
        if (j->ranks[r].held > j->ranks[w].held)
            w = r;
    }
    return w;
}

static gp_status evidence(const gp_job *j, struct rules_out *o)
{
    size_t *idx = calloc(j->n, sizeof(size_t)), n = 0;
    if (!idx)
        return GP_ENOMEM;
    for (size_t r = 0; r < j->n; r++)
        if (j->ranks[r].n_last)
            idx[n++] = r;
    for (size_t a = 1; a < n; a++) /* by held, descending; stable */
        for (size_t b = a; b > 0 && j->ranks[idx[b]].held > j->ranks[idx[b - 1]].held; b--) {
            size_t t = idx[b];
            idx[b] = idx[b - 1], idx[b - 1] = t;
        }
    rules_cols(o, 6, cols);
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && i < 5 && rc == GP_OK; i++) {
        const gp_job_rank *r = &j->ranks[idx[i]];
        int64_t lag = r->held * (int64_t)(r->n_steps ? r->n_steps : 1) / (int64_t)r->n_last;
        const char *steps = late_steps(j, r->rank, o);
        rc = steps ? rules_row(o, (gp_cell[]){{r->rank, NULL},
                                              {(double)r->n_last, NULL},
                                              {(double)r->n_collectives, NULL},
                                              {0, steps},
                                              {(double)lag / 1e3, NULL},
                                              {(double)r->held / 1e3, NULL}})
                   : GP_ENOMEM;
    }
    free(idx);
    return rc;
}

/* What makes rank `w` slow in its own trace: the largest excess over the other ranks' median. */
enum cause { CAUSE_LOADER, CAUSE_HOST, CAUSE_KERNELS, CAUSE_NONE };

static int64_t host_wait(const gp_job_rank *r)
{
    return r->idle > r->loader ? r->idle - r->loader : 0;
}

static int64_t metric_of(const gp_job_rank *r, int c)
{
    return c == CAUSE_LOADER ? r->loader : c == CAUSE_HOST ? host_wait(r) : r->compute;
}

static enum cause find_cause(const gp_job *j, size_t w, int64_t *mine, int64_t *others)
{
    int64_t *v = calloc(j->n, sizeof(int64_t)), best = 0;
    enum cause cause = CAUSE_NONE;
    for (int c = CAUSE_LOADER; v && c < CAUSE_NONE; c++) {
        size_t n = 0;
        for (size_t r = 0; r < j->n; r++)
            if (r != w)
                v[n++] = metric_of(&j->ranks[r], c);
        int64_t med = job_median(v, n), ex = metric_of(&j->ranks[w], c) - med;
        if (ex > best && (double)ex >= j->p[JOB_MIN_LAG_US] * 1e3 / 2)
            best = ex, cause = (enum cause)c, *mine = metric_of(&j->ranks[w], c), *others = med;
    }
    free(v);
    return cause;
}

static gp_status knob(const gp_job *j, size_t w, struct rules_out *o)
{
    int64_t mine = 0, others = 0;
    enum cause c = find_cause(j, w, &mine, &others);
    const gp_job_rank *r = &j->ranks[w];
    char a[32], b[32], h[96] = "";
    rules_fmt_ns(a, sizeof(a), mine), rules_fmt_ns(b, sizeof(b), others);
    if (r->host[0])
        snprintf(h, sizeof(h), " (host %s)", r->host);
    static const char *const knobs[] = {
            "rank %d's DataLoader: DataLoader(num_workers=...), pin_memory=True / --workers N",
            "rank %d's host: CPU affinity/NUMA binding, other processes, launch overhead",
            "rank %d's kernels: its GPU's clocks (nvidia-smi -q -d PERFORMANCE), its share of "
            "the work (sampler, sequence lengths)",
            "rank %d outside its profile: its network link, its NIC, its host's other jobs"};
    static const char *const why[] = {
            "its DataLoader takes %s a step against %s on the other ranks: give its loader "
            "more workers, check that host's storage and CPU (diagnose its trace: GT01)",
            "its GPU waits %s a step for its host (beyond the loader) against %s on the "
            "others: its CPU is slower or shared (diagnose its trace: GT02-GT04)",
            "its compute kernels take %s a step against %s on the others: a slower or "
            "throttled GPU, or more work on that rank (uneven shards or sequence lengths)",
            "its trace shows no slower loader, host or kernels than the others (%s%s): look "
            "at its network link and what else runs on its host"};
    GP_TRY(rules_knob(o, knobs[c], r->rank));
    const char *cause = rules_strf(o, why[c], c == CAUSE_NONE ? "" : a, c == CAUSE_NONE ? "" : b);
    GP_FAIL_IF(!cause, GP_ENOMEM, NULL, "out of memory");
    return rules_reco(o,
                      "Rank %d%s arrives last at %llu of %llu collectives; the others wait "
                      "for it. In its own trace, %s.",
                      r->rank, h, (unsigned long long)r->n_last,
                      (unsigned long long)r->n_collectives, cause);
}

static gp_status judge(const gp_job *j, const double *p, struct rules_out *o)
{
    if (j->n < 2)
        return rules_summary(o, "one rank: no straggler to find");
    if (j->n_colls == 0)
        return rules_summary(o, "no collective matched across ranks: not applicable");
    uint64_t late = 0;
    size_t w = worst_rank(j, &late);
    if (late == 0) {
        rules_measure(o, "straggler_wait_share", GP_UNIT_PCT, 0, ">=", p[JOB_WARN_PCT],
                      p[JOB_CRIT_PCT]);
        return rules_summary(o, "no rank is late at any of the %zu collectives (by %g us or more)",
                             j->n_colls, p[JOB_MIN_LAG_US]);
    }
    const gp_job_rank *r = &j->ranks[w];
    int64_t *steps = calloc(j->n, sizeof(int64_t));
    GP_FAIL_IF(!steps, GP_ENOMEM, NULL, "out of memory");
    for (size_t k = 0; k < j->n; k++)
        steps[k] = j->ranks[k].step_mean;
    int64_t step = job_median(steps, j->n);
    free(steps);
    double share = step ? 100.0 * (double)r->held / (double)step : 0;
    rules_measure(o, "straggler_wait_share", GP_UNIT_PCT, share, ">=", p[JOB_WARN_PCT],
                  p[JOB_CRIT_PCT]);
    int repeated = r->n_last >= p[JOB_MIN_COUNT] &&
                   100.0 * (double)r->n_last >= p[JOB_MIN_SHARE_PCT] * (double)late;
    if (!repeated)
        o->f.severity = GP_SEV_OK;
    char a[32];
    GP_TRY(rules_summary(o,
                         "rank %d is late at %llu of %llu collectives (%llu late in all); "
                         "the others wait %s a step for it, %.1f%% of the step",
                         r->rank, (unsigned long long)r->n_last,
                         (unsigned long long)r->n_collectives, (unsigned long long)late,
                         rules_fmt_ns(a, sizeof(a), r->held), share));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    GP_TRY(evidence(j, o));
    GP_TRY(rules_gain(o, r->held * (int64_t)r->n_steps, r->held,
                      "if rank %d kept up with the others", r->rank));
    return knob(j, w, o);
}

gp_status job_straggler(const gp_job *j, gp_findings **out)
{
    gp_findings *fs = calloc(1, sizeof(*fs));
    struct rules_out o;
    memset(&o, 0, sizeof(o));
    *out = NULL;
    if (!fs)
        return GP_ENOMEM;
    fs->items = calloc(1, sizeof(*fs->items));
    o.arena = &fs->arena;
    o.f.rule = &job_straggler_info;
    o.f.metric = NAN;
    o.f.cmp = ">=";
    o.f.gain_ns = o.f.gain_step_ns = o.f.gain_prof_step_ns = -1;
    o.f.cols = o.cols;
    fs->trace = rules_strf(&o, "job (%zu ranks)", j->n);
    gp_status rc = fs->items && fs->trace ? judge(j, j->p, &o) : GP_ENOMEM;
    gp_evidence_col *c = trace_arena_alloc(&fs->arena, sizeof(o.cols));
    if (fs->items) {
        fs->items[0] = o.f;
        fs->n = 1;
        fs->items[0].cols = c;
    }
    if (c)
        memcpy(c, o.cols, sizeof(o.cols));
    if (rc == GP_OK && (!c || !fs->items))
        rc = GP_ENOMEM;
    fs->n_steps = fs->n_analysed = j->n ? j->ranks[0].n_steps : 0;
    fs->mean_step_ns = j->n ? j->ranks[0].step_mean : 0;
    if (rc != GP_OK) {
        if (!fs->items)
            free(o.cells), free(o.ranges);
        gp_findings_free(fs);
        return rc;
    }
    *out = fs;
    return GP_OK;
}
