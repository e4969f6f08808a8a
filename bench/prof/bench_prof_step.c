/* bench_prof_step.c: what a step boundary costs the stepping thread, beside a range: libprof
 * reads the thread's CPU time and /proc/thread-self/schedstat at each boundary (the step's
 * gprof_thread_cpu_ns and gprof_runq_ns args), two system calls a range does not make. Prints
 * the median over rounds, in the thread's CPU time, of gp_prof_step() in a session recording CPU
 * ranges, of one range's push+pop in the same session, and of the scheduler read alone; the
 * analyzer counts the step's cost beyond a range's for each step with those args
 * (analyze/src/rules/rules_cost.c, STEP_SCHED_NS).
 * usage: bench_prof_step [BOUNDARIES_PER_ROUND] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gp/prof.h"
#include "prof_int.h"

enum { ROUNDS = 9 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v)
{
    qsort(v, ROUNDS, sizeof(*v), cmp);
    return v[ROUNDS / 2];
}

static double steps(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        gp_prof_step();
    return (now_ns() - t0) / (double)n;
}

static double ranges(long n, gp_prof_name name)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        gp_prof_push(name);
        gp_prof_pop();
    }
    return (now_ns() - t0) / (double)n;
}

static double sched_reads(long n)
{
    int fd = prof_sched_open();
    prof_sched s;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (prof_sched_read_fd(fd, &s) != 0)
            break;
    double ns = (now_ns() - t0) / (double)n;
    if (fd >= 0)
        close(fd);
    return ns;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/dev/null";
    o.gzip = GP_PROF_GZIP_OFF;
    o.buffer_bytes = (size_t)n * ROUNDS * 4 * 64;
    o.handle_signals = 0;
    if (n <= 0 || gp_prof_init(&o, NULL) != GP_OK) {
        fprintf(stderr, "bench_prof_step: cannot start a session\n");
        return 1;
    }
    gp_prof_name name = gp_prof_intern("bench");
    double st[ROUNDS], rg[ROUNDS], rd[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        st[r] = steps(n);
        rg[r] = ranges(n, name);
        rd[r] = sched_reads(n);
    }
    double s = median(st), g = median(rg), d = median(rd);
    printf("step boundary (gp_prof_step, median of %d x %ld): %.0f ns\n", ROUNDS, n, s);
    printf("  range push+pop in the same session: %.0f ns; the boundary costs %.0f ns more\n", g,
           s - g);
    printf("  of it, the scheduler read alone (schedstat pread + thread CPU clock): %.0f ns\n", d);
    gp_prof_shutdown(NULL);
    return 0;
}
