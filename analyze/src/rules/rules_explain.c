/* One verdict across rules. Rules measure one thing each, so on one trace two can advise
 * against each other: with two busy loops on 2 cores GT19 said "--workers 1 (you ran 2)" while
 * GT01 said crit "--workers 3" for a gain of 0% (the loader waited because its threads waited
 * for a core). The principle, for every pair at once: a rule whose cause makes time pass in
 * other rules' evidence (GT19: the calls stalled waiting for a core) gives those intervals; a
 * fired finding is explained by it when half or more of the time its own ranges point at lies
 * in them, when its own fix would gain under 1% of the step while that cause stands, or when
 * its knob sets a setting the cause's knob sets to another value (both cannot be followed, and
 * the cause inflates every time the other measured: GT01 without CPU accounting asked for
 * --workers 4 beside a busy loop where GT19 asked for 1). An explained finding is info, its knob
 * the cause's ("free the cores first (GT19)"), and its recommendation says which finding explains
 * it and by how much, then gives its own advice for after. Where the trace measured the cause's
 * share of the host's time (GT19 from the scheduler's run-queue time), a finding whose measure
 * that wait inflates (RULES_WAIT_INFLATED: host time against device time or against other
 * steps) and whose gain is no more than that share is explained too: the time it would save may be
 * the time the thread had no core (beside a busy loop a launch loop's host at half its kernels'
 * time read as crit launch-bound, 74% of the step, while the thread waited for a core 83% of the
 * loop; its step outliers, 4 of 19, the same) - unless the finding holds in its least-waited
 * steps (rules_cause.holds_unwaited: a loop launch-bound on a free core, its steps alternating
 * 2.0 ms and 6.1 ms beside a busy loop, was explained away in 2 runs of 8). */
#include "rules/rules_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPLAINED_SHARE 0.5 /* of a finding's range time inside the cause's intervals */
#define NO_GAIN_PCT     1.0 /* a gain under this share of the step is no gain */

/* The finding's ranges as a disjoint union, and the time of it inside `cause`. */
static gp_status covered(const gp_finding *f, const struct rules_ivs *cause, int64_t *range_ns,
                         int64_t *in_cause)
{
    struct rules_ivs v = {0};
    *range_ns = *in_cause = 0;
    for (size_t i = 0; i < f->n_ranges; i++)
        if (f->ranges[i].end > f->ranges[i].ts &&
            rules_ivs_push(&v, f->ranges[i].ts, f->ranges[i].end) != GP_OK)
            return free(v.iv), GP_ENOMEM;
    rules_ivs_merge(&v);
    for (size_t i = 0; i < v.n; i++) {
        *range_ns += v.iv[i][1] - v.iv[i][0];
        *in_cause += rules_ivs_overlap(cause, v.iv[i][0], v.iv[i][1]);
    }
    free(v.iv);
    return GP_OK;
}

/* The value `knob` gives setting `key` ("--workers 3": "3"; "NAME=1": "1"), copied into
 * val; 0 where it sets no such thing. Settings end at a space, ';' or ','. */
static int setting(const char *knob, const char *key, size_t klen, char *val, size_t cap)
{
    for (const char *s = knob; s && (s = strstr(s, key)) != NULL; s += klen) {
        if (s != knob && !strchr(" ;,", s[-1]))
            continue;
        const char *v = s + klen;
        if (*v != ' ' && *v != '=')
            continue;
        size_t n = strcspn(++v, " ;,");
        snprintf(val, cap, "%.*s", (int)n, v);
        return n > 0;
    }
    return 0;
}

/* Does `f`'s knob set a setting that `x`'s knob sets, to another value? */
static int knobs_disagree(const gp_finding *f, const gp_finding *x)
{
    for (const char *s = f->knob; s && *s; s += strcspn(s, ";,"), s += strspn(s, " ;,")) {
        size_t klen = strcspn(s, " =;,");
        char key[64], mine[64], theirs[64];
        if (klen == 0 || klen >= sizeof(key) || (s[0] != '-' && s[klen] != '='))
            continue;
        snprintf(key, sizeof(key), "%.*s", (int)klen, s);
        if (setting(f->knob, key, klen, mine, sizeof(mine)) &&
            setting(x->knob, key, klen, theirs, sizeof(theirs)) && strcmp(mine, theirs) != 0)
            return 1;
    }
    return 0;
}

