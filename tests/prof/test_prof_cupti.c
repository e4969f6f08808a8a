/* CUPTI record conversion with synthetic CUDA 13 records (no GPU needed): runtime -> kernel
 * correlation and ac2g flows, pageable vs pinned copies, memory accounting, sync/event links,
 * external ids, device properties, exact timestamps, and dropped-buffer reporting. */
#include "gp_test.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cupti_int.h"
#include "gp/trace_schema.h"

#define BASE 1700000000000000000LL

static cupti_conv conv;
static prof_out out;

static const char *fake_names(int driver, uint32_t cbid)
{
    if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        return "cudaLaunchKernel_v7000";
    if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020)
        return "cudaMemcpy_v3020";
    if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000)
        return "cudaGraphLaunch_v10000";
    return "cudaGetDevice_v3020";
}

static const char *convert(const void *rec)
{
    cupti_conv_record(&conv, &out, rec);
    out.buf[out.len] = '\0';
    return out.buf;
}

static void reset(void)
{
    static int opened;
    if (!opened)
        prof_out_mem_init(&out, 1 << 20);
    opened = 1;
    out.len = 0;
    prof_state_session()->base_ns = BASE;
    cupti_conv_init(&conv, 4242, fake_names);
}

static CUpti_ActivityAPI api_rec(uint32_t cbid, uint32_t corr, uint64_t t0, uint64_t t1)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof(a));
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = cbid;
    a.start = BASE + t0;
    a.end = BASE + t1;
    a.processId = 4242;
    a.threadId = 4300;
    a.correlationId = corr;
    return a;
}

static void test_launch_kernel_flow(void)
{
    reset();
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 7, 1000, 3500);
    const char *s = convert(&a);
    GP_ASSERT_CONTAINS(s, "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":4242,"
                          "\"tid\":4300,\"ts\":1.000,\"dur\":2.500,\"args\":{\"cbid\":211,"
                          "\"correlation\":7}}");
    GP_CHECK(strstr(s, "\"ph\":\"s\"") == NULL); /* the flow is written with its work */
    out.len = 0;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = BASE + 1234567;
    k.end = BASE + 1240567;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 7;
    k.correlationId = 7;
    k.gridX = 66, k.gridY = 1, k.gridZ = 1;
    k.blockX = 128, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 64;
    k.staticSharedMemory = 4096;
    k.dynamicSharedMemory = 4096;
    k.name = "gemm_kernel";
    s = convert(&k);
    GP_ASSERT_CONTAINS(s, "\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,\"tid\":7,"
                          "\"ts\":1234.567,\"dur\":6.000");
    GP_ASSERT_CONTAINS(s, "\"correlation\":7");
    GP_ASSERT_CONTAINS(s, "\"registers per thread\":64,\"shared memory\":8192");
    GP_ASSERT_CONTAINS(s, "\"grid\":[66,1,1],\"block\":[128,1,1]");
    GP_ASSERT_CONTAINS(s, "{\"ph\":\"s\",\"id\":7,\"pid\":4242,\"tid\":4300,\"ts\":1.000,"
                          "\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
    GP_ASSERT_CONTAINS(s, "{\"ph\":\"f\",\"id\":7,\"pid\":0,\"tid\":7,\"ts\":1234.567,"
                          "\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
}

static CUpti_ActivityExternalCorrelation ext_rec(uint64_t ext, uint32_t corr)
{
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof(x));
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalId = ext;
    x.correlationId = corr;
    return x;
}

static CUpti_ActivityKernel10 kernel_rec(uint32_t corr, const char *name)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = BASE + 50000;
    k.end = BASE + 60000;
    k.streamId = 7;
    k.correlationId = corr;
    k.name = name;
    return k;
}

/* Records come in any order across CUPTI's buffers: a kernel before its external-correlation
 * and API records waits for them, and gets its External id and both flow ends. */
