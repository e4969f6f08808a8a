/* GP_TRACE_CONFIG_KEYS (gp/trace_schema.h) is the one list of the "gprof" keys: every GP_CFG_*
 * name the header defines is on it, and README's table of the keys is the one made from it
 * (GP_UPDATE_GOLDEN=1 rewrites the table between its markers, as the goldens are updated). */
#include "gp/run_config.h"
#include "gp/trace_schema.h"
#include "gp_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define README GP_TEST_DATA_DIR "/../../README.md"
#define SCHEMA GP_TEST_DATA_DIR "/../../libprof/include/gp/trace_schema.h"
#define MARK_BEGIN                                                                                 \
    "<!-- gprof keys: made from GP_TRACE_CONFIG_KEYS by test_analyze_config_keys -->\n"
#define MARK_END "<!-- end of gprof keys -->\n"

#define TYPE_STR    "string"
#define TYPE_NUM    "integer"
#define TYPE_POS    "integer"
#define TYPE_SWITCH "bool"
#define TYPE_COUNT  "integer"
#define TYPE_LIST   "array of strings"

#define ROW(macro, kind, field, writer, doc) {#macro, macro, TYPE_##kind, writer, doc},
static const struct key {
    const char *macro, *key, *type, *writer, *doc;
} keys[] = {GP_TRACE_CONFIG_KEYS(ROW)};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = s ? fread(s, 1, (size_t)n, f) : 0;
    fclose(f);
    if (s)
        s[got] = '\0';
    return s;
}

/* The table, as README holds it between its markers (malloc'd). */
static char *make_table(void)
{
    size_t cap = 64 * 1024, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len,
                            "| key | type | written by | what it says |\n|---|---|---|---|\n");
    for (size_t i = 0; i < N_KEYS; i++)
        len += (size_t)snprintf(t + len, cap - len, "| `%s` | %s | %s | %s |\n", keys[i].key,
                                keys[i].type, keys[i].writer, keys[i].doc);
    return t;
}

static void test_every_define_listed(void)
{
    char *h = slurp(SCHEMA);
    GP_CHECK(h != NULL);
    size_t defined = 0;
    for (const char *p = strstr(h, "\n#define GP_CFG_"); p;
         p = strstr(p + 1, "\n#define GP_CFG_")) {
        char name[64];
        GP_CHECK(sscanf(p + 9, "%63[A-Z0-9_]", name) == 1);
        int found = 0;
        for (size_t i = 0; i < N_KEYS; i++)
            found |= strcmp(keys[i].macro, name) == 0;
        if (!found)
            fprintf(stderr, "%s: %s is not on GP_TRACE_CONFIG_KEYS\n", SCHEMA, name);
        GP_CHECK(found);
        defined++;
    }
    GP_CHECK(defined == N_KEYS);
    free(h);
}

static void test_readme_table(void)
{
    char *r = slurp(README), *table = make_table();
    GP_CHECK(r != NULL);
    char *b = strstr(r, MARK_BEGIN), *e = b ? strstr(b, MARK_END) : NULL;
    GP_CHECK(b && e);
    b += strlen(MARK_BEGIN);
    int same = (size_t)(e - b) == strlen(table) && memcmp(b, table, strlen(table)) == 0;
    const char *update = getenv("GP_UPDATE_GOLDEN");
    if (!same && update && strcmp(update, "1") == 0) {
        FILE *f = fopen(README, "wb");
        GP_CHECK(f != NULL);
        fwrite(r, 1, (size_t)(b - r), f);
        fputs(table, f);
        fputs(e, f);
        GP_CHECK(fclose(f) == 0);
        fprintf(stderr, "%s: the gprof keys' table rewritten\n", README);
        same = 1;
    }
    if (!same)
        fprintf(stderr,
                "%s: the gprof keys' table is not GP_TRACE_CONFIG_KEYS's; "
                "GP_UPDATE_GOLDEN=1 ctest -R test_analyze_config_keys rewrites it\n",
                README);
    GP_CHECK(same);
    free(table);
    free(r);
}

int main(void)
{
    GP_RUN(test_every_define_listed);
    GP_RUN(test_readme_table);
    return gp_test_summary();
}
