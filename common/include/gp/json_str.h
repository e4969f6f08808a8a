/* gp/json_str.h: JSON strings, written one way everywhere (the writer's hot path included). */
#ifndef GP_COMMON_JSON_STR_H
#define GP_COMMON_JSON_STR_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Escape src[0..n) for a JSON string into dst (room for 6 * n bytes), without the quotes:
 * '"' and '\\' escaped, \n \t \r short, other control bytes as \u00XX, valid UTF-8 kept,
 * each invalid byte (overlong forms and surrogates included) as \ufffd, so the output is always
 * valid JSON. @return the bytes written (no NUL). */
size_t gp_json_escape(char *dst, const char *src, size_t n);

/** How much of s[0..n) to escape at once with room for `max` input bytes: at most max, cut
 * before a UTF-8 continuation byte (so a valid sequence is never split into \ufffd). */
size_t gp_json_piece(const char *s, size_t n, size_t max);

/** Write s as a quoted JSON string ("null" for NULL), escaped as gp_json_escape does. */
void gp_json_put_str(FILE *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
