/* gp_mkdir_p: nested creation, existing folders, and clear errors. */
#include "gp/fs.h"
#include "gp_test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/gp_fs_testXXXXXX";

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_creates_nested_and_accepts_existing(void)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/a/b//c/", root);
    GP_ASSERT_OK(gp_mkdir_p(p, NULL));
    snprintf(p, sizeof(p), "%s/a/b/c", root);
    GP_CHECK(is_dir(p));
    GP_ASSERT_OK(gp_mkdir_p(p, NULL));
}

static void test_file_in_the_way(void)
{
    char f[256], p[300];
    snprintf(f, sizeof(f), "%s/file", root);
    FILE *fp = fopen(f, "w");
    GP_CHECK(fp != NULL);
    fclose(fp);
    snprintf(p, sizeof(p), "%s/sub", f);
    gp_error err;
    GP_ASSERT_EQ_INT(gp_mkdir_p(p, &err), GP_EIO);
    GP_ASSERT_STR_EQ(err.path, f); /* the blocking file, not the folder asked for */
    GP_ASSERT_EQ_INT(gp_mkdir_p(f, &err), GP_EIO);
    GP_ASSERT_CONTAINS(err.msg, "a file is in the way");
}

static void test_too_long_or_empty(void)
{
    char p[5000];
    memset(p, 'x', sizeof(p) - 1);
    p[sizeof(p) - 1] = '\0';
    GP_ASSERT_EQ_INT(gp_mkdir_p(p, NULL), GP_EINVAL);
    GP_ASSERT_EQ_INT(gp_mkdir_p("", NULL), GP_EINVAL);
}

int main(void)
{
    if (!mkdtemp(root))
        return 1;
    GP_RUN(test_creates_nested_and_accepts_existing);
    GP_RUN(test_file_in_the_way);
    GP_RUN(test_too_long_or_empty);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return gp_test_summary();
}
