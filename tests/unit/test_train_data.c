/* The IDX reader and the PNG image folder on good and corrupt files: every failure is
 * GP_EPARSE (or GP_EIO) with the file named, and PNG prepare -> read round-trips the pixels. */
#include "dataset.h"
#include "gp/train.h"
#include "gp_test.h"
#include "gp_test_tmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define IDX_DIR GP_TEST_DATA_DIR "/idx"

static char tmp_root[256];

static void test_good_pair(void)
{
    struct dataset tr, te;
    GP_ASSERT_OK(dataset_open_dir(&tr, &te, IDX_DIR, NULL));
    GP_ASSERT_EQ_INT(tr.n, 96);
    GP_ASSERT_EQ_INT(te.n, 40);
    GP_ASSERT_EQ_INT(tr.rows, 28);
    GP_ASSERT_EQ_INT(tr.cols, 28);
    uint8_t px[784];
    int label;
    GP_ASSERT_OK(dataset_get(&tr, 5, px, &label, NULL));
    GP_CHECK(label >= 0 && label < 10);
    /* the fixture's class k is a bright bar at row 2k+3 */
    GP_CHECK(px[(2 * label + 3) * 28 + 10] >= 200);
    dataset_release(&tr);
    dataset_release(&te);
}

/* Open images/labels and expect `want` with the message mentioning `needle` and `bad` named. */
static int expect_fail(const char *img, const char *lab, gp_status want, const char *needle,
                       const char *bad)
{
    struct dataset ds;
    gp_error err;
    gp_error_clear(&err);
    gp_status rc = dataset_open_idx(&ds, img, lab, &err);
    if (rc != want || !strstr(err.msg, needle) || strcmp(err.path, bad) != 0) {
        fprintf(stderr, "got %d '%s' on '%s'\n", rc, err.msg, err.path);
        return 1;
    }
    return 0;
}

static void test_corrupt_idx(void)
{
    const char *img = IDX_DIR "/t10k-images-idx3-ubyte.gz";
    const char *lab = IDX_DIR "/t10k-labels-idx1-ubyte.gz";
    const char *bad_magic = IDX_DIR "/bad-magic-idx3-ubyte.gz";
    const char *trunc = IDX_DIR "/truncated-idx3-ubyte.gz";
    const char *short_lab = IDX_DIR "/short-labels-idx1-ubyte.gz";
    const char *bad_lab = IDX_DIR "/bad-label-idx1-ubyte.gz";
    const char *trailing = IDX_DIR "/trailing-idx1-ubyte.gz";
    GP_ASSERT_EQ_INT(expect_fail(bad_magic, lab, GP_EPARSE, "bad magic number", bad_magic), 0);
    GP_ASSERT_EQ_INT(expect_fail(trunc, lab, GP_EPARSE, "", trunc), 0);
    GP_ASSERT_EQ_INT(expect_fail(img, short_lab, GP_EPARSE, "39 labels", short_lab), 0);
    GP_ASSERT_EQ_INT(expect_fail(img, bad_lab, GP_EPARSE, "label 12 of sample 7", bad_lab), 0);
    GP_ASSERT_EQ_INT(expect_fail(img, trailing, GP_EPARSE, "unexpected data", trailing), 0);
    GP_ASSERT_EQ_INT(expect_fail(lab, lab, GP_EPARSE, "bad magic number", lab), 0);
    GP_ASSERT_EQ_INT(
            expect_fail("/nonexistent/x.gz", lab, GP_EIO, "cannot open", "/nonexistent/x.gz"), 0);
}

static void test_plain_truncated_header(void)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/short.idx", tmp_root);
    FILE *f = fopen(path, "wb");
    GP_CHECK(f != NULL);
    fwrite("\0\0\x08\x03\0\0", 1, 6, f); /* plain (not gzip), cut inside the dimensions */
    fclose(f);
    uint8_t *data;
    uint32_t dims[3];
    gp_error err;
    GP_ASSERT_EQ_INT(idx_read(path, 3, &data, dims, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "truncated");
    GP_ASSERT_EQ_INT(err.offset, 6);
    GP_ASSERT_STR_EQ(err.path, path);
}

