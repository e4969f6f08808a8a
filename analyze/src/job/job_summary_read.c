/* A summary ("gprof-train.summary/1", job_summary_write.c) read back into a rank's part, keyed
 * as the part made from its trace is (job_part.c), so `job` gives the same result from either.
 * Unknown fields are skipped (a later /1 may add some); another schema is refused by name. */
#include "job/job_int.h"
#include "reader/json_lex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_FAMILY "gprof-train.summary/"

struct rd {
    json_lex l;
    gp_job_part *p;
    int schema_ok;
};

typedef gp_status (*field_fn)(struct rd *r, const char *key, size_t n, void *ud);
typedef gp_status (*elem_fn)(struct rd *r, void *ud);

static int is_key(const char *key, size_t n, const char *want)
{
    return n == strlen(want) && !memcmp(key, want, n);
}

/* An integer: its digits read here (the times are 19 digits, past json_lex's fast path). */
static gp_status rd_int(struct rd *r, int64_t *v)
{
    int ch = json_lex_ws(&r->l);
    const char *p = r->l.p, *end = r->l.end;
    int neg = p < end && *p == '-';
    p += neg;
    uint64_t x = 0;
    const char *d = p;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_C(1) << 62) / 5) /* x * 10 would pass 2^63 */
            return json_lex_error(&r->l, r->l.p, "integer out of range");
        x = x * 10 + (uint64_t)(*p - '0');
    }
    int more = p < end && (*p == '.' || *p == 'e' || *p == 'E');
    if (ch < 0 || p == d || more || (p - d > 1 && *d == '0') || x > (uint64_t)INT64_MAX)
        return json_lex_error(&r->l, r->l.p, "expected an integer");
    *v = neg ? -(int64_t)x : (int64_t)x;
    r->l.p = p;
    return GP_OK;
}

/* A string (a copy in *out) or null (*out = NULL). */
/* A string (*s, *n: a slice, valid until the next string) or null (*s = NULL). */
static gp_status rd_slice(struct rd *r, const char **s, size_t *n)
{
    int ch = json_lex_ws(&r->l);
    *s = NULL, *n = 0;
    if (ch == 'n')
        return json_lex_skip(&r->l, 1) == GP_OK ? GP_OK : GP_EPARSE;
    if (ch != '"')
        return json_lex_error(&r->l, r->l.p, "expected a string");
    if (json_lex_string(&r->l, s, n) != GP_OK)
        return GP_EPARSE;
    if (memchr(*s, 0, *n))
        return json_lex_error(&r->l, r->l.p, "a string with a NUL character");
    return GP_OK;
}

static gp_status rd_str(struct rd *r, char **out)
{
    const char *s;
    size_t n;
    *out = NULL;
    if (rd_slice(r, &s, &n) != GP_OK)
        return GP_EPARSE;
    if (!s)
        return GP_OK;
    *out = malloc(n + 1);
    if (!*out)
        return json_lex_error(&r->l, r->l.p, "out of memory");
    memcpy(*out, s, n);
    (*out)[n] = 0;
    return GP_OK;
}

static gp_status rd_array(struct rd *r, elem_fn elem, void *ud)
{
    if (json_lex_expect(&r->l, '[', "'['") != GP_OK)
        return GP_EPARSE;
    if (json_lex_ws(&r->l) == ']')
        return r->l.p++, GP_OK;
    for (int more = 1; more;) {
        if (elem(r, ud) != GP_OK || json_lex_next(&r->l, ']', "in an array", &more) != GP_OK)
            return GP_EPARSE;
    }
    return GP_OK;
}

