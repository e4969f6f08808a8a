/* PNG image-folder dataset: <dir>/<label>/<name>.png, listed once and decoded per sample with
 * libpng's simplified API (grayscale 8-bit), plus the writer `gprof-train prepare` uses. */
#include "dataset.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

gp_status png_write_gray(const char *path, const uint8_t *pixels, int rows, int cols, gp_error *err)
{
    png_image img;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)cols;
    img.height = (png_uint_32)rows;
    img.format = PNG_FORMAT_GRAY;
    if (!png_image_write_to_file(&img, path, 0, pixels, cols, NULL))
        return gp_error_set(err, GP_EIO, path, "cannot write PNG: %s", img.message);
    return GP_OK;
}

/* Open `path`'s header; on success the caller must png_image_free(img). */
static gp_status png_begin(png_image *img, const char *path, gp_error *err)
{
    memset(img, 0, sizeof(*img));
    img->version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(img, path)) {
        struct stat st; /* libpng says "Read Error" for a file that is empty or cut short */
        gp_status rc =
                stat(path, &st) == 0 && st.st_size < 8
                        ? gp_error_set(err, GP_EPARSE, path, "%s: %lld bytes, not a PNG image",
                                       st.st_size ? "truncated file" : "empty file",
                                       (long long)st.st_size)
                        : gp_error_set(err, GP_EPARSE, path, "cannot decode PNG: %s", img->message);
        png_image_free(img);
        return rc;
    }
    return GP_OK;
}

gp_status png_read_gray(const char *path, uint8_t *pixels, int rows, int cols, gp_error *err)
{
    png_image img;
    GP_TRY(png_begin(&img, path, err));
    if ((int)img.width != cols || (int)img.height != rows) {
        png_image_free(&img);
        return gp_error_set(err, GP_EPARSE, path, "image is %ux%u, expected %dx%d", img.width,
                            img.height, cols, rows);
    }
    img.format = PNG_FORMAT_GRAY;
    if (!png_image_finish_read(&img, NULL, pixels, cols, NULL)) {
        gp_status rc = gp_error_set(err, GP_EPARSE, path, "cannot decode PNG: %s", img.message);
        png_image_free(&img);
        return rc;
    }
    return GP_OK;
}

static int is_png_name(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 4 && strcmp(e->d_name + n - 4, ".png") == 0;
}

/* Append dir/<label>/ *.png (sorted by name) to ds->paths and ds->labels. */
static gp_status list_label(struct dataset *ds, int *cap, const char *dir, int label, gp_error *err)
{
    char sub[PATH_MAX];
    snprintf(sub, sizeof(sub), "%s/%d", dir, label);
    struct dirent **names = NULL;
    int k = scandir(sub, &names, is_png_name, alphasort);
    if (k < 0)
        return errno == ENOENT ? GP_OK
                               : gp_error_set(err, GP_EIO, sub, "cannot list: %s", strerror(errno));
    gp_status rc = GP_OK;
    for (int j = 0; j < k; j++) {
        if (rc == GP_OK && ds->n == *cap) {
            int ncap = *cap ? *cap * 2 : 1024;
            char **p = realloc(ds->paths, (size_t)ncap * sizeof(*p));
            uint8_t *l = p ? realloc(ds->labels, (size_t)ncap) : NULL;
            if (p)
                ds->paths = p;
            if (l)
                ds->labels = l;
            if (!p || !l)
                rc = gp_error_set(err, GP_ENOMEM, sub, "out of memory listing files");
            else
                *cap = ncap;
        }
        size_t len = strlen(sub) + strlen(names[j]->d_name) + 2;
        char *path = rc == GP_OK ? malloc(len) : NULL;
        if (rc == GP_OK && !path)
            rc = gp_error_set(err, GP_ENOMEM, sub, "out of memory listing files");
        if (path) {
            snprintf(path, len, "%s/%s", sub, names[j]->d_name);
            ds->paths[ds->n] = path;
            ds->labels[ds->n++] = (uint8_t)label;
        }
        free(names[j]);
    }
    free(names);
    return rc;
}

gp_status dataset_open_png(struct dataset *ds, const char *dir, gp_error *err)
{
    memset(ds, 0, sizeof(*ds));
    ds->kind = DATASET_PNG;
    snprintf(ds->source, sizeof(ds->source), "%s", dir);
    int cap = 0;
    gp_status rc = GP_OK;
    for (int label = 0; label < DATASET_CLASSES && rc == GP_OK; label++)
        rc = list_label(ds, &cap, dir, label, err);
    if (rc == GP_OK && ds->n == 0)
        rc = gp_error_set(err, GP_EPARSE, dir, "no PNG files in <label>/ subfolders 0..%d",
                          DATASET_CLASSES - 1);
    png_image img;
    if (rc == GP_OK && (rc = png_begin(&img, ds->paths[0], err)) == GP_OK) {
        ds->rows = (int)img.height;
        ds->cols = (int)img.width;
        png_image_free(&img);
        if (ds->rows > DATASET_MAX_SIDE || ds->cols > DATASET_MAX_SIDE)
            rc = gp_error_set(err, GP_EPARSE, ds->paths[0], "image is %dx%d, larger than %d",
                              ds->cols, ds->rows, DATASET_MAX_SIDE);
    }
    if (rc != GP_OK)
        dataset_release(ds);
    return rc;
}
