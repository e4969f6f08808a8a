/* json_out.c: the writer's output: a buffer flushed to a file descriptor, optionally through
 * zlib's deflate (gzip framing), plus JSON string escaping and fast number formatting. Numbers
 * are formatted by hand because snprintf dominates the writer's cost (measured: bench_prof.sh). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gp/json_str.h"
#include "prof_int.h"

/* Buffer sizes, measured on the 2-core EPYC (512 KiB L2 a core), kernel 6.18, ext4:
 * - plain: write(2) of 1 GB costs 0.29-0.33 ns/byte of CPU in 256-512 KiB calls but 0.8-1.1 in
 *   1 MiB calls and 1.4-3.0 in 4 MiB calls (the source must stay in L2 while the kernel copies
 *   it into the page cache), and the formatter writes into a buffer that stays cached too;
 * - gzip: deflate's speed barely depends on the input chunk (1 MiB: 364-368 ns an event,
 *   256 KiB: 378-381), so it gets 1 MiB, which also halves the number of deflate calls. */
#define OUT_BUF_PLAIN (1u << 18)
#define OUT_BUF_GZIP  (1u << 20)
#define ZOUT_BUF      (1u << 18)
/* Slack past `cap` in memory buffers, where a number that does not fit is formatted before
 * the buffer is marked failed (prof_out_reserve). */
#define MEM_SLACK 64

gp_status prof_out_open(prof_out *o, const char *path, int gzip, gp_error *err)
{
    memset(o, 0, sizeof(*o));
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return gp_error_set(err, GP_EIO, path, "cannot create trace file: %s", strerror(errno));
    o->cap = gzip ? OUT_BUF_GZIP : OUT_BUF_PLAIN;
    o->buf = malloc(o->cap);
    o->gzip = gzip;
    if (gzip) {
        z_stream *z = calloc(1, sizeof(*z));
        o->z = z;
        o->zbuf = malloc(ZOUT_BUF);
        /* Z_BEST_SPEED (level 1): on 200 MB of our trace text zlib does level 1 at 280-320 MB/s
         * (ratio 15.2), 2 at 280 (15.8), 3 at 250 (16.4), 6 at 90 (20.4); Huffman-only and RLE
         * compress only 1.7x. Level 1 keeps deflate to ~330-370 ns an event. */
        if (!z || !o->zbuf ||
            deflateInit2(z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            goto nomem;
    }
    if (!o->buf)
        goto nomem;
    return GP_OK;
nomem:
    prof_out_close(o);
    return gp_error_set(err, GP_ENOMEM, path, "out of memory for the trace writer");
}

gp_status prof_out_mem_init(prof_out *o, size_t cap)
{
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    o->buf = malloc(cap + MEM_SLACK);
    o->cap = cap;
    return o->buf ? GP_OK : GP_ENOMEM;
}

static void fail(prof_out *o, const char *what, int e)
{
    if (!o->failed)
        snprintf(o->err, sizeof(o->err), "%s: %s", what, strerror(e));
    o->failed = 1;
}

static void write_all(prof_out *o, const unsigned char *p, size_t n)
{
    while (n > 0 && !o->failed) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(o, "write failed", w < 0 ? errno : ENOSPC);
            return;
        }
        p += w;
        n -= (size_t)w;
        o->bytes_out += (uint64_t)w;
    }
}

static void deflate_run(prof_out *o, int flush)
{
    z_stream *z = o->z;
    z->next_in = (unsigned char *)o->buf;
    z->avail_in = (unsigned)o->len;
    do {
        z->next_out = o->zbuf;
        z->avail_out = ZOUT_BUF;
        if (deflate(z, flush) == Z_STREAM_ERROR) {
            fail(o, "compression failed", EIO);
            return;
        }
        write_all(o, o->zbuf, ZOUT_BUF - z->avail_out);
    } while (z->avail_out == 0 && !o->failed);
}

void prof_out_flush(prof_out *o, int sync)
{
    if (o->fd < 0)
        return; /* memory buffer (prof_out_mem_init): nothing to flush */
    if (o->failed) {
        o->len = 0; /* keep accepting output so callers need no checks; it goes nowhere */
        return;
    }
    if (o->gzip)
        deflate_run(o, sync ? Z_SYNC_FLUSH : Z_NO_FLUSH);
    else
        write_all(o, (const unsigned char *)o->buf, o->len);
    o->len = 0;
}

int prof_out_close(prof_out *o)
{
    if (o->fd >= 0 && o->buf) {
        if (o->gzip && o->z && !o->failed) {
            prof_out_flush(o, 0);
            deflate_run(o, Z_FINISH);
        } else {
            prof_out_flush(o, 0);
        }
    }
    if (o->z) {
        deflateEnd(o->z);
        free(o->z);
    }
    if (o->fd >= 0 && close(o->fd) != 0)
        fail(o, "close failed", errno);
    free(o->zbuf);
    free(o->buf);
    o->z = NULL;
    o->zbuf = NULL;
    o->buf = NULL;
    o->fd = -1;
    return o->failed ? -1 : 0;
}

