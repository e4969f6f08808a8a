/* Status names and error-detail helpers. */
#include "gp/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gp_strerror(gp_status code)
{
    switch (code) {
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

gp_status gp_error_set(gp_error *err, gp_status code, const char *path, const char *fmt, ...)
{
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
