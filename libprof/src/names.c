/* names.c: the process-wide name table. Interning takes a mutex and a hash lookup (slow path,
 * once per name); reading a name by id is lock-free because strings live in fixed chunks that
 * never move. Also the OS-thread name table that gp_prof_thread_name and nvtxNameOsThread fill. */
#include <stdlib.h>
#include <string.h>

#include "prof_int.h"

#define CHUNK_BITS PROF_NAME_CHUNK_BITS
#define CHUNK_SIZE (1u << CHUNK_BITS)

typedef prof_name_entry name_entry;

/* The state is a member of the session object (session.c): prof_state_names(). */

static uint64_t hash_bytes(const char *s, size_t n, uint32_t cat)
{
    uint64_t h = 1469598103934665603ULL ^ cat; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static name_entry *entry(uint32_t id)
{
    name_entry *c = atomic_load_explicit(&prof_state_names()->chunks[id >> CHUNK_BITS],
                                         memory_order_acquire);
    return c ? &c[id & (CHUNK_SIZE - 1)] : NULL;
}

static int hash_grow(void)
{
    uint32_t ncap = prof_state_names()->hash_cap ? prof_state_names()->hash_cap * 2 : 1024;
    uint32_t *n = calloc(ncap, sizeof(*n));
    if (!n)
        return -1;
    for (uint32_t i = 0; i < prof_state_names()->hash_cap; i++) {
        uint32_t id = prof_state_names()->hash_ids[i];
        if (!id)
            continue;
        name_entry *e = entry(id);
        uint64_t h = hash_bytes(e->str, e->len, e->cat);
        uint32_t j = (uint32_t)h & (ncap - 1);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = id;
    }
    free(prof_state_names()->hash_ids);
    prof_state_names()->hash_ids = n;
    prof_state_names()->hash_cap = ncap;
    return 0;
}

/* Append a new entry; lock held. @return its id or 0. */
static uint32_t add_locked(const char *s, size_t n, gp_prof_cat cat)
{
    uint32_t id = atomic_load_explicit(&prof_state_names()->count, memory_order_relaxed) + 1;
    if (id >= PROF_NAME_MAX_ID)
        return 0;
    uint32_t ci = id >> CHUNK_BITS;
    name_entry *c = atomic_load_explicit(&prof_state_names()->chunks[ci], memory_order_relaxed);
    if (!c) {
        c = calloc(CHUNK_SIZE, sizeof(*c));
        if (!c)
            return 0;
        atomic_store_explicit(&prof_state_names()->chunks[ci], c, memory_order_release);
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    c[id & (CHUNK_SIZE - 1)] = (name_entry){copy, (uint32_t)n, (uint32_t)cat};
    atomic_store_explicit(&prof_state_names()->count, id, memory_order_release);
    return id;
}

uint32_t prof_intern_n(const char *s, size_t n, gp_prof_cat cat)
{
    if (!s || n >= UINT32_MAX)
        return 0;
    pthread_mutex_lock(&prof_state_names()->lock);
    uint32_t id = 0;
    if ((atomic_load(&prof_state_names()->count) + 1) * 2 >= prof_state_names()->hash_cap &&
        hash_grow() != 0)
        goto out;
    uint64_t h = hash_bytes(s, n, (uint32_t)cat);
    uint32_t j = (uint32_t)h & (prof_state_names()->hash_cap - 1);
    for (; prof_state_names()->hash_ids[j]; j = (j + 1) & (prof_state_names()->hash_cap - 1)) {
        name_entry *e = entry(prof_state_names()->hash_ids[j]);
        if (e->len == n && e->cat == (uint32_t)cat && memcmp(e->str, s, n) == 0) {
            id = prof_state_names()->hash_ids[j];
            goto out;
        }
    }
    id = add_locked(s, n, cat);
    if (id)
        prof_state_names()->hash_ids[j] = id;
out:
    pthread_mutex_unlock(&prof_state_names()->lock);
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
    if (id == 0 || id > atomic_load_explicit(&prof_state_names()->count, memory_order_acquire))
        return NULL;
    name_entry *e = entry(id);
    return e ? e->str : NULL;
}

gp_prof_cat prof_name_cat(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&prof_state_names()->count, memory_order_acquire))
        return GP_PROF_CAT_USER_ANNOTATION;
    return (gp_prof_cat)entry(id)->cat;
}

uint32_t prof_name_count(void)
{
    return atomic_load_explicit(&prof_state_names()->count, memory_order_acquire);
}

/* ---- OS thread names ---- */

#define MAX_THREAD_NAMES PROF_MAX_THREAD_NAMES

void prof_thread_name_set(int tid, uint32_t name_id)
{
    pthread_mutex_lock(&prof_state_names()->lock);
    int i = 0;
    while (i < prof_state_names()->tn_count && prof_state_names()->tn_tid[i] != tid)
        i++;
    if (i < MAX_THREAD_NAMES) {
        prof_state_names()->tn_tid[i] = tid;
        prof_state_names()->tn_name[i] = name_id;
        if (i == prof_state_names()->tn_count)
            prof_state_names()->tn_count++;
    }
    pthread_mutex_unlock(&prof_state_names()->lock);
}

int prof_thread_names(int *tids, uint32_t *names, int cap)
{
    pthread_mutex_lock(&prof_state_names()->lock);
    int n = prof_state_names()->tn_count < cap ? prof_state_names()->tn_count : cap;
    memcpy(tids, prof_state_names()->tn_tid, (size_t)n * sizeof(*tids));
    memcpy(names, prof_state_names()->tn_name, (size_t)n * sizeof(*names));
    pthread_mutex_unlock(&prof_state_names()->lock);
    return n;
}
