/* Steps and their breakdown as torch-tb-profiler 0.4.3's Overview computes them, on the scenarios
 * of its own unit tests (tb_plugin/test/test_profiler.py: no ProfilerStep, steps with and
 * without overlapping device work, tail steps without kernels, pure CPU), plus python_function
 * time (Other in tb) and a synthetic step that ignores user annotations. The expected numbers are
 * tb's assertions, in us. */
#include <string.h>

#include "gp/analysis.h"
#include "gp/trace.h"
#include "gp_test.h"
#include "gp_test_analysis.h"

#define US 1000 /* ns */

/* Events shared by tb's step scenarios: ProfilerStep#1 [100, 300) with aten::to [200, 260) and
 * its cudaMemcpyAsync [250, 255) (corr 334); ProfilerStep#2 [350, 500) with aten::mm [360, 410)
 * and its cudaLaunchKernel [400, 405) (corr 40348), whose kernel runs [410, 610). */
#define OP(name, ts, dur)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"" name "\",\"pid\":13721,\"tid\":\"123\","      \
    "\"ts\":" #ts ",\"dur\":" #dur "}"
#define RT(name, ts, dur, corr)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"" name "\",\"pid\":13721,\"tid\":\"123\","       \
    "\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr "}}"
#define GPU(cat, ts, dur, corr)                                                                    \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":" #ts  \
    ",\"dur\":" #dur ",\"args\":{\"correlation\":" #corr ",\"device\":0,\"stream\":7}}"
#define TWO_STEPS                                                                                  \
    OP("ProfilerStep#1", 100, 200)                                                                 \
    "," OP("aten::to", 200, 60) "," OP("ProfilerStep#2", 350, 150) "," OP(                         \
            "aten::mm", 360, 50) "," RT("cudaMemcpyAsync", 250, 5,                                 \
                                        334) "," RT("cudaLaunchKernel", 400, 5,                    \
                                                    40348) "," GPU("Kernel", 410, 200, 40348)

static gp_analysis *analyse(const char *json, gp_trace **t)
{
    return gp_test_analyse(json, "tb", t);
}

static void done(gp_analysis *a, gp_trace *t)
{
    gp_test_analysis_free(a, t);
}

/* Check one step's total and breakdown (us): kernel, memcpy, runtime, cpu exec, other. */
#define CHECK_STEP(s, total, kernel, memcpy, runtime, cpu, other)                                  \
    do {                                                                                           \
        GP_ASSERT_EQ_INT((s).end - (s).ts, (total)*US);                                            \
        GP_ASSERT_EQ_INT((s).bd[GP_BD_KERNEL], (kernel)*US);                                       \
        GP_ASSERT_EQ_INT((s).bd[GP_BD_MEMCPY], (memcpy)*US);                                       \
        GP_ASSERT_EQ_INT((s).bd[GP_BD_RUNTIME], (runtime)*US);                                     \
        GP_ASSERT_EQ_INT((s).bd[GP_BD_CPU_EXEC], (cpu)*US);                                        \
        GP_ASSERT_EQ_INT((s).bd[GP_BD_OTHER], (other)*US);                                         \
    } while (0)

