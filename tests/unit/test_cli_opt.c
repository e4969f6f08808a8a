/* The option-table parser: long/short forms, values, ranges, negation, positionals, "--". */
#include "opt.h"
#include "gp_test.h"

#include <stdlib.h>

static const char *const usage[] = {"t [options] ARGS", NULL};
static const struct opt_help help = {"t", usage, "test", NULL, NULL};

struct vals {
    const char *s;
    long n;
    double d;
    int b;
    struct opt_list l;
};

static int parse(struct vals *v, int argc, const char **argv, int flags)
{
    const struct opt opts[] = {
            OPT_GROUP("options:"),
            OPT_STR('s', "str", &v->s, "S", "a string"),
            OPT_INT('n', "num", &v->n, "N", "a number", 1, 100),
            OPT_DOUBLE(0, "dbl", &v->d, "X", "a double"),
            OPT_BOOL('b', "flag", &v->b, "a flag"),
            OPT_LIST(0, "item", &v->l, "I", "repeatable"),
            OPT_END(),
    };
    return opt_parse(argc, argv, opts, &help, flags);
}

static void test_long_short_and_inline_values(void)
{
    struct vals v = {0};
    const char *argv[] = {"t",  "--str", "a",        "-n",     "7", "--dbl=2.5",
                          "-b", "pos1",  "--item=x", "--item", "y", "pos2"};
    int n = parse(&v, 12, argv, 0);
    GP_ASSERT_EQ_INT(n, 2);
    GP_ASSERT_STR_EQ(v.s, "a");
    GP_ASSERT_EQ_INT(v.n, 7);
    GP_ASSERT_NEAR(v.d, 2.5, 0);
    GP_ASSERT_EQ_INT(v.b, 1);
    GP_ASSERT_EQ_INT(v.l.n, 2);
    GP_ASSERT_STR_EQ(v.l.items[1], "y");
    GP_ASSERT_STR_EQ(argv[0], "pos1");
    GP_ASSERT_STR_EQ(argv[1], "pos2");
}

static void test_short_glued_value_and_negation(void)
{
    struct vals v = {.b = 1};
    const char *argv[] = {"t", "-n42", "--no-flag"};
    GP_ASSERT_EQ_INT(parse(&v, 3, argv, 0), 0);
    GP_ASSERT_EQ_INT(v.n, 42);
    GP_ASSERT_EQ_INT(v.b, 0);
}

static void test_errors(void)
{
    struct vals v = {0};
    const char *a1[] = {"t", "--nope"};
    GP_ASSERT_EQ_INT(parse(&v, 2, a1, 0), OPT_ERROR);
    const char *a2[] = {"t", "--num", "x1"};
    GP_ASSERT_EQ_INT(parse(&v, 3, a2, 0), OPT_ERROR);
    const char *a3[] = {"t", "--num", "101"};
    GP_ASSERT_EQ_INT(parse(&v, 3, a3, 0), OPT_ERROR);
    const char *a4[] = {"t", "--str"};
    GP_ASSERT_EQ_INT(parse(&v, 2, a4, 0), OPT_ERROR);
    const char *a5[] = {"t", "--flag=1"};
    GP_ASSERT_EQ_INT(parse(&v, 2, a5, 0), OPT_ERROR);
    const char *a6[] = {"t", "--dbl", "1.5x"};
    GP_ASSERT_EQ_INT(parse(&v, 3, a6, 0), OPT_ERROR);
    static const char *const non_finite[] = {"inf", "-infinity", "nan", "NAN(1)"};
    for (int i = 0; i < 4; i++) { /* --lr inf once wrote "lr": inf into summary.json */
        const char *a7[] = {"t", "--dbl", non_finite[i]};
        GP_ASSERT_EQ_INT(parse(&v, 3, a7, 0), OPT_ERROR);
    }
    GP_ASSERT_EQ_INT(opt_exit_code(OPT_ERROR), 2);
}

static void test_dashdash(void)
{
    struct vals v = {0};
    const char *a1[] = {"t", "-b", "--", "--str", "x"};
    GP_ASSERT_EQ_INT(parse(&v, 5, a1, 0), 2);
    GP_ASSERT_STR_EQ(a1[0], "--str");
    GP_CHECK(v.s == NULL);
    const char *a2[] = {"t", "-s", "v", "--", "cmd", "--str"};
    GP_ASSERT_EQ_INT(parse(&v, 6, a2, OPT_KEEP_DASHDASH), 3);
    GP_ASSERT_STR_EQ(a2[0], "--");
    GP_ASSERT_STR_EQ(a2[1], "cmd");
    GP_ASSERT_STR_EQ(a2[2], "--str");
}

static void test_help_returns_help(void)
{
    struct vals v = {0};
    const char *a[] = {"t", "--help"};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    int rc = parse(&v, 2, a, 0);
    fclose(stdout);
    stdout = saved;
    GP_ASSERT_EQ_INT(rc, OPT_HELP);
    GP_ASSERT_EQ_INT(opt_exit_code(rc), 0);
}

static void test_help_lists_the_second_table_after_its_own(void)
{
    int a = 0, b = 0;
    const struct opt mine[] = {OPT_GROUP("mine:"), OPT_BOOL(0, "alpha", &a, "first table"),
                               OPT_END()};
    const struct opt more[] = {OPT_GROUP("other form:"), OPT_BOOL(0, "beta", &b, "second table"),
                               OPT_END()};
    const struct opt_help h = {"t", usage, "test", "examples here\n", more};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_print_help(f, mine, &h);
    fclose(f);
    const char *alpha = strstr(text, "--alpha"), *beta = strstr(text, "--beta");
    const char *ex = strstr(text, "examples here");
    int ordered = alpha && beta && ex && alpha < beta && beta < ex;
    free(text);
    GP_CHECK(ordered);
}

/* Help is flowed text: wrapped at word boundaries before column 100, continued at column 30,
 * whatever line breaks and padding the string holds (issue 16 item 6). */
static void test_help_wraps(void)
{
    const char *words = "one two three four five six seven eight nine ten eleven twelve thirteen "
                        "fourteen fifteen sixteen seventeen\n          eighteen nineteen twenty";
    int a = 0;
    const struct opt mine[] = {OPT_BOOL(0, "alpha", &a, words), OPT_END()};
    const struct opt_help h = {"t", usage, NULL, NULL, NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_print_help(f, mine, &h);
    fclose(f);
    char *line = strstr(text, "    --alpha");
    GP_CHECK(line != NULL);
    while (line > text && line[-1] != '\n')
        line--;
    char flowed[512] = "";
    int lines = 0, width_ok = 1;
    for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1, lines++) {
        if (lines && (strncmp(line, "                              ", 30) || line[30] == ' '))
            break; /* the next option or section */
        width_ok = width_ok && nl - line <= 100;
        strncat(flowed, line + 30, (size_t)(nl - line - 30));
        strcat(flowed, " ");
    }
    int same = strcmp(flowed, "one two three four five six seven eight nine ten eleven twelve "
                              "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                              "twenty ") == 0;
    free(text);
    GP_CHECK(width_ok && lines == 2 && same);
}

int main(void)
{
    GP_RUN(test_long_short_and_inline_values);
    GP_RUN(test_short_glued_value_and_negation);
    GP_RUN(test_errors);
    GP_RUN(test_dashdash);
    GP_RUN(test_help_returns_help);
    GP_RUN(test_help_lists_the_second_table_after_its_own);
    GP_RUN(test_help_wraps);
    return gp_test_summary();
}
