/* A rank's part from its trace or its summary (job_parts.h). */
#include "job_parts.h"

#include <stdlib.h>
#include <string.h>

static gp_status part_of(const gp_analysis *a, void *ud, gp_error *err)
{
    return gp_job_part_new(a, &((struct rank_part *)ud)->part, err);
}

static void from_trace(struct rank_part *r)
{
    r->rc = trace_analysed(r->path, &r->warnings, part_of, r, &r->err);
    for (size_t i = 0; r->rc == GP_OK && i < r->warnings.n; i++)
        r->rc = gp_job_part_add_note(r->part, r->warnings.v[i], &r->err);
}

static void from_summary(struct rank_part *r)
{
    r->rc = gp_job_summary_read(r->path, &r->part, &r->err);
    size_t n = 0;
    const char *const *notes = r->rc == GP_OK ? gp_job_part_notes(r->part, &n) : NULL;
    r->warnings.v = calloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; r->warnings.v && i < n; i++)
        if ((r->warnings.v[r->warnings.n] = strdup(notes[i])) != NULL)
            r->warnings.n++;
}

void rank_part_load(size_t i, void *ud)
{
    struct rank_part *r = &((struct rank_part *)ud)[i];
    gp_error_clear(&r->err);
    size_t n = strlen(r->path), k = strlen(TRACE_SUMMARY_SUFFIX);
    /* by its name, else by its first bytes; the reader checks the schema either way */
    r->summary =
            (n > k && !strcmp(r->path + n - k, TRACE_SUMMARY_SUFFIX)) || gp_job_is_summary(r->path);
    if (r->summary)
        from_summary(r);
    else
        from_trace(r);
}
