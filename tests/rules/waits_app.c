/* waits_app.c: a libprof program for tests/rules/check_step_waits.py. Each of STEPS steps
 * (gp_prof_step) does SPIN_US of CPU work (counted on the thread's CPU clock, so a step's work
 * is the same however long it waits for a core); with EVERY > 0, one step in EVERY also sleeps
 * PAUSE_MS (a periodic stall of the program: a checkpoint, an evaluation). No ranges: the
 * steps' own args are all the trace says of the cores.
 * usage: waits_app OUT STEPS SPIN_US [EVERY PAUSE_MS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gp/prof.h"

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile uint64_t sink;

static void spin(int64_t ns)
{
    int64_t end = thread_cpu_ns() + ns;
    uint64_t x = sink;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    sink = x;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: waits_app OUT STEPS SPIN_US [EVERY PAUSE_MS]\n");
        return 2;
    }
    long steps = atol(argv[2]), spin_us = atol(argv[3]);
    long every = argc == 6 ? atol(argv[4]) : 0, ms = argc == 6 ? atol(argv[5]) : 0;
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = argv[1];
    o.wait_when_full = 1;
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        fprintf(stderr, "waits_app: %s: %s\n", gp_strerror(err.code), err.msg);
        return 1;
    }
    for (long n = 0; n < steps; n++) {
        gp_prof_step();
        spin(spin_us * 1000);
        if (every > 0 && n % every == every - 1)
            pause_ms(ms);
    }
    gp_prof_step_end();
    return gp_prof_shutdown(&err) == GP_OK ? 0 : 1;
}
