/* cli/opt.h: table-driven option parsing; --help text is generated from the same table. */
#ifndef GP_CLI_OPT_H
#define GP_CLI_OPT_H

#include <stdio.h>

enum opt_type {
    OPT_TYPE_END,
    OPT_TYPE_GROUP,  /* a heading in --help */
    OPT_TYPE_BOOL,   /* int: --name sets 1, --no-name sets 0 */
    OPT_TYPE_STR,    /* const char *: the argument */
    OPT_TYPE_INT,    /* long: a decimal integer, checked against min/max */
    OPT_TYPE_DOUBLE, /* double */
    OPT_TYPE_LIST    /* struct opt_list: repeatable, collects each argument */
};

struct opt {
    enum opt_type type;
    char short_name;
    const char *long_name;
    void *value;
    const char *argh; /* argument placeholder shown in --help, e.g. "N" */
    const char *help;
    long min, max; /* OPT_TYPE_INT range */
};

#define OPT_LIST_MAX 64
struct opt_list {
    int n;
    const char *items[OPT_LIST_MAX];
};

/* An option's value pointer, checked against the type its parser writes: a pointer to another
 * type matches no _Generic association and does not compile (tests/cli/opt_types.sh). */
#define OPT_VALUE(v, T) _Generic((v), T * : (void *)(v))

#define OPT_GROUP(h)                                                                               \
    {                                                                                              \
        OPT_TYPE_GROUP, 0, NULL, NULL, NULL, (h), 0, 0                                             \
    }
#define OPT_BOOL(s, l, v, h)                                                                       \
    {                                                                                              \
        OPT_TYPE_BOOL, (s), (l), OPT_VALUE((v), int), NULL, (h), 0, 0                              \
    }
#define OPT_STR(s, l, v, a, h)                                                                     \
    {                                                                                              \
        OPT_TYPE_STR, (s), (l), OPT_VALUE((v), const char *), (a), (h), 0, 0                       \
    }
#define OPT_INT(s, l, v, a, h, lo, hi)                                                             \
    {                                                                                              \
        OPT_TYPE_INT, (s), (l), OPT_VALUE((v), long), (a), (h), (lo), (hi)                         \
    }
#define OPT_DOUBLE(s, l, v, a, h)                                                                  \
    {                                                                                              \
        OPT_TYPE_DOUBLE, (s), (l), OPT_VALUE((v), double), (a), (h), 0, 0                          \
    }
#define OPT_LIST(s, l, v, a, h)                                                                    \
    {                                                                                              \
        OPT_TYPE_LIST, (s), (l), OPT_VALUE((v), struct opt_list), (a), (h), 0, 0                   \
    }
#define OPT_END()                                                                                  \
    {                                                                                              \
        OPT_TYPE_END, 0, NULL, NULL, NULL, NULL, 0, 0                                              \
    }

/* What a command's --help shows around its option table. */
struct opt_help {
    const char *name;         /* "report" */
    const char *const *usage; /* NULL-terminated usage lines, without "usage: " */
    const char *summary;      /* one paragraph on what the command does */
    const char *epilog;       /* examples and notes after the options, or NULL */
    const struct opt *more; /* another table listed after this one's (run's -- CMD form), or NULL */
};

enum opt_flags {
    OPT_KEEP_DASHDASH = 1 << 0 /* stop at "--" and leave it and what follows in argv */
};

/* Parse argv[1..argc-1] against `opts`. Positional arguments are compacted to argv[0..n-1]
 * (argv[0] is overwritten). On --help prints help to stdout and returns OPT_HELP.
 * On a bad option prints an error and a hint to stderr and returns OPT_ERROR.
 * @return the number of positional arguments, OPT_HELP or OPT_ERROR. */
#define OPT_HELP  (-1)
#define OPT_ERROR (-2)
int opt_parse(int argc, const char **argv, const struct opt *opts, const struct opt_help *help,
              int flags);

/* Print the generated help for a command. */
void opt_print_help(FILE *out, const struct opt *opts, const struct opt_help *help);

/* Turn opt_parse's negative results into exit codes (0 for help, 2 for errors). */
int opt_exit_code(int parse_result);

#endif
