/* Unit tests for gp_export_html(): the sample trace's report holds every section (summary,
 * findings with GT01, the step chart with one bar per step, GPU and memory charts, top ops and
 * kernels), escapes hostile names, references nothing outside itself, and an empty trace still
 * gives a page. Headless Chromium checks of the same page: tests/export/test_html_chromium.sh. */
#include "export_test_util.h"
#include "gp_test.h"
#include "html_int.h"

#include <stdio.h>
#include <unistd.h>

static char out_path[512];

static char *export_html(const char *json)
{
    loaded l;
    gp_error err;
    if (load_trace(SAMPLE_TRACE, json, &l) != GP_OK)
        return NULL;
    gp_export_opts eo = {.findings = l.f};
    gp_status rc = gp_export_html(l.a, &eo, out_path, &err);
    unload(&l);
    char *s = rc == GP_OK ? slurp_file(out_path) : NULL;
    unlink(out_path);
    return s;
}

/* The page's one script is the table sorter (html_sort.c): no other, none from a name. */
static int only_sort_script(const char *s)
{
    const char *p = strstr(s, "<script");
    return p && strncmp(p, "<script>function gpKey(", 23) == 0 && !strstr(p + 1, "<script");
}

static void test_sample_report(void)
{
    char *s = export_html(NULL);
    GP_CHECK(s != NULL);
    GP_CHECK(strncmp(s, "<!DOCTYPE html>", 15) == 0);
    GP_ASSERT_CONTAINS(s, "default-src 'none'");
    GP_CHECK(only_sort_script(s) && strstr(s, "src=") == NULL && strstr(s, "href=") == NULL);
    GP_ASSERT_CONTAINS(s, "<b>GT01 data-loader starvation</b>");
    GP_ASSERT_CONTAINS(s, ">GT01</text>"); /* its ranges shaded on a time chart */
    for (int step = 1; step <= 6; step++) {
        char want[64];
        snprintf(want, sizeof want, "<title>step %d: DataLoader ", step);
        GP_ASSERT_CONTAINS(s, want);
    }
    GP_ASSERT_EQ_INT(count_str(s, "<title>step 7"), 0);
    /* two mean step times on one page, and why (issue 17 §8) */
    GP_ASSERT_CONTAINS(s, "The findings read the 5 steps after the first (warm-up): mean step ");
    GP_ASSERT_CONTAINS(s, "The summary above covers all 6 steps.");
    GP_ASSERT_CONTAINS(s, "<p class=\"sure\">Without the profiler: "); /* GT01's gain restated */
    GP_ASSERT_CONTAINS(s, "how sure: medium (only 5 steps analysed; 10 make it firm)");
    GP_ASSERT_CONTAINS(s, "GPU 0 busy %");
    GP_ASSERT_CONTAINS(s, "GPU 0 allocated");
    GP_ASSERT_CONTAINS(s, "<td class=\"name\">sm90_xmma_gemm_f32f32_tn_n</td><td>30</td>");
    GP_ASSERT_CONTAINS(s, "aten::relu &lt;fused&gt; &amp; &quot;quoted&quot;");
    GP_CHECK(strstr(s, "<fused>") == NULL);
    GP_ASSERT_CONTAINS(s, "NVIDIA H100 80GB HBM3");
    /* issue 27 §3: each "busy" names its definition; kernels by short name, full on hover */
    GP_ASSERT_CONTAINS(s, "GPU 0 busy, of its span (first to last GPU work)</span>");
    GP_ASSERT_CONTAINS(s, "</b><span>GPU busy, of step time (GT02; steps after warm-up)</span>");
    GP_ASSERT_CONTAINS(s, "<details class=\"kname\" title=\"void relu_kernel&lt;float&gt;(float*, "
                          "int)\"><summary>relu_kernel</summary>");
    /* tensor cores by kernel name, as the plugin's Kernel view: the gemm yes, relu no */
    GP_ASSERT_CONTAINS(s, "<td>50.4</td><td>12.0</td><td>yes</td></tr>");
    GP_ASSERT_CONTAINS(s, "<td>49.6</td><td>12.0</td><td>no</td></tr>");
    GP_ASSERT_CONTAINS(s, "50.4% of kernel time in kernels that use tensor cores");
    /* the panes of issue 27 §3: steps table, operators, timeline command */
    GP_ASSERT_CONTAINS(s, "<summary>Each step, in a table</summary>");
    GP_ASSERT_CONTAINS(s, "<h2>Operators</h2>");
    GP_ASSERT_CONTAINS(s, " --perfetto trace.pftrace</code>");
    GP_ASSERT_EQ_INT(count_str(s, "<svg"), 3);
    GP_ASSERT_EQ_INT(count_str(s, "</svg>"), 3);
    free(s);
}

