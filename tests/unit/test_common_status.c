/* gp_error helpers, status names and the level-gated log sink. */
#include "gp/log.h"
#include "gp/status.h"
#include "gp_test.h"

static void test_error_set_records_everything(void)
{
    gp_error err;
    gp_status rc = gp_error_set(&err, GP_EPARSE, "run.json", "unexpected '%c'", '}');
    GP_ASSERT_EQ_INT(rc, GP_EPARSE);
    GP_ASSERT_EQ_INT(err.code, GP_EPARSE);
    GP_ASSERT_STR_EQ(err.msg, "unexpected '}'");
    GP_ASSERT_STR_EQ(err.path, "run.json");
    GP_ASSERT_EQ_INT(err.offset, -1);
    gp_error_at(&err, 120, 3, 7);
    GP_ASSERT_EQ_INT(err.offset, 120);
    GP_ASSERT_EQ_INT(err.line, 3);
    GP_ASSERT_EQ_INT(err.col, 7);
}

static void test_error_null_is_noop(void)
{
    GP_ASSERT_EQ_INT(gp_error_set(NULL, GP_EIO, "x", "y"), GP_EIO);
    gp_error_at(NULL, 1, 1, 1);
    gp_error_clear(NULL);
}

static void test_error_message_truncates(void)
{
    char big[1000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    gp_error err;
    gp_error_set(&err, GP_EINVAL, NULL, "%s", big);
    GP_ASSERT_EQ_INT(strlen(err.msg), sizeof(err.msg) - 1);
    GP_ASSERT_STR_EQ(err.path, "");
}

static void test_strerror_names_every_code(void)
{
    GP_ASSERT_STR_EQ(gp_strerror(GP_OK), "ok");
    GP_ASSERT_STR_EQ(gp_strerror(GP_EPARSE), "parse error");
    GP_ASSERT_STR_EQ(gp_strerror(GP_EUNSUPPORTED), "not supported");
    GP_ASSERT_STR_EQ(gp_strerror((gp_status)-99), "unknown error");
}

static int fail_if_helper(int bad, gp_error *err)
{
    GP_FAIL_IF(bad, GP_EINVAL, err, "bad value %d", bad);
    return GP_OK;
}

static int try_helper(int bad, gp_error *err)
{
    GP_TRY(fail_if_helper(bad, err));
    return 42;
}

static void test_try_and_fail_if_propagate(void)
{
    gp_error err;
    GP_ASSERT_EQ_INT(try_helper(0, &err), 42);
    GP_ASSERT_EQ_INT(try_helper(5, &err), GP_EINVAL);
    GP_ASSERT_STR_EQ(err.msg, "bad value 5");
}

static int sink_calls;
static char sink_last[256];
static void sink(gp_log_level level, const char *line, void *ud)
{
    (void)level;
    *(int *)ud += 1;
    snprintf(sink_last, sizeof(sink_last), "%s", line);
}

static int evaluated;
static int side_effect(void)
{
    return ++evaluated;
}

static void test_log_gates_before_evaluating(void)
{
    gp_set_log_fn(sink, &sink_calls);
    gp_set_log_level(GP_LOG_WARN);
    GP_LOG(GP_LOG_DEBUG, "hidden %d", side_effect());
    GP_ASSERT_EQ_INT(evaluated, 0);
    GP_ASSERT_EQ_INT(sink_calls, 0);
    GP_LOG(GP_LOG_ERROR, "shown %d", side_effect());
    GP_ASSERT_EQ_INT(evaluated, 1);
    GP_ASSERT_EQ_INT(sink_calls, 1);
    GP_ASSERT_STR_EQ(sink_last, "shown 1");
    gp_set_log_fn(NULL, NULL);
}

static void test_log_level_parse(void)
{
    gp_log_level lv;
    GP_ASSERT_EQ_INT(gp_log_level_parse("debug", &lv), 0);
    GP_ASSERT_EQ_INT(lv, GP_LOG_DEBUG);
    GP_ASSERT_EQ_INT(gp_log_level_parse("loud", &lv), -1);
    GP_ASSERT_EQ_INT(gp_log_level_parse(NULL, &lv), -1);
}

int main(void)
{
    GP_RUN(test_error_set_records_everything);
    GP_RUN(test_error_null_is_noop);
    GP_RUN(test_error_message_truncates);
    GP_RUN(test_strerror_names_every_code);
    GP_RUN(test_try_and_fail_if_propagate);
    GP_RUN(test_log_gates_before_evaluating);
    GP_RUN(test_log_level_parse);
    return gp_test_summary();
}
