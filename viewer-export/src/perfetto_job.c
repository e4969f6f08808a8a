/* viewer-export/src/perfetto_job.c: gp_export_job_perfetto_proto(): a job's ranks on one Perfetto
 * timeline (issue 27 §2). Each rank's trace is read again, one at a time, and written on a packet
 * sequence of its own (its strings interned there) under a process "rank N (clock ...)": its
 * processes, threads and GPU streams become child tracks, its times are moved onto the job's
 * aligned clock (the first rank's: unix ns less the rank's clock offset from gp_job), and a
 * "collective waits" track holds a slice for each collective where it waited for a late rank,
 * from its own arrival to the last rank's. Time 0 is the earliest aligned event of the job. */
#include "gp/export.h"
#include "perfetto_px.h"

#include <stdio.h>
#include <stdlib.h>

#define DA_NAME       10 /* DebugAnnotation.name */
#define TE_CATEGORIES 22
#define WAIT_CAT      "gprof_wait"

gp_status export_job_check_aligned(const gp_job *j, gp_error *err)
{
    size_t n;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    for (size_t i = 1; i < n; i++)
        GP_FAIL_IF(r[i].n_clock_refs == 0, GP_EINVAL, err,
                   "%s: rank %d shares no collective with rank %d ('%s'): its clock cannot be "
                   "aligned on the job's; leave it out of the timeline",
                   r[i].path, r[i].rank, r[0].rank, r[0].path);
    return GP_OK;
}

int64_t export_job_t0(const gp_job *j)
{
    size_t n;
    const gp_job_rank *r = gp_job_ranks(j, &n);
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (r[i].start - r[i].clock_offset < t0)
            t0 = r[i].start - r[i].clock_offset;
    return n ? t0 : 0;
}

const char *export_job_rank_name(const gp_job_rank *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "rank %d (clock %+.3f ms, \xc2\xb1%.1f us)", r->rank,
             (double)r->clock_offset / 1e6, (double)r->clock_spread / 1e3);
    return buf;
}

static uint64_t rank_track(px *s, const gp_job_rank *r)
{
    char name[160];
    desc d = {.kind = DESC_PROCESS,
              .uuid = s->next_uuid++,
              .name = export_job_rank_name(r, name, sizeof name),
              .pid = EXPORT_SYNTH_ID_BASE + 2 + r->rank};
    px_track_descriptor(s, &d);
    return d.uuid;
}

/* ---- The waits track: slices placed on lanes so that concurrent waits nest. ---- */

static int cmp_wait(const void *pa, const void *pb)
{
    const gp_job_wait *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->until > b->until ? -1 : a->until < b->until; /* longest first */
}

typedef struct waits_out {
    px *s;
    uint64_t *lane; /* each lane's track */
    uint32_t n_lane;
} waits_out;

static void wait_closed(void *ud, uint32_t k, int64_t end)
{
    waits_out *w = ud;
    px_slice_end(w->s, w->lane[k], end);
}

static void wait_annot(pb_buf *b, const char *name, int64_t v)
{
    pb_begin(b, TE_DEBUG_ANNOTATIONS);
    pb_str(b, DA_NAME, name);
    pb_int(b, DA_INT_VALUE, v);
    pb_end(b);
}

static void wait_slice(px *s, uint64_t track, const gp_job_wait *w)
{
    char name[96];
    snprintf(name, sizeof name, "wait for rank %d (%s)", w->last_rank, w->op);
    px_event_packet_begin(s, w->ts);
    pb_begin(&s->b, PKT_TRACK_EVENT);
    pb_varint(&s->b, TE_TYPE, TYPE_SLICE_BEGIN);
    pb_varint(&s->b, TE_TRACK_UUID, track);
    pb_str(&s->b, TE_CATEGORIES, WAIT_CAT);
    pb_str(&s->b, TE_NAME, name);
    wait_annot(&s->b, "waited for rank", w->last_rank);
    wait_annot(&s->b, "wait ns", w->until - w->ts);
    pb_end(&s->b);
    px_packet_end(s);
}

