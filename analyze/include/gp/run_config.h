/* gp/run_config.h: the run configuration a trace carries (the "gprof" object libprof and the
 * trainer write), typed. Every field can be unknown, and says so: a PyTorch trace carries none
 * of them, a program under `run -- CMD` only some. One decoder for every reader (the rules, the
 * trace-quality checks, the report). */
#ifndef GP_RUN_CONFIG_H
#define GP_RUN_CONFIG_H

#include "gp/trace.h"
#include "gp/trace_schema.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A switch the trace may not state. */
typedef enum gp_cfg_switch { GP_CFG_UNKNOWN = -1, GP_CFG_OFF = 0, GP_CFG_ON = 1 } gp_cfg_switch;

/** A number the trace may not state: `known` 0 means absent (or not a number), never 0 or -1. */
typedef struct gp_cfg_num {
    int known;
    int64_t v;
} gp_cfg_num;

/* One member per key of GP_TRACE_CONFIG_KEYS (gp/trace_schema.h, where each is documented), by
 * its KIND: STR a string, NUM and POS a gp_cfg_num, SWITCH a gp_cfg_switch, COUNT a member of
 * gp_capture_health; LIST none. */
#define GP_RC_MEMBER_STR(f)    const char *f;
#define GP_RC_MEMBER_NUM(f)    gp_cfg_num f;
#define GP_RC_MEMBER_POS(f)    gp_cfg_num f;
#define GP_RC_MEMBER_SWITCH(f) gp_cfg_switch f;
#define GP_RC_MEMBER_COUNT(f)
#define GP_RC_MEMBER_LIST(f)
#define GP_RC_MEMBER(macro, kind, field, writer, doc) GP_RC_MEMBER_##kind(field)
#define GP_RC_HEALTH_STR(f)
#define GP_RC_HEALTH_NUM(f)
#define GP_RC_HEALTH_POS(f)
#define GP_RC_HEALTH_SWITCH(f)
#define GP_RC_HEALTH_COUNT(f) int64_t f;
#define GP_RC_HEALTH_LIST(f)
#define GP_RC_HEALTH(macro, kind, field, writer, doc) GP_RC_HEALTH_##kind(field)

/** libprof's capture-health ledger (the "health_*" members, per session); `known` 0 for a trace
 * without one (PyTorch's, or libprof's before it). Counts and ns, 0 when absent. */
typedef struct gp_capture_health {
    int known;
    GP_TRACE_CONFIG_KEYS(GP_RC_HEALTH)
} gp_capture_health;

/** The "gprof" object, typed: strings are valid until gp_trace_free. device_memory is the
 * trace's device properties' when it has them, else the key's. */
typedef struct gp_run_config {
    /** The bundled trainer wrote the trace (producer "trainer", or a model named without a
     * producer, as older traces were): its knobs are `gprof-train run` flags. */
    int trainer;
    GP_TRACE_CONFIG_KEYS(GP_RC_MEMBER)
    gp_capture_health health;
} gp_run_config;

/** Decode `t`'s "gprof" object (and its device properties, for device_memory) into `out`. A key
 * of the wrong type is unknown, not an error.
 * @param t the trace; the strings of `out` are borrowed from it (valid until gp_trace_free).
 * @param out filled in full (required; every field unknown for a trace without the object). */
void gp_run_config_read(const gp_trace *t, gp_run_config *out);

#ifdef __cplusplus
}
#endif
#endif
