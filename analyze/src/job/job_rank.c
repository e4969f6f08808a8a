/* One rank of a job, summarised from its analysis: per step, its time, compute, communication,
 * exposed communication (HTA's comm/comp overlap), GPU idle and DataLoader; its collectives in
 * order (NCCL and RCCL kernels under every name, else c10d ops on the CPU); its rank and host. */
#include "job/job_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const job_ops[JOB_N_OPS] = {"AllReduce", "AllGather", "ReduceScatter", "AllToAll",
                                        "Broadcast", "Reduce",    "SendRecv",      "Send",
                                        "Recv",      "Generic",   "other"};

/* Does `s` contain `word`, ignoring case and '_' (all_reduce = AllReduce)? */
static int has_word(const char *s, const char *word)
{
    for (; *s; s++) {
        const char *a = s, *b = word;
        while (*a && *b) {
            if (*a == '_') {
                a++;
                continue;
            }
            if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
                break;
            a++, b++;
        }
        if (!*b)
            return 1;
    }
    return 0;
}

const char *gp_job_comm_op(const char *name)
{
    static const char *const alt[JOB_N_OPS] = {NULL,  NULL,   NULL,   "alltoall", NULL, NULL,
                                               "p2p", "send", "recv", NULL,       NULL};
    for (int i = 0; name && i < JOB_N_OPS - 1; i++)
        if (has_word(name, job_ops[i]) || (alt[i] && has_word(name, alt[i])))
            return job_ops[i];
    return job_ops[JOB_N_OPS - 1];
}

uint16_t job_op_index(const char *name)
{
    const char *op = gp_job_comm_op(name);
    for (uint16_t i = 0; i < JOB_N_OPS; i++)
        if (job_ops[i] == op)
            return i;
    return JOB_N_OPS - 1;
}

/* ---- interval unions ---- */

struct ivs {
    int64_t (*iv)[2];
    size_t n, cap;
};

static gp_status ivs_push(struct ivs *v, int64_t a, int64_t b)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        void *p = realloc(v->iv, cap * sizeof(*v->iv));
        if (!p)
            return GP_ENOMEM;
        v->iv = p, v->cap = cap;
    }
    v->iv[v->n][0] = a, v->iv[v->n][1] = b;
    v->n++;
    return GP_OK;
}

static int cmp_iv(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Sort and merge into a union of disjoint intervals. */
static void ivs_merge(struct ivs *v)
{
    size_t k = 0;
    if (v->n)
        qsort(v->iv, v->n, sizeof(*v->iv), cmp_iv);
    for (size_t i = 0; i < v->n; i++) {
        if (k && v->iv[i][0] <= v->iv[k - 1][1]) {
            if (v->iv[i][1] > v->iv[k - 1][1])
                v->iv[k - 1][1] = v->iv[i][1];
        } else {
            v->iv[k][0] = v->iv[i][0], v->iv[k][1] = v->iv[i][1];
            k++;
        }
    }
    v->n = k;
}

/* @return the first interval ending after `a`. */
static size_t ivs_find(const struct ivs *v, int64_t a)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->iv[mid][1] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* |union ∩ [a, b)| */
static int64_t ivs_overlap(const struct ivs *v, int64_t a, int64_t b)
{
    size_t lo = ivs_find(v, a);
    int64_t sum = 0;
    for (size_t i = lo; i < v->n && v->iv[i][0] < b; i++) {
        int64_t s = v->iv[i][0] > a ? v->iv[i][0] : a, e = v->iv[i][1] < b ? v->iv[i][1] : b;
        if (e > s)
            sum += e - s;
    }
    return sum;
}

/* compute, comm and busy unions of one trace */
struct unions {
    struct ivs compute, comm, busy;
};

static int is_comm_event(const gp_trace *t, const gp_event *e)
{
    return (e->flags & GP_EVF_COMM) || gp_trace_is_comm_name(gp_trace_str(t, e->name));
}

static gp_status collect_unions(const gp_trace *t, struct unions *u)
{
    size_t nt;
    size_t ne;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    const gp_event *ev = gp_trace_events(t, &ne);
    for (size_t k = 0; k < nt; k++) {
        for (uint32_t i = tr[k].first; tr[k].is_gpu && i < tr[k].first + tr[k].count; i++) {
            const gp_event *e = &ev[i];
            int kernel = e->kind == GP_EV_KERNEL;
            if (!kernel && e->kind != GP_EV_MEMCPY && e->kind != GP_EV_MEMSET)
                continue;
            gp_status rc = ivs_push(&u->busy, e->ts, e->ts + e->dur);
            if (rc == 0 && kernel)
                rc = ivs_push(is_comm_event(t, e) ? &u->comm : &u->compute, e->ts, e->ts + e->dur);
            if (rc != 0)
                return GP_ENOMEM;
        }
    }
    ivs_merge(&u->compute), ivs_merge(&u->comm), ivs_merge(&u->busy);
    return GP_OK;
}

/* exposed communication in [a, b): comm not covered by compute */
static int64_t exposed_in(const struct unions *u, int64_t a, int64_t b)
{
    int64_t sum = 0;
    for (size_t i = ivs_find(&u->comm, a); i < u->comm.n && u->comm.iv[i][0] < b; i++) {
        int64_t s = u->comm.iv[i][0] > a ? u->comm.iv[i][0] : a;
        int64_t e = u->comm.iv[i][1] < b ? u->comm.iv[i][1] : b;
        if (e > s)
            sum += (e - s) - ivs_overlap(&u->compute, s, e);
    }
    return sum;
}

static gp_status fill_steps(gp_job_part *p, const gp_analysis *a, const struct unions *u)
{
    size_t n;
    const gp_step *st = gp_analysis_steps(a, &n);
    p->steps = calloc(n ? n : 1, sizeof(*p->steps));
    if (!p->steps)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const gp_step *s = &st[i];
        struct job_step *o = &p->steps[p->n_steps++];
        o->num = s->synthetic ? -1 : s->num;
        o->dur = s->end - s->ts;
        o->compute = ivs_overlap(&u->compute, s->ts, s->end);
        o->comm = ivs_overlap(&u->comm, s->ts, s->end);
        o->exposed = exposed_in(u, s->ts, s->end);
        o->idle = o->dur - ivs_overlap(&u->busy, s->ts, s->end);
        o->loader = s->bd[GP_BD_DATALOADER];
    }
    return GP_OK;
}

