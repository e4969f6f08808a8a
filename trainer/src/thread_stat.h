/* trainer/src/thread_stat.h: what the scheduler says of the calling thread (train_cpu.c), for
 * the trace's CPU accounting. */
#ifndef GP_TRAINER_THREAD_STAT_H
#define GP_TRAINER_THREAD_STAT_H

#include <stdint.h>

/* The calling thread's CPU time (ns; 0 if unknown). */
int64_t thread_cpu_ns(void);
/* Its time runnable but waiting for a core: libprof's gp_prof_thread_runq_ns(). */

#endif
