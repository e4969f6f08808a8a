/* Filesystem helpers: mkdir -p. */
#include "gp/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static gp_status make_one(const char *dir, gp_error *err)
{
    struct stat st;
    if (mkdir(dir, 0777) == 0)
        return GP_OK;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return GP_OK;
    if (errno == EEXIST)
        return gp_error_set(err, GP_EIO, dir, "cannot create folder: a file is in the way");
    return gp_error_set(err, GP_EIO, dir, "cannot create folder: %s", strerror(errno));
}

gp_status gp_mkdir_p(const char *path, gp_error *err)
{
    char buf[4096];
    int n = snprintf(buf, sizeof(buf), "%s", path);
    if (n <= 0 || (size_t)n >= sizeof(buf))
        return gp_error_set(err, GP_EINVAL, NULL, "folder path is empty or too long");
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        gp_status rc = make_one(buf, err);
        if (rc != GP_OK)
            return rc;
        *p = '/';
    }
    return make_one(buf, err);
}
