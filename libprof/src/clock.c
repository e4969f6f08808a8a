/* clock.c: the hot path's tick source and its conversion to CLOCK_REALTIME ns (the clock CUPTI
 * stamps GPU records with). Ticks are TSC cycles where the TSC is invariant; the writer samples
 * (ticks, REALTIME) pairs each pass and interpolates between them, like Kineto's TSC clock. */
#include <stdlib.h>
#include <string.h>

#include "prof_int.h"

int prof_tsc;

#define N_SAMPLES 64
static int64_t s_ticks[N_SAMPLES], s_ns[N_SAMPLES];
static int n_samples; /* total taken; the last N_SAMPLES are kept */

static int cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int ok = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    if (f)
        fclose(f);
    return ok;
#else
    return 0;
#endif
}

void prof_clock_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    const char *env = getenv("GP_PROF_CLOCK");
    prof_tsc = !(env && strcmp(env, "realtime") == 0) && cpu_has_invariant_tsc();
}

/* The newest segment as fixed point (ns per tick * 2^32): nearly every record falls in it. */
static int64_t fast_t0, fast_ns0;
static uint64_t fast_scale;
static int fast_ok;

void prof_clock_sample(void)
{
    int64_t a = prof_ticks();
    int64_t ns = prof_now();
    int64_t b = prof_ticks();
    int i = n_samples % N_SAMPLES;
    s_ticks[i] = a + (b - a) / 2;
    s_ns[i] = ns;
    n_samples++;
    fast_ok = 0;
    if (n_samples >= 2) {
        int j = (i - 1 + N_SAMPLES) % N_SAMPLES;
        int64_t dt = s_ticks[i] - s_ticks[j];
        if (dt > 0 && s_ns[i] > s_ns[j]) {
            fast_t0 = s_ticks[j];
            fast_ns0 = s_ns[j];
            fast_scale = (uint64_t)(((unsigned __int128)(uint64_t)(s_ns[i] - s_ns[j]) << 32) /
                                    (uint64_t)dt);
            fast_ok = 1;
        }
    }
}

/* Linear map through samples i and j (i older). */
static int64_t through(int i, int j, int64_t ticks)
{
    double dt = (double)(s_ticks[j] - s_ticks[i]);
    double scale = dt > 0 ? (double)(s_ns[j] - s_ns[i]) / dt : 1.0;
    return s_ns[i] + (int64_t)((double)(ticks - s_ticks[i]) * scale);
}

int64_t prof_ticks_to_ns(int64_t ticks)
{
    if (!prof_tsc)
        return ticks;
    if (fast_ok && ticks >= fast_t0)
        return fast_ns0 +
               (int64_t)(((unsigned __int128)(uint64_t)(ticks - fast_t0) * fast_scale) >> 32);
    if (n_samples < 2)
        return n_samples ? s_ns[0] + (ticks - s_ticks[0]) : ticks;
    int kept = n_samples < N_SAMPLES ? n_samples : N_SAMPLES;
    int newest = (n_samples - 1) % N_SAMPLES;
    /* Records are drained soon after they are made: search from the newest segment back. */
    for (int k = 1; k < kept; k++) {
        int j = (newest - k + 1 + N_SAMPLES) % N_SAMPLES;
        int i = (newest - k + N_SAMPLES) % N_SAMPLES;
        if (ticks >= s_ticks[i] || k == kept - 1)
            return through(i, j, ticks);
    }
    return s_ns[newest];
}

void prof_clock_map(prof_tick_map *m)
{
    m->t0 = fast_t0;
    m->ns0 = fast_ns0;
    m->scale = fast_scale;
    m->mode = !prof_tsc ? PROF_MAP_IDENTITY : fast_ok ? PROF_MAP_LINEAR : PROF_MAP_CALL;
}

void prof_clock_reset(void)
{
    n_samples = 0;
    fast_ok = 0;
}
