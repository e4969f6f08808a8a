/* Level-gated logging. The sink and level are process-wide settings (the only globals
 * outside libprof's session): set them before starting threads. */
#include "gp/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

static gp_log_fn sink_fn;
static void *sink_ud;
static atomic_int level_cached = -1; /* read from the analysis threads */

int gp_log_level_parse(const char *name, gp_log_level *out)
{
    for (int i = 0; i <= GP_LOG_TRACE; i++) {
        if (name && strcmp(name, level_names[i]) == 0) {
            *out = (gp_log_level)i;
            return 0;
        }
    }
    return -1;
}

gp_log_level gp_log_level_get(void)
{
    int cached = atomic_load_explicit(&level_cached, memory_order_relaxed);
    if (cached < 0) {
        gp_log_level lv = GP_LOG_WARN;
        if (gp_log_level_parse(getenv("GP_LOG"), &lv) != 0)
            lv = GP_LOG_WARN;
        cached = (int)lv;
        atomic_store_explicit(&level_cached, cached, memory_order_relaxed);
    }
    return (gp_log_level)cached;
}

void gp_set_log_level(gp_log_level level)
{
    atomic_store_explicit(&level_cached, (int)level, memory_order_relaxed);
}

void gp_set_log_fn(gp_log_fn fn, void *ud)
{
    sink_fn = fn;
    sink_ud = ud;
}

void gp_log_write(gp_log_level level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (sink_fn) {
        sink_fn(level, line, sink_ud);
        return;
    }
    fprintf(stderr, "gprof-train: %s: %s\n", level_names[level <= GP_LOG_TRACE ? level : 4], line);
}
