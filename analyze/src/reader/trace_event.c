/* One element of traceEvents: parse its fields and the args the analysis uses (everything else
 * is skipped, validated), then store a gp_event plus its GPU or memory side record. Nothing is
 * stored until the whole element has parsed, so a GP_MORE can simply re-parse it. */
#include "reader/trace_build.h"

#include "gp/trace_schema.h"

#include <math.h>
#include <string.h>

#define KEY_IS(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), (lit), sizeof(lit) - 1) == 0)

static gp_status lex_key(json_lex *l, const char **k, size_t *kn)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch != '"')
        return json_lex_error(l, l->p, "expected a string key");
    gp_status rc = json_lex_string(l, k, kn);
    if (rc != GP_OK)
        return rc;
    if (l->p < l->end && *l->p == ':') { /* the usual "key": */
        l->p++;
        return GP_OK;
    }
    return json_lex_expect(l, ':', "':' after key");
}

/* Intern through a small direct-mapped cache keyed by length and the first and last 8 bytes:
 * names repeat (the same ops and kernels every step), and a hit costs one memcmp against the
 * interned copy instead of hashing the whole string and probing the interner's tables. */
static gp_str intern_cached(trace_builder *b, const char *s, size_t n)
{
    if (n == 0)
        return trace_intern_str(&b->t->strings, s, n);
    uint64_t a = 0, z = 0;
    memcpy(&a, s, n < 8 ? n : 8);
    if (n > 8)
        memcpy(&z, s + n - 8, 8);
    uint64_t h = (a ^ (z * 0x9E3779B97F4A7C15ull) ^ n) * 0xC2B2AE3D27D4EB4Full;
    build_str_cache *c = &b->str_cache[h >> 56 & (BUILD_STR_CACHE - 1)];
    if (c->s && c->n == n && memcmp(c->s, s, n) == 0)
        return c->id;
    gp_str id = trace_intern_str(&b->t->strings, s, n);
    if (id != GP_STR_NONE) {
        c->s = gp_trace_str(b->t, id);
        c->n = (uint32_t)n;
        c->id = id;
    }
    return id;
}

/* An allocation failed: past the read's memory ceiling (events or names), or out of memory. */
static gp_status no_memory(trace_builder *b)
{
    char msg[320];
    if (b->over_budget || b->t->strings.over_budget)
        return json_lex_error(&b->lex, b->lex.p, "%s",
                              trace_budget_message(b->budget, msg, sizeof(msg)));
    return json_lex_error(&b->lex, b->lex.p, "out of memory");
}

/* A string field, interned; null leaves *out unchanged. Other types are an error. */
static gp_status field_str(trace_builder *b, const char *what, gp_str *out)
{
    json_lex *l = &b->lex;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == 'n')
        return json_lex_skip(l, 1);
    if (ch != '"')
        return json_lex_error(l, l->p, "'%s' must be a string", what);
    const char *s;
    size_t n;
    gp_status rc = json_lex_string(l, &s, &n);
    if (rc != GP_OK)
        return rc;
    *out = intern_cached(b, s, n);
    return *out == GP_STR_NONE ? no_memory(b) : GP_OK;
}

/* ts/dur: microseconds as a number (or a numeric string, as Perfetto accepts) -> ns. */
static gp_status field_time(json_lex *l, const char *what, int64_t *out)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    const char *at = l->p;
    json_num num;
    gp_status rc;
    if (ch == '"') {
        const char *s;
        size_t n;
        if ((rc = json_lex_string(l, &s, &n)) != GP_OK)
            return rc;
        json_lex sub;
        json_lex_init(&sub);
        sub.p = s;
        sub.end = s + n;
        sub.eof = 1;
        rc = n ? json_lex_number(&sub, &num) : GP_EPARSE;
        if (rc != GP_OK || sub.p != sub.end)
            return json_lex_error(l, at, "'%s' must be a number", what);
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        if ((rc = json_lex_time(l, &num)) != GP_OK)
            return rc;
    } else {
        return json_lex_error(l, at, "'%s' must be a number", what);
    }
    if (!num.ns_ok)
        return json_lex_error(l, at, "'%s' is out of range", what);
    *out = num.ns;
    return GP_OK;
}

/* pid/tid: an integer or a string. */
static gp_status field_id(trace_builder *b, const char *what, int64_t *num, gp_str *str)
{
    json_lex *l = &b->lex;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == '"') {
        *num = -1;
        return field_str(b, what, str);
    }
    const char *at = l->p;
    json_num n;
    gp_status rc = json_lex_number(l, &n);
    if (rc != GP_OK)
        return rc < 0 ? json_lex_error(l, at, "'%s' must be a number or a string", what) : rc;
    if (!n.is_int && !(isfinite(n.d) && fabs(n.d) < 9.0e18))
        return json_lex_error(l, at, "'%s' is out of range", what);
    *num = n.is_int ? n.i : (int64_t)n.d;
    *str = GP_STR_NONE;
    return GP_OK;
}

