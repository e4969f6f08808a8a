/* A folder of run folders (`runs/`, where `gprof-train run` writes by default) given to report,
 * diagnose or export: its newest run is read, and said so; --all reads every run. */
#include "cli.h"
#include "trace_jobs.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct run_dir {
    char *path;
    struct timespec mtime;
};

/* Whether folder `path` holds a trace (by name, as trace_paths_expand reads a folder). */
static int holds_trace(const char *path)
{
    DIR *d = opendir(path);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;)
        found = e->d_name[0] != '.' && (trace_name_wanted(dirfd(d), e->d_name, 0) ||
                                        trace_name_wanted(dirfd(d), e->d_name, 1));
    if (d)
        closedir(d);
    return found;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct run_dir *)a)->path, ((const struct run_dir *)b)->path);
}

static int newer(const struct run_dir *a, const struct run_dir *b)
{
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec > b->mtime.tv_sec;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec > b->mtime.tv_nsec;
    return strcmp(a->path, b->path) > 0;
}

static int push_run(struct run_dir **v, long *n, long *cap, char *path, struct timespec mtime)
{
    if (*n == *cap) {
        struct run_dir *w = realloc(*v, (size_t)(*cap * 2 + 8) * sizeof(**v));
        if (!w)
            return -1;
        *v = w, *cap = *cap * 2 + 8;
    }
    (*v)[(*n)++] = (struct run_dir){path, mtime};
    return 0;
}

/* The subfolders of dir that hold traces, into *out (caller frees). @return their count. */
static long list_runs(const char *dir, struct run_dir **out)
{
    DIR *d = opendir(dir);
    long n = 0, cap = 0;
    *out = NULL;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        struct stat st;
        size_t size = len + strlen(e->d_name) + 2;
        char *path = e->d_name[0] != '.' ? malloc(size) : NULL;
        if (path)
            snprintf(path, size, "%.*s/%s", (int)len, dir, e->d_name);
        if (!path || stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || !holds_trace(path) ||
            push_run(out, &n, &cap, path, st.st_mtim) != 0)
            free(path);
    }
    if (d)
        closedir(d);
    return n;
}

int trace_runs_add(struct trace_paths *p, const char *dir, int all, int *found)
{
    struct run_dir *runs;
    long n = list_runs(dir, &runs), newest = 0;
    int rc = CLI_OK, mode = p->runs;
    *found = n > 0;
    if (n == 0) {
        free(runs);
        return CLI_OK;
    }
    qsort(runs, (size_t)n, sizeof(*runs), by_name);
    for (long i = 1; i < n; i++)
        newest = newer(&runs[i], &runs[newest]) ? i : newest;
    if (!all && n > 1)
        fprintf(stderr,
                "gprof-train: '%s' holds %ld runs: reading the newest, '%s' (--all reads them "
                "all)\n",
                dir, n, runs[newest].path);
    p->runs = 0;
    for (long i = 0; i < n && rc == CLI_OK; i++)
        if (all || i == newest)
            rc = trace_paths_expand(p, (const char *const *)&runs[i].path, 1);
    p->runs = mode;
    for (long i = 0; i < n; i++)
        free(runs[i].path);
    free(runs);
    return rc;
}
