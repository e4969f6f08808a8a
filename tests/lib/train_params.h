/* tests/lib/train_params.h: the weights a trainer test saved with --checkpoint, read back. */
#ifndef GP_TESTS_TRAIN_PARAMS_H
#define GP_TESTS_TRAIN_PARAMS_H

#include "backend.h"
#include "checkpoint.h"

#include <stdlib.h>

/* Read the parameters of a `kind` model (28x28 images) trained with optimizer `k` into params. */
static inline gp_status test_load_params(const char *path, enum model_kind kind, enum optim_kind k,
                                         float *params)
{
    struct model_spec m;
    model_spec_init(&m, kind, 28, 28);
    float *opt = calloc(m.n_params * 2, sizeof(float));
    struct backend_state st = {params, opt, 0};
    int loaded;
    gp_status rc = checkpoint_load(path, &m, k, &st, &loaded, NULL);
    free(opt);
    return rc;
}

#endif
