/* GT10 near_oom: peak device memory (the caching allocator's reserved bytes, else allocated) as
 * a share of the device's capacity. Anchor: tb_plugin R7 (0.9); the 95 % crit tier is ours.
 * Where the activations a step keeps are a large part of the peak (rules_ckpt.c: the rise of
 * allocated bytes within the step, or the trainer's own figure), it advises activation
 * checkpointing with the bytes it would save and the extra forward it costs; where they are
 * small, not: the weights, gradients and optimizer state hold the memory. */
#include "rules/rules_int.h"

#include <math.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT, ACT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 90, "peak memory share of device capacity (tb_plugin R7)"},
        {"crit_pct", 95, "share for crit (ours)"},
        {"act_pct", 10, "activations' share of peak allocated for checkpointing advice (ours)"},
};
RULES_INFO(near_oom, "GT10", "near out of memory", 0, RULES_READS_MEM);

static const gp_evidence_col cols[] = {{"device", GP_UNIT_COUNT},
                                       {"peak reserved", GP_UNIT_BYTES},
                                       {"peak allocated", GP_UNIT_BYTES},
                                       {"capacity", GP_UNIT_BYTES},
                                       {"at", GP_UNIT_US},
                                       {"share", GP_UNIT_PCT},
                                       {"activations", GP_UNIT_BYTES},
                                       {"checkpointing saves", GP_UNIT_BYTES}};

/* The device series with the highest peak share, or NULL. */
static const gp_mem_series *worst(const struct rules_ctx *c, double *share)
{
    size_t n;
    const gp_mem_series *s = gp_analysis_memory(c->a, &n), *best = NULL;
    *share = NAN;
    for (size_t i = 0; i < n; i++) {
        int64_t cap = rules_device_mem(c, s[i].device_id);
        int64_t peak = s[i].peak_reserved > 0 ? s[i].peak_reserved : s[i].peak_allocated;
        if (s[i].device_type != 1 || cap <= 0)
            continue;
        double v = 100.0 * (double)peak / (double)cap;
        if (!best || v > *share)
            best = &s[i], *share = v;
    }
    return best;
}

static int device_series_seen(const struct rules_ctx *c)
{
    size_t n;
    const gp_mem_series *s = gp_analysis_memory(c->a, &n);
    for (size_t i = 0; i < n; i++)
        if (s[i].device_type == 1)
            return 1;
    return 0;
}

