/* session.c: the profiling session (the process-global state): options, output naming,
 * init/shutdown, steps and the profiling window, exit/signal/fork handling, and the automatic
 * session that injection starts (NVTX_INJECTION64_PATH / CUDA_INJECTION64_PATH). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp/log.h"
#include "gp/trace_schema.h"
#include "prof_int.h"

#ifdef GP_HAVE_CUPTI
#    include "cupti_int.h"
#endif

/* The session object: all of libprof's process-global state, one member per module (each on
 * its own cache lines). Only this file names it; the others reach their member through
 * prof_state_<module>() (prof_int.h). */
static struct prof_state {
    _Alignas(64) prof_session session;
    _Alignas(64) prof_clock_state clock;
    _Alignas(64) prof_config_state config;
    _Alignas(64) prof_names_state names;
    _Alignas(64) prof_threads_state threads;
    _Alignas(64) prof_writer_state writer;
#ifdef GP_HAVE_CUPTI
    _Alignas(64) prof_cupti_state cupti;
    _Alignas(64) prof_loader_state loader;
#endif
} state;

/* The members' first values that are not zeros, set before anything in the library runs (the
 * object itself is zeros, so its megabytes stay in .bss rather than in the file). */
__attribute__((constructor(101))) static void state_defaults(void)
{
    state.session.tick_gap = 1;
    state.clock.pub_max_used = INT64_MIN;
    state.config.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    state.names.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    state.threads.key_once = (pthread_once_t)PTHREAD_ONCE_INIT;
    atomic_init(&state.threads.async_next, 1);
    state.writer.warn_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    snprintf(state.writer.gpu_status, sizeof(state.writer.gpu_status), "not requested");
#ifdef GP_HAVE_CUPTI
    state.cupti.qlock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    state.cupti.held_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    state.loader.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
#endif
}

prof_session *prof_state_session(void)
{
    return &state.session;
}
prof_clock_state *prof_state_clock(void)
{
    return &state.clock;
}
prof_config_state *prof_state_config(void)
{
    return &state.config;
}
prof_names_state *prof_state_names(void)
{
    return &state.names;
}
prof_threads_state *prof_state_threads(void)
{
    return &state.threads;
}
prof_writer_state *prof_state_writer(void)
{
    return &state.writer;
}
#ifdef GP_HAVE_CUPTI
prof_cupti_state *prof_state_cupti(void)
{
    return &state.cupti;
}
prof_loader_state *prof_state_loader(void)
{
    return &state.loader;
}
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char trace_path[PATH_MAX];
static int trace_done;      /* trace_path was written completely */
static int process_exiting; /* the exit handler is shutting the session down */
static int hooks_installed;
static int signals_installed;
/* Signals whose default action ends the process: the trace is finished first, then the signal
 * does what it would have done. */
static const int finish_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_FINISH_SIGNALS ((int)(sizeof(finish_signals) / sizeof(finish_signals[0])))
static struct sigaction old_actions[N_FINISH_SIGNALS];
static _Atomic int signal_finishing;
static int defer_gpu; /* injected through NVTX only: wait for InitializeInjection */

/* Steps and the profiling window (guarded by `lock`). */
static gp_prof_schedule sched;
static int64_t next_step;
static int64_t open_step = -1;
static int64_t open_step_t0;
static int open_step_rec;
/* the scheduler's figures for the open step's thread at its start (ok: read), and the schedstat
 * file of the thread that last marked a step (sched_tid), kept open */
static prof_thread *open_step_thread;
static prof_sched open_step_sched;
static int open_step_sched_ok;
static int sched_fd = -1, sched_tid;
#define MAX_WINDOWS 1024
static int64_t win_t0[MAX_WINDOWS], win_t1[MAX_WINDOWS];
static _Atomic int n_windows;
static int window_open;

void prof_clock_anchor(int64_t *realtime_ns, int64_t *monotonic_ns)
{
    struct timespec a, m, b;
    clock_gettime(CLOCK_REALTIME, &a);
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &b);
    int64_t ra = (int64_t)a.tv_sec * 1000000000LL + a.tv_nsec;
    int64_t rb = (int64_t)b.tv_sec * 1000000000LL + b.tv_nsec;
    *realtime_ns = ra + (rb - ra) / 2;
    *monotonic_ns = (int64_t)m.tv_sec * 1000000000LL + m.tv_nsec;
}

int64_t gp_prof_now_ns(void)
{
    return prof_now();
}

int64_t gp_prof_thread_runq_ns(void)
{
    prof_sched s;
    return prof_sched_read(&s) == 0 ? s.runq_ns : -1;
}

