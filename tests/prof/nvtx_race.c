/* nvtx_race.c: threads whose first NVTX call races NVTX's initialisation (issue 23). Only NVTX3's
 * headers (or, built with NVTX_RACE_LINKED, libprof linked and started on the main thread before
 * any NVTX call). Usage: nvtx_race THREADS RANGES FIRST
 *   FIRST: push (the first call is nvtxRangePushA), mark (nvtxMarkA), startex (nvtxRangeStartEx),
 *   early (the threads exist 20 ms before any call, then push; the others start at once),
 *   segv (the main thread pushes one range and raises SIGSEGV: a program that dies at once).
 * Each thread opens RANGES "outer" ranges with 3 "inner" inside, each with 1 "leaf"; it prints
 * {"tid":T,"outer":N,"inner":N,"leaf":N,"marks":N,"async":N} for test_prof_race.py to compare. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <nvtx3/nvToolsExt.h>

#ifdef NVTX_RACE_LINKED
#    include "gp/prof.h"
#endif

static int n_ranges;
static const char *first;
static pthread_barrier_t gate;

static void first_call(void)
{
    if (strcmp(first, "mark") == 0) {
        nvtxMarkA("first-mark");
    } else if (strcmp(first, "startex") == 0) {
        nvtxEventAttributes_t a = {.version = NVTX_VERSION,
                                   .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                   .messageType = NVTX_MESSAGE_TYPE_ASCII,
                                   .message.ascii = "first-async"};
        nvtxRangeEnd(nvtxRangeStartEx(&a));
    }
}

static void *worker(void *arg)
{
    (void)arg;
    if (strcmp(first, "early") == 0) {
        struct timespec idle = {0, 20000000};
        nanosleep(&idle, NULL);
    }
    pthread_barrier_wait(&gate); /* every thread makes its first call at once */
    first_call();
    for (int i = 0; i < n_ranges; i++) {
        nvtxRangePushA("outer");
        for (int j = 0; j < 3; j++) {
            nvtxRangePushA("inner");
            nvtxRangePushA("leaf");
            nvtxRangePop();
            nvtxRangePop();
        }
        nvtxRangePop();
    }
    int marks = strcmp(first, "mark") == 0, async = strcmp(first, "startex") == 0;
    printf("{\"tid\":%d,\"outer\":%d,\"inner\":%d,\"leaf\":%d,\"marks\":%d,\"async\":%d}\n",
           (int)syscall(SYS_gettid), n_ranges, 3 * n_ranges, 3 * n_ranges, marks, async);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int n = atoi(argv[1]);
    n_ranges = atoi(argv[2]);
    first = argv[3];
    if (n < 1 || n > 64 || n_ranges < 1)
        return 2;
#ifdef NVTX_RACE_LINKED
    if (gp_prof_init(NULL, NULL) != GP_OK)
        return 1;
#endif
    if (strcmp(first, "segv") == 0) {
        nvtxRangePushA("doomed");
        raise(SIGSEGV);
    }
    pthread_t th[64];
    pthread_barrier_init(&gate, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
#ifdef NVTX_RACE_LINKED
    gp_prof_shutdown(NULL);
    printf("{\"trace\":\"%s\"}\n", gp_prof_trace_path());
#endif
    fflush(stdout);
    return 0;
}
