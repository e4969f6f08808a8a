/* Status names and error-detail helpers. */
#include "gp/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gp_strerror(gp_status code)
{
    switch (code) {
    case GP_DECLINED:
        return "declined";
    case GP_MORE:
        return "more input needed";
    case GP_OK:
        return "ok";
    case GP_EINVAL:
        return "invalid argument";
    case GP_ENOMEM:
        return "out of memory";
    case GP_EIO:
        return "i/o error";
    case GP_EPARSE:
        return "parse error";
    case GP_ECUDA:
        return "cuda error";
    case GP_ECUPTI:
        return "cupti error";
    case GP_EUNSUPPORTED:
        return "not supported";
    }
    return "unknown error";
}

void gp_error_clear(gp_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof(*err));
    err->offset = -1;
}

/* The calling thread's trail of its last failure: where it was set, then where forwarded. */
#define TRAIL_MAX 12
static _Thread_local struct {
    const char *file[TRAIL_MAX];
    int line[TRAIL_MAX];
    int n;
} trail;

void gp_trail_note(const char *file, int line)
{
    if (trail.n < TRAIL_MAX) {
        trail.file[trail.n] = file;
        trail.line[trail.n++] = line;
    }
}

const char *gp_error_trail(char *buf, size_t cap)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < trail.n && len < cap; i++) {
        const char *base = strrchr(trail.file[i], '/');
        int k = snprintf(buf + len, cap - len, "%s%s:%d", i ? " < " : "",
                         base ? base + 1 : trail.file[i], trail.line[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    trail.n = 0;
    return buf;
}

gp_status gp_error_set_at(const char *file, int line, gp_error *err, gp_status code,
                          const char *path, const char *fmt, ...)
{
#ifndef NDEBUG
    trail.n = 0;
    gp_trail_note(file, line);
#else
    (void)file, (void)line;
#endif
    if (!err)
        return code;
    gp_error_clear(err);
    err->code = code;
    if (path)
        snprintf(err->path, sizeof(err->path), "%s", path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

void gp_error_at(gp_error *err, long long offset, long line, long col)
{
    if (!err)
        return;
    err->offset = offset;
    err->line = line;
    err->col = col;
}

void gp_bug(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gprof-train: BUG: %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
