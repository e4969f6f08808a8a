/* tests/lib/gp_test_tmp.h: a test program's scratch folder, GP_BUILD_DIR/<name>.XXXXXX, made
 * once in main() and removed with everything in it before the program returns. */
#ifndef GP_TESTS_GP_TEST_TMP_H
#define GP_TESTS_GP_TEST_TMP_H

#include <stdio.h>
#include <stdlib.h>

/* Make the folder into dir[0..cap). @return 0, or -1 (mkdtemp failed; dir is not a folder). */
static inline int gp_test_tmpdir(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "%s/%s.XXXXXX", GP_BUILD_DIR, name);
    return mkdtemp(dir) ? 0 : -1;
}

/* Remove dir and what it holds; says so on stderr when it cannot. */
static inline void gp_test_tmpdir_remove(const char *dir)
{
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

#endif
