/* json_lex.h: a streaming JSON lexer over a window of bytes. The reader is a measured hot path
 * (the target is >= 30x Python's json at ~35 MB/s, i.e. > 1 GB/s), so instead of a DOM
 * library it scans strings 16 bytes at a time, parses numbers in place (timestamps straight to
 * integer ns), and never builds values it does not keep. Every call returns GP_MORE when the
 * window ends before the token does: the caller refills and re-parses the whole unit. */
#ifndef GP_ANALYZE_JSON_LEX_H
#define GP_ANALYZE_JSON_LEX_H

#include "gp/status.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#    include <emmintrin.h>
#endif

/* What the lexer and the field parsers built on it return: gp_status (gp/status.h). GP_EPARSE:
 * an error, described in err_at/err_msg. GP_MORE: the window ended before the token did (refill
 * and re-parse the unit). GP_DECLINED: an inline fast path declines (the general path takes over;
 * the public calls never return it), or a field parser leaves the key to the next one. */

#define JSON_MAX_DEPTH 256

typedef struct json_lex {
    const char *p, *end; /* current position and end of the window */
    int eof;             /* no input after `end` */
    const char *err_at;  /* where the error is */
    char err_msg[192];
    const char *err_file; /* where gprof-train found it (json_lex_error's caller), or NULL: */
    int err_line;         /* a debug build's error trail starts there */
    char *scratch;        /* decoded strings with escapes */
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

/* Record an error at `at` (a position in the window), and the call's file:line (err_file,
 * err_line). @return GP_EPARSE. */
#define json_lex_error(...) json_lex_error_at(__FILE__, __LINE__, __VA_ARGS__)
gp_status json_lex_error_at(const char *file, int line, json_lex *l, const char *at,
                            const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 5, 6)))
#endif
        ;

/* Skip whitespace. @return the next byte, or -1 at the end of the window. */
static inline int json_lex_ws(json_lex *l)
{
    const char *p = l->p, *end = l->end;
    if (end - p >= 2) { /* the common cases: none, or the one space after ':' and ',' */
        if ((unsigned char)p[0] > ' ')
            return (unsigned char)p[0];
        if (p[0] == ' ' && (unsigned char)p[1] > ' ') {
            l->p = p + 1;
            return (unsigned char)p[1];
        }
    }
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    l->p = p;
    return p < end ? (unsigned char)*p : -1;
}

/* Consume the byte `c` after optional whitespace; `what` names it in the error. */
gp_status json_lex_expect(json_lex *l, char c, const char *what);

/* First position in [p, end) holding '"', '\\' or a byte >= 0x80 or < 0x20; end if none. */
static inline const char *json_scan_special(const char *p, const char *end)
{
#ifdef __SSE2__
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs));
        /* signed compare: bytes >= 0x80 are negative, so "<= 0x1f" catches both ranges */
        m = _mm_or_si128(m, _mm_cmpgt_epi8(_mm_add_epi8(sp, _mm_set1_epi8(1)), v));
        int mask = _mm_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
            return p;
        p++;
    }
    return end;
}

gp_status json_lex_string_slow(json_lex *l, const char *q, const char **s, size_t *n);

/* A string at l->p (which must be '"'). On GP_OK (*s, *n) is the decoded text: a slice of the
 * window when it has no escapes, else the scratch buffer (valid until the next string). The
 * plain case is inline: a trace is mostly short keys. */
