/* rules_periodic.c: do marked steps come every N steps (GT14's outliers, GT19's waits between
 * operators)? */
#include "rules/rules_int.h"

#include <stdlib.h>

int rules_cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

/* Are the outlier steps (their indices among the analysed steps, ascending) evenly spaced, as a
 * stall that comes every N steps leaves them (a checkpoint, evaluation, logging, GC every so
 * many allocations)? At least 3/4 of the spacings within a quarter of their median (exactly the
 * median under 4), and that median at least 2: a run of consecutive slow steps is a burst (the
 * machine's load: a PyTorch loop beside two busy loops, steps 3-5 of 11 at 2-3x the median), as
 * a stall every step would be no outlier. Under 3 outliers nothing tells: taken as periodic. */
int rules_periodic(const size_t *at, size_t n)
{
    if (n < 3)
        return 1;
    size_t *gap = malloc((n - 1) * sizeof(*gap)), near = 0;
    if (!gap)
        return 1;
    for (size_t i = 0; i + 1 < n; i++)
        gap[i] = at[i + 1] - at[i];
    qsort(gap, n - 1, sizeof(*gap), rules_cmp_size);
    size_t med = gap[(n - 1) / 2], tol = med / 4;
    for (size_t i = 0; i + 1 < n; i++)
        near += gap[i] + tol >= med && gap[i] <= med + tol;
    free(gap);
    return med >= 2 && 4 * near >= 3 * (n - 1);
}
