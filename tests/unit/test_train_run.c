/* End-to-end CPU training on the small IDX fixture: it learns, it is reproducible whatever the
 * worker count, gradient accumulation matches a larger batch, checkpoints round-trip and reject
 * corruption, and misuse (--amp on the CPU, missing CUDA) gives clear errors. */
#include "checkpoint.h"
#include "gp/train.h"
#include "gp_test.h"
#include "gp_test_tmp.h"
#include "train_params.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_DIR GP_TEST_DATA_DIR "/idx"

static char tmp_root[256];

static void base(gp_train_config *c)
{
    gp_train_config_init(c);
    c->data_dir = IDX_DIR;
    c->out_dir = tmp_root;
    c->device = "cpu";
    c->batch_size = 16;
    c->profile = 0;
}

static void test_learns_and_summary(void)
{
    gp_train_config c;
    base(&c);
    c.epochs = 4;
    c.lr = 3e-3;
    gp_train_result r;
    gp_error err;
    GP_ASSERT_OK(gp_train_run(&c, &r, &err));
    GP_ASSERT_EQ_INT(r.epochs_done, 4);
    GP_ASSERT_EQ_INT(r.steps, 4 * 6);
    GP_ASSERT_EQ_INT(r.samples, 4 * 96);
    GP_CHECK(r.test_accuracy >= 0.9);
    GP_CHECK(r.final_loss < 1.0);
    struct stat st;
    GP_ASSERT_EQ_INT(stat(r.summary_path, &st), 0);
    FILE *f = fopen(r.summary_path, "r");
    char buf[4096] = {0};
    GP_CHECK(f && fread(buf, 1, sizeof(buf) - 1, f) > 0);
    fclose(f);
    GP_ASSERT_CONTAINS(buf, "\"test_accuracy\": ");
    GP_ASSERT_CONTAINS(buf, "\"model\": \"mlp\"");
    GP_ASSERT_CONTAINS(buf, "\"per_epoch\": [");
}

/* The last STEP report of the epoch, kept by on_progress. */
static void keep_last_step(const gp_train_progress *p, void *ud)
{
    if (p->event == GP_TRAIN_EV_STEP)
        *(gp_train_progress *)ud = *p;
}

/* Rates count the samples each batch held, over the training time alone (issue 18 item 9: a
 * short last batch was counted full, and the run's line divided by a time with evaluation). */
static void test_rates_count_real_samples(void)
{
    gp_train_config c;
    base(&c);
    c.batch_size = 7; /* 96 training samples: 13 full batches and one of 5 */
    gp_train_progress last = {0};
    c.on_progress = keep_last_step;
    c.progress_ud = &last;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_CHECK(r.samples % 7 != 0);
    GP_ASSERT_NEAR(last.samples_per_s * last.elapsed_s, (double)r.samples, 0.5);
    GP_CHECK(r.train_s > 0 && r.train_s < r.wall_s);
    GP_ASSERT_NEAR(r.samples_per_s, (double)r.samples / r.train_s, 1e-6 * r.samples_per_s);
}

static void test_reproducible_any_workers(void)
{
    gp_train_config c;
    base(&c);
    c.epochs = 2;
    c.augment = 1;
    gp_train_result a, b;
    GP_ASSERT_OK(gp_train_run(&c, &a, NULL));
    c.workers = 3;
    c.prefetch = 1;
    GP_ASSERT_OK(gp_train_run(&c, &b, NULL));
    GP_ASSERT_NEAR(a.final_loss, b.final_loss, 0.0);
    GP_ASSERT_NEAR(a.test_accuracy, b.test_accuracy, 0.0);
    c.seed = 7;
    GP_ASSERT_OK(gp_train_run(&c, &b, NULL));
    GP_CHECK(a.final_loss != b.final_loss);
}

static int load_params(const char *path, float *params, enum optim_kind k)
{
    return test_load_params(path, MODEL_MLP, k, params);
}

/* OpenBLAS's GEMMs leave a core to the loader: all cores but one, whatever --workers is (its
 * sums depend on its thread count, so the weights above stay the same for any --workers). */
