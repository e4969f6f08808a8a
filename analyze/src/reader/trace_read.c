/* gp_trace_open: the top level of a Chrome trace as a small state machine over "units" (one
 * top-level key/value or one element of traceEvents). A unit that runs past the window is
 * re-parsed after a refill; the file ending inside traceEvents is a truncation (a warning). */
#include "reader/trace_build.h"
#include "reader/trace_meta.h"
#include "reader/trace_source.h"

#include "gp/trace_schema.h"

#include <stdio.h>
#include <string.h>

enum read_state { ST_TOP, ST_OBJ_FIRST, ST_OBJ_NEXT, ST_EV_FIRST, ST_EV_NEXT, ST_DONE };

/* step() reached the split point at an event boundary: an outcome beside gp_status's own */
#define STEP_SPLIT ((gp_status)(GP_DECLINED + 1))

typedef struct reader {
    trace_builder b;
    trace_source src;
    enum read_state state;
    int seen_events;
    unsigned flags;
    const char *dropped; /* mapped input: pages before this were given back */
    trace_split *split;  /* later parts being parsed on other threads, or NULL */
    const char *split_at;
    trace_budget budget; /* gp_trace_opts.max_memory, for this builder and the parts' */
} reader;

static void end_events(reader *r)
{
    r->state = r->b.t->info.array_form ? ST_DONE : ST_OBJ_NEXT;
}

static void abandon_split(reader *r)
{
    trace_split_free(r->split);
    r->split = NULL;
    r->split_at = NULL;
}

static gp_status top_kv(reader *r)
{
    json_lex *l = &r->b.lex;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch != '"')
        return json_lex_error(l, l->p, "expected a string key");
    const char *k;
    size_t n;
    gp_status rc = json_lex_string(l, &k, &n);
    if (rc != GP_OK)
        return rc;
    char key[64];
    int is_events = n == strlen(GP_KEY_TRACE_EVENTS) && !memcmp(k, GP_KEY_TRACE_EVENTS, n);
    snprintf(key, sizeof(key), "%.*s", (int)(n < 63 ? n : 63), k);
    if ((rc = json_lex_expect(l, ':', "':' after key")) != GP_OK)
        return rc;
    if (!is_events) {
        if ((rc = trace_meta_value(&r->b, key)) == GP_OK)
            r->state = ST_OBJ_NEXT;
        return rc;
    }
    if ((ch = json_lex_ws(l)) < 0)
        return GP_MORE;
    if (ch != '[')
        return json_lex_error(l, l->p, "'traceEvents' must be an array");
    l->p++;
    r->seen_events = 1;
    r->state = ST_EV_FIRST;
    abandon_split(r); /* a second traceEvents: the first one's parts were never joined */
    r->split = trace_split_start(&r->src, l->p, l->end, &r->split_at);
    return GP_OK;
}

static gp_status event_unit(reader *r)
{
    gp_status rc = trace_event_parse(&r->b);
    if (rc == GP_OK)
        r->state = ST_EV_NEXT;
    return rc;
}

/* The UTF-16 or UTF-32 a file starts with (a byte order mark, or a JSON start with a zero byte
 * beside it), or NULL. */
static const char *wide_encoding(const unsigned char *p, const unsigned char *end)
{
    if (end - p >= 4 && !memcmp(p, "\xFF\xFE\0\0", 4))
        return "UTF-32 (little-endian)";
    if (end - p >= 4 && !memcmp(p, "\0\0\xFE\xFF", 4))
        return "UTF-32 (big-endian)";
    if (end - p < 2)
        return NULL;
    if ((p[0] == 0xFF && p[1] == 0xFE) || (p[0] && strchr("{[ \t\r\n", p[0]) && p[1] == 0))
        return "UTF-16 (little-endian)";
    if ((p[0] == 0xFE && p[1] == 0xFF) || (p[0] == 0 && p[1] && strchr("{[ \t\r\n", p[1])))
        return "UTF-16 (big-endian)";
    return NULL;
}