static void test_kernel_before_its_api_record(void)
{
    reset();
    CUpti_ActivityKernel10 k = kernel_rec(40, "early_kernel");
    GP_ASSERT_STR_EQ(convert(&k), "");
    CUpti_ActivityExternalCorrelation x = ext_rec(777, 40);
    GP_ASSERT_STR_EQ(convert(&x), "");
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 40, 10, 20);
    a.threadId = 4301;
    const char *s = convert(&a);
    GP_ASSERT_CONTAINS(s, "\"name\":\"early_kernel\"");
    GP_ASSERT_CONTAINS(s, "\"args\":{\"External id\":777,\"device\":0");
    GP_ASSERT_CONTAINS(s, "{\"ph\":\"s\",\"id\":40,\"pid\":4242,\"tid\":4301");
    GP_ASSERT_CONTAINS(s, "{\"ph\":\"f\",\"id\":40,\"pid\":0,\"tid\":7");
    GP_ASSERT_EQ_INT(conv.n_pend, 0);
}

/* A graph launch's nodes share its correlation id (here before its API record, as in CUPTI's
 * device buffer): each kernel gets the launch's External id, its graph and node ids, and a flow
 * from the launch with an id of its own (a viewer binds one flow to an id). */
static void test_graph_launch_kernels(void)
{
    reset();
    CUpti_ActivityKernel10 k[3] = {kernel_rec(50, "node_a"), kernel_rec(50, "node_b"),
                                   kernel_rec(50, "node_c")};
    for (int i = 0; i < 3; i++) {
        k[i].graphId = 9;
        k[i].graphNodeId = 100 + (uint64_t)i;
        k[i].start += (uint64_t)i * 20000;
        k[i].end += (uint64_t)i * 20000;
        GP_ASSERT_STR_EQ(convert(&k[i]), "");
    }
    CUpti_ActivityExternalCorrelation x = ext_rec(888, 50);
    convert(&x);
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 50, 10, 30);
    const char *s = convert(&a);
    GP_ASSERT_CONTAINS(s, "\"name\":\"cudaGraphLaunch\"");
    GP_ASSERT_CONTAINS(s, "\"name\":\"node_c\"");
    GP_ASSERT_CONTAINS(s, "\"graph id\":9,\"graph node id\":100");
    GP_ASSERT_CONTAINS(s, "\"graph id\":9,\"graph node id\":102");
    GP_ASSERT_CONTAINS(s, "\"args\":{\"External id\":888,\"device\":0");
    static const char *const ids[] = {"50", "4294967346", "8589934642"}; /* 50 + n << 32 */
    char want[128];
    for (int i = 0; i < 3; i++) {
        snprintf(want, sizeof(want), "{\"ph\":\"s\",\"id\":%s,\"pid\":4242,\"tid\":4300,", ids[i]);
        GP_ASSERT_CONTAINS(s, want);
        snprintf(want, sizeof(want), "{\"ph\":\"f\",\"id\":%s,\"pid\":0,\"tid\":7,", ids[i]);
        GP_ASSERT_CONTAINS(s, want);
    }
    GP_CHECK(strstr(s, "\"id\":12884901938") == NULL); /* three nodes, three flows */
    /* an ordinary launch gets no graph args */
    out.len = 0;
    CUpti_ActivityAPI b = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 51, 40, 50);
    convert(&b);
    CUpti_ActivityKernel10 plain = kernel_rec(51, "plain");
    GP_CHECK(strstr(convert(&plain), "graph id") == NULL);
}

/* A [memory] record before its API record takes the allocating thread from it. */
static void test_memory_before_its_api_record(void)
{
    reset();
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = 0x1000;
    m.bytes = 64;
    m.timestamp = BASE + 5;
    m.correlationId = 41;
    GP_ASSERT_STR_EQ(convert(&m), "");
    CUpti_ActivityAPI a = api_rec(17, 41, 0, 10);
    a.threadId = 4302;
    GP_ASSERT_CONTAINS(convert(&a), "\"name\":\"[memory]\",\"pid\":4242,\"tid\":4302");
}

