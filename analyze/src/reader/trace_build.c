/* Turning parsed elements into stored events: track lookup, classification by category and name,
 * side records, B/E pairing and metadata; then finishing: events grouped per track (tracks in
 * (pid, tid) order) and each track sorted by start, longer first on ties. */
#include "reader/trace_build.h"

#include <stdatomic.h>

#include "gp/trace_schema.h"

#include <stdio.h>
#include <string.h>

int trace_builder_init(trace_builder *b, gp_trace *t)
{
    memset(b, 0, sizeof(*b));
    b->t = t;
    json_lex_init(&b->lex);
    trace_vec_init(&b->tracks, sizeof(build_track));
    trace_vec_init(&b->procs, sizeof(build_proc));
    trace_vec_init(&b->str_info, sizeof(trace_str_info));
    b->track_mask = 255;
    b->track_slots = calloc(b->track_mask + 1, sizeof(uint32_t));
    b->last_track = GP_NONE;
    b->memory_name = trace_intern_str(&t->strings, GP_NAME_MEMORY, strlen(GP_NAME_MEMORY));
    b->fwdbwd_cat = trace_intern_str(&t->strings, GP_CAT_FLOW_FWDBWD, strlen(GP_CAT_FLOW_FWDBWD));
    return b->track_slots && b->memory_name != GP_STR_NONE && b->fwdbwd_cat != GP_STR_NONE ? 0 : -1;
}

void trace_builder_release(trace_builder *b)
{
    json_lex_release(&b->lex);
    for (size_t i = 0; i < b->n_chunks; i++)
        free(b->chunks[i].ev);
    free(b->chunks);
    for (size_t i = 0; i < b->tracks.n; i++)
        trace_vec_release(&TRACE_VEC_AT(&b->tracks, build_track, i)->open_b);
    trace_vec_release(&b->tracks);
    trace_vec_release(&b->procs);
    trace_vec_release(&b->str_info);
    free(b->track_slots);
    free(b->gpu_slots);
    free(b->shape_buf);
    free(b->concrete_buf);
    free(b->dims_buf);
    memset(b, 0, sizeof(*b));
}

trace_str_info *trace_builder_str_info(trace_builder *b, gp_str id)
{
    while (b->str_info.n <= id) {
        trace_str_info *si = trace_vec_push(&b->str_info);
        if (!si)
            return NULL;
        si->cat_kind = TRACE_CAT_UNSET;
    }
    return TRACE_VEC_AT(&b->str_info, trace_str_info, id);
}

static uint64_t track_hash(int64_t pid, int64_t tid, gp_str ps, gp_str ts)
{
    uint64_t h = (uint64_t)pid * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)tid * 0xC2B2AE3D27D4EB4Full + ((uint64_t)ps << 32) + ts;
    return h ^ (h >> 31);
}

static gp_status track_rehash(trace_builder *b)
{
    uint32_t mask = b->track_mask * 2 + 1;
    uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t k = 0; k < b->tracks.n; k++) {
        build_track *bt = TRACE_VEC_AT(&b->tracks, build_track, k);
        uint32_t i = (uint32_t)track_hash(bt->pid, bt->tid, bt->pid_str, bt->tid_str) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = k + 1;
    }
    free(b->track_slots);
    b->track_slots = slots;
    b->track_mask = mask;
    return GP_OK;
}

static int same_track(const build_track *bt, const raw_ev *r)
{
    return bt->pid == r->pid && bt->tid == r->tid && bt->pid_str == r->pid_str &&
           bt->tid_str == r->tid_str;
}

uint32_t trace_builder_track(trace_builder *b, const raw_ev *r)
{
    if (b->last_track != GP_NONE &&
        same_track(TRACE_VEC_AT(&b->tracks, build_track, b->last_track), r))
        return b->last_track;
    uint32_t i = (uint32_t)track_hash(r->pid, r->tid, r->pid_str, r->tid_str) & b->track_mask;
    while (b->track_slots[i]) {
        uint32_t k = b->track_slots[i] - 1;
        if (same_track(TRACE_VEC_AT(&b->tracks, build_track, k), r))
            return b->last_track = k;
        i = (i + 1) & b->track_mask;
    }
    build_track *bt = trace_vec_push(&b->tracks);
    if (!bt)
        return GP_NONE;
    bt->pid = r->pid;
    bt->tid = r->tid;
    bt->pid_str = r->pid_str;
    bt->tid_str = r->tid_str;
    bt->name = GP_STR_NONE;
    trace_vec_init(&bt->open_b, sizeof(gp_event));
    uint32_t k = (uint32_t)(b->tracks.n - 1);
    b->track_slots[i] = k + 1;
    if (b->tracks.n * 2 > b->track_mask && track_rehash(b) != 0)
        return GP_NONE;
    return b->last_track = k;
}

