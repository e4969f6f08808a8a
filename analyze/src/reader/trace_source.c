/* Block producer for the trace reader: a thread reads (or inflates) the file into a ring of
 * SOURCE_NBLOCKS blocks while the consumer parses; see trace_source.h. */
#include "reader/trace_source.h"
#include "reader/map_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define BLOCK_SIZE (4u << 20)

static uint64_t count_nl(const char *p, const char *end)
{
    uint64_t n = 0;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

#define READ_FAILED (-1L) /* fill_block's result on an error (fail_msg says which) */

/* zlib's message without the "<fd:3>: " gzdopen puts before it, and where in the compressed file
 * it stopped. @return READ_FAILED (fail_msg set). */
static long gz_failure(trace_source *s)
{
    int zerr;
    const char *m = gzerror((gzFile)s->gz, &zerr);
    if (m[0] == '<' && strstr(m, ">: "))
        m = strstr(m, ">: ") + 3;
    snprintf(s->fail_msg, sizeof(s->fail_msg),
             "cannot decompress: %s (at byte %lld of the gzip file)", m,
             (long long)gzoffset((gzFile)s->gz));
    s->fail_code = GP_EPARSE; /* the data is corrupt; a failed read(2) stays GP_EIO */
    return READ_FAILED;
}

/* Fill `b` from the file; @return bytes read, 0 at end, READ_FAILED (fail_msg set). */
static long fill_block(trace_source *s, source_block *b)
{
    size_t got = 0;
    while (got < s->block_size) {
        long n;
        if (s->gz) {
            int r = gzread((gzFile)s->gz, b->data + got, (unsigned)(s->block_size - got));
            if (r < 0)
                return gz_failure(s);
            n = r;
        } else {
            n = (long)read(s->fd, b->data + got, s->block_size - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                snprintf(s->fail_msg, sizeof(s->fail_msg), "cannot read: %s", strerror(errno));
                return READ_FAILED;
            }
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (long)got;
}

static void *producer(void *arg)
{
    trace_source *s = arg;
    for (unsigned k = 0;; k++) {
        pthread_mutex_lock(&s->mu);
        while (!s->stop && s->filled - s->taken >= SOURCE_NBLOCKS - 1)
            pthread_cond_wait(&s->cv, &s->mu);
        int stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            return NULL;
        source_block *b = &s->blocks[k % SOURCE_NBLOCKS];
        long n = fill_block(s, b);
        b->n = n > 0 ? (size_t)n : 0;
        b->off = s->prod_off;
        b->line = s->prod_line;
        b->last = n < (long)s->block_size;
        s->prod_off += b->n;
        s->prod_line += count_nl(b->data, b->data + b->n);
        pthread_mutex_lock(&s->mu);
        s->failed = n < 0;
        s->filled++;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        if (b->last)
            return NULL;
    }
}

static gp_status alloc_blocks(trace_source *s, gp_error *err)
{
    for (int i = 0; i < SOURCE_NBLOCKS; i++) {
        s->blocks[i].base = malloc(s->prefix + s->block_size);
        if (!s->blocks[i].base)
            return gp_error_set(err, GP_ENOMEM, s->path, "out of memory");
        s->blocks[i].data = s->blocks[i].base + s->prefix;
    }
    return GP_OK;
}

static gp_status open_fd(trace_source *s, const char *path, gp_error *err)
{
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0)
        return gp_error_set(err, GP_EIO, path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        s->input_size = (uint64_t)st.st_size;
    unsigned char magic[2] = {0, 0};
    ssize_t n = pread(s->fd, magic, 2, 0);
    /* a pipe or FIFO cannot be peeked at: zlib reads it, inflating gzip and copying the rest */
    int piped = n < 0 && errno == ESPIPE;
    s->gzip = piped || (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    if (s->gzip) {
        s->gz = gzdopen(s->fd, "rb");
        if (!s->gz)
            return gp_error_set(err, GP_ENOMEM, path, "cannot start zlib");
        s->fd = -1; /* owned by gz now */
        gzbuffer((gzFile)s->gz, 1u << 20);
        if (piped)
            s->gzip = !gzdirect((gzFile)s->gz); /* reads the start to tell */
    }
    return GP_OK;
}

/* Map a plain regular file as the whole window (the read path copies every byte once more and
 * was ~20% of a report's time), guarded against the file shrinking meanwhile (map_guard.c).
 * @return 1 when mapped, 0 to stream instead. */
static int map_file(trace_source *s)
{
    struct stat st;
    if (s->gzip || (s->flags & GP_TRACE_NO_MMAP) || fstat(s->fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
        return 0;
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
    if (m == MAP_FAILED)
        return 0;
    s->guard = map_guard_add(m, (size_t)st.st_size);
    if (s->guard < 0) {
        munmap(m, (size_t)st.st_size);
        return 0;
    }
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    s->map = m;
    s->map_len = (size_t)st.st_size;
    s->win = m;
    s->win_end = (const char *)m + s->map_len;
    return 1;
}

const char *trace_source_drop_now(const trace_source *s, const char *from, const char *to)
{
    if (!s->map)
        return from;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)from + page - 1) & ~(page - 1), b = (uintptr_t)to & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
    return (const char *)b;
}

gp_status trace_source_open_file(trace_source *s, const char *path, size_t max_unit, unsigned flags,
                                 gp_error *err)
{
    memset(s, 0, sizeof(*s));
    s->flags = flags;
    s->fd = -1;
    s->guard = MAP_GUARD_NONE;
    s->path = path;
    s->block_size = BLOCK_SIZE;
    s->max_unit = max_unit;
    s->prefix = max_unit + 64;
    GP_TRY(open_fd(s, path, err));
    if (map_file(s))
        return GP_OK;
    GP_TRY(alloc_blocks(s, err));
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, producer, s) != 0)
        return gp_error_set(err, GP_ENOMEM, path, "cannot start the reader thread");
    s->threaded = 1;
    return GP_OK;
}

static gp_status inflate_all(trace_source *s, const void *data, size_t len, gp_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return gp_error_set(err, GP_ENOMEM, s->path, "cannot start zlib");
    size_t cap = len * 4 + 1024, n = 0;
    int rc = Z_OK;
    z.next_in = (unsigned char *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    while (rc != Z_STREAM_END) {
        if (n == cap || !s->owned) {
            char *d = realloc(s->owned, cap = s->owned ? cap * 2 : cap);
            if (!d) {
                inflateEnd(&z);
                return gp_error_set(err, GP_ENOMEM, s->path, "out of memory");
            }
            s->owned = d;
        }
        z.next_out = (unsigned char *)s->owned + n;
        z.avail_out = (uInt)(cap - n);
        rc = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (rc == Z_STREAM_END && z.avail_in > 0) /* concatenated members */
            rc = inflateReset(&z);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            break;
        if (rc == Z_BUF_ERROR && z.avail_in == 0)
            break; /* truncated gzip: keep what inflated */
    }
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) { /* as the streamed path says */
        gp_status e = gp_error_set(err, GP_EPARSE, s->path,
                                   "cannot decompress: %s (at byte %lld of the gzip file)",
                                   z.msg ? z.msg : "corrupt data", (long long)(len - z.avail_in));
        inflateEnd(&z);
        return e;
    }
    inflateEnd(&z);
    s->win = s->owned;
    s->win_end = s->owned + n;
    return GP_OK;
}

gp_status trace_source_open_mem(trace_source *s, const void *data, size_t len, const char *name,
                                size_t max_unit, gp_error *err)
{
    memset(s, 0, sizeof(*s));
    s->max_unit = max_unit;
    s->fd = -1;
    s->guard = MAP_GUARD_NONE;
    s->path = name;
    s->input_size = len;
    const unsigned char *u = data;
    s->gzip = len >= 2 && u[0] == 0x1f && u[1] == 0x8b;
    if (s->gzip)
        return inflate_all(s, data, len, err);
    s->win = data;
    s->win_end = (const char *)data + len;
    return GP_OK;
}

/* Wait for block number `k` (a counter); @return it, or NULL on a read error. */
static gp_status take(trace_source *s, unsigned k, source_block **out, gp_error *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->filled <= k && !s->failed)
        pthread_cond_wait(&s->cv, &s->mu);
    int failed = s->failed && s->filled <= k + 1;
    pthread_mutex_unlock(&s->mu);
    if (failed)
        return gp_error_set(err, s->fail_code ? s->fail_code : GP_EIO, s->path, "%s", s->fail_msg);
    *out = &s->blocks[k % SOURCE_NBLOCKS];
    return GP_OK;
}

static void release_one(trace_source *s)
{
    pthread_mutex_lock(&s->mu);
    s->taken++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

gp_status trace_source_first(trace_source *s, const char **p, const char **end, int *eof,
                             gp_error *err)
{
    if (s->threaded) {
        source_block *b;
        GP_TRY(take(s, 0, &b, err));
        s->cur = b;
        s->win = b->data;
        s->win_end = b->data + b->n;
        s->win_off = 0;
        *eof = b->last;
    } else {
        *eof = 1;
    }
    *p = s->win;
    *end = s->win_end;
    return GP_OK;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* Past the whitespace and the ',' that may precede a value. */
static const char *skip_sep(const char *p, const char *end)
{
    p = skip_ws(p, end);
    return p < end && *p == ',' ? skip_ws(p + 1, end) : p;
}

int trace_source_too_big(trace_source *s, const char *from, const char *to)
{
    if ((size_t)(to - skip_sep(from, to)) <= s->max_unit)
        return 0;
    snprintf(s->too_big_msg, sizeof s->too_big_msg, "a single value is larger than %zu bytes",
             s->max_unit);
    return 1;
}

/* The bytes on pos's line before it: back to a newline in the window, else from the window's
 * start, whose own count is win_col (the window starts mid-line after a refill). */
static uint64_t column_before(const trace_source *s, const char *pos)
{
    const char *q = pos;
    while (q > s->win && q[-1] != '\n')
        q--;
    return (uint64_t)(pos - q) + (q == s->win ? s->win_col : 0);
}

gp_status trace_source_refill(trace_source *s, const char *keep, const char **p, const char **end,
                              int *eof, gp_error *err)
{
    if (!s->threaded || s->cur->last)
        return gp_error_set(err, GP_EPARSE, s->path, "unexpected end of input");
    if (trace_source_too_big(s, keep, s->win_end))
        return gp_error_set(err, GP_EPARSE, s->path, "%s", s->too_big_msg);
    size_t tail = (size_t)(s->win_end - keep);
    source_block *b;
    GP_TRY(take(s, s->taken + 1, &b, err));
    memcpy(b->data - tail, keep, tail);
    uint64_t keep_off = trace_source_offset(s, keep);
    s->win_col = column_before(s, keep);
    release_one(s);
    s->cur = b;
    s->win = b->data - tail;
    s->win_end = b->data + b->n;
    s->win_off = keep_off;
    *p = s->win;
    *end = s->win_end;
    *eof = b->last;
    return GP_OK;
}

int trace_source_shrank(const trace_source *s)
{
    return map_guard_hit(s->guard);
}

uint64_t trace_source_offset(const trace_source *s, const char *pos)
{
    return s->win_off + (uint64_t)(pos - s->win);
}

void trace_source_line_col(const trace_source *s, const char *pos, long *line, long *col)
{
    if (!s->cur) {
        *line = 1 + (long)count_nl(s->win, pos);
    } else if (pos >= s->cur->data) {
        *line = 1 + (long)(s->cur->line + count_nl(s->cur->data, pos));
    } else {
        *line = 1 + (long)(s->cur->line - count_nl(pos, s->cur->data));
    }
    *col = (long)column_before(s, pos) + 1;
}

void trace_source_close(trace_source *s)
{
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
    }
    map_guard_remove(s->guard);
    if (s->map)
        munmap(s->map, s->map_len);
    if (s->gz)
        gzclose((gzFile)s->gz);
    if (s->fd >= 0)
        close(s->fd);
    for (int i = 0; i < SOURCE_NBLOCKS; i++)
        free(s->blocks[i].base);
    free(s->owned);
    memset(s, 0, sizeof(*s));
}
