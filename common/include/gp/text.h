/* gp/text.h: text from traces made safe for a terminal. */
#ifndef GP_COMMON_TEXT_H
#define GP_COMMON_TEXT_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Copy `src` into `dst` (cap bytes, always NUL-terminated when cap > 0) with every control
 * byte written out: newline as "\n", tab as "\t", any other byte below 0x20 and DEL as "\xHH",
 * so an event name cannot move the cursor, recolour the terminal or break a table's line. Other
 * bytes (UTF-8 included) are kept. A NULL src is "". @return the length written (it stops at
 * cap - 1, never inside an escape). */
size_t gp_text_clean(char *dst, size_t cap, const char *src);

/** fputs(s) with the escapes of gp_text_clean, any length. */
void gp_fputs_clean(FILE *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