static inline gp_status json_lex_string(json_lex *l, const char **s, size_t *n)
{
    const char *start = l->p + 1;
    const char *q = json_scan_special(start, l->end);
    if (q < l->end && *q == '"') {
        *s = start;
        *n = (size_t)(q - start);
        l->p = q + 1;
        return GP_OK;
    }
    return json_lex_string_slow(l, q, s, n);
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The leading decimal digits (0..8) of the 8 bytes at p, and their value in *val: a
 * word-at-a-time parse (hot path: a Kineto event has ~10 numbers). */
static inline int json_lead_digits(const char *p, uint64_t *val)
{
    uint64_t x;
    memcpy(&x, p, 8);
    x -= 0x3030303030303030ull; /* a borrow only disturbs bytes after a non-digit */
    uint64_t bad = (x | (x + 0x7676767676767676ull)) & 0x8080808080808080ull;
    int k = bad ? __builtin_ctzll(bad) >> 3 : 8;
    if (k == 0) {
        *val = 0;
        return 0;
    }
    x <<= 8 * (8 - k); /* the first digit is the most significant: zeros in front */
    x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFull;
    x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFull;
    *val = (x * 10000 + (x >> 32)) & 0xFFFFFFFFull;
    return k;
}
#else
static inline int json_lead_digits(const char *p, uint64_t *val)
{
    uint64_t v = 0;
    int k = 0;
    while (k < 8 && (unsigned)(p[k] - '0') < 10u)
        v = v * 10 + (uint64_t)(p[k++] - '0');
    *val = v;
    return k;
}
#endif

static const uint64_t json_pow10[9] = {1,      10,      100,      1000,     10000,
                                       100000, 1000000, 10000000, 100000000};

#define JSON_NOT_FAST (-1) /* json_fast_int: not a plain integer (the general path decides) */

/* The integer digits at *pp (at most 18, no leading zero before another digit): their count,
 * or JSON_NOT_FAST for anything else. */
static inline int json_fast_int(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v, w;
    int k = json_lead_digits(p, &v), nd = k;
    if (k == 0 || (p[0] == '0' && k > 1))
        return JSON_NOT_FAST;
    for (int round = 0; k == 8 && round < 2; round++) {
        k = json_lead_digits(p + nd, &w);
        if (nd + k > 18)
            return JSON_NOT_FAST;
        v = v * json_pow10[k] + w;
        nd += k;
    }
    *pp = p + nd;
    *out = v;
    return nd;
}

/* Fast path with >= 40 bytes of window left (no bounds checks): at most 18 integer digits,
 * at most 7 fraction digits, no exponent, |value * 1000| in range. `want_d`: out->d must be
 * set as the general path sets it. @return GP_OK, or GP_DECLINED: the general path decides (it
 * also reports errors). */
static inline gp_status json_number_fast(json_lex *l, json_num *out, int want_d)
{
    const char *p = l->p;
    int neg = *p == '-';
    p += neg;
    uint64_t v, fv = 0;
    int nd = json_fast_int(&p, &v), nf = 0;
    if (nd < 0 || v > (uint64_t)(INT64_MAX / 1000 - 1))
        return GP_DECLINED;
    if (*p == '.') {
        nf = json_lead_digits(p + 1, &fv);
        if (nf == 0 || nf == 8 || (want_d && (nf > 4 || nd > 15)))
            return GP_DECLINED;
        p += 1 + nf;
    }
    if (*p == 'e' || *p == 'E')
        return GP_DECLINED;
    int64_t iv = (int64_t)v;
    l->p = p;
    out->is_int = nf == 0;
    out->ns_ok = 1;
    out->i = neg ? -iv : iv;
    /* the first 4 fraction digits as 0..9999, as the general path computes them */
    int f = nf <= 4 ? (int)(fv * json_pow10[4 - nf]) : (int)(fv / json_pow10[nf - 4]);
    int64_t ns = iv * 1000 + (nf ? (f + 5) / 10 : 0);
    out->ns = neg ? -ns : ns;
    if (nf == 0)
        out->d = (double)out->i;
    else if (want_d)
        out->d = (neg ? -1.0 : 1.0) * ((double)v + (double)f / 10000.0);
    return GP_OK;
}

/* The general case of json_lex_number: any valid number, errors, the end of the window. */
gp_status json_lex_number_slow(json_lex *l, json_num *out);

/* A number (or NaN/Infinity/-Infinity, which Python writes) at l->p. The fast path is inline so
 * that callers which use only part of json_num let the compiler drop the rest. */
static inline gp_status json_lex_number(json_lex *l, json_num *out)
{
    if (l->end - l->p >= 40 && json_number_fast(l, out, 1) == GP_OK)
        return GP_OK;
    return json_lex_number_slow(l, out);
}

/* As json_lex_number, for a value only used through is_int/i/ns_ok/ns: out->d may be left
 * unset for fractions (saves a strtod on 16-digit absolute timestamps). */
static inline gp_status json_lex_time(json_lex *l, json_num *out)
{
    if (l->end - l->p >= 40 && json_number_fast(l, out, 0) == GP_OK)
        return GP_OK;
    return json_lex_number_slow(l, out);
}

/* The number as an int64: exact for integers, truncated toward zero for other finite values,
 * saturated at INT64_MIN/INT64_MAX beyond them, 0 for NaN (no undefined float-to-int cast). */
int64_t json_num_to_i64(const json_num *n);

/* Skip any value, validating it; `depth` is the current nesting. */
gp_status json_lex_skip(json_lex *l, int depth);

/* json_lex_next's general case (whitespace, the closing byte, errors, the end of the window). */
gp_status json_lex_next_slow(json_lex *l, char close, const char *what, int *more);

/* After an element of an array or object: consume ',' (*more = 1) or `close` (*more = 0).
 * Inline for the common case of no whitespace before the ','. @return GP_OK, GP_MORE or
 * GP_EPARSE. */
static inline gp_status json_lex_next(json_lex *l, char close, const char *what, int *more)
{
    if (l->p < l->end && *l->p == ',') {
        l->p++;
        *more = 1;
        return GP_OK;
    }
    return json_lex_next_slow(l, close, what, more);
}

/* @return 1 when s[0..n) is valid UTF-8. */
int json_utf8_valid(const unsigned char *s, size_t n);

#endif
