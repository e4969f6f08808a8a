/* test_cuda_kernels_cpu.cc: the trainer's CUDA kernels (trainer/src/cuda/k_*.cu, unchanged but
 * for the launch syntax: host_cu.py) run on the CPU through cuda_cpu_shim.h, with the launch
 * wrappers' own grid arithmetic, against the CPU backend (trainer/src/cpu), the oracle. Sizes
 * leave a partial last block; fp16 and bf16 are checked where kernels are templated. Under
 * ThreadSanitizer a missing __syncthreads is a data race on __shared__ memory. The grid cap is
 * lowered to 2 blocks (CUK_MAX_BLOCKS), so every size here is above it and each grid-stride
 * loop runs more than once, and the shim runs blocks in a shuffled order. */
#define CUK_MAX_BLOCKS 2
#include "cuda_cpu_shim.h"

#include <string.h>

thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
cusim_block cusim_cur;
long cusim_launches;

#include "k_elementwise.cc"
#include "k_loss.cc"
#include "k_optim.cc"
#include "k_pool.cc"

extern "C" {
#include "cpu_ops.h"
}

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static unsigned rng = 12345;
static float uniform(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f; /* [-1, 1) */
}

static void fill(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = uniform();
}

/* fp32 is exact; fp16 keeps 11 significant bits, bf16 8: a rounding step of the value. */
static float tolerance(cuk_dtype dt, float v)
{
    float ulp = dt == CUK_F32 ? 0.0f : dt == CUK_F16 ? 1.0f / 1024 : 1.0f / 128;
    return fabsf(v) * ulp + 1e-6f;
}

static float as_float(cuk_dtype dt, const void *p, size_t i)
{
    if (dt == CUK_F16)
        return __half2float(((const __half *)p)[i]);
    if (dt == CUK_BF16)
        return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    return ((const float *)p)[i];
}

static void *lowp(cuk_dtype dt, const float *x, size_t n)
{
    void *p = calloc(n, 4);
    cuk_cast_from_f32(dt, p, x, n, 0);
    return p;
}

static const char *dt_name(cuk_dtype dt)
{
    return dt == CUK_F16 ? "fp16" : dt == CUK_BF16 ? "bf16" : "fp32";
}

static void test_cast(cuk_dtype dt)
{
    const size_t n = 1000; /* 4 blocks of 256, the last one partial */
    float x[n];
    fill(x, n);
    x[7] = 1.0f + 1.0f / 4096; /* rounds to nearest even */
    void *y = lowp(dt, x, n);
    for (size_t i = 0; i < n; i++) {
        float want = dt == CUK_F16    ? __half2float(__float2half_rn(x[i]))
                     : dt == CUK_BF16 ? __bfloat162float(__float2bfloat16(x[i]))
                                      : x[i];
        CHECK(as_float(dt, y, i) == want, "cast %s [%zu]: %g != %g", dt_name(dt), i,
              as_float(dt, y, i), want);
    }
    free(y);
}

static void test_relu(cuk_dtype dt)
{
    const size_t n = 777;
    float x[n], dy[n], y_ref[n], dx_ref[n], xr[n], dyr[n];
    fill(x, n);
    fill(dy, n);
    void *xl = lowp(dt, x, n), *dyl = lowp(dt, dy, n), *y = calloc(n, 4), *dx = calloc(n, 4);
    for (size_t i = 0; i < n; i++) { /* the oracle sees the same rounded inputs */
        xr[i] = as_float(dt, xl, i);
        dyr[i] = as_float(dt, dyl, i);
    }
    cpu_relu_forward(y_ref, xr, n);
    cpu_relu_backward(dx_ref, dyr, y_ref, n);
    cuk_relu_fwd(dt, y, xl, n, 0);
    void *yl = lowp(dt, y_ref, n);
    cuk_relu_bwd(dt, dx, dyl, yl, n, 0);
    for (size_t i = 0; i < n; i++) {
        CHECK(as_float(dt, y, i) == y_ref[i], "relu fwd %s [%zu]", dt_name(dt), i);
        CHECK(as_float(dt, dx, i) == dx_ref[i], "relu bwd %s [%zu]", dt_name(dt), i);
    }
    free(xl), free(dyl), free(y), free(dx), free(yl);
}

/* NaN through ReLU stays NaN, as in PyTorch: an fp16 overflow in the forward pass reaches the
 * loss and the scaler skips the step (mapped to 0 it was hidden). Kernel and oracle. */
