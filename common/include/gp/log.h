/* gp/log.h: level-gated logging with a pluggable sink. Libraries never write to stdout;
 * by default WARN and above go to stderr, and GP_LOG=error|warn|info|debug|trace changes the level.
 */
#ifndef GP_COMMON_LOG_H
#define GP_COMMON_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gp_log_level {
    GP_LOG_ERROR = 0,
    GP_LOG_WARN = 1,
    GP_LOG_INFO = 2,
    GP_LOG_DEBUG = 3,
    GP_LOG_TRACE = 4
} gp_log_level;

/** A log sink: receives the level and one formatted line without a trailing newline. */
typedef void (*gp_log_fn)(gp_log_level level, const char *line, void *ud);

/** Install `fn` (NULL restores the stderr sink). Call before threads start logging. */
void gp_set_log_fn(gp_log_fn fn, void *ud);

/** Set the most verbose level that is emitted. */
void gp_set_log_level(gp_log_level level);

/** @return the current level (first call reads the GP_LOG environment variable). */
gp_log_level gp_log_level_get(void);

/** Parse "error", "warn", "info", "debug", "trace" into `*out`. @return 0, or -1 if unknown. */
int gp_log_level_parse(const char *name, gp_log_level *out);

/** Format and emit one line; prefer GP_LOG, which skips argument evaluation when gated. */
void gp_log_write(gp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

#define GP_LOG(level, ...)                                                                         \
    do {                                                                                           \
        if ((level) <= gp_log_level_get())                                                         \
            gp_log_write((level), __VA_ARGS__);                                                    \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
