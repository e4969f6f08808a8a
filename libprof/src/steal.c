/* steal.c: the time the hypervisor took from this machine's CPUs, the "steal" column of
 * /proc/stat's per-CPU lines, sampled by the writer once a pass. While the host runs something
 * else on a virtual CPU, the guest's thread on it is neither on a core (its CPU clock stops)
 * nor waiting in the guest's run queue: a step's wall time less its CPU and run-queue time holds
 * that time, and reads as a stall of the program's own (a cloud VM here lost 100 ms at once,
 * one step 30x the median). The writer puts the most steal any one CPU saw in each pass in the
 * trace, as a counter (GP_NAME_HOST_STEAL), from the first pass that saw some: a machine
 * without steal gets no samples. A read of /proc/stat makes its whole text, per-IRQ counts
 * included: 3.3 us for 1.2 KB on a 2-CPU VM, more where many CPUs and IRQs lengthen it. Once a
 * pass, on the writer's thread only. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_int.h"

#define STEAL_FIELD   7         /* user nice system idle iowait irq softirq steal */
#define STEAL_MAX_BUF (4 << 20) /* /proc/stat's CPU lines fit well within this */

/* The value of field `k` (0-based, after the "cpuN" label) of the line at p; -1 if absent. */
static int64_t field(const char *p, const char *end, int k)
{
    while (p < end && *p != ' ')
        p++;
    for (int i = 0; p < end && *p != '\n'; i++) {
        while (p < end && *p == ' ')
            p++;
        int64_t v = 0;
        int digits = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            v = v * 10 + (*p - '0');
        if (i == k)
            return digits ? v : -1;
        if (!digits)
            return -1;
    }
    return -1;
}

/* Room for CPU `cpu`'s last reading; @return 0, or -1 out of memory. */
static int grow(prof_steal *s, long cpu)
{
    if (cpu < s->n_cpus)
        return 0;
    long n = cpu + 1 > 2 * s->n_cpus ? cpu + 1 : 2 * s->n_cpus;
    int64_t *last = realloc(s->last, (size_t)n * sizeof(*last));
    if (!last)
        return -1;
    for (long i = s->n_cpus; i < n; i++)
        last[i] = -1;
    s->last = last;
    s->n_cpus = n;
    return 0;
}

int prof_steal_parse(prof_steal *s, const char *buf, size_t n, int64_t *max_ticks)
{
    const char *p = buf, *end = buf + n;
    int cpus = 0;
    *max_ticks = 0;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            break; /* a line cut off by the buffer's end: not read */
        if (eol - p > 3 && memcmp(p, "cpu", 3) == 0 && p[3] >= '0' && p[3] <= '9') {
            long cpu = strtol(p + 3, NULL, 10);
            int64_t v = field(p, eol, STEAL_FIELD);
            if (v >= 0 && grow(s, cpu) == 0) {
                int64_t d = s->last[cpu] >= 0 && v >= s->last[cpu] ? v - s->last[cpu] : 0;
                *max_ticks = d > *max_ticks ? d : *max_ticks;
                s->last[cpu] = v;
                cpus++;
            }
        } else if (cpus) {
            break; /* past the CPU lines */
        }
        p = eol + 1;
    }
    return cpus ? 0 : -1;
}

/* /proc/stat's text, up to past its CPU lines; @return its length, or -1. */
static ssize_t read_stat(prof_steal *s)
{
    for (;;) {
        if (!s->buf) {
            s->cap = s->cap ? s->cap : 16384;
            if (!(s->buf = malloc(s->cap)))
                return -1;
        }
        ssize_t n = pread(s->fd, s->buf, s->cap, 0);
        if (n < 0 || (size_t)n < s->cap || s->cap >= STEAL_MAX_BUF)
            return n;
        free(s->buf); /* filled: the CPU lines may go on past it */
        s->buf = NULL;
        s->cap *= 2;
    }
}

void prof_steal_start(prof_steal *s, int64_t now)
{
    memset(s, 0, sizeof(*s));
    s->fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    s->t_last = now;
    long hz = sysconf(_SC_CLK_TCK);
    s->ns_per_tick = hz > 0 ? 1000000000LL / hz : 10000000LL;
    int64_t ignored;
    ssize_t n = s->fd >= 0 ? read_stat(s) : -1;
    if (n <= 0 || prof_steal_parse(s, s->buf, (size_t)n, &ignored) != 0)
        prof_steal_stop(s); /* no /proc/stat, or no steal column: no samples */
}

int prof_steal_pass(prof_steal *s, int64_t now, int64_t min_span, prof_steal_sample *out)
{
    int64_t ticks;
    if (s->fd < 0 || now - s->t_last < min_span)
        return 0;
    ssize_t n = read_stat(s);
    if (n <= 0 || prof_steal_parse(s, s->buf, (size_t)n, &ticks) != 0)
        return 0;
    out->t0 = s->t_last;
    out->t1 = now;
    int64_t span = now - s->t_last, ns = ticks * s->ns_per_tick;
    out->pct = span > 0 ? 100.0 * (double)(ns < span ? ns : span) / (double)span : 0;
    s->t_last = now;
    s->seen |= ticks > 0;
    return s->seen && span > 0;
}

void prof_steal_stop(prof_steal *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->last);
    s->fd = -1;
    s->buf = NULL;
    s->last = NULL;
    s->n_cpus = 0;
}
