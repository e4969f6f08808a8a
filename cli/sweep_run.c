/* Reading back what a sweep's trainer run wrote (summary.json) and where (the run folder). */
#include "cli.h"
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int sweep_summary_number(const char *summary_path, const char *key, double *out)
{
    FILE *f = fopen(summary_path, "r");
    if (!f)
        return 0;
    char buf[4096], pattern[64];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    snprintf(pattern, sizeof(pattern), "\"%s\":", key);
    const char *p = strstr(buf, pattern);
    if (!p)
        return 0;
    char *end;
    *out = strtod(p + strlen(pattern), &end);
    return end != p + strlen(pattern);
}

int sweep_run_dir(const char *dir, char *buf, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error("cannot open '%s': %s", dir, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        snprintf(buf, cap, "%s", path);
        found++;
    }
    closedir(d);
    if (found != 1)
        return cli_error("'%s' holds %d run folders, expected one", dir, found);
    return CLI_OK;
}