static void test_missing_folder_files(void)
{
    struct dataset tr, te;
    gp_error err;
    GP_ASSERT_EQ_INT(dataset_open_dir(&tr, &te, tmp_root, &err), GP_EIO);
    GP_ASSERT_CONTAINS(err.msg, "train-images-idx3-ubyte.gz");
    GP_ASSERT_EQ_INT(dataset_open_dir(&tr, &te, "/nonexistent-gp", &err), GP_EIO);
}

static void test_png_prepare_roundtrip(void)
{
    char out[300], bad[400];
    snprintf(out, sizeof(out), "%s/png", tmp_root);
    long long n = 0;
    GP_ASSERT_OK(gp_train_prepare_png(IDX_DIR, out, &n, NULL));
    GP_ASSERT_EQ_INT(n, 96 + 40);
    struct dataset itr, ite, ptr, pte;
    GP_ASSERT_OK(dataset_open_dir(&itr, &ite, IDX_DIR, NULL));
    GP_ASSERT_OK(dataset_open_dir(&ptr, &pte, out, NULL));
    GP_ASSERT_EQ_INT(ptr.kind, DATASET_PNG);
    GP_ASSERT_EQ_INT(ptr.n, 96);
    GP_ASSERT_EQ_INT(pte.n, 40);
    /* sample i of the folder is <label>/<index>.png: find it by name and compare pixels */
    uint8_t a[784], b[784];
    int la, lb, idx;
    const char *name = strrchr(pte.paths[3], '/') + 1;
    GP_CHECK(sscanf(name, "%d.png", &idx) == 1);
    GP_ASSERT_OK(dataset_get(&pte, 3, a, &la, NULL));
    GP_ASSERT_OK(dataset_get(&ite, idx, b, &lb, NULL));
    GP_ASSERT_EQ_INT(la, lb);
    GP_CHECK(memcmp(a, b, 784) == 0);
    /* a corrupt PNG fails with its name */
    snprintf(bad, sizeof(bad), "%s", pte.paths[0]);
    FILE *f = fopen(bad, "wb");
    fputs("not a png", f);
    fclose(f);
    gp_error err;
    GP_ASSERT_EQ_INT(dataset_get(&pte, 0, a, &la, &err), GP_EPARSE);
    GP_ASSERT_STR_EQ(err.path, bad);
    /* an empty file says so (libpng said "Read Error") */
    f = fopen(bad, "wb");
    fclose(f);
    GP_ASSERT_EQ_INT(dataset_get(&pte, 0, a, &la, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "empty file: 0 bytes, not a PNG image");
    /* a PNG of the wrong size too */
    GP_ASSERT_OK(png_write_gray(bad, a, 4, 7, NULL));
    GP_ASSERT_EQ_INT(dataset_get(&pte, 0, a, &la, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "7x4, expected 28x28");
    dataset_release(&itr), dataset_release(&ite), dataset_release(&ptr), dataset_release(&pte);
}

static void test_empty_png_folder(void)
{
    struct dataset ds;
    gp_error err;
    GP_ASSERT_EQ_INT(dataset_open_png(&ds, tmp_root, &err), GP_EPARSE);
    GP_ASSERT_CONTAINS(err.msg, "no PNG files");
}

int main(void)
{
    if (gp_test_tmpdir(tmp_root, sizeof(tmp_root), "test_train_data") != 0)
        return 2;
    GP_RUN(test_good_pair);
    GP_RUN(test_corrupt_idx);
    GP_RUN(test_plain_truncated_header);
    GP_RUN(test_missing_folder_files);
    GP_RUN(test_empty_png_folder);
    GP_RUN(test_png_prepare_roundtrip);
    gp_test_tmpdir_remove(tmp_root);
    return gp_test_summary();
}