/* A numeric arg: sets *ok, *d and *i for numbers; other types are skipped ("inf" -> +inf). */
static gp_status arg_num(json_lex *l, int64_t *i, double *d, int *ok)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    *ok = 0;
    if (ch == '"') {
        const char *s;
        size_t n;
        gp_status rc = json_lex_string(l, &s, &n);
        if (rc == GP_OK && KEY_IS(s, n, "inf")) {
            *d = INFINITY;
            *i = INT64_MAX;
            *ok = 1;
        }
        return rc;
    }
    if (ch != '-' && ch != 'N' && ch != 'I' && (ch < '0' || ch > '9'))
        return json_lex_skip(l, 2);
    json_num n;
    gp_status rc = json_lex_number(l, &n);
    if (rc != GP_OK)
        return rc;
    *d = n.d;
    *i = n.is_int ? n.i : (isfinite(n.d) && fabs(n.d) < 9.0e18 ? (int64_t)n.d : 0);
    *ok = 1;
    return GP_OK;
}

static gp_status arg_int(json_lex *l, int64_t *out)
{
    int64_t i;
    double d;
    int ok;
    gp_status rc = arg_num(l, &i, &d, &ok);
    if (rc == GP_OK && ok)
        *out = i;
    return rc;
}

static gp_status arg_float(json_lex *l, float *out)
{
    int64_t i;
    double d;
    int ok;
    gp_status rc = arg_num(l, &i, &d, &ok);
    if (rc == GP_OK && ok)
        *out = (float)d;
    return rc;
}

/* A counter's "value": a number (kept in full), else ignored. */
static gp_status arg_value(json_lex *l, raw_ev *r)
{
    int64_t i;
    int ok;
    gp_status rc = arg_num(l, &i, &r->value, &ok);
    if (rc == GP_OK && ok)
        r->seen |= SEEN_VALUE;
    return rc;
}

/* "grid": [x, y, z] */
static gp_status arg_dim3(json_lex *l, int32_t out[3])
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch != '[')
        return json_lex_skip(l, 2);
    l->p++;
    if (json_lex_ws(l) < 0)
        return GP_MORE;
    if (*l->p == ']') {
        l->p++;
        return GP_OK;
    }
    for (int k = 0;; k++) {
        int64_t v = 0;
        int more;
        gp_status rc = arg_int(l, &v);
        if (rc != GP_OK)
            return rc;
        if (k < 3)
            out[k] = (int32_t)v;
        if ((rc = json_lex_next(l, ']', "in a dim3", &more)) != GP_OK)
            return rc;
        if (!more)
            return GP_OK;
    }
}

static gp_status buf_put(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        while (c < *len + n + 1)
            c *= 2;
        char *d = realloc(*buf, c);
        if (!d)
            return GP_ENOMEM;
        *buf = d;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    return GP_OK;
}

static gp_status shape_put(trace_builder *b, const char *s, size_t n)
{
    return buf_put(&b->shape_buf, &b->shape_len, &b->shape_cap, s, n);
}

/* "Concrete Inputs" kept as the JSON text read; the event decides at its end whether it needs
 * it (trace_build.c: aten::conv2d's FLOPs). */
static gp_status arg_concrete(trace_builder *b, raw_ev *r)
{
    json_lex *l = &b->lex;
    if (json_lex_ws(l) < 0)
        return GP_MORE;
    const char *at = l->p;
    gp_status rc = json_lex_skip(l, 2);
    if (rc != GP_OK)
        return rc;
    b->concrete_len = 0;
    if (buf_put(&b->concrete_buf, &b->concrete_len, &b->concrete_cap, at, (size_t)(l->p - at)))
        return json_lex_error(l, l->p, "out of memory");
    r->seen |= SEEN_CONCRETE;
    return GP_OK;
}

/* "Input Dims" as Python's str() of PyTorch's input shapes: "[[64, 64], []]"; an input that is
 * a list of tensors ([[2, 1], [2, 1]] in the trace) reads "[]", as key_averages() shows it. */
