/* gp/status.h: status codes and error details shared by every gprof-train library.
 * Fallible functions return gp_status; details go in an optional trailing gp_error *. */
#ifndef GP_COMMON_STATUS_H
#define GP_COMMON_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result of a fallible library call: GP_OK or a negative error code. The positive values are
 * no failures: outcomes a library passes between its own functions (the trace reader's lexer),
 * never returned by a public call. */
typedef enum gp_status {
    GP_DECLINED = 2, /**< not handled here: a fast path or a field parser leaves it to the next */
    GP_MORE = 1,     /**< the input window ended before the unit did: refill, parse it again */
    GP_OK = 0,
    GP_EINVAL = -1,      /**< invalid argument or option */
    GP_ENOMEM = -2,      /**< allocation failed or a capped buffer is full */
    GP_EIO = -3,         /**< read, write, open or rename failed */
    GP_EPARSE = -4,      /**< malformed input (trace, dataset, config) */
    GP_ECUDA = -5,       /**< a CUDA runtime or library call failed */
    GP_ECUPTI = -6,      /**< CUPTI is missing, busy or failed */
    GP_EUNSUPPORTED = -7 /**< feature not built in or not available here */
} gp_status;

/** Details of a failure. `path`, `line` (1-based, 0 = unknown), `col` and `offset`
 * (byte offset, -1 = unknown) say where; `msg` says what. Caller-owned storage. */
typedef struct gp_error {
    gp_status code;
    char msg[256];
    char path[512];
    long line;
    long col;
    long long offset;
} gp_error;

/** @return a static, lowercase name for `code` ("parse error"); never NULL. */
const char *gp_strerror(gp_status code);

/** Clear `err` (no-op when NULL): code GP_OK, empty strings, unknown position. */
void gp_error_clear(gp_error *err);

/** Record a failure in `err` (no-op when NULL) and return `code`, so callers can write
 * `return gp_error_set(err, GP_EIO, path, "cannot open: %s", strerror(errno));`.
 * @param path file the error is about, or NULL. The message is printf-formatted and truncated.
 * In debug builds the call's file:line starts the calling thread's trail (GP_TRY). */
#define gp_error_set(...) gp_error_set_at(__FILE__, __LINE__, __VA_ARGS__)
gp_status gp_error_set_at(const char *file, int line, gp_error *err, gp_status code,
                          const char *path, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 6, 7)))
#endif
        ;

/** Debug builds (no NDEBUG): a failure leaves its file:line trail, as zstd's FORWARD_IF_ERROR
 * does: gp_error_set notes where it was set and each GP_TRY that returns it notes itself, on the
 * calling thread. Write that thread's trail ("a.c:LINE < b.c:LINE < ...",
 * where it was set first) into buf and forget it; "" when there is none and in release builds.
 * @return buf. Only the CLI prints it (GP_ERROR_TRAIL=1). */
const char *gp_error_trail(char *buf, size_t cap);
#ifdef NDEBUG
#    define GP_TRAIL_NOTE() ((void)0)
#else
#    define GP_TRAIL_NOTE() gp_trail_note(__FILE__, __LINE__)
#endif
void gp_trail_note(const char *file, int line);

/** Attach a position to an error already set (no-op when NULL). -1/0 mean unknown. */
void gp_error_at(gp_error *err, long long offset, long line, long col);

/** Propagate a result: evaluate `expr` (a gp_status) and return it when it is not GP_OK. Only a
 * failure (< GP_OK) leaves a trail note; GP_MORE and GP_DECLINED are forwarded silently. */
#define GP_TRY(expr)                                                                               \
    do {                                                                                           \
        gp_status gp_try_rc = (expr);                                                              \
        if (gp_try_rc != GP_OK) {                                                                  \
            if (gp_try_rc < GP_OK)                                                                 \
                GP_TRAIL_NOTE();                                                                   \
            return gp_try_rc;                                                                      \
        }                                                                                          \
    } while (0)

/** Fail with `code` and a formatted message in `err` when `cond` holds. */
#define GP_FAIL_IF(cond, code, err, ...)                                                           \
    do {                                                                                           \
        if (cond)                                                                                  \
            return gp_error_set((err), (code), NULL, __VA_ARGS__);                                 \
    } while (0)

/** Invariant that holds in every build; a violation is a bug in gprof-train, so it aborts. */
#define GP_BUG(...) gp_bug(__FILE__, __LINE__, __VA_ARGS__)
void gp_bug(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4), noreturn))
#endif
        ;

#ifdef NDEBUG
#    define GP_ASSERT(cond) ((void)0)
#else
#    define GP_ASSERT(cond) ((cond) ? (void)0 : gp_bug(__FILE__, __LINE__, "assert: %s", #    cond))
#endif

#ifdef __cplusplus
}
#endif
#endif
