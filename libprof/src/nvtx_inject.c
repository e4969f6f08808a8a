/* nvtx_inject.c: NVTX capture. NVTX3's loader calls InitializeInjectionNvtx2 in the library that
 * NVTX_INJECTION64_PATH names; we fill its function tables so nvtxRangePush/Pop, Start/End,
 * Mark and NameOsThread (plain and domain forms) land in libprof's rings. A program that links
 * libgp_prof.so gets the variable set by the constructor below, so its NVTX calls are captured
 * too (if its first NVTX call comes after the library loads, which linking guarantees). */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "prof_int.h"

/* ---- messages ---- */

/* UTF-32 wchar_t (Linux) to UTF-8, truncated to the buffer. */
static const char *from_wide(const wchar_t *w, char *buf, size_t cap)
{
    size_t j = 0;
    for (; w && *w && j + 5 < cap; w++) {
        unsigned long c = (unsigned long)*w;
        if (c < 0x80) {
            buf[j++] = (char)c;
        } else if (c < 0x800) {
            buf[j++] = (char)(0xC0 | (c >> 6));
            buf[j++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            buf[j++] = (char)(0xE0 | (c >> 12));
            buf[j++] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[j++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x110000) {
            buf[j++] = (char)(0xF0 | (c >> 18));
            buf[j++] = (char)(0x80 | ((c >> 12) & 0x3F));
            buf[j++] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[j++] = (char)(0x80 | (c & 0x3F));
        }
    }
    buf[j] = '\0';
    return buf;
}

static uint32_t name_of(prof_thread *t, const char *msg)
{
    return prof_intern_cached_dyn(t, msg ? msg : "(null)");
}

static uint32_t name_of_wide(prof_thread *t, const wchar_t *msg)
{
    char buf[512];
    return gp_prof_intern(from_wide(msg, buf, sizeof(buf)));
    (void)t;
}

static uint32_t name_of_attr(prof_thread *t, const nvtxEventAttributes_t *a)
{
    if (!a)
        return name_of(t, NULL);
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return name_of(t, a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return name_of_wide(t, a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return (uint32_t)(uintptr_t)a->message.registered;
    default:
        return name_of(t, "(unnamed)");
    }
}

/* The calling thread, or NULL when nothing is being recorded. */
static prof_thread *active(void)
{
    if (!atomic_load_explicit(&prof_state_session()->running, memory_order_relaxed))
        return NULL;
    return prof_thread_self();
}

/* ---- callbacks ---- */

static int push_name(prof_thread *t, uint32_t name)
{
    int depth = t->depth;
    prof_nvtx_push(t, name);
    return depth;
}

static int cb_push_a(const char *msg)
{
    prof_thread *t = active();
    return t ? push_name(t, name_of(t, msg)) : -1;
}

static int cb_push_w(const wchar_t *msg)
{
    prof_thread *t = active();
    return t ? push_name(t, name_of_wide(t, msg)) : -1;
}

static int cb_push_ex(const nvtxEventAttributes_t *a)
{
    prof_thread *t = active();
    return t ? push_name(t, name_of_attr(t, a)) : -1;
}

static int cb_pop(void)
{
    return prof_nvtx_pop();
}

static void mark_name(prof_thread *t, uint32_t name)
{
    if (!prof_recording(GP_PROF_RECORD_NVTX))
        return;
    int64_t now = prof_thread_ticks(t);
    prof_rec r = {now, now, 0, name, PROF_REC_MARK, (uint16_t)t->depth};
    prof_emit(t, &r);
}

static void cb_mark_a(const char *msg)
{
    prof_thread *t = active();
    if (t)
        mark_name(t, name_of(t, msg));
}

static void cb_mark_w(const wchar_t *msg)
{
    prof_thread *t = active();
    if (t)
        mark_name(t, name_of_wide(t, msg));
}

static void cb_mark_ex(const nvtxEventAttributes_t *a)
{
    prof_thread *t = active();
    if (t)
        mark_name(t, name_of_attr(t, a));
}

static nvtxRangeId_t cb_start_a(const char *msg)
{
    prof_thread *t = active();
    return t ? prof_async_start(name_of(t, msg)) : 0;
}

static nvtxRangeId_t cb_start_w(const wchar_t *msg)
{
    prof_thread *t = active();
    return t ? prof_async_start(name_of_wide(t, msg)) : 0;
}

static nvtxRangeId_t cb_start_ex(const nvtxEventAttributes_t *a)
{
    prof_thread *t = active();
    return t ? prof_async_start(name_of_attr(t, a)) : 0;
}

static void cb_end(nvtxRangeId_t id)
{
    prof_async_end(id);
}

static void cb_name_thread_a(uint32_t tid, const char *name)
{
    if (name)
        prof_thread_name_set((int)tid, prof_intern_n(name, strnlen(name, 63), 0));
}

static void cb_name_thread_w(uint32_t tid, const wchar_t *name)
{
    char buf[64];
    if (name)
        prof_thread_name_set((int)tid, gp_prof_intern(from_wide(name, buf, sizeof(buf))));
}

/* Domain forms: ranges of every domain share the thread's stack. */
static void cb_dmark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    cb_mark_ex(a);
}

static nvtxRangeId_t cb_dstart_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return cb_start_ex(a);
}

static void cb_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    cb_end(id);
}

