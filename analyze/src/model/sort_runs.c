/* sort_runs: sorting arrays made of a few sorted runs, such as the GPU activity of several
 * streams (each stream in time order) wanted in device time order: the runs are merged pairwise,
 * O(n log runs), where qsort costs O(n log n) whatever the input. */
#include "model/sort_runs.h"

#include <stdlib.h>
#include <string.h>

/* Where the run starting at i ends. */
static size_t run_end(const char *base, size_t n, size_t size, size_t i, sort_cmp cmp)
{
    size_t j = i + 1;
    while (j < n && cmp(base + (j - 1) * size, base + j * size) <= 0)
        j++;
    return j;
}

/* Merge the sorted [a, a_end) and [b, b_end) into out; ties take from the first (stable). */
static void merge2(const char *a, const char *a_end, const char *b, const char *b_end, char *out,
                   size_t size, sort_cmp cmp)
{
    while (a < a_end && b < b_end) {
        const char *take = cmp(b, a) < 0 ? b : a;
        memcpy(out, take, size);
        out += size;
        if (take == a)
            a += size;
        else
            b += size;
    }
    memcpy(out, a, (size_t)(a_end - a));
    out += a_end - a;
    memcpy(out, b, (size_t)(b_end - b));
}

/* One pass: merge neighbouring runs of `from` (bounds in ends[0..nr)) into `to`; the run
 * bounds are updated in place. @return the new number of runs. */
static size_t merge_pass(const char *from, char *to, size_t size, size_t *ends, size_t nr,
                         sort_cmp cmp)
{
    size_t out = 0, start = 0;
    for (size_t r = 0; r < nr; r += 2) {
        size_t mid = ends[r], stop = r + 1 < nr ? ends[r + 1] : mid;
        merge2(from + start * size, from + mid * size, from + mid * size, from + stop * size,
               to + start * size, size, cmp);
        ends[out++] = stop;
        start = stop;
    }
    return out;
}

#define SORT_RUNS_MAX 64 /* more runs than this is not "a few": qsort */

void sort_runs(void *base, size_t n, size_t size, sort_cmp cmp)
{
    size_t ends[SORT_RUNS_MAX], nr = 0;
    char *tmp = NULL;
    for (size_t i = 0; i < n && nr <= SORT_RUNS_MAX;)
        if (nr < SORT_RUNS_MAX)
            i = ends[nr++] = run_end(base, n, size, i, cmp);
        else
            nr++; /* a run beyond the last that fits: too many */
    if (nr <= 1)
        return;
    if (nr > SORT_RUNS_MAX || !(tmp = malloc(n * size))) {
        qsort(base, n, size, cmp);
        return;
    }
    char *from = base, *to = tmp;
    while (nr > 1) {
        nr = merge_pass(from, to, size, ends, nr, cmp);
        char *swap = from;
        from = to;
        to = swap;
    }
    if (from != base)
        memcpy(base, from, n * size);
    free(tmp);
}
