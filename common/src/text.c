/* text.c: terminal-safe text (gp/text.h). */
#include "gp/text.h"

#include <string.h>

/* The escape of byte c into e (at least 5 bytes); @return its length, 0 if c stands for itself. */
static size_t escape_of(unsigned char c, char *e)
{
    static const char hex[] = "0123456789abcdef";
    if (c == '\n' || c == '\t') {
        e[0] = '\\';
        e[1] = c == '\n' ? 'n' : 't';
        return 2;
    }
    if (c >= 0x20 && c != 0x7f)
        return 0;
    e[0] = '\\';
    e[1] = 'x';
    e[2] = hex[c >> 4];
    e[3] = hex[c & 15];
    return 4;
}

size_t gp_text_clean(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (cap == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)(src ? src : ""); *p; p++) {
        char e[5];
        size_t k = escape_of(*p, e);
        if (k == 0) {
            e[0] = (char)*p;
            k = 1;
        }
        if (n + k >= cap)
            break;
        memcpy(dst + n, e, k);
        n += k;
    }
    dst[n] = '\0';
    return n;
}

void gp_fputs_clean(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
    for (; *p; p++) {
        char e[5];
        size_t k = escape_of(*p, e);
        if (k == 0)
            continue;
        fwrite(run, 1, (size_t)(p - run), out);
        fwrite(e, 1, k, out);
        run = p + 1;
    }
    fwrite(run, 1, (size_t)(p - run), out);
}