/* Work whose API record never came is written at the end, without a flow. */
static void test_waiting_work_written_at_finish(void)
{
    reset();
    CUpti_ActivityKernel10 k = kernel_rec(42, "orphan");
    GP_ASSERT_STR_EQ(convert(&k), "");
    cupti_conv_finish(&conv, &out);
    out.buf[out.len] = '\0';
    GP_ASSERT_CONTAINS(out.buf, "\"name\":\"orphan\"");
    GP_CHECK(strstr(out.buf, "ac2g") == NULL);
    GP_ASSERT_EQ_INT(conv.n_pend, 0);
}

/* A reloaded module can put another kernel's name at the same address. */
static void test_kernel_name_by_text_not_address(void)
{
    reset();
    conv.wait_for_api = 0;
    static char name[32];
    snprintf(name, sizeof(name), "first_kernel");
    CUpti_ActivityKernel10 k = kernel_rec(43, name);
    GP_ASSERT_CONTAINS(convert(&k), "\"name\":\"first_kernel\"");
    out.len = 0;
    snprintf(name, sizeof(name), "second_kernel");
    GP_ASSERT_CONTAINS(convert(&k), "\"name\":\"second_kernel\"");
}

static void test_non_launch_api_has_no_flow(void)
{
    reset();
    CUpti_ActivityAPI a = api_rec(17, 8, 0, 10);
    const char *s = convert(&a);
    GP_ASSERT_CONTAINS(s, "\"name\":\"cudaGetDevice\"");
    GP_CHECK(strstr(s, "\"ph\":\"s\"") == NULL);
}

static CUpti_ActivityMemcpy6 copy_rec(unsigned src, unsigned dst, unsigned kind)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)kind;
    m.srcKind = (uint8_t)src;
    m.dstKind = (uint8_t)dst;
    m.bytes = 1 << 20;
    m.start = BASE + 5000;
    m.end = BASE + 5000 + 100000; /* 1 MiB in 100 us = 10.48576 GB/s */
    m.streamId = 13;
    m.correlationId = 9;
    return m;
}

static void test_memcpy_names_pageable_and_pinned(void)
{
    reset();
    conv.wait_for_api = 0; /* no API records enabled */
    CUpti_ActivityMemcpy6 m =
            copy_rec(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                     CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    const char *s = convert(&m);
    GP_ASSERT_CONTAINS(s, "\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\","
                          "\"pid\":0,\"tid\":13");
    GP_ASSERT_CONTAINS(s, "\"bytes\":1048576,\"memory bandwidth (GB/s)\":10.48576");
    out.len = 0;
    m = copy_rec(CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                 CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    GP_ASSERT_CONTAINS(convert(&m), "\"name\":\"Memcpy HtoD (Pinned -> Device)\"");
    out.len = 0;
    m = copy_rec(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                 CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    GP_ASSERT_CONTAINS(convert(&m), "\"name\":\"Memcpy DtoH (Device -> Pageable)\"");
}

static void test_memset_name(void)
{
    reset();
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.start = BASE + 1;
    m.end = BASE + 2;
    m.bytes = 64;
    GP_ASSERT_CONTAINS(convert(&m), "\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\"");
}

static CUpti_ActivityMemory4 mem_rec(int alloc, uint64_t addr, uint64_t bytes, uint32_t corr)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.address = addr;
    m.bytes = bytes;
    m.timestamp = BASE + 2000;
    m.correlationId = corr;
    return m;
}

static void test_memory_accounting(void)
{
    reset();
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 21, 0, 1);
    convert(&a); /* the thread that allocates: 4300 */
    out.len = 0;
    CUpti_ActivityMemory4 m = mem_rec(1, 0x7f0000000000ULL, 1000, 21);
    const char *s = convert(&m);
    GP_ASSERT_CONTAINS(s, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\","
                          "\"pid\":4242,\"tid\":4300,\"ts\":2.000,\"s\":\"t\"");
    GP_ASSERT_CONTAINS(s, "\"Device Type\":1,\"Device Id\":0,\"Addr\":139637976727552,"
                          "\"Bytes\":1000,\"Total Allocated\":1000,\"Total Reserved\":1000");
    out.len = 0;
    conv.wait_for_api = 0; /* the rest have no API record */
    m = mem_rec(1, 0x7f0000100000ULL, 500, 22);
    GP_ASSERT_CONTAINS(convert(&m), "\"Bytes\":500,\"Total Allocated\":1500");
    out.len = 0;
    m = mem_rec(0, 0x7f0000000000ULL, 0, 23); /* a free without its size */
    GP_ASSERT_CONTAINS(convert(&m), "\"Bytes\":-1000,\"Total Allocated\":500");
    GP_ASSERT_EQ_INT(conv.peak[0], 1500);
    m = mem_rec(1, 0x7f0000200000ULL, 4000, 24);
    m.deviceId = 1; /* the peak of the fullest device, not device 0's */
    convert(&m);
    out.len = 0;
    cupti_conv_config(&conv, &out);
    out.buf[out.len] = '\0';
    GP_ASSERT_CONTAINS(out.buf, "\"peak_device_memory_allocated\":4000");
}

static void test_sync_waits_on_event_stream(void)
{
    reset();
    CUpti_ActivityCudaEvent2 e;
    memset(&e, 0, sizeof(e));
    e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    e.streamId = 9;
    e.contextId = 1;
    e.deviceId = 0;
    e.cudaEventSyncId = 77;
    convert(&e);
    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof(y));
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    y.start = BASE + 10;
    y.end = BASE + 20;
    y.contextId = 1;
    y.streamId = 7;
    y.cudaEventSyncId = 77;
    const char *s = convert(&y);
    GP_ASSERT_CONTAINS(s, "\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"pid\":0,"
                          "\"tid\":536870919");
    GP_ASSERT_CONTAINS(s, "\"cuda_sync_kind\":\"Stream Wait Event\"");
    GP_ASSERT_CONTAINS(s, "\"wait_on_stream\":9");
}