static gp_status shape_value(trace_builder *b, int depth)
{
    json_lex *l = &b->lex;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    const char *at = l->p;
    if (ch != '[') {
        gp_status rc = json_lex_skip(l, depth);
        if (rc != GP_OK)
            return rc;
        if (ch == 'n')
            return shape_put(b, "None", 4) ? GP_EPARSE : GP_OK;
        return shape_put(b, at, (size_t)(l->p - at)) ? GP_EPARSE : GP_OK;
    }
    if (depth >= JSON_MAX_DEPTH)
        return json_lex_error(l, at, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    l->p++;
    if (shape_put(b, "[", 1))
        return GP_EPARSE;
    if (json_lex_ws(l) < 0)
        return GP_MORE;
    if (*l->p == ']') {
        l->p++;
        return shape_put(b, "]", 1) ? GP_EPARSE : GP_OK;
    }
    if (*l->p == '[' && depth == 3) { /* a tensor list: PyTorch's shapes() has [] for it */
        b->dims_list = 1;
        l->p = at;
        gp_status rc = json_lex_skip(l, depth);
        return rc != GP_OK ? rc : shape_put(b, "]", 1) ? GP_EPARSE : GP_OK;
    }
    for (int first = 1;; first = 0) {
        int more;
        gp_status rc;
        if (!first && shape_put(b, ", ", 2))
            return GP_EPARSE;
        if ((rc = shape_value(b, depth + 1)) != GP_OK)
            return rc;
        if ((rc = json_lex_next(l, ']', "in Input Dims", &more)) != GP_OK)
            return rc;
        if (!more)
            return shape_put(b, "]", 1) ? GP_EPARSE : GP_OK;
    }
}

static gp_status arg_shape(trace_builder *b, raw_ev *r)
{
    b->shape_len = 0;
    b->dims_list = 0;
    if (json_lex_ws(&b->lex) < 0)
        return GP_MORE;
    const char *at = b->lex.p;
    gp_status rc = shape_value(b, 2);
    if (rc != GP_OK)
        return rc;
    if (b->dims_list) { /* kept as read for the exports (gp_trace_event_dims) */
        b->dims_len = 0;
        if (buf_put(&b->dims_buf, &b->dims_len, &b->dims_cap, at, (size_t)(b->lex.p - at)))
            return json_lex_error(&b->lex, b->lex.p, "out of memory");
        r->seen |= SEEN_DIMS_LIST;
    }
    r->shape = intern_cached(b, b->shape_buf, b->shape_len);
    return r->shape == GP_STR_NONE ? no_memory(b) : GP_OK;
}

/* One key of "args". Kineto's arg set is large; only what the analysis reads is kept. */
static gp_status arg_field(trace_builder *b, raw_ev *r, const char *k, size_t n)
{
    json_lex *l = &b->lex;
    switch (n) {
    case 4:
        if (KEY_IS(k, n, "name"))
            return field_str(b, "args.name", &r->meta_name);
        if (KEY_IS(k, n, "grid"))
            return arg_dim3(l, r->grid);
        if (KEY_IS(k, n, "Addr"))
            return arg_int(l, &r->addr);
        break;
    case 5:
        if (KEY_IS(k, n, GP_ARG_BYTES))
            return arg_int(l, &r->bytes);
        if (KEY_IS(k, n, GP_ARG_COUNTER_VALUE))
            return arg_value(l, r);
        if (KEY_IS(k, n, GP_ARG_MEM_BYTES))
            return arg_int(l, &r->mbytes);
        if (KEY_IS(k, n, GP_ARG_BLOCK))
            return arg_dim3(l, r->block);
        break;
    case 6:
        if (KEY_IS(k, n, GP_ARG_STREAM)) {
            r->seen |= SEEN_STREAM;
            return arg_int(l, &r->stream);
        }
        if (KEY_IS(k, n, GP_ARG_DEVICE)) {
            r->seen |= SEEN_DEVICE;
            return arg_int(l, &r->device);
        }
        break;
    case 9:
        if (KEY_IS(k, n, GP_ARG_PYTHON_ID))
            return arg_int(l, &r->py_id);
        if (KEY_IS(k, n, GP_ARG_MEM_DEVICE_ID))
            return arg_int(l, &r->devid);
        break;
    case 10:
        if (KEY_IS(k, n, "Input Dims") || KEY_IS(k, n, "Input dims"))
            return arg_shape(b, r);
        break;
    case 11:
        if (KEY_IS(k, n, GP_ARG_CORRELATION))
            return arg_int(l, &r->corr);
        if (KEY_IS(k, n, GP_ARG_EXTERNAL_ID) || KEY_IS(k, n, "external id"))
            return arg_int(l, &r->ext);
        if (KEY_IS(k, n, GP_ARG_MEM_DEVICE_TYPE))
            return arg_int(l, &r->devtype);
        break;
    default:
        break;
    }
    return GP_DECLINED; /* no key of length 4..11 that it reads */
}

/* What PyTorch records of a collective (record_param_comms and the kernels it launches). */
static gp_status arg_comm(trace_builder *b, raw_ev *r, const char *k, size_t n)
{
    json_lex *l = &b->lex;
    static const char *const strs[] = {"Collective name", "Process Group Name", "dtype"};
    static const char *const nums[] = {"Seq", "In msg nelems", "Out msg nelems", "Group size"};
    gp_str *sv[] = {&r->coll, &r->pg, &r->dtype};
    int64_t *nv[] = {&r->seq, &r->in_nelems, &r->out_nelems, &r->group_size};
    for (int i = 0; i < 3; i++)
        if (n == strlen(strs[i]) && !memcmp(k, strs[i], n)) {
            int ch = json_lex_ws(l);
            if (ch < 0)
                return GP_MORE;
            if (ch != '"') /* another producer's arg of that name: not ours to judge */
                return json_lex_skip(l, 2);
            r->seen |= SEEN_COMM;
            return field_str(b, strs[i], sv[i]);
        }
    for (int i = 0; i < 4; i++)
        if (n == strlen(nums[i]) && !memcmp(k, nums[i], n)) {
            r->seen |= SEEN_COMM;
            return arg_int(l, nv[i]);
        }
    return GP_DECLINED;
}

static gp_status arg_field_long(trace_builder *b, raw_ev *r, const char *k, size_t n)
{
    json_lex *l = &b->lex;
    gp_status comm = arg_comm(b, r, k, n);
    if (comm != GP_DECLINED)
        return comm;
    if (KEY_IS(k, n, GP_ARG_REGISTERS)) {
        int64_t v = 0;
        gp_status rc = arg_int(l, &v);
        r->regs = (int32_t)v;
        return rc;
    }
    if (KEY_IS(k, n, GP_ARG_SHARED_MEMORY)) {
        int64_t v = 0;
        gp_status rc = arg_int(l, &v);
        r->shmem = (int32_t)v;
        return rc;
    }
    if (KEY_IS(k, n, GP_ARG_BLOCKS_PER_SM))
        return arg_float(l, &r->bps);
    if (KEY_IS(k, n, GP_ARG_WARPS_PER_SM))
        return arg_float(l, &r->wps);
    if (KEY_IS(k, n, GP_ARG_OCCUPANCY)) {
        r->seen |= SEEN_OCC;
        return arg_float(l, &r->occ);
    }
    if (KEY_IS(k, n, GP_ARG_MEM_TOTAL_ALLOC))
        return arg_int(l, &r->talloc);
    if (KEY_IS(k, n, GP_ARG_MEM_TOTAL_RESERVED))
        return arg_int(l, &r->tres);
    if (KEY_IS(k, n, GP_ARG_SYNC_KIND))
        return field_str(b, "cuda_sync_kind", &r->sync_kind);
    if (KEY_IS(k, n, GP_ARG_WAIT_ON_STREAM))
        return arg_int(l, &r->wait_on_stream);
    if (KEY_IS(k, n, GP_ARG_PYTHON_PARENT_ID))
        return arg_int(l, &r->py_parent);
    if (KEY_IS(k, n, GP_ARG_PYTHON_MODULE_ID))
        return arg_int(l, &r->py_module);
    if (KEY_IS(k, n, GP_ARG_STEP_CPU))
        return arg_int(l, &r->step_cpu);
    if (KEY_IS(k, n, GP_ARG_STEP_RUNQ))
        return arg_int(l, &r->step_runq);
    if (KEY_IS(k, n, "Concrete Inputs"))
        return arg_concrete(b, r);
    return json_lex_skip(l, 2);
}

static gp_status parse_args(trace_builder *b, raw_ev *r)
{
    json_lex *l = &b->lex;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == 'n')
        return json_lex_skip(l, 1);
    if (ch != '{')
        return json_lex_error(l, l->p, "'args' must be an object");
    l->p++;
    if (json_lex_ws(l) < 0)
        return GP_MORE;
    if (*l->p == '}') {
        l->p++;
        return GP_OK;
    }
    for (;;) {
        const char *k;
        size_t n;
        int more;
        gp_status rc = lex_key(l, &k, &n);
        if (rc != GP_OK)
            return rc;
        rc = arg_field(b, r, k, n);
        if (rc == GP_DECLINED)
            rc = arg_field_long(b, r, k, n);
        if (rc != GP_OK)
            return rc;
        if ((rc = json_lex_next(l, '}', "in 'args'", &more)) != GP_OK)
            return rc;
        if (!more)
            return GP_OK;
    }
}