static void test_gemm_threads_leave_a_core(void)
{
    gp_train_config c;
    base(&c);
    c.max_steps = 2;
    c.workers = 1;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char want[64];
    snprintf(want, sizeof want, "cpu (OpenBLAS, %ld thread%s)", cores > 1 ? cores - 1 : 1,
             cores > 2 ? "s" : "");
    GP_ASSERT_STR_EQ(r.device_name, want);
}

static void test_accumulate_matches_big_batch(void)
{
    char p1[300], p2[300];
    snprintf(p1, sizeof(p1), "%s/acc1.ckpt", tmp_root);
    snprintf(p2, sizeof(p2), "%s/acc2.ckpt", tmp_root);
    gp_train_config c;
    base(&c);
    c.optimizer = "sgd";
    c.lr = 0.05;
    c.checkpoint = p1;
    GP_ASSERT_OK(gp_train_run(&c, &(gp_train_result){0}, NULL));
    c.batch_size = 8;
    c.accumulate = 2;
    c.checkpoint = p2;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, 6);
    struct model_spec m;
    model_spec_init(&m, MODEL_MLP, 28, 28);
    float *a = calloc(m.n_params, sizeof(float)), *b = calloc(m.n_params, sizeof(float));
    GP_ASSERT_OK(load_params(p1, a, OPTIM_SGD));
    GP_ASSERT_OK(load_params(p2, b, OPTIM_SGD));
    double worst = 0;
    for (size_t i = 0; i < m.n_params; i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]));
    free(a), free(b);
    GP_CHECK(worst < 1e-5);
}

/* Train `steps` steps into the checkpoint tmp_root/name (ck, the path); c is left set to resume
 * from it. */
static void train_checkpoint(gp_train_config *c, char *ck, size_t cap, const char *name,
                             long long steps)
{
    snprintf(ck, cap, "%s/%s", tmp_root, name);
    base(c);
    c->max_steps = steps;
    c->checkpoint = ck;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, steps);
    c->checkpoint = NULL;
    c->resume = ck;
}

static void test_checkpoint_resume_and_corruption(void)
{
    char ck[300];
    gp_train_config c;
    gp_train_result r;
    train_checkpoint(&c, ck, sizeof(ck), "run.ckpt", 3);
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    c.model = "cnn"; /* the mlp's weights do not fit the cnn */
    gp_error err;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EPARSE);
    GP_ASSERT_STR_EQ(err.path, ck);
    GP_ASSERT_CONTAINS(err.msg, "checkpoint is for the mlp (109386 parameters); --model cnn has");
    c.model = "mlp";
    c.resume = tmp_root; /* a directory: said so, not "truncated checkpoint: 0 of 40 bytes" */
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "is a directory, not a checkpoint file");
    c.resume = ck;
    FILE *v = fopen(ck, "r+b"); /* version 2: the version found and the version read */
    fseek(v, 8, SEEK_SET);
    fputc(2, v);
    fclose(v);
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "checkpoint version 2, but this gprof-train reads version 1");
    v = fopen(ck, "r+b");
    fseek(v, 8, SEEK_SET);
    fputc(1, v);
    fclose(v);
    FILE *f = fopen(ck, "r+b"); /* flip one weight byte */
    fseek(f, 100, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "checksum");
    GP_ASSERT_EQ_INT(truncate(ck, 50), 0);
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "truncated");
}

/* A checkpoint whose step count is INT64_MAX, with a valid checksum, is refused by name: the next
 * optimizer step would overflow it (UBSan, issue 18 item 7). */
static void test_checkpoint_step_count_checked(void)
{
    char ck[300];
    gp_train_config c;
    gp_train_result r;
    train_checkpoint(&c, ck, sizeof(ck), "steps.ckpt", 1);
    FILE *f = fopen(ck, "r+b");
    GP_CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    unsigned char *buf = malloc((size_t)size);
    fseek(f, 0, SEEK_SET);
    GP_CHECK(fread(buf, 1, (size_t)size, f) == (size_t)size);
    int64_t t = INT64_MAX; /* the header: magic[8], 4 x uint32, uint64 n_params, int64 t */
    memcpy(buf + 32, &t, sizeof(t));
    uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)(size - 4));
    memcpy(buf + size - 4, &crc, sizeof(crc));
    fseek(f, 0, SEEK_SET);
    fwrite(buf, 1, (size_t)size, f);
    fclose(f);
    free(buf);
    gp_error err;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EPARSE);
    GP_ASSERT_STR_EQ(err.path, ck);
    GP_ASSERT_CONTAINS(err.msg, "step count 9223372036854775807 is out of range");
}

