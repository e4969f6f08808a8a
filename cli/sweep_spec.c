/* The grid of a sweep: --vary specs parsed and checked, settings enumerated, and each setting's
 * command built from the trainer's flags or from a -- CMD template, one argv element at a time.
 */
#include "cli.h"
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The trainer flags a sweep may vary (gprof-train run's), switches marked. */
static const struct trainer_flag {
    const char *name;
    int is_switch;
} trainer_flags[] = {
        {"workers", 0},
        {"prefetch", 0},
        {"batch-size", 0},
        {"model", 0},
        {"amp", 0},
        {"device", 0},
        {"optimizer", 0},
        {"lr", 0},
        {"accumulate", 0},
        {"seed", 0},
        {"epochs", 0},
        {"data", 0},
        {"pin-memory", 1},
        {"non-blocking", 1},
        {"cudnn-benchmark", 1},
        {"augment", 1},
        {"checkpoint-activations", 1},
        {"zero-grad", 0},
        {"fused", 1},
        {"channels-last", 1},
        {"cuda-graphs", 1},
};
#define N_TRAINER_FLAGS (sizeof(trainer_flags) / sizeof(trainer_flags[0]))

static const struct trainer_flag *find_trainer_flag(const char *name)
{
    for (size_t i = 0; i < N_TRAINER_FLAGS; i++)
        if (strcmp(trainer_flags[i].name, name) == 0)
            return &trainer_flags[i];
    return NULL;
}

static int key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* on/off for a switch: on, true, yes, 1 / off, false, no, 0. @return the canonical word. */
static const char *switch_word(const char *v)
{
    static const char *const on[] = {"on", "true", "yes", "1"}, *const off[] = {"off", "false",
                                                                                "no", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(v, on[i]) == 0)
            return "on";
        if (strcmp(v, off[i]) == 0)
            return "off";
    }
    return NULL;
}

static int bad_spec(const char *arg, const char *problem)
{
    cli_error("invalid --vary '%s': %s", arg, problem);
    cli_hint("--vary KEY=V1,V2,... e.g. --vary workers=0,2,4 (values may not be empty)");
    return CLI_ERROR;
}

static int check_key(const struct sweep_spec *s, const char *arg, const char *name, size_t len)
{
    if (len == 0)
        return bad_spec(arg, "the key is empty");
    for (size_t i = 0; i < len; i++)
        if (!key_char(name[i]))
            return bad_spec(arg, "a key holds letters, digits, '_' and '-' only");
    for (int k = 0; k < s->n_keys; k++)
        if (strlen(s->keys[k].name) == len && strncmp(s->keys[k].name, name, len) == 0)
            return bad_spec(arg, "this key is already varied: give all its values in one --vary");
    if (s->n_keys == SWEEP_MAX_KEYS)
        return bad_spec(arg, "at most 8 keys");
    return CLI_OK;
}

static int check_trainer_key(const char *arg, const char *name, struct sweep_key *k)
{
    const struct trainer_flag *f = find_trainer_flag(name);
    if (!f) {
        cli_error("invalid --vary '%s': '%s' is not a trainer flag sweep can vary", arg, name);
        cli_hint("workers, prefetch, batch-size, model, amp, device, optimizer, lr, accumulate, "
                 "seed, epochs, data, pin-memory, non-blocking, cudnn-benchmark, augment, "
                 "checkpoint-activations, zero-grad, fused, channels-last, cuda-graphs; or "
                 "sweep any program: gprof-train sweep --vary KEY=... -- CMD ... {KEY}");
        return CLI_ERROR;
    }
    k->is_switch = f->is_switch;
    return CLI_OK;
}

/* Split "v1,v2,..." into k->values (copies). */
static int split_values(const char *arg, const char *list, struct sweep_key *k)
{
    for (const char *p = list;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0)
            return bad_spec(arg, "a value is empty");
        if (k->n_values == SWEEP_MAX_VALUES)
            return bad_spec(arg, "at most 64 values a key");
        char *v = strndup(p, len);
        if (!v)
            return cli_error("out of memory");
        k->values[k->n_values++] = v;
        if (k->is_switch && !switch_word(v))
            return bad_spec(arg, "a switch takes on or off");
        if (k->is_switch)
            strcpy(v, switch_word(v));
        if (!end)
            return CLI_OK;
        p = end + 1;
    }
}

int sweep_spec_add(struct sweep_spec *s, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        return bad_spec(arg, "no '='");
    int rc = check_key(s, arg, arg, (size_t)(eq - arg));
    if (rc != CLI_OK)
        return rc;
    struct sweep_key *k = &s->keys[s->n_keys];
    memset(k, 0, sizeof(*k));
    k->name = strndup(arg, (size_t)(eq - arg));
    if (!k->name)
        return cli_error("out of memory");
    s->n_keys++; /* released with the spec from here on */
    if (s->trainer && (rc = check_trainer_key(arg, k->name, k)) != CLI_OK)
        return rc;
    if ((rc = split_values(arg, eq + 1, k)) != CLI_OK)
        return rc;
    if (sweep_n_settings(s) > SWEEP_MAX_SETTINGS)
        return bad_spec(arg, "the grid would have more than 1024 settings");
    return CLI_OK;
}

void sweep_spec_release(struct sweep_spec *s)
{
    for (int k = 0; k < s->n_keys; k++) {
        for (int v = 0; v < s->keys[k].n_values; v++)
            free(s->keys[k].values[v]);
        free(s->keys[k].name);
    }
    s->n_keys = 0;
}

