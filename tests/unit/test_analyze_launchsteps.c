/* Steps where neither ProfilerStep#N nor the optimizer marks them: cut where the host's launch
 * sequence repeats (analysis_period.c). A loop after a long set-up gives one step per iteration,
 * the first holding the set-up, each starting at its batch's fetch, work after the loop in none; a
 * copy logged every fourth iteration keeps the period; launches from a second thread (the backward
 * pass) join the sequence; the batch's copy starts an iteration; identical layers inside one
 * annotation (one forward pass), launches that never repeat, and markers leave the steps as they
 * were. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp/analysis.h"
#include "gp/trace.h"
#include "gp_test.h"
#include "gp_test_analysis.h"

#define US 1000 /* ns */

/* A trace's JSON, built one event at a time; times in microseconds. */
typedef struct trace_text {
    char buf[1 << 20];
    size_t n;
    int corr;
} trace_text;

static void put(trace_text *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    b->n += (size_t)vsnprintf(b->buf + b->n, sizeof(b->buf) - b->n, fmt, ap);
    va_end(ap);
}

static void range(trace_text *b, const char *cat, const char *name, int tid, int ts, int dur)
{
    put(b,
        "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":%d}",
        b->n > 1 ? "," : "", cat, name, tid, ts, dur);
}

/* A launch call on thread tid at ts (5 us), its activity (of category cat) 10 us later (8 us). */
static void launch_as(trace_text *b, const char *cat, int tid, int ts, const char *name)
{
    int c = ++b->corr;
    put(b,
        "%s{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
        "\"tid\":%d,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}}"
        ",{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%d,"
        "\"dur\":8,\"args\":{\"correlation\":%d,\"device\":0,\"stream\":7}}",
        b->n > 1 ? "," : "", tid, ts, c, cat, name, ts + 10, c);
}

static void launch(trace_text *b, int tid, int ts, const char *kernel)
{
    launch_as(b, "kernel", tid, ts, kernel);
}

static trace_text *begin(void)
{
    static trace_text text;
    memset(&text, 0, sizeof(text));
    put(&text, "[");
    return &text;
}

/* A built trace, analysed: its steps, or s = NULL where it could not be (said on stderr). */
typedef struct analysed {
    gp_trace *t;
    gp_analysis *a;
    const gp_step *s;
    size_t n;
} analysed;

static analysed finish(trace_text *b)
{
    analysed r = {0};
    put(b, "]");
    r.a = gp_test_analyse(b->buf, "launchsteps", &r.t);
    r.s = r.a ? gp_analysis_steps(r.a, &r.n) : NULL;
    return r;
}

static void done(analysed *r)
{
    gp_test_analysis_free(r->a, r->t);
}

#define FETCH "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

/* One iteration at ts: 300 us of idle host (with fetch, the DataLoader's range in it from 100 to
 * 250 us), then k1..k5 each 20 us apart; with log, a sixth launch. @return its end. */
static int iteration(trace_text *b, int ts, int log, int fetch)
{
    static const char *k[] = {"k1_embed", "k2_gemm", "k3_loss", "k4_grad", "k5_adam"};
    int t = ts + 300;
    if (fetch)
        range(b, "user_annotation", FETCH, 7, ts + 100, 150);
    for (int i = 0; i < 5; i++, t += 20) {
        launch(b, 7, t, k[i]);
        if (log && i == 2)
            launch(b, 7, t += 20, "log_copy");
    }
    return t;
}

/* 2 ms of set-up (a cudaMalloc), six iterations of 400 us, then three copies of a checkpoint. */
static void test_iterations(void)
{
    trace_text *b = begin();
    range(b, "cuda_runtime", "cudaMalloc", 7, 0, 1000);
    int t = 3000;
    for (int i = 0; i < 6; i++)
        t = iteration(b, t, 0, 1);
    for (int i = 0; i < 3; i++)
        launch(b, 7, t + 50 * i, "save_copy");
    analysed r = finish(b);
    const gp_step *s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 6);
    GP_ASSERT_EQ_INT(s[0].inferred, GP_STEPS_FROM_LAUNCHES);
    GP_CHECK(!s[0].synthetic && s[0].event == GP_NONE);
    GP_ASSERT_EQ_INT(s[0].period, 5);
    GP_ASSERT_EQ_INT(s[0].host_ts, 0);
    /* iteration i's fetch starts at 3000 + 400 i + 100, its last launch at + 380 (5 us) */
    GP_ASSERT_EQ_INT(s[0].host_end, 3500 * US);
    GP_ASSERT_EQ_INT(s[1].host_ts, 3500 * US);
    GP_ASSERT_EQ_INT(s[1].host_end, 3900 * US);
    GP_ASSERT_EQ_INT(s[5].num, 6);
    GP_ASSERT_EQ_INT(s[5].host_end, 5385 * US); /* the checkpoint's copies in no step */
    done(&r);
}

