/* tests/lib/gp_test.h: a small assertion header. A failed assertion prints file:line and what
 * was compared, marks the test failed and returns from the test function. main() runs the
 * tests with GP_RUN and returns gp_test_summary(), which prints "N passed, N failed". */
#ifndef GP_TESTS_GP_TEST_H
#define GP_TESTS_GP_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int gp_test_failed_now;
static int gp_test_n_passed;
static int gp_test_n_failed;

#define GP_TEST_FAIL(...)                                                                          \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        gp_test_failed_now = 1;                                                                    \
        return;                                                                                    \
    } while (0)

#define GP_CHECK(cond)                                                                             \
    do {                                                                                           \
        if (!(cond))                                                                               \
            GP_TEST_FAIL("check failed: %s", #cond);                                               \
    } while (0)

#define GP_ASSERT_OK(expr)                                                                         \
    do {                                                                                           \
        int gp_t_rc = (int)(expr);                                                                 \
        if (gp_t_rc != 0)                                                                          \
            GP_TEST_FAIL("%s returned %d, expected 0 (GP_OK)", #expr, gp_t_rc);                    \
    } while (0)

#define GP_ASSERT_EQ_INT(a, b)                                                                     \
    do {                                                                                           \
        long long gp_t_a = (long long)(a), gp_t_b = (long long)(b);                                \
        if (gp_t_a != gp_t_b)                                                                      \
            GP_TEST_FAIL("%s == %s: %lld != %lld", #a, #b, gp_t_a, gp_t_b);                        \
    } while (0)

#define GP_ASSERT_NEAR(a, b, tol)                                                                  \
    do {                                                                                           \
        double gp_t_a = (double)(a), gp_t_b = (double)(b);                                         \
        if (!(fabs(gp_t_a - gp_t_b) <= (tol)))                                                     \
            GP_TEST_FAIL("%s ~= %s: %.9g vs %.9g (tol %g)", #a, #b, gp_t_a, gp_t_b,                \
                         (double)(tol));                                                           \
    } while (0)

#define GP_ASSERT_STR_EQ(a, b)                                                                     \
    do {                                                                                           \
        const char *gp_t_a = (a), *gp_t_b = (b);                                                   \
        if (!gp_t_a || !gp_t_b || strcmp(gp_t_a, gp_t_b) != 0)                                     \
            GP_TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, gp_t_a ? gp_t_a : "(null)",         \
                         gp_t_b ? gp_t_b : "(null)");                                              \
    } while (0)

#define GP_ASSERT_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *gp_t_h = (hay), *gp_t_n = (needle);                                            \
        if (!gp_t_h || !strstr(gp_t_h, gp_t_n))                                                    \
            GP_TEST_FAIL("%s does not contain \"%s\": \"%s\"", #hay, gp_t_n,                       \
                         gp_t_h ? gp_t_h : "(null)");                                              \
    } while (0)

#define GP_RUN(fn)                                                                                 \
    do {                                                                                           \
        gp_test_failed_now = 0;                                                                    \
        fn();                                                                                      \
        if (gp_test_failed_now) {                                                                  \
            gp_test_n_failed++;                                                                    \
            fprintf(stderr, "FAIL %s\n", #fn);                                                     \
        } else {                                                                                   \
            gp_test_n_passed++;                                                                    \
        }                                                                                          \
    } while (0)

/* Exit code for ctest: 0 when every test passed, 1 otherwise. */
static inline int gp_test_summary(void)
{
    printf("%d passed, %d failed\n", gp_test_n_passed, gp_test_n_failed);
    return gp_test_n_failed ? 1 : 0;
}

/* Tests that need hardware or data that is absent exit with this (ctest SKIP_RETURN_CODE). */
#define GP_TEST_SKIP 77

#endif
