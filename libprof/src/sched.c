/* sched.c: what the scheduler says of the calling thread, read at step boundaries and by
 * gp_prof_thread_runq_ns: its time runnable but waiting for a core (Linux's
 * /proc/thread-self/schedstat, second field: one open, read and close, no stdio) and its time on
 * a core (CLOCK_THREAD_CPUTIME_ID: schedstat's first field is brought up to date only at the
 * scheduler's tick or a switch, so a step shorter than a tick would read 0 there). The run-queue
 * time is up to date for a running thread: it grows only while the thread is off a core, and is
 * added when the thread gets one back. At step boundaries the file stays open (prof_sched_open,
 * then one pread a boundary: no system call between a boundary's ticks and the figures but the
 * one that reads them). */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "prof_int.h"

/* The unsigned decimal at *p (skipping blanks); @return 0, or -1 if none. */
static int read_u64(const char **p, const char *end, int64_t *v)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s == end || *s < '0' || *s > '9')
        return -1;
    int64_t x = 0;
    while (s < end && *s >= '0' && *s <= '9')
        x = x * 10 + (*s++ - '0');
    *v = x;
    *p = s;
    return 0;
}

int prof_sched_open(void)
{
    return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

int prof_sched_read_fd(int fd, prof_sched *s)
{
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
    const char *p = buf, *end = buf + (n > 0 ? n : 0);
    int64_t on_core;
    struct timespec ts;
    if (read_u64(&p, end, &on_core) != 0 || read_u64(&p, end, &s->runq_ns) != 0 ||
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    s->cpu_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return 0;
}

int prof_sched_read(prof_sched *s)
{
    int fd = prof_sched_open();
    int rc = prof_sched_read_fd(fd, s);
    if (fd >= 0)
        close(fd);
    return rc;
}
