/* shapes_app.c: a libprof program for tests/rules/check_shapes_app.py, shaped like the bundled
 * trainer's loop: each step (gp_prof_step) takes the next batch of an epoch of EPOCH samples
 * (the epoch's last batch holds what is left), records its size as the trainer does (the
 * batch_size counter), and runs "forward" and "backward" ranges of US_PER_SAMPLE of CPU work per
 * sample each. The first time "forward" sees a batch size it first spends PLAN_MS choosing how
 * to run it, cached for later batches of that size (as cuBLAS chooses a kernel for a new shape):
 * first-time work, in the warm-up step for the full batches and once for the partial one. With
 * EVERY > 0, one step in EVERY also sleeps PAUSE_MS outside the ranges (a periodic stall: a
 * checkpoint, logging).
 * usage: shapes_app OUT STEPS EPOCH BATCH [EVERY PAUSE_MS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rules_app.h"
#include "gp/trace_schema.h"

#define US_PER_SAMPLE 15
#define PLAN_MS       150
#define MAX_SIZES     16

/* Batch sizes planned so far (the cache a first call of a new shape fills). */
static long planned[MAX_SIZES];
static int n_planned;

static void plan_once(long batch)
{
    for (int i = 0; i < n_planned; i++)
        if (planned[i] == batch)
            return;
    spin((int64_t)PLAN_MS * 1000000);
    if (n_planned < MAX_SIZES)
        planned[n_planned++] = batch;
}

static void train_step(long batch)
{
    GP_PROF_COUNTER(GP_NAME_BATCH_COUNTER, (double)batch);
    GP_PROF_PUSH(GP_NAME_FORWARD);
    plan_once(batch);
    spin(batch * US_PER_SAMPLE * 1000);
    GP_PROF_POP();
    GP_PROF_PUSH(GP_NAME_BACKWARD);
    spin(batch * US_PER_SAMPLE * 1000);
    GP_PROF_POP();
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: shapes_app OUT STEPS EPOCH BATCH [EVERY PAUSE_MS]\n");
        return 2;
    }
    long steps = atol(argv[2]), epoch = atol(argv[3]), batch = atol(argv[4]);
    long every = argc == 7 ? atol(argv[5]) : 0, ms = argc == 7 ? atol(argv[6]) : 0;
    if (start_profiler("shapes_app", argv[1]) != 0)
        return 1;
    for (long n = 0, left = epoch; n < steps; n++) {
        gp_prof_step();
        long b = left < batch ? left : batch;
        train_step(b);
        left = left - b > 0 ? left - b : epoch;
        if (every > 0 && n % every == every - 1)
            pause_ms(ms);
    }
    gp_prof_step_end();
    return gp_prof_shutdown(NULL) == GP_OK ? 0 : 1;
}