/* The lane's track, described when it first appears. */
static uint64_t wait_lane(waits_out *w, uint64_t root, uint32_t k)
{
    if (k < w->n_lane)
        return w->lane[k];
    uint64_t *p = realloc(w->lane, (k + 1) * sizeof *p);
    if (!p) {
        w->s->b.failed = 1;
        return 0;
    }
    w->lane = p;
    char name[64];
    snprintf(name, sizeof name, k ? "collective waits (overlap %u)" : "collective waits", k);
    desc d = {.uuid = w->s->next_uuid++, .parent = root, .name = name};
    px_track_descriptor(w->s, &d);
    w->lane[w->n_lane++] = d.uuid;
    return d.uuid;
}

gp_job_wait *export_job_waits(const gp_job *j, size_t i, size_t *n)
{
    size_t all = gp_job_rank_n_waits(j, i), m = 0;
    gp_job_wait *v = malloc((all + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t k = 0; k < all; k++) {
        v[m] = gp_job_rank_wait(j, i, k);
        m += v[m].until > v[m].ts;
    }
    qsort(v, m, sizeof *v, cmp_wait);
    *n = m;
    return v;
}

/* Rank i's waits; the rank's clock is s->t0's (aligned unix ns less the job's time 0). */
static gp_status waits_track(px *s, const gp_job *j, size_t i, uint64_t root)
{
    size_t m;
    gp_job_wait *v = export_job_waits(j, i, &m);
    if (!v)
        return GP_ENOMEM;
    export_lanes lanes = {0};
    waits_out w = {.s = s};
    gp_status rc = GP_OK;
    for (size_t k = 0; k < m && rc == GP_OK; k++) {
        for (uint32_t l = 0; l < lanes.n; l++)
            export_lanes_close(&lanes, l, v[k].ts, wait_closed, &w);
        int lane = export_lanes_place(&lanes, v[k].ts, v[k].until);
        rc = lane < 0 ? GP_ENOMEM : GP_OK;
        if (rc == GP_OK)
            wait_slice(s, wait_lane(&w, root, (uint32_t)lane), &v[k]);
    }
    for (uint32_t l = 0; l < lanes.n && rc == GP_OK; l++)
        export_lanes_close(&lanes, l, INT64_MAX, wait_closed, &w);
    export_lanes_free(&lanes);
    free(w.lane);
    free(v);
    return rc != GP_OK || s->b.failed ? GP_ENOMEM : GP_OK;
}

/* ---- Ranks. ---- */

gp_status export_job_open_rank(const gp_job *j, size_t i, int64_t t0,
                               const gp_export_rank_reader *rd, export_job_rank *x, gp_error *err)
{
    size_t n;
    x->r = &gp_job_ranks(j, &n)[i];
    x->a = NULL;
    GP_TRY(rd->open(rd->ud, x->r->path, &x->a, err));
    x->shift = t0 + x->r->clock_offset - gp_trace_get_info(gp_analysis_trace(x->a))->base_time_ns;
    return GP_OK;
}

static gp_status one_rank(px *s, const gp_job *j, size_t i, int64_t t0,
                          const gp_export_rank_reader *rd, gp_error *err)
{
    export_job_rank x;
    GP_TRY(export_job_open_rank(j, i, t0, rd, &x, err));
    s->seq = (uint32_t)i + 1;
    s->root = rank_track(s, x.r);
    s->flow_base = (uint64_t)i << 40;
    s->t0 = x.shift;                            /* the trace's own times */
    gp_status rc = px_trace_body(s, x.a, NULL); /* first: it opens the sequence */
    s->t0 = t0;                                 /* the waits: aligned unix ns */
    if (rc == GP_OK)
        rc = waits_track(s, j, i, s->root);
    px_trace_done(s);
    rd->close(rd->ud, x.a);
    if (rc != GP_OK)
        return gp_error_set(err, rc, x.r->path, "out of memory");
    return GP_OK;
}

gp_status gp_export_job_perfetto_proto(const gp_job *j, const gp_export_rank_reader *rd,
                                       const gp_export_opts *opts, const char *path, gp_error *err)
{
    GP_TRY(export_job_check_aligned(j, err));
    size_t n;
    gp_job_ranks(j, &n);
    int64_t t0 = export_job_t0(j);
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    px s = {.o = &o, .next_uuid = 1, .next_str_iid = PX_STR_IID0, .seq = 1};
    px_clock_snapshot(&s, t0);
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && rc == GP_OK; i++)
        rc = one_rank(&s, j, i, t0, rd, err);
    pb_free(&s.b);
    if (rc != GP_OK) {
        export_out_abort(&o);
        return rc;
    }
    return export_out_close(&o, err);
}
