/* run_config.c: the one decoder of the "gprof" object (gp/run_config.h). */
#include "gp/run_config.h"
#include "gp/trace_schema.h"

#include <string.h>

static const char *str_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    return v && v->type == GP_KV_STRING ? v->str : NULL;
}

static gp_cfg_num num_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    if (v && (v->type == GP_KV_INT || v->type == GP_KV_DOUBLE))
        return (gp_cfg_num){1, v->i};
    return (gp_cfg_num){0, 0};
}

static gp_cfg_switch switch_of(const gp_kv *kv, size_t n, const char *key)
{
    const gp_kv *v = gp_kv_find(kv, n, key);
    if (v && (v->type == GP_KV_BOOL || v->type == GP_KV_INT))
        return v->i ? GP_CFG_ON : GP_CFG_OFF;
    return GP_CFG_UNKNOWN;
}

/* A ledger count: 0 when absent (the ledger is known when its first member is there). */
static int64_t count_of(const gp_kv *kv, size_t n, const char *key)
{
    gp_cfg_num v = num_of(kv, n, key);
    return v.known && v.v > 0 ? v.v : 0;
}

/* A number that is 0 or less when its writer could not measure it: unknown then. */
static gp_cfg_num pos_of(const gp_kv *kv, size_t n, const char *key)
{
    gp_cfg_num v = num_of(kv, n, key);
    return v.known && v.v > 0 ? v : (gp_cfg_num){0, 0};
}

/* One line per key of GP_TRACE_CONFIG_KEYS, by its KIND (gp/trace_schema.h). */
#define DECODE_STR(f, key)    out->f = str_of(kv, n, key);
#define DECODE_NUM(f, key)    out->f = num_of(kv, n, key);
#define DECODE_POS(f, key)    out->f = pos_of(kv, n, key);
#define DECODE_SWITCH(f, key) out->f = switch_of(kv, n, key);
#define DECODE_COUNT(f, key)  out->health.f = count_of(kv, n, key);
#define DECODE_LIST(f, key)
#define DECODE(macro, kind, field, writer, doc) DECODE_##kind(field, macro)

void gp_run_config_read(const gp_trace *t, gp_run_config *out)
{
    size_t n, nd;
    const gp_kv *kv = gp_trace_config(t, &n);
    memset(out, 0, sizeof(*out));
    GP_TRACE_CONFIG_KEYS(DECODE)
    out->trainer = out->producer ? strcmp(out->producer, "trainer") == 0 : out->model != NULL;
    out->health.known = num_of(kv, n, GP_CFG_H_CPU_RANGES).known;
    const gp_device_props *dp = gp_trace_devices(t, &nd);
    if (nd > 0 && dp[0].total_global_mem > 0)
        out->device_memory = (gp_cfg_num){1, dp[0].total_global_mem};
}
