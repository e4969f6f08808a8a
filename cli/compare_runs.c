/* compare's arguments turned into runs: files, run folders and folders of run folders. */
#include "compare_runs.h"
#include "cli.h"
#include "run_folders.h"

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

/* Each folder under `dir` that holds *.pt.trace.json[.gz] files is a run, to MAX_DEPTH. */
static int add_run_folders(struct compare_side *s, const char *dir)
{
    struct run_folder *runs;
    long n = run_folders_list(dir, MAX_DEPTH, 0, &runs);
    int rc = n < 0 ? cli_error("out of memory listing the run folders in '%s'", dir) : CLI_OK;
    for (long i = 0; i < n && rc == CLI_OK; i++)
        rc = add_run(s, runs[i].path);
    run_folders_free(runs, n);
    return rc;
}

static int add_arg(struct compare_side *s, const char *arg)
{
    if (!is_dir(arg) || run_folder_holds_traces(arg, 1))
        return add_run(s, arg);
    size_t before = s->n_runs;
    if (add_run_folders(s, arg) != CLI_OK)
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
