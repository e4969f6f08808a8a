/* cupti_int.h: CUPTI inside libprof. cupti_loader.c dlopens libcupti (so libgp_prof.so loads
 * where it is missing), cupti_activity.c drives the Activity API and hands completed buffers to
 * the writer, cupti_convert.c turns records into trace events (pure: unit-tested with
 * synthetic records built from the CUDA 13 structs). */
#ifndef GP_LIBPROF_CUPTI_INT_H
#define GP_LIBPROF_CUPTI_INT_H

#include <cupti.h>

#include "prof_int.h"

/* ---- loader ---- */

typedef struct cupti_api {
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    /* optional (NULL when missing): Enable + replay of device records for a late attach */
    CUptiResult (*ActivityEnableAndDump)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityFlushPeriod)(uint32_t);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    /* optional (NULL when missing) */
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*Finalize)(void); /* optional: detaches CUPTI after a session */
    uint32_t version;              /* cuptiGetVersion's */
} cupti_api;

/* From CUPTI 13.3 on (its API version 130300; 13.2's is 130202) other tools may subscribe beside
 * libprof, unseen by it: cuptiFinalize, which tears CUPTI down for the whole process, would take
 * it from under them. */
#define CUPTI_VERSION_MULTI_SUBSCRIBER 130300u

/** Load libcupti and its functions once. @return the table, or NULL with `why` filled. */
const cupti_api *cupti_load(char *why, size_t why_len);
/** @return CUPTI's message for `rc` (never NULL). */
const char *cupti_error(const cupti_api *api, CUptiResult rc);

/* ---- buffers (cupti_activity.c) ---- */

/** CUPTI's buffer request callback: a fresh 1 MiB aligned buffer, or NULL (counted as dropped)
 * once 256 MiB are waiting for the writer. */
void CUPTIAPI cupti_buffer_requested(uint8_t **buf, size_t *size, size_t *max_records);
/** CUPTI's completion callback: queue the buffer for the writer thread; nothing else. */
void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                     size_t valid);

/* ---- converter ---- */

#define CUPTI_MAX_DEVICES 16
#define CUPTI_MAX_STREAMS 256
#define CUPTI_CORR_SLOTS  (1u << 16)
#define CUPTI_ADDR_SLOTS  (1u << 14)
/* GPU and memory records that came before their API record wait for it (its thread, its
 * external id, its flow start), at most this many; past that the oldest is written without. */
#define CUPTI_PEND_SLOTS 1024
#define CUPTI_PEND_BYTES 320
/* Extra tracks: sync events on tid = stream + this (they overlap the stream's kernels), the
 * CUPTI overhead track on the host process. */
#define CUPTI_SYNC_TID_OFFSET 0x20000000
#define CUPTI_OVERHEAD_TID    0x3fffffff

/** Names CUPTI's callback ids (cuptiGetCallbackName); tests pass their own. */
typedef const char *(*cupti_api_name_fn)(int driver, uint32_t cbid);

typedef struct cupti_device_info {
    int known;
    char name[128];
    uint64_t total_mem;
    uint32_t major, minor, sms, threads_per_block, threads_per_sm, regs_per_block, warp,
            smem_per_block, regs_per_sm, smem_per_sm;
} cupti_device_info;

typedef char *(*cupti_demangle_fn)(const char *, char *, size_t *, int *);

