/* Error, warning and hint output for the CLI. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("gprof-train: error: ", fmt, ap);
    va_end(ap);
    return CLI_ERROR;
}

void cli_hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("hint: ", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("gprof-train: warning: ", fmt, ap);
    va_end(ap);
}

void cli_print_trail(const char *about)
{
    char buf[256];
    if (getenv("GP_ERROR_TRAIL") && gp_error_trail(buf, sizeof buf)[0])
        fprintf(stderr, "gprof-train: trail%s%s%s: %s\n", about ? " of '" : "", about ? about : "",
                about ? "'" : "", buf);
}

static int report_error(const gp_error *err, gp_status rc)
{
    const char *msg = err && err->msg[0] ? err->msg : gp_strerror(rc);
    if (!err || !err->path[0])
        return cli_error("%s", msg);
    if (err->line > 0 && err->offset >= 0)
        return cli_error("cannot read '%s' at line %ld, column %ld (byte %lld): %s", err->path,
                         err->line, err->col, err->offset, msg);
    if (err->line > 0)
        return cli_error("cannot read '%s' at line %ld: %s", err->path, err->line, msg);
    if (err->offset >= 0)
        return cli_error("cannot read '%s' at byte %lld: %s", err->path, err->offset, msg);
    return cli_error("'%s': %s", err->path, msg);
}

int cli_error_from(const gp_error *err, gp_status rc)
{
    int code = report_error(err, rc);
    cli_print_trail(NULL);
    return code;
}

int cli_not_built(const char *cmd, const char *why)
{
    cli_error("'%s' is not available in this build", cmd);
    cli_hint("%s", why);
    return CLI_ERROR;
}
