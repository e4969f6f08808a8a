/* config.c: the key/values that programs add to the trace's top-level "gprof" object
 * (gp_prof_config_*): a small locked list, kept across sessions, rendered by the writer. */
#include <stdlib.h>
#include <string.h>

#include "prof_int.h"

typedef prof_cfg_entry cfg_entry;
#define MAX_CFG PROF_MAX_CFG

/* The state is a member of the session object (session.c): prof_state_config(). */

static void entry_release(cfg_entry *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->strv[i]);
    free(e->strv);
    free(e->key);
    memset(e, 0, sizeof(*e));
}

/* Find or add `key` (lock held) and clear its old value. */
static cfg_entry *slot(const char *key)
{
    for (int i = 0; i < prof_state_config()->n_cfg; i++) {
        if (strcmp(prof_state_config()->cfg[i].key, key) == 0) {
            char *k = prof_state_config()->cfg[i].key;
            prof_state_config()->cfg[i].key = NULL;
            entry_release(&prof_state_config()->cfg[i]);
            prof_state_config()->cfg[i].key = k;
            return &prof_state_config()->cfg[i];
        }
    }
    if (prof_state_config()->n_cfg == MAX_CFG)
        return NULL;
    prof_state_config()->cfg[prof_state_config()->n_cfg].key = strdup(key);
    if (!prof_state_config()->cfg[prof_state_config()->n_cfg].key)
        return NULL;
    return &prof_state_config()->cfg[prof_state_config()->n_cfg++];
}

static void set_strings(const char *key, enum prof_cfg_type type, const char *const *v, int n)
{
    if (!key || n < 0)
        return;
    pthread_mutex_lock(&prof_state_config()->lock);
    cfg_entry *e = slot(key);
    if (e) {
        e->type = type;
        e->strv = calloc((size_t)(n ? n : 1), sizeof(char *));
        for (int i = 0; e->strv && i < n; i++)
            if ((e->strv[i] = strdup(v[i] ? v[i] : "")) != NULL)
                e->n = i + 1;
    }
    pthread_mutex_unlock(&prof_state_config()->lock);
}

static void set_number(const char *key, enum prof_cfg_type type, int64_t i, double d)
{
    if (!key)
        return;
    pthread_mutex_lock(&prof_state_config()->lock);
    cfg_entry *e = slot(key);
    if (e) {
        e->type = type;
        e->i = i;
        e->d = d;
    }
    pthread_mutex_unlock(&prof_state_config()->lock);
}

void gp_prof_config_str(const char *key, const char *value)
{
    const char *v[1] = {value ? value : ""};
    set_strings(key, PROF_CFG_STR, v, 1);
}

void gp_prof_config_strv(const char *key, const char *const *values, int n)
{
    set_strings(key, PROF_CFG_STRV, values, values ? n : 0);
}

void gp_prof_config_int(const char *key, int64_t value)
{
    set_number(key, PROF_CFG_INT, value, 0);
}

void gp_prof_config_bool(const char *key, int value)
{
    set_number(key, PROF_CFG_BOOL, value != 0, 0);
}

void gp_prof_config_double(const char *key, double value)
{
    set_number(key, PROF_CFG_DOUBLE, 0, value);
}

void gp_prof_config_clear(void)
{
    pthread_mutex_lock(&prof_state_config()->lock);
    for (int i = 0; i < prof_state_config()->n_cfg; i++)
        entry_release(&prof_state_config()->cfg[i]);
    prof_state_config()->n_cfg = 0;
    pthread_mutex_unlock(&prof_state_config()->lock);
}

int prof_config_has(const char *key)
{
    int found = 0;
    pthread_mutex_lock(&prof_state_config()->lock);
    for (int i = 0; i < prof_state_config()->n_cfg && !found; i++)
        found = strcmp(prof_state_config()->cfg[i].key, key) == 0;
    pthread_mutex_unlock(&prof_state_config()->lock);
    return found;
}

static void write_value(prof_out *o, const cfg_entry *e)
{
    switch (e->type) {
    case PROF_CFG_STR:
        prof_out_json_str(o, e->n ? e->strv[0] : "", e->n ? strlen(e->strv[0]) : 0);
        break;
    case PROF_CFG_INT:
        prof_out_i64(o, e->i);
        break;
    case PROF_CFG_BOOL:
        prof_out_str(o, e->i ? "true" : "false");
        break;
    case PROF_CFG_DOUBLE:
        prof_out_double(o, e->d);
        break;
    case PROF_CFG_STRV:
        prof_out_raw(o, "[", 1);
        for (int i = 0; i < e->n; i++) {
            if (i)
                prof_out_raw(o, ",", 1);
            prof_out_json_str(o, e->strv[i], strlen(e->strv[i]));
        }
        prof_out_raw(o, "]", 1);
        break;
    }
}

void prof_config_write(prof_out *o, int lead_comma)
{
    pthread_mutex_lock(&prof_state_config()->lock);
    for (int i = 0; i < prof_state_config()->n_cfg; i++) {
        if (lead_comma || i > 0)
            prof_out_raw(o, ",", 1);
        prof_out_json_str(o, prof_state_config()->cfg[i].key,
                          strlen(prof_state_config()->cfg[i].key));
        prof_out_raw(o, ":", 1);
        write_value(o, &prof_state_config()->cfg[i]);
    }
    pthread_mutex_unlock(&prof_state_config()->lock);
}
