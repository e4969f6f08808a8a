/* viewer-export/src/export_lanes.c: the lanes of a track that keep every slice nested. Slices
 * come sorted by start, longest first; each goes to the first lane where it nests inside the
 * slices still open there, or to a new lane. Perfetto's JSON importer drops a slice that
 * partially overlaps its parent and its protobuf tracks need strict nesting, so both Perfetto
 * writers place slices through here. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

static int lane_push(export_lane *l, int64_t end)
{
    if (l->depth == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        int64_t *p = realloc(l->ends, cap * sizeof *p);
        if (!p)
            return 0;
        l->ends = p;
        l->cap = cap;
    }
    l->ends[l->depth++] = end;
    return 1;
}

static int add_lane(export_lanes *ls)
{
    if (ls->n == ls->cap) {
        uint32_t c = ls->cap ? ls->cap * 2 : 4;
        export_lane *p = realloc(ls->v, c * sizeof *p);
        if (!p)
            return 0;
        memset(p + ls->cap, 0, (c - ls->cap) * sizeof *p);
        ls->v = p;
        ls->cap = c;
    }
    ls->n++;
    return 1;
}

void export_lanes_close(export_lanes *ls, uint32_t k, int64_t ts, export_lane_closed closed,
                        void *ud)
{
    export_lane *l = &ls->v[k];
    while (l->depth && l->ends[l->depth - 1] <= ts) {
        l->depth--;
        if (closed)
            closed(ud, k, l->ends[l->depth]);
    }
}

int export_lanes_place(export_lanes *ls, int64_t ts, int64_t end)
{
    for (uint32_t k = 0;; k++) {
        if (k == ls->n && !add_lane(ls))
            return -1;
        export_lane *l = &ls->v[k];
        export_lanes_close(ls, k, ts, NULL, NULL);
        if (l->depth == 0 || end <= l->ends[l->depth - 1])
            return lane_push(l, end) ? (int)k : -1;
    }
}

void export_lanes_free(export_lanes *ls)
{
    for (uint32_t k = 0; k < ls->cap; k++)
        free(ls->v[k].ends);
    free(ls->v);
    memset(ls, 0, sizeof *ls);
}
