/* viewer-export/src/export_out.c: the output sink shared by the exporters (memory, plain file or
 * gzip through zlib; a file is written under a temporary name and renamed, so a failed export
 * never leaves a half-written file behind, while devices, FIFOs and a stream handed in are
 * written in place)
 * and the JSON/HTML escaping every emitter goes through. */
#include "gp/json_str.h"
#include "export_int.h"

#include "gp/export.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FLUSH_AT (256u << 10) /* file mode: write out once this much is buffered */

void export_out_init_mem(export_out *o)
{
    memset(o, 0, sizeof *o);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Where the output goes. A symlink is followed to the file it names, which is then replaced as a
 * file would be (the link stays, as with `cp`); a dangling link is refused rather than guessed
 * at. `*st` receives what is there, `*exists` whether anything is. */
static gp_status resolve_target(export_out *o, const char *path, struct stat *st, int *exists,
                                gp_error *err)
{
    *exists = 0;
    snprintf(o->path, sizeof o->path, "%s", path);
    if (lstat(path, st) != 0) {
        if (errno == ENOENT)
            return GP_OK;
        return gp_error_set(err, GP_EIO, path, "cannot write: %s", strerror(errno));
    }
    if (S_ISLNK(st->st_mode)) {
        char real[PATH_MAX];
        if (!realpath(path, real) || stat(real, st) != 0)
            return gp_error_set(err, GP_EIO, path, "cannot write through the symlink: %s",
                                errno == ENOENT ? "it points to nothing" : strerror(errno));
        GP_FAIL_IF(strlen(real) >= sizeof o->path, GP_EINVAL, err, "output path too long");
        snprintf(o->path, sizeof o->path, "%s", real);
    }
    *exists = 1;
    if (S_ISDIR(st->st_mode))
        return gp_error_set(err, GP_EIO, path, "cannot write: it is a directory");
    return GP_OK;
}

static gp_status attach_file(export_out *o, int fd, gp_error *err)
{
    o->file = o->gzip ? (void *)gzdopen(fd, "wb6") : (void *)fdopen(fd, "wb");
    if (o->file)
        return GP_OK;
    int e = errno ? errno : ENOMEM;
    close(fd);
    return gp_error_set(err, GP_EIO, o->path, "cannot write: %s", strerror(e));
}

/* A device, FIFO or socket: written in place; renaming over it would replace the node. */
static gp_status open_direct(export_out *o, gp_error *err)
{
    int fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return gp_error_set(err, GP_EIO, o->path, "cannot write: %s", strerror(errno));
    return attach_file(o, fd, err);
}

/* The temporary file is gone (renamed or removed): say so, after the fact, so a signal between
 * the two only finds nothing to remove. */
static void forget_temp(export_out *o)
{
    if (o->tmp[0] && o->temp_file)
        o->temp_file(NULL, o->temp_file_ud);
    o->tmp[0] = 0;
}

/* A new or regular file: written beside it under a name that is always longer than the file's
 * (so never the file itself), with the replaced file's mode and, where allowed, its owner. */
static gp_status open_temp(export_out *o, const struct stat *old, gp_error *err)
{
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    GP_FAIL_IF(n < 0 || (size_t)n >= sizeof o->tmp, GP_EINVAL, err, "output path too long");
    if (o->temp_file) /* before it exists: a signal a moment after open() must find it named */
        o->temp_file(o->tmp, o->temp_file_ud);
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        forget_temp(o);
        return gp_error_set(err, GP_EIO, o->path, "cannot create: %s", strerror(e));
    }
    if (old) {
        if (fchown(fd, old->st_uid, old->st_gid) != 0) {
            /* not ours to give away: the new file stays ours, with the old file's mode */
        }
        fchmod(fd, old->st_mode & 07777);
    }
    gp_status rc = attach_file(o, fd, err);
    if (rc != GP_OK)
        export_out_abort(o);
    return rc;
}

gp_status export_out_open(export_out *o, const char *path, const gp_export_opts *opts,
                          gp_error *err)
{
    memset(o, 0, sizeof *o);
    GP_FAIL_IF(strlen(path) >= sizeof o->path, GP_EINVAL, err, "output path too long");
    if (opts) {
        o->temp_file = opts->temp_file;
        o->temp_file_ud = opts->temp_file_ud;
    }
    o->gzip = ends_with(path, ".gz");
    if (opts && opts->stream) {
        snprintf(o->path, sizeof o->path, "%s", path);
        o->file = o->gzip ? (void *)gzdopen(dup(fileno(opts->stream)), "wb6") : opts->stream;
        o->borrowed = !o->gzip;
        GP_FAIL_IF(!o->file, GP_EIO, err, "cannot write: %s", strerror(errno ? errno : EIO));
        return GP_OK;
    }
    struct stat st;
    int exists;
    GP_TRY(resolve_target(o, path, &st, &exists, err));
    if (exists && !S_ISREG(st.st_mode))
        return open_direct(o, err);
    return open_temp(o, exists ? &st : NULL, err);
}