static void test_relu_nan(cuk_dtype dt)
{
    const size_t n = 600;
    float x[n], y_ref[n], dy[n], dx_ref[n];
    fill(x, n);
    fill(dy, n);
    x[3] = x[n - 5] = NAN; /* the first block and the last */
    void *xl = lowp(dt, x, n), *y = calloc(n, 4), *dx = calloc(n, 4), *dyl = lowp(dt, dy, n);
    cpu_relu_forward(y_ref, x, n);
    cuk_relu_fwd(dt, y, xl, n, 0);
    cpu_relu_backward(dx_ref, dy, y_ref, n);
    cuk_relu_bwd(dt, dx, dyl, y, n, 0);
    for (size_t i : {(size_t)3, n - 5}) {
        CHECK(isnan(y_ref[i]) && isnan(as_float(dt, y, i)), "relu fwd %s keeps NaN [%zu]",
              dt_name(dt), i);
        CHECK(dx_ref[i] == dy[i] && as_float(dt, dx, i) == as_float(dt, dyl, i),
              "relu bwd %s passes the gradient where y is NaN [%zu]", dt_name(dt), i);
    }
    free(xl), free(y), free(dx), free(dyl);
}

static void test_bias(cuk_dtype dt)
{
    const int n = 3, c = 5, hw = 67; /* 1005 elements */
    const size_t total = (size_t)n * c * hw;
    float y[total], b[c], db[c] = {0}, dy[total];
    fill(y, total);
    fill(b, c);
    fill(dy, total);
    void *yl = lowp(dt, y, total), *dyl = lowp(dt, dy, total);
    float yr[total], acc[total];
    for (size_t i = 0; i < total; i++)
        yr[i] = as_float(dt, yl, i);
    cuk_bias_add(dt, yl, b, n, c, hw, 0);
    for (size_t i = 0; i < total; i++) {
        float want = yr[i] + b[(i / hw) % c];
        CHECK(fabsf(as_float(dt, yl, i) - want) <= tolerance(dt, want), "bias add %s [%zu]",
              dt_name(dt), i);
    }
    memcpy(acc, y, sizeof(acc));
    cuk_accum_f32(dt, acc, dyl, total, 1, 0);
    for (size_t i = 0; i < total; i++)
        CHECK(acc[i] == y[i] + as_float(dt, dyl, i), "accum %s [%zu]", dt_name(dt), i);
    cuk_bias_grad(dt, db, dyl, n, c, hw, 1, 0);
    for (int ch = 0; ch < c; ch++) {
        double want = 0;
        for (int i = 0; i < n; i++)
            for (int p = 0; p < hw; p++)
                want += as_float(dt, dyl, ((size_t)i * c + ch) * hw + p);
        /* a tree sum in fp32 against a double sum: within n*hw fp32 roundings */
        CHECK(fabs(db[ch] - want) <= 1e-4 * (n * hw), "bias grad %s [%d]: %g != %g", dt_name(dt),
              ch, db[ch], want);
    }
    /* add 0 (--zero-grad none): both overwrite what the last step left */
    cuk_accum_f32(dt, acc, dyl, total, 0, 0);
    for (size_t i = 0; i < total; i++)
        CHECK(acc[i] == as_float(dt, dyl, i), "accum (write) %s [%zu]", dt_name(dt), i);
    float db_sum[c];
    memcpy(db_sum, db, sizeof(db_sum));
    cuk_bias_grad(dt, db, dyl, n, c, hw, 0, 0);
    for (int ch = 0; ch < c; ch++)
        CHECK(db[ch] == db_sum[ch], "bias grad (write) %s [%d]: %g != %g", dt_name(dt), ch, db[ch],
              db_sum[ch]);
    free(yl), free(dyl);
}

static void test_maxpool(cuk_dtype dt)
{
    const int n = 2, c = 3, h = 10, w = 14;
    const size_t in = (size_t)n * c * h * w, out = in / 4;
    float x[in], y_ref[out], dy[out], dx_ref[in], xr[in];
    int32_t arg_ref[out], arg[out];
    fill(x, in);
    fill(dy, out);
    void *xl = lowp(dt, x, in), *y = calloc(out, 4), *dyl = lowp(dt, dy, out), *dx = calloc(in, 4);
    for (size_t i = 0; i < in; i++)
        xr[i] = as_float(dt, xl, i);
    cpu_maxpool2_forward(y_ref, arg_ref, xr, n, c, h, w);
    cuk_maxpool2_fwd(dt, y, arg, xl, n, c, h, w, 0);
    for (size_t i = 0; i < out; i++) {
        CHECK(as_float(dt, y, i) == y_ref[i], "maxpool fwd %s [%zu]", dt_name(dt), i);
        CHECK(arg[i] == arg_ref[i], "maxpool arg %s [%zu]: %d != %d", dt_name(dt), i, arg[i],
              arg_ref[i]);
    }
    float dyr[out];
    for (size_t i = 0; i < out; i++)
        dyr[i] = as_float(dt, dyl, i);
    cpu_maxpool2_backward(dx_ref, dyr, arg_ref, n, c, h, w);
    cuk_maxpool2_bwd(dt, dx, dyl, arg, n, c, h, w, 0);
    for (size_t i = 0; i < in; i++)
        CHECK(as_float(dt, dx, i) == dx_ref[i], "maxpool bwd %s [%zu]", dt_name(dt), i);
    free(xl), free(y), free(dyl), free(dx);
}

