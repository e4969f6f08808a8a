/* Top-level metadata: each value is captured as compact JSON (it is small, and this keeps the
 * unit restartable), then read with a sub-lexer: deviceProperties, distributedInfo, the "gprof"
 * run config (as key/values) and the other keys (as key/values for gp_trace_meta()). */
#include "gp/json_str.h"
#include "reader/trace_meta.h"

#include "gp/trace_schema.h"

#include <stdio.h>
#include <string.h>

typedef struct jbuf {
    char *p;
    size_t n, cap;
    int oom;
} jbuf;

static void put(jbuf *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        while (cap < o->n + n + 1)
            cap *= 2;
        char *d = realloc(o->p, cap);
        if (!d) {
            o->oom = 1;
            return;
        }
        o->p = d;
        o->cap = cap;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = 0;
}

static void put_quoted(jbuf *o, const char *s, size_t n)
{
    put(o, "\"", 1);
    char esc[6 * 256]; /* the escape needs up to 6 bytes a byte: in pieces */
    for (size_t done = 0, k; done < n; done += k) {
        k = gp_json_piece(s + done, n - done, 256);
        put(o, esc, gp_json_escape(esc, s + done, k));
    }
    put(o, "\"", 1);
}

static gp_status capture(json_lex *l, jbuf *o, int depth);

static gp_status capture_container(json_lex *l, jbuf *o, int depth, char close)
{
    if (depth >= JSON_MAX_DEPTH)
        return json_lex_error(l, l->p, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    put(o, l->p, 1);
    l->p++;
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == (unsigned char)close) {
        l->p++;
        put(o, &close, 1);
        return GP_OK;
    }
    for (int more = 1; more;) {
        gp_status rc;
        if (close == '}') {
            if ((ch = json_lex_ws(l)) < 0)
                return GP_MORE;
            if (ch != '"')
                return json_lex_error(l, l->p, "expected a string key");
            if ((rc = capture(l, o, depth + 1)) != GP_OK)
                return rc;
            if ((rc = json_lex_expect(l, ':', "':' after key")) != GP_OK)
                return rc;
            put(o, ":", 1);
        }
        if ((rc = capture(l, o, depth + 1)) != GP_OK)
            return rc;
        if ((rc = json_lex_next(l, close, "in a metadata value", &more)) != GP_OK)
            return rc;
        put(o, more ? "," : &close, 1);
    }
    return GP_OK;
}

static gp_status capture(json_lex *l, jbuf *o, int depth)
{
    int ch = json_lex_ws(l);
    if (ch < 0)
        return GP_MORE;
    if (ch == '{' || ch == '[')
        return capture_container(l, o, depth, ch == '{' ? '}' : ']');
    const char *at = l->p;
    if (ch == '"') {
        const char *s;
        size_t n;
        gp_status rc = json_lex_string(l, &s, &n);
        if (rc == GP_OK)
            put_quoted(o, s, n);
        return rc;
    }
    gp_status rc = json_lex_skip(l, depth);
    if (rc == GP_OK)
        put(o, at, (size_t)(l->p - at));
    return rc;
}

static void sub_init(json_lex *sub, const char *s, size_t n)
{
    json_lex_init(sub);
    sub->p = s;
    sub->end = s + n;
    sub->eof = 1;
}

