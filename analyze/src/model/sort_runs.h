/* sort_runs.h: sort an array that is a few sorted runs by merging them (see sort_runs.c). */
#ifndef GP_ANALYZE_SORT_RUNS_H
#define GP_ANALYZE_SORT_RUNS_H

#include <stddef.h>

typedef int (*sort_cmp)(const void *, const void *);

/* Sort base[0..n) (elements of `size` bytes) by cmp, as qsort does. Up to 64 ascending runs
 * are merged (stable, one temporary copy of the array); more runs, or no memory for the copy,
 * fall back to qsort. */
void sort_runs(void *base, size_t n, size_t size, sort_cmp cmp);

#endif
