/* names.c: the process-wide name table. Interning takes a mutex and a hash lookup (slow path,
 * once per name); reading a name by id is lock-free because strings live in fixed chunks that
 * never move. Also the OS-thread name table that gp_prof_thread_name and nvtxNameOsThread fill. */
#include <stdlib.h>
#include <string.h>

#include "prof_int.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define N_CHUNKS   (PROF_NAME_MAX_ID / CHUNK_SIZE)

typedef struct name_entry {
    const char *str;
    uint32_t len;
    uint32_t cat;
} name_entry;

static _Atomic(name_entry *) chunks[N_CHUNKS];
static _Atomic uint32_t count; /* ids 1..count are valid */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *hash_ids; /* open addressing, 0 = empty */
static uint32_t hash_cap;

static uint64_t hash_bytes(const char *s, size_t n, uint32_t cat)
{
    uint64_t h = 1469598103934665603ULL ^ cat; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static name_entry *entry(uint32_t id)
{
    name_entry *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return c ? &c[id & (CHUNK_SIZE - 1)] : NULL;
}

static int hash_grow(void)
{
    uint32_t ncap = hash_cap ? hash_cap * 2 : 1024;
    uint32_t *n = calloc(ncap, sizeof(*n));
    if (!n)
        return -1;
    for (uint32_t i = 0; i < hash_cap; i++) {
        uint32_t id = hash_ids[i];
        if (!id)
            continue;
        name_entry *e = entry(id);
        uint64_t h = hash_bytes(e->str, e->len, e->cat);
        uint32_t j = (uint32_t)h & (ncap - 1);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = id;
    }
    free(hash_ids);
    hash_ids = n;
    hash_cap = ncap;
    return 0;
}

/* Append a new entry; lock held. @return its id or 0. */
static uint32_t add_locked(const char *s, size_t n, gp_prof_cat cat)
{
    uint32_t id = atomic_load_explicit(&count, memory_order_relaxed) + 1;
    if (id >= PROF_NAME_MAX_ID)
        return 0;
    uint32_t ci = id >> CHUNK_BITS;
    name_entry *c = atomic_load_explicit(&chunks[ci], memory_order_relaxed);
    if (!c) {
        c = calloc(CHUNK_SIZE, sizeof(*c));
        if (!c)
            return 0;
        atomic_store_explicit(&chunks[ci], c, memory_order_release);
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    c[id & (CHUNK_SIZE - 1)] = (name_entry){copy, (uint32_t)n, (uint32_t)cat};
    atomic_store_explicit(&count, id, memory_order_release);
    return id;
}

uint32_t prof_intern_n(const char *s, size_t n, gp_prof_cat cat)
{
    if (!s || n >= UINT32_MAX)
        return 0;
    pthread_mutex_lock(&lock);
    uint32_t id = 0;
    if ((atomic_load(&count) + 1) * 2 >= hash_cap && hash_grow() != 0)
        goto out;
    uint64_t h = hash_bytes(s, n, (uint32_t)cat);
    uint32_t j = (uint32_t)h & (hash_cap - 1);
    for (; hash_ids[j]; j = (j + 1) & (hash_cap - 1)) {
        name_entry *e = entry(hash_ids[j]);
        if (e->len == n && e->cat == (uint32_t)cat && memcmp(e->str, s, n) == 0) {
            id = hash_ids[j];
            goto out;
        }
    }
    id = add_locked(s, n, cat);
    if (id)
        hash_ids[j] = id;
out:
    pthread_mutex_unlock(&lock);
    return id;
}

gp_prof_name gp_prof_intern_cat(const char *name, gp_prof_cat cat)
{
    return name ? prof_intern_n(name, strlen(name), cat) : 0;
}

gp_prof_name gp_prof_intern(const char *name)
{
    return gp_prof_intern_cat(name, GP_PROF_CAT_USER_ANNOTATION);
}

const char *prof_name_str(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&count, memory_order_acquire))
        return NULL;
    name_entry *e = entry(id);
    return e ? e->str : NULL;
}

gp_prof_cat prof_name_cat(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&count, memory_order_acquire))
        return GP_PROF_CAT_USER_ANNOTATION;
    return (gp_prof_cat)entry(id)->cat;
}

uint32_t prof_name_count(void)
{
    return atomic_load_explicit(&count, memory_order_acquire);
}

/* ---- OS thread names ---- */

#define MAX_THREAD_NAMES 4096
static int tn_tid[MAX_THREAD_NAMES];
static uint32_t tn_name[MAX_THREAD_NAMES];
static int tn_count;

void prof_thread_name_set(int tid, uint32_t name_id)
{
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < tn_count && tn_tid[i] != tid)
        i++;
    if (i < MAX_THREAD_NAMES) {
        tn_tid[i] = tid;
        tn_name[i] = name_id;
        if (i == tn_count)
            tn_count++;
    }
    pthread_mutex_unlock(&lock);
}

int prof_thread_names(int *tids, uint32_t *names, int cap)
{
    pthread_mutex_lock(&lock);
    int n = tn_count < cap ? tn_count : cap;
    memcpy(tids, tn_tid, (size_t)n * sizeof(*tids));
    memcpy(names, tn_name, (size_t)n * sizeof(*names));
    pthread_mutex_unlock(&lock);
    return n;
}
