/* json_str.c: the one JSON string escaper (gp/json_str.h). It came from libprof's writer, a
 * measured hot path (16-17 ns of formatting an event): the same loop, shared. */
#include "gp/json_str.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (c == 0xE0 && s[1] < 0xA0)
        return 0; /* overlong */
    if (c == 0xED && s[1] >= 0xA0)
        return 0; /* surrogate */
    if (c == 0xF0 && s[1] < 0x90)
        return 0; /* overlong */
    if (c == 0xF4 && s[1] >= 0x90)
        return 0; /* > U+10FFFF */
    return len;
}

size_t gp_json_escape(char *dst, const char *src, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            dst[j++] = (char)c;
            i++;
        } else if (c == '"' || c == '\\') {
            dst[j++] = '\\';
            dst[j++] = (char)c;
            i++;
        } else if (c < 0x20) {
            const char *short_esc = c == '\n'   ? "\\n"
                                    : c == '\t' ? "\\t"
                                    : c == '\r' ? "\\r"
                                                : NULL;
            if (short_esc) {
                memcpy(dst + j, short_esc, 2);
                j += 2;
            } else {
                memcpy(dst + j, "\\u00", 4);
                dst[j + 4] = hex[c >> 4];
                dst[j + 5] = hex[c & 15];
                j += 6;
            }
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len) {
                memcpy(dst + j, s + i, len);
                j += len;
                i += len;
            } else {
                memcpy(dst + j, "\\ufffd", 6); /* invalid UTF-8 byte */
                j += 6;
                i++;
            }
        }
    }
    return j;
}

size_t gp_json_piece(const char *s, size_t n, size_t max)
{
    size_t k = n < max ? n : max;
    while (k < n && k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    return k ? k : (n < max ? n : max); /* a run of stray continuation bytes: any cut will do */
}

void gp_json_put_str(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    char buf[6 * 256];
    fputc('"', out);
    for (size_t n = strlen(s), k; n > 0; s += k, n -= k) {
        k = gp_json_piece(s, n, 256);
        fwrite(buf, 1, gp_json_escape(buf, s, k), out);
    }
    fputc('"', out);
}
