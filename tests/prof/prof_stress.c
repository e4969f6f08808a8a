/* prof_stress.c: capture under stress, for tests/prof/test_prof_capture.py. Default options
 * throughout (records are dropped only past the memory limit), one mode a run:
 *   nest OUT THREADS ITERS   THREADS threads nest three ranges ITERS times, yielding the CPU
 *                            inside (so threads migrate between CPUs mid-range)
 *   tight OUT N              one thread records N ranges in a tight loop
 *   many OUT N               N threads alive at once, 10 ranges each
 *   seq OUT N                N short-lived threads one after another, one range each
 *   die OUT HOW              records ranges, then after 1.5 s dies by HOW: kill (SIGKILL),
 *                            segv, abort, _exit, hup (SIGHUP); prints each range's end as it goes
 * Prints one JSON line: what was recorded and the process's peak RSS. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gp/prof.h"

static long iters;
static double range_ns; /* tight: the thread's CPU time per push/pop pair */
static pthread_barrier_t all_alive;

static void start(const char *out)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = out;
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        fprintf(stderr, "prof_stress: %s\n", err.msg);
        exit(1);
    }
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void *nest_worker(void *arg)
{
    (void)arg;
    gp_prof_name outer = gp_prof_intern("outer"), mid = gp_prof_intern("mid");
    gp_prof_name leaf = gp_prof_intern("leaf");
    for (long i = 0; i < iters; i++) {
        gp_prof_push(outer);
        gp_prof_push(mid);
        if (i % 64 == 0)
            sched_yield();
        gp_prof_push(leaf);
        gp_prof_pop();
        gp_prof_pop();
        gp_prof_pop();
    }
    return NULL;
}

static void *many_worker(void *arg)
{
    (void)arg;
    gp_prof_name n = gp_prof_intern("short");
    for (int i = 0; i < 10; i++) {
        gp_prof_push(n);
        gp_prof_pop();
    }
    pthread_barrier_wait(&all_alive);
    return NULL;
}

static void *seq_worker(void *arg)
{
    (void)arg;
    gp_prof_push(gp_prof_intern("once"));
    gp_prof_pop();
    return NULL;
}

/* Start `n` threads running `fn` (all at once, or each joined before the next). @return 0. */
static int run_threads(long n, void *(*fn)(void *), int one_by_one)
{
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    for (long i = 0; i < n; i++) {
        if (!th || pthread_create(&th[i], &attr, fn, NULL) != 0) {
            fprintf(stderr, "prof_stress: cannot start thread %ld\n", i);
            exit(1);
        }
        if (one_by_one)
            pthread_join(th[i], NULL);
    }
    for (long i = 0; i < n && !one_by_one; i++)
        pthread_join(th[i], NULL);
    pthread_attr_destroy(&attr);
    free(th);
    return 0;
}

/* Seconds on `clock`: REALTIME for when a process died, the thread's CPU time for the tight loop
 * (waiting for a core on a busy machine is not a range's cost: prof_capture_tight compared wall
 * time and failed while a second test suite ran beside it). */
static double clock_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_REALTIME);
}

/* Record ranges ("work", 1 ms each) for 1.5 s, then die by `how` without shutting down. */
static int mode_die(const char *how)
{
    gp_prof_name work = gp_prof_intern("work");
    double t0 = now_s();
    long n = 0;
    while (now_s() - t0 < 1.5) {
        gp_prof_push(work);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        gp_prof_pop();
        n++;
    }
    printf("{\"ranges\":%ld,\"died_at\":%.6f}\n", n, now_s());
    fflush(stdout);
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(how, "hup") == 0)
        raise(SIGHUP);
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "_exit") == 0)
        _exit(3);
    if (strcmp(how, "segv") == 0)
        raise(SIGSEGV); /* as a wild pointer would, without undefined behaviour in the test */
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: prof_stress nest|tight|many|seq|die OUT N|HOW [ITERS]\n");
        return 2;
    }
    const char *mode = argv[1];
    long n = atol(argv[3]);
    long rss_before = peak_rss_kb();
    start(argv[2]);
    if (strcmp(mode, "nest") == 0) {
        iters = argc > 4 ? atol(argv[4]) : 1000;
        run_threads(n, nest_worker, 0);
    } else if (strcmp(mode, "tight") == 0) {
        gp_prof_name r = gp_prof_intern("tight");
        double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        for (long i = 0; i < n; i++) {
            gp_prof_push(r);
            gp_prof_pop();
        }
        range_ns = n > 0 ? (clock_s(CLOCK_THREAD_CPUTIME_ID) - t0) * 1e9 / (double)n : 0;
    } else if (strcmp(mode, "many") == 0) {
        pthread_barrier_init(&all_alive, NULL, (unsigned)n);
        run_threads(n, many_worker, 0);
    } else if (strcmp(mode, "die") == 0) {
        return mode_die(argv[3]);
    } else if (strcmp(mode, "seq") == 0) {
        run_threads(n, seq_worker, 1);
    } else {
        fprintf(stderr, "prof_stress: unknown mode '%s'\n", mode);
        return 2;
    }
    gp_error err;
    if (gp_prof_shutdown(&err) != GP_OK) {
        fprintf(stderr, "prof_stress: %s\n", err.msg);
        return 1;
    }
    printf("{\"mode\":\"%s\",\"n\":%ld,\"iters\":%ld,\"rss_before_kb\":%ld,\"peak_rss_kb\":%ld,"
           "\"range_ns\":%.1f}\n",
           mode, n, iters, rss_before, peak_rss_kb(), range_ns);
    return 0;
}
