/* nvtx_app.c: a program that uses only NVTX3's headers. Run with NVTX_INJECTION64_PATH pointing
 * at libgp_prof.so (or built with NVTX_APP_LINKED, linking libprof and calling gp_prof_init),
 * it must leave a trace with exactly these ranges; it prints what it did as JSON lines
 * ({"name", "tid", "min_us", "depth"}) for tests/prof/test_prof_trace.py to compare. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <nvtx3/nvToolsExt.h>

#ifdef NVTX_APP_LINKED
#    include "gp/prof.h"
#endif

static int tid(void)
{
    return (int)syscall(SYS_gettid);
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static void expect(const char *name, int t, long min_us, int depth)
{
    printf("{\"name\":\"%s\",\"tid\":%d,\"min_us\":%ld,\"depth\":%d}\n", name, t, min_us, depth);
}

static nvtxRangeId_t cross_range;

static void *worker(void *arg)
{
    (void)arg;
    nvtxNameOsThreadA((uint32_t)tid(), "nvtx-worker");
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "worker-ex";
    nvtxRangePushEx(&a);
    sleep_us(3000);
    char buf[32];
    snprintf(buf, sizeof(buf), "dyn-%d", 7); /* a stack buffer, not a literal */
    nvtxRangePushA(buf);
    sleep_us(1000);
    nvtxRangePop();
    nvtxRangePop();
    expect("worker-ex", tid(), 4000, 0);
    expect("dyn-7", tid(), 1000, 1);
    nvtxRangeEnd(cross_range); /* started on the main thread */
    return NULL;
}

/* "spin": NVTX ranges until a signal ends the process (gprof-train run forwards it). */
static int spin(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        nvtxRangePushA("spin");
        sleep_us(200);
        nvtxRangePop();
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "spin") == 0)
        return spin();
#ifdef NVTX_APP_LINKED
    gp_prof_options o;
    gp_prof_options_init(&o);
    if (gp_prof_init(&o, NULL) != GP_OK)
        return 1;
#endif
    nvtxNameOsThreadA((uint32_t)tid(), "nvtx-main");
    nvtxRangePushA("outer");
    sleep_us(1000);
    nvtxRangePushA("inner \"quoted\"");
    sleep_us(2000);
    nvtxMarkA("checkpoint");
    nvtxRangePop();
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof(a));
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "cross-thread";
    cross_range = nvtxRangeStartEx(&a);
    nvtxRangeId_t own = nvtxRangeStartA("start-end");
    sleep_us(1000);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    nvtxRangeEnd(own);
    nvtxRangePop();
    expect("outer", tid(), 8000, 0);
    expect("inner \\\"quoted\\\"", tid(), 2000, 1);
    expect("start-end", tid(), 5000, -1);
    expect("cross-thread", tid(), 5000, -1);
    printf("{\"mark\":\"checkpoint\",\"tid\":%d}\n", tid());
#ifdef NVTX_APP_LINKED
    gp_prof_shutdown(NULL);
    printf("{\"trace\":\"%s\"}\n", gp_prof_trace_path());
#endif
    return 0;
}
