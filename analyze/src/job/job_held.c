/* How long the others waited for a late rank: GT16's cost. Summing the lag at every collective
 * counted a wait twice where it overlapped the waiting rank's own compute (a gradient bucket's
 * all-reduce waiting beside the backward kernels) or another wait on a second stream: a 0.15 ms
 * straggler with 16 compute kernels a step was reported 0.30 ms. Here, over the collectives
 * where a rank was late, each rank's calls form a union, less its own compute kernels: the time
 * those collectives left it with nothing to do. The late rank's cost is how much more that is
 * for the others (their median) than for itself: what they spent waiting for it, once, and
 * the transfers its lateness pushed out from beside their compute; the transfers every rank
 * spends anyway cancel. */
#include "job/job_int.h"

#include <stdlib.h>

gp_status job_wait_add(gp_job_part *p, const struct job_wait *w)
{
    if (p->n_waits == p->cap_waits) {
        size_t cap = p->cap_waits ? p->cap_waits * 2 : 64;
        struct job_wait *v = realloc(p->waits, cap * sizeof(*v));
        if (!v)
            return GP_ENOMEM;
        p->waits = v, p->cap_waits = cap;
    }
    p->waits[p->n_waits++] = *w;
    return GP_OK;
}

#define NO_WAIT    (-1) /* exposed_wait: the part never waited for `last` */
#define WAIT_NOMEM (-2) /* exposed_wait: out of memory */

/* Part `p`'s calls where part `last` was late, merged, less its compute; NO_WAIT without any. */
static int64_t exposed_wait(const gp_job_part *p, size_t last, struct rules_ivs *v)
{
    v->n = 0;
    for (size_t i = 0; i < p->n_waits; i++)
        if (p->waits[i].last == last && rules_ivs_push(v, p->waits[i].ts, p->waits[i].end))
            return WAIT_NOMEM;
    if (!v->n)
        return NO_WAIT;
    rules_ivs_merge(v);
    int64_t sum = 0;
    for (size_t i = 0; i < v->n; i++)
        sum += (v->iv[i][1] - v->iv[i][0]) -
               rules_ivs_overlap(&p->compute, v->iv[i][0], v->iv[i][1]);
    return sum;
}

gp_status job_held(gp_job *j)
{
    struct rules_ivs v = {0};
    int64_t *x = calloc(j->n, sizeof(int64_t));
    gp_status rc = x ? GP_OK : GP_ENOMEM;
    for (size_t l = 0; rc == GP_OK && l < j->n; l++) {
        size_t m = 0;
        int64_t own = j->ranks[l].n_last ? exposed_wait(j->parts[l], l, &v) : NO_WAIT;
        for (size_t r = 0; own >= 0 && r < j->n; r++) {
            int64_t e = r != l ? exposed_wait(j->parts[r], l, &v) : NO_WAIT;
            if (e == WAIT_NOMEM)
                own = WAIT_NOMEM;
            else if (e >= 0)
                x[m++] = e;
        }
        rc = own == WAIT_NOMEM ? GP_ENOMEM : rc;
        int64_t others = m ? job_median(x, m) : 0;
        j->ranks[l].held = own >= 0 && others > own ? others - own : 0;
    }
    free(x);
    free(v.iv);
    return rc;
}
