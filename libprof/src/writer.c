/* writer.c: the writer thread. Every flush interval it drains each thread's ring and the GPU
 * buffers into "traceEvents" of <path>.tmp; at the end it writes the metadata events, rewrites
 * the header region (run configuration, drop counts, warnings, devices) and renames the file.
 * The events are formatted by hand from cached, pre-escaped names: this loop sets the writer's
 * throughput (bench/bench_prof.sh). */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "gp/log.h"
#include "gp/trace_schema.h"
#include "prof_int.h"

#define TAKE_BATCH      4096
#define PASS_PER_THREAD (1u << 20) /* records from one thread in one pass */
#define MAX_WARN        PROF_MAX_WARN
#define MAX_TIDS        PROF_MAX_TIDS
typedef prof_async_range async_range;
typedef prof_tid_info tid_info;

/* The state is a member of the session object (session.c): prof_state_writer(). */

void prof_warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&prof_state_writer()->warn_lock);
    if (prof_state_writer()->n_warnings < MAX_WARN &&
        (prof_state_writer()->warnings[prof_state_writer()->n_warnings] = strdup(line)) != NULL)
        prof_state_writer()->n_warnings++;
    else
        prof_state_writer()->warnings_lost++;
    pthread_mutex_unlock(&prof_state_writer()->warn_lock);
}

void prof_set_gpu_status(const char *status)
{
    pthread_mutex_lock(&prof_state_writer()->warn_lock);
    snprintf(prof_state_writer()->gpu_status, sizeof(prof_state_writer()->gpu_status), "%s",
             status);
    pthread_mutex_unlock(&prof_state_writer()->warn_lock);
}

static void warnings_clear(void)
{
    pthread_mutex_lock(&prof_state_writer()->warn_lock);
    for (int i = 0; i < prof_state_writer()->n_warnings; i++)
        free(prof_state_writer()->warnings[i]);
    prof_state_writer()->n_warnings = 0;
    prof_state_writer()->warnings_lost = 0;
    pthread_mutex_unlock(&prof_state_writer()->warn_lock);
}

/* ---- events ---- */

static void comma(prof_out *o)
{
    if (prof_state_writer()->need_comma)
        prof_out_raw(o, ",\n", 2);
    prof_state_writer()->need_comma = 1;
    prof_state_writer()->n_events++;
}

void prof_event_sep(prof_out *o)
{
    comma(o);
}

/* Grow the per-name tables to `ncap` ids. @return 0, or -1 out of memory (tables unchanged
 * in size, though some may have moved). */
static int grow_names(uint32_t ncap)
{
    char **e = realloc(prof_state_writer()->esc, ncap * sizeof(*e));
    if (e)
        prof_state_writer()->esc = e;
    uint32_t *l = e ? realloc(prof_state_writer()->esc_len, ncap * sizeof(*l)) : NULL;
    if (l)
        prof_state_writer()->esc_len = l;
    unsigned char *op = l ? realloc(prof_state_writer()->esc_op, ncap) : NULL;
    if (op)
        prof_state_writer()->esc_op = op;
    char **h = op ? realloc(prof_state_writer()->head, ncap * sizeof(*h)) : NULL;
    if (h)
        prof_state_writer()->head = h;
    uint32_t *hl = h ? realloc(prof_state_writer()->head_len, ncap * sizeof(*hl)) : NULL;
    if (!hl)
        return -1;
    prof_state_writer()->head_len = hl;
    memset(prof_state_writer()->esc + prof_state_writer()->esc_cap, 0,
           (ncap - prof_state_writer()->esc_cap) * sizeof(*e));
    memset(prof_state_writer()->head + prof_state_writer()->esc_cap, 0,
           (ncap - prof_state_writer()->esc_cap) * sizeof(*h));
    prof_state_writer()->esc_cap = ncap;
    return 0;
}

/* Pre-escaped JSON string contents of name `id` (escaped once, then reused). */
static const char *esc_name(uint32_t id, uint32_t *len)
{
    if (id >= prof_state_writer()->esc_cap && grow_names(prof_name_count() + 1024) != 0) {
        *len = 0;
        return "";
    }
    if (!prof_state_writer()->esc[id]) {
        const char *s = prof_name_str(id);
        size_t n = 0;
        prof_state_writer()->esc[id] = prof_json_escape(s ? s : "(unnamed)", s ? strlen(s) : 9, &n);
        prof_state_writer()->esc_len[id] = (uint32_t)n;
        prof_state_writer()->esc_op[id] = prof_name_cat(id) == GP_PROF_CAT_CPU_OP;
        if (!prof_state_writer()->esc[id]) {
            *len = 0;
            return "";
        }
    }
    *len = prof_state_writer()->esc_len[id];
    return prof_state_writer()->esc[id];
}

static void put_name(prof_out *o, uint32_t id)
{
    uint32_t n;
    const char *s = esc_name(id, &n);
    prof_out_raw(o, "\"", 1);
    prof_out_raw(o, s, n);
    prof_out_raw(o, "\"", 1);
}

static void put_pid_tid_ts(prof_out *o, int64_t pid, int64_t tid, int64_t t_ns)
{
    prof_out_raw(o, ",\"pid\":", 7);
    prof_out_i64(o, pid);
    prof_out_raw(o, ",\"tid\":", 7);
    prof_out_i64(o, tid);
    prof_out_raw(o, ",\"ts\":", 6);
    prof_out_us(o, t_ns - prof_state_session()->base_ns);
}

