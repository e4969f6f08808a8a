/* Dynamic loss scaling, host side: the reference for the device kernel and its tests. */
#include "amp.h"

#include <math.h>

void amp_scaler_init(struct amp_scaler *s)
{
    s->scale = AMP_INIT_SCALE;
    s->growth_tracker = 0;
    s->skipped = 0;
}

int amp_scaler_update(struct amp_scaler *s, int found_inf)
{
    if (found_inf) {
        s->scale *= AMP_BACKOFF_FACTOR;
        s->growth_tracker = 0;
        s->skipped++;
        return 0;
    }
    if (++s->growth_tracker == AMP_GROWTH_INTERVAL) {
        /* torch's _amp_update_scale_ only grows to a finite value */
        if (isfinite(s->scale * AMP_GROWTH_FACTOR))
            s->scale *= AMP_GROWTH_FACTOR;
        s->growth_tracker = 0;
    }
    return 1;
}
