/* rules_app.h: what the libprof test programs (waits_app.c, shapes_app.c) share: starting the
 * profiler, CPU work and sleeps. */
#ifndef GP_TESTS_RULES_APP_H
#define GP_TESTS_RULES_APP_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "gp/prof.h"

/* Profile into `out`, never dropping records. @return 0, or 1 having said why (as `app`). */
static inline int start_profiler(const char *app, const char *out)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = out;
    o.wait_when_full = 1;
    gp_error err;
    if (gp_prof_init(&o, &err) == GP_OK)
        return 0;
    fprintf(stderr, "%s: %s: %s\n", app, gp_strerror(err.code), err.msg);
    return 1;
}

static inline int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* `ns` of work on the thread's CPU clock: the same work however long it waits for a core. */
static inline void spin(int64_t ns)
{
    static volatile uint64_t sink;
    int64_t end = thread_cpu_ns() + ns;
    uint64_t x = sink;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
}

static inline void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

#endif