void prof_write_x(prof_out *o, const char *cat, uint32_t name, int64_t pid, int64_t tid, int64_t t0,
                  int64_t t1)
{
    comma(o);
    prof_out_str(o, "{\"ph\":\"X\",\"cat\":\"");
    prof_out_str(o, cat);
    prof_out_raw(o, "\",\"name\":", 9);
    put_name(o, name);
    put_pid_tid_ts(o, pid, tid, t0);
    prof_out_raw(o, ",\"dur\":", 7);
    prof_out_us(o, t1 > t0 ? t1 - t0 : 0);
    prof_out_raw(o, "}", 1);
}

/* ---- the hot loop: CPU ranges ---- */

/* A range event is three copies and two numbers: the name's cached head (",\n{...,"name":"N"",
 * category and escaped name included), the thread's tail (,"pid":P,"tid":T,"ts":), then ts and
 * dur. Heads are padded so they are copied in whole 16-byte blocks (no memcpy call for a
 * variable length); names whose head exceeds HEAD_MAX take the general path. */
#define HEAD_MAX  512
#define TAIL_COPY 48 /* >= the longest thread tail (42 bytes) */
#define FAST_MAX  (HEAD_MAX + TAIL_COPY + 2 * 25 + 8 + 1)

static void set_thread_tail(int pid, int tid)
{
    memset(prof_state_writer()->thread_tail, 0, sizeof(prof_state_writer()->thread_tail));
    prof_state_writer()->thread_tail_len = (size_t)snprintf(
            prof_state_writer()->thread_tail, sizeof(prof_state_writer()->thread_tail),
            ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
}

/* Build (once per name) the head of name `id`. @return it, or NULL for the general path. */
static const char *build_head(uint32_t id, uint32_t *len)
{
    static const char pre_ua[] =
            ",\n{\"ph\":\"X\",\"cat\":\"" GP_CAT_USER_ANNOTATION "\",\"name\":\"";
    static const char pre_op[] = ",\n{\"ph\":\"X\",\"cat\":\"" GP_CAT_CPU_OP "\",\"name\":\"";
    uint32_t nlen;
    const char *name = esc_name(id, &nlen); /* grows the tables to cover id */
    if (id >= prof_state_writer()->esc_cap || sizeof(pre_ua) + nlen + 1 > HEAD_MAX)
        return NULL;
    const char *pre = prof_state_writer()->esc_op[id] ? pre_op : pre_ua;
    size_t plen = prof_state_writer()->esc_op[id] ? sizeof(pre_op) - 1 : sizeof(pre_ua) - 1;
    size_t n = plen + nlen + 1;
    char *h = calloc(1, (n + 15) / 16 * 16);
    if (!h)
        return NULL;
    memcpy(h, pre, plen);
    memcpy(h + plen, name, nlen);
    h[n - 1] = '"';
    prof_state_writer()->head[id] = h;
    prof_state_writer()->head_len[id] = (uint32_t)n;
    *len = (uint32_t)n;
    return h;
}

static inline const char *range_head(uint32_t id, uint32_t *len)
{
    if (__builtin_expect(id < prof_state_writer()->esc_cap && prof_state_writer()->head[id] != NULL,
                         1)) {
        *len = prof_state_writer()->head_len[id];
        return prof_state_writer()->head[id];
    }
    return build_head(id, len);
}

static inline int64_t map_ns(prof_tick_map *m, int64_t ticks)
{
    if (__builtin_expect(m->mode == PROF_MAP_LINEAR && ticks >= m->seg[0].t, 1)) {
        m->max_ticks = ticks > m->max_ticks ? ticks : m->max_ticks;
        return prof_seg_ns(&m->seg[ticks >= m->seg[1].t], ticks);
    }
    return m->mode == PROF_MAP_IDENTITY ? ticks : prof_ticks_to_ns(ticks);
}

/* Replace the closing brace of the event just written with its "External id" args. */
static void external_id_args(prof_out *o, uint64_t id)
{
    o->len--;
    prof_out_str(o, ",\"args\":{\"" GP_ARG_EXTERNAL_ID "\":");
    prof_out_u64(o, id);
    prof_out_str(o, "}}");
}

/* One CPU range record (the writer's hot loop: measured in bench_prof.sh). */
static void write_range(prof_out *o, const prof_rec *r, prof_tick_map *m, int tid)
{
    int64_t t0 = map_ns(m, r->t0), t1 = map_ns(m, r->t1);
    uint32_t hlen;
    const char *head = range_head(r->name, &hlen);
    if (__builtin_expect(head == NULL, 0)) { /* a huge name or no memory: the general path */
        prof_write_x(o,
                     prof_name_cat(r->name) == GP_PROF_CAT_CPU_OP ? GP_CAT_CPU_OP
                                                                  : GP_CAT_USER_ANNOTATION,
                     r->name, prof_state_session()->pid, tid, t0, t1);
        if (r->aux)
            external_id_args(o, r->aux);
        return;
    }
    prof_out_reserve(o, FAST_MAX);
    char *p = o->buf + o->len;
    size_t skip =
            prof_state_writer()->need_comma ? 0 : 2; /* the first event has no ",\n" before it */
    for (size_t i = 0; i < hlen; i += 16)
        memcpy(p + i, head + i, 16);
    if (skip)
        memmove(p, p + 2, hlen - 2);
    p += hlen - skip;
    prof_state_writer()->need_comma = 1;
    prof_state_writer()->n_events++;
    memcpy(p, prof_state_writer()->thread_tail, TAIL_COPY);
    p += prof_state_writer()->thread_tail_len;
    p = prof_put_us(p, t0 - prof_state_session()->base_ns);
    memcpy(p, ",\"dur\":", 8);
    p = prof_put_us(p + 7, t1 > t0 ? t1 - t0 : 0);
    *p++ = '}';
    o->len = (size_t)(p - o->buf);
    if (r->aux) /* the range's CUPTI external correlation id: its GPU work carries it too */
        external_id_args(o, r->aux);
}

static tid_info *tid_slot(int tid)
{
    for (int i = 0; i < prof_state_writer()->n_tids; i++)
        if (prof_state_writer()->tids[i].tid == tid)
            return &prof_state_writer()->tids[i];
    if (prof_state_writer()->n_tids == MAX_TIDS)
        return NULL;
    prof_state_writer()->tids[prof_state_writer()->n_tids] = (tid_info){tid, 0, 0};
    return &prof_state_writer()->tids[prof_state_writer()->n_tids++];
}

/* The step's scheduler args (GP_ARG_STEP_*) when the PROF_REC_SCHED just before it on its
 * thread was this step's. */
static void write_step_sched(prof_out *o, const prof_rec *r, int tid)
{
    const prof_rec *k = &prof_state_writer()->sched;
    if (k->kind != PROF_REC_SCHED || k->aux != r->aux || prof_state_writer()->sched_tid != tid)
        return;
    prof_out_str(o, ",\"args\":{\"" GP_ARG_STEP_CPU "\":");
    prof_out_u64(o, (uint64_t)k->t0);
    prof_out_str(o, ",\"" GP_ARG_STEP_RUNQ "\":");
    prof_out_u64(o, (uint64_t)k->t1);
    prof_out_raw(o, "}", 1);
    prof_state_writer()->sched.kind = 0;
}

static void write_step(prof_out *o, const prof_rec *r, int pid, int tid)
{
    comma(o);
    prof_out_str(o, "{\"ph\":\"X\",\"cat\":\"" GP_CAT_USER_ANNOTATION
                    "\",\"name\":\"" GP_NAME_STEP_PREFIX);
    prof_out_u64(o, r->aux);
    prof_out_raw(o, "\"", 1);
    put_pid_tid_ts(o, pid, tid, r->t0);
    prof_out_raw(o, ",\"dur\":", 7);
    prof_out_us(o, r->t1 - r->t0);
    write_step_sched(o, r, tid);
    prof_out_raw(o, "}", 1);
}

static void write_instant(prof_out *o, const prof_rec *r, int pid, int tid)
{
    comma(o);
    prof_out_str(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"" GP_CAT_CPU_INSTANT "\",\"name\":");
    if (r->kind == PROF_REC_MARK)
        put_name(o, r->name);
    else
        prof_out_str(o, "\"[gprof] unbalanced pop\"");
    put_pid_tid_ts(o, pid, tid, r->t0);
    prof_out_raw(o, "}", 1);
}

/* A counter event's rest, after its name: where, when, and its value. */
static void counter_rest(prof_out *o, int pid, int tid, int64_t t_ns, double v)
{
    put_pid_tid_ts(o, pid, tid, t_ns);
    prof_out_str(o, ",\"args\":{\"value\":");
    prof_out_double(o, v);
    prof_out_raw(o, "}}", 2);
}

static void write_counter(prof_out *o, const prof_rec *r, int pid, int tid)
{
    double v;
    memcpy(&v, &r->aux, sizeof(v));
    comma(o);
    prof_out_str(o, "{\"ph\":\"C\",\"cat\":\"" GP_CAT_CPU_INSTANT "\",\"name\":");
    put_name(o, r->name);
    counter_rest(o, pid, tid, r->t0, v);
}

/* A pass at least this long after the last samples the host's steal (a busy writer passes
 * without sleeping: /proc/stat is not read on each). */
#define STEAL_MIN_SPAN_NS 50000000LL

static void steal_counter(prof_out *o, int64_t t_ns, double pct)
{
    int pid = prof_state_session()->pid;
    comma(o);
    prof_out_str(o, "{\"ph\":\"C\",\"cat\":\"" GP_CAT_CPU_INSTANT
                    "\",\"name\":\"" GP_NAME_HOST_STEAL "\"");
    counter_rest(o, pid, pid, t_ns, pct);
}

/* The host's steal since the last sample (steal.c), at the start of the span it covers; the
 * last pass (`last`) also closes the series with a 0 at its end. */
static void write_steal(prof_out *o, int last)
{
    prof_steal_sample k;
    if (!prof_steal_pass(&prof_state_writer()->steal, prof_now(), last ? 0 : STEAL_MIN_SPAN_NS, &k))
        return;
    steal_counter(o, k.t0, k.pct);
    if (last)
        steal_counter(o, k.t1, 0);
}

static void keep_async(const prof_rec *r)
{
    if (prof_state_writer()->n_async == prof_state_writer()->cap_async) {
        size_t ncap = prof_state_writer()->cap_async ? prof_state_writer()->cap_async * 2 : 256;
        async_range *a =
                ncap <= (1u << 20) ? realloc(prof_state_writer()->async, ncap * sizeof(*a)) : NULL;
        if (!a) {
            prof_warn("too many NVTX start/end ranges: some were not written");
            return;
        }
        prof_state_writer()->async = a;
        prof_state_writer()->cap_async = ncap;
    }
    prof_state_writer()->async[prof_state_writer()->n_async++] =
            (async_range){r->t0, r->t1, r->name, (int)r->aux};
}

/* Any record but a range (rare: steps, marks, counters, warnings, NVTX start/end). */
static void write_rec(prof_out *o, const prof_rec *raw, prof_tick_map *m, int pid, int tid)
{
    if (raw->kind == PROF_REC_SCHED) { /* ns, not ticks: kept for the step that follows */
        prof_state_writer()->sched = *raw;
        prof_state_writer()->sched_tid = tid;
        return;
    }
    prof_rec conv = *raw;
    const prof_rec *r = &conv;
    conv.t0 = map_ns(m, raw->t0);
    conv.t1 = raw->t1 == raw->t0 ? conv.t0 : map_ns(m, raw->t1);
    tid_info *ti;
    switch (r->kind) {
    case PROF_REC_STEP:
        write_step(o, r, pid, tid);
        break;
    case PROF_REC_MARK:
        write_instant(o, r, pid, tid);
        break;
    case PROF_REC_COUNTER:
        write_counter(o, r, pid, tid);
        break;
    case PROF_REC_BAD_POP:
        if ((ti = tid_slot(tid)) != NULL)
            ti->bad_pops++;
        write_instant(o, r, pid, tid);
        break;
    case PROF_REC_DEEP:
        if ((ti = tid_slot(tid)) != NULL)
            ti->deep++;
        break;
    case PROF_REC_ASYNC:
        keep_async(r);
        break;
    }
}

/* The ledger: how long the oldest record a pass takes from a thread waited (a record is written
 * when its range ends, t1), in ns by the map's rate; not converted through the map, which would
 * fix the tick -> ns function up to now. */
static void note_behind(const prof_tick_map *m, int64_t now, int64_t t1)
{
    int64_t ticks = now - t1, ns;
    if (ticks <= 0 || m->mode == PROF_MAP_CALL)
        return;
    ns = m->mode == PROF_MAP_IDENTITY
                 ? ticks
                 : (int64_t)(((unsigned __int128)(uint64_t)ticks * m->seg[1].scale) >> 32);
    if (ns > prof_state_writer()->max_behind_ns)
        prof_state_writer()->max_behind_ns = ns;
}

/* note_behind for a span's first record; a step's scheduler figures (ns, not ticks) stand for
 * the step record after them (before, the figures' run-queue ns read as ticks: "behind" by the
 * machine's uptime). */
static void note_span_behind(const prof_tick_map *m, int64_t now, const prof_rec *span, size_t n)
{
    size_t i = span[0].kind == PROF_REC_SCHED;
    if (i < n)
        note_behind(m, now, span[i].t1);
}

/* Drain every ring of this session once. @return records written (the writer loops without
 * sleeping while there is a lot to do). */
static size_t drain_threads(prof_out *o)
{
    size_t total = 0;
    prof_tick_map map;
    prof_clock_sample(); /* records drained below were made before it or soon after */
    prof_clock_map(&map);
    int64_t now = prof_ticks();
    for (prof_thread *t = prof_threads_head(); t; t = t->next) {
        if (atomic_load_explicit(&t->gen, memory_order_acquire) != prof_state_writer()->cfg.gen)
            continue;
        tid_slot(t->tid);
        set_thread_tail(prof_state_session()->pid, t->tid);
        const prof_rec *span;
        size_t n;
        size_t taken = 0; /* a thread that records faster than this loop writes: move on */
        while (taken < PASS_PER_THREAD && (n = prof_buf_peek(t, &span)) > 0) {
            if (taken == 0)
                note_span_behind(&map, now, span, n);
            for (size_t i = 0; i < n; i++) {
                prof_state_writer()->n_kind[span[i].kind & 7]++;
                if (__builtin_expect(span[i].kind == PROF_REC_RANGE, 1))
                    write_range(o, &span[i], &map, t->tid);
                else
                    write_rec(o, &span[i], &map, prof_state_session()->pid, t->tid);
            }
            prof_buf_release(t, n);
            total += n;
            taken += n;
        }
        if (taken)
            prof_buf_prefill(t);
    }
    if (map.mode == PROF_MAP_LINEAR)
        prof_clock_converted(map.max_ticks);
    prof_threads_reap(prof_state_writer()->cfg.gen);
    return total;
}

static uint64_t cpu_dropped(void)
{
    uint64_t d = 0;
    for (prof_thread *t = prof_threads_head(); t; t = t->next)
        if (atomic_load(&t->gen) == prof_state_writer()->cfg.gen)
            d += atomic_load(&t->dropped);
    return d;
}

/* ---- metadata ---- */

static void meta(prof_out *o, const char *what, int64_t pid, int64_t tid, const char *key,
                 const char *sval, int64_t ival)
{
    comma(o);
    prof_out_str(o, "{\"name\":\"");
    prof_out_str(o, what);
    prof_out_str(o, "\",\"ph\":\"M\",\"ts\":0,\"pid\":");
    prof_out_i64(o, pid);
    prof_out_raw(o, ",\"tid\":", 7);
    prof_out_i64(o, tid);
    prof_out_str(o, ",\"args\":{\"");
    prof_out_str(o, key);
    prof_out_raw(o, "\":", 2);
    if (sval)
        prof_out_json_str(o, sval, strlen(sval));
    else
        prof_out_i64(o, ival);
    prof_out_raw(o, "}}", 2);
}

static void process_name(char *buf, size_t cap)
{
    FILE *f = fopen("/proc/self/comm", "r");
    buf[0] = '\0';
    if (f) {
        if (fgets(buf, (int)cap, f))
            buf[strcspn(buf, "\n")] = '\0';
        fclose(f);
    }
    if (!buf[0])
        snprintf(buf, cap, "process %d", prof_state_session()->pid);
}

/* "thread <tid> (<name>)" as Kineto writes it. */
static void write_thread_meta(prof_out *o, int pid, int tid, const char *name)
{
    char label[160];
    if (name)
        snprintf(label, sizeof(label), "thread %d (%s)", tid, name);
    else
        snprintf(label, sizeof(label), "thread %d", tid);
    meta(o, GP_NAME_THREAD_NAME, pid, tid, "name", label, 0);
    meta(o, GP_NAME_THREAD_SORT, pid, tid, "sort_index", NULL, tid);
}

static void write_cpu_metadata(prof_out *o)
{
    int pid = prof_state_session()->pid;
    char pname[64];
    process_name(pname, sizeof(pname));
    meta(o, GP_NAME_PROCESS_NAME, pid, 0, "name", pname, 0);
    meta(o, GP_NAME_PROCESS_LABELS, pid, 0, "labels", "CPU", 0);
    meta(o, GP_NAME_PROCESS_SORT, pid, 0, "sort_index", NULL, pid);
    int *tids = prof_state_writer()->meta_tids;
    uint32_t *names = prof_state_writer()->meta_names;
    int n = prof_thread_names(tids, names, MAX_TIDS);
    for (int i = 0; i < n; i++)
        tid_slot(tids[i]);
    for (int i = 0; i < prof_state_writer()->n_tids; i++) {
        const char *name = NULL;
        for (int j = 0; j < n; j++)
            if (tids[j] == prof_state_writer()->tids[i].tid)
                name = prof_name_str(names[j]);
        write_thread_meta(o, pid, prof_state_writer()->tids[i].tid, name);
    }
}

/* NVTX start/end ranges may overlap without nesting: lay them out on extra lanes per thread
 * (tid = lane * 2^22 + 2^30 + thread tid; Linux tids stay below 2^22), greedily by start. */
static int cmp_async(const void *a, const void *b)
{
    const async_range *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static void write_async(prof_out *o)
{
    if (prof_state_writer()->n_async == 0)
        return;
    qsort(prof_state_writer()->async, prof_state_writer()->n_async,
          sizeof(*prof_state_writer()->async), cmp_async);
    int64_t lane_end[16];
    for (size_t i = 0; i < prof_state_writer()->n_async;) {
        int tid = prof_state_writer()->async[i].tid, lanes = 0;
        for (; i < prof_state_writer()->n_async && prof_state_writer()->async[i].tid == tid; i++) {
            async_range *a = &prof_state_writer()->async[i];
            int l = 0;
            while (l < lanes && lane_end[l] > a->t0)
                l++;
            if (l == 16)
                l = 15;
            if (l == lanes) {
                lanes++;
                char label[96];
                snprintf(label, sizeof(label), "thread %d (NVTX start/end ranges %d)", tid, l);
                int64_t vt = (1LL << 30) + ((int64_t)l << 22) + tid;
                meta(o, GP_NAME_THREAD_NAME, prof_state_session()->pid, vt, "name", label, 0);
            }
            lane_end[l] = a->t1;
            prof_write_x(o, GP_CAT_USER_ANNOTATION, a->name, prof_state_session()->pid,
                         (1LL << 30) + ((int64_t)l << 22) + tid, a->t0, a->t1);
        }
    }
}

/* ---- header ---- */

static void key_u64(prof_out *h, const char *key, uint64_t v)
{
    prof_out_str(h, ",\"");
    prof_out_str(h, key);
    prof_out_str(h, "\":");
    prof_out_u64(h, v);
}

/* The capture-health ledger (trace_schema.h: GP_CFG_H_*), as "gprof" members. */
static void header_health(prof_out *h, uint64_t dropped_cpu)
{
    const uint64_t *k = prof_state_writer()->n_kind;
    uint64_t cpu = k[PROF_REC_RANGE] + k[PROF_REC_STEP] + k[PROF_REC_MARK] + k[PROF_REC_COUNTER] +
                   k[PROF_REC_ASYNC];
    prof_gpu_health g;
    prof_gpu_health_get(&g);
    key_u64(h, GP_CFG_H_CPU_RANGES, k[PROF_REC_RANGE] + k[PROF_REC_STEP]);
    key_u64(h, GP_CFG_H_CPU_MARKS, k[PROF_REC_MARK]);
    key_u64(h, GP_CFG_H_CPU_COUNTERS, k[PROF_REC_COUNTER]);
    key_u64(h, GP_CFG_H_CPU_ASYNC, k[PROF_REC_ASYNC]);
    key_u64(h, GP_CFG_H_CPU_DROPPED, dropped_cpu);
    key_u64(h, GP_CFG_H_GPU_RECORDS, g.records);
    key_u64(h, GP_CFG_H_GPU_DROPPED, prof_gpu_dropped());
    key_u64(h, GP_CFG_H_GPU_NO_TIME, g.no_timestamp);
    key_u64(h, GP_CFG_H_GPU_END_FIRST, g.end_before_start);
    key_u64(h, GP_CFG_H_GPU_EARLY, g.before_launch);
    key_u64(h, GP_CFG_H_WRITER_BEHIND, (uint64_t)prof_state_writer()->max_behind_ns);
    key_u64(h, GP_CFG_H_PROFILER_COST, (uint64_t)prof_state_writer()->cfg.range_cost_ns * cpu);
    key_u64(h, GP_CFG_H_WRITER_CPU,
            (uint64_t)(prof_state_writer()->cpu_user_ns + prof_state_writer()->cpu_sys_ns));
}

static void header_gprof(prof_out *h, uint64_t dropped_cpu, int final)
{
    prof_out_str(h, "\"" GP_KEY_GPROF "\":{\"" GP_CFG_TOOL_VERSION "\":\"" GP_VERSION "\"");
    prof_out_str(h, ",\"" GP_CFG_PRODUCER "\":");
    prof_out_json_str(h, prof_state_writer()->producer, strlen(prof_state_writer()->producer));
    if (!prof_config_has(GP_CFG_CPU_COUNT)) {
        prof_out_str(h, ",\"" GP_CFG_CPU_COUNT "\":");
        prof_out_i64(h, sysconf(_SC_NPROCESSORS_ONLN));
    }
    prof_out_str(h, ",\"" GP_CFG_CLOCK_REALTIME_NS "\":");
    prof_out_i64(h, prof_state_writer()->cfg.anchor_real);
    prof_out_str(h, ",\"" GP_CFG_CLOCK_MONOTONIC_NS "\":");
    prof_out_i64(h, prof_state_writer()->cfg.anchor_mono);
    pthread_mutex_lock(&prof_state_writer()->warn_lock);
    prof_out_str(h, ",\"" GP_CFG_GPU_STATUS "\":");
    const char *gs = prof_state_writer()->gpu_status;
    if (prof_config_has(GP_CFG_GPU_TIMING_MODEL) && strncmp(gs, "recorded", 8) == 0) {
        char sim[sizeof(prof_state_writer()->gpu_status) + 8]; /* "simulated" + ", except: ..." */
        snprintf(sim, sizeof(sim), "simulated%s", gs + 8);
        prof_out_json_str(h, sim, strlen(sim));
    } else {
        prof_out_json_str(h, gs, strlen(gs));
    }
    pthread_mutex_unlock(&prof_state_writer()->warn_lock);
    prof_out_str(h, ",\"" GP_CFG_DROPPED_RECORDS "\":");
    prof_out_u64(h, dropped_cpu + prof_gpu_dropped());
    prof_out_str(h, ",\"" GP_CFG_DROPPED_CPU "\":");
    prof_out_u64(h, dropped_cpu);
    prof_out_str(h, ",\"" GP_CFG_DROPPED_GPU "\":");
    prof_out_u64(h, prof_gpu_dropped());
    prof_out_str(h, ",\"" GP_CFG_BUFFER_LIMIT "\":");
    prof_out_i64(h, prof_state_session()->buf_limit);
    prof_out_str(h, ",\"" GP_CFG_BUFFER_PEAK "\":");
    prof_out_i64(h, prof_buf_peak());
    prof_out_str(h, ",\"" GP_CFG_FLUSH_INTERVAL "\":");
    prof_out_i64(h, prof_state_writer()->cfg.flush_ms);
    prof_out_str(h, ",\"" GP_CFG_RECORD_COST "\":");
    prof_out_i64(h, prof_state_writer()->cfg.range_cost_ns);
    prof_out_str(h, ",\"" GP_CFG_COMPLETE "\":");
    prof_out_str(h, final ? "true" : "false");
    header_health(h, dropped_cpu);
    prof_gpu_config(h);
    prof_config_write(h, 1);
    prof_out_str(h, ",\"" GP_CFG_WARNINGS "\":[");
    pthread_mutex_lock(&prof_state_writer()->warn_lock);
    for (int i = 0; i < prof_state_writer()->n_warnings; i++) {
        if (i)
            prof_out_raw(h, ",", 1);
        prof_out_json_str(h, prof_state_writer()->warnings[i],
                          strlen(prof_state_writer()->warnings[i]));
    }
    pthread_mutex_unlock(&prof_state_writer()->warn_lock);
    prof_out_str(h, "]}");
}

static int write_header(uint64_t dropped_cpu, int final)
{
    prof_out h;
    if (prof_out_mem_init(&h, PROF_HEADER_TEXT) != GP_OK)
        return -1;
    prof_out_str(&h, "{\"" GP_KEY_SCHEMA_VERSION "\":1,\"" GP_KEY_DEVICE_PROPERTIES "\":[");
    prof_gpu_device_props(&h);
    prof_out_str(&h, "],");
    if (prof_state_writer()->cfg.world_size > 0) {
        prof_out_str(&h, "\"" GP_KEY_DISTRIBUTED_INFO "\":{\"rank\": ");
        prof_out_i64(&h, prof_state_writer()->cfg.rank);
        prof_out_str(&h, ",\"world_size\": ");
        prof_out_i64(&h, prof_state_writer()->cfg.world_size);
        prof_out_str(&h, "},");
    }
    header_gprof(&h, dropped_cpu, final);
    prof_out_str(&h, ",\"" GP_KEY_DISPLAY_TIME_UNIT "\":\"ms\",\"" GP_KEY_BASE_TIME_NS "\":");
    prof_out_i64(&h, prof_state_session()->base_ns);
    if (prof_state_writer()->trace_name[0]) {
        prof_out_str(&h, ",\"" GP_KEY_TRACE_NAME "\":");
        prof_out_json_str(&h, prof_state_writer()->trace_name,
                          strlen(prof_state_writer()->trace_name));
    }
    prof_out_raw(&h, ",\n", 2);
    int rc = h.failed ? -1 : prof_out_write_header(&prof_state_writer()->out, h.buf, h.len);
    prof_out_close(&h);
    return rc;
}

/* ---- thread ---- */

/* The writer thread's CPU time so far (user: formatting; sys: write(2) and the file system). */
static void writer_cpu_sample(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    prof_state_writer()->cpu_user_ns =
            (int64_t)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL;
    prof_state_writer()->cpu_sys_ns =
            (int64_t)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL;
}

static void report_io(void)
{
    if (prof_state_writer()->io_reported)
        return;
    prof_state_writer()->io_reported = 1;
    GP_LOG(GP_LOG_ERROR, "cannot write trace '%s': %s; profiling stopped, the program goes on",
           prof_state_writer()->path,
           prof_state_writer()->out.err[0] ? prof_state_writer()->out.err : "I/O error");
    atomic_store(&prof_state_session()->recording, 0);
}

/* A killed program keeps what the writer had drained before its last pass: every pass that
 * wrote something makes the file a readable prefix (gzip: a sync flush, at most every
 * SYNC_EVERY_NS while busy), and the header's counts are rewritten every HEADER_EVERY_NS. */
#define SYNC_EVERY_NS   100000000LL
#define HEADER_EVERY_NS 1000000000LL

static size_t periodic(void)
{
    uint64_t before = prof_state_writer()->n_events;
    size_t n = drain_threads(&prof_state_writer()->out);
    prof_gpu_drain(&prof_state_writer()->out, 0, 0);
    write_steal(&prof_state_writer()->out, 0);
    int64_t now = prof_now();
    int sync = prof_state_writer()->n_events != before &&
               now - prof_state_writer()->last_sync_ns >= SYNC_EVERY_NS;
    if (sync)
        prof_state_writer()->last_sync_ns = now;
    prof_out_flush(&prof_state_writer()->out, sync);
    if (now - prof_state_writer()->last_header_ns >= HEADER_EVERY_NS &&
        !prof_state_writer()->out.failed) {
        prof_state_writer()->last_header_ns = now;
        writer_cpu_sample();
        write_header(cpu_dropped(), 0);
    }
    if (prof_state_writer()->out.failed)
        report_io();
    return n;
}

/* A device written in place (/dev/null) is never removed: as root that would delete it. */
static void remove_tmp(void)
{
    if (!prof_state_writer()->cfg.device)
        unlink(prof_state_writer()->tmp);
}

static int finish(void)
{
    prof_out *o = &prof_state_writer()->out;
    while (drain_threads(o) > 0) /* a pass takes at most PASS_PER_THREAD from a thread */
        ;
    /* From a signal handler, the interrupted thread may hold CUPTI's lock: the forced flush is
     * bounded there (cupti_activity.c), never waited for on this thread. */
    prof_gpu_drain(o, 1, atomic_load(&prof_state_writer()->from_signal));
    uint64_t dropped = cpu_dropped();
    for (int i = 0; i < prof_state_writer()->n_tids; i++) {
        if (prof_state_writer()->tids[i].bad_pops)
            prof_warn("%llu unbalanced pop(s) (pop with no open range) on thread %d",
                      (unsigned long long)prof_state_writer()->tids[i].bad_pops,
                      prof_state_writer()->tids[i].tid);
        if (prof_state_writer()->tids[i].deep)
            prof_warn("%llu range(s) nested deeper than %d on thread %d were not recorded",
                      (unsigned long long)prof_state_writer()->tids[i].deep, PROF_MAX_DEPTH,
                      prof_state_writer()->tids[i].tid);
    }
    if (dropped)
        prof_warn("%llu CPU record(s) dropped: the record buffers reached their limit of %lld "
                  "MiB (raise it: GP_PROF_BUFFER_LIMIT or gprof-train run --buffer-limit)",
                  (unsigned long long)dropped, (long long)(prof_state_session()->buf_limit >> 20));
    write_steal(o, 1);
    write_async(o);
    write_cpu_metadata(o);
    prof_gpu_metadata(o);
    prof_out_str(o, "\n]}\n");
    prof_out_flush(o, 0);
    writer_cpu_sample();
    if (!o->failed && write_header(dropped, 1) != 0 && !o->failed) {
        warnings_clear(); /* too long for the header region: keep the rest */
        prof_warn("warnings were too long for the trace header and were left out");
        write_header(dropped, 1);
    }
    int rc = prof_out_close(o);
    if (rc == 0 && !prof_state_writer()->cfg.device &&
        rename(prof_state_writer()->tmp, prof_state_writer()->path) != 0) {
        snprintf(o->err, sizeof(o->err), "rename of the .tmp file failed: %s", strerror(errno));
        o->failed = 1;
        rc = -1;
    }
    if (rc != 0) {
        report_io();
        remove_tmp(); /* a full disk needs the space back */
    }
    return rc;
}

static void *writer_main(void *arg)
{
    (void)arg;
    size_t busy = 0;
    prof_steal_start(&prof_state_writer()->steal, prof_now());
    for (;;) {
        if (busy >= TAKE_BATCH) { /* behind: go on at once */
            if (atomic_load(&prof_state_writer()->stop))
                break;
            busy = periodic();
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + (int64_t)prof_state_writer()->cfg.flush_ms * 1000000LL;
        ts.tv_sec += ns / 1000000000LL;
        ts.tv_nsec = ns % 1000000000LL;
        while (sem_timedwait(&prof_state_writer()->wake, &ts) != 0 && errno == EINTR)
            ;
        if (atomic_load(&prof_state_writer()->stop))
            break;
        busy = periodic();
    }
    int rc = finish();
    prof_steal_stop(&prof_state_writer()->steal);
    writer_cpu_sample();
    atomic_store(&prof_state_writer()->state, rc == 0 ? 1 : -1);
    return NULL;
}

gp_status prof_writer_start(const prof_writer_cfg *cfg, gp_error *err)
{
    prof_state_writer()->cfg = *cfg;
    snprintf(prof_state_writer()->path, sizeof(prof_state_writer()->path), "%s", cfg->path);
    if (snprintf(prof_state_writer()->tmp, sizeof(prof_state_writer()->tmp),
                 cfg->device ? "%s" : "%s.tmp", cfg->path) >= (int)sizeof(prof_state_writer()->tmp))
        return gp_error_set(err, GP_EINVAL, cfg->path, "trace path too long");
    snprintf(prof_state_writer()->producer, sizeof(prof_state_writer()->producer), "%s",
             cfg->producer ? cfg->producer : "api");
    snprintf(prof_state_writer()->trace_name, sizeof(prof_state_writer()->trace_name), "%s",
             cfg->trace_name ? cfg->trace_name : "");
    prof_state_writer()->need_comma = 0;
    prof_state_writer()->io_reported = 0;
    prof_state_writer()->n_events = 0;
    prof_state_writer()->n_tids = 0;
    prof_state_writer()->n_async = 0;
    memset(prof_state_writer()->n_kind, 0, sizeof(prof_state_writer()->n_kind));
    prof_state_writer()->sched.kind = 0;
    prof_state_writer()->max_behind_ns = 0;
    prof_state_writer()->cpu_user_ns = prof_state_writer()->cpu_sys_ns = 0;
    prof_state_writer()->last_sync_ns = prof_state_writer()->last_header_ns = prof_now();
    atomic_store(&prof_state_writer()->stop, 0);
    atomic_store(&prof_state_writer()->from_signal, 0);
    atomic_store(&prof_state_writer()->state, 0);
    warnings_clear();
    GP_TRY(prof_out_open(&prof_state_writer()->out, prof_state_writer()->tmp, cfg->gzip, err));
    prof_state_writer()->out.stream = cfg->device;
    if (cfg->mode)
        fchmod(prof_state_writer()->out.fd, (mode_t)cfg->mode);
    if (write_header(0, 0) != 0) {
        prof_out_close(&prof_state_writer()->out);
        remove_tmp();
        return gp_error_set(err, GP_EIO, prof_state_writer()->tmp, "cannot write trace header: %s",
                            prof_state_writer()->out.err[0] ? prof_state_writer()->out.err
                                                            : "header too large");
    }
    prof_out_str(&prof_state_writer()->out, "\"" GP_KEY_TRACE_EVENTS "\":[\n");
    /* In the file (and decodable) now: a program that dies before the first pass leaves a
     * trace with no events, which reads as incomplete, not as a file cut inside its header. */
    prof_out_flush(&prof_state_writer()->out, 1);
    sem_init(&prof_state_writer()->wake, 0, 0);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(&prof_state_writer()->th, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        prof_out_close(&prof_state_writer()->out);
        remove_tmp();
        return gp_error_set(err, GP_ENOMEM, NULL, "cannot start the writer thread");
    }
    prof_state_writer()->started = 1;
    return GP_OK;
}

void prof_writer_wake(void)
{
    if (prof_state_writer()->started)
        sem_post(&prof_state_writer()->wake);
}

int prof_writer_finish(int timeout_ms, int from_signal)
{
    if (!prof_state_writer()->started)
        return -1;
    atomic_store(&prof_state_writer()->from_signal, from_signal);
    atomic_store(&prof_state_writer()->stop, 1);
    sem_post(&prof_state_writer()->wake);
    if (from_signal) {
        /* Only async-signal-safe calls here: poll the writer's state. */
        for (int waited = 0; atomic_load(&prof_state_writer()->state) == 0; waited++) {
            if (timeout_ms > 0 && waited >= timeout_ms)
                return -2;
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        return atomic_load(&prof_state_writer()->state) == 1 ? 0 : -1;
    }
    pthread_join(prof_state_writer()->th, NULL);
    prof_state_writer()->started = 0;
    sem_destroy(&prof_state_writer()->wake);
    return atomic_load(&prof_state_writer()->state) == 1 ? 0 : -1;
}

void prof_writer_forget(void)
{
    prof_state_writer()->started = 0;
    if (prof_state_writer()->out.fd >= 0)
        close(prof_state_writer()->out.fd);
    prof_state_writer()->out.fd = -1;
}

void prof_writer_cpu_ns(int64_t *user_ns, int64_t *sys_ns)
{
    *user_ns = prof_state_writer()->cpu_user_ns;
    *sys_ns = prof_state_writer()->cpu_sys_ns;
}

uint64_t prof_writer_events(void)
{
    return prof_state_writer()->n_events;
}