/* ---- collectives ---- */

/* The collective's args: its own (a kernel), else a record_param_comms inside it (a c10d op). */
static const gp_comm_info *comm_of(const gp_trace *t, const gp_event *ev, uint32_t i,
                                   uint32_t track_end)
{
    const gp_comm_info *c = gp_trace_comm_info(t, ev[i].ext_id);
    int64_t end = ev[i].ts + ev[i].dur;
    for (uint32_t k = i + 1; !c && k < track_end && ev[k].ts < end; k++)
        if (!strcmp(gp_trace_str(t, ev[k].name), "record_param_comms"))
            c = gp_trace_comm_info(t, ev[k].ext_id);
    return c;
}

static gp_status push_call(gp_job_part *p, const gp_analysis *a, uint32_t i, uint32_t track_end,
                           int64_t base)
{
    const gp_trace *t = gp_analysis_trace(a);
    size_t ne, ns;
    const gp_event *ev = gp_trace_events(t, &ne), *e = &ev[i];
    const gp_step *st = gp_analysis_steps(a, &ns);
    int si = gp_analysis_step_of(a, i);
    const gp_comm_info *c = comm_of(t, ev, i, track_end);
    const gp_gpu_info *g = gp_trace_gpu_info(t, e);
    const char *coll = c && c->coll != GP_STR_NONE ? gp_trace_str(t, c->coll) : NULL;
    const char *pg = c && c->pg != GP_STR_NONE ? gp_trace_str(t, c->pg) : NULL;
    uint16_t op = job_op_index(gp_trace_str(t, e->name));
    if (coll && job_op_index(coll) != JOB_N_OPS - 1)
        op = job_op_index(coll); /* RCCL's Generic kernel, and names that do not tell */
    int rc = 0;
    struct job_raw_call x = {
            .pg = job_part_intern(p, pg, pg ? strlen(pg) : 0, &rc),
            .name = job_part_intern(p, coll, coll ? strlen(coll) : 0, &rc),
            .op = op,
            .stream = g ? g->stream : -1,
            .nelems = c ? c->in_nelems : -1,
            .seq = c ? c->seq : -1,
            .step = si >= 0 && !st[si].synthetic ? st[si].num : -1,
            .ts = e->ts + base,
            .end = e->ts + e->dur + base,
    };
    if (rc != 0)
        return GP_ENOMEM;
    return job_part_push_call(p, &x);
}

/* Outermost c10d/nccl ops on the CPU: the collectives of a trace with no NCCL kernels. */
static int is_cpu_comm(const gp_analysis *a, const gp_event *ev, uint32_t i)
{
    const gp_trace *t = gp_analysis_trace(a);
    if (ev[i].kind != GP_EV_CPU_OP && ev[i].kind != GP_EV_USER_ANNOTATION)
        return 0;
    if (!is_comm_event(t, &ev[i]))
        return 0;
    uint32_t up = gp_analysis_parent_of(a, i);
    return up == GP_NONE || !is_comm_event(t, &ev[up]);
}

