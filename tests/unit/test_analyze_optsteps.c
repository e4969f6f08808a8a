/* Steps where no ProfilerStep#N marks them: they end where PyTorch's optimizer steps end
 * (Optimizer.step#<class>.step ranges), the first from the trace's first operator; one optimizer
 * step leaves one synthetic step, flagged as one iteration; ranges on two threads, or markers,
 * leave the steps as they were. */
#include <string.h>

#include "gp/analysis.h"
#include "gp/trace.h"
#include "gp_test.h"
#include "gp_test_analysis.h"

#define US 1000 /* ns */

#define EV(cat, name, tid, ts, dur)                                                                \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":" #tid              \
    ",\"ts\":" #ts ",\"dur\":" #dur "}"
#define OP(name, ts, dur)  EV("cpu_op", name, 7, ts, dur)
#define OPT(name, ts, dur) EV("user_annotation", "Optimizer.step#" name ".step", 7, ts, dur)

static gp_analysis *analyse(const char *json, gp_trace **t)
{
    return gp_test_analyse(json, "optsteps", t);
}

static void done(gp_analysis *a, gp_trace *t)
{
    gp_test_analysis_free(a, t);
}

/* Three iterations: model set-up [0, 500), then each a forward and the optimizer's step; a
 * nested range of the same name inside a step counts once; the zero_grad after the last step
 * belongs to no step. */
static void test_three_iterations(void)
{
    gp_trace *t;
    gp_analysis *a = analyse(
            "[" OP("aten::uniform_", 0, 500) "," OP("aten::linear", 500, 100) "," OPT(
                    "Adam", 600,
                    50) "," OPT("Adam", 610,
                                20) "," OP("aten::linear", 700,
                                           100) "," OPT("Adam", 800,
                                                        50) "," OP("aten::linear", 900,
                                                                   100) "," OPT("Adam", 1000,
                                                                                50) "," OP("aten::"
                                                                                           "zero_",
                                                                                           1100,
                                                                                           10) "]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 3);
    GP_CHECK(s[0].inferred && !s[0].synthetic && s[0].event == GP_NONE);
    GP_ASSERT_EQ_INT(s[0].num, 1);
    GP_ASSERT_EQ_INT(s[0].host_ts, 0);
    GP_ASSERT_EQ_INT(s[0].host_end, 650 * US);
    GP_ASSERT_EQ_INT(s[1].host_ts, 650 * US);
    GP_ASSERT_EQ_INT(s[1].host_end, 850 * US);
    GP_ASSERT_EQ_INT(s[2].num, 3);
    GP_ASSERT_EQ_INT(s[2].host_end, 1050 * US);
    done(a, t);
}

/* One optimizer step: one synthetic step over the operators, known to be one iteration. */
static void test_one_iteration(void)
{
    gp_trace *t;
    gp_analysis *a = analyse("[" OP("aten::linear", 0,
                                    100) "," OPT("SGD", 100, 50) "," OP("aten::zero_", 200, 10) "]",
                             &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(s[0].synthetic && s[0].one_iteration && !s[0].inferred);
    GP_ASSERT_EQ_INT(s[0].host_end, 210 * US);
    done(a, t);
}

/* The optimizer's ranges on two threads (two processes' traces merged, say): no inference. */
static void test_two_threads(void)
{
    gp_trace *t;
    gp_analysis *a = analyse("[" OP("aten::linear", 0, 100) "," OPT("Adam", 100, 50) "," EV(
                                     "user_annotation", "Optimizer.step#Adam.step", 8, 300,
                                     50) "," OPT("Adam", 400, 50) "]",
                             &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(s[0].synthetic && !s[0].one_iteration);
    done(a, t);
}

/* Several classes: the last range's class ends the steps (a GAN's second optimizer). */
static void test_two_classes(void)
{
    gp_trace *t;
    gp_analysis *a = analyse(
            "[" OP("aten::linear", 0, 100) "," OPT("SGD", 100, 20) "," OPT("Adam", 130, 20) "," OP(
                    "aten::linear", 200, 100) "," OPT("SGD", 300, 20) "," OPT("Adam", 330, 20) "]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 2);
    GP_ASSERT_EQ_INT(s[0].host_end, 150 * US);
    GP_ASSERT_EQ_INT(s[1].host_end, 350 * US);
    done(a, t);
}

/* Marked steps stay as marked. */
static void test_markers_win(void)
{
    gp_trace *t;
    gp_analysis *a = analyse("[" EV("user_annotation", "ProfilerStep#4", 7, 0,
                                    400) "," OPT("Adam", 100, 50) "," OPT("Adam", 300, 50) "]",
                             &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(!s[0].inferred && !s[0].synthetic);
    GP_ASSERT_EQ_INT(s[0].num, 4);
    done(a, t);
}

int main(void)
{
    GP_RUN(test_three_iterations);
    GP_RUN(test_one_iteration);
    GP_RUN(test_two_threads);
    GP_RUN(test_two_classes);
    GP_RUN(test_markers_win);
    return gp_test_summary();
}
