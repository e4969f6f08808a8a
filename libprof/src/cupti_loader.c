/* cupti_loader.c: libcupti is opened at run time (dlopen), never linked, so libgp_prof.so loads
 * and records CPU ranges on machines without CUPTI; it is never closed (CUDA 13.0-13.1 crash at
 * exit when CUPTI is unloaded without cuptiFinalize). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_int.h"

/* The state is a member of the session object (session.c): prof_state_loader(). */

#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&prof_state_loader()->api.field = dlsym(h, name);                                \
        if (!prof_state_loader()->api.field) {                                                     \
            snprintf(prof_state_loader()->fail_why, sizeof(prof_state_loader()->fail_why),         \
                     "libcupti lacks %s", name);                                                   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* Each pointer must have exactly the type of the prototype in the CUDA 13 headers: calling
 * through a mismatched one is undefined behaviour, so the build checks it. */
#define SAME_TYPE(field, fn)                                                                       \
    _Static_assert(                                                                                \
            __builtin_types_compatible_p(__typeof__(((cupti_api *)0)->field), __typeof__(&fn)),    \
            #field " does not match the prototype of " #fn)
SAME_TYPE(GetVersion, cuptiGetVersion);
SAME_TYPE(GetResultString, cuptiGetResultString);
SAME_TYPE(Subscribe, cuptiSubscribe);
SAME_TYPE(Unsubscribe, cuptiUnsubscribe);
SAME_TYPE(EnableCallback, cuptiEnableCallback);
SAME_TYPE(GetCallbackName, cuptiGetCallbackName);
SAME_TYPE(SetThreadIdType, cuptiSetThreadIdType);
SAME_TYPE(ActivityRegisterCallbacks, cuptiActivityRegisterCallbacks);
SAME_TYPE(ActivityEnable, cuptiActivityEnable);
SAME_TYPE(ActivityEnableAndDump, cuptiActivityEnableAndDump);
SAME_TYPE(ActivityDisable, cuptiActivityDisable);
SAME_TYPE(ActivityGetNextRecord, cuptiActivityGetNextRecord);
SAME_TYPE(ActivityFlushAll, cuptiActivityFlushAll);
SAME_TYPE(ActivityFlushPeriod, cuptiActivityFlushPeriod);
SAME_TYPE(ActivityGetNumDroppedRecords, cuptiActivityGetNumDroppedRecords);
SAME_TYPE(ActivityRegisterTimestampCallback, cuptiActivityRegisterTimestampCallback);
SAME_TYPE(ActivityPushExternalCorrelationId, cuptiActivityPushExternalCorrelationId);
SAME_TYPE(ActivityPopExternalCorrelationId, cuptiActivityPopExternalCorrelationId);
SAME_TYPE(Finalize, cuptiFinalize);

static int load_symbols(void *h)
{
    SYM(GetVersion, "cuptiGetVersion");
    SYM(GetResultString, "cuptiGetResultString");
    SYM(Subscribe, "cuptiSubscribe");
    SYM(Unsubscribe, "cuptiUnsubscribe");
    SYM(EnableCallback, "cuptiEnableCallback");
    SYM(GetCallbackName, "cuptiGetCallbackName");
    SYM(SetThreadIdType, "cuptiSetThreadIdType");
    SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    SYM(ActivityEnable, "cuptiActivityEnable");
    SYM(ActivityDisable, "cuptiActivityDisable");
    SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    SYM(ActivityFlushAll, "cuptiActivityFlushAll");
    SYM(ActivityFlushPeriod, "cuptiActivityFlushPeriod");
    SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    *(void **)&prof_state_loader()->api.ActivityEnableAndDump =
            dlsym(h, "cuptiActivityEnableAndDump");
    *(void **)&prof_state_loader()->api.ActivityRegisterTimestampCallback =
            dlsym(h, "cuptiActivityRegisterTimestampCallback");
    *(void **)&prof_state_loader()->api.ActivityPushExternalCorrelationId =
            dlsym(h, "cuptiActivityPushExternalCorrelationId");
    *(void **)&prof_state_loader()->api.ActivityPopExternalCorrelationId =
            dlsym(h, "cuptiActivityPopExternalCorrelationId");
    *(void **)&prof_state_loader()->api.Finalize = dlsym(h, "cuptiFinalize");
    return 0;
}

/* GP_PROF_CUPTI=PATH: that libcupti and no other (a CUPTI of one's choice; the simulated one
 * in tests/gpusim). Otherwise the build's CUPTI, then the loader's search path
 * (LD_LIBRARY_PATH, pip wheels). */
static void *open_cupti(void)
{
    const char *chosen = getenv("GP_PROF_CUPTI");
    if (chosen && *chosen) {
        void *h = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            snprintf(prof_state_loader()->fail_why, sizeof(prof_state_loader()->fail_why),
                     "GP_PROF_CUPTI=%s cannot be loaded: %s", chosen, dlerror());
        return h;
    }
    const char *const names[] = {
#ifdef GP_CUPTI_LIBDIR
            GP_CUPTI_LIBDIR "/libcupti.so.13", GP_CUPTI_LIBDIR "/libcupti.so",
#endif
            "libcupti.so.13", "libcupti.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(prof_state_loader()->fail_why, sizeof(prof_state_loader()->fail_why),
                 "CUPTI not found (libcupti.so.13): %s", dlerror());
    return h;
}

static int load_once(void)
{
    void *h = open_cupti();
    if (!h)
        return -1;
    if (load_symbols(h) != 0)
        return -1;
    uint32_t v = 0;
    if (prof_state_loader()->api.GetVersion(&v) != CUPTI_SUCCESS || v < 130000) {
        snprintf(prof_state_loader()->fail_why, sizeof(prof_state_loader()->fail_why),
                 "CUPTI %u is too old: gprof-train reads CUDA 13 records (CUPTI >= 130000)", v);
        return -1;
    }
    prof_state_loader()->api.version = v;
    return 0;
}

const cupti_api *cupti_load(char *why, size_t why_len)
{
    pthread_mutex_lock(&prof_state_loader()->lock);
    if (prof_state_loader()->state == 0)
        prof_state_loader()->state = load_once() == 0 ? 1 : -1;
    pthread_mutex_unlock(&prof_state_loader()->lock);
    if (prof_state_loader()->state < 0) {
        snprintf(why, why_len, "no GPU activity could be recorded: %s",
                 prof_state_loader()->fail_why);
        return NULL;
    }
    return &prof_state_loader()->api;
}

const char *cupti_error(const cupti_api *a, CUptiResult rc)
{
    const char *s = NULL;
    if (!a || a->GetResultString(rc, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}
