/* cli/trace_jobs.h: what report and diagnose share: turning TRACE|DIR arguments into trace
 * paths, running one job per trace on a few threads, and keeping a trace's read warnings so
 * they print in argument order. */
#ifndef GP_CLI_TRACE_JOBS_H
#define GP_CLI_TRACE_JOBS_H

#include "gp/analysis.h"
#include "gp/trace.h"

#include <stddef.h>

/* The options every command opens traces with: the memory ceiling (--max-memory; by default 64
 * times the file's size, at least 256 MiB, at most a quarter of the machine's memory). */
const gp_trace_opts *cli_trace_opts(void);
/* The analysis options every command uses: its share of the thread budget. */
const gp_analysis_opts *cli_analysis_opts(void);
/* One meaning of -j for every command: `budget` threads in all (0 = one per core), shared by
 * the traces read at once (at most n_traces) and the threads each reads and analyses with.
 * Sets cli_trace_opts()/cli_analysis_opts() threads; call before the jobs start.
 * @return the traces to read at once. */
long cli_share_threads(long budget, size_t n_traces);
/* Parse --max-memory SIZE (512M, 8G, 0 = none; NULL: keep the default). @return CLI_OK or
 * CLI_ERROR (message printed). */
int cli_set_max_memory(const char *spec);

#define OPT_MAX_MEMORY(v)                                                                          \
    OPT_STR(0, "max-memory", (v), "SIZE",                                                          \
            "memory a trace's events and names may take (default 64 times its file's size, at "    \
            "least 256M, at most a quarter of this machine's; 512M, 8G, 0 = no limit)")

/* -j N for the commands that read many traces: the budget of cli_share_threads. */
#define OPT_JOBS(v)                                                                                \
    OPT_INT('j', "jobs", (v), "N",                                                                 \
            "use N threads in all (default: one per core): traces read at once, and the "          \
            "threads each is read and analysed with",                                              \
            0, 1024)

/* Trace paths (owned strings). */
struct trace_paths {
    char **v;
    size_t n, cap;
    int runs;      /* a folder with no traces but run folders that hold some: TRACE_RUNS_* */
    int summaries; /* a folder's *.gprof-summary.json files count as traces (job) */
};

/* What `summarize` names a trace's summary: <trace name less .json[.gz]> + this. */
#define TRACE_SUMMARY_SUFFIX ".gprof-summary.json"

enum { TRACE_RUNS_NONE, TRACE_RUNS_NEWEST, TRACE_RUNS_ALL };

#define OPT_ALL_RUNS(v)                                                                            \
    OPT_BOOL(0, "all", (v), "a folder of run folders (runs/): read every run, not the newest")

/* Add the traces of the run folders in `dir` (its subfolders that hold traces): the newest
 * (by modification time; a note on stderr names it when there are several), or all of them in
 * name order. @param found receives whether dir holds any. @return CLI_OK or CLI_ERROR. */
int trace_runs_add(struct trace_paths *p, const char *dir, int all, int *found);

/* Append each of args[0..n): a file as given; a directory as its *.pt.trace.json[.gz] files
 * (and, with p->summaries, its *.gprof-summary.json files; else every *.json[.gz]: a run
 * directory also holds summary.json), sorted by name; with
 * p->runs set, a directory with none but run folders as trace_runs_add.
 * @return CLI_OK or CLI_ERROR (message printed). */
int trace_paths_expand(struct trace_paths *p, const char *const *args, int n);
void trace_paths_release(struct trace_paths *p);

/* @return 1 when `name`, in the directory open as `dir_fd`, is a trace to read: pass 0 takes
 * *.pt.trace.json[.gz], pass 1 any *.json[.gz]; either also takes "<such a name>.tmp", what a
 * program that died left (readable, incomplete), when its finished twin is not beside it. */
int trace_name_wanted(int dir_fd, const char *name, int pass);

/* Call fn(i, ud) for every i in [0, n) with the -j budget `threads` (0 = one per core): the
 * traces at once and each one's threads come from cli_share_threads. Returns when all calls
 * have returned. fn must be safe to run concurrently for different i. */
void trace_jobs_run(size_t n, long threads, void (*fn)(size_t i, void *ud), void *ud);

/* Copies of a trace's read warnings (e.g. a truncated tail), printed later in order. */
struct trace_warnings {
    char **v;
    size_t n;
};
/* Keep the read warnings of `t`, then its notes (trace_notes_add). */
void trace_warnings_keep(struct trace_warnings *w, const gp_trace *t);
/* Append what `t` says was lost or unfinished: "incomplete: the program ended at ...", records
 * the profiler dropped (CPU, GPU), the profiler's warnings (trace_notes.c). */
void trace_notes_add(struct trace_warnings *w, const gp_trace *t);
void trace_warnings_print(const struct trace_warnings *w, const char *path);
void trace_warnings_release(struct trace_warnings *w);

/* What a command does with a trace it reads (trace_pipeline): `opened` sees the trace before
 * the analysis (NULL: nothing to note); `use` gets the analysis (NULL: open only, no analysis). */
struct trace_steps {
    void (*opened)(const gp_trace *t, void *ud);
    gp_status (*use)(const gp_analysis *a, void *ud, gp_error *err);
};

/* The one way every command reads a trace: open `path` (cli_trace_opts), keep its read warnings
 * and notes in `w`, call steps->opened, analyse it (cli_analysis_opts) and call steps->use on the
 * analysis; the trace and analysis are freed before returning. Thread-safe for distinct `w`, `ud`
 * and `err`. @return the first failure's status (err set), else use's. */
gp_status trace_pipeline(const char *path, struct trace_warnings *w,
                         const struct trace_steps *steps, void *ud, gp_error *err);

/* For a caller that holds a trace's analysis across calls (job --perfetto reads each rank again
 * while it writes): open and analyse `path` as trace_pipeline does, without its warnings; free
 * both with trace_release_held. @return GP_OK (*t, *a set) or the failure (err set, both NULL). */
gp_status trace_open_held(const char *path, gp_trace **t, gp_analysis **a, gp_error *err);
void trace_release_held(gp_trace *t, gp_analysis *a);

/* trace_pipeline with `use` alone. */
gp_status trace_analysed(const char *path, struct trace_warnings *w,
                         gp_status (*use)(const struct gp_analysis *a, void *ud, gp_error *err),
                         void *ud, gp_error *err);

#endif
