/* id_map.c: int64 id -> event index, dense over a compact range of ids, else a hash. */
#include "model/analysis_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

gp_status id_map_init(id_map *m, size_t expected)
{
    size_t cap = 64;
    while (cap < expected * 2)
        cap *= 2;
    memset(m, 0, sizeof(*m));
    m->slots = malloc(cap * sizeof(*m->slots));
    m->mask = cap - 1;
    if (!m->slots)
        return GP_ENOMEM;
    for (size_t i = 0; i < cap; i++)
        m->slots[i].val = GP_NONE;
    return GP_OK;
}

/* Dense when 4 bytes per id of the range cost no more than the hash's ~24-48 per id. */
#define ID_DENSE_SLACK 4

gp_status id_map_init_range(id_map *m, int64_t lo, int64_t hi, size_t count)
{
    if (count == 0 || hi < lo)
        return id_map_init(m, 16);
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* wraps to 0 for the full int64 range */
    if (span == 0 || span / ID_DENSE_SLACK > count + 4096 || span > SIZE_MAX / sizeof(uint32_t))
        return id_map_init(m, count);
    memset(m, 0, sizeof(*m));
    m->dense = malloc((size_t)span * sizeof(uint32_t));
    if (!m->dense)
        return GP_ENOMEM;
    memset(m->dense, 0xFF, (size_t)span * sizeof(uint32_t)); /* GP_NONE */
    m->base = lo;
    m->span = span;
    return GP_OK;
}

void id_map_release(id_map *m)
{
    free(m->slots);
    free(m->dense);
    memset(m, 0, sizeof(*m));
}

static size_t id_slot_of(const id_map *m, int64_t key)
{
    size_t i = (size_t)((const id_slot *)id_map_home(m, key) - m->slots);
    while (m->slots[i].val != GP_NONE && !id_slot_is(&m->slots[i], key))
        i = (i + 1) & m->mask;
    return i;
}

static gp_status id_map_grow(id_map *m)
{
    id_map bigger;
    if (id_map_init(&bigger, (m->mask + 1)) != GP_OK) {
        id_map_release(&bigger);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i <= m->mask; i++)
        if (m->slots[i].val != GP_NONE)
            id_map_put(&bigger, id_slot_key(&m->slots[i]), m->slots[i].val);
    id_map_release(m);
    *m = bigger;
    return GP_OK;
}

gp_status id_map_put(id_map *m, int64_t key, uint32_t val)
{
    if (m->dense) {
        uint64_t k = (uint64_t)key - (uint64_t)m->base;
        if (k >= m->span)
            return GP_EINVAL;
        if (m->dense[k] == GP_NONE) {
            m->dense[k] = val;
            m->n++;
        }
        return GP_OK;
    }
    if ((m->n + 1) * 2 > m->mask)
        GP_TRY(id_map_grow(m));
    id_slot *s = &m->slots[id_slot_of(m, key)];
    if (s->val == GP_NONE) {
        s->key_lo = (uint32_t)(uint64_t)key;
        s->key_hi = (uint32_t)((uint64_t)key >> 32);
        s->val = val;
        m->n++;
    }
    return GP_OK;
}

uint32_t id_map_get(const id_map *m, int64_t key)
{
    if (m->dense) {
        uint64_t k = (uint64_t)key - (uint64_t)m->base;
        return k < m->span ? m->dense[k] : GP_NONE;
    }
    return m->slots[id_slot_of(m, key)].val;
}
