/* The run folders under a folder: see run_folders.h. */
#include "run_folders.h"
#include "trace_jobs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int run_folder_holds_traces(const char *dir, int any_name)
{
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;)
        for (int pass = 0; pass <= any_name && !found; pass++)
            found = e->d_name[0] != '.' && trace_name_wanted(dirfd(d), e->d_name, pass);
    if (d)
        closedir(d);
    return found;
}

struct folder_list {
    struct run_folder *v;
    long n, cap;
    int any_name, oom;
};

static void push(struct folder_list *l, char *path, struct timespec mtime)
{
    if (l->n == l->cap) {
        struct run_folder *w = realloc(l->v, (size_t)(l->cap * 2 + 8) * sizeof(*w));
        if (!w) {
            l->oom = 1;
            free(path);
            return;
        }
        l->v = w, l->cap = l->cap * 2 + 8;
    }
    l->v[l->n++] = (struct run_folder){path, mtime};
}

/* `dir`/`name` when it is a folder (its status in *st), else NULL. */
static char *subfolder(const char *dir, const char *name, struct stat *st, int *oom)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t size = len + strlen(name) + 2;
    char *path = malloc(size);
    if (!path) {
        *oom = 1;
        return NULL;
    }
    snprintf(path, size, "%.*s/%s", (int)len, dir, name);
    if (stat(path, st) == 0 && S_ISDIR(st->st_mode))
        return path;
    free(path);
    return NULL;
}

static void search(struct folder_list *l, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && !l->oom && (e = readdir(d)) != NULL;) {
        struct stat st;
        char *path = e->d_name[0] != '.' ? subfolder(dir, e->d_name, &st, &l->oom) : NULL;
        if (!path)
            continue;
        if (run_folder_holds_traces(path, l->any_name)) {
            push(l, path, st.st_mtim);
            continue;
        }
        if (depth > 1)
            search(l, path, depth - 1);
        free(path);
    }
    if (d)
        closedir(d);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct run_folder *)a)->path, ((const struct run_folder *)b)->path);
}

long run_folders_list(const char *dir, int max_depth, int any_name, struct run_folder **out)
{
    struct folder_list l = {.any_name = any_name};
    search(&l, dir, max_depth);
    if (l.oom) {
        run_folders_free(l.v, l.n);
        *out = NULL;
        return -1;
    }
    if (l.n > 1)
        qsort(l.v, (size_t)l.n, sizeof(*l.v), by_path);
    *out = l.v;
    return l.n;
}

static int newer(const struct run_folder *a, const struct run_folder *b)
{
    if (a->mtime.tv_sec != b->mtime.tv_sec)
        return a->mtime.tv_sec > b->mtime.tv_sec;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec)
        return a->mtime.tv_nsec > b->mtime.tv_nsec;
    return strcmp(a->path, b->path) > 0;
}

long run_folders_newest(const struct run_folder *v, long n)
{
    long newest = 0;
    for (long i = 1; i < n; i++)
        newest = newer(&v[i], &v[newest]) ? i : newest;
    return newest;
}

void run_folders_free(struct run_folder *v, long n)
{
    for (long i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}