void trace_budget_init(trace_budget *bg, const gp_trace_opts *opts, uint64_t input_size)
{
    bg->limit = opts ? opts->max_memory : 0;
    atomic_store(&bg->used, 0);
    bg->input_size = input_size;
    bg->expansion = 0;
    unsigned x = opts ? opts->max_expansion : 0;
    if (!x)
        return;
    uint64_t by_size = input_size > UINT64_MAX / x ? UINT64_MAX : input_size * x;
    if (by_size < GP_TRACE_EXPANSION_FLOOR)
        by_size = GP_TRACE_EXPANSION_FLOOR;
    if (bg->limit == 0 || by_size < bg->limit) {
        bg->limit = by_size > SIZE_MAX ? SIZE_MAX : (size_t)by_size;
        bg->expansion = x;
    }
}

const char *trace_budget_message(const trace_budget *bg, char *buf, size_t cap)
{
    double mib = (double)bg->limit / (1024.0 * 1024.0);
    if (!bg->expansion)
        snprintf(buf, cap, "the trace needs more memory than the limit of %.0f MiB (--max-memory)",
                 mib);
    else
        snprintf(buf, cap,
                 "the trace needs more memory than %.0f MiB, the limit for a file of %.1f MB "
                 "(%u times its size, at least %u MiB: a decompression bomb stops here); "
                 "--max-memory SIZE sets the limit (0: none)",
                 mib, (double)bg->input_size / 1e6, bg->expansion,
                 (unsigned)(GP_TRACE_EXPANSION_FLOOR >> 20));
    return buf;
}

gp_status trace_budget_take(trace_budget *bg, size_t n)
{
    size_t was = atomic_fetch_add(&bg->used, n);
    if (bg->limit && was + n > bg->limit) {
        atomic_fetch_sub(&bg->used, n);
        return GP_ENOMEM;
    }
    return GP_OK;
}

gp_status trace_builder_adopt(trace_builder *b, gp_event *ev, size_t n)
{
    if (b->n_chunks == b->cap_chunks) {
        size_t cap = b->cap_chunks ? b->cap_chunks * 2 : 64;
        build_chunk *chunks = realloc(b->chunks, cap * sizeof(*chunks));
        if (!chunks)
            return GP_ENOMEM;
        b->chunks = chunks;
        b->cap_chunks = cap;
    }
    b->chunks[b->n_chunks++] = (build_chunk){ev, n};
    b->n_events += n;
    return GP_OK;
}

gp_event *trace_builder_append(trace_builder *b)
{
    build_chunk *c = b->n_chunks ? &b->chunks[b->n_chunks - 1] : NULL;
    if (!c || c->n == BUILD_CHUNK_EVENTS) {
        if (b->budget && trace_budget_take(b->budget, BUILD_CHUNK_EVENTS * sizeof(gp_event))) {
            b->over_budget = 1;
            return NULL;
        }
        gp_event *ev = malloc(BUILD_CHUNK_EVENTS * sizeof(gp_event));
        if (!ev || trace_builder_adopt(b, ev, 0) != 0) {
            free(ev);
            return NULL;
        }
        c = &b->chunks[b->n_chunks - 1];
    }
    b->n_events++;
    return &c->ev[c->n++];
}

