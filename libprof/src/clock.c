/* clock.c: the hot path's tick source and its conversion to CLOCK_REALTIME ns (the clock CUPTI
 * stamps GPU records with). Ticks are TSC cycles where the TSC is invariant.
 *
 * The conversion is ONE function for the whole session: piecewise linear, continuous and
 * non-decreasing, so ranges nest in the trace exactly as they nested in ticks, whichever writer
 * pass converts them. The writer measures a (ticks, REALTIME) pair every pass; a measurement
 * never moves the function where it was already used: it only appends a knot at or after the
 * largest tick converted so far, at the value the function has there, and the new segment's
 * slope is the measured rate plus a correction that steers the function back onto REALTIME
 * within STEER_NS (a slew, like adjtime: the error left by a noisy first rate or a clock step is
 * taken out gradually, never by a jump). The slope stays within [rate/2, rate*2]. */
#include <stdlib.h>
#include <string.h>

#include "prof_int.h"

#define N_MEASURED     PROF_CLOCK_MEASURED
#define MEASURE_GAP_NS 100000000  /* kept measurements are at least this far apart */
#define KNOT_MIN_NS    1000000000 /* measurements steer at most once a second: 2 knots, 48 B */
#define STEER_NS       500000000  /* an offset is taken out over this much time */
#define RATE_MIN_SPAN  100000     /* a measurement this close to the oldest is not a rate yet */
#define SAMPLE_TRIES   8          /* readings a measurement may take to find a narrow one */

typedef prof_tick_seg knot;

/* The state is a member of the session object (session.c): prof_state_clock(). */

static int cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int ok = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) == 0) {
            ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    }
    if (f)
        fclose(f);
    return ok;
#else
    return 0;
#endif
}

void prof_clock_init(void)
{
    if (prof_state_clock()->inited)
        return;
    prof_state_clock()->inited = 1;
    const char *env = getenv("GP_PROF_CLOCK");
    prof_state_session()->tsc = !(env && strcmp(env, "realtime") == 0) && cpu_has_invariant_tsc();
    /* 8 cycles are >= 2 ns up to a 4 GHz TSC, and >= 1 ns while the function's slope is
     * steered down to half the rate. */
    prof_state_session()->tick_gap = prof_state_session()->tsc ? 8 : 1;
}

/* f(ticks) on segment k (rounded to the nearest ns); ticks before the first knot extend the
 * first segment backwards. */
static int64_t on_segment(const knot *k, int64_t ticks)
{
    if (ticks >= k->t)
        return prof_seg_ns(k, ticks);
    const unsigned __int128 half = (unsigned __int128)1 << 31;
    return k->ns - (int64_t)(((unsigned __int128)(uint64_t)(k->t - ticks) * k->scale + half) >> 32);
}

/* @return the segment that holds `ticks`: the last knot at or before it (binary search; the
 * writer's hot loop handles the newest segment in line). */
static const knot *segment_of(int64_t ticks)
{
    size_t lo = 0, hi = prof_state_clock()->n_knots; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (prof_state_clock()->knots[mid].t <= ticks)
            lo = mid;
        else
            hi = mid;
    }
    return &prof_state_clock()->knots[lo];
}

/* ns per tick * 2^32 between two measurements, or 0 if they cannot give a rate. */
static uint64_t rate_between(int64_t t0, int64_t ns0, int64_t t1, int64_t ns1)
{
    if (t1 - t0 < RATE_MIN_SPAN || ns1 <= ns0)
        return 0;
    unsigned __int128 q = ((unsigned __int128)(uint64_t)(ns1 - ns0) << 32) / (uint64_t)(t1 - t0);
    return q > UINT64_MAX ? 0 : (uint64_t)q;
}

static int push_knot(int64_t t, int64_t ns, uint64_t scale)
{
    if (prof_state_clock()->n_knots == prof_state_clock()->cap_knots) {
        size_t ncap = prof_state_clock()->cap_knots ? prof_state_clock()->cap_knots * 2 : 64;
        knot *k = realloc(prof_state_clock()->knots, ncap * sizeof(*k));
        if (!k)
            return -1; /* out of memory: the newest segment simply goes on */
        prof_state_clock()->knots = k;
        prof_state_clock()->cap_knots = ncap;
    }
    prof_state_clock()->knots[prof_state_clock()->n_knots++] = (knot){t, ns, scale};
    return 0;
}

/* Append the segments that follow the function's value `f` at tick `t`, given the measured
 * line through (T, N) with slope `rate`: a steered segment that meets the line STEER_NS later
 * (its slope kept within [rate/2, 2 rate]), then the line's own slope from there on, so the
 * function never overshoots however long the writer waits before its next measurement. */
