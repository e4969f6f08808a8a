/* Bump-pointer arena, growable vectors and the string interner used by the trace reader.
 * Interning is on the reader's hot path (every event name), so the hash reads 8 bytes a step. */
#include "reader/trace_int.h"

#include <stdatomic.h>

#include <string.h>

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) char data[];
};

#define ARENA_BLOCK (256 * 1024)

void *trace_arena_alloc(trace_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof(*b) + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->used_total += n;
    return p;
}

char *trace_arena_strdup(trace_arena *a, const char *s, size_t n)
{
    char *p = trace_arena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void trace_arena_adopt(trace_arena *dst, trace_arena *src)
{
    struct arena_block *tail = src->head;
    if (!tail)
        return;
    while (tail->next)
        tail = tail->next;
    tail->next = dst->head;
    dst->head = src->head;
    dst->used_total += src->used_total;
    src->head = NULL;
    src->used_total = 0;
}

void trace_arena_release(trace_arena *a)
{
    struct arena_block *b = a->head;
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used_total = 0;
}

void trace_vec_init(trace_vec *v, size_t item)
{
    v->data = NULL;
    v->n = v->cap = 0;
    v->item = item;
}

void *trace_vec_push(trace_vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        char *d = realloc(v->data, cap * v->item);
        if (!d)
            return NULL;
        v->data = d;
        v->cap = cap;
    }
    char *p = v->data + v->n++ * v->item;
    memset(p, 0, v->item);
    return p;
}

void trace_vec_release(trace_vec *v)
{
    free(v->data);
    trace_vec_init(v, v->item);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 32);
}

int trace_intern_init(trace_intern *in)
{
    memset(in, 0, sizeof(*in));
    in->mask = 1023;
    in->slots = calloc(in->mask + 1, sizeof(uint32_t));
    return in->slots ? 0 : -1;
}

void trace_intern_release(trace_intern *in)
{
    trace_arena_release(&in->arena);
    free((void *)in->strs);
    free(in->lens);
    free(in->slots);
    free(in->hashes);
    memset(in, 0, sizeof(*in));
}

void trace_intern_unbudget(trace_intern *in, int keep)
{
    if (in->budget && !keep)
        atomic_fetch_sub(&in->budget->used, in->taken);
    in->budget = NULL;
    in->taken = 0;
}

static gp_status rehash(trace_intern *in)
{
    uint32_t mask = in->mask * 2 + 1;
    uint32_t *slots = calloc((size_t)mask + 1, sizeof(uint32_t));
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t id = 0; id < in->n; id++) {
        uint32_t i = (uint32_t)in->hashes[id] & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    free(in->slots);
    in->slots = slots;
    in->mask = mask;
    return GP_OK;
}

static gp_status grow_ids(trace_intern *in)
{
    uint32_t cap = in->cap ? in->cap * 2 : 1024;
    const char **strs = realloc((void *)in->strs, cap * sizeof(*strs));
    if (!strs)
        return GP_ENOMEM;
    in->strs = strs;
    uint32_t *lens = realloc(in->lens, cap * sizeof(*lens));
    if (!lens)
        return GP_ENOMEM;
    in->lens = lens;
    uint64_t *hashes = realloc(in->hashes, cap * sizeof(*hashes));
    if (!hashes)
        return GP_ENOMEM;
    in->hashes = hashes;
    in->cap = cap;
    return GP_OK;
}

static uint32_t *find_slot(const trace_intern *in, const char *s, size_t n, uint64_t h)
{
    uint32_t i = (uint32_t)h & in->mask;
    for (;;) {
        uint32_t id = in->slots[i];
        if (!id)
            return &in->slots[i];
        id--;
        if (in->hashes[id] == h && in->lens[id] == n && memcmp(in->strs[id], s, n) == 0)
            return &in->slots[i];
        i = (i + 1) & in->mask;
    }
}

gp_str trace_intern_find(const trace_intern *in, const char *s, size_t n)
{
    uint32_t *slot = find_slot(in, s, n, hash_bytes(s, n));
    return *slot ? *slot - 1 : GP_STR_NONE;
}

gp_str trace_intern_str(trace_intern *in, const char *s, size_t n)
{
    uint64_t h = hash_bytes(s, n);
    uint32_t *slot = find_slot(in, s, n, h);
    if (*slot)
        return *slot - 1;
    if (n > UINT32_MAX || (in->n == in->cap && grow_ids(in) != 0))
        return GP_STR_NONE;
    /* the text, its id's entries and two hash slots: a trace of distinct long names (500 K of
     * 2 KB) took 1.2 GB under a 100 MB ceiling when only the events counted */
    size_t cost = n + 1 + sizeof(char *) + sizeof(uint32_t) * 3 + sizeof(uint64_t);
    if (in->budget && trace_budget_take(in->budget, cost) != 0) {
        in->over_budget = 1;
        return GP_STR_NONE;
    }
    in->taken += in->budget ? cost : 0;
    char *copy = trace_arena_strdup(&in->arena, s, n);
    if (!copy)
        return GP_STR_NONE;
    uint32_t id = in->n++;
    in->strs[id] = copy;
    in->lens[id] = (uint32_t)n;
    in->hashes[id] = h;
    *slot = id + 1;
    if (in->n * 2 > in->mask && rehash(in) != 0)
        return GP_STR_NONE;
    return id;
}
