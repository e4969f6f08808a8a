/* ival.c: interval arithmetic over sorted [ts, end) lists: merge, total, subtract, clip. */
#include "model/analysis_int.h"
#include "model/sort_runs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ival(const void *pa, const void *pb)
{
    const ival *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

size_t ival_merge(ival *v, size_t n)
{
    if (n == 0)
        return 0;
    /* collected from tracks sorted by start: a run per track (per stream for kernels) */
    sort_runs(v, n, sizeof(*v), cmp_ival);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a <= v[k].b) {
            if (v[i].b > v[k].b)
                v[k].b = v[i].b;
        } else {
            v[++k] = v[i];
        }
    }
    return k + 1;
}

int64_t ival_total(const ival *v, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i].b - v[i].a;
    return s;
}

size_t ival_subtract(const ival *a, size_t na, const ival *b, size_t nb, ival *out)
{
    size_t k = 0, j = 0;
    for (size_t i = 0; i < na; i++) {
        int64_t lo = a[i].a, hi = a[i].b;
        while (j < nb && b[j].b <= lo)
            j++;
        for (size_t q = j; q < nb && b[q].a < hi; q++) {
            if (b[q].a > lo)
                out[k++] = (ival){lo, b[q].a};
            if (b[q].b > lo)
                lo = b[q].b;
        }
        if (lo < hi)
            out[k++] = (ival){lo, hi};
    }
    return k;
}

int64_t ival_clip_total(const ival *v, size_t n, int64_t lo, int64_t hi)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i].a > lo ? v[i].a : lo, y = v[i].b < hi ? v[i].b : hi;
        if (y > x)
            s += y - x;
    }
    return s;
}
