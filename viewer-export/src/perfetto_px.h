/* viewer-export/src/perfetto_px.h: the protobuf Perfetto writer's state and the pieces that
 * the single-trace export (perfetto_proto.c) and a job's one timeline (perfetto_job.c) share:
 * field numbers, packets, track descriptors and a trace's body on a packet sequence. */
#ifndef GP_EXPORT_PERFETTO_PX_H
#define GP_EXPORT_PERFETTO_PX_H

#include "export_int.h"
#include "gp/analysis.h"
#include "gp/rules.h"
#include "pb_enc.h"

enum {
    TRACE_PACKET = 1,
    /* TracePacket */
    PKT_CLOCK_SNAPSHOT = 6,
    PKT_TIMESTAMP = 8,
    PKT_SEQUENCE_ID = 10,
    PKT_TRACK_EVENT = 11,
    PKT_INTERNED_DATA = 12,
    PKT_SEQUENCE_FLAGS = 13,
    PKT_TRACK_DESCRIPTOR = 60,
    PKT_FIRST_ON_SEQUENCE = 87,
    /* TrackEvent */
    TE_CATEGORY_IIDS = 3,
    TE_DEBUG_ANNOTATIONS = 4,
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_TRACK_UUID = 11,
    TE_NAME = 23,
    TE_COUNTER_VALUE = 30,
    TE_DOUBLE_COUNTER_VALUE = 44,
    TE_FLOW_IDS = 47,
    TE_TERMINATING_FLOW_IDS = 48,
    /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
    TD_UUID = 1,
    TD_NAME = 2,
    TD_PROCESS = 3,
    TD_THREAD = 4,
    TD_PARENT_UUID = 5,
    TD_COUNTER = 8,
    TD_CHILD_ORDERING = 11,
    TD_SIBLING_ORDER_RANK = 12,
    PD_PID = 1,
    PD_PROCESS_NAME = 6,
    THD_PID = 1,
    THD_TID = 2,
    THD_THREAD_NAME = 5,
    CD_UNIT = 3,
    /* DebugAnnotation */
    DA_NAME_IID = 1,
    DA_INT_VALUE = 4,
    DA_DOUBLE_VALUE = 5,
    DA_STRING_VALUE = 6,
    DA_ARRAY_VALUES = 12,
    DA_STRING_VALUE_IID = 17,
    /* InternedData and its EventCategory / EventName / DebugAnnotationName entries */
    ID_EVENT_CATEGORIES = 1,
    ID_EVENT_NAMES = 2,
    ID_DEBUG_ANNOTATION_NAMES = 3,
    ID_DEBUG_ANNOTATION_STRING_VALUES = 29,
    IID = 1,
    INTERNED_NAME = 2,
    /* ClockSnapshot, ClockSnapshot.Clock */
    CS_CLOCKS = 1,
    CS_PRIMARY_TRACE_CLOCK = 2,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { CLOCK_REALTIME = 1, CLOCK_BOOTTIME = 6 };
enum { UNIT_SIZE_BYTES = 3 };
enum { CHILD_ORDERING_EXPLICIT = 3 };
#define PX_STR_IID0   ((uint64_t)1 << 32) /* the findings' texts: above every trace string's */
#define RANK_COUNTERS (1 << 30)           /* a GPU's memory counters sort after its streams */

/* A launch's flow end: the event at that end and the launch's index (flow id = index + 1). */
typedef struct flow_end {
    uint32_t ev, launch;
} flow_end;

/* A bit per trace string id. */
typedef struct bitset {
    uint8_t *v;
    size_t cap;
} bitset;

typedef struct px {
    export_out *o;
    pb_buf b;
    const gp_trace *t;
    const gp_event *ev;
    int64_t t0;
    uint64_t next_uuid;
    bitset named;            /* trace strings interned as event names */
    bitset shaped;           /* trace strings interned as argument values (Input Dims) */
    int interning;           /* an interned_data message is open in the packet */
    uint64_t next_str_iid;   /* for the findings' texts, above every trace string's */
    uint64_t *proc_uuid;     /* per track: the uuid of its process (or GPU) track */
    flow_end *starts, *ends; /* sorted by event */
    size_t n_flows;
    export_lanes lanes;  /* of the track being written */
    uint64_t *lane_uuid; /* its lanes' tracks */
    uint32_t n_lane_uuid, lane_uuid_cap;
    uint32_t seq;       /* trusted_packet_sequence_id: one a trace (a job: one a rank) */
    uint64_t root;      /* a job's rank track: every track of the trace under it; 0: none */
    uint64_t flow_base; /* added to flow ids, unique across a job's ranks */
} px;

enum desc_kind { DESC_PLAIN, DESC_PROCESS, DESC_THREAD, DESC_COUNTER };

typedef struct desc {
    enum desc_kind kind;
    uint64_t uuid, parent; /* parent 0: none */
    const char *name;
    int64_t pid, tid;
    int ordered;  /* its children sort by their rank */
    int32_t rank; /* its place under an ordered parent */
    int unit;     /* a counter's CounterDescriptor.Unit, 0: none */
} desc;

void px_track_descriptor(px *s, const desc *d);
void px_clock_snapshot(px *s, int64_t wall_ns);
/** A packet of sequence s->seq with a timestamp (ns since s->t0), needing incremental state. */
void px_event_packet_begin(px *s, int64_t ts);
void px_packet_end(px *s);
void px_slice_end(px *s, uint64_t track, int64_t ts);
/** The trace's body on sequence s->seq: its first packet (interning), its tracks and slices,
 * memory and value counters, and the findings' track. */
gp_status px_trace_body(px *s, const gp_analysis *a, const gp_findings *fs);
/** Free what px_trace_body kept of one trace (s->b and the output stay). */
void px_trace_done(px *s);

#endif