static gp_status parse_ph(json_lex *l, raw_ev *r)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch != '"')
        return json_lex_error(l, l->p, "'ph' must be a string");
    const char *s;
    size_t n;
    gp_status rc = json_lex_string(l, &s, &n);
    if (rc == GP_OK)
        r->ph = n ? s[0] : 0;
    return rc;
}

static gp_status event_field(trace_builder *b, raw_ev *r, const char *k, size_t n)
{
    json_lex *l = &b->lex;
    if (n == 2 && k[0] == 'p' && k[1] == 'h')
        return parse_ph(l, r);
    if (n == 2 && k[0] == 't' && k[1] == 's') {
        r->seen |= SEEN_TS;
        return field_time(l, "ts", &r->ts);
    }
    if (n == 3) {
        if (!memcmp(k, "cat", 3))
            return field_str(b, "cat", &r->cat);
        if (!memcmp(k, "dur", 3)) {
            r->seen |= SEEN_DUR;
            return field_time(l, "dur", &r->dur);
        }
        if (!memcmp(k, "pid", 3))
            return field_id(b, "pid", &r->pid, &r->pid_str);
        if (!memcmp(k, "tid", 3))
            return field_id(b, "tid", &r->tid, &r->tid_str);
    }
    if (n == 4 && !memcmp(k, "name", 4))
        return field_str(b, "name", &r->name);
    if (n == 4 && !memcmp(k, "args", 4))
        return parse_args(b, r);
    return json_lex_skip(l, 1);
}

