/* PyTorch's memory columns (torch.autograd.profiler._parse_kineto_results): every host op
 * gets the bytes of the allocator's [memory] records, on any thread, whose time lies in its
 * interval (ends included); records in no op become rows named "[memory]". */
#include "model/key_avg_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct mem_rec {
    int64_t ts, bytes[2];
} mem_rec;

static int cmp_rec(const void *pa, const void *pb)
{
    const mem_rec *a = pa, *b = pb;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

/* c10::DeviceType: CPU 0, MKLDNN 2, IDEEP 5 count as CPU; CUDA 1, HIP 6, XPU 12,
 * PrivateUse1 20 as device; the rest as neither. */
#define MEM_NEITHER (-1) /* mem_side: a device type counted as neither host nor device */

static int mem_side(int32_t device_type)
{
    if (device_type == 0 || device_type == 2 || device_type == 5)
        return 0;
    if (device_type == 1 || device_type == 6 || device_type == 12 || device_type == 20)
        return 1;
    return MEM_NEITHER;
}

static mem_rec *collect(const gp_analysis *a, size_t *n)
{
    mem_rec *r = NULL;
    size_t cap = 0;
    *n = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        const gp_mem_sample *s = gp_trace_mem_sample(a->t, &a->ev[i]);
        if (!s)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 256;
            mem_rec *g = realloc(r, cap * sizeof(*r));
            if (!g) {
                free(r);
                return NULL;
            }
            r = g;
        }
        mem_rec *m = &r[(*n)++];
        *m = (mem_rec){a->ev[i].ts, {0, 0}};
        int side = mem_side(s->device_type);
        if (side >= 0)
            m->bytes[side] = s->bytes;
    }
    return r ? r : calloc(1, sizeof(*r));
}

gp_status ka_mem_init(ka_mem *m, const gp_analysis *a)
{
    memset(m, 0, sizeof(*m));
    mem_rec *r = collect(a, &m->n);
    if (!r)
        return GP_ENOMEM;
    qsort(r, m->n, sizeof(*r), cmp_rec);
    m->ts = malloc((m->n + 1) * sizeof(*m->ts));
    m->sum = malloc(2 * (m->n + 1) * sizeof(*m->sum));
    if (!m->ts || !m->sum) {
        free(r);
        ka_mem_release(m);
        return GP_ENOMEM;
    }
    m->sum[0] = m->sum[1] = 0;
    for (size_t k = 0; k < m->n; k++) {
        m->ts[k] = r[k].ts;
        m->sum[2 * k + 2] = m->sum[2 * k] + r[k].bytes[0];
        m->sum[2 * k + 3] = m->sum[2 * k + 1] + r[k].bytes[1];
    }
    free(r);
    return GP_OK;
}

void ka_mem_release(ka_mem *m)
{
    free(m->ts);
    free(m->sum);
    memset(m, 0, sizeof(*m));
}

/* @return the first record at or after ts (after, when `after` is set). */
static size_t first_at(const ka_mem *m, int64_t ts, int after)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ts[mid] < ts || (after && m->ts[mid] == ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void ka_mem_in(const ka_mem *m, int64_t ts, int64_t end, int64_t out[2])
{
    out[0] = out[1] = 0;
    if (m->n == 0)
        return;
    size_t lo = first_at(m, ts, 0), hi = first_at(m, end, 1);
    if (lo >= hi)
        return;
    out[0] = m->sum[2 * hi] - m->sum[2 * lo];
    out[1] = m->sum[2 * hi + 1] - m->sum[2 * lo + 1];
}

gp_status ka_mem_unattributed(const ka_mem *m, const gp_analysis *a, uint64_t *count,
                              int64_t bytes[2])
{
    *count = 0;
    bytes[0] = bytes[1] = 0;
    if (m->n == 0)
        return GP_OK;
    int32_t *cover = calloc(m->n + 1, sizeof(*cover)); /* ops over each record, as differences */
    if (!cover)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < a->n; i++)
        if (ka_is_member(a, &a->ev[i])) {
            const gp_event *e = &a->ev[i];
            size_t lo = first_at(m, e->ts, 0), hi = first_at(m, e->ts + e->dur, 1);
            if (lo < hi) {
                cover[lo]++;
                cover[hi]--;
            }
        }
    int64_t depth = 0;
    for (size_t k = 0; k < m->n; k++) {
        depth += cover[k];
        if (depth == 0) {
            (*count)++;
            bytes[0] += m->sum[2 * k + 2] - m->sum[2 * k];
            bytes[1] += m->sum[2 * k + 3] - m->sum[2 * k + 1];
        }
    }
    free(cover);
    return GP_OK;
}
