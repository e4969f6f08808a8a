/* rules_host_wait.c: how far a fix of the GPU's work alone can shorten a step. Without the
 * profiler a step is no shorter than the host's own work in it: its step range less the time it
 * was blocked in syncs (device, stream, event: loss.item(), cudaDeviceSynchronize), less the
 * profiler's own cost. A faster GPU shortens the step down to that, no further. On an H100
 * (bench/gpu_torch_cases.py) an fp32 MLP whose host did 1.5 ms of CPU work and read the loss each
 * step had GT13 at 0-44% of its step for bf16 autocast, which gained -2%: the host, net of the
 * profiler, was busy 2.85 of its 3.0 ms. An fp32 MLP the GPU paces (its host ran 3.5 ms steps
 * ahead of 15 ms of GPU work) keeps its 79% (bf16 gained 79-86%). */
#include "rules/rules_int.h"

int rules_sync_blocks_host(const gp_sync *s)
{
    return !s->gpu_side &&
           (s->kind == GP_SYNC_DEVICE || s->kind == GP_SYNC_STREAM || s->kind == GP_SYNC_EVENT);
}

/* The host steps' ranges less their blocking syncs, per analysed step. */
static int64_t host_busy_step(const struct rules_ctx *c)
{
    size_t n;
    int64_t busy = 0;
    const gp_sync *s = gp_analysis_syncs(c->a, &n);
    for (size_t k = 0; k < c->n_steps; k++)
        busy += c->steps[k].host_end - c->steps[k].host_ts;
    for (size_t i = 0; i < n; i++)
        if (rules_sync_blocks_host(&s[i]) && rules_step_of(c, s[i].event) >= 0)
            busy -= s[i].dur;
    return busy > 0 ? busy / (int64_t)c->n_steps : 0;
}

int64_t rules_unprofiled_step_ns(struct rules_ctx *c)
{
    if (!c->n_steps || rules_ctx_intervals(c) != GP_OK)
        return 0;
    int64_t n = (int64_t)c->n_steps;
    return rules_unprofiled(c->step_ns / n, c->cost.per_step_ns,
                            rules_ivs_in_steps(c, &c->busy) / n);
}

int64_t rules_gpu_fix_cap_ns(struct rules_ctx *c)
{
    if (!c->n_steps)
        return 0;
    int64_t host = host_busy_step(c) - c->cost.per_step_ns;
    int64_t left = rules_unprofiled_step_ns(c) - (host > 0 ? host : 0);
    return left > 0 ? left : 0;
}