/* --checkpoint that cannot be saved is refused before the first step, not after the last. */
static void test_checkpoint_target_checked_first(void)
{
    char ck[300];
    gp_train_config c;
    gp_train_result r;
    gp_error err;
    base(&c);
    snprintf(ck, sizeof(ck), "%s/no-such-folder/run.ckpt", tmp_root);
    c.checkpoint = ck;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EIO);
    GP_ASSERT_STR_EQ(err.path, ck);
    GP_ASSERT_EQ_INT(r.steps, 0);
    c.checkpoint = tmp_root; /* a directory */
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "directory");
    GP_ASSERT_EQ_INT(r.steps, 0);
    snprintf(ck, sizeof(ck), "%s/fifo.ckpt", tmp_root); /* like a device: never replaced */
    GP_CHECK(mkfifo(ck, 0600) == 0);
    c.checkpoint = ck;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "not a regular file");
    GP_ASSERT_EQ_INT(r.steps, 0);
    char sym[300]; /* a symlink to it too */
    snprintf(sym, sizeof(sym), "%s/fifo-link.ckpt", tmp_root);
    GP_CHECK(symlink(ck, sym) == 0);
    c.checkpoint = sym;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "not a regular file");
}

static void save_small(const char *path)
{
    struct model_spec m;
    model_spec_init(&m, MODEL_MLP, 28, 28);
    float *p = calloc(m.n_params, sizeof(float)), *o = calloc(m.n_params * 2, sizeof(float));
    struct backend_state st = {p, o, 7};
    GP_ASSERT_OK(checkpoint_save(path, &m, OPTIM_ADAM, &st, NULL));
    free(p), free(o);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A 1,099-byte path once made the temporary name equal the checkpoint, which was then truncated
 * in place. The old file must never be written: a hard link to it keeps its bytes. A symlink is
 * followed and the file it names keeps mode 600. */
static void test_checkpoint_never_written_in_place(void)
{
    char dir[1200], ck[1200], keep[300], sym[1300];
    int n = snprintf(dir, sizeof(dir), "%s/", tmp_root);
    while (n < 1099 - 200) {
        n += snprintf(
                dir + n, sizeof(dir) - (size_t)n, "%.150s/",
                "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
        dir[n - 1] = 0;
        GP_CHECK(mkdir(dir, 0700) == 0);
        dir[n - 1] = '/';
    }
    memcpy(ck, dir, (size_t)n); /* then a file name that makes it exactly 1,099 bytes */
    memset(ck + n, 'c', (size_t)(1099 - n));
    ck[1099] = 0;
    GP_ASSERT_EQ_INT((long)strlen(ck), 1099);
    FILE *f = fopen(ck, "wb");
    fputs("old", f);
    fclose(f);
    snprintf(keep, sizeof(keep), "%s/keep", tmp_root);
    GP_CHECK(link(ck, keep) == 0);
    save_small(ck);
    GP_ASSERT_EQ_INT(file_size(keep), 3); /* the old inode untouched */
    GP_CHECK(file_size(ck) > 3);
    float *params = calloc(200000, sizeof(float));
    GP_ASSERT_OK(load_params(ck, params, OPTIM_ADAM));
    free(params);
    GP_CHECK(chmod(ck, 0600) == 0);
    snprintf(sym, sizeof(sym), "%s/link.ckpt", tmp_root);
    GP_CHECK(symlink(ck, sym) == 0);
    save_small(sym);
    struct stat st;
    GP_CHECK(lstat(sym, &st) == 0 && S_ISLNK(st.st_mode));
    GP_CHECK(stat(ck, &st) == 0 && (st.st_mode & 07777) == 0600);
}

static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* A run whose loss becomes NaN stops there, keeps the old checkpoint and still writes JSON
 * (null, never "nan"); a non-finite lr is refused. */
static void test_divergence(void)
{
    char ck[300], buf[8192];
    snprintf(ck, sizeof(ck), "%s/diverge.ckpt", tmp_root);
    save_small(ck);
    long before = file_size(ck);
    gp_train_config c;
    base(&c);
    c.optimizer = "sgd";
    c.lr = 1e30;
    c.epochs = 3;
    c.batch_size = 8;
    c.checkpoint = ck;
    gp_train_result r;
    gp_error err;
    GP_ASSERT_OK(gp_train_run(&c, &r, &err));
    GP_CHECK(r.diverged_step > 0 && r.diverged_step < 3 * 12);
    GP_ASSERT_EQ_INT(r.steps, r.diverged_step);
    GP_ASSERT_EQ_INT(file_size(ck), before);
    GP_ASSERT_OK(load_params(ck, (float[200000]){0}, OPTIM_ADAM)); /* still the old one */
    read_text(r.summary_path, buf, sizeof(buf));
    GP_ASSERT_CONTAINS(buf, "\"final_loss\": null");
    GP_CHECK(strstr(buf, "nan") == NULL && strstr(buf, "inf,") == NULL);
    base(&c);
    c.lr = INFINITY;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "lr");
    c.lr = NAN;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
}

static void test_cnn_steps(void)
{
    gp_train_config c;
    base(&c);
    c.model = "cnn";
    c.max_steps = 2;
    c.workers = 2;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, 2);
    GP_ASSERT_EQ_INT(r.epochs_done, 1);
    GP_CHECK(r.test_accuracy >= 0.0 && r.final_loss > 0.0);
}

