/* Job view (issue 15): NCCL and RCCL collectives are recognised under every name they have had,
 * by gp_trace_is_comm_name and by the reader's communication flag (so GT15 and the breakdown see
 * them); their operation is named; two in-memory ranks give the right lag, waits, clock offset
 * and GT16 verdict; bad settings and an empty job are refused. */
#include "gp_test.h"

#include "gp/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *op;
} comm_names[] = {
        {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
         "AllReduce"}, /* NCCL 2.7 - 2.18 */
        {"ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
         "AllGather"}, /* NCCL 2.19+ (what HTA misses) */
        {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "ReduceScatter"},
        {"void ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)", "AllReduce"}, /* <= 2.6 */
        {"ncclBroadcastRingLLKernel_copy_i8(ncclColl)", "Broadcast"},
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "SendRecv"},
        {"ncclDevKernel_Generic_4(ncclDevComm*, unsigned long, ncclWork*)", "Generic"}, /* RCCL */
        {"mscclKernel_Sum_float_Simple_false(ncclDevComm*, mscclAlgo*, mscclWork*)", "other"},
        {"nccl:all_reduce", "AllReduce"},
        {"nccl:reduce_scatter", "ReduceScatter"},
        {"nccl:all_to_all", "AllToAll"},
        {"nccl:broadcast", "Broadcast"},
        {"nccl:send", "Send"},
        {"gloo:all_reduce", "AllReduce"},
        {"c10d::allreduce_", "AllReduce"},
};

static const char *const not_comm[] = {"sm90_xmma_gemm_f32f32_tn_n", "aten::mm",
                                       "void at::native::reduce_kernel<512, 1>", "cudaLaunchKernel",
                                       "Memcpy HtoD (Pageable -> Device)"};

static void test_names(void)
{
    for (size_t i = 0; i < sizeof(comm_names) / sizeof(comm_names[0]); i++) {
        if (!gp_trace_is_comm_name(comm_names[i].name))
            GP_TEST_FAIL("not recognised: %s", comm_names[i].name);
        GP_ASSERT_STR_EQ(gp_job_comm_op(comm_names[i].name), comm_names[i].op);
    }
    for (size_t i = 0; i < sizeof(not_comm) / sizeof(not_comm[0]); i++)
        if (gp_trace_is_comm_name(not_comm[i]))
            GP_TEST_FAIL("taken for a collective: %s", not_comm[i]);
}

/* One rank: 3 steps; a compute kernel then a collective kernel a step. The collective starts at
 * `arrive[step]` us and ends at 900 us into the step on every rank; `skew` us is added to all. */
static char *rank_json(int rank, const char *kname, const int *arrive, int skew)
{
    size_t cap = 16384, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s + len, cap - len,
                            "{\"distributedInfo\":{\"rank\":%d,\"world_size\":2},"
                            "\"traceEvents\":[",
                            rank);
    for (int st = 0; st < 3; st++) {
        int t = 1000 + st * 1000 + skew, c = 10 + st * 2;
        len += (size_t)snprintf(
                s + len, cap - len,
                "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
                "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":950},"
                "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                "\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}},"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                "\"dur\":100,\"args\":{\"correlation\":%d,\"stream\":7,\"device\":0}},"
                "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,"
                "\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}},"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":20,\"ts\":%d,"
                "\"dur\":%d,\"args\":{\"correlation\":%d,\"stream\":20,\"device\":0}}",
                st ? "," : "", st + 1, t, t + 10, c, t + 20, c, t + 30, c + 1, kname,
                t + arrive[st], 900 - arrive[st], c + 1);
    }
    snprintf(s + len, cap - len, "]}");
    return s;
}

