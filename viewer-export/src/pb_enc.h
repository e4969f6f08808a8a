/* viewer-export/src/pb_enc.h: a protobuf wire-format writer for one message at a time (a trace
 * packet): varints, fixed64, doubles, length-delimited strings and nested messages whose length
 * is filled in when they end. Failures (out of memory, nesting too deep) are remembered in
 * `failed` and make every later call a no-op, so emitters need no error plumbing. */
#ifndef GP_EXPORT_PB_ENC_H
#define GP_EXPORT_PB_ENC_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX_DEPTH 8

typedef struct pb_buf {
    uint8_t *p;
    size_t len, cap;
    size_t open[PB_MAX_DEPTH]; /* where each open message's length byte sits */
    int depth;
    int failed;
} pb_buf;

/** Empty the buffer for the next message (keeps its memory). */
void pb_reset(pb_buf *b);
void pb_free(pb_buf *b);

void pb_varint(pb_buf *b, uint32_t field, uint64_t v);
void pb_int(pb_buf *b, uint32_t field, int64_t v); /* int32/int64: negatives take 10 bytes */
void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v);
void pb_double(pb_buf *b, uint32_t field, double v);
/** A string field: invalid UTF-8 bytes become U+FFFD, as protobuf strings must be UTF-8. */
void pb_str(pb_buf *b, uint32_t field, const char *s);
/** Open a nested message in `field`; pb_end() closes the innermost one. */
void pb_begin(pb_buf *b, uint32_t field);
void pb_end(pb_buf *b);

#endif