/* A step limit over more than an epoch trains every step (epochs 0: as many as they need); with
 * epochs given, the first limit reached ends the run. The fixture is 6 batches of 16. */
static void test_steps_span_epochs(void)
{
    gp_train_config c;
    base(&c);
    c.epochs = 0;
    c.max_steps = 15;
    gp_train_result r;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, 15);
    GP_ASSERT_EQ_INT(r.epochs_done, 3);
    c.accumulate = 2; /* 3 optimizer steps an epoch */
    c.max_steps = 7;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, 7);
    GP_ASSERT_EQ_INT(r.epochs_done, 3);
    c.accumulate = 1;
    c.epochs = 2;
    c.max_steps = 15;
    GP_ASSERT_OK(gp_train_run(&c, &r, NULL));
    GP_ASSERT_EQ_INT(r.steps, 12);
    gp_error err;
    c.epochs = 0;
    c.max_steps = 0;
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "give a step limit too");
}

static void test_bad_options(void)
{
    gp_train_config c;
    base(&c);
    gp_error err;
    gp_train_result r;
    c.amp = "fp16";
    if (!gp_train_cuda_available()) {
        GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
        GP_ASSERT_CONTAINS(err.msg, "--amp fp16 needs a CUDA device");
        c.amp = "off";
        c.device = "cuda";
        GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EUNSUPPORTED);
    }
    base(&c);
    c.model = "resnet";
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "unknown model 'resnet'");
    base(&c);
    c.data_dir = "/nonexistent-gp";
    GP_ASSERT_EQ_INT(gp_train_run(&c, &r, &err), GP_EIO);
    GP_ASSERT_STR_EQ(err.path, "/nonexistent-gp");
}

int main(void)
{
    unsetenv("OPENBLAS_NUM_THREADS"); /* read when OpenBLAS is first loaded, by a run below */
    if (gp_test_tmpdir(tmp_root, sizeof(tmp_root), "test_train_run") != 0)
        return 2;
    GP_RUN(test_learns_and_summary);
    GP_RUN(test_reproducible_any_workers);
    GP_RUN(test_rates_count_real_samples);
    GP_RUN(test_gemm_threads_leave_a_core);
    GP_RUN(test_accumulate_matches_big_batch);
    GP_RUN(test_checkpoint_resume_and_corruption);
    GP_RUN(test_checkpoint_step_count_checked);
    GP_RUN(test_checkpoint_target_checked_first);
    GP_RUN(test_checkpoint_never_written_in_place);
    GP_RUN(test_divergence);
    GP_RUN(test_cnn_steps);
    GP_RUN(test_steps_span_epochs);
    GP_RUN(test_bad_options);
    gp_test_tmpdir_remove(tmp_root);
    return gp_test_summary();
}
