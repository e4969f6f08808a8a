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
    return export_lanes_place_from(ls, ts, end, 0);
}

int export_lanes_place_from(export_lanes *ls, int64_t ts, int64_t end, uint32_t first)
{
    while (ls->n < first)
        if (!add_lane(ls))
            return -1;
    for (uint32_t k = first;; k++) {
        if (k == ls->n && !add_lane(ls))
            return -1;
        export_lane *l = &ls->v[k];
        export_lanes_close(ls, k, ts, NULL, NULL);
        if (l->depth == 0 || end <= l->ends[l->depth - 1])
            return lane_push(l, end) ? (int)k : -1;
    }
}

/* The sweep below keeps open ranges of one kind as a lane's stack of event indices. */
static int64_t open_end(const export_lane *s, const gp_event *ev, size_t k)
{
    return ev[s->ends[k]].ts + ev[s->ends[k]].dur;
}

static void open_close(export_lane *s, const gp_event *ev, int64_t ts)
{
    while (s->depth && open_end(s, ev, s->depth - 1) <= ts)
        s->depth--;
}

int export_lanes_python_conflicts(const gp_event *ev, uint32_t first, uint32_t count,
                                  uint8_t *conflict)
{
    export_lane op = {0}, py = {0};
    int ok = 1;
    for (uint32_t i = first; ok && i < first + count; i++) {
        const gp_event *e = &ev[i];
        int64_t end = e->ts + e->dur;
        if (e->ph != 'X')
            continue;
        open_close(&op, ev, e->ts);
        open_close(&py, ev, e->ts);
        if (e->kind == GP_EV_PYTHON) { /* it starts inside an op and ends after it */
            conflict[i - first] |= op.depth && open_end(&op, ev, op.depth - 1) < end;
            ok = lane_push(&py, i);
            continue;
        }
        /* the frames it starts inside of and outlasts: innermost first, they end earliest */
        for (size_t k = py.depth; k-- > 0 && open_end(&py, ev, k) < end;)
            conflict[py.ends[k] - first] = 1;
        ok = lane_push(&op, i);
    }
    free(op.ends);
    free(py.ends);
    return ok ? 0 : -1;
}

void export_lanes_free(export_lanes *ls)
{
    for (uint32_t k = 0; k < ls->cap; k++)
        free(ls->v[k].ends);
    free(ls->v);
    memset(ls, 0, sizeof *ls);
}