/* A gp_kv from compact JSON text `s` (arena copies). */
static gp_status make_kv(gp_trace *t, gp_kv *kv, const char *key, const char *s, size_t n)
{
    kv->key = trace_arena_strdup(&t->arena, key, strlen(key));
    json_lex sub;
    sub_init(&sub, s, n);
    if (s[0] == '"') {
        const char *v;
        size_t vn;
        if (json_lex_string(&sub, &v, &vn) == GP_OK) {
            kv->type = GP_KV_STRING;
            kv->str = trace_arena_strdup(&t->arena, v, vn);
        }
    } else if (s[0] == '{' || s[0] == '[') {
        kv->type = GP_KV_JSON;
        kv->str = trace_arena_strdup(&t->arena, s, n);
    } else if (s[0] == 't' || s[0] == 'f') {
        kv->type = GP_KV_BOOL;
        kv->i = s[0] == 't';
        kv->d = (double)kv->i;
    } else if (s[0] != 'n') {
        json_num num;
        if (json_lex_number(&sub, &num) == GP_OK) {
            kv->type = num.is_int ? GP_KV_INT : GP_KV_DOUBLE;
            kv->d = num.d;
            kv->i = json_num_to_i64(&num);
        }
    }
    json_lex_release(&sub);
    return kv->key && (kv->type < GP_KV_STRING || kv->str) ? GP_OK : GP_ENOMEM;
}

/* Call fn(key, value text) for each member of the object in `s`. */
static gp_status for_each_member(gp_trace *t, const char *s, size_t n, void *ud,
                                 gp_status (*fn)(gp_trace *, void *, const char *, const char *,
                                                 size_t))
{
    json_lex sub;
    sub_init(&sub, s, n);
    int more = 1;
    gp_status rc = GP_OK;
    if (n < 2 || s[0] != '{' || s[1] == '}')
        return GP_OK;
    sub.p++;
    while (more && rc == GP_OK) {
        const char *k, *v;
        size_t kn;
        char key[128];
        if (json_lex_string(&sub, &k, &kn) != GP_OK)
            break;
        snprintf(key, sizeof(key), "%.*s", (int)(kn < 127 ? kn : 127), k);
        sub.p++; /* ':' (compact JSON) */
        v = sub.p;
        if (json_lex_skip(&sub, 1) != GP_OK)
            break;
        rc = fn(t, ud, key, v, (size_t)(sub.p - v));
        if (json_lex_next(&sub, '}', "", &more) != GP_OK)
            break;
    }
    json_lex_release(&sub);
    return rc;
}

static gp_status config_member(gp_trace *t, void *ud, const char *key, const char *v, size_t n)
{
    gp_kv *kv = trace_vec_push((trace_vec *)ud);
    return kv ? make_kv(t, kv, key, v, n) : GP_ENOMEM;
}

static int64_t num_of(const char *v, size_t n)
{
    json_lex sub;
    json_num num;
    sub_init(&sub, v, n);
    int64_t r = json_lex_number(&sub, &num) == GP_OK ? json_num_to_i64(&num) : 0;
    json_lex_release(&sub);
    return r;
}

/* distributedInfo.rank: a whole number from 0 (a process group of up to a million ranks);
 * anything else is warned about and left out (-1: the file name or order ranks it). */
static void dist_rank(gp_trace *t, const char *v, size_t n)
{
    json_lex sub;
    json_num num;
    sub_init(&sub, v, n);
    int ok = json_lex_number(&sub, &num) == GP_OK && num.is_int && num.i >= 0 && num.i < 1 << 20;
    json_lex_release(&sub);
    if (ok) {
        t->info.rank = (int)num.i;
        return;
    }
    t->info.rank = -1;
    trace_warn(t,
               "distributedInfo.rank is %.*s%s, not a rank (a whole number from 0): ranked by "
               "the file name or order",
               (int)(n < 40 ? n : 40), v, n < 40 ? "" : "...");
}

static gp_status dist_member(gp_trace *t, void *ud, const char *key, const char *v, size_t n)
{
    if (!strcmp(key, "rank"))
        dist_rank(t, v, n);
    else if (!strcmp(key, "world_size"))
        t->info.world_size = (int)num_of(v, n);
    else if (!strcmp(key, "backend") && v[0] == '"')
        t->info.backend = trace_arena_strdup(&t->arena, v + 1, n - 2);
    return GP_OK;
}

