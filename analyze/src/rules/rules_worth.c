/* A fired finding worth little while another bounds the step. A rule judges its own measure (the
 * transposes' share of kernel time, the fp32 GEMMs' share), not whether its fix shortens the
 * step, and its gain says that: on an H100 a CNN starved by its DataLoader had GT20 crit (cuDNN's
 * NCHW transposes 17% of kernel time) for a gain of 0-2% of its step beside GT01's 59-90%, and a
 * launch-bound MLP GT13 warn for 0-2% beside GT04's 90% (bench/gpu_torch_cases.py). Where the
 * most a finding's fix could gain without the profiler (the high end of its range) is under
 * SMALL_GAIN_PCT of the step while another fired finding could gain BOUND_PCT or more, it is
 * info: its measure and advice stand, after a line naming the other. Alone, a fault stays what
 * its rule says (pageable copies, allocator churn: the anchors fire on any), its gain beside. */
#include "rules/rules_int.h"

#define SMALL_GAIN_PCT 3.0
#define BOUND_PCT      10.0
#define NO_GAIN_KNOWN  (-1.0)

/* The most a fired finding's fix could gain without the profiler, % of the step, or
 * NO_GAIN_KNOWN. */
static double most(const gp_findings *fs, const gp_finding *f)
{
    gp_unprofiled_gain g;
    if (f->severity < GP_SEV_WARN || f->gain_step_ns < 0 || !gp_finding_unprofiled_gain(fs, f, &g))
        return NO_GAIN_KNOWN;
    return g.high_pct;
}

/* The fired finding that could gain the most, at least BOUND_PCT; NULL if none. */
static const gp_finding *bound_by(const gp_findings *fs)
{
    const gp_finding *best = NULL;
    double best_pct = BOUND_PCT;
    for (size_t i = 0; i < fs->n; i++) {
        double pct = most(fs, &fs->items[i]);
        if (pct >= best_pct)
            best = &fs->items[i], best_pct = pct;
    }
    return best;
}

static gp_status demote(gp_findings *fs, gp_finding *f, double high, const gp_finding *b)
{
    struct rules_out o = {.arena = &fs->arena};
    const char *reco = rules_strf(&o,
                                  "Worth little now: its fix would save at most %.1f%% of the "
                                  "step without the profiler, while %s (%s, %s) bounds it. Fix "
                                  "that first. Its own advice: %s",
                                  high, b->rule->id, b->rule->title, gp_severity_name(b->severity),
                                  f->recommendation ? f->recommendation : "none");
    if (!reco)
        return GP_ENOMEM;
    f->recommendation = reco;
    return GP_OK;
}

gp_status rules_small_gains(gp_findings *fs)
{
    const gp_finding *b = bound_by(fs);
    for (size_t i = 0; b && i < fs->n; i++) {
        gp_finding *f = &fs->items[i];
        double pct = most(fs, f);
        if (f == b || pct < 0 || pct >= SMALL_GAIN_PCT)
            continue;
        GP_TRY(demote(fs, f, pct, b));
        f->severity = GP_SEV_INFO;
    }
    return GP_OK;
}
