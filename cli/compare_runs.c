/* compare's arguments turned into runs: files, run folders and folders of run folders. */
#include "compare_runs.h"
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 3 /* OUT/NN-setting/profiled/<run>/ of a sweep is 3 below OUT */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether `dir` itself holds a trace: pass 0 names only (*.pt.trace.json[.gz]), or any pass. */
static int holds_traces(const char *dir, int any_name)
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

/* Add the traces of args[0] (a file, or a folder's traces) as run s->n_runs. */
static int add_run(struct compare_side *s, const char *arg)
{
    size_t first = s->paths.n;
    if (trace_paths_expand(&s->paths, &arg, 1) != CLI_OK)
        return CLI_ERROR;
    size_t *run = realloc(s->run, (s->paths.n ? s->paths.n : 1) * sizeof(*run));
    if (!run)
        return cli_error("out of memory");
    s->run = run;
    for (size_t i = first; i < s->paths.n; i++)
        s->run[i] = s->n_runs;
    s->n_runs++;
    return CLI_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subfolders of `dir`, sorted by name (caller frees each and the array). */
static size_t subfolders(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = e->d_name[0] == '.' ? NULL : malloc(len);
        if (!path)
            continue;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        char **grown = is_dir(path) ? realloc(v, (n + 1) * sizeof(*v)) : NULL;
        if (!grown) {
            free(path);
            continue;
        }
        v = grown, v[n++] = path;
    }
    if (d)
        closedir(d);
    if (n)
        qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

/* Each folder under `dir` that holds traces is a run; others are searched, to MAX_DEPTH. */
static int add_run_folders(struct compare_side *s, const char *dir, int depth)
{
    char **sub = NULL;
    size_t n = subfolders(dir, &sub);
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++) {
        if (rc == CLI_OK && holds_traces(sub[i], 0))
            rc = add_run(s, sub[i]);
        else if (rc == CLI_OK && depth < MAX_DEPTH)
            rc = add_run_folders(s, sub[i], depth + 1);
        free(sub[i]);
    }
    free(sub);
    return rc;
}

static int add_arg(struct compare_side *s, const char *arg)
{
    if (!is_dir(arg) || holds_traces(arg, 1))
        return add_run(s, arg);
    size_t before = s->n_runs;
    if (add_run_folders(s, arg, 1) != CLI_OK)
        return CLI_ERROR;
    if (s->n_runs == before)
        return cli_error("no trace files (*.json, *.json.gz, or a .tmp left by a program that "
                         "died) in '%s' or the run folders under it",
                         arg);
    return CLI_OK;
}

int compare_side_expand(struct compare_side *s, const char *const *args, int n)
{
    for (int i = 0; i < n; i++)
        if (add_arg(s, args[i]) != CLI_OK)
            return CLI_ERROR;
    return CLI_OK;
}

void compare_side_release(struct compare_side *s)
{
    trace_paths_release(&s->paths);
    free(s->run);
    memset(s, 0, sizeof(*s));
}