static int cb_dpush_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return cb_push_ex(a);
}

static int cb_dpop(nvtxDomainHandle_t d)
{
    (void)d;
    return cb_pop();
}

static nvtxStringHandle_t cb_dregister_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)gp_prof_intern(s ? s : "(null)");
}

static nvtxStringHandle_t cb_dregister_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    char buf[512];
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)gp_prof_intern(from_wide(s, buf, sizeof(buf)));
}

static nvtxDomainHandle_t cb_dcreate_a(const char *name)
{
    /* Opaque to NVTX: any non-NULL value; ours is the interned domain name. */
    return (nvtxDomainHandle_t)(uintptr_t)(gp_prof_intern(name ? name : "domain") + 1);
}

static nvtxDomainHandle_t cb_dcreate_w(const wchar_t *name)
{
    char buf[256];
    return cb_dcreate_a(from_wide(name, buf, sizeof(buf)));
}

static void cb_ddestroy(nvtxDomainHandle_t d)
{
    (void)d;
}

/* ---- tables ---- */

typedef struct slot {
    unsigned id;
    NvtxFunctionPointer fn;
} slot;

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static const slot core[] = {
        {NVTX_CBID_CORE_MarkEx, FN(cb_mark_ex)},
        {NVTX_CBID_CORE_MarkA, FN(cb_mark_a)},
        {NVTX_CBID_CORE_MarkW, FN(cb_mark_w)},
        {NVTX_CBID_CORE_RangeStartEx, FN(cb_start_ex)},
        {NVTX_CBID_CORE_RangeStartA, FN(cb_start_a)},
        {NVTX_CBID_CORE_RangeStartW, FN(cb_start_w)},
        {NVTX_CBID_CORE_RangeEnd, FN(cb_end)},
        {NVTX_CBID_CORE_RangePushEx, FN(cb_push_ex)},
        {NVTX_CBID_CORE_RangePushA, FN(cb_push_a)},
        {NVTX_CBID_CORE_RangePushW, FN(cb_push_w)},
        {NVTX_CBID_CORE_RangePop, FN(cb_pop)},
        {NVTX_CBID_CORE_NameOsThreadA, FN(cb_name_thread_a)},
        {NVTX_CBID_CORE_NameOsThreadW, FN(cb_name_thread_w)},
};

static const slot core2[] = {
        {NVTX_CBID_CORE2_DomainMarkEx, FN(cb_dmark_ex)},
        {NVTX_CBID_CORE2_DomainRangeStartEx, FN(cb_dstart_ex)},
        {NVTX_CBID_CORE2_DomainRangeEnd, FN(cb_dend)},
        {NVTX_CBID_CORE2_DomainRangePushEx, FN(cb_dpush_ex)},
        {NVTX_CBID_CORE2_DomainRangePop, FN(cb_dpop)},
        {NVTX_CBID_CORE2_DomainRegisterStringA, FN(cb_dregister_a)},
        {NVTX_CBID_CORE2_DomainRegisterStringW, FN(cb_dregister_w)},
        {NVTX_CBID_CORE2_DomainCreateA, FN(cb_dcreate_a)},
        {NVTX_CBID_CORE2_DomainCreateW, FN(cb_dcreate_w)},
        {NVTX_CBID_CORE2_DomainDestroy, FN(cb_ddestroy)},
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const slot *s,
                size_t n)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].id < size && table[s[i].id])
            *table[s[i].id] = s[i].fn;
    return 1;
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    const NvtxExportTableCallbacks *cb =
            (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof(*cb))
        return 0;
    /* Injected by a tool or a user: start recording. Loaded because a program links us: that
     * program starts its own session with gp_prof_init. The session starts before the tables are
     * filled: a thread whose first NVTX call comes while another thread initialises NVTX reads
     * our pointer straight from the table (only a call that finds the init stub waits for the
     * initialisation), so a pointer published before the session runs would lose its calls. */
    if (!getenv("GP_PROF_NVTX_LINKED"))
        prof_inject_start("NVTX injection", 0);
    if (!fill(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0])))
        return 0;
    fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
    const NvtxExportTableVersionInfo *vi =
            (const NvtxExportTableVersionInfo *)get_export_table(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    return 1;
}

/* Linking libgp_prof.so: point NVTX at this library unless something else already is. */
__attribute__((constructor)) static void nvtx_link_hook(void)
{
    if (getenv("NVTX_INJECTION64_PATH"))
        return;
    Dl_info info;
    char path[PATH_MAX];
    if (!dladdr((void *)nvtx_link_hook, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, path))
        return;
    setenv("GP_PROF_NVTX_LINKED", "1", 1);
    setenv("NVTX_INJECTION64_PATH", path, 0);
}