static gp_status step_top(reader *r)
{
    json_lex *l = &r->b.lex;
    if (l->end - l->p >= 3 && !memcmp(l->p, "\xEF\xBB\xBF", 3))
        l->p += 3; /* UTF-8 byte order mark */
    const char *wide = wide_encoding((const unsigned char *)l->p, (const unsigned char *)l->end);
    if (wide)
        return json_lex_error(l, l->p,
                              "the file is %s text: a trace is UTF-8 JSON (convert it, e.g. "
                              "iconv -f UTF-16 -t UTF-8)",
                              wide);
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    l->p++;
    if (ch == '{') {
        r->state = ST_OBJ_FIRST;
    } else if (ch == '[') {
        r->b.t->info.array_form = 1;
        r->seen_events = 1;
        r->state = ST_EV_FIRST;
        r->split = trace_split_start(&r->src, l->p, l->end, &r->split_at);
    } else {
        return json_lex_error(l, l->p - 1, "a trace must start with '{' or '['");
    }
    return GP_OK;
}

/* One unit; state changes only when the unit parsed completely. */
static gp_status step(reader *r)
{
    json_lex *l = &r->b.lex;
    int ch, more;
    gp_status rc;
    switch (r->state) {
    case ST_TOP:
        return step_top(r);
    case ST_OBJ_FIRST:
    case ST_EV_FIRST:
        if ((ch = json_lex_ws(l)) < 0)
            return GP_MORE;
        if (ch == (r->state == ST_OBJ_FIRST ? '}' : ']')) {
            l->p++;
            if (r->state == ST_OBJ_FIRST)
                r->state = ST_DONE;
            else
                end_events(r);
            return GP_OK;
        }
        return r->state == ST_OBJ_FIRST ? top_kv(r) : event_unit(r);
    case ST_OBJ_NEXT:
        if ((rc = json_lex_next(l, '}', "after a top-level value", &more)) != GP_OK)
            return rc;
        if (!more)
            r->state = ST_DONE;
        return more ? top_kv(r) : GP_OK;
    case ST_EV_NEXT:
        if ((rc = json_lex_next(l, ']', "after an event", &more)) != GP_OK)
            return rc;
        if (more && (ch = json_lex_ws(l)) == ']')
            l->p++; /* trailing comma, accepted as Perfetto does */
        else if (more && l->p == r->split_at)
            return STEP_SPLIT;
        else if (more)
            return ch < 0 ? GP_MORE : event_unit(r);
        end_events(r);
        return GP_OK;
    case ST_DONE:
        if (json_lex_ws(l) < 0)
            return GP_MORE;
        return json_lex_error(l, l->p, "unexpected data after the end of the trace");
    }
    return GP_EPARSE;
}

/* Set a parse error at `at` in the input; a debug build's trail starts at file:line. */
#define parse_error(...) parse_error_at(__FILE__, __LINE__, __VA_ARGS__)
static gp_status parse_error_at(const char *file, int line_no, reader *r, gp_status code,
                                const char *msg, const char *at, gp_error *err)
{
    long line, col;
    char what[sizeof err->msg]; /* `msg` may be err->msg, which gp_error_set clears first */
    snprintf(what, sizeof what, "%s", msg);
    trace_source_line_col(&r->src, at, &line, &col);
    gp_error_set_at(file, line_no, err, code, r->b.t->info.path, "%s", what);
    gp_error_at(err, (long long)trace_source_offset(&r->src, at), line, col);
    return code;
}

/* The lexer's error: the trail starts where the lexer found it, then notes this forward. */
static gp_status lex_error(reader *r, gp_error *err)
{
    json_lex *l = &r->b.lex;
    gp_status rc = l->err_file ? parse_error_at(l->err_file, l->err_line, r, GP_EPARSE, l->err_msg,
                                                l->err_at, err)
                               : parse_error(r, GP_EPARSE, l->err_msg, l->err_at, err);
    GP_TRAIL_NOTE();
    return rc;
}

/* "1 event has" / "2 events have", for the counts below. */
static const char *events_have(uint64_t n)
{
    return n == 1 ? "event has" : "events have";
}

