/* train_cpu.c: where the training loop's CPU time went, for the trace's run configuration. A
 * step that takes longer than its work because its threads wait for a core looks, in the trace,
 * like a slow step; these counts tell the rules it was the machine (issue 24: GT19 and GT01). */
#include "gp/prof.h"
#include "gp/trace_schema.h"
#include "train_int.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time every process on the machine has used (busy jiffies of /proc/stat's "cpu" line), or
 * -1 where there is no /proc/stat. */
static int64_t machine_busy_ns(void)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 8 || hz <= 0)
        return -1;
    /* user nice system idle iowait irq softirq steal: all but idle and iowait */
    unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return (int64_t)(busy * (1000000000ULL / (unsigned long long)hz));
}

static int64_t self_cpu_ns(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

void train_cpu_begin(struct train_cpu *c)
{
    *c = (struct train_cpu){.wall0 = (int64_t)(train_now() * 1e9),
                            .busy0 = machine_busy_ns(),
                            .self0 = self_cpu_ns(),
                            .runq0 = gp_prof_thread_runq_ns()};
}

#ifdef GP_WITH_PROF
void train_cpu_end(const struct train_cpu *c)
{
    int64_t wall = (int64_t)(train_now() * 1e9) - c->wall0;
    gp_prof_config_int(GP_CFG_STEP_WALL, c->step_wall);
    gp_prof_config_int(GP_CFG_STEP_CPU, c->step_cpu);
    gp_prof_config_int(GP_CFG_LOADER_CPU, c->loader_cpu);
    int64_t runq = gp_prof_thread_runq_ns();
    if (runq >= 0 && c->runq0 >= 0 && c->loader_runq >= 0) {
        gp_prof_config_int(GP_CFG_TRAIN_RUNQ, runq - c->runq0);
        gp_prof_config_int(GP_CFG_LOADER_RUNQ, c->loader_runq);
    }
    gp_prof_config_int(GP_CFG_LOOP_WALL, wall);
    int64_t busy = machine_busy_ns(), self = self_cpu_ns() - c->self0;
    if (busy < 0 || c->busy0 < 0)
        return;
    int64_t other = busy - c->busy0 - self;
    gp_prof_config_int(GP_CFG_OTHER_CPU, other > 0 ? other : 0);
}
#else
void train_cpu_end(const struct train_cpu *c)
{
    (void)c;
}
#endif