static gp_job_part *part_of(const char *json)
{
    gp_trace *t = NULL;
    gp_analysis *a = NULL;
    gp_job_part *p = NULL;
    if (gp_trace_open_mem(json, strlen(json), "mem", NULL, &t, NULL) == GP_OK &&
        gp_analysis_run(t, NULL, &a, NULL) == GP_OK)
        gp_job_part_new(a, &p, NULL);
    gp_analysis_free(a);
    gp_trace_free(t);
    return p;
}

/* The reader flags every variant as communication: the breakdown counts it. */
static void test_reader_flags(void)
{
    static const int arrive[3] = {200, 200, 200};
    for (size_t i = 0; i < 8; i++) {
        char *js = rank_json(0, comm_names[i].name, arrive, 0);
        gp_trace *t = NULL;
        gp_analysis *a = NULL;
        GP_ASSERT_OK(gp_trace_open_mem(js, strlen(js), "mem", NULL, &t, NULL));
        free(js);
        gp_status rc = gp_analysis_run(t, NULL, &a, NULL);
        const gp_step_stats *ss = rc == GP_OK ? gp_analysis_step_stats(a) : NULL;
        int64_t comm = ss ? ss->bd_total[GP_BD_COMMUNICATION] : 0;
        gp_analysis_free(a);
        gp_trace_free(t);
        if (comm <= 0)
            GP_TEST_FAIL("no communication time for %s", comm_names[i].name);
    }
}

static void test_two_ranks(void)
{
    /* rank 1 arrives 500 us late at every collective; its clock is 3 ms ahead; the two name
     * one all-reduce as NCCL 2.7 and 2.6 did */
    static const int early[3] = {200, 200, 200}, late[3] = {700, 700, 700};
    char *j0 = rank_json(0, comm_names[0].name, early, 0);
    char *j1 = rank_json(1, comm_names[3].name, late, 3000);
    gp_job *j = NULL;
    GP_ASSERT_OK(gp_job_new(&j, NULL));
    GP_ASSERT_OK(gp_job_add(j, part_of(j1), NULL)); /* out of order on purpose */
    GP_ASSERT_OK(gp_job_add(j, part_of(j0), NULL));
    free(j0), free(j1);
    GP_ASSERT_OK(gp_job_set(j, "GT16.min_count=2", NULL));
    GP_ASSERT_OK(gp_job_finish(j, NULL));
    size_t nr, nc, nf;
    const gp_job_rank *r = gp_job_ranks(j, &nr);
    const gp_job_collective *c = gp_job_collectives(j, &nc);
    const gp_finding *f = gp_findings_get(gp_job_findings(j), &nf);
    GP_ASSERT_EQ_INT(nr, 2);
    GP_ASSERT_EQ_INT(nc, 3);
    GP_ASSERT_EQ_INT(r[0].rank, 0);
    GP_ASSERT_EQ_INT(r[1].clock_offset, 3000000);
    GP_ASSERT_EQ_INT(c[0].last_rank, 1);
    GP_ASSERT_EQ_INT(c[0].lag, 500000);
    GP_ASSERT_EQ_INT(r[1].n_last, 3);
    GP_ASSERT_EQ_INT(r[0].waited, 500000);
    /* what the job's timeline uses (issue 27 §2): starts, the clock's evidence and what is left
     * of its uncertainty, and each wait on the aligned clock */
    GP_ASSERT_EQ_INT(r[0].start, 1000000);
    GP_ASSERT_EQ_INT(r[1].start, 4000000);
    GP_ASSERT_EQ_INT(r[1].n_clock_refs, 3);
    GP_ASSERT_EQ_INT(r[1].clock_spread, 0);
    GP_ASSERT_EQ_INT(gp_job_rank_n_waits(j, 0), 3);
    gp_job_wait w = gp_job_rank_wait(j, 0, 0);
    GP_ASSERT_EQ_INT(w.ts, 1200000);
    GP_ASSERT_EQ_INT(w.until, 1700000);
    GP_ASSERT_EQ_INT(w.end, 1900000);
    GP_ASSERT_EQ_INT(w.last_rank, 1);
    GP_ASSERT_STR_EQ(w.op, "AllReduce");
    w = gp_job_rank_wait(j, 1, 0); /* the late rank's own call: no wait */
    GP_ASSERT_EQ_INT(w.ts, w.until);
    GP_ASSERT_EQ_INT(nf, 1);
    GP_ASSERT_STR_EQ(f[0].rule->id, "GT16");
    GP_CHECK(f[0].severity == GP_SEV_CRIT);
    gp_job_free(j);
}