typedef struct cupti_conv {
    int pid;
    int all_driver; /* 1: every driver API call; 0: only those that put work on the GPU */
    cupti_api_name_fn api_name;
    /* correlation id -> calling thread, start, external id, learned from API records (every
     * one, in the window or not, written or not); corr_api: 1 the API record was seen, 2 it
     * was written and launches work (its GPU work, in the window, writes both flow ends) */
    uint32_t corr_id[CUPTI_CORR_SLOTS];
    uint32_t corr_tid[CUPTI_CORR_SLOTS];
    uint64_t corr_ext[CUPTI_CORR_SLOTS];
    uint64_t corr_t0[CUPTI_CORR_SLOTS]; /* the API call's start: kernels never start before it */
    uint8_t corr_api[CUPTI_CORR_SLOTS];
    /* GPU activities of `corr` whose flow was written: a graph launch has one per node, and
     * each flow needs an id of its own (corr, then corr + n << 32) */
    uint16_t corr_flows[CUPTI_CORR_SLOTS];
    int wait_for_api; /* API records are enabled: GPU work waits for its API record */
    _Alignas(8) uint8_t pend[CUPTI_PEND_SLOTS][CUPTI_PEND_BYTES];
    uint32_t pend_corr[CUPTI_PEND_SLOTS];
    uint64_t pend_seq[CUPTI_PEND_SLOTS]; /* 0: free */
    uint64_t pend_next;
    int n_pend;
    /* live device allocations (address -> bytes) and totals per device (index 16 = host) */
    uint64_t addr[CUPTI_ADDR_SLOTS];
    uint64_t addr_bytes[CUPTI_ADDR_SLOTS];
    int64_t allocated[CUPTI_MAX_DEVICES + 1];
    int64_t peak[CUPTI_MAX_DEVICES + 1];
    /* tracks seen, for metadata */
    uint32_t stream_dev[CUPTI_MAX_STREAMS], stream_id[CUPTI_MAX_STREAMS];
    uint8_t stream_sync[CUPTI_MAX_STREAMS];
    int n_streams;
    uint32_t ctx_dev[64][2]; /* context id -> device */
    int n_ctx;
    uint64_t evsync_id[256];
    uint32_t evsync_stream[256];
    int overhead_seen;
    cupti_device_info dev[CUPTI_MAX_DEVICES];
    uint32_t dev_used; /* bit n: device n had activity */
    uint32_t api_name_cache[2][1024];
    uint64_t kname_hash[256]; /* by the name's text: a reloaded module can reuse an address */
    uint32_t kname_id[256];
    uint64_t records, no_timestamp, outside_window;
    uint64_t end_before_start, before_launch; /* timed GPU work with impossible times */
    cupti_demangle_fn demangle; /* the C++ runtime's __cxa_demangle, when the process has one */
    int demangle_looked;
} cupti_conv;

void cupti_conv_init(cupti_conv *c, int pid, cupti_api_name_fn api_name);
/** Convert one record into events on `o` (unknown kinds are ignored). */
void cupti_conv_record(cupti_conv *c, prof_out *o, const CUpti_Activity *rec);
/** Write the records still waiting for their API record (at the end of the session). */
void cupti_conv_finish(cupti_conv *c, prof_out *o);
/** Write deviceProperties entries (comma-separated); @return how many. */
int cupti_conv_device_props(const cupti_conv *c, prof_out *o);
/** GPU process/stream metadata events. */
void cupti_conv_metadata(cupti_conv *c, prof_out *o);
/** "gprof" members from the devices (device_name, total_device_memory), each after a comma,
 * unless the program set them. */
void cupti_conv_config(const cupti_conv *c, prof_out *o);

/* ---- process-global state (members of the session object in session.c, see prof_int.h) ---- */

/* cupti_activity.c */
/* CUPTI 13 gives each thread buffers of its own: small buffers, so 256 threads fit the cap */
#define CUPTI_BUF_BYTES       (1u << 20)
#define CUPTI_MAX_OUTSTANDING (256u << 20) /* allocated and not yet converted */
#define CUPTI_MAX_HELD        (CUPTI_MAX_OUTSTANDING / CUPTI_BUF_BYTES)
#define CUPTI_MAX_CONTEXTS    64
typedef struct cupti_done_buf {
    uint8_t *buf;
    size_t valid;
    struct cupti_done_buf *next;
} cupti_done_buf;
typedef struct prof_cupti_state {
    const cupti_api *api;
    CUpti_SubscriberHandle subscriber;
    _Atomic int gpu_state; /* 0 off, 1 recording, -1 failed */
    int forked;
    pthread_mutex_t qlock;
    cupti_done_buf *queue_head, *queue_tail;
    _Atomic size_t outstanding;
    _Atomic uint64_t refused_buffers, cupti_dropped, late_buffers;
    CUpti_ActivityKind enabled[16];
    int n_enabled;
    char failed_kinds[192]; /* "memory (CUPTI_ERROR_...)", for gpu_status */
    cupti_conv conv;
    /* Buffers CUPTI holds (handed out, not yet completed), with the number of forced flushes
     * started when handed out: one that two whole forced flushes left with CUPTI means another
     * client took the callbacks. held_lock also guards `contexts`: those created during the
     * session and not destroyed (resource callbacks), synchronised at exit. */
    pthread_mutex_t held_lock;
    CUcontext contexts[CUPTI_MAX_CONTEXTS];
    int n_contexts;
    uint8_t *held[CUPTI_MAX_HELD];
    uint64_t held_flush[CUPTI_MAX_HELD];
    uint64_t flushes; /* forced flushes started */
    int taken_over;
    _Atomic int flusher_done; /* the signal path's forced flush finished */
} prof_cupti_state;
PROF_STATE_ACCESSOR prof_cupti_state *prof_state_cupti(void);

/* cupti_loader.c */
typedef struct prof_loader_state {
    cupti_api api;
    int state; /* 0 not tried, 1 loaded, -1 failed */
    char fail_why[256];
    pthread_mutex_t lock;
} prof_loader_state;
PROF_STATE_ACCESSOR prof_loader_state *prof_state_loader(void);

#endif
