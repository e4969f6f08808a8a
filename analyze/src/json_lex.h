/* json_lex.h: a streaming JSON lexer over a window of bytes. The reader is a measured hot path
 * (the target is >= 30x Python's json at ~35 MB/s, i.e. > 1 GB/s), so instead of a DOM
 * library it scans strings 16 bytes at a time, parses numbers in place (timestamps straight to
 * integer ns), and never builds values it does not keep. Every call returns LEX_MORE when the
 * window ends before the token does: the caller refills and re-parses the whole unit. */
#ifndef GP_ANALYZE_JSON_LEX_H
#define GP_ANALYZE_JSON_LEX_H

#include <stddef.h>
#include <stdint.h>

enum { LEX_OK = 0, LEX_MORE = 1, LEX_ERR = -1 };

#define LEX_MAX_DEPTH 256

typedef struct json_lex {
    const char *p, *end; /* current position and end of the window */
    int eof;             /* no input after `end` */
    const char *err_at;  /* where the error is */
    char err_msg[192];
    char *scratch; /* decoded strings with escapes */
    size_t scratch_cap, scratch_len;
    uint64_t lenient_escapes; /* invalid escapes kept verbatim (old Kineto files) */
    uint64_t control_chars;   /* raw control characters in strings (accepted) */
} json_lex;

/* A number: `i` when is_int, `d` always, `ns` = value * 1000 rounded (us -> ns) when ns_ok. */
typedef struct json_num {
    int is_int, ns_ok;
    int64_t i, ns;
    double d;
} json_num;

void json_lex_init(json_lex *l);
void json_lex_release(json_lex *l);

/* Record an error at `at` (a position in the window). @return LEX_ERR. */
int json_lex_error(json_lex *l, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

/* Skip whitespace. @return the next byte, or -1 at the end of the window. */
static inline int json_lex_ws(json_lex *l)
{
    const char *p = l->p, *end = l->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    l->p = p;
    return p < end ? (unsigned char)*p : -1;
}

/* Consume the byte `c` after optional whitespace; `what` names it in the error. */
int json_lex_expect(json_lex *l, char c, const char *what);

/* A string at l->p (which must be '"'). On LEX_OK (*s, *n) is the decoded text: a slice of the
 * window when it has no escapes, else the scratch buffer (valid until the next string). */
int json_lex_string(json_lex *l, const char **s, size_t *n);

/* A number (or NaN/Infinity/-Infinity, which Python writes) at l->p. */
int json_lex_number(json_lex *l, json_num *out);

/* As json_lex_number, for a value only used through is_int/i/ns_ok/ns: out->d may be left
 * unset for fractions (saves a strtod on 16-digit absolute timestamps). */
int json_lex_time(json_lex *l, json_num *out);

/* The number as an int64: exact for integers, truncated toward zero for other finite values,
 * saturated at INT64_MIN/INT64_MAX beyond them, 0 for NaN (no undefined float-to-int cast). */
int64_t json_num_to_i64(const json_num *n);

/* Skip any value, validating it; `depth` is the current nesting. */
int json_lex_skip(json_lex *l, int depth);

/* json_lex_next's general case (whitespace, the closing byte, errors, the end of the window). */
int json_lex_next_slow(json_lex *l, char close, const char *what, int *more);

/* After an element of an array or object: consume ',' (*more = 1) or `close` (*more = 0).
 * Inline for the common case of no whitespace before the ','. @return LEX_OK, LEX_MORE or
 * LEX_ERR. */
static inline int json_lex_next(json_lex *l, char close, const char *what, int *more)
{
    if (l->p < l->end && *l->p == ',') {
        l->p++;
        *more = 1;
        return LEX_OK;
    }
    return json_lex_next_slow(l, close, what, more);
}

/* @return 1 when s[0..n) is valid UTF-8. */
int json_utf8_valid(const unsigned char *s, size_t n);

#endif
