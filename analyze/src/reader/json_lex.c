/* The streaming JSON lexer (see json_lex.h for why it is hand-written): strings scanned with
 * SSE2 (SWAR elsewhere), UTF-8 validated, escapes decoded into a scratch buffer, numbers parsed
 * in place with an exact microseconds-to-nanoseconds path, and a validating skip for values the
 * reader does not keep. */
#include "reader/json_lex.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_lex_init(json_lex *l)
{
    memset(l, 0, sizeof(*l));
}

void json_lex_release(json_lex *l)
{
    free(l->scratch);
    l->scratch = NULL;
    l->scratch_cap = 0;
}

gp_status json_lex_error_at(const char *file, int line, json_lex *l, const char *at,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err_msg, sizeof(l->err_msg), fmt, ap);
    va_end(ap);
    l->err_at = at;
    l->err_file = file;
    l->err_line = line;
    return GP_EPARSE;
}

gp_status json_lex_expect(json_lex *l, char c, const char *what)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch != (unsigned char)c)
        return json_lex_error(l, l->p, "expected %s", what);
    l->p++;
    return GP_OK;
}

gp_status json_lex_next_slow(json_lex *l, char close, const char *what, int *more)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    l->p++;
    if (ch == ',') {
        *more = 1;
        return GP_OK;
    }
    if (ch == (unsigned char)close) {
        *more = 0;
        return GP_OK;
    }
    return json_lex_error(l, l->p - 1, "expected ',' or '%c' %s", close, what);
}

#define UTF8_CUT (-1) /* utf8_seq: the window ends inside the sequence */

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid, UTF8_CUT. */
static int utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (len == 0 || c > 0xF4)
        return 0;
    if ((size_t)len > n) {
        for (size_t k = 1; k < n; k++)
            if ((s[k] & 0xC0) != 0x80)
                return 0;
        return UTF8_CUT;
    }
    for (int k = 1; k < len; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, surrogate */
    if (len == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
        return 0; /* overlong, > U+10FFFF */
    return len;
}

int json_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int k = utf8_seq(s + i, n - i);
        if (k <= 0)
            return 0;
        i += (size_t)k;
    }
    return 1;
}

static gp_status scratch_put(json_lex *l, const char *s, size_t n)
{
    if (l->scratch_len + n + 1 > l->scratch_cap) {
        size_t cap = l->scratch_cap ? l->scratch_cap : 256;
        while (cap < l->scratch_len + n + 1)
            cap *= 2;
        char *d = realloc(l->scratch, cap);
        if (!d)
            return GP_ENOMEM;
        l->scratch = d;
        l->scratch_cap = cap;
    }
    memcpy(l->scratch + l->scratch_len, s, n);
    l->scratch_len += n;
    return GP_OK;
}

static gp_status hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return GP_EPARSE;
        v = v * 16 + d;
    }
    *out = v;
    return GP_OK;
}

static gp_status put_utf8(json_lex *l, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return scratch_put(l, b, n);
}

