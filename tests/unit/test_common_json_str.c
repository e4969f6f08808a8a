/* gp_json_escape / gp_json_put_str: the one JSON string escaper (issue 16 item 5), shared by the
 * profiler's writer and every JSON output: always valid JSON, valid UTF-8 kept, pieces never cut
 * inside a UTF-8 sequence. */
#include "gp/json_str.h"
#include "gp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *esc(const char *s, size_t n)
{
    static char out[512];
    out[gp_json_escape(out, s, n)] = 0;
    return out;
}

static void test_escape(void)
{
    GP_ASSERT_STR_EQ(esc("a\"b\\c", 5), "a\\\"b\\\\c");
    GP_ASSERT_STR_EQ(esc("\n\t\r\x01\x1f", 5), "\\n\\t\\r\\u0001\\u001f");
    GP_ASSERT_STR_EQ(esc("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82", 14),
                     "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");
    GP_ASSERT_STR_EQ(esc("\xff", 1), "\\ufffd");                       /* never a UTF-8 byte */
    GP_ASSERT_STR_EQ(esc("\xc0\xaf", 2), "\\ufffd\\ufffd");            /* overlong '/' */
    GP_ASSERT_STR_EQ(esc("\xed\xa0\x80", 3), "\\ufffd\\ufffd\\ufffd"); /* a surrogate */
    GP_ASSERT_STR_EQ(esc("\xe2\x86", 2), "\\ufffd\\ufffd");            /* cut short */
    GP_ASSERT_STR_EQ(esc("a\0b", 3), "a\\u0000b");
}

static void test_put_str(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gp_json_put_str(f, NULL);
    fputc(' ', f);
    /* 300 arrows: the 256-byte pieces must cut between sequences, not inside one */
    char big[901];
    for (int i = 0; i < 300; i++)
        memcpy(big + 3 * i, "\xe2\x86\x92", 3);
    big[900] = 0;
    gp_json_put_str(f, big);
    fclose(f);
    GP_CHECK(strncmp(text, "null \"", 6) == 0);
    GP_CHECK(strstr(text, "ufffd") == NULL);
    GP_ASSERT_EQ_INT((long)len, 6 + 900 + 1);
    free(text);
    GP_ASSERT_EQ_INT((long)gp_json_piece(big, 900, 256), 255); /* 85 whole arrows */
}

int main(void)
{
    GP_RUN(test_escape);
    GP_RUN(test_put_str);
    return gp_test_summary();
}
