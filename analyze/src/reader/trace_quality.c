/* What a trace says about its own trustworthiness: the records libprof dropped (CPU and GPU),
 * its warnings (unbalanced pops, ranges nested too deep), and whether it was finished
 * ("complete": false in a .tmp left by a program that died), next to the events actually read. */
#include "reader/json_lex.h"
#include "reader/trace_int.h"

#include "gp/run_config.h"
#include "gp/trace_schema.h"

/* A count the trace states, 0 when absent or not positive. */
static uint64_t count_of(gp_cfg_num v)
{
    return v.known && v.v > 0 ? (uint64_t)v.v : 0;
}

/* The header's "warnings": a JSON array of strings, copied into the arena. */
static gp_status decode_warnings(gp_trace *t, const char *s)
{
    json_lex l;
    json_lex_init(&l);
    l.p = s;
    l.end = s + strlen(s);
    l.eof = 1;
    int more = json_lex_ws(&l) == '[';
    gp_status rc = GP_OK;
    if (more && (l.p++, json_lex_ws(&l) == ']'))
        more = 0;
    while (more && rc == GP_OK && json_lex_ws(&l) == '"') {
        const char *w;
        size_t n;
        if (json_lex_string(&l, &w, &n) != GP_OK)
            break;
        const char **slot = trace_vec_push(&t->quality_warnings);
        if (!slot || !(*slot = trace_arena_strdup(&t->arena, w, n)))
            rc = GP_ENOMEM;
        if (json_lex_next(&l, ']', "',' or ']'", &more) != GP_OK)
            break;
    }
    json_lex_release(&l);
    return rc;
}

static int is_gpu_kind(unsigned kind)
{
    switch (kind) {
    case GP_EV_GPU_USER_ANNOTATION:
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
    case GP_EV_KERNEL:
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
    case GP_EV_SYNC:
    case GP_EV_CUDA_EVENT:
    case GP_EV_MEMORY:
    case GP_EV_OVERHEAD:
        return 1;
    default:
        return 0;
    }
}

gp_status trace_quality_compute(gp_trace *t)
{
    gp_trace_quality *q = &t->quality;
    size_t n;
    const gp_kv *kv = gp_trace_config(t, &n);
    gp_run_config rc;
    gp_run_config_read(t, &rc);
    q->incomplete = t->info.truncated || rc.complete == GP_CFG_OFF;
    q->dropped_cpu = count_of(rc.dropped_cpu);
    q->dropped_gpu = count_of(rc.dropped_gpu);
    uint64_t all = count_of(rc.dropped_records);
    q->dropped_other =
            all > q->dropped_cpu + q->dropped_gpu ? all - q->dropped_cpu - q->dropped_gpu : 0;
    for (size_t i = 0; i < t->n_events; i++) {
        unsigned k = t->events[i].kind;
        if (is_gpu_kind(k))
            q->n_gpu++;
        else if (k != GP_EV_TRACE_SPAN)
            q->n_cpu++;
    }
    const gp_kv *w = gp_kv_find(kv, n, GP_CFG_WARNINGS);
    if (w && w->type == GP_KV_JSON && decode_warnings(t, w->str) != 0)
        return GP_ENOMEM;
    q->warnings = (const char *const *)t->quality_warnings.data;
    q->n_warnings = t->quality_warnings.n;
    return GP_OK;
}

const gp_trace_quality *gp_trace_get_quality(const gp_trace *t)
{
    return &t->quality;
}

double gp_trace_dropped_pct(uint64_t dropped, uint64_t kept)
{
    return dropped ? 100.0 * (double)dropped / ((double)dropped + (double)kept) : 0.0;
}