/* What events were dropped for a missing field, e.g. '3 events have no "ts"'. @return 0: none. */
static int missing_fields(const gp_trace_info *i, char *what, size_t cap)
{
    int n = 0;
    if (i->n_no_ts)
        n = snprintf(what, cap, "%llu %s no \"ts\"", (unsigned long long)i->n_no_ts,
                     events_have(i->n_no_ts));
    if (i->n_no_ph)
        snprintf(what + n, cap - (size_t)n, "%s%llu %s no \"ph\"", n ? ", " : "",
                 (unsigned long long)i->n_no_ph, events_have(i->n_no_ph));
    return i->n_no_ts || i->n_no_ph;
}

/* At the end of a readable file: an error if it is not a trace, or none of its events could be
 * kept for a missing field (a file of such events is not a trace anyone can read). */
static gp_status usable(reader *r, const char *at, gp_error *err)
{
    char what[160], msg[256];
    if (!r->seen_events) /* a JSON object, but not a trace */
        return parse_error(r, GP_EPARSE,
                           "not a trace: the object has no \"traceEvents\" array (a Chrome "
                           "trace is {\"traceEvents\": [...]} or a bare [...] of events)",
                           at, err);
    if (r->b.n_events || !missing_fields(&r->b.t->info, what, sizeof what))
        return GP_OK;
    snprintf(msg, sizeof msg, "no event can be used: %s (a timed event needs \"ph\" and \"ts\")",
             what);
    return parse_error(r, GP_EPARSE, msg, at, err);
}

/* Whether the file's last bytes (from `at`) hold part of an event, not just separators (a
 * program that died between two events, or before its first). */
static int part_of_event(const char *at, const char *end)
{
    for (; at < end; at++)
        if (*at != ' ' && *at != '\n' && *at != '\r' && *at != '\t' && *at != ',')
            return 1;
    return 0;
}

static gp_status at_eof(reader *r, const char *at, gp_error *err)
{
    gp_trace *t = r->b.t;
    if (r->state == ST_DONE)
        return usable(r, at, err);
    int in_events = r->state == ST_EV_FIRST || r->state == ST_EV_NEXT;
    if (!r->seen_events || (r->flags & GP_TRACE_STRICT)) {
        const char *msg = trace_source_offset(&r->src, at) != 0 || r->state != ST_TOP
                                  ? "unexpected end of file (truncated trace)"
                          : r->src.gzip ? "nothing decompresses from this gzip file (cut short?)"
                                        : "empty file";
        return parse_error(r, GP_EPARSE, msg, at, err);
    }
    t->info.truncated = 1;
    if (in_events)
        trace_warn(t, "file ends inside traceEvents at byte %llu (truncated); kept %llu events%s",
                   (unsigned long long)trace_source_offset(&r->src, at),
                   (unsigned long long)r->b.n_events,
                   part_of_event(at, r->b.lex.end) ? ", dropped the incomplete last one" : "");
    else
        trace_warn(t, "file ends after traceEvents without its closing '}' (truncated)");
    return usable(r, at, err);
}

/* The mapped file shrank while it was parsed (a live job rewriting it): read it as truncated at
 * the start of the event that ran into the vanished part. */
static gp_status cut_while_read(reader *r, const char *unit, gp_error *err)
{
    trace_warn(r->b.t, "the file shrank while it was read (is it still being written?)");
    r->b.t->info.bytes_read = trace_source_offset(&r->src, unit);
    return at_eof(r, unit, err);
}

/* Merge the later parts and go on after them (or from the first part that was not usable). */
static gp_status join_split(reader *r, const char *unit, gp_error *err)
{
    json_lex *l = &r->b.lex;
    const char *resume = unit;
    int closed;
    gp_status rc = trace_split_join(r->split, &r->b, &resume, &closed);
    r->split = NULL;
    r->split_at = NULL;
    char msg[320];
    if (rc != 0 && (r->b.over_budget || r->b.t->strings.over_budget))
        return gp_error_set(err, GP_EPARSE, r->b.t->info.path, "%s",
                            trace_budget_message(&r->budget, msg, sizeof(msg)));
    if (rc != 0)
        return gp_error_set(err, GP_ENOMEM, r->b.t->info.path, "out of memory");
    l->p = r->dropped = resume;
    if (closed)
        end_events(r);
    else
        r->state = ST_EV_NEXT; /* after an event, before its ',': parse on in order */
    return GP_OK;
}

