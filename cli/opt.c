/* Table-driven option parsing for the gprof-train subcommands, modelled on git's
 * parse-options: long options (--name value, --name=value), short options (-n value),
 * --no-name for booleans, "--" to end options, and help generated from the table. */
#include "opt.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct opt *find_long(const struct opt *opts, const char *name, size_t len, int *neg)
{
    *neg = 0;
    for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
        if (!o->long_name)
            continue;
        if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
        if (o->type == OPT_TYPE_BOOL && len > 3 && strncmp(name, "no-", 3) == 0 &&
            strlen(o->long_name) == len - 3 && strncmp(o->long_name, name + 3, len - 3) == 0) {
            *neg = 1;
            return o;
        }
    }
    return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
    for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
        if (o->short_name && o->short_name == c)
            return o;
    return NULL;
}

static void opt_name(const struct opt *o, char *buf, size_t n)
{
    if (o->long_name)
        snprintf(buf, n, "--%s", o->long_name);
    else
        snprintf(buf, n, "-%c", o->short_name);
}

static int set_int(const struct opt *o, const char *arg, const char *name)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end) {
        cli_error("option '%s' expects an integer, got '%s'", name, arg);
        return -1;
    }
    if ((o->min || o->max) && (v < o->min || v > o->max)) {
        cli_error("option '%s' must be between %ld and %ld, got %ld", name, o->min, o->max, v);
        return -1;
    }
    *(long *)o->value = v;
    return 0;
}

static int set_double(const struct opt *o, const char *arg, const char *name)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end) {
        cli_error("option '%s' expects a number, got '%s'", name, arg);
        return -1;
    }
    if (!isfinite(v)) {
        cli_error("option '%s' expects a finite number, got '%s'", name, arg);
        return -1;
    }
    *(double *)o->value = v;
    return 0;
}

static int set_value(const struct opt *o, const char *arg, const char *name)
{
    switch (o->type) {
    case OPT_TYPE_STR:
        *(const char **)o->value = arg;
        return 0;
    case OPT_TYPE_INT:
        return set_int(o, arg, name);
    case OPT_TYPE_DOUBLE:
        return set_double(o, arg, name);
    case OPT_TYPE_LIST: {
        struct opt_list *l = o->value;
        if (l->n >= OPT_LIST_MAX) {
            cli_error("option '%s' given more than %d times", name, OPT_LIST_MAX);
            return -1;
        }
        l->items[l->n++] = arg;
        return 0;
    }
    default:
        return -1;
    }
}

/* Apply one option; `inline_arg` is the text after '=' (or after a short option's letter).
 * @return how many extra argv entries were consumed, or -1 on error. */
static int apply(const struct opt *o, int neg, const char *inline_arg, const char *next,
                 const struct opt_help *help)
{
    char name[64];
    opt_name(o, name, sizeof(name));
    if (o->type == OPT_TYPE_BOOL) {
        if (inline_arg) {
            cli_error("option '%s' takes no value", name);
            return -1;
        }
        *(int *)o->value = !neg;
        return 0;
    }
    const char *arg = inline_arg ? inline_arg : next;
    if (!arg) {
        cli_error("option '%s' requires a value (%s)", name, o->argh ? o->argh : "value");
        cli_hint("see 'gprof-train %s --help'", help->name);
        return -1;
    }
    if (set_value(o, arg, name) < 0)
        return -1;
    return inline_arg ? 0 : 1;
}

static int parse_long(const char *a, const char *next, const struct opt *opts,
                      const struct opt_help *help)
{
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    int neg;
    const struct opt *o = find_long(opts, a, len, &neg);
    if (!o) {
        cli_error("unknown option '--%.*s'", (int)len, a);
        cli_hint("see 'gprof-train %s --help'", help->name);
        return -1;
    }
    return apply(o, neg, eq ? eq + 1 : NULL, next, help);
}

