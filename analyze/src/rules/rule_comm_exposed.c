/* GT15 comm_exposed: communication kernels (NCCL) not hidden behind compute kernels, as a share
 * of step time, and HTA's overlap share (comm ∩ compute / comm). Only when collectives exist.
 * Anchors: tb_plugin R5 (10 %), XProf collectives (high 15 %), HTA comm/comp overlap. */
#include "rules/rules_int.h"

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 10, "exposed communication, share of step time (tb_plugin R5)"},
        {"crit_pct", 15, "share for crit (XProf collectives, high)"},
};
RULES_INFO(comm_exposed, "GT15", "exposed communication", 0,
           RULES_NEEDS_GPU | RULES_NEEDS_STEPS | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"collective kernel", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"time", GP_UNIT_US},
                                       {"exposed", GP_UNIT_US}};

/* |comm ∩ steps − compute| */
static int64_t exposed_in_steps(const struct rules_ctx *c)
{
    int64_t sum = 0;
    for (size_t i = 0; i < c->comm.n; i++) {
        for (size_t s = 0; s < c->step_ivs.n; s++) {
            int64_t a = c->comm.iv[i][0] > c->step_ivs.iv[s][0] ? c->comm.iv[i][0]
                                                                : c->step_ivs.iv[s][0];
            int64_t b = c->comm.iv[i][1] < c->step_ivs.iv[s][1] ? c->comm.iv[i][1]
                                                                : c->step_ivs.iv[s][1];
            if (b > a)
                sum += (b - a) - rules_ivs_overlap(&c->kernels, a, b);
        }
    }
    return sum;
}

static gp_status per_kernel(struct rules_ctx *c, struct rules_agg *agg)
{
    size_t nt;
    const gp_track *tr = gp_trace_tracks(c->t, &nt);
    for (size_t t = 0; t < nt; t++) {
        if (!tr[t].is_gpu)
            continue;
        for (uint32_t i = tr[t].first; i < tr[t].first + tr[t].count; i++) {
            const gp_event *e = &c->ev[i];
            if (e->kind != GP_EV_KERNEL || !(e->flags & GP_EVF_COMM))
                continue;
            int64_t hid = rules_ivs_overlap(&c->kernels, e->ts, e->ts + e->dur);
            GP_TRY(rules_agg_add(agg, e->name, 0, 0, e->dur - hid, e->dur, 0));
        }
    }
    rules_agg_finish(agg);
    return GP_OK;
}

gp_status rules_comm_exposed(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    struct rules_agg agg = {0};
    GP_TRY(rules_ctx_intervals(c));
    if (c->comm.n == 0)
        return rules_summary(o, "no communication kernels (NCCL) in the trace: not applicable");
    int64_t comm = 0, overlap = 0, exposed = exposed_in_steps(c);
    for (size_t i = 0; i < c->comm.n; i++) {
        comm += c->comm.iv[i][1] - c->comm.iv[i][0];
        overlap += rules_ivs_overlap(&c->kernels, c->comm.iv[i][0], c->comm.iv[i][1]);
    }
    double e = rules_pct_of_steps(c, exposed);
    rules_measure(o, "exposed_comm_share", GP_UNIT_PCT, e, ">=", p[WARN_PCT], p[CRIT_PCT]);
    GP_TRY(rules_summary(o,
                         "communication not overlapped with compute %.1f%% of step time; "
                         "%.1f%% of communication overlaps compute",
                         e, comm ? 100.0 * (double)overlap / (double)comm : 0));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    gp_status rc = per_kernel(c, &agg);
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < agg.n && i < 5 && rc == GP_OK; i++)
        rc = rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, agg.rows[i].k[0])},
                                      {(double)agg.rows[i].count, NULL},
                                      {(double)agg.rows[i].ns2 / 1e3, NULL},
                                      {(double)agg.rows[i].ns / 1e3, NULL}});
    rules_agg_release(&agg);
    GP_TRY(rc);
    GP_TRY(rules_gain(o, exposed, (int64_t)rules_per_step(c, (double)exposed),
                      "if communication were fully overlapped with compute"));
    GP_TRY(rules_knob(o, "DDP(bucket_cap_mb=...) / no_sync() with gradient accumulation"));
    return rules_reco(o,
                      "%.1f%% of step time is spent in communication that compute does not "
                      "hide. Overlap it: check DDP bucket order and size (bucket_cap_mb), "
                      "find_unused_parameters=False; accumulate gradients with no_sync(), "
                      "compress gradients, or use a larger batch (it changes the global batch).",
                      e);
}