/* An object: field() reads the value of each key it knows, GP_DECLINED skips the others. */
static gp_status rd_object(struct rd *r, field_fn field, void *ud)
{
    if (json_lex_expect(&r->l, '{', "'{'") != GP_OK)
        return GP_EPARSE;
    if (json_lex_ws(&r->l) == '}')
        return r->l.p++, GP_OK;
    for (int more = 1; more;) {
        const char *k;
        size_t n;
        if (json_lex_ws(&r->l) != '"')
            return json_lex_error(&r->l, r->l.p, "expected a key");
        if (json_lex_string(&r->l, &k, &n) != GP_OK || json_lex_expect(&r->l, ':', "':'") != GP_OK)
            return GP_EPARSE;
        char key[32]; /* the slice may be scratch that the value's strings reuse */
        n = n < sizeof(key) ? n : sizeof(key) - 1;
        memcpy(key, k, n);
        gp_status rc = field(r, key, n, ud);
        if (rc == GP_DECLINED)
            rc = json_lex_skip(&r->l, 2);
        if (rc != GP_OK || json_lex_next(&r->l, '}', "in an object", &more) != GP_OK)
            return GP_EPARSE;
    }
    return GP_OK;
}

/* ---- steps ---- */

static gp_status step_field(struct rd *r, const char *key, size_t n, void *ud)
{
    struct job_step *s = ud;
    static const char *const keys[] = {"step",       "dur_ns",  "compute_ns",   "comm_ns",
                                       "exposed_ns", "idle_ns", "dataloader_ns"};
    int64_t *v[] = {&s->num, &s->dur, &s->compute, &s->comm, &s->exposed, &s->idle, &s->loader};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (is_key(key, n, keys[i]))
            return rd_int(r, v[i]);
    return GP_DECLINED;
}

static gp_status step_elem(struct rd *r, void *ud)
{
    gp_job_part *p = r->p;
    (void)ud;
    struct job_step s = {.num = -1};
    if (rd_object(r, step_field, &s) != GP_OK)
        return GP_EPARSE;
    void *q = realloc(p->steps, (p->n_steps + 1) * sizeof(*p->steps));
    if (!q)
        return json_lex_error(&r->l, r->l.p, "out of memory");
    p->steps = q;
    p->steps[p->n_steps++] = s;
    return GP_OK;
}

/* ---- collectives ---- */

struct raw {
    struct job_raw_call c;
    int have_op;
};

/* A string or null, interned in the part: *out its index, JOB_NONE for null. */
static gp_status rd_name(struct rd *r, uint32_t *out)
{
    const char *s;
    size_t n;
    int rc = 0;
    *out = JOB_NONE;
    if (rd_slice(r, &s, &n) != GP_OK)
        return GP_EPARSE;
    *out = job_part_intern(r->p, s, n, &rc);
    return rc == 0 ? GP_OK : json_lex_error(&r->l, r->l.p, "out of memory");
}

static gp_status call_field(struct rd *r, const char *key, size_t n, void *ud)
{
    struct raw *x = ud;
    if (is_key(key, n, "op")) {
        char *op = NULL;
        gp_status rc = rd_str(r, &op);
        x->c.op = op ? job_op_index(op) : (uint16_t)(JOB_N_OPS - 1);
        x->have_op = rc == GP_OK && op;
        free(op);
        return rc;
    }
    if (is_key(key, n, "name") || is_key(key, n, "pg"))
        return rd_name(r, key[0] == 'n' ? &x->c.name : &x->c.pg);
    static const char *const keys[] = {"step", "stream", "seq", "size", "ts_ns", "end_ns"};
    int64_t *v[] = {&x->c.step, &x->c.stream, &x->c.seq, &x->c.nelems, &x->c.ts, &x->c.end};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (is_key(key, n, keys[i]))
            return rd_int(r, v[i]);
    return GP_DECLINED;
}

static gp_status call_elem(struct rd *r, void *ud)
{
    (void)ud;
    struct raw x = {.c = {.pg = JOB_NONE,
                          .name = JOB_NONE,
                          .stream = -1,
                          .nelems = -1,
                          .seq = -1,
                          .step = -1}};
    const char *at = r->l.p;
    gp_status rc = rd_object(r, call_field, &x);
    if (rc == GP_OK && (!x.have_op || x.c.end < x.c.ts))
        rc = json_lex_error(&r->l, at, "a collective needs \"op\", and \"end_ns\" >= \"ts_ns\"");
    if (rc == GP_OK && job_part_push_call(r->p, &x.c) != 0)
        rc = json_lex_error(&r->l, r->l.p, "out of memory");
    return rc;
}

