/* The training-speed techniques as trainer knobs (issue 31 §2), each against the run with the
 * knob off from the same seed: --checkpoint-activations gives the same weights (the recomputed
 * activations are the ones forward made) with fewer activation bytes held; --zero-grad none the
 * same weights without the pass that zeroes the gradients; --fused the same weights within float
 * tolerance with fewer elementwise passes a step. */
#include "gp/train.h"
#include "gp_test.h"
#include "gp_test_tmp.h"
#include "train_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDX_DIR GP_TEST_DATA_DIR "/idx"

static char tmp_root[256];

struct outcome {
    gp_train_result res;
    float *params;
};

/* Train `model` for one epoch of the fixture with `knob` applied to the config; keep the weights.
 */
static void train(const char *model, const char *amp, void (*knob)(gp_train_config *),
                  struct outcome *o)
{
    static int n;
    char ck[300];
    snprintf(ck, sizeof(ck), "%s/run%d.ckpt", tmp_root, n++);
    gp_train_config c;
    gp_train_config_init(&c);
    c.data_dir = IDX_DIR, c.out_dir = tmp_root, c.device = "cpu", c.batch_size = 16;
    c.profile = 0, c.model = model, c.amp = amp, c.checkpoint = ck;
    if (knob)
        knob(&c);
    gp_error err;
    GP_ASSERT_OK(gp_train_run(&c, &o->res, &err));
    enum model_kind kind = strcmp(model, "cnn") == 0 ? MODEL_CNN : MODEL_MLP;
    struct model_spec m;
    model_spec_init(&m, kind, 28, 28);
    o->params = calloc(m.n_params, sizeof(float));
    GP_ASSERT_OK(test_load_params(ck, kind, OPTIM_ADAM, o->params));
}

static double max_diff(const char *model, const struct outcome *a, const struct outcome *b)
{
    struct model_spec m;
    model_spec_init(&m, strcmp(model, "cnn") == 0 ? MODEL_CNN : MODEL_MLP, 28, 28);
    double worst = 0;
    for (size_t i = 0; i < m.n_params; i++)
        worst = fmax(worst, fabs((double)a->params[i] - b->params[i]));
    return worst;
}

static void ckpt_on(gp_train_config *c)
{
    c->checkpoint_activations = 1;
}

static void fused_on(gp_train_config *c)
{
    c->fused = 1;
}

static void ckpt_fused(gp_train_config *c)
{
    c->checkpoint_activations = 1, c->fused = 1;
}

/* Same weights (tolerance 1e-6: the recomputed GEMMs are the same GEMMs), less memory held;
 * under --fused the linear layers' pre-activations are never made, so there is less to drop. */
static void check_checkpointing(const char *model, const char *amp, int fused)
{
    struct outcome off, on;
    train(model, amp, fused ? fused_on : NULL, &off);
    train(model, amp, fused ? ckpt_fused : ckpt_on, &on);
    GP_CHECK(max_diff(model, &off, &on) < 1e-6);
    GP_ASSERT_NEAR(on.res.final_loss, off.res.final_loss, 1e-6);
    GP_CHECK(off.res.activation_bytes > 0);
    GP_CHECK(on.res.activation_bytes < off.res.activation_bytes);
    /* the saving the trace predicts from the layers' activation sizes is the one measured */
    struct model_spec m;
    model_spec_init(&m, strcmp(model, "cnn") == 0 ? MODEL_CNN : MODEL_MLP, 28, 28);
    int fuse = MODEL_FUSE_CONV | (fused ? MODEL_FUSE_LINEAR : 0);
    long long predicted = (long long)(model_ckpt_saving(&m, fuse) * 16 * sizeof(float));
    GP_ASSERT_EQ_INT(off.res.activation_bytes - on.res.activation_bytes, predicted);
    free(off.params), free(on.params);
}

static void test_checkpoint_cnn(void)
{
    check_checkpointing("cnn", "off", 0);
}

static void test_checkpoint_mlp(void)
{
    check_checkpointing("mlp", "off", 0);
}

static void test_checkpoint_cnn_bf16(void)
{
    check_checkpointing("cnn", "bf16", 0);
}

/* cnn: the dropped FC pre-activation is never made under --fused (a smaller saving, predicted) */
static void test_checkpoint_cnn_fused(void)
{
    check_checkpointing("cnn", "off", 1);
}

static void zero_grad_none(gp_train_config *c)
{
    c->zero_grad = "none";
}

static void zero_grad_none_acc(gp_train_config *c)
{
    c->zero_grad = "none", c->accumulate = 2;
}

static void accumulate2(gp_train_config *c)
{
    c->accumulate = 2;
}

/* --zero-grad none: backward writes the gradients the step left "None" instead of adding to
 * zeros: the same weights, with and without accumulation (the second micro-batch adds). */