/* What PyTorch records of a collective: the kernel's args and its record_param_comms' (one
 * External id) become one record, also when the file is read in parts on several threads. */
static const char comm_trace[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,"
        "\"tid\":1,\"ts\":10,\"dur\":5,\"args\":{\"External id\":42,\"Seq\":7,"
        "\"Collective name\":\"allreduce\",\"dtype\":\"Float\"}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"other\",\"pid\":1,\"tid\":1,"
        "\"ts\":20,\"dur\":5,\"args\":{\"External id\":43,\"dtype\":3}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32\","
        "\"pid\":0,\"tid\":20,\"ts\":30,\"dur\":50,\"args\":{\"External id\":42,"
        "\"stream\":20,\"Process Group Name\":\"3\",\"In msg nelems\":1024,"
        "\"Out msg nelems\":1024,\"Group size\":8}}]}";

static void test_comm_info(void)
{
    gp_trace_opts split = {.flags = GP_TRACE_SPLIT_ANY, .threads = 3};
    const gp_trace_opts *opts[2] = {NULL, &split};
    for (int k = 0; k < 2; k++) {
        gp_trace *t = NULL;
        GP_ASSERT_OK(gp_trace_open_mem(comm_trace, strlen(comm_trace), "mem", opts[k], &t, NULL));
        const gp_comm_info *c = gp_trace_comm_info(t, 42);
        GP_CHECK(c != NULL);
        if (c) {
            GP_ASSERT_STR_EQ(gp_trace_str(t, c->coll), "allreduce");
            GP_ASSERT_STR_EQ(gp_trace_str(t, c->pg), "3");
            GP_ASSERT_STR_EQ(gp_trace_str(t, c->dtype), "Float");
            GP_ASSERT_EQ_INT(c->seq, 7);
            GP_ASSERT_EQ_INT(c->in_nelems, 1024);
            GP_ASSERT_EQ_INT(c->group_size, 8);
        }
        GP_CHECK(gp_trace_comm_info(t, 43) == NULL); /* a non-string dtype is not a collective's */
        GP_CHECK(gp_trace_comm_info(t, 44) == NULL);
        gp_trace_free(t);
    }
}

static void test_refusals(void)
{
    gp_job *j = NULL;
    gp_job_format fmt;
    GP_ASSERT_OK(gp_job_new(&j, NULL));
    GP_CHECK(gp_job_finish(j, NULL) == GP_EINVAL);
    GP_CHECK(gp_job_set(j, "GT16.nope=1", NULL) == GP_EINVAL);
    GP_CHECK(gp_job_set(j, "GT01.warn_pct=1", NULL) == GP_EINVAL);
    GP_CHECK(gp_job_set(j, "straggler.warn_pct=x", NULL) == GP_EINVAL);
    GP_ASSERT_OK(gp_job_set(j, "straggler.warn_pct=7", NULL));
    GP_ASSERT_OK(gp_job_format_parse("ndjson", &fmt, NULL));
    GP_CHECK(fmt == GP_JOB_NDJSON);
    GP_CHECK(gp_job_format_parse("csv", &fmt, NULL) == GP_EINVAL);
    gp_job_free(j);
}

int main(void)
{
    GP_RUN(test_names);
    GP_RUN(test_reader_flags);
    GP_RUN(test_two_ranks);
    GP_RUN(test_comm_info);
    GP_RUN(test_refusals);
    return gp_test_summary();
}