static void steer(uint64_t rate, int64_t t, int64_t f, int64_t T, int64_t N)
{
    int64_t horizon = (int64_t)(((unsigned __int128)STEER_NS << 32) / rate); /* ticks */
    int64_t reach = T + horizon - t, target = N + STEER_NS;
    if (reach <= 0 || push_knot(t, f, rate) != 0)
        return;
    unsigned __int128 want =
            target > f ? ((unsigned __int128)(uint64_t)(target - f) << 32) / (uint64_t)reach : 0;
    if (want < rate / 2)
        want = rate / 2;
    if (want > (unsigned __int128)rate * 2)
        want = (unsigned __int128)rate * 2;
    prof_state_clock()->knots[prof_state_clock()->n_knots - 1].scale = (uint64_t)want;
    push_knot(t + reach,
              on_segment(&prof_state_clock()->knots[prof_state_clock()->n_knots - 1], t + reach),
              rate);
}

/* Keep measurements at least MEASURE_GAP_NS apart (a busy writer measures every few
 * microseconds): @return the oldest kept, the start of the rate's baseline. */
static int keep_measurement(int64_t ticks, int64_t ns)
{
    int newest = (prof_state_clock()->n_measured - 1) % N_MEASURED;
    if (prof_state_clock()->n_measured == 0 ||
        ns - prof_state_clock()->m_ns[newest] >= MEASURE_GAP_NS) {
        prof_state_clock()->m_ticks[prof_state_clock()->n_measured % N_MEASURED] = ticks;
        prof_state_clock()->m_ns[prof_state_clock()->n_measured % N_MEASURED] = ns;
        prof_state_clock()->n_measured++;
    }
    return prof_state_clock()->n_measured <= N_MEASURED
                   ? 0
                   : prof_state_clock()->n_measured % N_MEASURED;
}

static void add_knots(uint64_t rate, int64_t ticks, int64_t ns);

/* Copy the newest two segments for other threads; the sequence goes back to even. */
static void publish(void)
{
    if ((atomic_load(&prof_state_clock()->pub_seq) & 1) == 0)
        atomic_fetch_add(&prof_state_clock()->pub_seq, 1);
    for (int i = 0; i < 2; i++) {
        const knot *k = &prof_state_clock()->knots[prof_state_clock()->n_knots >= 2
                                                           ? prof_state_clock()->n_knots - 2 + i
                                                           : 0];
        atomic_store_explicit(&prof_state_clock()->pub_t[i], k->t, memory_order_relaxed);
        atomic_store_explicit(&prof_state_clock()->pub_ns[i], k->ns, memory_order_relaxed);
        atomic_store_explicit(&prof_state_clock()->pub_scale[i], k->scale, memory_order_relaxed);
    }
    atomic_store(&prof_state_clock()->pub_valid, 1);
    atomic_fetch_add(&prof_state_clock()->pub_seq, 1);
}

int64_t prof_clock_now_ns(void)
{
    if (!prof_state_session()->tsc || !atomic_load(&prof_state_clock()->pub_valid))
        return prof_now();
    for (;;) {
        uint32_t s = atomic_load(&prof_state_clock()->pub_seq);
        if (s & 1)
            continue;
        prof_tick_seg seg[2]; /* may be torn: then the sequence moved, and we retry */
        for (int i = 0; i < 2; i++)
            seg[i] = (prof_tick_seg){
                    atomic_load_explicit(&prof_state_clock()->pub_t[i], memory_order_relaxed),
                    atomic_load_explicit(&prof_state_clock()->pub_ns[i], memory_order_relaxed),
                    atomic_load_explicit(&prof_state_clock()->pub_scale[i], memory_order_relaxed)};
        int64_t ticks = prof_ticks();
        int64_t ns = on_segment(&seg[ticks >= seg[1].t], ticks);
        int64_t used = atomic_load(&prof_state_clock()->pub_max_used);
        while (ticks > used &&
               !atomic_compare_exchange_weak(&prof_state_clock()->pub_max_used, &used, ticks))
            ;
        atomic_thread_fence(memory_order_acquire); /* the loads above before the re-check */
        if (atomic_load(&prof_state_clock()->pub_seq) == s)
            return ns;
    }
}

void prof_clock_add(int64_t ticks, int64_t ns)
{
    int oldest = keep_measurement(ticks, ns);
    uint64_t rate = rate_between(prof_state_clock()->m_ticks[oldest],
                                 prof_state_clock()->m_ns[oldest], ticks, ns);
    if (rate == 0)
        return; /* too close to the first measurement, or a clock step back: wait */
    if (prof_state_clock()->n_knots == 0) {
        /* The first segment runs through the first measurement and this one exactly. */
        push_knot(prof_state_clock()->m_ticks[oldest], prof_state_clock()->m_ns[oldest], rate);
        prof_state_clock()->last_steer = prof_state_clock()->m_ticks[oldest];
        publish();
        return;
    }
    atomic_fetch_add(&prof_state_clock()->pub_seq,
                     1); /* odd: other threads retry (see prof_clock_now_ns) */
    int64_t used = atomic_load(&prof_state_clock()->pub_max_used);
    if (used > prof_state_clock()->max_converted)
        prof_state_clock()->max_converted = used;
    add_knots(rate, ticks, ns);
    publish();
}

