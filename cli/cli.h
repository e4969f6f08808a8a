/* cli/cli.h: error reporting and exit codes for the gprof-train binary (git's message rules:
 * lowercase, no full stop, problem first, operands quoted). Only cli/ exits. */
#ifndef GP_CLI_CLI_H
#define GP_CLI_CLI_H

#include "gp/status.h"

enum cli_exit {
    CLI_OK = 0,
    CLI_FINDINGS = 1, /* diagnose found issues at or above --fail-on */
    CLI_ERROR = 2
};

/* Print "gprof-train: error: <msg>" to stderr. @return CLI_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "hint: <msg>" to stderr; call after cli_error. */
void cli_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "gprof-train: warning: <msg>" to stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report a library error: file, position and message. @return CLI_ERROR. */
int cli_error_from(const gp_error *err, gp_status rc);

/* GP_ERROR_TRAIL=1 in a debug build: print where this thread's last failure was set and each
 * place that forwarded it (gp_error_trail), naming `about` (a path) unless NULL. */
void cli_print_trail(const char *about);

/* Say that `cmd` is not part of this build and return CLI_ERROR. */
int cli_not_built(const char *cmd, const char *why);

#endif
