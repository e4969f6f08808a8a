/* The rules' view of the run configuration (rules_ctx.c, issue 30 item 7): the rules read the
 * decoded "gprof" object (gp_run_config) itself. A count is read through rules_count, where a
 * header's 0 (`--workers 0`) and no header read alike, as the rules' -1 "unknown" did before
 * (they only ever tested `> 0`); the decoded object keeps the difference. The CPU accounting's
 * run-queue and other-process times keep -1 for unknown, since the rules test them `>= 0`: a
 * header's 0 is a measure there, not a missing one. */
#include "rules/rules_int.h"
#include "gp_test.h"

#include <string.h>

struct view {
    gp_trace *t;
    gp_analysis *a;
    struct rules_ctx c;
};

static int open_view(const char *gprof, struct view *v)
{
    char json[1024];
    gp_error err;
    snprintf(json, sizeof(json), "{%s\"traceEvents\":[]}", gprof);
    memset(v, 0, sizeof(*v));
    gp_status rc = gp_trace_open_mem(json, strlen(json), "cfg", NULL, &v->t, &err);
    if (rc == GP_OK)
        rc = gp_analysis_run(v->t, NULL, &v->a, &err);
    if (rc == GP_OK)
        rc = rules_ctx_init(&v->c, v->a, &err);
    if (rc != GP_OK)
        fprintf(stderr, "cfg: %s\n", err.msg);
    return rc;
}

static void close_view(struct view *v)
{
    rules_ctx_release(&v->c);
    gp_analysis_free(v->a);
    gp_trace_free(v->t);
}

static void test_counts(void)
{
    GP_ASSERT_EQ_INT(rules_count((gp_cfg_num){0, 0}), 0);
    GP_ASSERT_EQ_INT(rules_count((gp_cfg_num){0, 7}), 0);
    GP_ASSERT_EQ_INT(rules_count((gp_cfg_num){1, 0}), 0);
    GP_ASSERT_EQ_INT(rules_count((gp_cfg_num){1, -1}), 0);
    GP_ASSERT_EQ_INT(rules_count((gp_cfg_num){1, 3}), 3);
}

/* `--workers 0` and a trace that does not say: the same count for the rules, and the decoded
 * object still tells them apart. */
static void test_zero_workers_against_no_header(void)
{
    struct view zero, none;
    GP_ASSERT_OK(open_view("\"gprof\":{\"producer\":\"trainer\",\"workers\":0,"
                           "\"cpu_count\":-1,\"batch_size\":64},",
                           &zero));
    GP_ASSERT_OK(open_view("", &none));
    GP_CHECK(zero.c.cfg.rc.workers.known && !none.c.cfg.rc.workers.known);
    GP_ASSERT_EQ_INT(rules_count(zero.c.cfg.rc.workers), 0);
    GP_ASSERT_EQ_INT(rules_count(none.c.cfg.rc.workers), 0);
    GP_ASSERT_EQ_INT(rules_count(zero.c.cfg.rc.cpu_count), 0); /* -1: not a count */
    GP_ASSERT_EQ_INT(rules_count(zero.c.cfg.rc.batch_size), 64);
    GP_CHECK(zero.c.cfg.rc.trainer && zero.c.cfg.libprof);
    GP_CHECK(!none.c.cfg.rc.trainer && !none.c.cfg.libprof);
    close_view(&zero);
    close_view(&none);
}

/* The run-queue and other-process times: a header's 0 is measured (>= 0), no header is -1. */
static void test_zero_wait_against_no_header(void)
{
    struct view zero, none;
    GP_ASSERT_OK(open_view("\"gprof\":{\"producer\":\"trainer\",\"train_runq_ns\":0,"
                           "\"loader_runq_ns\":0,\"other_cpu_ns\":0,\"loop_wall_ns\":1000},",
                           &zero));
    GP_ASSERT_OK(open_view("\"gprof\":{\"producer\":\"trainer\"},", &none));
    GP_CHECK(zero.c.cfg.train_runq == 0 && zero.c.cfg.loader_runq == 0);
    GP_CHECK(zero.c.cfg.other_cpu == 0 && zero.c.cfg.loop_wall == 1000);
    GP_CHECK(none.c.cfg.train_runq == -1 && none.c.cfg.loader_runq == -1);
    GP_CHECK(none.c.cfg.other_cpu == -1);
    close_view(&zero);
    close_view(&none);
}

int main(void)
{
    GP_RUN(test_counts);
    GP_RUN(test_zero_workers_against_no_header);
    GP_RUN(test_zero_wait_against_no_header);
    return gp_test_summary();
}