static void test_zero_grad_none(void)
{
    const char *models[] = {"mlp", "cnn"};
    for (int i = 0; i < 2; i++) {
        struct outcome zero, none, zero2, none2;
        train(models[i], "off", NULL, &zero);
        train(models[i], "off", zero_grad_none, &none);
        GP_CHECK(max_diff(models[i], &zero, &none) < 1e-6);
        train(models[i], "off", accumulate2, &zero2);
        train(models[i], "off", zero_grad_none_acc, &none2);
        GP_CHECK(max_diff(models[i], &zero2, &none2) < 1e-6);
        GP_CHECK(max_diff(models[i], &zero, &zero2) > 1e-4); /* accumulation changed the run */
        free(zero.params), free(none.params), free(zero2.params), free(none2.params);
    }
}

static void fused_acc(gp_train_config *c)
{
    c->fused = 1, c->accumulate = 2;
}

/* --fused: bias+ReLU after the GEMM and the step's zeroing are each one pass: the weights agree
 * within float tolerance (the GEMM adds the bias after its sums, not before), the loss too, and
 * the passes counted a step drop by the ones fused (mlp: 2 ReLU forward, 2 ReLU backward, the
 * zeroing; cnn: 1, 1 and the zeroing, its conv ReLUs being fused already). With accumulation,
 * the fused step's zeroing must leave the next step's first micro-batch adding to zeros. */
static void test_fused(void)
{
    const char *models[] = {"mlp", "cnn"};
    const long long saved[] = {5, 3};
    for (int i = 0; i < 2; i++) {
        struct outcome off, on, off2, on2;
        train(models[i], "off", NULL, &off);
        train(models[i], "off", fused_on, &on);
        GP_CHECK(max_diff(models[i], &off, &on) < 1e-5);
        GP_ASSERT_NEAR(on.res.final_loss, off.res.final_loss, 1e-5);
        GP_CHECK(off.res.elementwise_passes > 0);
        GP_ASSERT_EQ_INT(off.res.elementwise_passes - on.res.elementwise_passes, saved[i]);
        train(models[i], "off", accumulate2, &off2);
        train(models[i], "off", fused_acc, &on2);
        GP_CHECK(max_diff(models[i], &off2, &on2) < 1e-5);
        free(off.params), free(on.params), free(off2.params), free(on2.params);
    }
}

static void channels_last(gp_train_config *c)
{
    c->channels_last = 1;
}

static void channels_last_ckpt(gp_train_config *c)
{
    c->channels_last = 1, c->checkpoint_activations = 1, c->accumulate = 2;
}

static void ckpt_acc(gp_train_config *c)
{
    c->checkpoint_activations = 1, c->accumulate = 2;
}

/* Train `model` with knob a and with knob b from the same seed: the largest weight difference,
 * and the final losses' difference in *dloss. */
static double knob_diff(const char *model, const char *amp, void (*a)(gp_train_config *),
                        void (*b)(gp_train_config *), double *dloss)
{
    struct outcome ra, rb;
    train(model, amp, a, &ra);
    train(model, amp, b, &rb);
    double d = max_diff(model, &ra, &rb);
    *dloss = fabs(ra.res.final_loss - rb.res.final_loss);
    free(ra.params), free(rb.params);
    return d;
}

/* --channels-last: the cnn's convolutions over NHWC give the NCHW run's weights and loss within
 * float tolerance (the GEMMs sum in another order: 3e-5 measured), with checkpointing and
 * accumulation too, and under bf16 within bf16's; the mlp has no convolution: the same run. */
static void test_channels_last(void)
{
    double dloss;
    GP_CHECK(knob_diff("cnn", "off", NULL, channels_last, &dloss) < 1e-4);
    GP_CHECK(dloss < 1e-5);
    GP_CHECK(knob_diff("cnn", "off", ckpt_acc, channels_last_ckpt, &dloss) < 1e-4);
    GP_CHECK(knob_diff("cnn", "bf16", NULL, channels_last, &dloss) < 1e-2);
    GP_CHECK(dloss < 1e-2);
    GP_CHECK(knob_diff("mlp", "off", NULL, channels_last, &dloss) == 0);
}

static void test_zero_grad_refused(void)
{
    gp_train_config c;
    gp_train_config_init(&c);
    c.data_dir = IDX_DIR, c.out_dir = tmp_root, c.device = "cpu", c.profile = 0;
    c.zero_grad = "sometimes";
    gp_error err;
    gp_train_result r;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "--zero-grad");
}

int main(void)
{
    unsetenv("OPENBLAS_NUM_THREADS");
    if (gp_test_tmpdir(tmp_root, sizeof(tmp_root), "test_train_knobs") != 0)
        return 2;
    GP_RUN(test_checkpoint_cnn);
    GP_RUN(test_checkpoint_mlp);
    GP_RUN(test_checkpoint_cnn_bf16);
    GP_RUN(test_zero_grad_none);
    GP_RUN(test_zero_grad_refused);
    GP_RUN(test_fused);
    GP_RUN(test_checkpoint_cnn_fused);
    GP_RUN(test_channels_last);
    gp_test_tmpdir_remove(tmp_root);
    return gp_test_summary();
}
