/* GT20 channels_last: convolutions on NCHW tensors on a GPU with Tensor Cores (compute
 * capability >= 7). cuDNN's Tensor Core convolutions work in NHWC: given NCHW tensors it
 * transposes each input to NHWC and each output back (its nchwToNhwc / nhwcToNchw kernels), so
 * the transposes' share of kernel time is what channels_last saves (the convolutions then read
 * and write NHWC directly). Evidence: the transposes and the convolution kernels, by name.
 * Anchors: the PyTorch performance tuning guide (channels_last with Tensor Cores), NVIDIA's deep
 * learning performance guide (NHWC for Tensor Core convolutions); thresholds ours. */
#include "rules/rules_int.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

enum { WARN_PCT, CRIT_PCT };
static const gp_rule_param params[] = {
        {"warn_pct", 5, "NCHW<->NHWC transpose share of kernel time, with convolutions (ours)"},
        {"crit_pct", 15, "share for crit (ours)"},
};
RULES_INFO(channels_last, "GT20", "convolutions in NCHW on Tensor Cores", 0,
           RULES_NEEDS_GPU | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"kernel", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"total", GP_UNIT_US},
                                       {"share of kernel time", GP_UNIT_PCT}};

enum layout_kind { LK_OTHER, LK_TRANSPOSE, LK_CONV };

/* Does `s` contain `word`, ignoring case? */
static int has_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == word[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* cuDNN's layout transposes (cudnn::ops::nchwToNhwcKernel, nhwcToNchwKernel), and convolution
 * kernels (fprop/dgrad/wgrad implicit GEMMs, cuDNN's convolve kernels). */
static enum layout_kind kind_of(const char *name)
{
    if (has_word(name, "nchwtonhwc") || has_word(name, "nhwctonchw"))
        return LK_TRANSPOSE;
    if (has_word(name, "fprop") || has_word(name, "dgrad") || has_word(name, "wgrad") ||
        has_word(name, "convolve") || has_word(name, "conv2d") || has_word(name, "_conv_"))
        return LK_CONV;
    return LK_OTHER;
}

struct layout_sums {
    int64_t all, transpose, conv;
    uint64_t n_transpose;
};

static struct layout_sums sum_kernels(const struct rules_ctx *c)
{
    size_t n;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(c->a, &n);
    struct layout_sums s = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        enum layout_kind k = kind_of(gp_trace_str(c->t, ks[i].name));
        s.all += ks[i].total_ns;
        s.transpose += k == LK_TRANSPOSE ? ks[i].total_ns : 0;
        s.n_transpose += k == LK_TRANSPOSE ? ks[i].count : 0;
        s.conv += k == LK_CONV ? ks[i].total_ns : 0;
    }
    return s;
}

/* The transposes, then the convolutions, by total time. */
static gp_status evidence(const struct rules_ctx *c, struct rules_out *o, int64_t all)
{
    size_t n, rows = 0;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(c->a, &n);
    rules_cols(o, 4, cols);
    for (int want = LK_TRANSPOSE; want <= LK_CONV; want++)
        for (size_t i = 0; i < n && rows < 6; i++) {
            if ((int)kind_of(gp_trace_str(c->t, ks[i].name)) != want)
                continue;
            rows++;
            GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, ks[i].name)},
                                            {(double)ks[i].count, NULL},
                                            {(double)ks[i].total_ns / 1e3, NULL},
                                            {100.0 * (double)ks[i].total_ns / (double)all, NULL}}));
        }
    return GP_OK;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, double share)
{
    if (c->cfg.rc.trainer) {
        GP_TRY(rules_knob(o, "--channels-last"));
        return rules_reco(o,
                          "cuDNN transposes the convolutions' NCHW tensors to NHWC and back "
                          "around its Tensor Core kernels: %.1f%% of kernel time. "
                          "--channels-last keeps the CNN's activations in NHWC "
                          "(model.to(memory_format=torch.channels_last) in PyTorch).",
                          share);
    }
    GP_TRY(rules_knob(o, "model.to(memory_format=torch.channels_last); "
                         "input.to(memory_format=torch.channels_last)"));
    return rules_reco(o,
                      "cuDNN transposes the convolutions' NCHW tensors to NHWC and back around "
                      "its Tensor Core kernels: %.1f%% of kernel time. Convert the model and "
                      "its inputs to channels_last (model.to(memory_format=torch."
                      "channels_last), the same for each batch); the bundled trainer's flag is "
                      "--channels-last.",
                      share);
}

gp_status rules_channels_last(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int major = rules_compute_major(c);
    if (major < 7)
        return rules_summary_no_tensor_cores(o, major);
    struct layout_sums s = sum_kernels(c);
    double share = s.all ? 100.0 * (double)s.transpose / (double)s.all : 0;
    rules_measure(o, "nchw_transpose_share", GP_UNIT_PCT, share, ">=", p[WARN_PCT], p[CRIT_PCT]);
    if (s.conv == 0) /* transposes without convolutions: not the layout of a CNN */
        rules_fire(o, GP_SEV_OK, p[WARN_PCT]);
    size_t steps = c->n_all_steps ? c->n_all_steps : 1; /* kernel stats span every step */
    GP_TRY(rules_summary(o,
                         "NCHW<->NHWC transposes %.1f%% of kernel time (%.0f a step), "
                         "convolutions %.1f%%",
                         share, (double)s.n_transpose / (double)steps,
                         s.all ? 100.0 * (double)s.conv / (double)s.all : 0));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    GP_TRY(evidence(c, o, s.all));
    GP_TRY(rules_gain(o, s.transpose, s.transpose / (int64_t)steps,
                      "GPU time: the transposes channels_last removes"));
    return advise(c, o, share);
}