/* The cached facts of category `cat`, its kind computed (unknown ones registered) on first use. */
static trace_str_info *cat_info(trace_builder *b, gp_str cat)
{
    trace_str_info *si = trace_builder_str_info(b, cat);
    if (!si || si->cat_kind != TRACE_CAT_UNSET)
        return si;
    const char *s = gp_trace_str(b->t, cat);
    si->cat_kind = (int8_t)trace_cat_kind(s, strlen(s));
    if (s[0] >= 'A' && s[0] <= 'Z' && si->cat_kind > 0 && si->cat_kind != GP_EV_TRACE_SPAN)
        b->t->info.old_schema = 1; /* Operator, Runtime, Kernel, Memcpy, Memset */
    if (si->cat_kind == TRACE_CAT_UNKNOWN) {
        gp_cat_count *cc = trace_vec_push(&b->t->unknown_cats);
        if (!cc)
            return NULL;
        cc->cat = s;
        si->unknown_idx = (uint32_t)b->t->unknown_cats.n;
    }
    return si;
}

gp_status trace_builder_count_cat(trace_builder *b, gp_str cat, uint64_t n)
{
    trace_str_info *si = cat_info(b, cat);
    if (!si)
        return GP_ENOMEM;
    if (si->cat_kind == TRACE_CAT_UNKNOWN) {
        TRACE_VEC_AT(&b->t->unknown_cats, gp_cat_count, si->unknown_idx - 1)->count += n;
        b->t->info.n_unknown_cat += n;
    }
    return GP_OK;
}

/* The kind of a category, counting unknown ones: TRACE_CAT_UNKNOWN, or -3 = out of memory. */
static int cat_kind(trace_builder *b, gp_str cat)
{
    if (cat == GP_STR_NONE)
        return GP_EV_OTHER;
    trace_str_info *si = cat_info(b, cat);
    if (!si)
        return -3;
    if (si->cat_kind == TRACE_CAT_UNKNOWN) {
        TRACE_VEC_AT(&b->t->unknown_cats, gp_cat_count, si->unknown_idx - 1)->count++;
        b->t->info.n_unknown_cat++;
    }
    return si->cat_kind;
}

static unsigned name_flags(trace_builder *b, gp_str name)
{
    if (name == GP_STR_NONE)
        return 0;
    trace_str_info *si = trace_builder_str_info(b, name);
    if (!si)
        return 0;
    if (!si->name_done) {
        const char *s = gp_trace_str(b->t, name);
        si->name_flags = (uint16_t)trace_name_flags(s, strlen(s));
        si->name_done = 1;
    }
    return si->name_flags;
}

/* Keep only the name flags that make sense for this kind. */
static unsigned event_flags(unsigned nf, int kind)
{
    unsigned f = 0;
    int cpu_range = kind == GP_EV_CPU_OP || kind == GP_EV_USER_ANNOTATION;
    if (cpu_range)
        f |= nf & (GP_EVF_STEP | GP_EVF_DATALOADER | GP_EVF_COMM);
    if (kind == GP_EV_PYTHON)
        f |= nf & GP_EVF_DATALOADER;
    if (kind == GP_EV_KERNEL)
        f |= nf & (GP_EVF_COMM | GP_EVF_DMA);
    if (kind == GP_EV_RUNTIME || kind == GP_EV_DRIVER)
        f |= nf & (GP_EVF_SYNC_API | GP_EVF_LAUNCH_API);
    if (kind == GP_EV_KERNEL || kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET ||
        kind == GP_EV_SYNC || kind == GP_EV_GPU_USER_ANNOTATION)
        f |= GP_EVF_GPU;
    return f;
}

#define NO_STREAM (-1) /* gp_gpu_info.stream when neither args nor the tid name one */

static int64_t stream_of(const raw_ev *r, const gp_trace *t)
{
    if (r->seen & SEEN_STREAM)
        return r->stream;
    if (r->tid_str == GP_STR_NONE)
        return r->tid;
    const char *s = gp_trace_str(t, r->tid_str);
    if (strncmp(s, "stream ", 7) == 0)
        return strtoll(s + 7, NULL, 10);
    return NO_STREAM;
}

static uint64_t gpu_hash(const gp_gpu_info *g)
{
    uint64_t w[sizeof(gp_gpu_info) / 8], h = 0;
    memcpy(w, g, sizeof(w));
    for (size_t i = 0; i < sizeof(w) / 8; i++)
        h = (h ^ w[i]) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static gp_status gpu_rehash(trace_builder *b)
{
    uint32_t mask = b->gpu_mask ? b->gpu_mask * 2 + 1 : 1023;
    uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t k = 0; k < b->t->gpu.n; k++) {
        uint64_t i = gpu_hash(TRACE_VEC_AT(&b->t->gpu, gp_gpu_info, k)) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = k + 1;
    }
    free(b->gpu_slots);
    b->gpu_slots = slots;
    b->gpu_mask = mask;
    return GP_OK;
}