static void test_external_id_and_no_timestamp(void)
{
    reset();
    CUpti_ActivityExternalCorrelation x = ext_rec(555, 31);
    convert(&x);
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 31, 0, 1);
    GP_ASSERT_CONTAINS(convert(&a), "\"External id\":555");
    out.len = 0;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = 31;
    k.start = BASE + 5;
    k.end = BASE + 6;
    k.name = "k";
    GP_ASSERT_CONTAINS(convert(&k), "\"args\":{\"External id\":555,\"device\":0");
    out.len = 0;
    k.start = k.end = 0; /* CUPTI could not time it */
    GP_ASSERT_STR_EQ(convert(&k), "");
    GP_ASSERT_EQ_INT(conv.no_timestamp, 1);
}

/* The capture-health ledger counts GPU work with impossible times: ending before it starts, or
 * starting before the API call that launched it. */
static void test_impossible_times_counted(void)
{
    reset();
    CUpti_ActivityAPI a = api_rec(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 41, 1000, 1500);
    convert(&a);
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = 41;
    k.name = "k";
    k.start = BASE + 2000, k.end = BASE + 3000; /* after its launch: fine */
    convert(&k);
    GP_ASSERT_EQ_INT(conv.end_before_start + conv.before_launch, 0);
    k.start = BASE + 900; /* before its launch call started */
    convert(&k);
    GP_ASSERT_EQ_INT(conv.before_launch, 1);
    k.start = BASE + 4000; /* ends before it starts */
    convert(&k);
    GP_ASSERT_EQ_INT(conv.end_before_start, 1);
    GP_ASSERT_EQ_INT(conv.before_launch, 1);
    k.correlationId = 42; /* no launch record seen: start cannot be checked */
    k.start = BASE + 10, k.end = BASE + 20;
    convert(&k);
    GP_ASSERT_EQ_INT(conv.before_launch, 1);
}