static void test_no_profilerstep(void)
{
    gp_trace *t;
    gp_analysis *a = analyse(
            "[" OP("aten::to", 100, 60) ","
                                        "{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::nll_"
                                        "loss_backward\",\"pid\":13721,"
                                        "\"tid\":\"456\",\"ts\":300,\"dur\":70}," GPU(
                                                "Kernel", 320, 100,
                                                40348) ","
                                                       "{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":"
                                                       "\"cudaLaunchKernel\",\"pid\":13721,"
                                                       "\"tid\":\"456\",\"ts\":310,\"dur\":20,"
                                                       "\"args\":{\"correlation\":40348}}]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    CHECK_STEP(s[0], (320 + 100) - 100, 100, 0, 320 - 310, 60 + (310 - 300), 300 - (100 + 60));
    done(a, t);
}

static void test_steps_no_overlap(void)
{
    gp_trace *t;
    gp_analysis *a = analyse("[" TWO_STEPS "," GPU("Memcpy", 280, 40, 334) "]", &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 2);
    CHECK_STEP(s[0], 320 - 100, 0, 40, 5, 60 - 5, 200 - 60 - 20);
    CHECK_STEP(s[1], 610 - 350, 200, 0, 5, 50 - 5, 360 - 350);
    done(a, t);
}

static void test_steps_with_overlap(void)
{
    /* A kernel launched before the first step (its launch is not in the trace) ends at 240:
     * step 1 starts there. Step 1's copy ends at 380: step 2 starts there. */
    gp_trace *t;
    gp_analysis *a = analyse(
            "[" TWO_STEPS "," GPU("Kernel", 150, 90, 123) "," GPU("Memcpy", 280, 100, 334) "]", &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 2);
    CHECK_STEP(s[0], (280 + 100) - (150 + 90), 0, 100, 5, (200 + 60) - (150 + 90) - 5,
               280 - (200 + 60));
    CHECK_STEP(s[1], 610 - (280 + 100), 200, 0, 5, (280 + 100) - 360 + (410 - 405), 0);
    done(a, t);
}

static void test_last_steps_no_kernel(void)
{
    /* The last two steps launch nothing: tb drops them (the profiler may have missed their
     * kernels), and step 1 starts where the earlier, unlaunched kernel ends. */
    gp_trace *t;
    gp_analysis *a = analyse(
            "[" OP("ProfilerStep#1", 100, 200) "," OP("aten::to", 120, 10) "," OP(
                    "ProfilerStep#2", 300,
                    100) "," OP("ProfilerStep#3", 400,
                                50) "," GPU("Kernel", 90, 20,
                                            123) "," RT("cudaMemcpyAsync", 125, 5,
                                                        334) "," GPU("Kernel", 150, 180, 334) "]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    GP_ASSERT_EQ_INT(s[0].end - s[0].ts, ((150 + 180) - (90 + 20)) * US);
    done(a, t);
}

static void test_pure_cpu(void)
{
    gp_trace *t;
    gp_analysis *a = analyse("[" OP("ProfilerStep#1", 100, 200) "," OP("aten::to", 120, 10) "," OP(
                                     "ProfilerStep#2", 300, 100) "," OP("aten::mm", 350, 40) "]",
                             &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 2);
    CHECK_STEP(s[0], 200, 0, 0, 0, 10, 200 - 10);
    CHECK_STEP(s[1], 100, 0, 0, 0, 40, 100 - 40);
    done(a, t);
}

static void test_python_function_is_other(void)
{
    /* tb counts Python frames (python_function) in no role: their time is Other. */
    gp_trace *t;
    gp_analysis *a = analyse(
            "[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
            "\"tid\":1,\"ts\":0,\"dur\":500},"
            "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(10): step\",\"pid\":1,"
            "\"tid\":1,\"ts\":10,\"dur\":400},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,"
            "\"dur\":100}]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    CHECK_STEP(s[0], 500, 0, 0, 0, 100, 400);
    done(a, t);
}

static void test_synthetic_step_spans_operators(void)
{
    /* Without ProfilerStep, tb's one step spans the operators, not user annotations or Python
     * frames around them. */
    gp_trace *t;
    gp_analysis *a = analyse(
            "[{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"train.py(10): step\",\"pid\":1,"
            "\"tid\":1,\"ts\":0,\"dur\":400},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fwd\",\"pid\":1,\"tid\":1,"
            "\"ts\":50,\"dur\":300},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":100,"
            "\"dur\":100}]",
            &t);
    GP_CHECK(a != NULL);
    size_t n;
    const gp_step *s = gp_analysis_steps(a, &n);
    GP_ASSERT_EQ_INT(n, 1);
    CHECK_STEP(s[0], 100, 0, 0, 0, 100, 0);
    done(a, t);
}

int main(void)
{
    GP_RUN(test_no_profilerstep);
    GP_RUN(test_steps_no_overlap);
    GP_RUN(test_steps_with_overlap);
    GP_RUN(test_last_steps_no_kernel);
    GP_RUN(test_pure_cpu);
    GP_RUN(test_python_function_is_other);
    GP_RUN(test_synthetic_step_spans_operators);
    return gp_test_summary();
}
