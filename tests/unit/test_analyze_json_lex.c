/* The lexer's number fast path (word-at-a-time digits, taken with >= 40 bytes of window left)
 * must give exactly what the general path gives (taken near the end of the window). */
#include "gp_test.h"
#include "reader/json_lex.h"

#include <string.h>

/* Lex `text` twice: followed by padding (fast path) and at the end of the window (general). */
static void check_same(const char *text, int as_time)
{
    char padded[128];
    size_t n = strlen(text);
    memset(padded, ' ', sizeof(padded));
    memcpy(padded, text, n);
    json_lex a, b;
    json_num x, y;
    json_lex_init(&a);
    json_lex_init(&b);
    a.p = padded;
    a.end = padded + sizeof(padded);
    b.p = text;
    b.end = text + n;
    b.eof = 1;
    int ra = as_time ? json_lex_time(&a, &x) : json_lex_number(&a, &x);
    int rb = json_lex_number(&b, &y);
    GP_ASSERT_EQ_INT(ra, rb);
    if (ra != GP_OK)
        return;
    GP_ASSERT_EQ_INT((long long)(a.p - padded), (long long)(b.p - text));
    GP_ASSERT_EQ_INT(x.is_int, y.is_int);
    GP_ASSERT_EQ_INT(x.ns_ok, y.ns_ok);
    GP_ASSERT_EQ_INT(x.i, y.i);
    GP_ASSERT_EQ_INT(x.ns, y.ns);
    if (!as_time || x.is_int)
        GP_CHECK(memcmp(&x.d, &y.d, sizeof(x.d)) == 0); /* bitwise: -0.0 and rounding too */
}

static void test_numbers_match_general_path(void)
{
    static const char *const nums[] = {"0",
                                       "-0",
                                       "7",
                                       "-7",
                                       "12345678",
                                       "123456789",
                                       "1.5",
                                       "-0.5",
                                       "40.500",
                                       "4.120",
                                       "1.2345",
                                       "1.23456",
                                       "0.1234567",
                                       "1.12345678",
                                       "1751410836123456",
                                       "1751410836123456.789",
                                       "9223372036854775",
                                       "9223372036854",
                                       "999999999999999.9999",
                                       "123456789012345678",
                                       "1234567890123456789",
                                       "12345678901234567890",
                                       "1e3",
                                       "1.5E-2",
                                       "00",
                                       "01",
                                       "-",
                                       "-a",
                                       "1.",
                                       "1.e5",
                                       "NaN",
                                       "-Infinity",
                                       "5,",
                                       "3]",
                                       "2.50}",
                                       "12345678.12345678",
                                       "87654321876543218",
                                       "-9223372036854775808", /* UBSan: no negated INT64_MIN */
                                       "9223372036854775808",
                                       "-9223372036854775807",
                                       "-18446744073709551615"};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        check_same(nums[i], 0);
        check_same(nums[i], 1);
    }
}

/* The fast path declines with GP_DECLINED, never GP_MORE (which means "the window ended"). */
static void test_fast_path_declines_by_name(void)
{
    static const char *const slow[] = {"1e3", "12345678901234567890", "1.123456789", "-1.5E2"};
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
        char padded[64];
        memset(padded, ' ', sizeof(padded));
        memcpy(padded, slow[i], strlen(slow[i]));
        json_lex l;
        json_num x;
        json_lex_init(&l);
        l.p = padded;
        l.end = padded + sizeof(padded);
        GP_ASSERT_EQ_INT(json_number_fast(&l, &x, 1), GP_DECLINED);
        GP_CHECK(l.p == padded); /* nothing consumed: the general path starts over */
    }
}

int main(void)
{
    GP_RUN(test_numbers_match_general_path);
    GP_RUN(test_fast_path_declines_by_name);
    return gp_test_summary();
}