/* Side records repeat (a training loop launches the same kernels on the same streams), so equal
 * ones are stored once: memory ~ distinct launch configurations, not GPU activities. */
gp_status trace_builder_gpu(trace_builder *b, const gp_gpu_info *g, uint32_t *id)
{
    if ((b->t->gpu.n + 1) * 2 > b->gpu_mask)
        GP_TRY(gpu_rehash(b));
    uint64_t i = gpu_hash(g) & b->gpu_mask;
    for (; b->gpu_slots[i]; i = (i + 1) & b->gpu_mask) {
        uint32_t k = b->gpu_slots[i] - 1;
        if (memcmp(TRACE_VEC_AT(&b->t->gpu, gp_gpu_info, k), g, sizeof(*g)) == 0) {
            *id = k;
            return GP_OK;
        }
    }
    gp_gpu_info *d = trace_vec_push(&b->t->gpu);
    if (!d)
        return GP_ENOMEM;
    memcpy(d, g, sizeof(*d));
    b->gpu_slots[i] = (uint32_t)b->t->gpu.n;
    *id = (uint32_t)(b->t->gpu.n - 1);
    return GP_OK;
}

static gp_status add_gpu_info(trace_builder *b, const raw_ev *r, int kind, uint32_t *aux)
{
    gp_gpu_info gi, *g = &gi;
    memset(g, 0, sizeof(*g)); /* padding too: records are compared bytewise */
    g->device = (int32_t)((r->seen & SEEN_DEVICE)     ? r->device
                          : r->pid_str == GP_STR_NONE ? r->pid
                                                      : -1);
    g->stream = stream_of(r, b->t);
    g->bytes = r->bytes > 0 ? r->bytes : 0;
    memcpy(g->grid, r->grid, sizeof(g->grid));
    memcpy(g->block, r->block, sizeof(g->block));
    g->registers = r->regs;
    g->shared_mem = r->shmem;
    g->blocks_per_sm = r->bps;
    g->warps_per_sm = r->wps;
    g->occupancy = (r->seen & SEEN_OCC) ? r->occ : -1.0f;
    g->sync_kind = r->sync_kind;
    g->wait_on_stream = r->wait_on_stream;
    if (kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET)
        trace_parse_copy_name(gp_trace_str(b->t, r->name), g);
    return trace_builder_gpu(b, g, aux);
}

static gp_status add_mem_sample(trace_builder *b, const raw_ev *r, uint32_t *aux)
{
    gp_mem_sample *m = trace_vec_push(&b->t->mem);
    if (!m)
        return GP_ENOMEM;
    m->addr = r->addr;
    m->bytes = r->mbytes;
    m->total_allocated = r->talloc;
    m->total_reserved = r->tres;
    m->device_type = (int32_t)r->devtype;
    m->device_id = (int32_t)r->devid;
    *aux = (uint32_t)(b->t->mem.n - 1);
    return GP_OK;
}

static gp_status add_py_info(trace_builder *b, const raw_ev *r, uint32_t *aux)
{
    *aux = GP_NONE;
    if (r->py_id < 0 && r->py_parent < 0 && r->py_module < 0)
        return GP_OK;
    gp_py_info *p = trace_vec_push(&b->t->py);
    if (!p)
        return GP_ENOMEM;
    *p = (gp_py_info){r->py_id, r->py_parent, r->py_module};
    *aux = (uint32_t)(b->t->py.n - 1);
    return GP_OK;
}

/* An aten::conv2d op's "Concrete Inputs" (for its FLOPs) and the "Input Dims" as read of an op
 * with a tensor list, kept under its External id. */
