/* gp_train_run: check the configuration, open the datasets and the backend, run the loop under
 * the profiler, then save the checkpoint and summary.json. */
#include "checkpoint.h"
#include "gp/prof.h"
#include "gp/trace_schema.h"
#include "train_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gp_train_config_init(gp_train_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->model = "mlp";
    cfg->optimizer = "adam";
    cfg->device = "auto";
    cfg->amp = "off";
    cfg->out_dir = "runs";
    cfg->epochs = 1;
    cfg->batch_size = 64;
    cfg->lr = 1e-3;
    cfg->accumulate = 1;
    cfg->seed = 42;
    cfg->prefetch = 2;
    cfg->profile = 1;
}

double train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int gp_train_cuda_available(void)
{
#ifdef GP_HAVE_CUDA
    return train_cuda_present();
#else
    return 0;
#endif
}

/* Index of `s` in the NULL-terminated `names`, or -1. */
static int pick(const char *s, const char *const *names)
{
    for (int i = 0; s && names[i]; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static gp_status parse_names(struct train_run *r, gp_error *err)
{
    static const char *const models[] = {"mlp", "cnn", NULL};
    static const char *const optims[] = {"adam", "sgd", NULL};
    static const char *const amps[] = {"off", "fp16", "bf16", NULL};
    const gp_train_config *c = &r->cfg;
    int m = pick(c->model, models), o = pick(c->optimizer, optims), a = pick(c->amp, amps);
    GP_FAIL_IF(m < 0, GP_EINVAL, err, "unknown model '%s' (expected mlp or cnn)", c->model);
    GP_FAIL_IF(o < 0, GP_EINVAL, err, "unknown optimizer '%s' (expected adam or sgd)",
               c->optimizer);
    GP_FAIL_IF(a < 0, GP_EINVAL, err, "unknown --amp mode '%s' (expected off, fp16 or bf16)",
               c->amp);
    GP_FAIL_IF(c->epochs == 0 && c->max_steps <= 0, GP_EINVAL, err,
               "0 epochs means 'as many as the step limit needs': give a step limit too");
    GP_FAIL_IF(c->epochs < 0 || c->batch_size < 1 || c->accumulate < 1 || c->prefetch < 1 ||
                       c->workers < 0 || !(c->lr > 0.0) || !isfinite(c->lr),
               GP_EINVAL, err,
               "epochs, batch size, accumulate, prefetch and lr must be positive (lr finite)");
    r->model = m == 0 ? MODEL_MLP : MODEL_CNN;
    r->optim = o == 0 ? OPTIM_ADAM : OPTIM_SGD;
    r->amp = (enum amp_mode)a;
    const char *zg = c->zero_grad ? c->zero_grad : "zero";
    GP_FAIL_IF(strcmp(zg, "zero") && strcmp(zg, "none"), GP_EINVAL, err,
               "unknown --zero-grad mode '%s' (expected zero or none)", zg);
    r->zero_grad_none = strcmp(zg, "none") == 0;
    return GP_OK;
}

/* --device auto|cuda|cpu against what is built and present. */
static gp_status pick_device(struct train_run *r, gp_error *err)
{
    const char *d = r->cfg.device ? r->cfg.device : "auto";
    GP_FAIL_IF(strcmp(d, "auto") && strcmp(d, "cuda") && strcmp(d, "cpu"), GP_EINVAL, err,
               "unknown device '%s' (expected auto, cuda or cpu)", d);
    int have = gp_train_cuda_available();
#ifndef GP_HAVE_CUDA
    GP_FAIL_IF(strcmp(d, "cuda") == 0, GP_EUNSUPPORTED, err,
               "this gprof-train was built without CUDA (--device cuda)");
#endif
#ifdef GP_HAVE_CUDA
    const char *why = have ? NULL : train_cuda_why();
    GP_FAIL_IF(strcmp(d, "cuda") == 0 && why, GP_EUNSUPPORTED, err, "--device cuda: %s", why);
#endif
    GP_FAIL_IF(strcmp(d, "cuda") == 0 && !have, GP_EUNSUPPORTED, err,
               "--device cuda: no usable CUDA device on this machine");
    r->use_cuda = strcmp(d, "cuda") == 0 || (strcmp(d, "auto") == 0 && have);
    /* bf16 runs on the CPU too, as torch.autocast("cpu", dtype=torch.bfloat16) */
    GP_FAIL_IF(!r->use_cuda && r->amp == AMP_FP16, GP_EINVAL, err,
               "--amp fp16 needs a CUDA device; training runs on the CPU here (use --amp bf16 "
               "or --amp off)");
    GP_FAIL_IF(!r->use_cuda && r->cfg.cuda_graphs, GP_EINVAL, err,
               "--cuda-graphs captures the training step's kernel launches on a CUDA device and "
               "replays them; training runs on the CPU here, which launches none (drop "
               "--cuda-graphs, or use --device cuda)");
    r->ops = &backend_cpu_ops;
#ifdef GP_HAVE_CUDA
    if (r->use_cuda)
        r->ops = train_cuda_ops();
#endif
    GP_FAIL_IF(r->cfg.cuda_graphs && !r->ops->graph_step, GP_EUNSUPPORTED, err,
               "--cuda-graphs: the %s backend cannot capture a step", r->ops->name);
    return GP_OK;
}

static gp_status open_data(struct train_run *r, gp_error *err)
{
    const char *dir = r->cfg.data_dir ? r->cfg.data_dir : GP_TRAIN_DEFAULT_DATA;
    GP_TRY(dataset_open_dir(&r->train, &r->test, dir, err));
    GP_FAIL_IF(r->model == MODEL_CNN && (r->train.rows < 4 || r->train.cols < 4), GP_EINVAL, err,
               "the cnn needs images of at least 4x4, not %dx%d", r->train.cols, r->train.rows);
    model_spec_init(&r->spec, r->model, r->train.rows, r->train.cols);
    return GP_OK;
}

/* Host buffers for the weights and optimizer moments (free with state_free). */
static gp_status state_alloc(const struct train_run *r, struct backend_state *st, gp_error *err)
{
    size_t np = r->spec.n_params, nopt = np * (size_t)backend_opt_slots(r->optim);
    st->params = calloc(np, sizeof(float));
    st->opt = calloc(nopt, sizeof(float));
    st->t = 0;
    return st->params && st->opt ? GP_OK : gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
}

static void state_free(struct backend_state *st)
{
    free(st->params);
    free(st->opt);
}

/* Initial weights from the seed, or the --resume checkpoint. */
static gp_status init_state(struct train_run *r, gp_error *err)
{
    struct backend_state st;
    gp_status rc = state_alloc(r, &st, err);
    int opt_loaded = 0;
    if (rc == GP_OK && r->cfg.resume)
        rc = checkpoint_load(r->cfg.resume, &r->spec, r->optim, &st, &opt_loaded, err);
    else if (rc == GP_OK)
        model_init_params(&r->spec, st.params, r->cfg.seed);
    if (rc == GP_OK)
        rc = r->ops->set_state(r->be, &st, err);
    state_free(&st);
    return rc;
}

static gp_status save_state(struct train_run *r, gp_error *err)
{
    struct backend_state st;
    gp_status rc = state_alloc(r, &st, err);
    if (rc == GP_OK)
        rc = r->ops->get_state(r->be, &st, err);
    if (rc == GP_OK)
        rc = checkpoint_save(r->cfg.checkpoint, &r->spec, r->optim, &st, err);
    state_free(&st);
    return rc;
}

/* The most threads the CPU backend's GEMMs should use: all cores but one, so that loader threads
 * decoding beside training have a core OpenBLAS's spinning threads do not fight for (PNG
 * batches, --workers 1 on 2 cores: 52k samples/s with two GEMM threads, 65k with one; with
 * --workers 0 one thread or two made no difference to the mlp, 3% to the cnn). It depends on the
 * machine only, not on --workers: OpenBLAS's sums depend on its thread count, and a run must give
 * the same weights whatever --workers is. */
static int gemm_threads(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 1 ? (int)(cores - 1) : 1;
}

/* The batch sizes the run will see, set up before the first step: the full batch, the last
 * partial one of an epoch (training) and of the test set (evaluation, forward only). */
static gp_status prepare_batches(struct train_run *r, gp_error *err)
{
    int bs = r->cfg.batch_size, test_last = r->test.n % bs;
    int train_last = r->cfg.drop_last ? 0 : r->train.n % bs;
    if (!r->ops->prepare_batch)
        return GP_OK;
    if (r->train.n >= bs || r->test.n >= bs) /* a set smaller than a batch has no full one */
        GP_TRY(r->ops->prepare_batch(r->be, bs, r->train.n >= bs, err));
    if (train_last)
        GP_TRY(r->ops->prepare_batch(r->be, train_last, 1, err));
    if (test_last && test_last != train_last)
        GP_TRY(r->ops->prepare_batch(r->be, test_last, 0, err));
    return GP_OK;
}

/* Under the profiler when it runs: the backend allocates its device memory here, and CUPTI
 * records an allocation only when it is made. */
static gp_status open_backend(struct train_run *r, gp_error *err)
{
    struct backend_config bc = {.spec = &r->spec,
                                .max_batch = r->cfg.batch_size,
                                .optimizer = r->optim,
                                .lr = (float)r->cfg.lr,
                                .accumulate = r->cfg.accumulate,
                                .amp = r->amp,
                                .pin_memory = r->cfg.pin_memory,
                                .non_blocking = r->cfg.non_blocking,
                                .cudnn_benchmark = r->cfg.cudnn_benchmark,
                                .host_threads = gemm_threads(),
                                .checkpoint_activations = r->cfg.checkpoint_activations,
                                .zero_grad_none = r->zero_grad_none,
                                .fused = r->cfg.fused,
                                .channels_last = r->cfg.channels_last};
    GP_PROF_RANGE(GP_NAME_SETUP);
    GP_TRY(r->ops->open(&r->be, &bc, r->res->device_name, sizeof(r->res->device_name),
                        &r->res->device_memory, err));
    if (r->ops->activation_bytes)
        r->res->activation_bytes = r->ops->activation_bytes(r->be);
    GP_TRY(init_state(r, err));
    return prepare_batches(r, err);
}

static gp_status run(struct train_run *r, gp_error *err)
{
    GP_TRY(parse_names(r, err));
    GP_TRY(pick_device(r, err));
    GP_TRY(open_data(r, err));
    if (r->cfg.checkpoint) /* found now, not after the last epoch with the weights lost */
        GP_TRY(checkpoint_check_target(r->cfg.checkpoint, err));
    GP_TRY(train_make_run_dir(r, err));
    if (r->cfg.profile)
        train_prof_start(r);
    gp_status rc = open_backend(r, err);
    if (rc == GP_OK && r->cfg.profile)
        train_prof_device(r);
    if (rc != GP_OK) {
        train_prof_stop(r);
        train_discard_run_dir(r); /* nothing trained: leave no folder behind */
        return rc;
    }
    rc = train_loop(r, err);
    if (r->cfg.profile)
        train_prof_stop(r);
    train_close_scalars(r);
    if (rc == GP_OK && r->cfg.checkpoint && !r->res->diverged_step) /* keep the old weights */
        rc = save_state(r, err);
    r->res->wall_s = train_now() - r->t_start;
    if (rc == GP_OK)
        rc = train_write_summary(r, err);
    return rc;
}

gp_status gp_train_run(const gp_train_config *cfg, gp_train_result *result, gp_error *err)
{
    struct train_run *r = calloc(1, sizeof(*r));
    if (!r)
        return gp_error_set(err, GP_ENOMEM, NULL, "out of memory");
    memset(result, 0, sizeof(*result));
    r->cfg = *cfg;
    r->res = result;
    r->t_start = train_now();
    gp_status rc = run(r, err);
    if (r->be)
        r->ops->close(r->be);
    dataset_release(&r->train);
    dataset_release(&r->test);
    free(r);
    return rc;
}
