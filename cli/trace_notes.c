/* What a trace says was lost or left unfinished, as warning lines for report, diagnose, export
 * and run: an incomplete trace (a program that died), records the profiler dropped, and the
 * profiler's own warnings (unbalanced pops, ranges nested too deep). */
#include "trace_jobs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void add(struct trace_warnings *w, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void add(struct trace_warnings *w, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    char **v = realloc(w->v, (w->n + 1) * sizeof(*v));
    if (!v)
        return;
    w->v = v;
    if ((v[w->n] = strdup(buf)) != NULL)
        w->n++;
}

/* "2026-11-24 00:19:05.123 UTC, " for an absolute time in ns, else "". */
static void wall_time(char *buf, size_t cap, int64_t ns)
{
    buf[0] = '\0';
    if (ns < 1000000000LL * 1000000000LL) /* before 2001: not a wall-clock time */
        return;
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    char day[32];
    if (!gmtime_r(&s, &tm) || !strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm))
        return;
    snprintf(buf, cap, "%s.%03d UTC, ", day, (int)(ns / 1000000 % 1000));
}

static void incomplete(struct trace_warnings *w, const gp_trace *t)
{
    const gp_trace_info *in = gp_trace_get_info(t);
    if (in->n_events == 0) {
        add(w, "incomplete: the program ended before any event was written (the trace holds "
               "only its header)");
        return;
    }
    char when[64];
    wall_time(when, sizeof(when), in->base_time_ns + in->ts_max);
    add(w,
        "incomplete: the program ended at %s%.2f s into the trace (%llu events kept); it was "
        "killed, crashed or is still running, so its last moments are missing",
        when, (double)(in->ts_max - in->ts_min) / 1e9, (unsigned long long)in->n_events);
}

void trace_notes_add(struct trace_warnings *w, const gp_trace *t)
{
    const gp_trace_quality *q = gp_trace_get_quality(t);
    if (q->incomplete)
        incomplete(w, t);
    if (q->dropped_cpu)
        add(w,
            "the profiler dropped %llu CPU records (%.1f%% of the CPU ranges): raise its memory "
            "limit with gprof-train run --buffer-limit SIZE or GP_PROF_BUFFER_LIMIT",
            (unsigned long long)q->dropped_cpu, gp_trace_dropped_pct(q->dropped_cpu, q->n_cpu));
    if (q->dropped_gpu)
        add(w, "the profiler dropped %llu GPU activity records (%.1f%% of the GPU activity)",
            (unsigned long long)q->dropped_gpu, gp_trace_dropped_pct(q->dropped_gpu, q->n_gpu));
    if (q->dropped_other)
        add(w, "the profiler dropped %llu records", (unsigned long long)q->dropped_other);
    for (size_t i = 0; i < q->n_warnings; i++)
        if (!strstr(q->warnings[i], "record(s) dropped")) /* said above, with the share */
            add(w, "profiler: %s", q->warnings[i]);
}
