/* trace_par.c: the one way the reader and the analysis run two passes at once (trace_par2), with
 * the thread count taken from the options the caller filled. */
#include "reader/trace_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

int trace_threads(int budget)
{
    long n = budget > 0 ? budget : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 2 ? 2 : (int)n;
}

typedef struct par_job {
    void (*fn)(void *);
    void *arg;
} par_job;

static void *par_entry(void *arg)
{
    par_job *j = arg;
    j->fn(j->arg);
    return NULL;
}

void trace_par2(int threads, void (*fn0)(void *), void *arg0, void (*fn1)(void *), void *arg1)
{
    par_job j = {fn1, arg1};
    pthread_t th;
    if (threads < 2 || pthread_create(&th, NULL, par_entry, &j) != 0) {
        fn0(arg0);
        fn1(arg1);
        return;
    }
    fn0(arg0);
    pthread_join(th, NULL);
}