static gp_status add_op_args(trace_builder *b, const raw_ev *r, int kind)
{
    int concrete =
            (r->seen & SEEN_CONCRETE) && strcmp(gp_trace_str(b->t, r->name), "aten::conv2d") == 0;
    if (kind != GP_EV_CPU_OP || r->ext < 0 || !(concrete || (r->seen & SEEN_DIMS_LIST)))
        return GP_OK;
    trace_op_args *o = trace_vec_push(&b->t->op_args);
    if (!o)
        return GP_ENOMEM;
    *o = (trace_op_args){r->ext, GP_STR_NONE, GP_STR_NONE};
    if (concrete)
        o->concrete = trace_intern_str(&b->t->strings, b->concrete_buf, b->concrete_len);
    if (r->seen & SEEN_DIMS_LIST)
        o->dims = trace_intern_str(&b->t->strings, b->dims_buf, b->dims_len);
    return (concrete && o->concrete == GP_STR_NONE) ||
                           ((r->seen & SEEN_DIMS_LIST) && o->dims == GP_STR_NONE)
                   ? GP_ENOMEM
                   : GP_OK;
}

/* A collective's args, kept under the event's External id (its kernels share it). */
static gp_status add_comm_info(trace_builder *b, const raw_ev *r)
{
    if (!(r->seen & SEEN_COMM) || r->ext < 0)
        return GP_OK;
    gp_comm_info *c = trace_vec_push(&b->t->comm);
    if (!c)
        return GP_ENOMEM;
    *c = (gp_comm_info){r->ext, r->coll,      r->pg,         r->dtype,
                        r->seq, r->in_nelems, r->out_nelems, r->group_size};
    return GP_OK;
}

/* A libprof step's scheduler args, kept under its start and thread. */
static gp_status add_step_sched(trace_builder *b, const raw_ev *r, unsigned flags)
{
    if (!(flags & GP_EVF_STEP) || r->step_runq < 0 || r->step_cpu < 0)
        return GP_OK;
    gp_step_sched *s = trace_vec_push(&b->t->step_sched);
    if (!s)
        return GP_ENOMEM;
    *s = (gp_step_sched){r->ts, r->pid_str == GP_STR_NONE ? r->pid : -1,
                         r->tid_str == GP_STR_NONE ? r->tid : -1, r->step_cpu, r->step_runq};
    return GP_OK;
}

/* The event's side record (gp_event.aux), stored: GP_ENOMEM when that failed. */
static gp_status event_aux(trace_builder *b, const raw_ev *r, int kind, uint32_t *aux)
{
    switch (kind) {
    case GP_EV_KERNEL:
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
    case GP_EV_SYNC:
        return add_gpu_info(b, r, kind, aux);
    case GP_EV_MEMORY:
        return add_mem_sample(b, r, aux);
    case GP_EV_PYTHON:
        return add_py_info(b, r, aux);
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION:
        *aux = r->shape;
        return GP_OK;
    default:
        *aux = GP_NONE;
        return GP_OK;
    }
}

static gp_status apply_meta(trace_builder *b, const raw_ev *r)
{
    b->t->info.n_metadata++;
    const char *name = gp_trace_str(b->t, r->name);
    if (r->meta_name == GP_STR_NONE)
        return GP_OK;
    if (strcmp(name, GP_NAME_THREAD_NAME) == 0) {
        uint32_t k = trace_builder_track(b, r);
        if (k == GP_NONE)
            return GP_ENOMEM;
        TRACE_VEC_AT(&b->tracks, build_track, k)->name = r->meta_name;
    } else if (strcmp(name, GP_NAME_PROCESS_NAME) == 0) {
        build_proc *p = trace_vec_push(&b->procs);
        if (!p)
            return GP_ENOMEM;
        p->pid = r->pid;
        p->pid_str = r->pid_str;
        p->name = r->meta_name;
    }
    return GP_OK;
}

static gp_status store_end(trace_builder *b, build_track *bt, const raw_ev *r)
{
    if (bt->open_b.n == 0) {
        if (b->part)
            b->orphan_e++; /* its B may be in an earlier part: the split is abandoned */
        else
            b->t->info.n_skipped++;
        return GP_OK;
    }
    gp_event ev = *TRACE_VEC_AT(&bt->open_b, gp_event, bt->open_b.n - 1);
    bt->open_b.n--;
    ev.dur = r->ts > ev.ts ? r->ts - ev.ts : 0;
    gp_event *e = trace_builder_append(b);
    if (!e)
        return GP_ENOMEM;
    *e = ev;
    bt->count++;
    return GP_OK;
}

