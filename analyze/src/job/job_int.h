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
};

int job_key_cmp(const struct job_key *a, const struct job_key *b);

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
    int64_t t_first;      /* its first event, unix ns on its own clock */
    uint64_t n_clock_refs; /* collectives its clock offset was measured on (set by finish) */
    int64_t clock_spread;  /* largest |aligned end - median end| of its matched collectives */
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

/* Per-step mean of the rank's steps among the common ones (all when none are common). */
int64_t job_median(int64_t *v, size_t n);

#endif