void gp_prof_options_init(gp_prof_options *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->gzip = GP_PROF_GZIP_AUTO;
    opts->record = GP_PROF_RECORD_DEFAULT;
    opts->handle_signals = 1;
}

/* ---- output naming ---- */

static int mkdir_p(const char *dir)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Resolve the output path and gzip choice. */
/* What the trace replaces, decided before anything is written: a regular file (or nothing) is
 * written as <path>.tmp and renamed over it; a symlink is followed, so the file it names gets the
 * trace and the link stays (a replaced file keeps its mode); a character device (/dev/null) is
 * written in place, never renamed over or removed (as root a rename would turn /dev/null into a
 * regular file); anything else (a folder, a FIFO, a socket) is refused. */
static gp_status resolve_output(int *device, int *mode, gp_error *err)
{
    struct stat st;
    *device = 0;
    *mode = 0;
    if (lstat(trace_path, &st) != 0)
        return GP_OK; /* nothing there yet */
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        GP_FAIL_IF(!realpath(trace_path, target) || stat(target, &st) != 0, GP_EINVAL, err,
                   "trace path '%s' is a symlink to nothing", trace_path);
        snprintf(trace_path, sizeof(trace_path), "%s", target);
    }
    if (S_ISREG(st.st_mode)) {
        *mode = (int)(st.st_mode & 07777); /* the trace replacing it keeps its mode */
        return GP_OK;
    }
    GP_FAIL_IF(!S_ISCHR(st.st_mode), GP_EINVAL, err,
               "trace path '%s' is not a regular file or a character device", trace_path);
    *device = 1;
    return GP_OK;
}

static gp_status choose_output(const gp_prof_options *o, int *gzip, gp_error *err)
{
    if (o->output_path) {
        *gzip = o->gzip == GP_PROF_GZIP_AUTO ? ends_with(o->output_path, ".gz") : o->gzip;
        if (snprintf(trace_path, sizeof(trace_path), "%s", o->output_path) >=
            (int)sizeof(trace_path))
            return gp_error_set(err, GP_EINVAL, o->output_path, "trace path too long");
        return GP_OK;
    }
    *gzip = o->gzip != GP_PROF_GZIP_OFF;
    const char *dir = o->output_dir ? o->output_dir : getenv("GP_PROF_OUT");
    if (!dir || !*dir)
        dir = ".";
    if (mkdir_p(dir) != 0)
        return gp_error_set(err, GP_EIO, dir, "cannot create trace folder: %s", strerror(errno));
    char host[256] = "host";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    long long ms = (long long)(prof_now() / 1000000);
    if (snprintf(trace_path, sizeof(trace_path), "%s/%s_%d.%lld%s", dir, host, (int)getpid(), ms,
                 *gzip ? GP_TRACE_SUFFIX_GZ : GP_TRACE_SUFFIX) >= (int)sizeof(trace_path))
        return gp_error_set(err, GP_EINVAL, dir, "trace path too long");
    return GP_OK;
}

/* ---- exit, signals, fork ---- */

static void at_exit(void)
{
    if (atomic_load(&state.session.running) && getpid() == state.session.pid) {
        process_exiting = 1;
        gp_prof_shutdown(NULL);
    }
}

static void after_fork_child(void)
{
    /* The child has no writer thread and must never touch the parent's trace. */
    atomic_store(&state.session.running, 0);
    atomic_store(&state.session.recording, 0);
    atomic_fetch_add(&state.session.gen, 1);
    prof_threads_after_fork();
    prof_writer_forget();
    prof_gpu_after_fork();
    if (sched_fd >= 0) /* the parent's thread's */
        close(sched_fd);
    sched_fd = -1;
}

static void call_old(int sig, const struct sigaction *old, siginfo_t *info, void *uc)
{
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction)
        old->sa_sigaction(sig, info, uc);
    else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
        old->sa_handler(sig);
}

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    const struct sigaction *old = &old_actions[0];
    for (int i = 0; i < N_FINISH_SIGNALS; i++)
        if (finish_signals[i] == sig)
            old = &old_actions[i];
    int old_is_default = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
    if (!old_is_default) {
        call_old(sig, old, info, uc); /* the program handles it; exit() will flush */
        return;
    }
    if (atomic_load(&state.session.running) && getpid() == state.session.pid &&
        !atomic_exchange(&signal_finishing, 1)) {
        atomic_store(&state.session.recording, 0);
        prof_writer_finish(10000, 1);
    }
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns: die as the signal says */
}

