/* bench_prof_writer.c: writer throughput. A producer thread records N range events (lossless:
 * it waits when its ring is full) while the writer turns them into JSON, plain or gzip; the
 * rate is N over the whole session, and the peak RSS shows whether memory grows with N.
 * usage: bench_prof_writer plain|gzip N OUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "gp/prof.h"
#include "prof_int.h" /* prof_writer_cpu_ns */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_prof_writer plain|gzip N OUT\n");
        return 2;
    }
    int gz = strcmp(argv[1], "gzip") == 0;
    long n = atol(argv[2]);
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = argv[3];
    o.gzip = gz ? GP_PROF_GZIP_ON : GP_PROF_GZIP_OFF;
    o.wait_when_full = 1;
    o.handle_signals = 0;
    gp_prof_name names[4] = {gp_prof_intern("forward"), gp_prof_intern("backward"),
                             gp_prof_intern_cat("aten::linear", GP_PROF_CAT_CPU_OP),
                             gp_prof_intern("Optimizer.step")};
    double t0 = now_s();
    if (gp_prof_init(&o, NULL) != GP_OK)
        return 1;
    for (long i = 0; i < n; i++) {
        gp_prof_push(names[i & 3]);
        gp_prof_pop();
    }
    gp_prof_shutdown(NULL);
    double dt = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct stat st;
    stat(argv[3], &st);
    int64_t user_ns, sys_ns;
    prof_writer_cpu_ns(&user_ns, &sys_ns);
    printf("%s %ld events: %.2f s = %.2f M events/s; writer thread: %.2f s formatting%s + %.2f s "
           "in the kernel (write/page cache); %.0f MB file; peak RSS %ld MB\n",
           argv[1], n, dt, n / dt / 1e6, user_ns / 1e9, strcmp(argv[1], "gzip") ? "" : "+zlib",
           sys_ns / 1e9, st.st_size / 1e6, ru.ru_maxrss / 1024);
    return 0;
}