/* Twelve iterations, every fourth with a logged copy: still one step per iteration. */
static void test_logging_keeps_period(void)
{
    trace_text *b = begin();
    int t = 0;
    for (int i = 0; i < 12; i++)
        t = iteration(b, t, i % 4 == 3, 0);
    analysed r = finish(b);
    const gp_step *s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 12);
    GP_ASSERT_EQ_INT(s[0].period, 5);
    done(&r);
}

/* The backward pass launched from another thread (PyTorch's autograd engine): one sequence. */
static void test_two_threads(void)
{
    trace_text *b = begin();
    for (int i = 0, t = 0; i < 8; i++, t += 400) {
        launch(b, 7, t + 300, "fwd_gemm");
        launch(b, 7, t + 320, "fwd_relu");
        launch(b, 8, t + 340, "bwd_relu");
        launch(b, 8, t + 360, "bwd_gemm");
        launch(b, 7, t + 380, "adam");
    }
    analysed r = finish(b);
    const gp_step *s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 8);
    GP_ASSERT_EQ_INT(s[0].period, 5);
    GP_ASSERT_EQ_INT(s[2].host_ts, 1100 * US); /* its first launch */
    done(&r);
}

/* The batch's copy starts an iteration though the optimizer's kernel, last, has more idle host
 * time before it (215 us against the copy's 135: half or more of it). */
static void test_batch_copy_starts(void)
{
    trace_text *b = begin();
    for (int i = 0, t = 0; i < 8; i++, t += 400) {
        launch_as(b, "gpu_memcpy", 7, t + 100, "Memcpy HtoD (Pinned -> Device)");
        launch(b, 7, t + 120, "fwd");
        launch(b, 7, t + 140, "bwd");
        launch(b, 7, t + 360, "adam");
    }
    analysed r = finish(b);
    const gp_step *s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 8);
    GP_ASSERT_EQ_INT(s[1].host_ts, 500 * US); /* at the second iteration's copy */
    GP_ASSERT_EQ_INT(s[1].host_end, 900 * US);
    done(&r);
}

/* One forward pass of 24 identical layers in one range (cat, name): one step, not 24. */
static void layers_in(const char *cat, const char *name, int *n, int *synthetic)
{
    trace_text *b = begin();
    range(b, cat, name, 7, 0, 24 * 60 + 100);
    for (int l = 0; l < 24; l++) {
        launch(b, 7, 50 + 60 * l, "attn");
        launch(b, 7, 70 + 60 * l, "mlp");
        launch(b, 7, 90 + 60 * l, "norm");
    }
    analysed r = finish(b);
    *n = r.s ? (int)r.n : -1;
    *synthetic = r.s && r.s[0].synthetic && !r.s[0].inferred;
    done(&r);
}

/* ...an inference request's annotation, and with_stack's frame of the model's module call (a
 * script's own frame, around a loop, does not count). */
static void test_layers_in_one_call(void)
{
    int n, synthetic;
    layers_in("user_annotation", "execute_model", &n, &synthetic);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(synthetic);
    layers_in("python_function", "nn.Module: Transformer_0", &n, &synthetic);
    GP_ASSERT_EQ_INT(n, 1);
    GP_CHECK(synthetic);
    layers_in("python_function", "train.py(12): main", &n, &synthetic);
    GP_ASSERT_EQ_INT(n, 24);
}

/* Launches that never repeat (every kernel its own shape), and a marked loop: as before. */
static void test_no_period_and_markers(void)
{
    trace_text *b = begin();
    char name[32];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "gemm_%d", i);
        launch(b, 7, 100 * i, name);
    }
    analysed r = finish(b);
    const gp_step *s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 1);
    GP_CHECK(s[0].synthetic);
    done(&r);

    b = begin();
    for (int i = 0, t = 0; i < 6; i++)
        t = iteration(b, t, 0, 0);
    range(b, "user_annotation", "ProfilerStep#3", 7, 0, 2400);
    r = finish(b);
    s = r.s;
    GP_CHECK(s != NULL);
    GP_ASSERT_EQ_INT(r.n, 1);
    GP_CHECK(!s[0].inferred && !s[0].synthetic);
    done(&r);
}

int main(void)
{
    GP_RUN(test_iterations);
    GP_RUN(test_logging_keeps_period);
    GP_RUN(test_two_threads);
    GP_RUN(test_batch_copy_starts);
    GP_RUN(test_layers_in_one_call);
    GP_RUN(test_no_period_and_markers);
    return gp_test_summary();
}