static int phase_stored(char ph)
{
    return ph == 'X' || ph == 'B' || ph == 'E' || ph == 'i' || ph == 'I' || ph == 'R';
}

/* A "fwdbwd" flow end is kept for the exports (TensorBoard's backward module tree). */
static gp_status store_flow(trace_builder *b, const raw_ev *r)
{
    b->t->info.n_flows++;
    if (r->cat != b->fwdbwd_cat || !(r->seen & SEEN_TS))
        return GP_OK;
    gp_flow *f = trace_vec_push(&b->t->fwdbwd);
    if (!f)
        return GP_ENOMEM;
    *f = (gp_flow){r->ts, r->flow_id, r->pid_str == GP_STR_NONE ? r->pid : -1,
                   r->tid_str == GP_STR_NONE ? r->tid : -1, r->ph};
    return GP_OK;
}

/* A counter sample is kept for the exports when it has a time and a numeric "value". */
static gp_status store_counter(trace_builder *b, const raw_ev *r)
{
    b->t->info.n_counters++;
    if ((r->seen & (SEEN_TS | SEEN_VALUE)) != (SEEN_TS | SEEN_VALUE) || r->name == GP_STR_NONE)
        return GP_OK;
    gp_counter *c = trace_vec_push(&b->t->counters);
    if (!c)
        return GP_ENOMEM;
    *c = (gp_counter){r->ts, r->value, r->name, r->pid_str == GP_STR_NONE ? r->pid : -1};
    return GP_OK;
}

gp_status trace_store_event(trace_builder *b, const raw_ev *r)
{
    gp_trace_info *info = &b->t->info;
    if (r->ph == 'M')
        return apply_meta(b, r);
    if (r->ph == 's' || r->ph == 't' || r->ph == 'f')
        return store_flow(b, r);
    if (r->ph == 'C')
        return store_counter(b, r);
    if (!phase_stored(r->ph) || !(r->seen & SEEN_TS)) {
        info->n_skipped++;
        info->n_no_ts += phase_stored(r->ph); /* a phase we keep: only its "ts" is missing */
        info->n_no_ph += r->ph == 0;
        return GP_OK;
    }
    if (r->ph == 'X' && r->dur < 0) { /* an end before its start: no span to keep */
        info->n_skipped++;
        info->n_neg_dur++;
        return GP_OK;
    }
    uint32_t k = trace_builder_track(b, r);
    if (k == GP_NONE)
        return GP_ENOMEM;
    build_track *bt = TRACE_VEC_AT(&b->tracks, build_track, k);
    if (r->ph == 'E')
        return store_end(b, bt, r);
    int instant = r->ph != 'X' && r->ph != 'B';
    int kind = instant ? (r->name == b->memory_name ? GP_EV_MEMORY : GP_EV_INSTANT)
                       : cat_kind(b, r->cat);
    if (kind == -3)
        return GP_ENOMEM;
    if (kind < 0)
        kind = GP_EV_OTHER;
    /* flags before aux, in this order: both fill the builder's side tables */
    unsigned flags =
            event_flags(name_flags(b, r->name), kind) | (r->ph == 'B' ? GP_EVF_FROM_BE : 0);
    uint32_t aux;
    if (event_aux(b, r, kind, &aux) != GP_OK)
        return GP_ENOMEM;
    gp_event ev = {
            .ts = r->ts,
            .dur = r->ph == 'X' && r->dur > 0 ? r->dur : 0,
            .corr = r->corr,
            .ext_id = r->ext,
            .name = r->name,
            .track = k,
            .aux = aux,
            .kind = (uint8_t)kind,
            .ph = instant ? (uint8_t)r->ph : 'X',
            .flags = (uint16_t)flags,
    };
    if (add_comm_info(b, r) != GP_OK || add_op_args(b, r, kind) != GP_OK ||
        add_step_sched(b, r, flags) != GP_OK)
        return GP_ENOMEM;
    if (r->ph == 'B') {
        gp_event *open = trace_vec_push(&bt->open_b);
        if (!open)
            return GP_ENOMEM;
        *open = ev;
        return GP_OK;
    }
    gp_event *e = trace_builder_append(b);
    if (!e)
        return GP_ENOMEM;
    *e = ev;
    bt->count++;
    return GP_OK;
}