/* Before an unfinished unit is carried into the next block: the whitespace before it, and the ','
 * before an event, are consumed here, so only the value itself is carried (a value is bounded by
 * max_value_bytes; whitespace between values is not). */
static const char *skip_between(reader *r, const char *unit)
{
    const char *p = unit, *end = r->b.lex.end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    if (r->state == ST_EV_NEXT && p < end && *p == ',') {
        r->state = ST_EV_FIRST; /* the ',' is taken: a value (or a trailing ']') follows */
        return skip_between(r, p + 1);
    }
    return p;
}

static gp_status read_all(reader *r, gp_error *err)
{
    json_lex *l = &r->b.lex;
    GP_TRY(trace_source_first(&r->src, &l->p, &l->end, &l->eof, err));
    r->dropped = l->p;
    for (;;) {
        const char *unit = l->p;
        gp_status rc = step(r);
        if (rc == GP_OK && trace_source_too_big(&r->src, unit, l->p))
            return parse_error(r, GP_EPARSE, r->src.too_big_msg, unit, err);
        if (rc == GP_OK) {
            r->dropped = trace_source_drop(&r->src, r->dropped, l->p);
            if (r->split && l->p > r->split_at)
                abandon_split(r); /* the split point was not an event boundary */
            continue;
        }
        if (rc == STEP_SPLIT) {
            GP_TRY(join_split(r, unit, err));
            continue;
        }
        if (rc < 0 && trace_source_shrank(&r->src))
            return cut_while_read(r, unit, err);
        if (rc < 0)
            return lex_error(r, err);
        if (l->eof && trace_source_shrank(&r->src))
            return cut_while_read(r, unit, err);
        if (l->eof) {
            r->b.t->info.bytes_read = trace_source_offset(&r->src, l->end);
            return at_eof(r, unit, err);
        }
        unit = skip_between(r, unit);
        gp_status s = trace_source_refill(&r->src, unit, &l->p, &l->end, &l->eof, err);
        if (s != GP_OK)
            return s == GP_EPARSE ? parse_error(r, s, err ? err->msg : "", l->p, err) : s;
    }
}

static int cmp_cat(const void *a, const void *b)
{
    return strcmp(((const gp_cat_count *)a)->cat, ((const gp_cat_count *)b)->cat);
}

gp_trace *trace_new_empty(const char *path)
{
    gp_trace *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    trace_vec_init(&t->gpu, sizeof(gp_gpu_info));
    trace_vec_init(&t->mem, sizeof(gp_mem_sample));
    trace_vec_init(&t->py, sizeof(gp_py_info));
    trace_vec_init(&t->fwdbwd, sizeof(gp_flow));
    trace_vec_init(&t->comm, sizeof(gp_comm_info));
    trace_vec_init(&t->op_args, sizeof(trace_op_args));
    trace_vec_init(&t->step_sched, sizeof(gp_step_sched));
    trace_vec_init(&t->counters, sizeof(gp_counter));
    trace_vec_init(&t->devs, sizeof(gp_device_props));
    trace_vec_init(&t->config, sizeof(gp_kv));
    trace_vec_init(&t->meta, sizeof(gp_kv));
    trace_vec_init(&t->unknown_cats, sizeof(gp_cat_count));
    trace_vec_init(&t->warnings, sizeof(const char *));
    trace_vec_init(&t->quality_warnings, sizeof(const char *));
    t->info.rank = -1;
    t->info.path = trace_arena_strdup(&t->arena, path, strlen(path));
    if (trace_intern_init(&t->strings) != 0 || !t->info.path) {
        gp_trace_free(t);
        return NULL;
    }
    return t;
}