static int fired(const gp_finding *f)
{
    return f->severity >= GP_SEV_WARN;
}

/* Demote `f`, explained by `x` (whose cause is `k`) for reason `why`. */
static gp_status demote(gp_findings *fs, gp_finding *f, const gp_finding *x,
                        const struct rules_cause *k, const char *why)
{
    struct rules_out o = {.arena = &fs->arena};
    const char *reco =
            why ? rules_strf(&o,
                             "Explained by %s (%s, %s): %s. Fix that first (%s), "
                             "then profile again; this finding may not hold after. "
                             "Its own advice: %s",
                             x->rule->id, x->rule->title, gp_severity_name(x->severity), why,
                             k->knob, f->recommendation ? f->recommendation : "none")
                : NULL;
    if (!reco)
        return GP_ENOMEM;
    f->severity = GP_SEV_INFO;
    f->recommendation = reco;
    f->knob = k->knob;
    return GP_OK;
}

/* Is `f` explained by the cause `k` of finding `x`? Demote it if so. */
static gp_status explain_one(gp_findings *fs, gp_finding *f, const struct rules_cause *fk,
                             const gp_finding *x, const struct rules_cause *k)
{
    int64_t range_ns, in_cause;
    GP_TRY(covered(f, &k->ivs, &range_ns, &in_cause));
    double share = range_ns > 0 ? (double)in_cause / (double)range_ns : 0;
    double gain_pct = f->gain_step_ns >= 0 && fs->mean_step_ns > 0
                              ? 100.0 * (double)f->gain_step_ns / (double)fs->mean_step_ns
                              : -1;
    struct rules_out o = {.arena = &fs->arena};
    if (share >= EXPLAINED_SHARE)
        return demote(fs, f, x, k,
                      rules_strf(&o,
                                 "%.0f%% of the time this finding points at lies in the time "
                                 "%s counts",
                                 100 * share, x->rule->id));
    if (gain_pct >= 0 && gain_pct < NO_GAIN_PCT)
        return demote(fs, f, x, k,
                      rules_strf(&o,
                                 "its own fix would gain %.1f%% of the step while %s's "
                                 "cause stands",
                                 gain_pct, x->rule->id));
    if ((fk->needs & RULES_WAIT_INFLATED) && !fk->holds_unwaited && k->host_wait_pct > 0 &&
        gain_pct >= 0 && gain_pct <= k->host_wait_pct)
        return demote(fs, f, x, k,
                      rules_strf(&o,
                                 "waits for a core (the scheduler's run-queue time of the "
                                 "training thread, and of the loader threads it waited for) "
                                 "took %.0f%% of step time, at least this finding's gain of "
                                 "%.1f%% of the step, which those waits inflate",
                                 k->host_wait_pct, gain_pct));
    if (knobs_disagree(f, x))
        return demote(fs, f, x, k,
                      rules_strf(&o,
                                 "its knob (%s) goes against %s's (%s), and %s's cause "
                                 "inflates the time this finding measured",
                                 f->knob, x->rule->id, x->knob, x->rule->id));
    return GP_OK;
}

static int is_cause(const struct rules_cause *k)
{
    return k->knob && (k->ivs.n || k->host_wait_pct > 0);
}

gp_status rules_explain(gp_findings *fs, struct rules_cause *causes, gp_status rc)
{
    for (size_t x = 0; x < fs->n && rc == GP_OK; x++) {
        if (!fired(&fs->items[x]) || !is_cause(&causes[x]))
            continue;
        for (size_t i = 0; i < fs->n && rc == GP_OK; i++)
            if (i != x && fired(&fs->items[i]) && !is_cause(&causes[i]))
                rc = explain_one(fs, &fs->items[i], &causes[i], &fs->items[x], &causes[x]);
    }
    for (size_t i = 0; i < fs->n; i++)
        free(causes[i].ivs.iv);
    return rc;
}
