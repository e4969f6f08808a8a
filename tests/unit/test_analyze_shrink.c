/* A plain trace file that shrinks while the reader has it mapped (a live job rewriting its
 * trace) must never kill the process with SIGBUS: a child reads the file over and over while the
 * parent cuts it in half and writes the half back. */
#include "gp/trace.h"
#include "gp_test.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *make_trace(size_t *len)
{
    size_t cap = 48u << 20, n = 0;
    char *s = malloc(cap);
    n += (size_t)snprintf(s, cap, "{\"traceEvents\":[\n");
    for (long i = 0; n < cap - 4096; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%ld\",\"pid\":1,"
                              "\"tid\":1,\"ts\":%ld,\"dur\":5},\n",
                              i % 13, i * 10);
    n += (size_t)snprintf(s + n, cap - n,
                          "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,"
                          "\"ts\":0,\"s\":\"t\"}]}\n");
    *len = n;
    return s;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void reader_child(const char *path)
{
    double end = now() + 1.5;
    while (now() < end) {
        gp_trace *t = NULL;
        if (gp_trace_open(path, NULL, &t, NULL) == GP_OK)
            gp_trace_free(t);
    }
    _exit(0);
}

static void test_shrink_while_mapped(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_analyze_shrink_%d.json", GP_BUILD_DIR, (int)getpid());
    size_t len;
    char *text = make_trace(&len);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    GP_CHECK(fd >= 0 && write(fd, text, len) == (ssize_t)len);
    pid_t pid = fork();
    if (pid == 0)
        reader_child(path);
    int status = 0;
    struct timespec pause = {0, 3000000};
    while (waitpid(pid, &status, WNOHANG) == 0) {
        GP_CHECK(ftruncate(fd, (off_t)(len / 3)) == 0);
        nanosleep(&pause, NULL);
        GP_CHECK(pwrite(fd, text + len / 3, len - len / 3, (off_t)(len / 3)) ==
                 (ssize_t)(len - len / 3));
        nanosleep(&pause, NULL);
    }
    close(fd);
    unlink(path);
    free(text);
    if (WIFSIGNALED(status))
        fprintf(stderr, "reader killed by signal %d\n", WTERMSIG(status));
    GP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    GP_RUN(test_shrink_while_mapped);
    return gp_test_summary();
}