void prof_out_raw(prof_out *o, const char *s, size_t n)
{
    while (n > 0) {
        if (o->len >= o->cap) {
            if (o->fd < 0) { /* memory buffer full: drop the rest */
                o->failed = 1;
                o->len = o->cap;
                return;
            }
            prof_out_flush(o, 0);
        }
        size_t k = o->cap - o->len < n ? o->cap - o->len : n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

char *prof_json_escape(const char *s, size_t n, size_t *out_len)
{
    char *d = malloc(n * 6 + 1);
    if (!d)
        return NULL;
    *out_len = gp_json_escape(d, s, n);
    d[*out_len] = '\0';
    return d;
}

void prof_out_json_str(prof_out *o, const char *s, size_t n)
{
    char stackbuf[1024];
    char *d = n * 6 <= sizeof(stackbuf) ? stackbuf : malloc(n * 6);
    prof_out_raw(o, "\"", 1);
    if (d) {
        prof_out_raw(o, d, gp_json_escape(d, s, n));
        if (d != stackbuf)
            free(d);
    }
    prof_out_raw(o, "\"", 1);
}

void prof_out_u64(prof_out *o, uint64_t v)
{
    prof_out_reserve(o, 24);
    o->len = (size_t)(prof_put_u64(o->buf + o->len, v) - o->buf);
}

void prof_out_i64(prof_out *o, int64_t v)
{
    prof_out_reserve(o, 24);
    if (v < 0) {
        o->buf[o->len++] = '-';
        prof_out_u64(o, (uint64_t)0 - (uint64_t)v);
        return;
    }
    prof_out_u64(o, (uint64_t)v);
}

void prof_out_us(prof_out *o, int64_t ns)
{
    prof_out_reserve(o, 32);
    o->len = (size_t)(prof_put_us(o->buf + o->len, ns) - o->buf);
}

void prof_out_double(prof_out *o, double v)
{
    if (!isfinite(v)) {
        prof_out_raw(o, "null", 4);
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof(b), "%.15g", v);
    if (strtod(b, NULL) != v)
        n = snprintf(b, sizeof(b), "%.17g", v);
    prof_out_raw(o, b, (size_t)n);
}

/* The header region: the top-level keys before "traceEvents", rewritten in place at the end of
 * the run (dropped counts, warnings, devices). Plain files pad it with spaces; gzip files hold
 * it in a first gzip member made of one stored (uncompressed) deflate block of fixed size, so it
 * can be rewritten too; the events follow as a second member (multi-member gzip is standard). */
#define GZ_HDR     10
#define GZ_STORED  5
#define GZ_TRAILER 8

size_t prof_out_header_size(const prof_out *o)
{
    return o->gzip ? GZ_HDR + GZ_STORED + PROF_HEADER_TEXT + GZ_TRAILER : PROF_HEADER_TEXT;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

int prof_out_write_header(prof_out *o, const char *text, size_t n)
{
    if (n >= PROF_HEADER_TEXT || o->fd < 0)
        return -1;
    unsigned char *blk = malloc(prof_out_header_size(o));
    if (!blk)
        return -1;
    unsigned char *t = blk;
    if (o->gzip) {
        static const unsigned char gz[GZ_HDR] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
        memcpy(blk, gz, GZ_HDR);
        unsigned len = PROF_HEADER_TEXT;
        unsigned char st[GZ_STORED] = {1, (unsigned char)len, (unsigned char)(len >> 8),
                                       (unsigned char)~len, (unsigned char)(~len >> 8)};
        memcpy(blk + GZ_HDR, st, GZ_STORED);
        t = blk + GZ_HDR + GZ_STORED;
    }
    memcpy(t, text, n);
    memset(t + n, ' ', PROF_HEADER_TEXT - n);
    t[PROF_HEADER_TEXT - 1] = '\n';
    if (o->gzip) {
        uint32_t crc = (uint32_t)crc32(0L, t, PROF_HEADER_TEXT);
        put_le32(t + PROF_HEADER_TEXT, crc);
        put_le32(t + PROF_HEADER_TEXT + 4, PROF_HEADER_TEXT);
    }
    size_t total = prof_out_header_size(o), done = 0;
    if (o->stream && o->header_written) { /* a device cannot go back: the first one stays */
        free(blk);
        return 0;
    }
    while (done < total) {
        ssize_t w = o->stream ? write(o->fd, blk + done, total - done)
                              : pwrite(o->fd, blk + done, total - done, (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(o, "write failed", w < 0 ? errno : ENOSPC);
            break;
        }
        done += (size_t)w;
    }
    free(blk);
    o->header_written = done == total;
    if (o->stream)
        return done == total ? 0 : -1;
    if (done == total && lseek(o->fd, 0, SEEK_END) < (off_t)total)
        lseek(o->fd, (off_t)total, SEEK_SET);
    return done == total ? 0 : -1;
}