/* A copy of this template (vector moves) costs less than memset's rep stos plus the stores:
 * raw_init ran once per event and was ~2% of a report. */
/* One key of a flow event: its place and id; the name and the rest are validated, not read. */
static gp_status flow_field(trace_builder *b, raw_ev *r, const char *k, size_t n)
{
    if (n == 2 && k[0] == 'i' && k[1] == 'd') {
        int ch = json_lex_ws(&b->lex);
        if (ch < 0)
            return GP_MORE;
        if (ch == '-' || (ch >= '0' && ch <= '9'))
            return arg_int(&b->lex, &r->flow_id);
        return json_lex_skip(&b->lex, 1); /* a string id: no fwdbwd flow has one */
    }
    if ((n == 2 && k[0] == 't' && k[1] == 's') ||
        (n == 3 && (!memcmp(k, "cat", 3) || !memcmp(k, "pid", 3) || !memcmp(k, "tid", 3))))
        return event_field(b, r, k, n);
    return json_lex_skip(&b->lex, 1);
}

static const raw_ev raw_template = {
        .name = GP_STR_NONE,
        .cat = GP_STR_NONE,
        .pid_str = GP_STR_NONE,
        .tid_str = GP_STR_NONE,
        .shape = GP_STR_NONE,
        .sync_kind = GP_STR_NONE,
        .meta_name = GP_STR_NONE,
        .coll = GP_STR_NONE,
        .pg = GP_STR_NONE,
        .dtype = GP_STR_NONE,
        .seq = -1,
        .in_nelems = -1,
        .out_nelems = -1,
        .group_size = -1,
        .corr = -1,
        .ext = -1,
        .stream = -1,
        .device = -1,
        .wait_on_stream = -1,
        .py_id = -1,
        .py_parent = -1,
        .py_module = -1,
        .flow_id = -1,
        .devid = -1,
        .step_cpu = -1,
        .step_runq = -1,
};

gp_status trace_event_parse(trace_builder *b)
{
    json_lex *l = &b->lex;
    if (*l->p != '{')
        return json_lex_error(l, l->p, "expected an event object in traceEvents");
    l->p++;
    raw_ev r = raw_template;
    if (json_lex_ws(l) < 0)
        return GP_MORE;
    if (*l->p == '}') {
        l->p++;
        return GP_OK; /* {} is skipped, as Perfetto does */
    }
    for (int flow = 0;;) {
        const char *k;
        size_t n;
        int more;
        gp_status rc = lex_key(l, &k, &n);
        if (rc != GP_OK)
            return rc;
        /* of a flow event, once "ph" says so, only what a fwdbwd flow needs is read */
        if ((rc = flow ? flow_field(b, &r, k, n) : event_field(b, &r, k, n)) != GP_OK)
            return rc;
        flow = r.ph == 's' || r.ph == 'f' || r.ph == 't';
        if ((rc = json_lex_next(l, '}', "in event", &more)) != GP_OK)
            return rc;
        if (!more)
            break;
    }
    if (trace_store_event(b, &r) == 0)
        return GP_OK;
    return no_memory(b);
}