size_t sweep_n_settings(const struct sweep_spec *s)
{
    size_t n = 1;
    for (int k = 0; k < s->n_keys; k++)
        n *= (size_t)s->keys[k].n_values;
    return n;
}

void sweep_setting(const struct sweep_spec *s, size_t i, int *idx)
{
    for (int k = s->n_keys - 1; k >= 0; k--) {
        idx[k] = (int)(i % (size_t)s->keys[k].n_values);
        i /= (size_t)s->keys[k].n_values;
    }
}

void sweep_label(const struct sweep_spec *s, const int *idx, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < s->n_keys && len < cap; k++) {
        int w = snprintf(buf + len, cap - len, "%s%s=%s", k ? " " : "", s->keys[k].name,
                         s->keys[k].values[idx[k]]);
        len += w > 0 ? (size_t)w : 0;
    }
    if (s->n_keys == 0)
        snprintf(buf, cap, "as given");
}

/* ---- templates ---- */

/* The key a "{NAME}" at p names (p at '{'), or -1 when it names none; *len: the placeholder's
 * length, 0 when p does not start a placeholder (not {, or not of key characters). */
static int placeholder_at(const struct sweep_spec *s, const char *p, size_t *len)
{
    *len = 0;
    if (*p != '{')
        return -1;
    size_t n = 1;
    while (key_char(p[n]))
        n++;
    if (p[n] != '}' || n == 1)
        return -1;
    *len = n + 1;
    for (int k = 0; k < s->n_keys; k++)
        if (strlen(s->keys[k].name) == n - 1 && strncmp(s->keys[k].name, p + 1, n - 1) == 0)
            return k;
    return -1;
}

/* The length of an escaped placeholder "{{NAME}}" at p (it stands for "{NAME}"), else 0. */
static size_t escape_at(const char *p)
{
    if (p[0] != '{' || p[1] != '{')
        return 0;
    size_t n = 2;
    while (key_char(p[n]))
        n++;
    return n > 2 && p[n] == '}' && p[n + 1] == '}' ? n + 2 : 0;
}

int sweep_template_check(const struct sweep_spec *s, const char *const *tmpl, int n)
{
    int used[SWEEP_MAX_KEYS] = {0};
    for (int i = 0; i < n; i++)
        for (const char *p = tmpl[i]; *p; p++) {
            size_t len = escape_at(p);
            if (len) {
                p += len - 1;
                continue;
            }
            int k = placeholder_at(s, p, &len);
            if (len && k < 0) {
                cli_error("the command uses %.*s, but no --vary %.*s gives its values", (int)len, p,
                          (int)len - 2, p + 1);
                return CLI_ERROR;
            }
            if (k >= 0)
                used[k] = 1;
        }
    for (int k = 0; k < s->n_keys; k++)
        if (!used[k]) {
            cli_error("--vary %s is not used by the command", s->keys[k].name);
            cli_hint("put {%s} where its value goes, e.g. -- python3 train.py --%s {%s}",
                     s->keys[k].name, s->keys[k].name, s->keys[k].name);
            return CLI_ERROR;
        }
    return CLI_OK;
}

static char *substitute_one(const struct sweep_spec *s, const int *idx, const char *t)
{
    size_t cap = strlen(t) + 1, len = 0;
    for (int k = 0; k < s->n_keys; k++)
        cap += strlen(s->keys[k].values[idx[k]]) * strlen(t); /* bound: every char a key */
    char *out = malloc(cap);
    for (const char *p = t; out && *p;) {
        size_t plen = escape_at(p);
        if (plen) { /* {{KEY}} -> {KEY} */
            memcpy(out + len, p + 1, plen - 2);
            len += plen - 2;
            p += plen;
            continue;
        }
        int k = placeholder_at(s, p, &plen);
        const char *v = k >= 0 ? s->keys[k].values[idx[k]] : p;
        size_t vlen = k >= 0 ? strlen(v) : 1;
        memcpy(out + len, v, vlen);
        len += vlen;
        p += k >= 0 ? plen : 1;
    }
    if (out)
        out[len] = 0;
    return out;
}

void sweep_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

char **sweep_substitute(const struct sweep_spec *s, const int *idx, const char *const *tmpl, int n)
{
    char **argv = calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; argv && i < n; i++)
        if (!(argv[i] = substitute_one(s, idx, tmpl[i]))) {
            sweep_argv_free(argv);
            return NULL;
        }
    return argv;
}

char **sweep_trainer_argv(const struct sweep_spec *s, const int *idx, const char *const *pre,
                          int n_pre)
{
    char **argv = calloc((size_t)n_pre + 2 * (size_t)s->n_keys + 1, sizeof(char *));
    int n = 0, ok = argv != NULL;
    for (int i = 0; ok && i < n_pre; i++)
        ok = (argv[n++] = strdup(pre[i])) != NULL;
    for (int k = 0; ok && k < s->n_keys; k++) {
        const struct sweep_key *key = &s->keys[k];
        const char *v = key->values[idx[k]];
        size_t cap = strlen(key->name) + 8;
        char *flag = malloc(cap);
        if (flag)
            snprintf(flag, cap, "--%s%s", key->is_switch && strcmp(v, "off") == 0 ? "no-" : "",
                     key->name);
        ok = (argv[n++] = flag) != NULL;
        if (ok && !key->is_switch)
            ok = (argv[n++] = strdup(v)) != NULL;
    }
    if (!ok) {
        sweep_argv_free(argv);
        return NULL;
    }
    return argv;
}