static gp_status finish(reader *r, gp_error *err)
{
    gp_trace *t = r->b.t;
    if (trace_builder_finish(&r->b) != 0)
        return gp_error_set(err, GP_ENOMEM, t->info.path, "out of memory");
    char what[160];
    if (missing_fields(&t->info, what, sizeof what))
        trace_warn(t, "%s: dropped (kept %llu)", what, (unsigned long long)t->info.n_events);
    if (t->info.n_neg_dur)
        trace_warn(t, "%llu %s a negative \"dur\" (it ends before it starts): dropped",
                   (unsigned long long)t->info.n_neg_dur, events_have(t->info.n_neg_dur));
    if (t->unknown_cats.n)
        qsort(t->unknown_cats.data, t->unknown_cats.n, sizeof(gp_cat_count), cmp_cat);
    if (r->b.lex.lenient_escapes)
        trace_warn(t, "%llu invalid escape sequences kept verbatim (written by an old Kineto)",
                   (unsigned long long)r->b.lex.lenient_escapes);
    t->info.gzip = r->src.gzip;
    if (trace_quality_compute(t) != 0)
        return gp_error_set(err, GP_ENOMEM, t->info.path, "out of memory");
    return GP_OK;
}

static gp_status open_common(reader *r, const gp_trace_opts *opts, gp_trace **out, gp_error *err)
{
    gp_trace *t = r->b.t;
    trace_budget_init(&r->budget, opts, r->src.input_size);
    r->b.budget = &r->budget;
    r->src.budget = &r->budget;
    t->strings.budget = &r->budget;
    r->src.flags = r->flags;
    r->src.threads = r->b.threads = opts ? opts->threads : 0;
    gp_status s = read_all(r, err);
    abandon_split(r);
    if (s == GP_OK)
        s = finish(r, err);
    trace_intern_unbudget(&t->strings, 1);
    trace_builder_release(&r->b);
    trace_source_close(&r->src);
    if (s != GP_OK) {
        gp_trace_free(t);
        return s;
    }
    *out = t;
    return GP_OK;
}

static gp_status reader_init(reader *r, const char *path, const gp_trace_opts *opts, gp_error *err)
{
    memset(r, 0, sizeof(*r));
    gp_error_clear(err);
    r->flags = opts ? opts->flags : 0;
    gp_trace *t = trace_new_empty(path ? path : "(trace)");
    if (!t || trace_builder_init(&r->b, t) != 0) {
        trace_builder_release(&r->b);
        gp_trace_free(t);
        return gp_error_set(err, GP_ENOMEM, path, "out of memory");
    }
    return GP_OK;
}

gp_status gp_trace_open(const char *path, const gp_trace_opts *opts, gp_trace **out, gp_error *err)
{
    *out = NULL;
    reader r;
    GP_TRY(reader_init(&r, path, opts, err));
    size_t max_unit = opts && opts->max_value_bytes ? opts->max_value_bytes : (64u << 20);
    gp_status s = trace_source_open_file(&r.src, r.b.t->info.path, max_unit, r.flags, err);
    if (s != GP_OK) {
        gp_trace_free(r.b.t);
        trace_builder_release(&r.b);
        trace_source_close(&r.src);
        return s;
    }
    return open_common(&r, opts, out, err);
}

gp_status gp_trace_open_mem(const void *data, size_t len, const char *name,
                            const gp_trace_opts *opts, gp_trace **out, gp_error *err)
{
    *out = NULL;
    reader r;
    GP_TRY(reader_init(&r, name, opts, err));
    size_t max_unit = opts && opts->max_value_bytes ? opts->max_value_bytes : (64u << 20);
    gp_status s = trace_source_open_mem(&r.src, data, len, r.b.t->info.path, max_unit, err);
    if (s != GP_OK) {
        gp_trace_free(r.b.t);
        trace_builder_release(&r.b);
        trace_source_close(&r.src);
        return s;
    }
    return open_common(&r, opts, out, err);
}
