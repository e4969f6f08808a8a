/* The debug-build error trail (gp/status.h): gp_error_set notes where a failure was set and each
 * GP_TRY that forwards it notes itself, so gp_error_trail reads origin < forwarder < forwarder; a
 * new failure starts a new trail; GP_FAIL_IF is an origin; GP_MORE and GP_DECLINED, which are no
 * failures, are forwarded without a note. Built with status.c and without NDEBUG
 * (tests/CMakeLists.txt), whatever the build type. */
#include "gp/status.h"
#include "gp_test.h"

#include <stdio.h>
#include <string.h>

static int origin_line, middle_line, outer_line, fail_if_line;

static gp_status origin(gp_error *err)
{
    origin_line = __LINE__ + 1;
    return gp_error_set(err, GP_EPARSE, "x.json", "bad");
}

static gp_status middle(gp_error *err)
{
    middle_line = __LINE__ + 1;
    GP_TRY(origin(err));
    return GP_OK;
}

static gp_status outer(gp_error *err)
{
    outer_line = __LINE__ + 1;
    GP_TRY(middle(err));
    return GP_OK;
}

static gp_status fails_if(int n, gp_error *err)
{
    fail_if_line = __LINE__ + 1;
    GP_FAIL_IF(n < 0, GP_EINVAL, err, "negative: %d", n);
    return GP_OK;
}

static gp_status more(void)
{
    return GP_MORE;
}

static gp_status forwards_more(void)
{
    GP_TRY(more());
    return GP_OK;
}

/* A lexer's GP_MORE goes up a few calls on every refill: it is forwarded and leaves no note, so
 * the trail of a later failure set without gp_error_set holds only its own forwarders. */
static void test_no_note_for_more(void)
{
    char got[192];
    GP_ASSERT_STR_EQ(gp_error_trail(got, sizeof got), ""); /* nothing from the last test */
    GP_ASSERT_EQ_INT(forwards_more(), GP_MORE);
    GP_ASSERT_STR_EQ(gp_error_trail(got, sizeof got), "");
    GP_ASSERT_STR_EQ(gp_strerror(GP_MORE), "more input needed");
    GP_ASSERT_STR_EQ(gp_strerror(GP_DECLINED), "declined");
}

static void test_trail(void)
{
    gp_error err;
    char want[192], got[192];
    GP_ASSERT_EQ_INT(outer(&err), GP_EPARSE);
    snprintf(want, sizeof want,
             "test_error_trail.c:%d < test_error_trail.c:%d < test_error_trail.c:%d", origin_line,
             middle_line, outer_line);
    GP_ASSERT_STR_EQ(gp_error_trail(got, sizeof got), want);
    GP_ASSERT_STR_EQ(gp_error_trail(got, sizeof got), ""); /* read once */
    GP_ASSERT_STR_EQ(err.msg, "bad");
    GP_ASSERT_EQ_INT(outer(&err), GP_EPARSE);
    GP_ASSERT_EQ_INT(fails_if(-1, &err), GP_EINVAL); /* a new failure, a new trail */
    snprintf(want, sizeof want, "test_error_trail.c:%d", fail_if_line);
    GP_ASSERT_STR_EQ(gp_error_trail(got, sizeof got), want);
    GP_ASSERT_EQ_INT(outer(NULL), GP_EPARSE); /* no gp_error: the same status and trail */
    GP_CHECK(strncmp(gp_error_trail(got, sizeof got), "test_error_trail.c:", 19) == 0);
    GP_ASSERT_EQ_INT(outer(NULL), GP_EPARSE);
    GP_ASSERT_STR_EQ(gp_error_trail(got, 12), "test_error_"); /* cut to fit */
}

int main(void)
{
    GP_RUN(test_trail);
    GP_RUN(test_no_note_for_more);
    return gp_test_summary();
}
