/* trainer/src/dataset.h: the training and test sets. IDX (MNIST format, .gz or plain) is read
 * into memory with zlib and validated; a PNG image folder is listed up front and decoded per
 * sample with libpng (the CPU-heavy pipeline). */
#ifndef GP_TRAINER_DATASET_H
#define GP_TRAINER_DATASET_H

#include "gp/status.h"

#include <stdint.h>

#define DATASET_CLASSES  10
#define DATASET_MAX_SIDE 1024

enum dataset_kind { DATASET_IDX, DATASET_PNG };

struct dataset {
    enum dataset_kind kind;
    int n;            /* samples */
    int rows, cols;   /* image size */
    uint8_t *images;  /* IDX: n * rows * cols pixels, row-major */
    uint8_t *labels;  /* n labels in [0, DATASET_CLASSES) */
    char **paths;     /* PNG: n file paths (sorted by label, then name) */
    char source[512]; /* images file or folder, for messages */
};

/* Read an IDX pair (images idx3, labels idx1) and check magic numbers, dimensions, counts,
 * label range and length. On failure `err` names the file and the byte offset. */
gp_status dataset_open_idx(struct dataset *ds, const char *images_path, const char *labels_path,
                           gp_error *err);

/* List `dir`/<label>/ *.png (labels 0..9). Images are decoded by dataset_get; the size is taken
 * from the first file. */
gp_status dataset_open_png(struct dataset *ds, const char *dir, gp_error *err);

/* Open the training and test sets in `data_dir`: {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
 * or an image folder with train/ and test/. */
gp_status dataset_open_dir(struct dataset *train, struct dataset *test, const char *data_dir,
                           gp_error *err);

/* Copy sample `i`'s pixels (rows * cols bytes) into `pixels` and its label into `*label`.
 * Thread-safe. A PNG that fails to decode or has the wrong size gives GP_EPARSE naming it. */
gp_status dataset_get(const struct dataset *ds, int i, uint8_t *pixels, int *label, gp_error *err);

/* Free what dataset_open_* allocated; safe on a zeroed or released dataset. */
void dataset_release(struct dataset *ds);

/* Read one IDX file: `want_dims` 3 (images) or 1 (labels). `*data` gets the payload (caller
 * frees), dims[0..want_dims-1] the dimensions. Exposed for tests. */
gp_status idx_read(const char *path, int want_dims, uint8_t **data, uint32_t dims[3],
                   gp_error *err);

/* Write a grayscale 8-bit PNG. */
gp_status png_write_gray(const char *path, const uint8_t *pixels, int rows, int cols,
                         gp_error *err);

/* Decode a grayscale PNG of exactly rows x cols into `pixels`. */
gp_status png_read_gray(const char *path, uint8_t *pixels, int rows, int cols, gp_error *err);

#endif
