/* gp_text_clean / gp_fputs_clean: control bytes from traces are written out (escape codes cannot
 * reach the terminal, a newline cannot break a table's line), UTF-8 is kept, and the buffer form
 * cuts before an escape rather than inside one. */
#include "gp/text.h"
#include "gp_test.h"

#include <stdio.h>
#include <string.h>

static void test_clean(void)
{
    char buf[64];
    GP_ASSERT_EQ_INT(gp_text_clean(buf, sizeof buf, "a\x1b[31mb\nc\td\x7f"), 20);
    GP_ASSERT_STR_EQ(buf, "a\\x1b[31mb\\nc\\td\\x7f");
    gp_text_clean(buf, sizeof buf, "caf\xc3\xa9 \xe2\x86\x92 ok");
    GP_ASSERT_STR_EQ(buf, "caf\xc3\xa9 \xe2\x86\x92 ok");
    gp_text_clean(buf, sizeof buf, NULL);
    GP_ASSERT_STR_EQ(buf, "");
    gp_text_clean(buf, 6,
                  "ab\x1b"
                  "cd"); /* "ab\x1b" needs 6 bytes and a NUL: stop before */
    GP_ASSERT_STR_EQ(buf, "ab");
    GP_ASSERT_EQ_INT(gp_text_clean(buf, 0, "x"), 0);
}

static void test_fputs_clean(void)
{
    char out[128] = {0};
    FILE *f = fmemopen(out, sizeof out, "w");
    gp_fputs_clean(f, "x\x1b]0;title\x07y\n");
    fclose(f);
    GP_ASSERT_STR_EQ(out, "x\\x1b]0;title\\x07y\\n");
}

int main(void)
{
    GP_RUN(test_clean);
    GP_RUN(test_fputs_clean);
    return gp_test_summary();
}
