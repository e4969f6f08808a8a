/* prof_app.c: scenarios for tests/prof/test_prof_trace.py and tests/cli/test_run_capture.py,
 * one per mode: threads (nested ranges on many threads, awkward names, config, steps), atexit
 * (no explicit shutdown), spin (records until killed), fsize (a "full disk" via RLIMIT_FSIZE),
 * unwritable, schedule, die (records for a while, then dies by a signal or _exit), tight (N
 * ranges as fast as it can, records dropped past the buffer limit). OUT "-"
 * means the generated name in $GP_PROF_OUT (as under gprof-train run). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gp/prof.h"
#include "gp/trace_schema.h"

#define N_THREADS 4
#define N_ITERS   500

static void start(const char *out, int gzip, int wait_when_full, gp_prof_schedule sched)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = strcmp(out, "-") == 0 ? NULL : out;
    o.gzip = gzip;
    o.wait_when_full = wait_when_full;
    o.schedule = sched;
    gp_error err;
    if (gp_prof_init(&o, &err) != GP_OK) {
        printf("init failed: %s: %s\n", gp_strerror(err.code), err.msg);
        exit(0); /* the host goes on; the test checks this line */
    }
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char name[32];
    snprintf(name, sizeof(name), "worker-%d", id);
    gp_prof_thread_name(name);
    gp_prof_name outer = gp_prof_intern("outer");
    gp_prof_name op = gp_prof_intern_cat("aten::mm", GP_PROF_CAT_CPU_OP);
    for (int i = 0; i < N_ITERS; i++) {
        gp_prof_push(outer);
        gp_prof_push(op);
        GP_PROF_RANGE("leaf \"q\" \\ \x01\t\xff\xc3\xa9");
        gp_prof_pop();
        gp_prof_pop();
    }
    if (id == 0)
        gp_prof_pop(); /* unbalanced: must become a warning */
    return NULL;
}

static int mode_threads(const char *out, int gzip, int explicit_shutdown)
{
    start(out, gzip, 1, (gp_prof_schedule){0, 0, 0, 0, 0});
    const char *argv[2] = {"prof_app", "--x=\"y\""};
    gp_prof_config_str(GP_CFG_MODEL, "mlp");
    gp_prof_config_int(GP_CFG_BATCH_SIZE, 64);
    gp_prof_config_bool(GP_CFG_PIN_MEMORY, 1);
    gp_prof_config_double("lr", 0.001);
    gp_prof_config_strv(GP_CFG_COMMAND, argv, 2);
    gp_prof_thread_name("main");
    for (int s = 0; s < 3; s++) {
        gp_prof_step();
        GP_PROF_MARK("mark");
        GP_PROF_COUNTER("loss", 2.5 - s);
        pthread_t th[N_THREADS];
        for (long i = 0; i < N_THREADS; i++)
            pthread_create(&th[i], NULL, worker, (void *)i);
        for (int i = 0; i < N_THREADS; i++)
            pthread_join(th[i], NULL);
    }
    gp_prof_step_end();
    if (!explicit_shutdown)
        return 0; /* atexit writes the trace */
    gp_error err;
    if (gp_prof_shutdown(&err) != GP_OK)
        printf("shutdown failed: %s\n", err.msg);
    printf("trace %s\n", gp_prof_trace_path() ? gp_prof_trace_path() : "(none)");
    return 0;
}

static int mode_spin(const char *out)
{
    start(out, 1, 0, (gp_prof_schedule){0, 0, 0, 0, 0});
    printf("ready\n");
    fflush(stdout);
    struct timespec ms = {0, 100000};
    for (long i = 0;; i++) {
        gp_prof_step();
        GP_PROF_RANGE("spin");
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* Record 1 ms ranges for `ms` milliseconds, then die by `how` without shutting down: kill
 * (SIGKILL), segv, abort, exit (_exit(3)). */
static int mode_die(const char *out, const char *how, long ms)
{
    start(out, GP_PROF_GZIP_AUTO, 0, (gp_prof_schedule){0, 0, 0, 0, 0});
    struct timespec t0, now, one = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = 0;
    do {
        gp_prof_step();
        GP_PROF_RANGE("work");
        nanosleep(&one, NULL);
        n++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    printf("ranges %ld\n", n);
    fflush(stdout);
    if (strcmp(how, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(how, "segv") == 0)
        raise(SIGSEGV); /* as a wild pointer would, without undefined behaviour in the test */
    if (strcmp(how, "abort") == 0)
        abort();
    _exit(3);
}

static int mode_tight(const char *out, long n)
{
    start(out, GP_PROF_GZIP_AUTO, 0, (gp_prof_schedule){0, 0, 0, 0, 0});
    gp_prof_name r = gp_prof_intern("tight");
    for (long i = 0; i < n; i++) {
        gp_prof_push(r);
        gp_prof_pop();
    }
    gp_prof_shutdown(NULL);
    return 0;
}

static int mode_fsize(const char *out)
{
    struct rlimit rl = {256 << 10, 256 << 10};
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &rl);
    start(out, 0, 1, (gp_prof_schedule){0, 0, 0, 0, 0});
    gp_prof_name n = gp_prof_intern("fill");
    for (int i = 0; i < 200000; i++) {
        gp_prof_push(n);
        gp_prof_pop();
    }
    gp_error err;
    gp_status rc = gp_prof_shutdown(&err);
    printf("shutdown %s\n", gp_strerror(rc));
    printf("host alive\n");
    return 0;
}

static int mode_schedule(const char *out)
{
    /* skip 1, wait 1, warmup 1, active 2, once: steps 3 and 4 are recorded */
    start(out, 0, 1, (gp_prof_schedule){1, 1, 1, 2, 1});
    char name[32];
    for (int s = 0; s < 10; s++) {
        gp_prof_step();
        snprintf(name, sizeof(name), "work#%d", s);
        gp_prof_push(gp_prof_intern(name));
        gp_prof_pop();
    }
    gp_prof_shutdown(NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: prof_app MODE OUT\n");
        return 2;
    }
    const char *mode = argv[1], *out = argv[2];
    if (strcmp(mode, "threads") == 0)
        return mode_threads(out, GP_PROF_GZIP_AUTO, 1);
    if (strcmp(mode, "atexit") == 0)
        return mode_threads(out, GP_PROF_GZIP_AUTO, 0);
    if (strcmp(mode, "spin") == 0)
        return mode_spin(out);
    if (strcmp(mode, "fsize") == 0)
        return mode_fsize(out);
    if (strcmp(mode, "unwritable") == 0)
        start(out, 0, 0, (gp_prof_schedule){0, 0, 0, 0, 0});
    if (strcmp(mode, "schedule") == 0)
        return mode_schedule(out);
    if (strcmp(mode, "tight") == 0 && argc > 3)
        return mode_tight(out, atol(argv[3]));
    if (strcmp(mode, "die") == 0 && argc > 4)
        return mode_die(out, argv[3], atol(argv[4]));
    return 0;
}