static void test_softmax_ce(cuk_dtype dt)
{
    const int n = 203, k = 10; /* 2 blocks of 128, the last one partial */
    float z[n * k], zr[n * k], prob_ref[n * k], prob[n * k], dz_ref[n * k];
    int32_t labels[n];
    fill(z, n * k);
    for (int i = 0; i < n; i++)
        labels[i] = (int32_t)((i * 7) % k);
    void *zl = lowp(dt, z, (size_t)n * k);
    for (int i = 0; i < n * k; i++)
        zr[i] = as_float(dt, zl, i);
    int correct = 0;
    double loss = cpu_softmax_ce_forward(prob_ref, &correct, zr, labels, n, k);
    cuk_stats st = {0, 0, 0};
    cuk_softmax_ce_fwd(dt, prob, zl, labels, n, k, &st, 0);
    for (int i = 0; i < n * k; i++)
        CHECK(fabsf(prob[i] - prob_ref[i]) <= 1e-6f, "softmax %s [%d]", dt_name(dt), i);
    CHECK(fabs(st.loss_sum - loss) <= 1e-4 * n, "loss %s: %g != %g", dt_name(dt), st.loss_sum,
          loss);
    CHECK(st.correct == (unsigned long long)correct && st.samples == (unsigned long long)n,
          "counts %s: %llu/%llu", dt_name(dt), st.correct, st.samples);
    cuk_amp amp = {8.0f, 0, 0, 1, 0, 0};
    void *dz = calloc((size_t)n * k, 4);
    cpu_softmax_ce_backward(dz_ref, prob_ref, labels, n, k, 8.0f / (n * 2));
    cuk_softmax_ce_bwd(dt, dz, prob, labels, n, k, 1.0f / (n * 2), &amp, 0);
    for (int i = 0; i < n * k; i++)
        CHECK(fabsf(as_float(dt, dz, i) - dz_ref[i]) <= tolerance(dt, dz_ref[i]) + 1e-7f,
              "softmax bwd %s [%d]", dt_name(dt), i);
    free(zl), free(dz);
}

static void test_unscale_and_update(void)
{
    const size_t n = 1000;
    float g[n], ref[n];
    fill(g, n);
    for (size_t i = 0; i < n; i++)
        ref[i] = g[i] / 4.0f;
    cuk_amp amp = {4.0f, 1999, 0, 1, 0, 0};
    cuk_unscale_check(g, n, &amp, 0);
    CHECK(!amp.found_inf && !cpu_nonfinite(g, n), "finite gradients flagged");
    for (size_t i = 0; i < n; i++)
        CHECK(g[i] == ref[i], "unscale [%zu]", i);
    cuk_amp_update(&amp, 0);
    CHECK(amp.t == 1 && amp.scale == 8.0f && amp.growth_tracker == 0,
          "growth after 2000 good steps: t %lld scale %g", amp.t, amp.scale);
    g[n - 3] = INFINITY; /* in the partial last block */
    cuk_unscale_check(g, n, &amp, 0);
    CHECK(amp.found_inf == 1 && cpu_nonfinite(g, n), "an inf in the last block is found");
    cuk_amp_update(&amp, 0);
    CHECK(amp.scale == 4.0f && amp.skipped == 1 && amp.t == 1, "backoff and skip");
}

/* An inf in the first block: a later (clean) block must not clear the flag, whatever order the
 * blocks run in (the shim alternates reversed and shuffled orders: run it twice). */
static void test_inf_in_first_block(void)
{
    const size_t n = 1500;
    float g[n];
    for (int round = 0; round < 2; round++) {
        fill(g, n);
        g[1] = -INFINITY;
        cuk_amp amp = {4.0f, 0, 0, 1, 0, 0};
        cuk_unscale_check(g, n, &amp, 0);
        CHECK(amp.found_inf == 1, "an inf in the first block is found (round %d)", round);
    }
}

