/* Unit tests for gp_export's output sink and emitters: JSON and HTML escaping (quotes, control
 * characters, invalid UTF-8), exact microsecond formatting, nice tick steps, the SVG charts'
 * structure and escaping, the temp-file-then-rename behaviour of file outputs, and the targets
 * that must never be replaced: FIFOs, devices, symlinks (followed), a file's mode. */
#include "export_int.h"
#include "gp/export.h"
#include "gp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* Render `s` through one of the escapers into a malloc'd string. */
static char *render(void (*esc)(export_out *, const char *), const char *s)
{
    export_out o;
    size_t n;
    export_out_init_mem(&o);
    esc(&o, s);
    return export_out_take(&o, &n);
}

#define render_json(s) render(export_out_json_str, (s))
#define render_html(s) render(export_out_html, (s))

static void test_json_escaping(void)
{
    char *s = render_json("a\"b\\c\nd\x01\te");
    GP_ASSERT_STR_EQ(s, "\"a\\\"b\\\\c\\nd\\u0001\\te\"");
    free(s);
    s = render_json(
            "caf\xc3\xa9 \xff\xfe ok \xe2\x82"); /* valid é, two bad bytes, a cut-off tail */
    GP_ASSERT_STR_EQ(s, "\"caf\xc3\xa9 \\ufffd\\ufffd ok \\ufffd\\ufffd\"");
    free(s);
    s = render_json("\xed\xa0\x80"); /* a UTF-16 surrogate encoded in UTF-8 is invalid */
    GP_ASSERT_STR_EQ(s, "\"\\ufffd\\ufffd\\ufffd\"");
    free(s);
    s = render_json(NULL);
    GP_ASSERT_STR_EQ(s, "\"\"");
    free(s);
}

static void test_html_escaping(void)
{
    char *s = render_html("<script>alert('x')</script> & \"q\"\x07\xc0");
    GP_ASSERT_STR_EQ(s, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
                        "\xEF\xBF\xBD");
    free(s);
}

static void test_us_format(void)
{
    export_out o;
    size_t n;
    export_out_init_mem(&o);
    export_out_us(&o, 1234567);
    export_out_puts(&o, " ");
    export_out_us(&o, -5);
    export_out_puts(&o, " ");
    export_out_us(&o, 1700000000123456789LL); /* absolute epoch ns: exact, no double rounding */
    char *s = export_out_take(&o, &n);
    GP_ASSERT_STR_EQ(s, "1234.567 -0.005 1700000000123456.789");
    free(s);
}