/* ---- the rest ---- */

static gp_status interval_elem(struct rd *r, void *ud)
{
    int64_t v[2];
    (void)ud;
    if (json_lex_expect(&r->l, '[', "'[' (an interval [start, end])") != GP_OK ||
        rd_int(r, &v[0]) != GP_OK || json_lex_expect(&r->l, ',', "','") != GP_OK ||
        rd_int(r, &v[1]) != GP_OK || json_lex_expect(&r->l, ']', "']'") != GP_OK)
        return GP_EPARSE;
    if (v[1] < v[0])
        return json_lex_error(&r->l, r->l.p - 1, "an interval's end before its start");
    if (rules_ivs_push(&r->p->compute, v[0], v[1]) != GP_OK)
        return json_lex_error(&r->l, r->l.p, "out of memory");
    return GP_OK;
}

static gp_status note_elem(struct rd *r, void *ud)
{
    char *s = NULL;
    (void)ud;
    gp_status rc = rd_str(r, &s);
    if (rc == GP_OK && s && job_part_note(r->p, s) != 0)
        rc = json_lex_error(&r->l, r->l.p, "out of memory");
    free(s);
    return rc;
}

static gp_status schema_field(struct rd *r)
{
    char *s = NULL;
    const char *at = r->l.p;
    if (rd_str(r, &s) != GP_OK)
        return GP_EPARSE;
    r->schema_ok = s && !strcmp(s, GP_JOB_SUMMARY_SCHEMA);
    gp_status rc = r->schema_ok ? GP_OK
                                : json_lex_error(&r->l, at,
                                                 "schema \"%.60s\": this gprof-train reads \"%s\"",
                                                 s ? s : "null", GP_JOB_SUMMARY_SCHEMA);
    free(s);
    return rc;
}

static gp_status rank_field(struct rd *r, int *out, int64_t lo)
{
    int64_t v;
    const char *at = r->l.p;
    if (rd_int(r, &v) != GP_OK)
        return GP_EPARSE;
    if (v < lo || v > 1 << 30)
        return json_lex_error(&r->l, at, "out of range");
    *out = (int)v;
    return GP_OK;
}

static gp_status top_field(struct rd *r, const char *key, size_t n, void *ud)
{
    gp_job_part *p = r->p;
    (void)ud;
    if (is_key(key, n, "schema"))
        return schema_field(r);
    if (!r->schema_ok)
        return json_lex_error(&r->l, r->l.p, "\"schema\" must come first");
    if (is_key(key, n, "trace") || is_key(key, n, "host")) {
        char **s = key[0] == 't' ? &p->path : &p->host;
        free(*s);
        return rd_str(r, s);
    }
    if (is_key(key, n, "rank_from")) {
        char *s = NULL;
        const char *at = r->l.p;
        gp_status rc = rd_str(r, &s);
        p->rank_from = job_rank_from(s);
        free(s);
        return rc == GP_OK && !p->rank_from
                       ? json_lex_error(&r->l, at,
                                        "expected \"distributedInfo\", \"file name\" "
                                        "or \"order\"")
                       : rc;
    }
    if (is_key(key, n, "rank"))
        return rank_field(r, &p->rank, -1);
    if (is_key(key, n, "world_size"))
        return rank_field(r, &p->world_size, 0);
    if (is_key(key, n, "base_time_ns"))
        return rd_int(r, &p->base_time_ns);
    elem_fn arrays[] = {note_elem, step_elem, call_elem, interval_elem};
    static const char *const names[] = {"lost", "steps", "collectives", "compute_ns"};
    for (size_t i = 0; i < 4; i++)
        if (is_key(key, n, names[i]))
            return rd_array(r, arrays[i], NULL);
    return GP_DECLINED;
}

