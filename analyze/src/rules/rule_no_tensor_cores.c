/* GT13 no_tensor_cores: GEMM/conv kernels that are not Tensor Core kernels (by name, tb_plugin's
 * list plus newer cuBLAS/CUTLASS spellings) on a GPU with Tensor Cores (compute capability >= 7),
 * when no kernel uses them. Anchors: tb_plugin R6, XProf 16-bit share < 10 %, Tuning Guide AMP. */
#include "rules/rules_int.h"

#include <math.h>
#include <string.h>

enum { GEMM_PCT, SPEEDUP, SPEEDUP_SM80 };
/* From sm_80 on, TF32 Tensor Cores have 8x the fp32 peak and bf16 16x; on an H200 an fp32 MLP
 * of 4096-wide layers (TF32 off, its GEMMs 97% of kernel time) ran 7.1x faster under bf16
 * autocast (15.3 -> 2.15 ms a step, bench/gpu_torch_cases.py): 4x is the smaller fix's (TF32)
 * at half its peak. */
static const gp_rule_param params[] = {
        {"gemm_pct", 10, "non-Tensor-Core GEMM/conv share of kernel time that fires"},
        {"speedup", 2,
         "assumed Tensor Core speed-up of those kernels before sm_80 (Tuning Guide: up "
         "to 3x)"},
        {"speedup_sm80", 4,
         "the same from sm_80 on (TF32 8x, bf16 16x the fp32 peak; an fp32 MLP "
         "ran 7.1x faster under bf16 on an H200)"},
};
RULES_INFO(no_tensor_cores, "GT13", "no Tensor Core kernels", 0, RULES_NEEDS_GPU | RULES_READS_GPU);

static const gp_evidence_col cols[] = {{"kernel", GP_UNIT_TEXT},
                                       {"calls", GP_UNIT_COUNT},
                                       {"total", GP_UNIT_US},
                                       {"share of kernel time", GP_UNIT_PCT}};

/* Sum kernel time by class; kernel stats come sorted by total time. */
static void classify(struct rules_ctx *c, int64_t *all, int64_t *tc, int64_t *fp)
{
    size_t n;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(c->a, &n);
    *all = *tc = *fp = 0;
    for (size_t i = 0; i < n; i++) {
        gp_event e = {.kind = GP_EV_KERNEL, .name = ks[i].name};
        enum rules_name_class k = rules_name_class(c, &e);
        *all += ks[i].total_ns;
        *tc += k == RULES_NC_TC ? ks[i].total_ns : 0;
        *fp += k == RULES_NC_GEMM_FP ? ks[i].total_ns : 0;
    }
}

static gp_status evidence(struct rules_ctx *c, struct rules_out *o, int64_t all)
{
    size_t n, rows = 0;
    const gp_kernel_stat *ks = gp_analysis_kernel_stats(c->a, &n);
    rules_cols(o, 4, cols);
    for (size_t i = 0; i < n && rows < 5; i++) {
        gp_event e = {.kind = GP_EV_KERNEL, .name = ks[i].name};
        if (rules_name_class(c, &e) != RULES_NC_GEMM_FP)
            continue;
        rows++;
        GP_TRY(rules_row(o, (gp_cell[]){{0, gp_trace_str(c->t, ks[i].name)},
                                        {(double)ks[i].count, NULL},
                                        {(double)ks[i].total_ns / 1e3, NULL},
                                        {100.0 * (double)ks[i].total_ns / (double)all, NULL}}));
    }
    return GP_OK;
}

static gp_status advise(const struct rules_ctx *c, struct rules_out *o, int major, double share)
{
    const char *dtype = major >= 8 ? "bf16" : "fp16";
    if (c->cfg.rc.trainer) {
        GP_TRY(rules_knob(o, "--amp %s", dtype));
        return rules_reco(o,
                          "No Tensor Core kernels while fp32 GEMM/conv take %.1f%% of GPU "
                          "time. --amp %s runs them on Tensor Cores (you ran --amp %s).",
                          share, dtype, c->cfg.rc.amp ? c->cfg.rc.amp : "off");
    }
    GP_TRY(rules_knob(o, "torch.autocast('cuda', dtype=torch.%s)",
                      major >= 8 ? "bfloat16" : "float16"));
    return rules_reco(o,
                      "No Tensor Core kernels while fp32 GEMM/conv take %.1f%% of GPU time. "
                      "Enable AMP (torch.autocast, bf16 or fp16 with GradScaler) or TF32 "
                      "(torch.backends.cuda.matmul.allow_tf32 = True); use channels_last for "
                      "convolutions and sizes that are multiples of 8.",
                      share);
}

gp_status rules_no_tensor_cores(struct rules_ctx *c, const double *p, struct rules_out *o)
{
    int major = rules_compute_major(c);
    int64_t all, tc, fp;
    if (major < 7)
        return rules_summary_no_tensor_cores(o, major);
    classify(c, &all, &tc, &fp);
    double share = all ? 100.0 * (double)fp / (double)all : 0;
    rules_measure(o, "fp32_gemm_share", GP_UNIT_PCT, share, ">=", p[GEMM_PCT], INFINITY);
    if (tc > 0)
        rules_fire(o, GP_SEV_OK, p[GEMM_PCT]);
    GP_TRY(rules_summary(o, "Tensor Core kernels %.1f%% of kernel time, other GEMM/conv %.1f%%",
                         all ? 100.0 * (double)tc / (double)all : 0, share));
    if (o->f.severity == GP_SEV_OK)
        return GP_OK;
    GP_TRY(evidence(c, o, all));
    double x = major >= 8 ? p[SPEEDUP_SM80] : p[SPEEDUP];
    double saved = (double)fp * (1.0 - 1.0 / (x > 1 ? x : 1));
    size_t steps = c->n_all_steps ? c->n_all_steps : 1;
    int64_t step = (int64_t)(saved / (double)steps), cap = rules_gpu_fix_cap_ns(c);
    step = step < cap ? step : cap;
    GP_TRY(rules_gain(o, step * (int64_t)steps, step,
                      "GPU time, if those kernels ran %.1fx faster on Tensor Cores, down to the "
                      "host's own work in the step",
                      x));
    return advise(c, o, major, share);
}
