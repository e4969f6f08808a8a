/* Unit tests for gp_export's protobuf writer (pb_enc.c), byte for byte against the wire format:
 * varints at their 7-bit boundaries, negative int64 as ten bytes, fixed64 and doubles little
 * endian, field tags past 15, nested messages whose length needs one, two or three bytes,
 * invalid UTF-8 in strings replaced by U+FFFD, and nesting too deep remembered as a failure. */
#include "gp_test.h"
#include "pb_enc.h"

#include <stdlib.h>
#include <string.h>

static int bytes_eq(const pb_buf *b, const void *want, size_t n)
{
    return !b->failed && b->len == n && memcmp(b->p, want, n) == 0;
}

static void test_varints(void)
{
    pb_buf b = {0};
    pb_varint(&b, 1, 0);
    pb_varint(&b, 1, 127);
    pb_varint(&b, 1, 128);
    pb_varint(&b, 1, 300);
    static const unsigned char want[] = {0x08, 0x00, 0x08, 0x7F, 0x08,
                                         0x80, 0x01, 0x08, 0xAC, 0x02};
    GP_CHECK(bytes_eq(&b, want, sizeof want));
    pb_reset(&b);
    pb_int(&b, 2, -1); /* two's complement, ten bytes */
    static const unsigned char neg[] = {0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                        0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    GP_CHECK(bytes_eq(&b, neg, sizeof neg));
    pb_reset(&b);
    pb_varint(&b, 87, 1); /* tag (87 << 3) = 696: two bytes */
    static const unsigned char tag[] = {0xB8, 0x05, 0x01};
    GP_CHECK(bytes_eq(&b, tag, sizeof tag));
    pb_free(&b);
}

static void test_fixed(void)
{
    pb_buf b = {0};
    pb_fixed64(&b, 47, 0x0102030405060708ULL);
    static const unsigned char want[] = {0xF9, 0x02, 0x08, 0x07, 0x06,
                                         0x05, 0x04, 0x03, 0x02, 0x01};
    GP_CHECK(bytes_eq(&b, want, sizeof want));
    pb_reset(&b);
    pb_double(&b, 5, 1.0);
    static const unsigned char one[] = {0x29, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
    GP_CHECK(bytes_eq(&b, one, sizeof one));
    pb_free(&b);
}

/* A message in field 1 holding a string of `n` bytes in field 2. */
static void nested_of(size_t n, size_t len_bytes)
{
    pb_buf b = {0};
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = 0;
    pb_begin(&b, 1);
    pb_str(&b, 2, s);
    pb_end(&b);
    size_t inner_len_bytes = n < 128 ? 1 : n < 16384 ? 2 : 3;
    size_t body = 1 + inner_len_bytes + n;
    GP_ASSERT_EQ_INT(b.failed, 0);
    GP_ASSERT_EQ_INT(b.len, 1 + len_bytes + body);
    GP_ASSERT_EQ_INT(b.p[0], 0x0A);
    uint64_t v = 0;
    for (size_t i = 0; i < len_bytes; i++)
        v |= (uint64_t)(b.p[1 + i] & 0x7F) << (7 * i);
    GP_ASSERT_EQ_INT(v, body);
    GP_ASSERT_EQ_INT(b.p[len_bytes] & 0x80, 0); /* the length's last byte */
    GP_ASSERT_EQ_INT(b.p[1 + len_bytes], 0x12);
    GP_CHECK(n == 0 || (b.p[b.len - 1] == 'x' && b.p[1 + len_bytes + 1 + inner_len_bytes] == 'x'));
    free(s);
    pb_free(&b);
}

static void test_nested_lengths(void)
{
    nested_of(0, 1);
    nested_of(125, 1);   /* body 127: still one byte */
    nested_of(126, 2);   /* body 129 (the string's length takes 2): moved up one */
    nested_of(20000, 3); /* body 20004: three bytes */
    pb_buf b = {0};      /* two levels, the inner one long */
    pb_begin(&b, 1);
    pb_begin(&b, 2);
    for (int i = 0; i < 100; i++)
        pb_varint(&b, 3, 1);
    pb_end(&b);
    pb_varint(&b, 4, 5);
    pb_end(&b);
    /* 0A len(3 + 200 + 2 = 205: CD 01) | 12 len(200: C8 01) 100 x (18 01) | 20 05 */
    GP_ASSERT_EQ_INT(b.len, 3 + 205);
    GP_ASSERT_EQ_INT(b.p[1], 0xCD);
    GP_ASSERT_EQ_INT(b.p[2], 0x01);
    GP_ASSERT_EQ_INT(b.p[3], 0x12);
    GP_ASSERT_EQ_INT(b.p[4], 0xC8);
    GP_ASSERT_EQ_INT(b.p[b.len - 2], 0x20);
    pb_free(&b);
}

static void test_utf8(void)
{
    pb_buf b = {0};
    pb_str(&b, 1, "caf\xc3\xa9\xff!");
    static const unsigned char want[] = {0x0A, 9, 'c', 'a', 'f', 0xC3, 0xA9, 0xEF, 0xBF, 0xBD, '!'};
    GP_CHECK(bytes_eq(&b, want, sizeof want));
    pb_reset(&b);
    pb_str(&b, 1, NULL);
    static const unsigned char empty[] = {0x0A, 0};
    GP_CHECK(bytes_eq(&b, empty, sizeof empty));
    pb_free(&b);
}

static void test_too_deep(void)
{
    pb_buf b = {0};
    for (int i = 0; i <= PB_MAX_DEPTH; i++)
        pb_begin(&b, 1);
    GP_ASSERT_EQ_INT(b.failed, 1);
    pb_free(&b);
}

int main(void)
{
    GP_RUN(test_varints);
    GP_RUN(test_fixed);
    GP_RUN(test_nested_lengths);
    GP_RUN(test_utf8);
    GP_RUN(test_too_deep);
    return gp_test_summary();
}
