/* trainer/src/amp.h: mixed-precision modes and dynamic loss scaling with torch GradScaler's
 * semantics: init 2^16, x2 after 2000 consecutive good steps, x0.5 and the step skipped when a
 * gradient is inf/nan. The CUDA backend runs the same update in a one-thread kernel. */
#ifndef GP_TRAINER_AMP_H
#define GP_TRAINER_AMP_H

#include <stddef.h>

enum amp_mode { AMP_OFF, AMP_FP16, AMP_BF16 };

#define AMP_INIT_SCALE      65536.0f
#define AMP_GROWTH_FACTOR   2.0f
#define AMP_BACKOFF_FACTOR  0.5f
#define AMP_GROWTH_INTERVAL 2000

struct amp_scaler {
    float scale;        /* the loss is multiplied by this before backward */
    int growth_tracker; /* consecutive good steps since the last change */
    long long skipped;  /* steps skipped because of inf/nan */
};

/* Why `mode` cannot run on a GPU of compute capability major.minor, or NULL if it can: bf16
 * needs 8.0 (cuDNN's bf16 convolutions and cuBLAS's bf16 GEMMs; Turing, 7.5, has neither). */
static inline const char *amp_device_refusal(enum amp_mode mode, int major, int minor)
{
    if (mode == AMP_BF16 && major * 10 + minor < 80)
        return "--amp bf16 needs a GPU of compute capability 8.0 or newer (Ampere); use --amp "
               "fp16 or --amp off";
    return NULL;
}

/* GradScaler's defaults. */
void amp_scaler_init(struct amp_scaler *s);

/* After unscaling: `found_inf` says whether a gradient was inf/nan. Backs off (and counts a
 * skip) or grows the scale. @return 1 when the optimizer step should be applied, 0 to skip. */
int amp_scaler_update(struct amp_scaler *s, int found_inf);

#endif