static void test_device_properties(void)
{
    reset();
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.name = "NVIDIA H100 80GB HBM3";
    d.globalMemorySize = 85018279936ULL;
    d.computeCapabilityMajor = 9;
    d.numMultiprocessors = 132;
    d.numThreadsPerWarp = 32;
    d.maxWarpsPerMultiprocessor = 64;
    d.maxThreadsPerBlock = 1024;
    convert(&d);
    out.len = 0;
    GP_ASSERT_EQ_INT(cupti_conv_device_props(&conv, &out), 1);
    out.buf[out.len] = '\0';
    GP_ASSERT_CONTAINS(out.buf, "{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
                                "\"totalGlobalMem\":85018279936,\"computeMajor\":9,"
                                "\"computeMinor\":0,\"maxThreadsPerBlock\":1024,"
                                "\"maxThreadsPerMultiprocessor\":2048");
    GP_ASSERT_CONTAINS(out.buf, "\"numSms\":132");
    out.len = 0;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = BASE + 5;
    k.end = BASE + 6;
    k.name = "k2";
    k.gridX = 264, k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    GP_ASSERT_CONTAINS(convert(&k), "\"blocks per SM\":2,\"warps per SM\":16");
    out.len = 0;
    cupti_conv_config(&conv, &out);
    out.buf[out.len] = '\0';
    GP_ASSERT_CONTAINS(out.buf, ",\"device_name\":\"NVIDIA H100 80GB HBM3\","
                                "\"total_device_memory\":85018279936");
}

/* Past the cap, buffer requests are refused; CUPTI drops those records and counts them in
 * cuptiActivityGetNumDroppedRecords, which is the trace's count: adding the refusals again
 * doubled it (gpusim_drops checks the count end to end against the simulated CUPTI's). */
static void test_refused_buffers_are_not_counted_twice(void)
{
    uint8_t *bufs[CUPTI_MAX_HELD + 8];
    size_t size, maxn;
    int got = 0;
    for (size_t i = 0; i < CUPTI_MAX_HELD + 8; i++) {
        cupti_buffer_requested(&bufs[i], &size, &maxn);
        got += bufs[i] != NULL;
        GP_CHECK(((uintptr_t)bufs[i] & 7) == 0); /* CUPTI needs 8-byte aligned buffers */
    }
    GP_ASSERT_EQ_INT(got, 256); /* 256 MiB cap / 1 MiB buffers: a buffer for each of 256 threads */
    GP_ASSERT_EQ_INT(prof_gpu_dropped(), 0);
    for (size_t i = 0; i < CUPTI_MAX_HELD + 8; i++)
        if (bufs[i])
            cupti_buffer_completed(NULL, 0, bufs[i], size, 0);
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/tmp/gp_prof_cupti_drops.json";
    o.record = GP_PROF_RECORD_CPU;
    GP_ASSERT_OK(gp_prof_init(&o, NULL));
    GP_ASSERT_OK(gp_prof_shutdown(NULL));
    static char text[1 << 16];
    gzFile f = gzopen(o.output_path, "rb");
    int n = gzread(f, text, sizeof(text) - 1);
    gzclose(f);
    text[n > 0 ? n : 0] = '\0';
    unlink(o.output_path);
    GP_ASSERT_CONTAINS(text, "\"dropped_records\":0,");
    GP_ASSERT_CONTAINS(text, "\"dropped_gpu_records\":0,");
}

int main(void)
{
    GP_RUN(test_launch_kernel_flow);
    GP_RUN(test_non_launch_api_has_no_flow);
    GP_RUN(test_kernel_before_its_api_record);
    GP_RUN(test_memory_before_its_api_record);
    GP_RUN(test_graph_launch_kernels);
    GP_RUN(test_waiting_work_written_at_finish);
    GP_RUN(test_kernel_name_by_text_not_address);
    GP_RUN(test_memcpy_names_pageable_and_pinned);
    GP_RUN(test_memset_name);
    GP_RUN(test_memory_accounting);
    GP_RUN(test_sync_waits_on_event_stream);
    GP_RUN(test_external_id_and_no_timestamp);
    GP_RUN(test_impossible_times_counted);
    GP_RUN(test_device_properties);
    GP_RUN(test_refused_buffers_are_not_counted_twice);
    return gp_test_summary();
}