static void install_signals(void)
{
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_FINISH_SIGNALS; i++) {
        if (sigaction(finish_signals[i], NULL, &cur) != 0 || cur.sa_sigaction == on_signal)
            continue;
        if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
            continue; /* ignored (nohup): leave it so */
        old_actions[i] = cur;
        sigaction(finish_signals[i], &sa, NULL);
    }
    signals_installed = 1;
}

/* ---- init / shutdown ---- */

static int phase_of(int64_t n); /* 0 idle, 1 warmup, 2 active */

static void window_set(int active, int64_t now)
{
    atomic_store(&state.session.recording, active);
    int nw = atomic_load(&n_windows);
    if (active && !window_open && nw < MAX_WINDOWS) {
        win_t0[nw] = now;
        win_t1[nw] = INT64_MAX;
        atomic_store(&n_windows, nw + 1);
        window_open = 1;
    } else if (!active && window_open) {
        win_t1[nw - 1] = now;
        window_open = 0;
    }
}

int prof_window_contains(int64_t t)
{
    if (sched.active <= 0)
        return 1;
    int nw = atomic_load(&n_windows);
    for (int i = 0; i < nw; i++)
        if (t >= win_t0[i] && t < win_t1[i])
            return 1;
    return 0;
}

static gp_status check_options(const gp_prof_options *o, gp_error *err)
{
    const gp_prof_schedule *s = &o->schedule;
    GP_FAIL_IF(s->skip_first < 0 || s->wait < 0 || s->warmup < 0 || s->active < 0 || s->repeat < 0,
               GP_EINVAL, err, "profiling schedule values must not be negative");
    GP_FAIL_IF(o->gzip < -1 || o->gzip > 1, GP_EINVAL, err, "gzip must be -1, 0 or 1");
    GP_FAIL_IF(o->flush_interval_ms < 0, GP_EINVAL, err, "flush_interval_ms must be >= 0");
    return GP_OK;
}

/* "512M", "1G", "65536" -> bytes. @return -1 if not a size. */
static int64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if ((*end == 'i' || *end == 'I') && shift)
        end++;
    if ((*end == 'b' || *end == 'B'))
        end++;
    if (*end || v > (1ULL << 50) >> shift)
        return -1;
    return (int64_t)(v << shift);
}

/* Bytes all threads' record blocks may hold: the option, else $GP_PROF_BUFFER_LIMIT, else
 * PROF_BUF_LIMIT_DEFAULT or an eighth of the machine's memory if that is less; at least
 * 64 KiB. `bad_env` is set to the variable's value if it is not a size. */
static int64_t buffer_limit(size_t option, const char **bad_env)
{
    int64_t limit = (int64_t)option;
    const char *env = getenv("GP_PROF_BUFFER_LIMIT");
    *bad_env = NULL;
    if (limit == 0 && env && *env && (limit = parse_size(env)) < 0) {
        *bad_env = env;
        limit = 0;
    }
    if (limit == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        int64_t eighth = pages > 0 && page > 0 ? (int64_t)pages * page / 8 : INT64_MAX;
        limit = eighth < PROF_BUF_LIMIT_DEFAULT ? eighth : PROF_BUF_LIMIT_DEFAULT;
    }
    return limit < (64 << 10) ? (64 << 10) : limit;
}

static void start_gpu(unsigned record)
{
    if (!(record & (GP_PROF_RECORD_GPU | GP_PROF_RECORD_DRIVER))) {
        prof_set_gpu_status("not requested");
        return;
    }
    if (defer_gpu) {
        prof_set_gpu_status("no GPU activity could be recorded: the program did not initialise "
                            "CUDA (or CUDA_INJECTION64_PATH was not set)");
        return;
    }
    char why[256];
    if (prof_gpu_start(record, why, sizeof(why)) == 0)
        prof_gpu_started_status();
    else
        prof_set_gpu_status(why);
}

