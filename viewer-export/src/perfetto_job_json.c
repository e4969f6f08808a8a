/* viewer-export/src/perfetto_job_json.c: gp_export_job_perfetto(): a job's ranks on one timeline
 * in Chrome JSON, as perfetto_job.c writes it in protobuf: a process "rank N (clock ...)" per
 * rank holding a thread per track of its trace ("GPU 0 / stream 7", "python / thread 12"), its
 * times moved onto the job's aligned clock, and a "collective waits" thread (overlapping waits
 * on "collective waits (overlap K)") of slices "wait for rank L (OP)". baseTimeNanoseconds is the
 * job's time 0 (aligned unix ns). */
#include "gp/export.h"
#include "export_int.h"

#include <stdio.h>
#include <stdlib.h>

#define RANK_PID(r) (EXPORT_SYNTH_ID_BASE + 2 + (r))
#define WAIT_TID    1 /* synthetic tids of the events start far above (EXPORT_SYNTH_ID_BASE) */

/* The output and whether nothing is in traceEvents yet (no comma before the first event). */
typedef struct jw {
    export_out *o;
    int first;
} jw;

static void sep(jw *w)
{
    export_out_puts(w->o, w->first ? "\n" : ",\n");
    w->first = 0;
}

static void rank_meta(jw *w, int64_t pid, int64_t tid, const char *what, const char *name,
                      long long sort)
{
    sep(w);
    export_out_printf(w->o,
                      "{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%lld,\"tid\":%lld,"
                      "\"args\":{",
                      what, (long long)pid, (long long)tid);
    if (name) {
        export_out_puts(w->o, "\"name\":");
        export_out_json_str(w->o, name);
    } else {
        export_out_printf(w->o, "\"sort_index\":%lld", sort);
    }
    export_out_puts(w->o, "}}");
}

static void wait_slice(jw *w, int64_t pid, int64_t tid, const gp_job_wait *v, int64_t t0)
{
    sep(w);
    export_out_printf(w->o,
                      "{\"ph\":\"X\",\"cat\":\"gprof_wait\",\"name\":\"wait for rank %d (%s)\","
                      "\"pid\":%lld,\"tid\":%lld,\"ts\":",
                      v->last_rank, v->op, (long long)pid, (long long)tid);
    export_out_us(w->o, v->ts - t0);
    export_out_puts(w->o, ",\"dur\":");
    export_out_us(w->o, v->until - v->ts);
    export_out_printf(w->o, ",\"args\":{\"waited for rank\":%d,\"wait ns\":%lld}}", v->last_rank,
                      (long long)(v->until - v->ts));
}

/* Rank i's waits, each on the first lane (thread) where it nests. */
static gp_status waits_thread(jw *w, const gp_job *j, size_t i, int64_t pid, int64_t t0)
{
    size_t m;
    gp_job_wait *v = export_job_waits(j, i, &m);
    if (!v)
        return GP_ENOMEM;
    export_lanes lanes = {0};
    gp_status rc = GP_OK;
    char name[64];
    for (size_t k = 0; k < m && rc == GP_OK; k++) {
        uint32_t had = lanes.n;
        int lane = export_lanes_place(&lanes, v[k].ts, v[k].until);
        rc = lane < 0 ? GP_ENOMEM : GP_OK;
        for (uint32_t l = had; rc == GP_OK && l < lanes.n; l++) {
            snprintf(name, sizeof name, l ? "collective waits (overlap %u)" : "collective waits",
                     l);
            rank_meta(w, pid, WAIT_TID + l, "thread_name", name, 0);
            rank_meta(w, pid, WAIT_TID + l, "thread_sort_index", NULL, -1000 + (long long)l);
        }
        if (rc == GP_OK)
            wait_slice(w, pid, WAIT_TID + lane, &v[k], t0);
    }
    export_lanes_free(&lanes);
    free(v);
    return rc;
}

static gp_status one_rank(jw *w, const gp_job *j, size_t i, int64_t t0,
                          const gp_export_rank_reader *rd, gp_error *err)
{
    export_job_rank x;
    GP_TRY(export_job_open_rank(j, i, t0, rd, &x, err));
    export_ev_opts eo = {.mode = EXPORT_EV_PERFETTO,
                         .t0 = x.shift,
                         .job_pid = RANK_PID(x.r->rank),
                         .flow_base = (int64_t)i << 32};
    char name[160];
    rank_meta(w, eo.job_pid, 0, "process_name", export_job_rank_name(x.r, name, sizeof name), 0);
    rank_meta(w, eo.job_pid, 0, "process_sort_index", NULL, x.r->rank);
    gp_status rc = export_write_events(w->o, x.a, &eo, &w->first, err);
    if (rc == GP_OK && (rc = waits_thread(w, j, i, eo.job_pid, t0)) != GP_OK)
        gp_error_set(err, rc, x.r->path, "out of memory");
    rd->close(rd->ud, x.a);
    return rc;
}

gp_status gp_export_job_perfetto(const gp_job *j, const gp_export_rank_reader *rd,
                                 const gp_export_opts *opts, const char *path, gp_error *err)
{
    GP_TRY(export_job_check_aligned(j, err));
    size_t n;
    gp_job_ranks(j, &n);
    int64_t t0 = export_job_t0(j);
    export_out o;
    GP_TRY(export_out_open(&o, path, opts, err));
    export_out_printf(&o,
                      "{\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":%lld,"
                      "\"traceEvents\":[",
                      (long long)t0);
    jw w = {&o, 1};
    gp_status rc = GP_OK;
    for (size_t i = 0; i < n && rc == GP_OK; i++)
        rc = one_rank(&w, j, i, t0, rd, err);
    if (rc != GP_OK) {
        export_out_abort(&o);
        return rc;
    }
    export_out_puts(&o, "\n]}\n");
    return export_out_close(&o, err);
}
