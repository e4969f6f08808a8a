/* A rank's part as a summary ("gprof-train.summary/1"): what `job` needs of the rank's trace,
 * a few KB to a few hundred KB, so the traces can be summarised where they are (a Dask worker,
 * a Slurm array task) and only the summaries travel. Its compute kernels are kept only where
 * they overlap its collectives: the only place `job` looks at them (job_held.c). */
#include "gp/json_str.h"
#include "job/job_int.h"

#include <stdlib.h>

/* Its compute union clipped to the union of its calls: what GT16's cost reads of it. */
static gp_status compute_at_calls(const gp_job_part *p, struct rules_ivs *out)
{
    struct rules_ivs calls = {0};
    gp_status rc = GP_OK;
    for (size_t i = 0; rc == GP_OK && i < p->n_calls; i++)
        rc = rules_ivs_push(&calls, p->calls[i].ts, p->calls[i].end);
    if (rc == GP_OK)
        rules_ivs_merge(&calls);
    for (size_t i = 0, k = 0; rc == GP_OK && i < calls.n; i++) {
        int64_t a = calls.iv[i][0], b = calls.iv[i][1];
        for (k = rules_ivs_lower(&p->compute, a); k < p->compute.n; k++) {
            int64_t s = p->compute.iv[k][0], e = p->compute.iv[k][1];
            if (s >= b)
                break;
            s = s > a ? s : a, e = e < b ? e : b;
            if (e > s && (rc = rules_ivs_push(out, s, e)) != GP_OK)
                break;
        }
    }
    free(calls.iv);
    if (rc == GP_OK)
        rules_ivs_merge(out);
    return rc;
}

static void write_head(FILE *f, const gp_job_part *p)
{
    fputs("{\"schema\":\"" GP_JOB_SUMMARY_SCHEMA "\",\"trace\":", f);
    gp_json_put_str(f, p->path);
    fprintf(f, ",\"rank\":%d,\"rank_from\":", p->rank);
    gp_json_put_str(f, p->rank_from);
    fprintf(f, ",\"world_size\":%d,\"host\":", p->world_size);
    gp_json_put_str(f, p->host);
    fprintf(f, ",\"base_time_ns\":%lld,\n\"lost\":[", (long long)p->base_time_ns);
    for (size_t i = 0; i < p->n_notes; i++) {
        fputs(i ? "," : "", f);
        gp_json_put_str(f, p->notes[i]);
    }
    fputs("],\n\"steps\":[", f);
    for (size_t i = 0; i < p->n_steps; i++) {
        const struct job_step *s = &p->steps[i];
        fprintf(f,
                "%s\n{\"step\":%lld,\"dur_ns\":%lld,\"compute_ns\":%lld,\"comm_ns\":%lld,"
                "\"exposed_ns\":%lld,\"idle_ns\":%lld,\"dataloader_ns\":%lld}",
                i ? "," : "", (long long)s->num, (long long)s->dur, (long long)s->compute,
                (long long)s->comm, (long long)s->exposed, (long long)s->idle,
                (long long)s->loader);
    }
}

static void write_calls(FILE *f, const gp_job_part *p)
{
    fputs("],\n\"collectives\":[", f);
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct job_call *c = &p->calls[i];
        fprintf(f, "%s\n{\"step\":%lld,\"op\":\"%s\",", i ? "," : "", (long long)c->step,
                job_ops[c->op]);
        if (c->name != JOB_NONE) {
            fputs("\"name\":", f);
            gp_json_put_str(f, p->strs[c->name]);
            fputc(',', f);
        }
        if (c->pg != JOB_NONE) {
            fputs("\"pg\":", f);
            gp_json_put_str(f, p->strs[c->pg]);
            fputc(',', f);
        }
        fprintf(f, "\"stream\":%lld,\"seq\":%lld,\"size\":%lld,\"ts_ns\":%lld,\"end_ns\":%lld}",
                (long long)c->stream, (long long)c->seq, (long long)c->nelems, (long long)c->ts,
                (long long)c->end);
    }
}

gp_status gp_job_summary_write(FILE *f, const gp_job_part *p, gp_error *err)
{
    struct rules_ivs comp = {0};
    if (compute_at_calls(p, &comp) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, p->path, "out of memory");
    write_head(f, p);
    write_calls(f, p);
    fputs("],\n\"compute_ns\":[", f);
    for (size_t i = 0; i < comp.n; i++)
        fprintf(f, "%s[%lld,%lld]", i ? "," : "", (long long)comp.iv[i][0],
                (long long)comp.iv[i][1]);
    fputs("]}\n", f);
    free(comp.iv);
    if (ferror(f))
        return gp_error_set(err, GP_EIO, p->path, "cannot write its summary");
    return GP_OK;
}