static gp_status parse(struct rd *r, const char *buf, size_t len, const char *path, gp_error *err)
{
    r->l.p = buf, r->l.end = buf + len, r->l.eof = 1;
    gp_status rc = rd_object(r, top_field, NULL);
    if (rc == GP_OK && json_lex_ws(&r->l) >= 0)
        rc = json_lex_error(&r->l, r->l.p, "text after the summary");
    if (rc == GP_OK && !r->schema_ok)
        rc = json_lex_error(&r->l, buf, "no \"schema\": not a gprof-train summary");
    if (rc == GP_OK)
        return GP_OK;
    const char *at = r->l.err_at ? r->l.err_at : r->l.p;
    long line = 1, col = 1;
    for (const char *q = buf; q < at && q < buf + len; q++)
        line += *q == '\n', col = *q == '\n' ? 1 : col + 1;
    gp_error_set_at(r->l.err_file ? r->l.err_file : __FILE__,
                    r->l.err_file ? r->l.err_line : __LINE__, err, GP_EPARSE, path, "%s",
                    r->l.err_msg[0] ? r->l.err_msg : "the file ends inside the summary");
    gp_error_at(err, (long long)(at - buf), line, col);
    return GP_EPARSE;
}

static char *slurp(const char *path, size_t *len, gp_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        gp_error_set(err, GP_EIO, path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            char *q = realloc(buf, cap + 1);
            if (!q)
                break;
            buf = q;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0)
            break;
    }
    int bad = ferror(f) || !buf || n > cap;
    fclose(f);
    if (bad) {
        free(buf);
        gp_error_set(err, GP_EIO, path, "cannot read");
        return NULL;
    }
    *len = n;
    return buf;
}

gp_status gp_job_summary_read(const char *path, gp_job_part **out, gp_error *err)
{
    size_t len = 0;
    *out = NULL;
    char *buf = slurp(path, &len, err);
    if (!buf)
        return err ? err->code : GP_EIO;
    struct rd r = {.p = calloc(1, sizeof(gp_job_part))};
    json_lex_init(&r.l);
    gp_status rc = r.p ? parse(&r, buf, len, path, err)
                       : gp_error_set(err, GP_ENOMEM, path, "out of memory");
    json_lex_release(&r.l);
    free(buf);
    if (rc == GP_OK && (!r.p->path && !(r.p->path = strdup(path))))
        rc = gp_error_set(err, GP_ENOMEM, path, "out of memory");
    if (rc == GP_OK && !r.p->host && !(r.p->host = strdup("")))
        rc = gp_error_set(err, GP_ENOMEM, path, "out of memory");
    if (rc != GP_OK) {
        gp_job_part_free(r.p);
        return rc;
    }
    if (!r.p->rank_from)
        r.p->rank_from = r.p->rank >= 0 ? "distributedInfo" : "order";
    rules_ivs_merge(&r.p->compute);
    job_key_calls(r.p);
    *out = r.p;
    return GP_OK;
}

/* Skip whitespace, then `tok`: @return past it, or NULL. */
static const char *after(const char *s, const char *tok)
{
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
        s++;
    return strncmp(s, tok, strlen(tok)) ? NULL : s + strlen(tok);
}

int gp_job_is_summary(const char *path)
{
    char head[128] = "";
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof(head) - 1, f) : 0;
    if (f)
        fclose(f);
    head[n] = 0;
    const char *s = after(head, "{");
    s = s ? after(s, "\"schema\"") : NULL;
    s = s ? after(s, ":") : NULL;
    return s && after(s, "\"" SCHEMA_FAMILY) != NULL;
}

gp_status gp_job_part_add_note(gp_job_part *p, const char *note, gp_error *err)
{
    if (job_part_note(p, note) != 0)
        return gp_error_set(err, GP_ENOMEM, p->path, "out of memory");
    return GP_OK;
}

const char *const *gp_job_part_notes(const gp_job_part *p, size_t *n)
{
    *n = p->n_notes;
    return (const char *const *)p->notes;
}
