/* What a run leaves behind: the run folder, the trace (libprof, with the configuration in
 * "gprof"), TensorBoard scalars and summary.json. */
#include "gp/json_str.h"
#include "gp/fs.h"
#include "gp/log.h"
#include "gp/prof.h"
#include "cpu/cpu_ops.h"
#include "gp/trace_schema.h"
#include "train_int.h"
#ifdef GP_TRAIN_TFEVENTS
#    include "tfevents.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

gp_status train_make_run_dir(struct train_run *r, gp_error *err)
{
    const char *out = r->cfg.out_dir ? r->cfg.out_dir : "runs";
    GP_TRY(gp_mkdir_p(out, err));
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    char *dir = r->res->run_dir;
    size_t cap = sizeof(r->res->run_dir);
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(dir, cap, "%s/%s-%s", out, r->spec.name, stamp);
        else
            snprintf(dir, cap, "%s/%s-%s-%d", out, r->spec.name, stamp, k);
        if (mkdir(dir, 0777) == 0)
            return GP_OK;
        if (errno != EEXIST)
            return gp_error_set(err, GP_EIO, dir, "cannot create folder: %s", strerror(errno));
    }
    return gp_error_set(err, GP_EIO, dir, "cannot create a new run folder");
}

void train_discard_run_dir(struct train_run *r)
{
    if (r->res->trace_path[0])
        unlink(r->res->trace_path);
    r->res->trace_path[0] = '\0';
    rmdir(r->res->run_dir); /* only if nothing else is in it */
}

/* Physical cores: distinct (package, core) pairs in sysfs; the online CPU count otherwise. */
int gp_train_physical_cores(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = online > 0 ? (int)online : 1, found = 0;
    int pairs[1024][2];
    for (int cpu = 0; cpu < n && cpu < 1024; cpu++) {
        char path[128];
        int id[2] = {-1, -1};
        const char *names[2] = {"physical_package_id", "core_id"};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/%s", cpu,
                     names[k]);
            FILE *f = fopen(path, "r");
            if (!f || fscanf(f, "%d", &id[k]) != 1)
                id[k] = -1;
            if (f)
                fclose(f);
        }
        if (id[0] < 0 || id[1] < 0)
            return n;
        int dup = 0;
        for (int j = 0; j < found && !dup; j++)
            dup = pairs[j][0] == id[0] && pairs[j][1] == id[1];
        if (!dup) {
            pairs[found][0] = id[0];
            pairs[found][1] = id[1];
            found++;
        }
    }
    return found > 0 ? found : n;
}

/* The run configuration both outputs carry, written from this one list: set_prof_config puts it
 * in the trace's "gprof" header, put_config in summary.json's "config", each under its name in
 * GP_TRACE_CONFIG_KEYS (gp/trace_schema.h). X(NAME, KIND, VALUE), KIND str, int or bool; `r` is
 * the train_run, `c` its config. tests/train/check_summary_config.py checks the two agree. */
#define TRAIN_SHARED_CONFIG(X)                                                                     \
    X(GP_CFG_MODEL, str, r->spec.name)                                                             \
    X(GP_CFG_BATCH_SIZE, int, c->batch_size)                                                       \
    X(GP_CFG_WORKERS, int, c->workers)                                                             \
    X(GP_CFG_PREFETCH, int, c->prefetch)                                                           \
    X(GP_CFG_DROP_LAST, bool, c->drop_last)                                                        \
    X(GP_CFG_PIN_MEMORY, bool, c->pin_memory)                                                      \
    X(GP_CFG_NON_BLOCKING, bool, c->non_blocking)                                                  \
    X(GP_CFG_AMP, str, c->amp)                                                                     \
    X(GP_CFG_CUDNN_BENCHMARK, bool, c->cudnn_benchmark)                                            \
    X(GP_CFG_DATASET_FORMAT, str, r->train.kind == DATASET_PNG ? "png" : "idx")

#ifdef GP_WITH_PROF
static void set_prof_config(const struct train_run *r)
{
    const gp_train_config *c = &r->cfg;
#    define SET_PROF_CONFIG(name, kind, value) gp_prof_config_##kind(name, value);
    TRAIN_SHARED_CONFIG(SET_PROF_CONFIG)
#    undef SET_PROF_CONFIG
    gp_prof_config_bool(GP_CFG_CKPT_ACTIVATIONS, c->checkpoint_activations);
    gp_prof_config_str(GP_CFG_ZERO_GRAD, r->zero_grad_none ? "none" : "zero");
    gp_prof_config_bool(GP_CFG_FUSED, c->fused);
    gp_prof_config_bool(GP_CFG_CHANNELS_LAST, c->channels_last);
    gp_prof_config_bool(GP_CFG_CUDA_GRAPHS, c->cuda_graphs);
    gp_prof_config_str(GP_CFG_DEVICE, r->use_cuda ? "cuda" : "cpu");
    gp_prof_config_int(GP_CFG_CPU_COUNT, sysconf(_SC_NPROCESSORS_ONLN));
    gp_prof_config_int(GP_CFG_PHYSICAL_CORES, gp_train_physical_cores());
}

