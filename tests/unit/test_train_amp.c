/* The loss scaler's state machine (GradScaler semantics): growth after 2000 good steps,
 * backoff and skip on inf/nan, tracker reset, no growth to infinity. */
#include "amp.h"
#include "gp_test.h"

#include <float.h>

/* The CUDA backend refuses --amp bf16 on compute capability 7.5 before training. */
static void test_bf16_needs_cc80(void)
{
    const char *why = amp_device_refusal(AMP_BF16, 7, 5);
    GP_CHECK(why != NULL);
    GP_ASSERT_CONTAINS(why, "compute capability 8.0");
    GP_CHECK(amp_device_refusal(AMP_BF16, 8, 0) == NULL);
    GP_CHECK(amp_device_refusal(AMP_BF16, 12, 0) == NULL);
    GP_CHECK(amp_device_refusal(AMP_FP16, 7, 5) == NULL);
    GP_CHECK(amp_device_refusal(AMP_OFF, 7, 5) == NULL);
}

static void test_defaults(void)
{
    struct amp_scaler s;
    amp_scaler_init(&s);
    GP_ASSERT_NEAR(s.scale, 65536.0, 0.0);
    GP_ASSERT_EQ_INT(s.growth_tracker, 0);
    GP_ASSERT_EQ_INT(s.skipped, 0);
}

static void test_growth(void)
{
    struct amp_scaler s;
    amp_scaler_init(&s);
    for (int i = 0; i < AMP_GROWTH_INTERVAL - 1; i++)
        GP_CHECK(amp_scaler_update(&s, 0));
    GP_ASSERT_NEAR(s.scale, 65536.0, 0.0);
    GP_ASSERT_EQ_INT(s.growth_tracker, AMP_GROWTH_INTERVAL - 1);
    GP_CHECK(amp_scaler_update(&s, 0));
    GP_ASSERT_NEAR(s.scale, 131072.0, 0.0);
    GP_ASSERT_EQ_INT(s.growth_tracker, 0);
}

static void test_backoff_and_skip(void)
{
    struct amp_scaler s;
    amp_scaler_init(&s);
    for (int i = 0; i < 1500; i++)
        amp_scaler_update(&s, 0);
    GP_CHECK(!amp_scaler_update(&s, 1)); /* the step is skipped */
    GP_ASSERT_NEAR(s.scale, 32768.0, 0.0);
    GP_ASSERT_EQ_INT(s.growth_tracker, 0); /* a bad step restarts the count */
    GP_ASSERT_EQ_INT(s.skipped, 1);
    GP_CHECK(!amp_scaler_update(&s, 1));
    GP_ASSERT_NEAR(s.scale, 16384.0, 0.0);
    GP_ASSERT_EQ_INT(s.skipped, 2);
    for (int i = 0; i < AMP_GROWTH_INTERVAL; i++)
        amp_scaler_update(&s, 0);
    GP_ASSERT_NEAR(s.scale, 32768.0, 0.0);
}

static void test_no_growth_to_inf(void)
{
    struct amp_scaler s;
    amp_scaler_init(&s);
    s.scale = FLT_MAX;
    for (int i = 0; i < AMP_GROWTH_INTERVAL; i++)
        amp_scaler_update(&s, 0);
    GP_ASSERT_NEAR(s.scale, FLT_MAX, 0.0);
    GP_ASSERT_EQ_INT(s.growth_tracker, 0);
}

int main(void)
{
    GP_RUN(test_bf16_needs_cc80);
    GP_RUN(test_defaults);
    GP_RUN(test_growth);
    GP_RUN(test_backoff_and_skip);
    GP_RUN(test_no_growth_to_inf);
    return gp_test_summary();
}