static gp_status collect_calls(gp_job_part *p, const gp_analysis *a)
{
    const gp_trace *t = gp_analysis_trace(a);
    int64_t base = gp_trace_get_info(t)->base_time_ns;
    size_t nt, ne;
    const gp_track *tr = gp_trace_tracks(t, &nt);
    const gp_event *ev = gp_trace_events(t, &ne);
    for (int gpu = 1; gpu >= 0 && p->n_calls == 0; gpu--) {
        for (size_t k = 0; k < nt; k++) {
            if (tr[k].is_gpu != gpu)
                continue;
            uint32_t end = tr[k].first + tr[k].count;
            for (uint32_t i = tr[k].first; i < end; i++) {
                int want = gpu ? ev[i].kind == GP_EV_KERNEL && is_comm_event(t, &ev[i])
                               : is_cpu_comm(a, ev, i);
                if (want && push_call(p, a, i, end, base) != 0)
                    return GP_ENOMEM;
            }
        }
    }
    job_key_calls(p);
    return GP_OK;
}

/* ---- rank and host from the file name ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

#define NO_RANK (-1) /* rank_of_name: the name holds none */

/* "rank3", "rank_3", "rank-3" anywhere in the file name; NO_RANK when absent. */
static int rank_of_name(const char *path)
{
    for (const char *s = base_name(path); *s; s++) {
        if (strncasecmp(s, "rank", 4) != 0)
            continue;
        const char *d = s + 4;
        if (*d == '_' || *d == '-')
            d++;
        if (isdigit((unsigned char)*d))
            return (int)strtol(d, NULL, 10);
    }
    return NO_RANK;
}

/* "<host>_<pid>[.<more>]" (Kineto's and ours): the host; else "". */
static char *host_of_name(const char *path)
{
    const char *b = base_name(path), *dot = strchr(b, '.');
    size_t n = dot ? (size_t)(dot - b) : strlen(b);
    size_t us = n;
    while (us > 0 && b[us - 1] != '_')
        us--;
    int pid = us > 1 && us < n;
    for (size_t i = us; pid && i < n; i++)
        pid = isdigit((unsigned char)b[i]) != 0;
    size_t len = pid ? us - 1 : 0;
    char *h = malloc(len + 1);
    if (h) {
        memcpy(h, b, len);
        h[len] = 0;
    }
    return h;
}

/* Move the compute union into the part, shifted to unix ns. */
static void keep_compute(gp_job_part *p, struct ivs *compute, int64_t base)
{
    for (size_t i = 0; i < compute->n; i++)
        compute->iv[i][0] += base, compute->iv[i][1] += base;
    p->compute = (struct rules_ivs){compute->iv, compute->n, compute->cap};
    *compute = (struct ivs){0};
}

gp_status gp_job_part_new(const gp_analysis *a, gp_job_part **out, gp_error *err)
{
    const gp_trace_info *in = gp_trace_get_info(gp_analysis_trace(a));
    const char *path = in->path ? in->path : "";
    struct unions u = {0};
    gp_job_part *p = calloc(1, sizeof(*p));
    gp_status rc = p ? GP_OK : GP_ENOMEM;
    if (rc == 0) {
        p->rank = in->rank >= 0 ? in->rank : rank_of_name(path);
        p->world_size = in->world_size;
        p->base_time_ns = in->base_time_ns;
        p->rank_from = in->rank >= 0 ? "distributedInfo" : p->rank >= 0 ? "file name" : "order";
        p->path = strdup(path);
        p->host = host_of_name(path);
        p->t_first = in->base_time_ns + (in->n_events ? in->ts_min : 0);
        rc = p->path && p->host ? collect_unions(gp_analysis_trace(a), &u) : GP_ENOMEM;
    }
    if (rc == 0)
        rc = fill_steps(p, a, &u);
    if (rc == 0)
        rc = collect_calls(p, a);
    if (rc == 0) /* its compute on its own clock, as its calls are: for GT16's cost */
        keep_compute(p, &u.compute, gp_trace_get_info(gp_analysis_trace(a))->base_time_ns);
    free(u.compute.iv), free(u.comm.iv), free(u.busy.iv);
    *out = NULL;
    if (rc != 0) {
        gp_job_part_free(p);
        return gp_error_set(err, GP_ENOMEM, path, "out of memory");
    }
    *out = p;
    return GP_OK;
}

void gp_job_part_free(gp_job_part *p)
{
    if (!p)
        return;
    free(p->path), free(p->host), free(p->steps), free(p->calls);
    free(p->compute.iv), free(p->waits);
    for (size_t i = 0; i < p->n_strs; i++)
        free(p->strs[i]);
    for (size_t i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    free(p->strs), free(p->notes);
    free(p);
}
