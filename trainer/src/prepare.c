/* gprof-train prepare: the IDX dataset written as an image folder of PNG files,
 * <out>/{train,test}/<label>/<index>.png, for the per-sample decoding pipeline. */
#include "dataset.h"
#include "gp/train.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static gp_status make_dir(const char *path, gp_error *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return gp_error_set(err, GP_EIO, path, "cannot create folder: %s", strerror(errno));
    return GP_OK;
}

static gp_status write_split(const struct dataset *ds, const char *out, const char *split,
                             long long *written, gp_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", out, split);
    GP_TRY(make_dir(path, err));
    for (int c = 0; c < DATASET_CLASSES; c++) {
        snprintf(path, sizeof(path), "%s/%s/%d", out, split, c);
        GP_TRY(make_dir(path, err));
    }
    size_t area = (size_t)ds->rows * (size_t)ds->cols;
    for (int i = 0; i < ds->n; i++) {
        snprintf(path, sizeof(path), "%s/%s/%d/%05d.png", out, split, ds->labels[i], i);
        GP_TRY(png_write_gray(path, ds->images + (size_t)i * area, ds->rows, ds->cols, err));
        (*written)++;
    }
    return GP_OK;
}

gp_status gp_train_prepare_png(const char *data_dir, const char *out_dir, long long *written,
                               gp_error *err)
{
    struct dataset train, test;
    long long n = 0;
    const char *dir = data_dir ? data_dir : GP_TRAIN_DEFAULT_DATA;
    GP_TRY(dataset_open_dir(&train, &test, dir, err));
    gp_status rc = GP_OK;
    if (train.kind != DATASET_IDX)
        rc = gp_error_set(err, GP_EINVAL, dir, "already an image folder; prepare needs IDX files");
    if (rc == GP_OK)
        rc = make_dir(out_dir, err);
    if (rc == GP_OK)
        rc = write_split(&train, out_dir, "train", &n, err);
    if (rc == GP_OK)
        rc = write_split(&test, out_dir, "test", &n, err);
    dataset_release(&train);
    dataset_release(&test);
    if (written)
        *written = n;
    return rc;
}