static void test_short_kernel_names(void)
{
    static const char *const cases[][2] = {
            {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
             "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, "
             "1ul>)",
             "at::native::vectorized_elementwise_kernel"},
            {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
             "(int, float, float const*, float const*, float const*, float*, float*, float*)",
             "at::native::(anonymous namespace)::vectorized_layer_norm_kernel"},
            {"sm90_xmma_gemm_f32f32_tn_n", "sm90_xmma_gemm_f32f32_tn_n"},
            {"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>"
             "(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)",
             "cutlass::Kernel2"},
            {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[256];
        html_short_kernel_name(cases[i][0], buf, sizeof buf);
        GP_ASSERT_STR_EQ(buf, cases[i][1]);
    }
}

static void test_hostile_names(void)
{
    char *s = export_html("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"
                          "\"</title><script>alert(1)</script>\",\"pid\":1,\"tid\":1,\"ts\":0,"
                          "\"dur\":5}]}");
    GP_CHECK(s != NULL);
    GP_CHECK(only_sort_script(s));
    GP_ASSERT_CONTAINS(s, "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    free(s);
}

static void test_empty_trace(void)
{
    char *s = export_html("{\"traceEvents\":[]}");
    GP_CHECK(s != NULL);
    GP_ASSERT_CONTAINS(s, "No GPU activity in this trace.");
    GP_ASSERT_CONTAINS(s, "</html>");
    free(s);
}

static void test_cpu_only_trace(void)
{
    /* Two steps on the CPU, a CPU [memory] event (Device Id -1, as PyTorch writes), no GPU. */
    char *s = export_html(
            "{\"traceEvents\":["
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":1,"
            "\"tid\":1,\"ts\":0,\"dur\":100},"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,"
            "\"dur\":50},"
            "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":"
            "1,"
            "\"tid\":1,\"ts\":20,\"args\":{\"Total Reserved\":0,\"Total Allocated\":4096,"
            "\"Bytes\":4096,\"Addr\":1,\"Device Id\":-1,\"Device Type\":0}},"
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,"
            "\"tid\":1,\"ts\":100,\"dur\":100}]}");
    GP_CHECK(s != NULL);
    GP_ASSERT_CONTAINS(s, "No GPU activity in this trace.");
    GP_CHECK(strstr(s, "GPU 0 busy") == NULL);
    GP_CHECK(strstr(s, "peak CPU -1") == NULL);
    GP_ASSERT_CONTAINS(s, "peak CPU allocated");
    free(s);
}

static void test_unwritable_path(void)
{
    gp_error err;
    GP_ASSERT_EQ_INT(export_sample(gp_export_html, "/nonexistent-gp-dir/r.html", &err), GP_EIO);
    GP_ASSERT_STR_EQ(err.path, "/nonexistent-gp-dir/r.html");
}

int main(void)
{
    snprintf(out_path, sizeof out_path, "%s/test_export_html_%d.html", GP_BUILD_DIR, (int)getpid());
    GP_RUN(test_sample_report);
    GP_RUN(test_short_kernel_names);
    GP_RUN(test_hostile_names);
    GP_RUN(test_empty_trace);
    GP_RUN(test_cpu_only_trace);
    GP_RUN(test_unwritable_path);
    return gp_test_summary();
}