void train_prof_start(struct train_run *r)
{
    char host[64] = "host", path[1024];
    gethostname(host, sizeof(host) - 1);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    long long ms = (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    snprintf(path, sizeof(path), "%s/%s_%ld.%lld%s", r->res->run_dir, host, (long)getpid(), ms,
             GP_TRACE_SUFFIX_GZ);
    set_prof_config(r);
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = path;
    o.gzip = GP_PROF_GZIP_ON;
    o.producer = "trainer";
    gp_error err;
    gp_error_clear(&err);
    if (gp_prof_init(&o, &err) != GP_OK)
        GP_LOG(GP_LOG_WARN, "profiler not started, no trace will be written: %s", err.msg);
    gp_prof_thread_name("training loop");
}

void train_prof_device(struct train_run *r)
{
    gp_prof_config_str(GP_CFG_DEVICE_NAME, r->res->device_name);
    gp_prof_config_int(GP_CFG_DEVICE_MEMORY, r->res->device_memory);
    if (r->res->activation_bytes > 0) /* and the saving --checkpoint-activations predicts */
        gp_prof_config_int(GP_CFG_ACTIVATION_BYTES, r->res->activation_bytes);
    /* the CUDA backend fuses no ReLU, and autocasts its activations to 2 bytes */
    int fuse = r->use_cuda ? 0 : MODEL_FUSE_CONV | (r->cfg.fused ? MODEL_FUSE_LINEAR : 0);
    if (!r->cfg.checkpoint_activations)
        gp_prof_config_int(GP_CFG_CKPT_SAVING,
                           (int64_t)(model_ckpt_saving(&r->spec, fuse) * (size_t)r->cfg.batch_size *
                                     (r->use_cuda && r->amp != AMP_OFF ? 2 : sizeof(float))));
    if (!r->use_cuda && r->amp == AMP_BF16) /* which GEMM runs the bf16 products */
        gp_prof_config_str(GP_CFG_BF16_GEMM, cpu_blas_has_sbgemm() ? "sbgemm" : "rounded-sgemm");
#    ifdef GP_HAVE_CUDA
    const char *model = r->use_cuda ? train_cuda_simulated() : NULL;
    if (model)
        gp_prof_config_str(GP_CFG_GPU_TIMING_MODEL, model);
#    endif
    int blas = r->use_cuda ? 0 : cpu_blas_limit_threads(0);
    if (blas > 0)
        gp_prof_config_int(GP_CFG_BLAS_THREADS, blas);
}

void train_prof_stop(struct train_run *r)
{
    if (!gp_prof_running())
        return;
    if (r->res->elementwise_passes > 0) /* what --fused saves shows in the trace */
        gp_prof_config_int(GP_CFG_ELEMENTWISE_PASSES, r->res->elementwise_passes);
    gp_error err;
    gp_error_clear(&err);
    if (gp_prof_shutdown(&err) != GP_OK)
        GP_LOG(GP_LOG_WARN, "the trace may be incomplete: %s", err.msg);
    const char *p = gp_prof_trace_path();
    if (p)
        snprintf(r->res->trace_path, sizeof(r->res->trace_path), "%s", p);
}
#else
void train_prof_start(struct train_run *r)
{
    (void)r;
    GP_LOG(GP_LOG_INFO, "built without libprof: no trace");
}

void train_prof_device(struct train_run *r)
{
    (void)r;
}

void train_prof_stop(struct train_run *r)
{
    (void)r;
}
#endif

void train_log_scalars(struct train_run *r, int epoch, const struct epoch_log *e)
{
#ifdef GP_TRAIN_TFEVENTS
    /* The single place training scalars go to TensorBoard: once per epoch. */
    if (!r->tb) {
        gp_error err;
        r->tb = tfevents_open(r->res->run_dir, &err);
        if (!r->tb) {
            GP_LOG(GP_LOG_WARN, "no TensorBoard scalars: %s", err.msg);
            return;
        }
    }
    long long step = epoch + 1;
    tfevents_add_scalar(r->tb, "train/loss", step, (float)e->loss);
    tfevents_add_scalar(r->tb, "train/accuracy", step, (float)e->train_acc);
    tfevents_add_scalar(r->tb, "test/accuracy", step, (float)e->test_acc);
    tfevents_add_scalar(r->tb, "train/samples_per_s", step, (float)e->samples_per_s);
    tfevents_flush(r->tb, NULL);
#else
    (void)r, (void)epoch, (void)e;
#endif
}

void train_close_scalars(struct train_run *r)
{
#ifdef GP_TRAIN_TFEVENTS
    gp_error err;
    if (r->tb && tfevents_close(r->tb, &err) != GP_OK)
        GP_LOG(GP_LOG_WARN, "TensorBoard scalars may be incomplete: %s", err.msg);
#endif
    r->tb = NULL;
}

/* JSON string with the few escapes paths and names can need. */
static void put_str(FILE *f, const char *s)
{
    gp_json_put_str(f, s); /* NULL: null */
}

/* `"key": value` of summary.json's config, after ", " but for the first (*sep says which). */
static void cfg_str(FILE *f, const char **sep, const char *key, const char *v)
{
    fprintf(f, "%s\"%s\": ", *sep, key);
    put_str(f, v);
    *sep = ", ";
}

static void cfg_int(FILE *f, const char **sep, const char *key, long long v)
{
    fprintf(f, "%s\"%s\": %lld", *sep, key, v);
    *sep = ", ";
}

static void cfg_bool(FILE *f, const char **sep, const char *key, int v)
{
    fprintf(f, "%s\"%s\": %s", *sep, key, v ? "true" : "false");
    *sep = ", ";
}

/* The shared list first (the names of the trace's header), then the summary's own options. */
static void put_config(FILE *f, const struct train_run *r)
{
    const gp_train_config *c = &r->cfg;
    const char *sep = "";
    fputs("  \"config\": {", f);
#define PUT_CONFIG(name, kind, value) cfg_##kind(f, &sep, name, value);
    TRAIN_SHARED_CONFIG(PUT_CONFIG)
#undef PUT_CONFIG
    fputs(",\n    ", f);
    sep = "";
    cfg_str(f, &sep, "optimizer", c->optimizer);
    fprintf(f,
            ", \"lr\": %g, \"epochs\": %d, \"max_steps\": %lld, \"accumulate\": %d, \"seed\": %u",
            c->lr, c->epochs, c->max_steps, c->accumulate, c->seed);
    cfg_bool(f, &sep, "augment", c->augment);
    fputs(",\n    ", f);
    sep = "";
    cfg_str(f, &sep, "data", r->train.source);
    fprintf(f, ", \"train_samples\": %d, \"test_samples\": %d},\n", r->train.n, r->test.n);
}

/* `"key": value` with printf format `fmt`, or null where the value is NaN or infinite (a
 * diverged run's loss): summary.json stays JSON whatever the run did. Then `after`. */
static void put_num(FILE *f, const char *key, const char *fmt, double v, const char *after)
{
    fprintf(f, "\"%s\": ", key);
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("null", f);
    fputs(after, f);
}

static void put_epoch(FILE *f, int i, const struct epoch_log *e)
{
    fprintf(f, "%s\n    {\"epoch\": %d, ", i ? "," : "", i + 1);
    put_num(f, "loss", "%.6f", e->loss, ", ");
    put_num(f, "train_accuracy", "%.4f", e->train_acc, ", ");
    put_num(f, "test_accuracy", "%.4f", e->test_acc, ", ");
    put_num(f, "samples_per_s", "%.1f", e->samples_per_s, ", ");
    put_num(f, "seconds", "%.3f", e->seconds, "}");
}

static void put_results(FILE *f, const struct train_run *r)
{
    const gp_train_result *s = r->res;
    fputs("  \"device\": ", f);
    put_str(f, r->use_cuda ? "cuda" : "cpu");
    fputs(", \"device_name\": ", f);
    put_str(f, s->device_name);
    fprintf(f, ",\n  \"epochs_done\": %d, \"steps\": %lld, \"samples\": %lld, ", s->epochs_done,
            s->steps, s->samples);
    put_num(f, "final_loss", "%.6f", s->final_loss, ", ");
    put_num(f, "test_accuracy", "%.4f", s->test_accuracy, ",\n  ");
    put_num(f, "samples_per_s", "%.1f", s->samples_per_s, ", ");
    fprintf(f, "\"train_seconds\": %.3f, \"wall_seconds\": %.3f, \"diverged_step\": ",
            r->train_seconds, s->wall_s);
    if (s->diverged_step)
        fprintf(f, "%lld", s->diverged_step);
    else
        fputs("null", f);
    fprintf(f, ", \"activation_bytes\": %lld", s->activation_bytes);
    if (s->elementwise_passes > 0) /* the CPU backend's, per optimizer step (--fused saves some) */
        fprintf(f, ", \"elementwise_passes\": %lld", s->elementwise_passes);
    fputs(",\n  \"trace\": ", f);
    put_str(f, s->trace_path[0] ? s->trace_path : NULL);
    fputs(",\n  \"per_epoch\": [", f);
    for (int i = 0; i < r->n_logged; i++)
        put_epoch(f, i, &r->epochs[i]);
    fputs("\n  ]\n", f);
}

gp_status train_write_summary(const struct train_run *r, gp_error *err)
{
    gp_train_result *res = r->res;
    snprintf(res->summary_path, sizeof(res->summary_path), "%s/summary.json", res->run_dir);
    FILE *f = fopen(res->summary_path, "w");
    if (!f)
        return gp_error_set(err, GP_EIO, res->summary_path, "cannot create: %s", strerror(errno));
    fputs("{\n", f);
    put_config(f, r);
    put_results(f, r);
    fputs("}\n", f);
    if (ferror(f) | fclose(f))
        return gp_error_set(err, GP_EIO, res->summary_path, "cannot write: %s", strerror(errno));
    return GP_OK;
}
