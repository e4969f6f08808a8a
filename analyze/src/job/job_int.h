/* job_int.h: private parts of gp_job shared by the rank summary (job_rank.c), the cross-rank view
 * (job.c), its output (job_write.c) and GT16 (job_straggler.c). */
#ifndef GP_ANALYZE_JOB_INT_H
#define GP_ANALYZE_JOB_INT_H

#include "gp/job.h"
#include "rules/rules_int.h"

/* One step of a rank: its time and what filled it, ns. */
struct job_step {
    int64_t num, dur, compute, comm, exposed, idle, loader;
};

/* What identifies a collective across ranks: its process group (else its stream), what it is
 * (its "Collective name"; else 0, and operations that kernel names tell are compared when
 * matched: RCCL's Generic kernel tells none), its size where every rank's must be equal, and
 * its number in the group: PyTorch's "Seq" where recorded (step is then INT64_MIN), else its
 * order among the calls of the step with the same group, what and size. */
struct job_key {
    uint64_t group, what;
    int64_t size, step, seq;
};

/* One collective of a rank: unix ns on the rank's own clock. */
struct job_call {
    struct job_key key;
    int64_t step;
    uint32_t index; /* order among the rank's collectives in the step */
    uint16_t op;    /* index into job_ops[] */
    int64_t ts, end;
    /* what the key was made of, for a summary (job_summary_write.c) */
    uint32_t pg, name; /* its process group and "Collective name": gp_job_part.strs, or JOB_NONE */
    int64_t stream, nelems, seq; /* its stream; "In msg nelems" and "Seq", -1 where absent */
};

#define JOB_NONE UINT32_MAX

/* A collective as read from a trace or a summary, before it is keyed. */
struct job_raw_call {
    uint32_t pg, name; /* job_part_intern()'s, JOB_NONE where absent */
    uint16_t op;
    int64_t stream, nelems, seq, step, ts, end;
};

int job_key_cmp(const struct job_key *a, const struct job_key *b);

/* job_part.c: the index of s[0..n) in p->strs, added when new; JOB_NONE for a NULL s, or out
 * of memory (then *rc = -1). */
uint32_t job_part_intern(gp_job_part *p, const char *s, size_t n, int *rc);
/* Append a collective to part `p`; then, once all are in, job_key_calls numbers and keys them.
 * @return 0, or -1 out of memory. */
gp_status job_part_push_call(gp_job_part *p, const struct job_raw_call *c);
void job_key_calls(gp_job_part *p);
/* A copy of the note `s` at the end of p->notes. @return 0, or -1 out of memory. */
gp_status job_part_note(gp_job_part *p, const char *s);
/* "distributedInfo", "file name" or "order" as the static string; NULL for anything else. */
const char *job_rank_from(const char *s);
/* The operation's index in job_ops[] (JOB_N_OPS - 1, "other", when it names none). */
uint16_t job_op_index(const char *name);

#define JOB_N_OPS 11
extern const char *const job_ops[JOB_N_OPS];

/* A rank's call of a collective where rank `last` (an index into gp_job.parts) arrived late,
 * from its arrival to its end on the calling rank's own clock (job_held.c), and the last
 * arrival on the aligned clock (gp_job_rank_wait). */
struct job_wait {
    int64_t ts, end, until;
    size_t last;
    uint16_t op;
};

struct gp_job_part {
    int rank;
    const char *rank_from;
    char *path, *host;
    struct job_step *steps;
    size_t n_steps;
    struct job_call *calls; /* sorted by key */
    size_t n_calls;
    int world_size;       /* distributedInfo.world_size, 0 if absent */
    int64_t clock_offset; /* set by gp_job_finish */
    /* per collective operation (job_ops[]), set by gp_job_finish */
    uint64_t op_calls[JOB_N_OPS];
    int64_t op_time[JOB_N_OPS], op_waited[JOB_N_OPS];
    struct rules_ivs compute; /* its compute kernels on its own clock, a disjoint union */
    struct job_wait *waits;   /* its calls where a rank was late, set by gp_job_finish */
    size_t n_waits, cap_waits;
    int64_t t_first;       /* its first event, unix ns on its own clock */
    uint64_t n_clock_refs; /* collectives its clock offset was measured on (set by finish) */
    int64_t clock_spread;  /* largest |aligned end - median end| of its matched collectives */
    size_t cap_calls;
    char **strs; /* the process group and collective names its calls name */
    size_t n_strs, cap_strs;
    char **notes; /* what its trace lost or left unfinished */
    size_t n_notes;
    int64_t base_time_ns; /* the trace's time origin: its events' ts + this = unix ns */
};

/* GT16's parameters. */
enum {
    JOB_WARN_PCT,
    JOB_CRIT_PCT,
    JOB_MIN_LAG_US,
    JOB_MIN_SHARE_PCT,
    JOB_MIN_COUNT,
    JOB_CLOCK_US,
    JOB_MATCH_US
};
#define JOB_N_PARAMS 7

struct gp_job {
    gp_job_part **parts; /* sorted by rank after finish */
    size_t n, cap;
    double p[JOB_N_PARAMS];
    gp_job_rank *ranks;
    gp_job_collective *colls;
    size_t n_colls;
    int64_t *common_steps; /* step numbers every rank has, ascending */
    size_t n_common;
    gp_findings *findings;
    int clocks_aligned;
    int64_t match_tol;   /* ends of one collective on two ranks are at most this apart */
    int64_t end_spread;  /* largest |end difference| of a matched call after alignment */
    uint64_t n_calls;    /* collectives of all ranks */
    uint64_t n_alone;    /* of those, with no counterpart on another rank */
    uint64_t n_disagree; /* with a counterpart whose end disagrees after alignment */
    int world_size;      /* largest distributedInfo.world_size, 0 if none */
};

extern const gp_rule_info job_straggler_info;

/* job_straggler.c: GT16 over a finished job's ranks and collectives. */
gp_status job_straggler(const gp_job *j, gp_findings **out);

/* job_held.c: note part `p`'s call [ts, end) of a collective where part `last` was late; then,
 * once every collective is matched, each late rank's `held`: how much longer the others' calls
 * of those collectives left them without compute than its own calls left it (the median over
 * the others of the union of their calls less their compute, less the same of its own): a wait
 * beside compute or concurrent with another on a second stream counts once. */
gp_status job_wait_add(gp_job_part *p, const struct job_wait *w);
gp_status job_held(gp_job *j);

/* The lower median of v[0..n) (v reordered); 0 when n is 0. */
int64_t job_median(int64_t *v, size_t n);

#endif