static void test_nice_step(void)
{
    GP_ASSERT_NEAR(export_nice_step(100, 5), 20, 1e-9);
    GP_ASSERT_NEAR(export_nice_step(7, 5), 2, 1e-9);
    GP_ASSERT_NEAR(export_nice_step(0.03, 5), 0.01, 1e-12);
    GP_ASSERT_NEAR(export_nice_step(0, 5), 1, 0);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_stacked_bars(void)
{
    const char *names[2] = {"Kernel", "Data<Loader>"};
    const char *colors[2] = {"#111111", "#222222"};
    const char *labels[3] = {"step 1", "step 2", "step 3"};
    double vals[6] = {1.0, 2.0, 0.5, 0.0, 3.0, 1.0}; /* bar 2 has no DataLoader part */
    export_bar_chart c = {"breakdown", "ms", 3, 2, names, colors, vals, labels};
    export_out o;
    size_t n;
    export_out_init_mem(&o);
    export_svg_stacked_bars(&o, &c);
    char *s = export_out_take(&o, &n);
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(count(s, "<rect"), 5);
    GP_ASSERT_CONTAINS(s, "<title>step 3: Data&lt;Loader&gt; 1.000 ms</title>");
    GP_CHECK(strstr(s, "<Loader>") == NULL);
    GP_ASSERT_EQ_INT(count(s, "<svg"), 1);
    GP_ASSERT_EQ_INT(count(s, "</svg>"), 1);
    free(s);
}

static void test_line_chart(void)
{
    double x[3] = {0, 5, 10}, y[3] = {10, 80, 40};
    export_series ser = {"GPU 0 busy %", "#3b75af", x, y, 3, 1, 1};
    export_band band = {2, 4, "GT01", "data-loader starvation", NULL, 0};
    export_line_chart c = {"util", "ms", "busy %", 0, 10, 0, 100, &ser, 1, &band, 1};
    export_out o;
    size_t n;
    export_out_init_mem(&o);
    export_svg_line_chart(&o, &c);
    char *s = export_out_take(&o, &n);
    GP_CHECK(s != NULL);
    GP_ASSERT_CONTAINS(s, ">GT01</text>");
    GP_ASSERT_CONTAINS(s, "<title>data-loader starvation</title>");
    GP_ASSERT_EQ_INT(count(s, "<path"), 1);
    /* x 0 -> left edge 64; the fill path starts on the baseline (y = 260 - 36 = 224) */
    GP_ASSERT_CONTAINS(s, "d=\"M64.00 224.00L64.00 ");
    GP_ASSERT_CONTAINS(s, "Z\"");
    free(s);
}

static void test_file_rename_and_gzip(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/test_export_out_%d.json.gz", GP_BUILD_DIR, (int)getpid());
    export_out o;
    gp_error err;
    GP_ASSERT_OK(export_out_open(&o, path, NULL, &err));
    GP_CHECK(access(path, F_OK) != 0); /* nothing at the final name until close */
    for (int i = 0; i < 100000; i++)
        export_out_printf(&o, "%d,", i);
    GP_ASSERT_OK(export_out_close(&o, &err));
    gzFile gz = gzopen(path, "rb");
    GP_CHECK(gz != NULL);
    char buf[32] = {0};
    GP_ASSERT_EQ_INT(gzread(gz, buf, 8), 8);
    gzclose(gz);
    GP_ASSERT_STR_EQ(buf, "0,1,2,3,");
    unlink(path);
    GP_CHECK(export_out_open(&o, "/nonexistent-gp-dir/x.json", NULL, &err) == GP_EIO);
    GP_ASSERT_STR_EQ(err.path, "/nonexistent-gp-dir/x.json");
}

static void scratch(char *path, size_t cap, const char *name)
{
    snprintf(path, cap, "%s/test_export_out_%d_%s", GP_BUILD_DIR, (int)getpid(), name);
    unlink(path);
}

/* Export "hello\n" to `path` the way every exporter does. */
static gp_status write_hello(const char *path, gp_error *err)
{
    export_out o;
    GP_TRY(export_out_open(&o, path, NULL, err));
    export_out_puts(&o, "hello\n");
    return export_out_close(&o, err);
}

static int file_is(const char *path, const char *want)
{
    char buf[64] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

/* A FIFO is written in place (a reader gets the bytes) and stays a FIFO. */
static void test_fifo_target(void)
{
    char fifo[512];
    scratch(fifo, sizeof fifo, "fifo");
    GP_CHECK(mkfifo(fifo, 0600) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5); /* a FIFO replaced by a file would leave this reader waiting for ever */
        char buf[64] = {0};
        FILE *f = fopen(fifo, "rb");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        _exit(n == 6 && strcmp(buf, "hello\n") == 0 ? 0 : 1);
    }
    gp_error err;
    GP_ASSERT_OK(write_hello(fifo, &err));
    int status = 0;
    waitpid(pid, &status, 0);
    GP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    GP_CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    unlink(fifo);
}

/* A character device is written, not replaced. /dev/null itself only when not root: as root an
 * exporter that renames would replace the machine's /dev/null; through a symlink it cannot. */
static void test_device_target(void)
{
    char link[512];
    gp_error err;
    struct stat st;
    scratch(link, sizeof link, "null_link");
    GP_CHECK(symlink("/dev/null", link) == 0);
    GP_ASSERT_OK(write_hello(link, &err));
    GP_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    GP_CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    unlink(link);
    if (geteuid() != 0) {
        GP_ASSERT_OK(write_hello("/dev/null", &err));
        GP_CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    }
}

/* A symlink is followed: the file it names gets the output and keeps mode 600; the link stays. */
static void test_symlink_and_mode(void)
{
    char file[512], link[512];
    gp_error err;
    struct stat st;
    scratch(file, sizeof file, "target.json");
    scratch(link, sizeof link, "link.json");
    FILE *f = fopen(file, "wb");
    GP_CHECK(f != NULL);
    fputs("old", f);
    fclose(f);
    GP_CHECK(chmod(file, 0600) == 0);
    GP_CHECK(symlink(file, link) == 0);
    GP_ASSERT_OK(write_hello(link, &err));
    GP_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    GP_CHECK(file_is(file, "hello\n"));
    GP_CHECK(stat(file, &st) == 0 && (st.st_mode & 07777) == 0600);
    GP_CHECK(chmod(file, 0640) == 0); /* and directly, another mode */
    GP_ASSERT_OK(write_hello(file, &err));
    GP_CHECK(stat(file, &st) == 0 && (st.st_mode & 07777) == 0640);
    unlink(link);
    GP_CHECK(symlink("missing-target", link) == 0); /* dangling: refused, nothing created */
    GP_CHECK(write_hello(link, &err) == GP_EIO);
    GP_ASSERT_CONTAINS(err.msg, "symlink");
    GP_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(link);
    unlink(file);
    GP_CHECK(write_hello(GP_BUILD_DIR, &err) == GP_EIO); /* a directory */
    GP_ASSERT_CONTAINS(err.msg, "directory");
}

static char seen_temp[4200];
static int temp_calls;

static void note_temp(const char *path, void *ud)
{
    (void)ud;
    temp_calls++;
    snprintf(seen_temp, sizeof seen_temp, "%s", path ? path : "");
}

/* The temp_file hook names the file while it exists and clears it once it is renamed. */
static void test_temp_hook(void)
{
    char path[512];
    scratch(path, sizeof path, "hook.json");
    gp_export_opts opts = {.temp_file = note_temp};
    export_out o;
    gp_error err;
    GP_ASSERT_OK(export_out_open(&o, path, &opts, &err));
    GP_ASSERT_EQ_INT(temp_calls, 1);
    GP_CHECK(access(seen_temp, F_OK) == 0);
    GP_CHECK(strncmp(seen_temp, path, strlen(path)) == 0 && strlen(seen_temp) > strlen(path));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s", seen_temp);
    export_out_puts(&o, "x");
    GP_ASSERT_OK(export_out_close(&o, &err));
    GP_ASSERT_EQ_INT(temp_calls, 2);
    GP_ASSERT_STR_EQ(seen_temp, "");
    GP_CHECK(access(tmp, F_OK) != 0);
    unlink(path);
}

int main(void)
{
    GP_RUN(test_json_escaping);
    GP_RUN(test_html_escaping);
    GP_RUN(test_us_format);
    GP_RUN(test_nice_step);
    GP_RUN(test_stacked_bars);
    GP_RUN(test_line_chart);
    GP_RUN(test_file_rename_and_gzip);
    GP_RUN(test_fifo_target);
    GP_RUN(test_device_target);
    GP_RUN(test_symlink_and_mode);
    GP_RUN(test_temp_hook);
    return gp_test_summary();
}
