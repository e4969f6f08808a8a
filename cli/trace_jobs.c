/* Trace-path expansion, a small parallel-for, and deferred read warnings for report and
 * diagnose. */
#include "trace_jobs.h"
#include "cli.h"

#include "gp/analysis.h"
#include "gp/trace_schema.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* pass 0: PyTorch's trace names (*.pt.trace.json[.gz]); pass 1: any *.json[.gz] */
static int is_trace_name(const char *s, size_t n, int pass)
{
    static const char *const names[2][2] = {{GP_TRACE_SUFFIX, GP_TRACE_SUFFIX_GZ},
                                            {".json", ".json.gz"}};
    for (int i = 0; i < 2; i++) {
        size_t k = strlen(names[pass][i]);
        if (n > k && memcmp(s + n - k, names[pass][i], k) == 0)
            return 1;
    }
    return 0;
}

int trace_name_wanted(int dir_fd, const char *s, int pass)
{
    size_t n = strlen(s);
    if (!ends_with(s, ".tmp"))
        return is_trace_name(s, n, pass);
    char done[NAME_MAX + 1];
    if (!is_trace_name(s, n - 4, pass) || n - 4 > NAME_MAX)
        return 0;
    snprintf(done, sizeof(done), "%.*s", (int)(n - 4), s);
    struct stat st;
    return fstatat(dir_fd, done, &st, 0) != 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push_path(struct trace_paths *p, char *s)
{
    if (!s)
        return -1;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        char **v = realloc(p->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return -1;
        }
        p->v = v, p->cap = cap;
    }
    p->v[p->n++] = s;
    return 0;
}

static int add_matching(struct trace_paths *p, const char *dir, int pass)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (!d)
        return cli_error("cannot open directory '%s'", dir);
    while ((e = readdir(d)) != NULL) {
        int summary = p->summaries && pass == 0 && ends_with(e->d_name, TRACE_SUMMARY_SUFFIX);
        if (e->d_name[0] == '.' || (!summary && !trace_name_wanted(dirfd(d), e->d_name, pass)))
            continue;
        size_t n = len + strlen(e->d_name) + 2;
        char *s = malloc(n);
        if (s)
            snprintf(s, n, "%.*s/%s", (int)len, dir, e->d_name);
        if (push_path(p, s) != 0) {
            closedir(d);
            return cli_error("out of memory");
        }
    }
    closedir(d);
    return CLI_OK;
}

/* A folder with *.pt.trace.json files is read for those alone: say which other *.json[.gz]
 * files it leaves (a run's summary.json is no trace). */
static void note_left_out(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    char first[NAME_MAX + 1] = "";
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "summary.json") ||
            ends_with(e->d_name, TRACE_SUMMARY_SUFFIX) ||
            trace_name_wanted(dirfd(d), e->d_name, 0) || !trace_name_wanted(dirfd(d), e->d_name, 1))
            continue;
        if (n++ == 0 || strcmp(e->d_name, first) < 0)
            snprintf(first, sizeof(first), "%s", e->d_name);
    }
    if (d)
        closedir(d);
    if (n)
        cli_warn("'%s': %zu other .json file%s not read ('%s'%s): a folder with *%s files is "
                 "read for those; name the others to read them",
                 dir, n, n == 1 ? "" : "s", first, n > 1 ? ", ..." : "", GP_TRACE_SUFFIX);
}

static int add_dir(struct trace_paths *p, const char *dir)
{
    size_t first = p->n;
    for (int pass = 0; pass < 2 && p->n == first; pass++)
        if (add_matching(p, dir, pass) != CLI_OK)
            return CLI_ERROR;
        else if (pass == 0 && p->n > first)
            note_left_out(dir);
    int runs = 0;
    if (p->n == first && p->runs && trace_runs_add(p, dir, p->runs == TRACE_RUNS_ALL, &runs))
        return CLI_ERROR;
    if (runs)
        return CLI_OK;
    if (p->n == first)
        return cli_error("no trace files (*.json, *.json.gz, or a .tmp left by a program that "
                         "died) in '%s'",
                         dir);
    qsort(p->v + first, p->n - first, sizeof(*p->v), cmp_str);
    return CLI_OK;
}

