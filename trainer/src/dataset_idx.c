/* IDX (MNIST format) reader: gz or plain files through zlib's gzread, validated field by field so
 * a corrupt or truncated file gets an error naming the file and the byte offset. */
#include "dataset.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define IDX_TYPE_UBYTE 0x08
#define IDX_MAX_ITEMS  (1u << 26)

/* Read exactly `len` bytes at uncompressed offset `off`; a short read is a truncated file. */
static gp_status read_exact(gzFile f, const char *path, void *buf, size_t len, long long off,
                            const char *what, gp_error *err)
{
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int n = gzread(f, (char *)buf + got, chunk);
        if (n < 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            gp_error_set(err, GP_EPARSE, path, "corrupt gzip data while reading %s: %s", what, msg);
            gp_error_at(err, off + (long long)got, 0, 0);
            return GP_EPARSE;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if (got == len)
        return GP_OK;
    gp_error_set(err, GP_EPARSE, path, "truncated file: %s needs %zu bytes, only %zu left", what,
                 len, got);
    gp_error_at(err, off + (long long)got, 0, 0);
    return GP_EPARSE;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Check the magic number and read the dimensions; returns the payload size in `*bytes`. */
static gp_status read_header(gzFile f, const char *path, int want_dims, uint32_t dims[3],
                             size_t *bytes, gp_error *err)
{
    uint8_t hdr[16];
    GP_TRY(read_exact(f, path, hdr, 4, 0, "the magic number", err));
    if (hdr[0] != 0 || hdr[1] != 0 || hdr[2] != IDX_TYPE_UBYTE || hdr[3] != want_dims) {
        gp_error_set(err, GP_EPARSE, path,
                     "bad magic number 0x%02x%02x%02x%02x (expected 0x000008%02x: unsigned bytes, "
                     "%d dimension%s)",
                     hdr[0], hdr[1], hdr[2], hdr[3], want_dims, want_dims,
                     want_dims > 1 ? "s" : "");
        gp_error_at(err, 0, 0, 0);
        return GP_EPARSE;
    }
    GP_TRY(read_exact(f, path, hdr + 4, 4u * (unsigned)want_dims, 4, "the dimensions", err));
    size_t total = 1;
    for (int d = 0; d < want_dims; d++) {
        dims[d] = be32(hdr + 4 + 4 * d);
        uint32_t cap = d == 0 ? IDX_MAX_ITEMS : DATASET_MAX_SIDE;
        if (dims[d] == 0 || dims[d] > cap) {
            gp_error_set(err, GP_EPARSE, path, "dimension %d is %u (expected 1..%u)", d + 1,
                         dims[d], cap);
            gp_error_at(err, 4 + 4 * d, 0, 0);
            return GP_EPARSE;
        }
        total *= dims[d];
    }
    *bytes = total;
    return GP_OK;
}

gp_status idx_read(const char *path, int want_dims, uint8_t **data, uint32_t dims[3], gp_error *err)
{
    *data = NULL;
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return gp_error_set(err, GP_EIO, path, "cannot open: %s",
                            errno ? strerror(errno) : "out of memory");
    size_t bytes = 0;
    long long off = 4 + 4 * want_dims;
    gp_status rc = read_header(f, path, want_dims, dims, &bytes, err);
    uint8_t *buf = rc == GP_OK ? malloc(bytes) : NULL;
    if (rc == GP_OK && !buf)
        rc = gp_error_set(err, GP_ENOMEM, path, "cannot allocate %zu bytes", bytes);
    if (rc == GP_OK)
        rc = read_exact(f, path, buf, bytes, off, want_dims == 3 ? "the pixels" : "the labels",
                        err);
    if (rc == GP_OK) {
        char extra;
        int n = gzread(f, &extra, 1);
        if (n != 0) {
            rc = gp_error_set(err, GP_EPARSE, path, "%s after the %u items the header announces",
                              n > 0 ? "unexpected data" : "corrupt gzip data", dims[0]);
            gp_error_at(err, off + (long long)bytes, 0, 0);
        }
    }
    gzclose(f);
    if (rc != GP_OK) {
        free(buf);
        return rc;
    }
    *data = buf;
    return GP_OK;
}

static gp_status check_labels(const uint8_t *labels, uint32_t n, const char *path, gp_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        if (labels[i] >= DATASET_CLASSES) {
            gp_error_set(err, GP_EPARSE, path, "label %u of sample %u is out of range (0..%d)",
                         labels[i], i, DATASET_CLASSES - 1);
            gp_error_at(err, 8 + (long long)i, 0, 0);
            return GP_EPARSE;
        }
    }
    return GP_OK;
}

gp_status dataset_open_idx(struct dataset *ds, const char *images_path, const char *labels_path,
                           gp_error *err)
{
    memset(ds, 0, sizeof(*ds));
    uint32_t idims[3] = {0}, ldims[3] = {0};
    GP_TRY(idx_read(images_path, 3, &ds->images, idims, err));
    gp_status rc = idx_read(labels_path, 1, &ds->labels, ldims, err);
    if (rc == GP_OK && ldims[0] != idims[0]) {
        rc = gp_error_set(err, GP_EPARSE, labels_path, "%u labels but '%s' holds %u images",
                          ldims[0], images_path, idims[0]);
        gp_error_at(err, 4, 0, 0);
    }
    if (rc == GP_OK)
        rc = check_labels(ds->labels, ldims[0], labels_path, err);
    if (rc != GP_OK) {
        dataset_release(ds);
        return rc;
    }
    ds->kind = DATASET_IDX;
    ds->n = (int)idims[0];
    ds->rows = (int)idims[1];
    ds->cols = (int)idims[2];
    snprintf(ds->source, sizeof(ds->source), "%s", images_path);
    return GP_OK;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/<stem> with ".gz" when that exists, else without; NULL-safe message on neither. */
static gp_status find_idx(char *out, size_t cap, const char *dir, const char *stem, gp_error *err)
{
    snprintf(out, cap, "%s/%s.gz", dir, stem);
    if (file_exists(out))
        return GP_OK;
    snprintf(out, cap, "%s/%s", dir, stem);
    if (file_exists(out))
        return GP_OK;
    return gp_error_set(err, GP_EIO, dir, "no '%s.gz' (or '%s') in the data folder", stem, stem);
}

static gp_status open_idx_pair(struct dataset *ds, const char *dir, const char *prefix,
                               gp_error *err)
{
    char img[PATH_MAX], lab[PATH_MAX], stem[64];
    snprintf(stem, sizeof(stem), "%s-images-idx3-ubyte", prefix);
    GP_TRY(find_idx(img, sizeof(img), dir, stem, err));
    snprintf(stem, sizeof(stem), "%s-labels-idx1-ubyte", prefix);
    GP_TRY(find_idx(lab, sizeof(lab), dir, stem, err));
    return dataset_open_idx(ds, img, lab, err);
}

gp_status dataset_open_dir(struct dataset *train, struct dataset *test, const char *data_dir,
                           gp_error *err)
{
    char sub[PATH_MAX];
    struct stat st;
    memset(train, 0, sizeof(*train));
    memset(test, 0, sizeof(*test));
    errno = 0;
    if (stat(data_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_error_set(err, GP_EIO, data_dir, "not a folder: %s",
                            errno ? strerror(errno) : "not a directory");
    snprintf(sub, sizeof(sub), "%s/train", data_dir);
    int png = stat(sub, &st) == 0 && S_ISDIR(st.st_mode);
    gp_status rc =
            png ? dataset_open_png(train, sub, err) : open_idx_pair(train, data_dir, "train", err);
    if (rc != GP_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s/test", data_dir);
    rc = png ? dataset_open_png(test, sub, err) : open_idx_pair(test, data_dir, "t10k", err);
    if (rc == GP_OK && (test->rows != train->rows || test->cols != train->cols))
        rc = gp_error_set(err, GP_EPARSE, test->source, "test images are %dx%d, training %dx%d",
                          test->rows, test->cols, train->rows, train->cols);
    if (rc != GP_OK) {
        dataset_release(train);
        dataset_release(test);
    }
    return rc;
}

gp_status dataset_get(const struct dataset *ds, int i, uint8_t *pixels, int *label, gp_error *err)
{
    size_t px = (size_t)ds->rows * (size_t)ds->cols;
    *label = ds->labels[i];
    if (ds->kind == DATASET_PNG)
        return png_read_gray(ds->paths[i], pixels, ds->rows, ds->cols, err);
    memcpy(pixels, ds->images + (size_t)i * px, px);
    return GP_OK;
}

void dataset_release(struct dataset *ds)
{
    if (ds->paths)
        for (int i = 0; i < ds->n; i++)
            free(ds->paths[i]);
    free(ds->paths);
    free(ds->images);
    free(ds->labels);
    memset(ds, 0, sizeof(*ds));
}