static gp_status device_member(gp_trace *t, void *ud, const char *key, const char *v, size_t n)
{
    gp_device_props *d = ud;
    static const struct {
        const char *key;
        size_t off;
        int wide;
    } fields[] = {
            {"id", offsetof(gp_device_props, id), 0},
            {"totalGlobalMem", offsetof(gp_device_props, total_global_mem), 1},
            {"computeMajor", offsetof(gp_device_props, compute_major), 0},
            {"computeMinor", offsetof(gp_device_props, compute_minor), 0},
            {"numSms", offsetof(gp_device_props, num_sms), 0},
            {"maxThreadsPerBlock", offsetof(gp_device_props, max_threads_per_block), 0},
            {"maxThreadsPerMultiprocessor", offsetof(gp_device_props, max_threads_per_sm), 0},
            {"regsPerBlock", offsetof(gp_device_props, regs_per_block), 0},
            {"regsPerMultiprocessor", offsetof(gp_device_props, regs_per_sm), 0},
            {"warpSize", offsetof(gp_device_props, warp_size), 0},
            {"sharedMemPerBlock", offsetof(gp_device_props, shared_mem_per_block), 1},
            {"sharedMemPerMultiprocessor", offsetof(gp_device_props, shared_mem_per_sm), 1},
    };
    if (!strcmp(key, "name") && v[0] == '"') {
        d->name = trace_intern_str(&t->strings, v + 1, n - 2);
        return GP_OK;
    }
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (strcmp(key, fields[i].key) != 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')))
            continue;
        int64_t x = num_of(v, n);
        if (fields[i].wide)
            memcpy((char *)d + fields[i].off, &x, sizeof(x));
        else
            *(int *)(void *)((char *)d + fields[i].off) = (int)x;
    }
    return GP_OK;
}

static gp_status read_devices(gp_trace *t, const char *s, size_t n)
{
    json_lex sub;
    sub_init(&sub, s, n);
    int more = 1;
    gp_status rc = GP_OK;
    if (n < 2 || s[0] != '[' || s[1] == ']')
        return GP_OK;
    sub.p++;
    while (more && rc == GP_OK) {
        const char *v = sub.p;
        if (json_lex_skip(&sub, 1) != GP_OK)
            break;
        gp_device_props *d = trace_vec_push(&t->devs);
        if (!d)
            return GP_ENOMEM;
        d->id = (int)t->devs.n - 1;
        d->name = GP_STR_NONE;
        rc = for_each_member(t, v, (size_t)(sub.p - v), d, device_member);
        if (json_lex_next(&sub, ']', "", &more) != GP_OK)
            break;
    }
    json_lex_release(&sub);
    return rc;
}

static gp_status record(trace_builder *b, const char *key, const char *s, size_t n)
{
    gp_trace *t = b->t;
    if (!strcmp(key, GP_KEY_DEVICE_PROPERTIES))
        return read_devices(t, s, n);
    if (!strcmp(key, GP_KEY_GPROF))
        return for_each_member(t, s, n, &t->config, config_member);
    if (!strcmp(key, GP_KEY_DISTRIBUTED_INFO) && for_each_member(t, s, n, NULL, dist_member))
        return GP_ENOMEM;
    gp_kv *kv = trace_vec_push(&t->meta);
    if (!kv || make_kv(t, kv, key, s, n) != 0)
        return GP_ENOMEM;
    if (!strcmp(key, GP_KEY_SCHEMA_VERSION))
        t->info.schema_version = (int)kv->i;
    if (!strcmp(key, GP_KEY_BASE_TIME_NS))
        t->info.base_time_ns = kv->i;
    return GP_OK;
}

gp_status trace_meta_value(trace_builder *b, const char *key)
{
    jbuf o = {0};
    gp_status rc = capture(&b->lex, &o, 1);
    if (rc == GP_OK && (o.oom || record(b, key, o.p, o.n) != 0))
        rc = json_lex_error(&b->lex, b->lex.p, "out of memory");
    free(o.p);
    return rc;
}
