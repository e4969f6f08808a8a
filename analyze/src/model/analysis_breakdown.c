/* analysis_breakdown.c: tb_plugin's priority sweep: each step's time split by category. */
#include "model/analysis_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NO_ROLE (-1) /* role_of: counted in no breakdown bucket */

/* The breakdown role of an event, or NO_ROLE (steps themselves, instants, ...). */
static int role_of(const gp_analysis *a, uint32_t i)
{
    const gp_event *e = &a->ev[i];
    uint32_t op = a->op_of[i];
    switch (e->kind) {
    case GP_EV_KERNEL:
        return (e->flags & GP_EVF_COMM) || (op != GP_NONE && (a->ev[op].flags & GP_EVF_COMM))
                       ? GP_BD_COMMUNICATION
                       : GP_BD_KERNEL;
    case GP_EV_MEMCPY:
        return GP_BD_MEMCPY;
    case GP_EV_MEMSET:
        return GP_BD_MEMSET;
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
        return GP_BD_RUNTIME;
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION: /* Python frames (python_function) have no role: Other, as tb */
        if (e->flags & GP_EVF_STEP)
            return NO_ROLE;
        if (e->flags & GP_EVF_DATALOADER)
            return GP_BD_DATALOADER;
        return (e->flags & GP_EVF_COMM) ? GP_BD_COMMUNICATION : GP_BD_CPU_EXEC;
    default:
        return NO_ROLE;
    }
}

/* Intervals of role r overlapping [lo, hi): a sub-array of the merged list. */
static const ival *role_window(const ival *v, size_t n, int64_t lo, int64_t hi, size_t *out_n)
{
    size_t b = 0, e = n;
    while (b < e) {
        size_t m = (b + e) / 2;
        if (v[m].b <= lo)
            b = m + 1;
        else
            e = m;
    }
    size_t k = b;
    while (k < n && v[k].a < hi)
        k++;
    *out_n = k - b;
    return v + b;
}

static void sweep_step(gp_step *s, ival *const role[], const size_t nrole[], ival *buf[2])
{
    size_t ns = 1;
    buf[0][0] = (ival){s->ts, s->end};
    int cur = 0;
    for (int r = 0; r < GP_BD_OTHER; r++) {
        size_t nw;
        const ival *w = role_window(role[r], nrole[r], s->ts, s->end, &nw);
        size_t nn = ival_subtract(buf[cur], ns, w, nw, buf[!cur]);
        s->bd[r] = ival_total(buf[cur], ns) - ival_total(buf[!cur], nn);
        cur = !cur;
        ns = nn;
    }
    s->bd[GP_BD_OTHER] = ival_total(buf[cur], ns);
}

/* Room the sweep of one step needs: the step plus every role interval it can cut. */
static size_t sweep_room(const gp_step *s, ival *const role[], const size_t nrole[])
{
    size_t need = 2;
    for (int r = 0; r < GP_BD_OTHER; r++) {
        size_t nw;
        role_window(role[r], nrole[r], s->ts, s->end, &nw);
        need += nw;
    }
    return need;
}

/* The merged intervals of role r, shrunk to fit; built one role at a time so that only one
 * unmerged list (not one per event of every role) is alive at once. */
static ival *role_intervals(const gp_analysis *a, const int8_t *roles, int r, size_t count,
                            size_t *n)
{
    ival *v = malloc((count + 1) * sizeof(ival));
    if (!v)
        return NULL;
    size_t k = 0;
    for (uint32_t i = 0; i < a->n && k < count; i++)
        if (roles[i] == r)
            v[k++] = (ival){a->ev[i].ts, a->ev[i].ts + a->ev[i].dur};
    *n = ival_merge(v, k);
    ival *fit = realloc(v, (*n + 1) * sizeof(ival));
    return fit ? fit : v;
}

gp_status analysis_breakdown(gp_analysis *a)
{
    ival *role[GP_BD_OTHER] = {0};
    size_t nrole[GP_BD_OTHER] = {0}, room = 2;
    int8_t *roles = malloc(a->n + 1); /* 1 byte per event, -1 = no role */
    gp_status rc = GP_ENOMEM;
    if (!roles)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < a->n; i++) {
        int r = a->ev[i].dur > 0 ? role_of(a, i) : NO_ROLE;
        roles[i] = (int8_t)r;
        if (r >= 0)
            nrole[r]++;
    }
    for (int r = 0; r < GP_BD_OTHER; r++)
        if (!(role[r] = role_intervals(a, roles, r, nrole[r], &nrole[r])))
            goto out;
    free(roles);
    roles = NULL;
    for (size_t k = 0; k < a->steps.n; k++) {
        size_t need = sweep_room(TRACE_VEC_AT(&a->steps, gp_step, k), role, nrole);
        room = need > room ? need : room;
    }
    ival *buf[2] = {malloc(room * sizeof(ival)), malloc(room * sizeof(ival))};
    for (size_t k = 0; k < a->steps.n && buf[0] && buf[1]; k++)
        sweep_step(TRACE_VEC_AT(&a->steps, gp_step, k), role, nrole, buf);
    rc = buf[0] && buf[1] ? GP_OK : GP_ENOMEM;
    free(buf[0]);
    free(buf[1]);
out:
    free(roles);
    for (int r = 0; r < GP_BD_OTHER; r++)
        free(role[r]);
    return rc;
}
