/* cli/run_folders.h: the run folders under a folder, as `run -o DIR` and `sweep` leave them. One
 * lister for report/diagnose/export (the newest run of `runs/`) and compare (every run a side). */
#ifndef GP_CLI_RUN_FOLDERS_H
#define GP_CLI_RUN_FOLDERS_H

#include <time.h>

struct run_folder {
    char *path;
    struct timespec mtime;
};

/* Whether folder `dir` itself holds a trace: *.pt.trace.json[.gz] names, or with `any_name` any
 * name trace_paths_expand reads in a folder. */
int run_folder_holds_traces(const char *dir, int any_name);

/* The folders under `dir` that hold traces (by `any_name` as above), searched down to `max_depth`
 * levels below it (a folder holding traces is not searched further), sorted by path, into *out.
 * @return their count, or -1 when out of memory (*out NULL). Free with run_folders_free. */
long run_folders_list(const char *dir, int max_depth, int any_name, struct run_folder **out);

/* The index of the newest of v[0..n) by modification time (ties: the last by path); n > 0. */
long run_folders_newest(const struct run_folder *v, long n);

void run_folders_free(struct run_folder *v, long n);

#endif
