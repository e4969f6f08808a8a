/* rules_startup.h: start-up work in a trace that has no warm-up step to leave out (no
 * ProfilerStep#N markers, or a single step): the first call of an operator, range or runtime
 * call that took far longer than its name's later calls -- CUDA context creation, cuDNN and
 * cuBLAS handles, lazy module loading, an algorithm search. A `with profile():` block around a
 * program's first iterations is mostly that (HTA's AlexNet trace: 41 of its 43 s), and the rules
 * that judge time would read it as a launch-bound host or allocator churn. GT00 names it, and the
 * findings it may explain are info (rules_startup_demote). */
#ifndef GP_ANALYZE_RULES_STARTUP_H
#define GP_ANALYZE_RULES_STARTUP_H

#include "rules/rules_int.h"

/* Share of the analysed time from which the trace is start-up, not training: GT00 warns and the
 * findings that judge time are info. */
#define RULES_STARTUP_PCT 50.0
/* Share from which GT00 lists it among the trace's problems. */
#define RULES_STARTUP_NOTE_PCT 10.0

/* Fill c->startup (all zero where the trace left out a warm-up step, or has no first call that
 * far over its later ones). GP_ENOMEM when it cannot. */
gp_status rules_startup_scan(struct rules_ctx *c);

/* c->startup's share of the analysed time, %. */
double rules_startup_pct(const struct rules_ctx *c);

/* The trace holds one iteration (one marked step, or no markers and the optimizer stepped once)
 * in which first calls took RULES_STARTUP_NOTE_PCT or more: its first iteration, every call in
 * it a first call (the bundled trainer's `--steps 1` on an H200: 28% of its 130 ms step found as
 * first calls, against 0.65 ms for its second step); or the bundled trainer's first step alone,
 * whatever share of it is found as first calls. */
int rules_startup_first_iteration(const struct rules_ctx *c);

/* How the trace shows that it holds one iteration: "one step", "the optimizer stepped once". */
const char *rules_startup_iteration(const struct rules_ctx *c);

/* The trace is start-up, not training: RULES_STARTUP_PCT or more of it first calls, or its
 * first iteration alone. */
int rules_startup_dominates(const struct rules_ctx *c);

/* A fired finding of a rule that judges time (not GT00, not the memory rules: a peak is a peak in
 * start-up too) that start-up work may explain is info, its recommendation led by why: every one
 * where start-up is RULES_STARTUP_PCT or more of the analysed time; below, one whose measure is a
 * share of the analysed time that, with the start-up time left out, could fall on the other side
 * of the tier it reached (GT04's 26% host wait beside 30% of start-up), or warn where it is crit
 * and holds warn's tier. `needs` gives a finding's rule's flags. */
gp_status rules_startup_demote(gp_findings *fs, const struct rules_ctx *c,
                               unsigned (*needs)(const gp_finding *f));

#endif