static int parse_short(const char *a, const char *next, const struct opt *opts,
                       const struct opt_help *help)
{
    const struct opt *o = find_short(opts, a[0]);
    if (!o) {
        cli_error("unknown option '-%c'", a[0]);
        cli_hint("see 'gprof-train %s --help'", help->name);
        return -1;
    }
    if (o->type == OPT_TYPE_BOOL && a[1]) {
        cli_error("option '-%c' takes no value", a[0]);
        return -1;
    }
    return apply(o, 0, a[1] ? a + 1 : NULL, next, help);
}

static int is_help(const char *a)
{
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

int opt_parse(int argc, const char **argv, const struct opt *opts, const struct opt_help *help,
              int flags)
{
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int used;
        if (strcmp(a, "--") == 0) {
            if (flags & OPT_KEEP_DASHDASH) {
                while (i < argc)
                    argv[npos++] = argv[i++];
                return npos;
            }
            while (++i < argc)
                argv[npos++] = argv[i];
            return npos;
        }
        if (is_help(a)) {
            opt_print_help(stdout, opts, help);
            return OPT_HELP;
        }
        if (a[0] != '-' || a[1] == '\0') {
            argv[npos++] = a;
            continue;
        }
        used = a[1] == '-' ? parse_long(a + 2, next, opts, help)
                           : parse_short(a + 1, next, opts, help);
        if (used < 0)
            return OPT_ERROR;
        i += used;
    }
    return npos;
}

enum { HELP_COLUMN = 30, HELP_WIDTH = 100 };

/* An option's help as flowing text from HELP_COLUMN, wrapped at word boundaries before
 * HELP_WIDTH (as git's parse-options does): the table's strings carry no hand-made line breaks
 * or padding, and any whitespace run in them is one space. */
static void print_wrapped(FILE *out, const char *h)
{
    int col = HELP_COLUMN;
    while (*h) {
        while (*h == ' ' || *h == '\n')
            h++;
        size_t w = strcspn(h, " \n");
        if (w == 0)
            break;
        if (col > HELP_COLUMN && col + 1 + (int)w > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_COLUMN, "");
            col = HELP_COLUMN;
        } else if (col > HELP_COLUMN) {
            fputc(' ', out);
            col++;
        }
        fwrite(h, 1, w, out);
        col += (int)w;
        h += w;
    }
    fputc('\n', out);
}

static void print_option(FILE *out, const struct opt *o)
{
    char left[96];
    int n = 0;
    if (o->short_name)
        n = snprintf(left, sizeof(left), "-%c%s", o->short_name, o->long_name ? ", " : "");
    else
        n = snprintf(left, sizeof(left), "    ");
    if (o->long_name)
        n += snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s",
                      o->type == OPT_TYPE_BOOL && strncmp(o->help, "(negatable) ", 12) == 0
                              ? "[no-]"
                              : "",
                      o->long_name);
    if (o->type != OPT_TYPE_BOOL && o->argh)
        snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->argh);
    const char *h = o->help;
    if (strncmp(h, "(negatable) ", 12) == 0)
        h += 12;
    if (strlen(left) > 24)
        fprintf(out, "    %s\n    %-24s  ", left, "");
    else
        fprintf(out, "    %-24s  ", left);
    print_wrapped(out, h);
}

static void print_table(FILE *out, const struct opt *opts)
{
    for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
        if (o->type == OPT_TYPE_GROUP)
            fprintf(out, "\n%s\n", o->help);
        else
            print_option(out, o);
    }
}

void opt_print_help(FILE *out, const struct opt *opts, const struct opt_help *help)
{
    for (int i = 0; help->usage && help->usage[i]; i++)
        fprintf(out, "%s %s\n", i == 0 ? "usage:" : "   or:", help->usage[i]);
    if (help->summary)
        fprintf(out, "\n%s\n", help->summary);
    print_table(out, opts);
    fprintf(out, "    -h, --help                show this help\n");
    if (help->more)
        print_table(out, help->more);
    if (help->epilog)
        fprintf(out, "\n%s", help->epilog);
}

int opt_exit_code(int parse_result)
{
    return parse_result == OPT_HELP ? CLI_OK : CLI_ERROR;
}
