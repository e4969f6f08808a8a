/* A finished job as text (the rank table, the longest waits, GT16), one JSON document
 * ("gprof-train.job/1") or NDJSON: a line per rank and, optionally, per rank x operation, for
 * DuckDB, Spark or pandas to aggregate across many machines. */
#include "gp/json_str.h"
#include "job/job_int.h"

#include <stdlib.h>
#include <string.h>

gp_status gp_job_format_parse(const char *s, gp_job_format *out, gp_error *err)
{
    static const char *const names[] = {"text", "json", "ndjson"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, names[i])) {
            *out = (gp_job_format)i;
            return GP_OK;
        }
    return gp_error_set(err, GP_EINVAL, NULL, "unknown format '%s': expected text, json or ndjson",
                        s);
}

static void json_str(FILE *f, const char *s)
{
    gp_json_put_str(f, s ? s : "");
}

static double us(int64_t ns)
{
    return (double)ns / 1e3;
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

/* ---- text ---- */

static void text_ranks(FILE *f, const gp_job *j)
{
    fprintf(f, "%5s %10s %10s %10s %10s %10s %10s %10s %8s %10s %10s %10s  %s\n", "rank",
            "step mean", "step p95", "compute", "comm", "exposed", "GPU idle", "DataLoader",
            "late at", "held", "waited", "clock", "trace");
    for (size_t i = 0; i < j->n; i++) {
        const gp_job_rank *r = &j->ranks[i];
        fprintf(f,
                "%5d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %8llu %10.3f %10.3f "
                "%10.3f  %s\n",
                r->rank, ms(r->step_mean), ms(r->step_p95), ms(r->compute), ms(r->comm),
                ms(r->exposed_comm), ms(r->idle), ms(r->loader), (unsigned long long)r->n_last,
                ms(r->held), ms(r->waited), ms(r->clock_offset), r->path);
    }
}

static int cmp_waited(const void *pa, const void *pb)
{
    const gp_job_collective *a = *(const gp_job_collective *const *)pa;
    const gp_job_collective *b = *(const gp_job_collective *const *)pb;
    if (a->waited != b->waited)
        return a->waited < b->waited ? 1 : -1;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static gp_status text_waits(FILE *f, const gp_job *j)
{
    const gp_job_collective **v = calloc(j->n_colls + 1, sizeof(*v));
    if (!v)
        return GP_ENOMEM;
    for (size_t i = 0; i < j->n_colls; i++)
        v[i] = &j->colls[i];
    qsort(v, j->n_colls, sizeof(*v), cmp_waited);
    if (j->n_colls == 0 || v[0]->waited == 0) {
        fprintf(f, "\nno rank waited for another at any of the %zu collectives\n", j->n_colls);
        free(v);
        return GP_OK;
    }
    fprintf(f, "\ncollectives that waited longest (of %zu):\n", j->n_colls);
    fprintf(f, "%6s %5s %-14s %6s %10s %12s\n", "step", "#", "op", "last", "lag ms", "waited ms");
    for (size_t i = 0; i < j->n_colls && i < 10 && v[i]->waited > 0; i++)
        fprintf(f, "%6lld %5u %-14s %6d %10.3f %12.3f\n", (long long)v[i]->step, v[i]->index,
                v[i]->op, v[i]->last_rank, ms(v[i]->lag), ms(v[i]->waited));
    free(v);
    return GP_OK;
}

/* What the clocks say: the offsets applied, and how far apart matched collectives still end. */
static void text_clocks(FILE *f, const gp_job *j)
{
    int64_t worst = 0;
    for (size_t i = 0; i < j->n; i++)
        worst = llabs(j->ranks[i].clock_offset) > worst ? llabs(j->ranks[i].clock_offset) : worst;
    if (j->clocks_aligned)
        fprintf(f, "clocks: aligned on collectives (largest offset %.3f ms); ", ms(worst));
    else if (j->n_colls)
        fprintf(f, "clocks: agree on collectives (offsets under %g us); ", j->p[JOB_CLOCK_US]);
    else
        fprintf(f, "clocks: no collective matched to compare them\n");
    if (j->n_colls)
        fprintf(f, "matched collectives end within %.1f us of each other\n", us(j->end_spread));
}

static void text_unmatched(FILE *f, const gp_job *j)
{
    uint64_t un = j->n_alone + j->n_disagree;
    if (un)
        fprintf(f, "unmatched: %llu of %llu calls (%llu with no counterpart on another rank",
                (unsigned long long)un, (unsigned long long)j->n_calls,
                (unsigned long long)j->n_alone);
    if (j->n_disagree)
        fprintf(f, ", %llu ending over %.3f ms from theirs after alignment: another collective",
                (unsigned long long)j->n_disagree, ms(j->match_tol));
    if (un)
        fputs(")\n", f);
    if (j->world_size > (int)j->n)
        fprintf(f,
                "ranks: %zu of the %d in distributedInfo.world_size; a straggler among the "
                "others is not seen\n",
                j->n, j->world_size);
}

static gp_status write_text(FILE *f, const gp_job *j, gp_error *err)
{
    fprintf(f, "job: %zu ranks, %zu steps every rank has, %zu collectives matched\n", j->n,
            j->n_common, j->n_colls);
    text_clocks(f, j);
    text_unmatched(f, j);
    fprintf(f, "times in ms, per step\n\n");
    text_ranks(f, j);
    GP_TRY(text_waits(f, j));
    fputc('\n', f);
    const gp_findings *fs = j->findings;
    return gp_findings_write(f, &fs, 1, GP_FINDINGS_TEXT, err);
}

/* ---- JSON and NDJSON ---- */

static void json_rank(FILE *f, const gp_job_rank *r)
{
    fprintf(f, "\"rank\":%d,\"rank_from\":", r->rank);
    json_str(f, r->rank_from);
    fputs(",\"host\":", f);
    json_str(f, r->host);
    fputs(",\"trace\":", f);
    json_str(f, r->path);
    fprintf(f,
            ",\"steps\":%zu,\"step_mean_us\":%.3f,\"step_p95_us\":%.3f,\"compute_us\":%.3f,"
            "\"comm_us\":%.3f,\"exposed_comm_us\":%.3f,\"idle_us\":%.3f,\"dataloader_us\":%.3f,"
            "\"clock_offset_us\":%.3f,\"collectives\":%llu,\"late_at\":%llu,\"held_us\":%.3f,"
            "\"waited_us\":%.3f",
            r->n_steps, us(r->step_mean), us(r->step_p95), us(r->compute), us(r->comm),
            us(r->exposed_comm), us(r->idle), us(r->loader), us(r->clock_offset),
            (unsigned long long)r->n_collectives, (unsigned long long)r->n_last, us(r->held),
            us(r->waited));
}

/* A line per collective: the table of the slowest and longest-waited collectives. */
static void ndjson_colls(FILE *f, const gp_job *j, const char *job)
{
    for (size_t i = 0; i < j->n_colls; i++) {
        const gp_job_collective *c = &j->colls[i];
        fputs("{\"kind\":\"collective\",\"job\":", f);
        json_str(f, job ? job : "");
        fprintf(f,
                ",\"step\":%lld,\"index\":%u,\"op\":\"%s\",\"ranks\":%u,\"last_rank\":%d,"
                "\"lag_us\":%.3f,\"waited_us\":%.3f,\"transfer_us\":%.3f}\n",
                (long long)c->step, c->index, c->op, c->n_ranks, c->last_rank, us(c->lag),
                us(c->waited), us(c->transfer));
    }
}

static gp_status write_ndjson(FILE *f, const gp_job *j, unsigned flags, const char *job)
{
    for (size_t i = 0; i < j->n; i++) {
        fputs("{\"kind\":\"rank\",\"job\":", f);
        json_str(f, job ? job : "");
        fputc(',', f);
        json_rank(f, &j->ranks[i]);
        fputs("}\n", f);
        for (int op = 0; (flags & GP_JOB_PER_OP) && op < JOB_N_OPS; op++) {
            const gp_job_part *p = j->parts[i];
            if (!p->op_calls[op])
                continue;
            fputs("{\"kind\":\"rank_op\",\"job\":", f);
            json_str(f, job ? job : "");
            fprintf(f,
                    ",\"rank\":%d,\"op\":\"%s\",\"calls\":%llu,\"time_us\":%.3f,"
                    "\"waited_us\":%.3f}\n",
                    p->rank, job_ops[op], (unsigned long long)p->op_calls[op], us(p->op_time[op]),
                    us(p->op_waited[op]));
        }
    }
    if (flags & GP_JOB_PER_COLL)
        ndjson_colls(f, j, job);
    return GP_OK;
}

/* The slowest and fastest rank of each common step. */
static void json_steps(FILE *f, const gp_job *j)
{
    fputs("\"steps\":[", f);
    for (size_t c = 0; c < j->n_common; c++) {
        int64_t num = j->common_steps[c], mx = -1, mn = INT64_MAX;
        int slow = -1;
        for (size_t r = 0; r < j->n; r++)
            for (size_t s = 0; s < j->parts[r]->n_steps; s++) {
                const struct job_step *st = &j->parts[r]->steps[s];
                if (st->num != num)
                    continue;
                if (st->dur > mx)
                    mx = st->dur, slow = j->parts[r]->rank;
                mn = st->dur < mn ? st->dur : mn;
            }
        fprintf(f, "%s{\"step\":%lld,\"slowest_rank\":%d,\"max_us\":%.3f,\"min_us\":%.3f}",
                c ? "," : "", (long long)num, slow, us(mx), us(mn));
    }
    fputs("]", f);
}

static void json_colls(FILE *f, const gp_job *j)
{
    fputs("\"collectives\":[", f);
    for (size_t i = 0; i < j->n_colls; i++) {
        const gp_job_collective *c = &j->colls[i];
        fprintf(f,
                "%s{\"step\":%lld,\"index\":%u,\"op\":\"%s\",\"ranks\":%u,\"last_rank\":%d,"
                "\"lag_us\":%.3f,\"waited_us\":%.3f}",
                i ? "," : "", (long long)c->step, c->index, c->op, c->n_ranks, c->last_rank,
                us(c->lag), us(c->waited));
    }
    fputs("]", f);
}

static gp_status write_json(FILE *f, const gp_job *j, gp_error *err)
{
    fprintf(f,
            "{\"schema\":\"gprof-train.job/1\",\"n_ranks\":%zu,\"world_size\":%d,"
            "\"clocks_aligned\":%s,\"end_spread_us\":%.3f,\"calls\":%llu,\"unmatched\":"
            "{\"alone\":%llu,\"ends_disagree\":%llu},\"ranks\":[",
            j->n, j->world_size, j->clocks_aligned ? "true" : "false", us(j->end_spread),
            (unsigned long long)j->n_calls, (unsigned long long)j->n_alone,
            (unsigned long long)j->n_disagree);
    for (size_t i = 0; i < j->n; i++) {
        fputs(i ? ",{" : "{", f);
        json_rank(f, &j->ranks[i]);
        fputc('}', f);
    }
    fputs("],", f);
    json_steps(f, j);
    fputc(',', f);
    json_colls(f, j);
    fputs(",\"diagnose\":", f);
    const gp_findings *fs = j->findings;
    GP_TRY(gp_findings_write(f, &fs, 1, GP_FINDINGS_JSON, err));
    fputs("}\n", f);
    return GP_OK;
}

gp_status gp_job_write(FILE *out, const gp_job *j, gp_job_format format, unsigned flags,
                       const char *job, gp_error *err)
{
    GP_FAIL_IF(!j->ranks, GP_EINVAL, err, "the job is not finished");
    gp_status rc = format == GP_JOB_TEXT   ? write_text(out, j, err)
                   : format == GP_JOB_JSON ? write_json(out, j, err)
                                           : write_ndjson(out, j, flags, job);
    if (rc == GP_OK && ferror(out))
        rc = gp_error_set(err, GP_EIO, NULL, "cannot write the job: %s", "write error");
    return rc;
}
