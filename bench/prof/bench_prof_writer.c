/* bench_prof_writer.c: writer throughput. A producer thread records N range events (lossless:
 * it waits when its ring is full) while the writer turns them into JSON, plain or gzip. Prints
 * the wall rate, the writer thread's CPU per event (independent of other load on the machine)
 * and, side by side, the floor: the same bytes pushed through write(2) alone (plain) or zlib
 * level 1 plus write(2) (gzip), without formatting. Peak RSS shows whether memory grows with N.
 * usage: bench_prof_writer plain|gzip N OUT [default] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "gp/prof.h"
#include "prof_int.h" /* prof_writer_cpu_ns, PROF_HEADER_TEXT */

#define SAMPLE (4u << 20)

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Read up to SAMPLE bytes of event text (after the header region) from the trace at `path`
 * (gzread reads plain files as they are). @return the length, 0 on error. */
static size_t read_sample(const char *path, char *buf)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return 0;
    int skip = gzread(f, buf, PROF_HEADER_TEXT);
    int n = skip == PROF_HEADER_TEXT ? gzread(f, buf, SAMPLE) : 0;
    gzclose(f);
    return n > 0 ? (size_t)n : 0;
}

/* The floor: `total` bytes of `sample` through write(2) in 256 KiB calls (as the writer does)
 * or through deflate level 1 in 1 MiB chunks. @return CPU seconds of this thread. */
static double floor_cpu(const char *path, const char *sample, size_t len, double total, int gz)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int fd = fileno(f);
    size_t chunk = gz ? (1u << 20) : (1u << 18);
    static unsigned char zout[1u << 18];
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (gz && deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    double c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    for (double done = 0; done < total; done += (double)chunk) {
        if (!gz) { /* one buffer, reused: the writer's output buffer stays cached too */
            if (write(fd, sample, chunk) != (ssize_t)chunk)
                break;
            continue;
        }
        const char *p = sample + (size_t)done % (len - chunk + 1) / 4096 * 4096;
        z.next_in = (unsigned char *)p;
        z.avail_in = (unsigned)chunk;
        do {
            z.next_out = zout;
            z.avail_out = sizeof(zout);
            deflate(&z, Z_NO_FLUSH);
            if (write(fd, zout, sizeof(zout) - z.avail_out) < 0)
                break;
        } while (z.avail_out == 0);
    }
    double c1 = now_s(CLOCK_THREAD_CPUTIME_ID);
    if (gz)
        deflateEnd(&z);
    fclose(f);
    unlink(path);
    return c1 - c0;
}

static void report(const char *fmt, long n, double wall, const char *out)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct stat st;
    stat(out, &st);
    int64_t user_ns, sys_ns;
    prof_writer_cpu_ns(&user_ns, &sys_ns);
    double cpu_ev = (double)(user_ns + sys_ns) / n;
    printf("%s %ld events: %.2f s wall = %.2f M events/s; writer thread %.0f ns CPU an event "
           "(%.0f user + %.0f kernel) = %.2f M events per CPU-second; %.0f MB file; peak RSS %ld "
           "MB\n",
           fmt, n, wall, n / wall / 1e6, cpu_ev, (double)user_ns / n, (double)sys_ns / n,
           1e3 / cpu_ev, st.st_size / 1e6, ru.ru_maxrss / 1024);
    char *sample = malloc(SAMPLE);
    size_t len = sample ? read_sample(out, sample) : 0;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += sample[i] == '\n';
    if (len < (2u << 20) || lines == 0) {
        printf("  floor: trace too small to sample\n");
        free(sample);
        return;
    }
    double per_ev = (double)len / lines; /* text bytes an event */
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.floor", out);
    double fl = floor_cpu(tmp, sample, len, per_ev * n, strcmp(fmt, "gzip") == 0) * 1e9 / n;
    printf("  floor, the same %.0f bytes an event through %s alone: %.0f ns CPU an event; "
           "writer/floor %.2fx (formatting adds %.0f ns)\n",
           per_ev, strcmp(fmt, "gzip") == 0 ? "zlib level 1 + write(2)" : "write(2)", fl,
           cpu_ev / fl, cpu_ev - fl);
    free(sample);
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "default") == 0)) {
        fprintf(stderr, "usage: bench_prof_writer plain|gzip N OUT [default]\n");
        return 2;
    }
    int defaults = argc == 5;
    int gz = strcmp(argv[1], "gzip") == 0;
    long n = atol(argv[2]);
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = argv[3];
    o.gzip = gz ? GP_PROF_GZIP_ON : GP_PROF_GZIP_OFF;
    /* Lossless within 16 MiB of record buffers, so peak RSS shows whether memory grows with N;
     * "default": the options a user gets (the buffers grow while the writer is behind). */
    o.wait_when_full = !defaults;
    o.buffer_bytes = defaults ? 0 : 16u << 20;
    o.handle_signals = 0;
    gp_prof_name names[4] = {gp_prof_intern("forward"), gp_prof_intern("backward"),
                             gp_prof_intern_cat("aten::linear", GP_PROF_CAT_CPU_OP),
                             gp_prof_intern("Optimizer.step")};
    double t0 = now_s(CLOCK_MONOTONIC);
    if (n <= 0 || gp_prof_init(&o, NULL) != GP_OK)
        return 1;
    for (long i = 0; i < n; i++) {
        gp_prof_push(names[i & 3]);
        gp_prof_pop();
    }
    gp_prof_shutdown(NULL);
    report(argv[1], n, now_s(CLOCK_MONOTONIC) - t0, argv[3]);
    return 0;
}