/* prof_clock_add's new segments from a tick past every converted one. */
static void add_knots(uint64_t rate, int64_t ticks, int64_t ns)
{
    int64_t t = ticks > prof_state_clock()->max_converted ? ticks
                                                          : prof_state_clock()->max_converted + 1;
    /* Knots come often while the session is young (its first rate may have been measured over
     * microseconds), then at most every KNOT_MIN_NS. */
    int64_t spacing = (int64_t)(((unsigned __int128)KNOT_MIN_NS << 32) / rate);
    if ((t - prof_state_clock()->knots[0].t) / 4 < spacing)
        spacing = (t - prof_state_clock()->knots[0].t) / 4;
    if (t - prof_state_clock()->last_steer < spacing)
        return;
    while (prof_state_clock()->n_knots > 1 &&
           prof_state_clock()->knots[prof_state_clock()->n_knots - 1].t >= t)
        prof_state_clock()->n_knots--; /* planned by the last steer, used by nothing yet */
    steer(rate, t, on_segment(segment_of(t), t), ticks, ns);
    prof_state_clock()->last_steer = t;
}

static void read_clock(int64_t *a, int64_t *ns, int64_t *b)
{
    if (prof_state_clock()->read_hook) {
        prof_state_clock()->read_hook(a, ns, b);
        return;
    }
    *a = prof_ticks();
    *ns = prof_now();
    *b = prof_ticks();
}

/* One measurement: the clock read between two tick reads, taken at their midpoint. A thread
 * preempted between the reads (a loaded machine) puts the midpoint up to half the preemption
 * off, milliseconds, which a first rate measured over microseconds turns into a wrong slope: so
 * the narrowest of up to SAMPLE_TRIES readings is kept, stopping at one within twice the
 * narrowest seen (test_prof_clock failed 1 run in 300 beside three CPU hogs on 2 cores). */
void prof_clock_sample(void)
{
    if (!prof_state_session()->tsc)
        return;
    int64_t mid = 0, ns = 0, width = INT64_MAX;
    for (int i = 0; i < SAMPLE_TRIES; i++) {
        int64_t a, now, b;
        read_clock(&a, &now, &b);
        if (b - a < width)
            width = b - a, mid = a + (b - a) / 2, ns = now;
        if (prof_state_clock()->min_width && width <= 2 * prof_state_clock()->min_width)
            break;
    }
    if (width < 1)
        width = 1;
    if (!prof_state_clock()->min_width || width < prof_state_clock()->min_width)
        prof_state_clock()->min_width = width;
    prof_clock_add(mid, ns);
}

/* Before the writer's first pass: measure until there is a rate (RATE_MIN_SPAN ticks after
 * the session's first measurement: microseconds). @return 0, or -1 if the clock never gave one. */
static int first_knot(void)
{
    for (int tries = 0; prof_state_clock()->n_knots == 0 && tries < 1000000; tries++)
        prof_clock_sample();
    return prof_state_clock()->n_knots ? 0 : -1;
}

int64_t prof_ticks_to_ns(int64_t ticks)
{
    if (!prof_state_session()->tsc)
        return ticks;
    if (prof_state_clock()->n_knots == 0 && first_knot() != 0)
        return ticks;
    if (ticks > prof_state_clock()->max_converted)
        prof_state_clock()->max_converted = ticks;
    return on_segment(segment_of(ticks), ticks);
}

void prof_clock_map(prof_tick_map *m)
{
    if (prof_state_session()->tsc && prof_state_clock()->n_knots == 0)
        first_knot();
    m->mode = !prof_state_session()->tsc    ? PROF_MAP_IDENTITY
              : prof_state_clock()->n_knots ? PROF_MAP_LINEAR
                                            : PROF_MAP_CALL;
    if (m->mode != PROF_MAP_LINEAR)
        return;
    for (int i = 0; i < 2; i++) { /* the newest two segments, older first */
        const knot *k = &prof_state_clock()->knots[prof_state_clock()->n_knots >= 2
                                                           ? prof_state_clock()->n_knots - 2 + i
                                                           : 0];
        m->seg[i] = (prof_tick_seg){k->t, k->ns, k->scale};
    }
    m->max_ticks = prof_state_clock()->max_converted;
}

void prof_clock_converted(int64_t max_ticks)
{
    if (max_ticks > prof_state_clock()->max_converted)
        prof_state_clock()->max_converted = max_ticks;
}

void prof_clock_reset(void)
{
    atomic_store(&prof_state_clock()->pub_valid, 0);
    atomic_store(&prof_state_clock()->pub_max_used, INT64_MIN);
    prof_state_clock()->n_measured = 0;
    prof_state_clock()->n_knots = 0;
    prof_state_clock()->min_width = 0;
    prof_state_clock()->max_converted = INT64_MIN;
}

void prof_clock_start(void)
{
    /* the first rate over >= 2 ms, not the microseconds first_knot needs: a preempted sample's
     * error of a few microseconds stays below 0.5% of it */
    struct timespec d = {0, 2000000};
    if (prof_state_session()->tsc) {
        nanosleep(&d, NULL);
        first_knot();
    }
}
