/* tests/cli/opt_types.sh compiles this with one WRONG_* defined at a time (each must fail to
 * compile: an option's variable of another type than its parser writes) and with none (which
 * must compile: the types each OPT_* takes). */
#include "opt.h"

int main(void)
{
    int flag = 0;
    long n = 0;
    double x = 0;
    const char *s = NULL;
    struct opt_list l = {0};
#if defined(WRONG_BOOL)
    long wrong = 0; /* OPT_BOOL writes an int */
    const struct opt o[] = {OPT_BOOL(0, "b", &wrong, "h"), OPT_END()};
#elif defined(WRONG_STR)
    char *wrong = NULL; /* OPT_STR writes a const char * */
    const struct opt o[] = {OPT_STR(0, "s", &wrong, "S", "h"), OPT_END()};
#elif defined(WRONG_INT)
    int wrong = 0; /* OPT_INT writes a long: an int would be half written */
    const struct opt o[] = {OPT_INT(0, "n", &wrong, "N", "h", 0, 9), OPT_END()};
#elif defined(WRONG_DOUBLE)
    float wrong = 0; /* OPT_DOUBLE writes a double */
    const struct opt o[] = {OPT_DOUBLE(0, "x", &wrong, "X", "h"), OPT_END()};
#elif defined(WRONG_LIST)
    const char *wrong = NULL; /* OPT_LIST fills a struct opt_list */
    const struct opt o[] = {OPT_LIST(0, "l", &wrong, "L", "h"), OPT_END()};
#else
    const struct opt o[] = {OPT_BOOL(0, "b", &flag, "h"),        OPT_STR(0, "s", &s, "S", "h"),
                            OPT_INT(0, "n", &n, "N", "h", 0, 9), OPT_DOUBLE(0, "x", &x, "X", "h"),
                            OPT_LIST(0, "l", &l, "L", "h"),      OPT_END()};
#endif
    (void)flag, (void)n, (void)x, (void)s, (void)l;
    return o[0].value == NULL;
}