/* GradScaler: after a back-off the growth counter starts again from 0 (2000 more good steps
 * to grow), and growth never makes the scale infinite. */
static void test_scaler_paths(void)
{
    cuk_amp a = {1024.0f, 1500, 1, 1, 0, 7};
    cuk_amp_update(&a, 0);
    CHECK(a.scale == 512.0f && a.growth_tracker == 0 && a.skipped == 1 && a.t == 7,
          "back-off: scale %g tracker %d skipped %lld t %lld", a.scale, a.growth_tracker, a.skipped,
          a.t);
    a.found_inf = 0;
    for (int i = 0; i < 1999; i++)
        cuk_amp_update(&a, 0);
    CHECK(a.scale == 512.0f && a.growth_tracker == 1999, "no growth before 2000 good steps: %g %d",
          a.scale, a.growth_tracker);
    cuk_amp_update(&a, 0);
    CHECK(a.scale == 1024.0f && a.growth_tracker == 0, "growth at 2000: %g %d", a.scale,
          a.growth_tracker);
    cuk_amp big = {3.0e38f, 1999, 0, 1, 0, 0};
    cuk_amp_update(&big, 0);
    CHECK(big.scale == 3.0e38f && isfinite(big.scale) && big.growth_tracker == 0,
          "growth that would overflow keeps the scale: %g", big.scale);
}

static void test_optimizers(cuk_dtype dt)
{
    const size_t n = 1001;
    float p[n], g[n], m[n] = {0}, v[n] = {0}, pr[n], mr[n] = {0}, vr[n] = {0};
    fill(p, n);
    fill(g, n);
    memcpy(pr, p, sizeof(p));
    void *lp = calloc(n, 4);
    cuk_amp amp = {1.0f, 0, 0, 0, 0, 0};
    for (int t = 1; t <= 3; t++) {
        amp.t = t;
        cuk_adam(p, lp, dt, g, m, v, n, 1e-3f, 0.9f, 0.999f, 1e-8f, &amp, 0, 0);
        cpu_adam_step(pr, g, mr, vr, n, 1e-3f, 0.9f, 0.999f, 1e-8f, t, 1.0f);
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(fabsf(p[i] - pr[i]) <= 1e-6f, "adam [%zu]: %.9g != %.9g", i, p[i], pr[i]);
        CHECK(fabsf(as_float(dt, lp, i) - p[i]) <= tolerance(dt, p[i]), "adam lowp %s [%zu]",
              dt_name(dt), i);
    }
    amp.found_inf = 1; /* a skipped step changes nothing */
    float before = p[0];
    cuk_adam(p, lp, dt, g, m, v, n, 1e-3f, 0.9f, 0.999f, 1e-8f, &amp, 0, 0);
    CHECK(p[0] == before, "adam skipped on found_inf");
    float buf0[n] = {0};
    float p_last = p[n - 1];
    cuk_sgd(p, lp, dt, g, buf0, n, 0.1f, 0.9f, &amp, 0, 0);
    CHECK(p[0] == before && p[n - 1] == p_last && buf0[0] == 0.0f && buf0[n - 1] == 0.0f,
          "sgd skipped on found_inf");
    amp.found_inf = 0;
    float buf[n] = {0}, bufr[n] = {0};
    memcpy(pr, p, sizeof(p));
    for (int t = 0; t < 2; t++) {
        cuk_sgd(p, lp, dt, g, buf, n, 0.1f, 0.9f, &amp, 0, 0);
        cpu_sgd_step(pr, g, bufr, n, 0.1f, 0.9f, 1.0f);
    }
    for (size_t i = 0; i < n; i++)
        CHECK(fabsf(p[i] - pr[i]) <= 1e-6f, "sgd [%zu]", i);
    free(lp);
}

int main(void)
{
    const cuk_dtype dts[] = {CUK_F32, CUK_F16, CUK_BF16};
    for (cuk_dtype dt : dts) {
        test_cast(dt);
        test_relu(dt);
        test_relu_nan(dt);
        test_bias(dt);
        test_maxpool(dt);
        test_softmax_ce(dt);
        test_optimizers(dt);
    }
    test_unscale_and_update();
    test_inf_in_first_block();
    test_scaler_paths();
    CHECK(cuk_have_image() == 1, "the image check");
    printf("%ld launches on the CPU, %d failure(s)\n", cusim_launches, failures);
    return failures ? 1 : 0;
}
