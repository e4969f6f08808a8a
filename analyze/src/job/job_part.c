/* What a rank's part is made of, whether it comes from a trace (job_rank.c) or a summary
 * (job_summary_read.c): its collectives keyed alike from the same facts (process group or
 * stream, "Collective name", size, "Seq", step, order), the names they use, its notes. */
#include "job/job_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *job_rank_from(const char *s)
{
    static const char *const from[] = {"distributedInfo", "file name", "order"};
    for (size_t i = 0; s && i < sizeof(from) / sizeof(from[0]); i++)
        if (!strcmp(s, from[i]))
            return from[i];
    return NULL;
}

static uint64_t hash_str(char domain, const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (unsigned char)domain;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Operations whose size every rank gives alike (all-to-all and point-to-point sizes differ). */
static int same_size_op(uint16_t op)
{
    const char *o = job_ops[op];
    return !strcmp(o, "AllReduce") || !strcmp(o, "AllGather") || !strcmp(o, "ReduceScatter") ||
           !strcmp(o, "Broadcast") || !strcmp(o, "Reduce");
}

/* Group, what and size of a collective (the number in its group comes later). */
static struct job_key key_of(const gp_job_part *p, const struct job_raw_call *c)
{
    char stream[32];
    snprintf(stream, sizeof(stream), "%lld", (long long)c->stream);
    struct job_key k = {
            .group = c->pg != JOB_NONE ? hash_str('g', p->strs[c->pg]) : hash_str('s', stream),
            .what = c->name != JOB_NONE ? hash_str('c', p->strs[c->name]) : 0, /* ops: matched */
            .size = c->nelems >= 0 && same_size_op(c->op) ? c->nelems : -1,
            .seq = c->seq,
    };
    return k;
}

uint32_t job_part_intern(gp_job_part *p, const char *s, size_t n, int *rc)
{
    if (!s)
        return JOB_NONE;
    for (size_t i = p->n_strs; i-- > 0;)
        if (!strncmp(p->strs[i], s, n) && p->strs[i][n] == 0)
            return (uint32_t)i;
    if (p->n_strs == p->cap_strs) {
        size_t cap = p->cap_strs ? p->cap_strs * 2 : 8;
        char **v = realloc(p->strs, cap * sizeof(*v));
        if (!v)
            return *rc = -1, JOB_NONE;
        p->strs = v, p->cap_strs = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return *rc = -1, JOB_NONE;
    memcpy(copy, s, n);
    copy[n] = 0;
    p->strs[p->n_strs] = copy;
    return (uint32_t)p->n_strs++;
}

gp_status job_part_push_call(gp_job_part *p, const struct job_raw_call *c)
{
    if (p->n_calls == p->cap_calls) {
        size_t cap = p->cap_calls ? p->cap_calls * 2 : 64;
        void *q = realloc(p->calls, cap * sizeof(*p->calls));
        if (!q)
            return GP_ENOMEM;
        p->calls = q, p->cap_calls = cap;
    }
    struct job_call x = {
            .key = key_of(p, c),
            .step = c->step,
            .op = c->op,
            .ts = c->ts,
            .end = c->end,
            .pg = c->pg,
            .name = c->name,
            .stream = c->stream,
            .nelems = c->nelems,
            .seq = c->seq,
    };
    p->calls[p->n_calls++] = x;
    return GP_OK;
}

gp_status job_part_note(gp_job_part *p, const char *s)
{
    char **v = realloc(p->notes, (p->n_notes + 1) * sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    p->notes = v;
    return (p->notes[p->n_notes] = strdup(s)) ? (p->n_notes++, GP_OK) : GP_ENOMEM;
}

/* Calls at one instant by what they are: the order is the same whatever order they came in
 * (a trace's tracks, a summary's list). */
static int cmp_same_ts(const struct job_call *a, const struct job_call *b)
{
    int64_t x[4] = {a->end, a->stream, a->nelems, a->op},
            y[4] = {b->end, b->stream, b->nelems, b->op};
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    if (a->key.group != b->key.group)
        return a->key.group < b->key.group ? -1 : 1;
    return a->key.what < b->key.what ? -1 : a->key.what > b->key.what;
}

static int cmp_step_ts(const void *pa, const void *pb)
{
    const struct job_call *a = pa, *b = pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return cmp_same_ts(a, b);
}

int job_key_cmp(const struct job_key *a, const struct job_key *b)
{
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->what != b->what)
        return a->what < b->what ? -1 : 1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* By key, the calls of one (step, group, what, size) in time order. */
static int cmp_key_ts(const void *pa, const void *pb)
{
    const struct job_call *a = pa, *b = pb;
    int c = job_key_cmp(&a->key, &b->key);
    if (c)
        return c;
    return a->ts != b->ts ? (a->ts < b->ts ? -1 : 1) : cmp_same_ts(a, b);
}

/* Number each call in its step, then key it: by its Seq where every call has one, else by its
 * order among the step's calls of its group, what and size. */
void job_key_calls(gp_job_part *p)
{
    int all_seq = p->n_calls > 0;
    for (size_t i = 0; i < p->n_calls; i++)
        all_seq = all_seq && p->calls[i].key.seq >= 0;
    if (p->n_calls)
        qsort(p->calls, p->n_calls, sizeof(*p->calls), cmp_step_ts);
    for (size_t i = 0; i < p->n_calls; i++) {
        struct job_call *c = &p->calls[i];
        c->index = i && p->calls[i - 1].step == c->step ? p->calls[i - 1].index + 1 : 0;
        c->key.step = all_seq ? INT64_MIN : c->step;
        c->key.seq = all_seq ? c->key.seq : 0;
    }
    if (p->n_calls)
        qsort(p->calls, p->n_calls, sizeof(*p->calls), cmp_key_ts);
    for (size_t i = 1; i < p->n_calls && !all_seq; i++) {
        struct job_key prev = p->calls[i - 1].key;
        prev.seq = p->calls[i].key.seq;
        if (job_key_cmp(&prev, &p->calls[i].key) == 0)
            p->calls[i].key.seq = p->calls[i - 1].key.seq + 1;
    }
}