static void flush_buf(export_out *o)
{
    if (!o->file || o->len == 0)
        return;
    if (!o->err_no) {
        size_t done = o->gzip ? (size_t)gzwrite(o->file, o->buf, (unsigned)o->len)
                              : fwrite(o->buf, 1, o->len, o->file);
        if (done != o->len)
            o->err_no = errno ? errno : EIO;
    }
    o->len = 0;
}

static void close_file(export_out *o)
{
    if (!o->file)
        return;
    int rc = o->borrowed ? fflush(o->file) | ferror(o->file)
             : o->gzip   ? gzclose(o->file)
                         : fclose(o->file);
    if (rc != 0 && !o->err_no)
        o->err_no = errno ? errno : EIO;
    o->file = NULL;
}

gp_status export_out_close(export_out *o, gp_error *err)
{
    flush_buf(o);
    close_file(o);
    free(o->buf);
    o->buf = NULL;
    if (o->tmp[0] && !o->err_no && rename(o->tmp, o->path) != 0)
        o->err_no = errno ? errno : EIO;
    if (o->tmp[0] && o->err_no)
        unlink(o->tmp);
    forget_temp(o);
    if (o->err_no) {
        return gp_error_set(err, o->err_no == ENOMEM ? GP_ENOMEM : GP_EIO, o->path,
                            "cannot write: %s", strerror(o->err_no));
    }
    return GP_OK;
}

void export_out_abort(export_out *o)
{
    close_file(o);
    if (o->tmp[0])
        unlink(o->tmp);
    forget_temp(o);
    free(o->buf);
    o->buf = NULL;
}

char *export_out_take(export_out *o, size_t *len)
{
    export_out_write(o, "", 1); /* the terminating NUL */
    if (o->err_no) {
        free(o->buf);
        o->buf = NULL;
        return NULL;
    }
    char *s = o->buf;
    *len = o->len - 1;
    o->buf = NULL;
    return s;
}

static int reserve(export_out *o, size_t n)
{
    if (o->len + n <= o->cap)
        return 1;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n)
        cap *= 2;
    char *p = realloc(o->buf, cap);
    if (!p) {
        o->err_no = ENOMEM;
        return 0;
    }
    o->buf = p;
    o->cap = cap;
    return 1;
}

void export_out_write(export_out *o, const void *p, size_t n)
{
    if (o->err_no || n == 0)
        return;
    if (!reserve(o, n))
        return;
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    if (o->file && o->len >= FLUSH_AT)
        flush_buf(o);
}

void export_out_puts(export_out *o, const char *s)
{
    export_out_write(o, s, strlen(s));
}

void export_out_printf(export_out *o, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->err_no = o->err_no ? o->err_no : EINVAL;
        return;
    }
    if ((size_t)n < sizeof small) {
        export_out_write(o, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->err_no = ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    export_out_write(o, big, (size_t)n);
    free(big);
}

size_t export_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x3Fu >> (n - 1));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Copy runs of bytes that need no escaping in one write; `esc` returns the replacement for
 * byte c (NULL: copy as is, "": drop). Invalid UTF-8 bytes become `bad`. */
static void escape_runs(export_out *o, const char *s, const char *(*esc)(unsigned char, char *),
                        const char *bad)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    char tmp[8];
    while (*p) {
        size_t n = export_utf8_len(p);
        const char *rep = n == 0 ? bad : n == 1 ? esc(*p, tmp) : NULL;
        if (!rep) {
            p += n;
            continue;
        }
        export_out_write(o, run, (size_t)(p - run));
        export_out_puts(o, rep);
        p += n ? n : 1;
        run = p;
    }
    export_out_write(o, run, (size_t)(p - run));
}

static const char *html_esc(unsigned char c, char *tmp)
{
    (void)tmp;
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&#39;";
    case '\n':
    case '\t':
        return NULL;
    default:
        return c < 0x20 || c == 0x7F ? "" : NULL;
    }
}

void export_out_json_str(export_out *o, const char *s)
{
    export_out_write(o, "\"", 1);
    char esc[6 * 256]; /* the escape needs up to 6 bytes a byte: in pieces */
    for (size_t n = s ? strlen(s) : 0, k; n > 0; s += k, n -= k) {
        k = gp_json_piece(s, n, 256);
        export_out_write(o, esc, gp_json_escape(esc, s, k));
    }
    export_out_write(o, "\"", 1);
}

void export_out_html(export_out *o, const char *s)
{
    if (s)
        escape_runs(o, s, html_esc, "\xEF\xBF\xBD");
}

void export_out_us(export_out *o, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    export_out_printf(o, "%s%llu.%03llu", sign, (unsigned long long)(a / 1000),
                      (unsigned long long)(a % 1000));
}
