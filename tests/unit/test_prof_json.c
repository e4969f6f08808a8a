/* libprof's output layer: JSON escaping of hostile names, number formatting, and the header
 * region that is rewritten in place in plain and gzip files (read back with zlib). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gp_test.h"
#include "prof_int.h"

static char *esc(const char *s, size_t n)
{
    size_t len;
    return prof_json_escape(s, n, &len);
}

static void test_escape_specials(void)
{
    char *e = esc("a\"b\\c\n\t\x01\x1f", 9);
    GP_ASSERT_STR_EQ(e, "a\\\"b\\\\c\\n\\t\\u0001\\u001f");
    free(e);
}

static void test_escape_invalid_utf8(void)
{
    /* valid 2-, 3- and 4-byte sequences stay; a lone continuation byte, a truncated sequence,
     * an overlong encoding and a UTF-16 surrogate become U+FFFD */
    const char in[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80";
    char *e = esc(in, sizeof(in) - 1);
    GP_ASSERT_STR_EQ(e,
                     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd|"
                     "\\ufffd\\ufffd\\ufffd");
    free(e);
}

static void test_escape_embedded_nul(void)
{
    char *e = esc("a\0b", 3);
    GP_ASSERT_STR_EQ(e, "a\\u0000b");
    free(e);
}

static void test_numbers(void)
{
    prof_out o;
    GP_ASSERT_OK(prof_out_mem_init(&o, 256));
    prof_out_us(&o, 1234567);
    prof_out_raw(&o, " ", 1);
    prof_out_us(&o, 5);
    prof_out_raw(&o, " ", 1);
    prof_out_us(&o, -20);
    prof_out_raw(&o, " ", 1);
    prof_out_i64(&o, INT64_MIN);
    prof_out_raw(&o, " ", 1);
    prof_out_double(&o, 0.1);
    prof_out_raw(&o, " ", 1);
    prof_out_double(&o, 1.0 / 0.0);
    prof_out_raw(&o, "", 1);
    GP_ASSERT_STR_EQ(o.buf, "1234.567 0.005 0.000 -9223372036854775808 0.1 null");
    prof_out_close(&o);
}

static void test_mem_overflow_sets_failed(void)
{
    prof_out o;
    GP_ASSERT_OK(prof_out_mem_init(&o, 8));
    prof_out_str(&o, "0123456789");
    GP_CHECK(o.failed);
    GP_ASSERT_EQ_INT(o.len, 8);
    prof_out_close(&o);
}

/* Write header "A", events, then rewrite the header as "B"; read the whole file back. */
static void roundtrip(int gzip, char *got, size_t cap)
{
    char path[] = "/tmp/gp_prof_jsonXXXXXX";
    int fd = mkstemp(path);
    close(fd);
    prof_out o;
    prof_out_open(&o, path, gzip, NULL);
    prof_out_write_header(&o, "{\"a\":1,", 7);
    prof_out_str(&o, "\"traceEvents\":[1,2,3]}");
    prof_out_flush(&o, 1);
    prof_out_write_header(&o, "{\"bb\":22,", 9);
    prof_out_close(&o);
    gzFile f = gzopen(path, "rb"); /* reads plain files too, and every gzip member */
    int n = gzread(f, got, (unsigned)cap - 1);
    gzclose(f);
    unlink(path);
    got[n > 0 ? n : 0] = '\0';
}

static void test_header_rewrite_plain_and_gzip(void)
{
    static char got[PROF_HEADER_TEXT + 256];
    for (int gz = 0; gz < 2; gz++) {
        roundtrip(gz, got, sizeof(got));
        GP_ASSERT_EQ_INT(strlen(got), PROF_HEADER_TEXT + 22);
        GP_CHECK(strncmp(got, "{\"bb\":22,  ", 11) == 0);
        GP_CHECK(got[PROF_HEADER_TEXT - 1] == '\n');
        GP_ASSERT_STR_EQ(got + PROF_HEADER_TEXT, "\"traceEvents\":[1,2,3]}");
    }
}

static void test_open_failure_is_eio(void)
{
    prof_out o;
    gp_error err;
    GP_ASSERT_EQ_INT(prof_out_open(&o, "/nonexistent-dir/x.json", 0, &err), GP_EIO);
    GP_ASSERT_CONTAINS(err.msg, "cannot create trace file");
    GP_ASSERT_STR_EQ(err.path, "/nonexistent-dir/x.json");
}

int main(void)
{
    GP_RUN(test_escape_specials);
    GP_RUN(test_escape_invalid_utf8);
    GP_RUN(test_escape_embedded_nul);
    GP_RUN(test_numbers);
    GP_RUN(test_mem_overflow_sets_failed);
    GP_RUN(test_header_rewrite_plain_and_gzip);
    GP_RUN(test_open_failure_is_eio);
    return gp_test_summary();
}