static gp_status init_locked(const gp_prof_options *o, gp_error *err)
{
    GP_FAIL_IF(atomic_load(&state.session.running), GP_EINVAL, err,
               "a profiling session is already running");
    GP_TRY(check_options(o, err));
    int gzip;
    GP_TRY(choose_output(o, &gzip, err));
    int device, mode;
    GP_TRY(resolve_output(&device, &mode, err));
    trace_done = 0;
    state.session.record = o->record;
    state.session.wait_when_full = o->wait_when_full;
    const char *bad_limit;
    state.session.buf_limit = buffer_limit(o->buffer_bytes, &bad_limit);
    prof_buf_reset_peak();
    state.session.pid = (int)getpid();
    sched = o->schedule;
    next_step = 0;
    open_step = -1;
    atomic_store(&n_windows, 0);
    window_open = 0;
    prof_writer_cfg wc;
    memset(&wc, 0, sizeof(wc));
    wc.path = trace_path;
    wc.device = device;
    wc.mode = mode;
    wc.gzip = gzip;
    wc.flush_ms = o->flush_interval_ms ? o->flush_interval_ms : 100;
    prof_clock_anchor(&wc.anchor_real, &wc.anchor_mono);
    state.session.base_ns = wc.anchor_real / 1000000000LL * 1000000000LL;
    prof_clock_init();
    prof_clock_reset();
    prof_clock_sample();
    prof_clock_start();
    wc.range_cost_ns = prof_range_cost_ns();
    wc.producer = o->producer;
    wc.trace_name = o->trace_name;
    wc.rank = o->rank;
    wc.world_size = o->world_size;
    wc.gen = atomic_load(&state.session.gen) + 1;
    GP_TRY(prof_writer_start(&wc, err));
    if (bad_limit)
        prof_warn("GP_PROF_BUFFER_LIMIT='%s' is not a size (like 512M): the default was used",
                  bad_limit);
    atomic_store(&state.session.gen, wc.gen);
    atomic_store(&signal_finishing, 0);
    atomic_store(&state.session.running, 1);
    window_set(phase_of(0) == 2, prof_now());
    if (!hooks_installed) {
        atexit(at_exit);
        pthread_atfork(NULL, NULL, after_fork_child);
        hooks_installed = 1;
    }
    if (o->handle_signals && !signals_installed)
        install_signals();
    start_gpu(o->record);
    defer_gpu = 0;
    return GP_OK;
}