/* Checkpointing's advice: what it saves, on what that is based, and what it costs. */
static gp_status advise_ckpt(const struct rules_ctx *c, struct rules_out *o, int64_t peak,
                             const struct rules_ckpt *k)
{
    char a[32], b[32], d[32], t[32];
    const char *basis = k->from_trainer ? "the trainer's layer sizes (checkpoint_saving_bytes)"
                                        : "the rise of allocated memory within each step, "
                                          "segments of sqrt(allocations)";
    const char *cost = k->forward_ns > 0 ? rules_fmt_ns(t, sizeof(t), k->forward_ns) : "unknown";
    GP_TRY(rules_knob_for(c, o, "--checkpoint-activations",
                          "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)"));
    return rules_reco(o,
                      "Device memory is at the limit and the activations kept for backward "
                      "hold much of it. Activation checkpointing saves about %s (peak %s to "
                      "%s; from %s) for one more forward of the checkpointed layers a step "
                      "(about %s of GPU time): %s.",
                      rules_fmt_bytes(a, sizeof(a), (double)k->saving),
                      rules_fmt_bytes(b, sizeof(b), (double)peak),
                      rules_fmt_bytes(d, sizeof(d), (double)(peak - k->saving)), basis, cost,
                      c->cfg.rc.trainer ? "--checkpoint-activations (torch.utils.checkpoint in "
                                          "PyTorch)"
                                        : "torch.utils.checkpoint around each block (the bundled "
                                          "trainer's --checkpoint-activations)");
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, const gp_mem_series *s,
                        const struct rules_ckpt *k, int ckpt)
{
    int frag = s->peak_reserved > s->peak_allocated + s->peak_allocated / 4;
    const char *alloc = frag ? " Reserved exceeds allocated by more than 25%: try "
                               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."
                             : "";
    char a[32];
    if (ckpt)
        return advise_ckpt(c, o, s->peak_reserved > 0 ? s->peak_reserved : s->peak_allocated, k);
    if (c->cfg.rc.trainer) {
        int amp_off = !c->cfg.rc.amp || strcmp(c->cfg.rc.amp, "off") == 0;
        if (amp_off)
            GP_TRY(rules_knob(o, "--amp bf16"));
        else if (rules_count(c->cfg.rc.batch_size) > 1)
            GP_TRY(rules_knob(o, "--batch-size %ld", rules_count(c->cfg.rc.batch_size) / 2));
        return rules_reco(o, "Device memory is at the limit. %s%s",
                          amp_off ? "--amp bf16 halves activation memory (you ran --amp off); "
                                    "or lower --batch-size with --accumulate to keep the "
                                    "effective batch."
                                  : "Lower --batch-size and add --accumulate to keep the "
                                    "effective batch.",
                          alloc);
    }
    if (k->activations > 0) { /* seen, and small: checkpointing would not help */
        GP_TRY(rules_knob(o, "torch.autocast / a sharded optimizer (FSDP, ZeRO)"));
        return rules_reco(o,
                          "Device memory is at the limit, but a step's activations are only "
                          "%s of it: checkpointing would save little. The weights, gradients "
                          "and optimizer state hold the memory: keep them in bf16, shard them "
                          "(FSDP / ZeRO), or use a smaller model.%s",
                          rules_fmt_bytes(a, sizeof(a), (double)k->activations), alloc);
    }
    GP_TRY(rules_knob(o, "activation checkpointing / torch.autocast / smaller micro-batch"));
    return rules_reco(o,
                      "Device memory is at the limit of its capacity. Use activation "
                      "checkpointing, AMP (torch.autocast bf16/fp16), or a smaller micro-batch "
                      "with gradient accumulation.%s",
                      alloc);
}

/* Would checkpointing help: the activations (or the trainer's own saving) are a large part of
 * the peak, and it is not on already. */
static int ckpt_helps(const struct rules_ctx *c, const gp_mem_series *s, const struct rules_ckpt *k,
                      double act_pct)
{
    int64_t act = k->from_trainer ? k->saving : k->activations;
    if (c->cfg.rc.checkpoint_activations == GP_CFG_ON || k->saving <= 0)
        return 0;
    return 100.0 * (double)act >= act_pct * (double)s->peak_allocated;
}

gp_status rules_near_oom(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    char a[32], b[32];
    double share;
    const gp_mem_series *s = worst(c, &share);
    if (!s)
        return rules_summary(o, "no device memory samples with a known capacity: %s",
                             device_series_seen(c) ? "device capacity unknown"
                                                   : rules_no_device_mem_why(c));
    int64_t cap = rules_device_mem(c, s->device_id);
    int64_t peak = s->peak_reserved > 0 ? s->peak_reserved : s->peak_allocated;
    int64_t at = s->peak_reserved > 0 ? s->peak_reserved_ts : s->peak_allocated_ts;
    rules_measure(o, "peak_memory_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    GP_TRY(rules_summary(o, "peak device memory %s of %s (%.1f%%) on device %d",
                         rules_fmt_bytes(a, sizeof(a), (double)peak),
                         rules_fmt_bytes(b, sizeof(b), (double)cap), share, s->device_id));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    struct rules_ckpt k;
    GP_TRY(rules_ckpt_estimate(c, s, &k));
    int ckpt = ckpt_helps(c, s, &k, p[ACT_PCT]);
    rules_cols(o, 8, cols);
    GP_TRY(rules_row(o, (gp_cell[]){{s->device_id, NULL},
                                    {(double)s->peak_reserved, NULL},
                                    {(double)s->peak_allocated, NULL},
                                    {(double)cap, NULL},
                                    {(double)(at - c->trace_ts) / 1e3, NULL},
                                    {share, NULL},
                                    {k.activations > 0 ? (double)k.activations : NAN, NULL},
                                    {ckpt ? (double)k.saving : NAN, NULL}}));
    GP_TRY(rules_range(o, at, at, "peak device memory"));
    return advise(c, o, s, &k, ckpt);
}