/* \uXXXX at p (after the backslash and 'u'), with surrogate pairs; lone surrogates -> U+FFFD. */
static gp_status unicode_escape(json_lex *l, const char **pp)
{
    const char *p = *pp;
    unsigned cp, lo;
    if (l->end - p < 4)
        return GP_MORE;
    if (hex4(p, &cp) != 0)
        return json_lex_error(l, p - 2, "invalid \\u escape in string");
    p += 4;
    if (cp >= 0xD800 && cp < 0xDC00) {
        if (l->end - p < 6)
            return l->eof ? json_lex_error(l, p, "unterminated string") : GP_MORE;
        if (p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else {
            cp = 0xFFFD;
        }
    } else if (cp >= 0xDC00 && cp < 0xE000) {
        cp = 0xFFFD;
    }
    *pp = p;
    return put_utf8(l, cp) == 0 ? GP_OK : json_lex_error(l, p, "out of memory");
}

static gp_status escape(json_lex *l, const char **pp)
{
    const char *p = *pp; /* at the backslash */
    if (l->end - p < 2)
        return GP_MORE;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit = memchr(from, p[1], 8);
    int rc = 0;
    if (p[1] && hit) {
        rc = scratch_put(l, &to[hit - from], 1);
        p += 2;
    } else if (p[1] == 'u') {
        p += 2;
        gp_status r = unicode_escape(l, &p);
        if (r != GP_OK)
            return r;
    } else {
        /* Kineto before 2025 wrote raw backslashes; tb_plugin reads them leniently too. */
        l->lenient_escapes++;
        rc = scratch_put(l, p, 1);
        p += 1;
    }
    *pp = p;
    return rc == 0 ? GP_OK : json_lex_error(l, p, "out of memory");
}

/* Slow path: the string has escapes, non-ASCII bytes or control characters. */
static gp_status string_slow(json_lex *l, const char *start, const char *p, const char **s,
                             size_t *n)
{
    int copying = 0;
    l->scratch_len = 0;
    for (;;) {
        const char *q = json_scan_special(p, l->end);
        if (copying && scratch_put(l, p, (size_t)(q - p)) != 0)
            return json_lex_error(l, q, "out of memory");
        p = q;
        if (p >= l->end)
            return GP_MORE;
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        if (c == '\\') {
            if (!copying && scratch_put(l, start, (size_t)(p - start)) != 0)
                return json_lex_error(l, p, "out of memory");
            copying = 1;
            gp_status rc = escape(l, &p);
            if (rc != GP_OK)
                return rc;
            continue;
        }
        if (c == 0) /* no text holds one; a mapped file that shrank reads as zeros from its end */
            return json_lex_error(l, p, "a NUL byte in a string");
        if (c < 0x20) {
            l->control_chars++;
            if (copying && scratch_put(l, p, 1) != 0)
                return json_lex_error(l, p, "out of memory");
            p++;
            continue;
        }
        int k = utf8_seq((const unsigned char *)p, (size_t)(l->end - p));
        if (k == UTF8_CUT)
            return GP_MORE;
        if (k == 0)
            return json_lex_error(l, p, "invalid UTF-8 byte 0x%02x in string", c);
        if (copying && scratch_put(l, p, (size_t)k) != 0)
            return json_lex_error(l, p, "out of memory");
        p += k;
    }
    if (copying) {
        l->scratch[l->scratch_len] = 0;
        *s = l->scratch;
        *n = l->scratch_len;
    } else {
        *s = start;
        *n = (size_t)(p - start);
    }
    l->p = p + 1;
    return GP_OK;
}

gp_status json_lex_string_slow(json_lex *l, const char *q, const char **s, size_t *n)
{
    if (q >= l->end)
        return GP_MORE;
    return string_slow(l, l->p + 1, q, s, n);
}

#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

static gp_status number_special(json_lex *l, json_num *out)
{
    static const struct {
        const char *word;
        double v;
    } words[] = {{"NaN", NAN}, {"Infinity", INFINITY}, {"-Infinity", -INFINITY}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        size_t have = (size_t)(l->end - l->p);
        if (memcmp(l->p, words[i].word, have < n ? have : n) != 0)
            continue;
        if (have < n)
            return GP_MORE;
        l->p += n;
        out->is_int = out->ns_ok = 0;
        out->d = words[i].v;
        return GP_OK;
    }
    return json_lex_error(l, l->p, "invalid value");
}

/* Finish a number whose text is [start, p): doubles via strtod on a bounded copy. */
static double to_double(const char *start, const char *p)
{
    char buf[64];
    size_t n = (size_t)(p - start);
    if (n >= sizeof(buf)) {
        char *big = malloc(n + 1);
        if (!big)
            return NAN;
        memcpy(big, start, n);
        big[n] = 0;
        double d = strtod(big, NULL);
        free(big);
        return d;
    }
    memcpy(buf, start, n);
    buf[n] = 0;
    return strtod(buf, NULL);
}

/* Parse the digits of a number; out-params describe its parts. */
static gp_status number_scan(json_lex *l, const char **pp, uint64_t *mant, int *int_digits,
                             int *frac4, int *frac_digits, int *has_exp)
{
    const char *p = *pp, *end = l->end;
    uint64_t v = 0;
    int nd = 0, f = 0, nf = 0;
    if (p < end && *p == '0') {
        p++;
        nd = 1;
    } else {
        while (p < end && IS_DIGIT(*p)) {
            if (nd < 19)
                v = v * 10 + (uint64_t)(*p - '0');
            nd++;
            p++;
        }
    }
    if (p < end && nd == 0)
        return json_lex_error(l, p, "invalid number");
    if (p < end && *p == '.') {
        p++;
        while (p < end && IS_DIGIT(*p)) {
            if (nf < 4)
                f = f * 10 + (*p - '0');
            nf++;
            p++;
        }
        if (p < end && nf == 0)
            return json_lex_error(l, p, "invalid number: digits expected after '.'");
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        int ne = 0;
        while (p < end && IS_DIGIT(*p))
            p++, ne++;
        if (p < end && ne == 0)
            return json_lex_error(l, p, "invalid number: digits expected in exponent");
        *has_exp = 1;
    }
    if (p >= end && !l->eof)
        return GP_MORE;
    if (nd == 0 || (p >= end &&
                    (p[-1] == '.' || p[-1] == 'e' || p[-1] == 'E' || p[-1] == '-' || p[-1] == '+')))
        return json_lex_error(l, p, "invalid number");
    for (int k = nf < 4 ? nf : 4; k < 4; k++)
        f *= 10; /* the first 4 fraction digits, as an integer 0..9999 */
    *pp = p;
    *mant = v;
    *int_digits = nd;
    *frac4 = f;
    *frac_digits = nf;
    return GP_OK;
}

gp_status json_lex_number_slow(json_lex *l, json_num *out)
{
    const char *start = l->p, *p = start;
    if (p >= l->end)
        return GP_MORE;
    int neg = *p == '-';
    p += neg;
    if (p < l->end && !IS_DIGIT(*p))
        return number_special(l, out);
    uint64_t v = 0;
    int nd = 0, f = 0, nf = 0, has_exp = 0;
    gp_status rc = number_scan(l, &p, &v, &nd, &f, &nf, &has_exp);
    if (rc != GP_OK)
        return rc;
    int has_frac = nf > 0;
    l->p = p;
    out->is_int = !has_frac && !has_exp && nd <= 19 && v <= (uint64_t)INT64_MAX;
    /* -9223372036854775808 is not an int here (v > INT64_MAX): negating it would overflow */
    out->i = v > (uint64_t)INT64_MAX ? 0 : neg ? -(int64_t)v : (int64_t)v;
    if (!has_exp && nd <= 19 && v <= (uint64_t)(INT64_MAX / 1000 - 1)) {
        int64_t ns = (int64_t)v * 1000 + (has_frac ? (f + 5) / 10 : 0);
        out->ns = neg ? -ns : ns;
        out->ns_ok = 1;
        /* up to 4 fraction digits are exact in f; more digits need strtod */
        if (out->is_int)
            out->d = (double)out->i;
        else if (nf <= 4 && nd <= 15)
            out->d = (neg ? -1.0 : 1.0) * ((double)v + (double)f / 10000.0);
        else
            out->d = to_double(start, p);
        return GP_OK;
    }
    out->d = to_double(start, p);
    double x = out->d * 1000.0;
    out->ns_ok = isfinite(x) && fabs(x) < 9.0e18;
    out->ns = out->ns_ok ? llround(x) : 0;
    return GP_OK;
}

static gp_status skip_container(json_lex *l, int depth, char close)
{
    if (depth >= JSON_MAX_DEPTH)
        return json_lex_error(l, l->p, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    l->p++;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == (unsigned char)close) {
        l->p++;
        return GP_OK;
    }
    for (;;) {
        int more;
        gp_status rc;
        if (close == '}') {
            if (json_lex_ws(l) < 0)
                return GP_MORE;
            if (*l->p != '"')
                return json_lex_error(l, l->p, "expected a string key");
            const char *s;
            size_t n;
            if ((rc = json_lex_string(l, &s, &n)) != GP_OK)
                return rc;
            if ((rc = json_lex_expect(l, ':', "':' after key")) != GP_OK)
                return rc;
        }
        if ((rc = json_lex_skip(l, depth + 1)) != GP_OK)
            return rc;
        if ((rc = json_lex_next(l, close, close == '}' ? "in object" : "in array", &more)) != GP_OK)
            return rc;
        if (!more)
            return GP_OK;
    }
}

static gp_status skip_word(json_lex *l, const char *word)
{
    size_t n = strlen(word), have = (size_t)(l->end - l->p);
    if (memcmp(l->p, word, have < n ? have : n) != 0)
        return json_lex_error(l, l->p, "invalid value");
    if (have < n)
        return GP_MORE;
    l->p += n;
    return GP_OK;
}

gp_status json_lex_skip(json_lex *l, int depth)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    switch (ch) {
    case '"': {
        const char *s;
        size_t n;
        return json_lex_string(l, &s, &n);
    }
    case '{':
        return skip_container(l, depth, '}');
    case '[':
        return skip_container(l, depth, ']');
    case 't':
        return skip_word(l, "true");
    case 'f':
        return skip_word(l, "false");
    case 'n':
        return skip_word(l, "null");
    default: {
        json_num num; /* validated, value unused: the variant that leaves out->d unset */
        return json_lex_time(l, &num);
    }
    }
}

int64_t json_num_to_i64(const json_num *n)
{
    if (n->is_int)
        return n->i;
    if (isnan(n->d))
        return 0;
    if (n->d >= 9223372036854775807.0)
        return INT64_MAX;
    if (n->d <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)n->d;
}
