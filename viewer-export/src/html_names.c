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
