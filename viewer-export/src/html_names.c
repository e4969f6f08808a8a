/* viewer-export/src/html_names.c: kernel names as people read them in Perfetto and the plugin.
 * A demangled CUDA kernel is often ten lines of template arguments; the page shows its short
 * name (the function, without its return type, template arguments and parameters) and the full
 * name on hover and on expanding it. */
#include "html_int.h"

#include <string.h>

#define ANON "(anonymous namespace)"

size_t html_short_kernel_name(const char *full, char *buf, size_t cap)
{
    const char *p = full;
    size_t n = 0;
    int depth = 0;
    if (strncmp(p, "void ", 5) == 0) /* a __global__ function returns void */
        p += 5;
    for (; *p && n + 1 < cap; p++) {
        if (depth == 0 && strncmp(p, ANON, strlen(ANON)) == 0) {
            size_t k = strlen(ANON) < cap - 1 - n ? strlen(ANON) : cap - 1 - n;
            memcpy(buf + n, p, k);
            n += k;
            p += strlen(ANON) - 1;
            continue;
        }
        if (*p == '<')
            depth++;
        else if (*p == '>' && depth > 0)
            depth--;
        else if (*p == '(' && depth == 0)
            break; /* the parameter list */
        else if (depth == 0)
            buf[n++] = *p;
    }
    while (n && buf[n - 1] == ' ')
        n--;
    buf[n] = 0;
    return n;
}

int html_kernel_tensor_cores(const char *name)
{
    /* the substrings of NVIDIA PyProf's tensor-core kernels that torch-tb-profiler 0.4.3's
     * Kernel view matches, plus CUTLASS's "tensorop" and Hopper's warpgroup "wgmma"/"gmma" */
    static const char *const pats[] = {"h884",
                                       "s884",
                                       "h1688",
                                       "s1688",
                                       "hmma",
                                       "i8816",
                                       "16816",
                                       "dgrad_1x1_stride_2x2",
                                       "first_layer_wgrad_kernel",
                                       "conv1x1",
                                       "conv2d_c1_k1",
                                       "direct_group",
                                       "xmma_implicit_gemm",
                                       "xmma_sparse_conv",
                                       "xmma_warp_specialized_implicit_gemm",
                                       "xmma_gemm",
                                       "xmma_sparse_gemm",
                                       "c1688",
                                       "tensorop",
                                       "gmma"};
    for (size_t i = 0; i < sizeof pats / sizeof *pats; i++)
        if (strstr(name, pats[i]))
            return 1;
    return 0;
}

void html_kernel_name(export_out *o, const char *full)
{
    char s[512];
    if (html_short_kernel_name(full, s, sizeof s) == 0 || strcmp(s, full) == 0) {
        export_out_html(o, full);
        return;
    }
    export_out_puts(o, "<details class=\"kname\" title=\"");
    export_out_html(o, full);
    export_out_puts(o, "\"><summary>");
    export_out_html(o, s);
    export_out_puts(o, "</summary><code>");
    export_out_html(o, full);
    export_out_puts(o, "</code></details>");
}
