/* trainer/src/tfevents.c: TensorBoard event files. Each record is TFRecord-framed
 * (u64 length, masked CRC32C of it, payload, masked CRC32C of the payload) and the payload is a
 * tensorflow.Event protobuf encoded by hand: wall_time (1, double), step (2, int64) and either
 * file_version (3) or summary (5) { value (1) { tag (1), simple_value (2, float) } }. */
#include "tfevents.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct tfevents_writer {
    FILE *f;
    int write_failed; /* errno of the first failed write, 0 if none */
    char path[4096];
};

/* Protobuf field keys: (field number << 3) | wire type. */
enum {
    PB_EVENT_WALL_TIME = (1 << 3) | 1, /* fixed64 */
    PB_EVENT_STEP = (2 << 3) | 0,      /* varint */
    PB_EVENT_FILE_VERSION = (3 << 3) | 2,
    PB_EVENT_SUMMARY = (5 << 3) | 2,
    PB_SUMMARY_VALUE = (1 << 3) | 2,
    PB_VALUE_TAG = (1 << 3) | 2,
    PB_VALUE_SIMPLE = (2 << 3) | 5 /* fixed32 */
};

/* Big enough for an Event with a TFEVENTS_TAG_MAX tag: keys, varints and fixed fields add < 40. */
#define EVENT_BUF_MAX (TFEVENTS_TAG_MAX + 64)

/* CRC32C (Castagnoli, reflected 0x82F63B78), bitwise. Written here because zlib has only the
 * IEEE polynomial and Debian 12 packages no C crc32c library; records are ~50 bytes, a few per
 * training step, so a table would buy nothing measurable. */
static uint32_t crc32c(const unsigned char *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

unsigned tfevents_masked_crc(const void *data, size_t len)
{
    uint32_t crc = crc32c(data, len);
    return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

static size_t put_le(unsigned char *p, uint64_t v, int nbytes)
{
    for (int i = 0; i < nbytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return (size_t)nbytes;
}

static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t put_bytes(unsigned char *p, int key, const void *s, size_t len)
{
    size_t n = put_varint(p, (uint64_t)key);
    n += put_varint(p + n, len);
    memcpy(p + n, s, len);
    return n + len;
}

static double wall_time_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Event header: wall_time and step. */
static size_t put_event_head(unsigned char *p, long long step)
{
    double wt = wall_time_now();
    uint64_t bits;
    memcpy(&bits, &wt, sizeof bits);
    size_t n = put_varint(p, PB_EVENT_WALL_TIME);
    n += put_le(p + n, bits, 8);
    n += put_varint(p + n, PB_EVENT_STEP);
    return n + put_varint(p + n, (uint64_t)step); /* int64: negatives take 10 bytes */
}

static void write_record(tfevents_writer *w, const unsigned char *data, size_t len)
{
    unsigned char head[12], tail[4];
    put_le(head, len, 8);
    put_le(head + 8, tfevents_masked_crc(head, 8), 4);
    put_le(tail, tfevents_masked_crc(data, len), 4);
    if (w->write_failed)
        return;
    if (fwrite(head, 1, sizeof head, w->f) != sizeof head || fwrite(data, 1, len, w->f) != len ||
        fwrite(tail, 1, sizeof tail, w->f) != sizeof tail)
        w->write_failed = errno ? errno : EIO;
}

/* Create the file exclusively, trying `.<n>` suffixes if another writer took the name. */
static gp_status create_file(tfevents_writer *w, const char *dir, gp_error *err)
{
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    long long secs = (long long)time(NULL);
    for (int attempt = 0; attempt < 100; attempt++) {
        int len = attempt == 0
                          ? snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s", dir,
                                     secs, host)
                          : snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s.%d",
                                     dir, secs, host, attempt);
        GP_FAIL_IF(len < 0 || (size_t)len >= sizeof w->path, GP_EINVAL, err,
                   "event file path too long under '%s'", dir);
        int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return gp_error_set(err, GP_EIO, w->path, "cannot create: %s", strerror(errno));
        w->f = fdopen(fd, "wb");
        if (!w->f) {
            close(fd);
            return gp_error_set(err, GP_EIO, w->path, "cannot open: %s", strerror(errno));
        }
        return GP_OK;
    }
    return gp_error_set(err, GP_EIO, dir, "too many event files named for the same second");
}

tfevents_writer *tfevents_open(const char *dir, gp_error *err)
{
    if (!dir || !*dir) {
        gp_error_set(err, GP_EINVAL, NULL, "no directory given for the event file");
        return NULL;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        gp_error_set(err, GP_EIO, dir, "cannot create directory: %s", strerror(errno));
        return NULL;
    }
    tfevents_writer *w = calloc(1, sizeof *w);
    if (!w) {
        gp_error_set(err, GP_ENOMEM, dir, "out of memory");
        return NULL;
    }
    if (create_file(w, dir, err) != GP_OK) {
        free(w);
        return NULL;
    }
    static const char version[] = "brain.Event:2";
    unsigned char buf[EVENT_BUF_MAX];
    size_t n = put_event_head(buf, 0);
    n += put_bytes(buf + n, PB_EVENT_FILE_VERSION, version, sizeof version - 1);
    write_record(w, buf, n);
    if (tfevents_flush(w, err) != GP_OK) {
        tfevents_close(w, NULL);
        return NULL;
    }
    return w;
}

gp_status tfevents_add_scalar(tfevents_writer *w, const char *tag, long long step, float value)
{
    if (!w || !tag)
        return GP_EINVAL;
    size_t tag_len = strlen(tag);
    if (tag_len == 0 || tag_len > TFEVENTS_TAG_MAX)
        return GP_EINVAL;
    if (w->write_failed)
        return GP_EIO;
    unsigned char val[EVENT_BUF_MAX], sum[EVENT_BUF_MAX], buf[EVENT_BUF_MAX];
    size_t nv = put_bytes(val, PB_VALUE_TAG, tag, tag_len);
    uint32_t fbits;
    memcpy(&fbits, &value, sizeof fbits);
    nv += put_varint(val + nv, PB_VALUE_SIMPLE);
    nv += put_le(val + nv, fbits, 4);
    size_t ns = put_bytes(sum, PB_SUMMARY_VALUE, val, nv);
    size_t n = put_event_head(buf, step);
    n += put_bytes(buf + n, PB_EVENT_SUMMARY, sum, ns);
    write_record(w, buf, n);
    return w->write_failed ? GP_EIO : GP_OK;
}

gp_status tfevents_flush(tfevents_writer *w, gp_error *err)
{
    if (!w)
        return gp_error_set(err, GP_EINVAL, NULL, "no event writer");
    if (!w->write_failed && fflush(w->f) != 0)
        w->write_failed = errno ? errno : EIO;
    if (w->write_failed)
        return gp_error_set(err, GP_EIO, w->path, "cannot write: %s", strerror(w->write_failed));
    return GP_OK;
}

gp_status tfevents_close(tfevents_writer *w, gp_error *err)
{
    if (!w)
        return GP_OK;
    gp_status rc = tfevents_flush(w, err);
    if (fclose(w->f) != 0 && rc == GP_OK)
        rc = gp_error_set(err, GP_EIO, w->path, "cannot close: %s", strerror(errno));
    free(w);
    return rc;
}

const char *tfevents_path(const tfevents_writer *w)
{
    return w ? w->path : NULL;
}
