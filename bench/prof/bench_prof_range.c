/* bench_prof_range.c: cost of one range push+pop on the hot path, next to a loop that does the
 * same work without recording (two clock reads and a store per iteration), in one run: a steady
 * loop, then bursts of 10 K, 100 K and 1 M ranges after an idle period (the writer has drained
 * and the thread's chain must grow again), through the linked API and, where NVTX3's headers
 * are, through NVTX (a program linking libprof has NVTX injected into it).
 * usage: bench_prof_range [ITERATIONS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gp/prof.h"

#ifdef GP_BENCH_NVTX
#    include <nvtx3/nvToolsExt.h>
#endif

#if defined(__x86_64__)
#    include <x86intrin.h>
#endif

/* The loops are timed in the thread's CPU time (user and system: page faults of new blocks
 * count), so a loop waiting for a core on a shared machine is not a range's cost. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile long long sink;

/* The work push+pop does minus the recording: read the clock twice, keep the result. */
static double baseline(long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_REALTIME, &a);
        clock_gettime(CLOCK_REALTIME, &b);
        sink += (b.tv_nsec - a.tv_nsec) + i;
    }
    return (now_s() - t0) / n * 1e9;
}

/* The same with the TSC, libprof's tick source on x86-64. */
static double baseline_tsc(long n)
{
#if defined(__x86_64__)
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        unsigned long long a = __rdtsc(), b = __rdtsc();
        sink += (long long)(b - a) + i;
    }
    return (now_s() - t0) / n * 1e9;
#else
    return baseline(n);
#endif
}

static double ranges(long n, gp_prof_name name)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        gp_prof_push(name);
        gp_prof_pop();
    }
    return (now_s() - t0) / n * 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double nvtx_ranges(long n)
{
#ifdef GP_BENCH_NVTX
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("bench");
        nvtxRangePop();
    }
    return (now_s() - t0) / n * 1e9;
#else
    (void)n;
    return 0.0;
#endif
}

static void idle(void)
{
    struct timespec pause = {0, 300000000}; /* the writer drains and hands blocks back */
    nanosleep(&pause, NULL);
}

/* Bursts after an idle period: the median of 5 of each size, as a ratio to the clock loop. */
static void bursts(gp_prof_name name, double clock_ns)
{
    static const long sizes[] = {10000, 100000, 1000000};
    for (int via = 0; via < 2; via++) {
#ifndef GP_BENCH_NVTX
        if (via == 1)
            break;
#endif
        for (int s = 0; s < 3; s++) {
            double t[5];
            for (int k = 0; k < 5; k++) {
                idle();
                t[k] = via ? nvtx_ranges(sizes[s]) : ranges(sizes[s], name);
            }
            qsort(t, 5, sizeof(double), cmp);
            printf("  burst of %7ld after idle, %s: %.1f ns, ratio %.2fx to the clock loop\n",
                   sizes[s], via ? "NVTX      " : "linked API", t[2], t[2] / clock_ns);
        }
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    gp_prof_name name = gp_prof_intern("bench");
    double off = ranges(n, name); /* no session: the disabled cost */
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/dev/null";
    o.gzip = GP_PROF_GZIP_OFF;
    o.buffer_bytes = (size_t)n * 2 * 32; /* room for a whole trial: time the append alone */
    o.handle_signals = 0;
    if (gp_prof_init(&o, NULL) != GP_OK) {
        fprintf(stderr, "bench_prof_range: cannot start a session\n");
        return 1;
    }
    enum { TRIALS = 7 };
    double base[TRIALS], tsc[TRIALS], rec[TRIALS], nv[TRIALS];
    nvtx_ranges(1000); /* NVTX's own initialisation, outside the timing */
    for (int t = 0; t < TRIALS; t++) {
        base[t] = baseline(n);
        tsc[t] = baseline_tsc(n);
        rec[t] = ranges(n, name);
        idle();
        nv[t] = nvtx_ranges(n);
        idle();
    }
    qsort(base, TRIALS, sizeof(double), cmp);
    qsort(rec, TRIALS, sizeof(double), cmp);
    qsort(tsc, TRIALS, sizeof(double), cmp);
    qsort(nv, TRIALS, sizeof(double), cmp);
    double b = base[TRIALS / 2], r = rec[TRIALS / 2], k = tsc[TRIALS / 2], v = nv[TRIALS / 2];
    printf("range push+pop (median of %d x %ld): %.1f ns  [target <= 40 ns: %s]\n", TRIALS, n, r,
           r <= 40 ? "ok" : "MISSED");
    printf("  vs a clock-only loop (2 tick reads, libprof's clock: rdtsc on x86-64): %.1f ns; "
           "ratio %.2fx; recording adds %.1f ns\n",
           k, r / k, r - k);
    printf("  vs a loop of 2 clock_gettime(CLOCK_REALTIME): %.1f ns; ratio %.2fx\n", b, r / b);
    printf("  push+pop with no session running: %.1f ns\n", off);
#ifdef GP_BENCH_NVTX
    printf("NVTX push+pop (injected, median of %d x %ld): %.1f ns; ratio %.2fx to the clock loop "
           "[goal <= 2.5x]\n",
           TRIALS, n, v, v / k);
#else
    (void)v;
#endif
    printf("bursts [goal: linked <= 1.6x, NVTX <= 2.5x]:\n");
    bursts(name, k);
    gp_prof_shutdown(NULL);
    return 0;
}
