/* waits_app.c: a libprof program for tests/rules/check_step_waits.py. Each of STEPS steps
 * (gp_prof_step) does SPIN_US of CPU work (counted on the thread's CPU clock, so a step's work
 * is the same however long it waits for a core); with EVERY > 0, one step in EVERY also sleeps
 * PAUSE_MS (a periodic stall of the program: a checkpoint, an evaluation). No ranges: the
 * steps' own args are all the trace says of the cores.
 * usage: waits_app OUT STEPS SPIN_US [EVERY PAUSE_MS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rules_app.h"

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: waits_app OUT STEPS SPIN_US [EVERY PAUSE_MS]\n");
        return 2;
    }
    long steps = atol(argv[2]), spin_us = atol(argv[3]);
    long every = argc == 6 ? atol(argv[4]) : 0, ms = argc == 6 ? atol(argv[5]) : 0;
    if (start_profiler("waits_app", argv[1]) != 0)
        return 1;
    for (long n = 0; n < steps; n++) {
        gp_prof_step();
        spin(spin_us * 1000);
        if (every > 0 && n % every == every - 1)
            pause_ms(ms);
    }
    gp_prof_step_end();
    return gp_prof_shutdown(NULL) == GP_OK ? 0 : 1;
}