int trace_paths_expand(struct trace_paths *p, const char *const *args, int n)
{
    struct stat st;
    for (int i = 0; i < n; i++) {
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            if (add_dir(p, args[i]) != CLI_OK)
                return CLI_ERROR;
        } else if (push_path(p, strdup(args[i])) != 0) {
            return cli_error("out of memory");
        }
    }
    return CLI_OK;
}

void trace_paths_release(struct trace_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

struct pool {
    size_t n, next;
    void (*fn)(size_t i, void *ud);
    void *ud;
    pthread_mutex_t lock;
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        p->fn(i, p->ud);
    }
}

void trace_jobs_run(size_t n, long threads, void (*fn)(size_t i, void *ud), void *ud)
{
    enum { MAX_THREADS = 64 };
    pthread_t th[MAX_THREADS];
    struct pool p = {n, 0, fn, ud, PTHREAD_MUTEX_INITIALIZER};
    long want = cli_share_threads(threads, n);
    want = want < 1 ? 1 : want > MAX_THREADS ? MAX_THREADS : want;
    long started = 0;
    for (long i = 1; i < want; i++)
        started += pthread_create(&th[started], NULL, worker, &p) == 0;
    worker(&p); /* the calling thread works too, so a failed pthread_create only slows us */
    for (long i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.lock);
}

void trace_warnings_keep(struct trace_warnings *w, const gp_trace *t)
{
    size_t n;
    const char *const *src = gp_trace_warnings(t, &n);
    w->n = 0;
    w->v = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; w->v && i < n; i++)
        if ((w->v[w->n] = strdup(src[i])) != NULL)
            w->n++;
    if (w->v)
        trace_notes_add(w, t);
}

void trace_warnings_print(const struct trace_warnings *w, const char *path)
{
    for (size_t i = 0; i < w->n; i++)
        cli_warn("'%s': %s", path, w->v[i]);
}

void trace_warnings_release(struct trace_warnings *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    free(w->v);
    w->v = NULL;
    w->n = 0;
}

gp_status trace_pipeline(const char *path, struct trace_warnings *w,
                         const struct trace_steps *steps, void *ud, gp_error *err)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    gp_error_clear(err);
    gp_status rc = gp_trace_open(path, cli_trace_opts(), &t, err);
    if (rc == GP_OK) {
        trace_warnings_keep(w, t);
        if (steps->opened)
            steps->opened(t, ud);
    }
    if (rc == GP_OK && steps->use)
        rc = gp_analysis_run(t, cli_analysis_opts(), &a, err);
    if (rc == GP_OK && steps->use)
        rc = steps->use(a, ud, err);
    if (rc != GP_OK)
        cli_print_trail(path); /* on the thread that failed */
    gp_analysis_free(a);
    gp_trace_free(t);
    return rc;
}

gp_status trace_open_held(const char *path, gp_trace **t, gp_analysis **a, gp_error *err)
{
    *t = NULL, *a = NULL;
    gp_error_clear(err);
    gp_status rc = gp_trace_open(path, cli_trace_opts(), t, err);
    if (rc == GP_OK)
        rc = gp_analysis_run(*t, cli_analysis_opts(), a, err);
    if (rc != GP_OK) {
        cli_print_trail(path);
        trace_release_held(*t, *a);
        *t = NULL, *a = NULL;
    }
    return rc;
}

void trace_release_held(gp_trace *t, gp_analysis *a)
{
    gp_analysis_free(a);
    gp_trace_free(t);
}

gp_status trace_analysed(const char *path, struct trace_warnings *w,
                         gp_status (*use)(const struct gp_analysis *a, void *ud, gp_error *err),
                         void *ud, gp_error *err)
{
    const struct trace_steps steps = {NULL, use};
    return trace_pipeline(path, w, &steps, ud, err);
}
