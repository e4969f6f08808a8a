/* Unit tests for the TensorBoard event-file writer (trainer/src/tfevents.c): CRC32C known
 * answers, TFRecord framing and CRCs read back from disk, the protobuf fields of a scalar
 * event, and the errors for bad arguments and unwritable directories. */
#include "gp_test.h"
#include "tfevents.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[256];

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Read the whole file at `path` into a malloc'd buffer. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

/* Check the framing of the record at `p` and return its payload and length, or NULL. */
static const unsigned char *record(const unsigned char *p, size_t avail, size_t *len)
{
    if (avail < 16)
        return NULL;
    uint64_t n = get_le(p, 8);
    if (get_le(p + 8, 4) != tfevents_masked_crc(p, 8) || avail < 16 + n)
        return NULL;
    if (get_le(p + 12 + n, 4) != tfevents_masked_crc(p + 12, n))
        return NULL;
    *len = (size_t)n;
    return p + 12;
}

static void test_crc_known_answers(void)
{
    /* CRC32C("123456789") = 0xE3069283 (RFC 3720 check value); masked as TFRecord does. */
    uint32_t crc = 0xE3069283u;
    uint32_t masked = ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
    GP_ASSERT_EQ_INT(tfevents_masked_crc("123456789", 9), masked);
    uint32_t zero = 0; /* CRC32C of nothing is 0 */
    GP_ASSERT_EQ_INT(tfevents_masked_crc("", 0), ((zero >> 15) | (zero << 17)) + 0xA282EAD8u);
}

static void test_file_round_trip(void)
{
    gp_error err;
    tfevents_writer *w = tfevents_open(tmp_dir, &err);
    GP_CHECK(w != NULL);
    GP_ASSERT_CONTAINS(tfevents_path(w), "/events.out.tfevents.");
    GP_ASSERT_OK(tfevents_add_scalar(w, "train/loss", 7, 0.5f));
    char path[4096];
    snprintf(path, sizeof path, "%s", tfevents_path(w));
    GP_ASSERT_OK(tfevents_close(w, &err));

    size_t len = 0, n1 = 0, n2 = 0;
    unsigned char *buf = slurp(path, &len);
    GP_CHECK(buf != NULL);
    const unsigned char *r1 = record(buf, len, &n1);
    GP_CHECK(r1 != NULL);
    const unsigned char *r2 = record(r1 + n1 + 4, len - (size_t)(r1 + n1 + 4 - buf), &n2);
    GP_CHECK(r2 != NULL);
    GP_ASSERT_EQ_INT((r2 + n2 + 4) - buf, len); /* exactly two records */
    GP_ASSERT_EQ_INT(r1[0], 0x09);              /* wall_time, fixed64 */
    GP_CHECK(memmem(r1, n1, "brain.Event:2", 13) != NULL);
    GP_ASSERT_EQ_INT(r2[9], 0x10); /* step */
    GP_ASSERT_EQ_INT(r2[10], 7);
    GP_ASSERT_EQ_INT(r2[11], 0x2a); /* summary */
    const unsigned char *tag = memmem(r2, n2, "train/loss", 10);
    GP_CHECK(tag != NULL);
    GP_ASSERT_EQ_INT(tag[10], 0x15); /* simple_value, fixed32 */
    float v;
    memcpy(&v, tag + 11, 4);
    GP_ASSERT_NEAR(v, 0.5, 0);
    free(buf);
    unlink(path);
}

static void test_second_writer_gets_new_name(void)
{
    tfevents_writer *a = tfevents_open(tmp_dir, NULL);
    tfevents_writer *b = tfevents_open(tmp_dir, NULL);
    GP_CHECK(a != NULL && b != NULL);
    GP_CHECK(strcmp(tfevents_path(a), tfevents_path(b)) != 0);
    unlink(tfevents_path(a));
    unlink(tfevents_path(b));
    GP_ASSERT_OK(tfevents_close(a, NULL));
    GP_ASSERT_OK(tfevents_close(b, NULL));
}

static void test_bad_arguments(void)
{
    gp_error err;
    char long_tag[TFEVENTS_TAG_MAX + 2];
    memset(long_tag, 'x', sizeof long_tag - 1);
    long_tag[sizeof long_tag - 1] = 0;
    GP_CHECK(tfevents_open(NULL, &err) == NULL);
    GP_ASSERT_EQ_INT(err.code, GP_EINVAL);
    GP_CHECK(tfevents_open("/nonexistent-gp-dir/a/b", &err) == NULL);
    GP_ASSERT_EQ_INT(err.code, GP_EIO);
    GP_ASSERT_STR_EQ(err.path, "/nonexistent-gp-dir/a/b");
    GP_ASSERT_EQ_INT(tfevents_add_scalar(NULL, "a", 0, 1.0f), GP_EINVAL);
    tfevents_writer *w = tfevents_open(tmp_dir, NULL);
    GP_CHECK(w != NULL);
    GP_ASSERT_EQ_INT(tfevents_add_scalar(w, "", 0, 1.0f), GP_EINVAL);
    GP_ASSERT_EQ_INT(tfevents_add_scalar(w, long_tag, 0, 1.0f), GP_EINVAL);
    long_tag[TFEVENTS_TAG_MAX] = 0; /* exactly the maximum is fine */
    GP_ASSERT_OK(tfevents_add_scalar(w, long_tag, -3, 1.0f));
    unlink(tfevents_path(w));
    GP_ASSERT_OK(tfevents_close(w, NULL));
    GP_ASSERT_OK(tfevents_close(NULL, NULL));
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "%s/test_train_tfevents.%d", GP_BUILD_DIR, (int)getpid());
    GP_RUN(test_crc_known_answers);
    GP_RUN(test_file_round_trip);
    GP_RUN(test_second_writer_gets_new_name);
    GP_RUN(test_bad_arguments);
    rmdir(tmp_dir);
    return gp_test_summary();
}