gp_status gp_prof_init(const gp_prof_options *opts, gp_error *err)
{
    gp_prof_options defaults;
    if (!opts) {
        gp_prof_options_init(&defaults);
        opts = &defaults;
    }
    pthread_mutex_lock(&lock);
    gp_status rc = init_locked(opts, err);
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The scheduler's figures at a step boundary, read at most once however many steps need them:
 * state 0 = not read yet, 1 = read, -1 = the system does not say. */
struct sched_now {
    prof_sched s;
    int state;
};

static void step_end_locked(void);

gp_status gp_prof_shutdown(gp_error *err)
{
    pthread_mutex_lock(&lock);
    if (!atomic_load(&state.session.running) || getpid() != state.session.pid) {
        pthread_mutex_unlock(&lock);
        return GP_OK;
    }
    step_end_locked();
    if (sched_fd >= 0)
        close(sched_fd);
    sched_fd = -1;
    window_set(0, prof_now());
    if (state.session.record & (GP_PROF_RECORD_GPU | GP_PROF_RECORD_DRIVER))
        prof_gpu_sync(); /* work still running would come back without timestamps */
    prof_gpu_flush();
    atomic_store(&state.session.running, 0);
    int rc = atomic_exchange(&signal_finishing, 1) ? -1 : prof_writer_finish(0, 0);
    prof_gpu_stop(process_exiting);
    trace_done = rc == 0;
    pthread_mutex_unlock(&lock);
    if (rc != 0)
        return gp_error_set(err, GP_EIO, trace_path, "the trace could not be written completely");
    return GP_OK;
}

int gp_prof_running(void)
{
    return atomic_load(&state.session.running);
}

const char *gp_prof_trace_path(void)
{
    return trace_done ? trace_path : NULL;
}

/* ---- steps ---- */

static int phase_of(int64_t n)
{
    const gp_prof_schedule *s = &sched;
    if (s->active <= 0)
        return 2;
    if (n < s->skip_first)
        return 0;
    int64_t m = n - s->skip_first, cycle = (int64_t)s->wait + s->warmup + s->active;
    if (s->repeat > 0 && m / cycle >= s->repeat)
        return 0;
    int64_t pos = m % cycle;
    return pos < s->wait ? 0 : pos < s->wait + s->warmup ? 1 : 2;
}

static void sched_close(void)
{
    if (sched_fd >= 0)
        close(sched_fd);
    sched_fd = -1;
}

/* Open the calling thread's schedstat file unless it is the one open: before a boundary's
 * ticks, so that only the read comes between them and the figures. */
static void sched_open_for(const prof_thread *t)
{
    if (!t || (sched_fd >= 0 && sched_tid == t->tid))
        return;
    sched_close();
    sched_fd = prof_sched_open();
    sched_tid = t->tid;
}

static const prof_sched *sched_now(struct sched_now *n)
{
    if (n->state == 0 && prof_sched_read_fd(sched_fd, &n->s) != 0)
        sched_close(); /* its thread is gone: the next boundary opens it again */
    if (n->state == 0)
        n->state = sched_fd >= 0 ? 1 : -1;
    return n->state == 1 ? &n->s : NULL;
}

/* A step being ended: its record waits for the scheduler's figures, read after both boundary
 * ticks (this step's end, the next one's start): a wait for a core that begins inside that
 * read (a thread is often preempted on its way out of a system call) then lands in the next
 * step's wall time and in its run-queue time alike, not in one step's wall and the other's
 * run-queue time. */
struct step_close {
    prof_thread *t; /* NULL: nothing to write */
    int64_t num, t0, t1;
    prof_thread *sched_thread; /* the thread that began it, and its figures then */
    prof_sched sched;
    int sched_ok;
};

static void step_close_locked(struct step_close *c)
{
    c->t = NULL;
    if (open_step < 0)
        return;
    c->t = open_step_rec ? prof_thread_self() : NULL;
    c->num = open_step;
    c->t0 = open_step_t0;
    c->t1 = c->t ? prof_thread_ticks(c->t) : 0;
    c->sched_thread = open_step_thread;
    c->sched = open_step_sched;
    c->sched_ok = open_step_sched_ok;
    open_step = -1;
}

/* The closed step's record, just after its CPU and run-queue time (GP_ARG_STEP_*) when the
 * thread that ends it began it. */
static void step_emit(const struct step_close *c, struct sched_now *now)
{
    if (!c->t)
        return;
    const prof_sched *e = c->sched_ok && c->t == c->sched_thread ? sched_now(now) : NULL;
    if (e) {
        prof_rec k = {e->cpu_ns - c->sched.cpu_ns,
                      e->runq_ns - c->sched.runq_ns,
                      (uint64_t)c->num,
                      0,
                      PROF_REC_SCHED,
                      0};
        prof_emit(c->t, &k);
    }
    prof_rec r = {c->t0, c->t1, (uint64_t)c->num, 0, PROF_REC_STEP, 0};
    prof_emit(c->t, &r);
}

static void step_end_locked(void)
{
    struct step_close c;
    struct sched_now now = {.state = 0};
    sched_open_for(prof_thread_self());
    step_close_locked(&c);
    step_emit(&c, &now);
}

int64_t gp_prof_step_begin(void)
{
    pthread_mutex_lock(&lock);
    if (!atomic_load(&state.session.running)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    struct step_close c;
    struct sched_now now = {.state = 0};
    sched_open_for(prof_thread_self());
    step_close_locked(&c);
    int64_t n = next_step++;
    window_set(phase_of(n) == 2, prof_now());
    open_step = n;
    prof_thread *t = prof_thread_self();
    open_step_rec = prof_recording(GP_PROF_RECORD_CPU);
    open_step_t0 = t ? prof_thread_ticks(t) : prof_ticks();
    open_step_thread = t;
    open_step_sched_ok = open_step_rec && t && sched_now(&now);
    if (open_step_sched_ok)
        open_step_sched = now.s;
    step_emit(&c, &now);
    pthread_mutex_unlock(&lock);
    return n;
}

void gp_prof_step_end(void)
{
    pthread_mutex_lock(&lock);
    if (atomic_load(&state.session.running))
        step_end_locked();
    pthread_mutex_unlock(&lock);
}

int64_t gp_prof_step(void)
{
    return gp_prof_step_begin();
}

/* ---- injection ---- */

/* argv of this process from /proc/self/cmdline into "gprof"."command". */
static void record_command(void)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *argv[64];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 64; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    gp_prof_config_strv(GP_CFG_COMMAND, argv, argc);
}

int prof_inject_start(const char *via, int gpu)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.producer = "inject";
    const char *driver = getenv("GP_PROF_DRIVER");
    if (driver && strcmp(driver, "1") == 0)
        o.record |= GP_PROF_RECORD_DRIVER;
    gp_error err;
    gp_error_clear(&err);
    /* NVTX's and CUDA's injections may start at once on two threads: one starts the session,
     * and CUDA's starts the GPU part in a session NVTX's started (deferred) under the lock. */
    pthread_mutex_lock(&lock);
    int running = atomic_load(&state.session.running);
    gp_status rc = GP_OK;
    if (!running) {
        record_command();
        defer_gpu = !gpu; /* NVTX alone: CUPTI only if the program initialises CUDA */
        rc = init_locked(&o, &err);
    }
    pthread_mutex_unlock(&lock);
    if (running && gpu)
        prof_gpu_ensure_started();
    if (rc != GP_OK) {
        GP_LOG(GP_LOG_ERROR, "profiling disabled (%s): '%s': %s", via, err.path, err.msg);
        return -1;
    }
    return 0;
}
