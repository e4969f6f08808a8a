/* viewer-export/src/pb_enc.c: the protobuf wire-format writer of pb_enc.h. A nested message
 * reserves one byte for its length; the rare one of 128 bytes or more is moved up to make room
 * for a longer varint when it ends. */
#include "pb_enc.h"
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LEN = 2 };

void pb_reset(pb_buf *b)
{
    b->len = 0;
    b->depth = 0;
}

void pb_free(pb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int reserve(pb_buf *b, size_t n)
{
    if (b->failed)
        return 0;
    if (b->len + n <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint_at(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
}

static void raw_varint(pb_buf *b, uint64_t v)
{
    size_t n = varint_len(v);
    if (!reserve(b, n))
        return;
    put_varint_at(b->p + b->len, v);
    b->len += n;
}

static void tag(pb_buf *b, uint32_t field, unsigned wire)
{
    raw_varint(b, ((uint64_t)field << 3) | wire);
}

static void raw(pb_buf *b, const void *p, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void pb_varint(pb_buf *b, uint32_t field, uint64_t v)
{
    tag(b, field, WIRE_VARINT);
    raw_varint(b, v);
}

void pb_int(pb_buf *b, uint32_t field, int64_t v)
{
    pb_varint(b, field, (uint64_t)v);
}

void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    tag(b, field, WIRE_FIXED64);
    raw(b, le, sizeof le);
}

void pb_double(pb_buf *b, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    pb_fixed64(b, field, u);
}

/* Bytes of `s` with each invalid UTF-8 byte replaced by U+FFFD (3 bytes). */
static size_t clean_len(const unsigned char *s, size_t *n_bad)
{
    size_t n = 0;
    *n_bad = 0;
    while (s[n]) {
        size_t k = export_utf8_len(s + n);
        *n_bad += k == 0;
        n += k ? k : 1;
    }
    return n;
}

void pb_str(pb_buf *b, uint32_t field, const char *s)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t bad, n = clean_len(u, &bad);
    tag(b, field, WIRE_LEN);
    raw_varint(b, n + 2 * bad);
    if (!bad) {
        raw(b, u, n);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t k = export_utf8_len(u + i);
        if (k)
            raw(b, u + i, k);
        else
            raw(b, "\xEF\xBF\xBD", 3);
        i += k ? k : 1;
    }
}

void pb_begin(pb_buf *b, uint32_t field)
{
    tag(b, field, WIRE_LEN);
    if (b->depth == PB_MAX_DEPTH)
        b->failed = 1;
    if (!reserve(b, 1))
        return;
    b->open[b->depth++] = b->len++;
}

void pb_end(pb_buf *b)
{
    if (b->failed || b->depth == 0)
        return;
    size_t at = b->open[--b->depth], body = b->len - at - 1, n = varint_len(body);
    if (n > 1) {
        if (!reserve(b, n - 1))
            return;
        memmove(b->p + at + n, b->p + at + 1, body);
        b->len += n - 1;
    }
    put_varint_at(b->p + at, body);
}
