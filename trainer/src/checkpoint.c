/* Checkpoint files: a fixed header, fp32 weights, optimizer moments and a trailing CRC32
 * (zlib), all little-endian as the host writes them. */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CKPT_MAGIC   "GPTRAIN1"
#define CKPT_VERSION 1u

/* The most optimizer steps a checkpoint may record: a crafted INT64_MAX with a valid CRC made the
 * next step's count overflow. */
#define CKPT_MAX_STEPS (1LL << 53)

struct ckpt_header {
    char magic[8];
    uint32_t version, model, optimizer, reserved;
    uint64_t n_params;
    int64_t t;
};

static gp_status write_all(FILE *f, const void *p, size_t len, uLong *crc, const char *path,
                           gp_error *err)
{
    *crc = crc32(*crc, p, (uInt)len);
    if (fwrite(p, 1, len, f) != len)
        return gp_error_set(err, GP_EIO, path, "cannot write: %s", strerror(errno));
    return GP_OK;
}

static gp_status write_body(FILE *f, const struct model_spec *m, enum optim_kind opt,
                            const struct backend_state *st, const char *tmp, gp_error *err)
{
    struct ckpt_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, CKPT_MAGIC, 8);
    h.version = CKPT_VERSION;
    h.model = (uint32_t)m->kind;
    h.optimizer = (uint32_t)opt;
    h.n_params = m->n_params;
    h.t = st->t;
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t nopt = m->n_params * (size_t)backend_opt_slots(opt);
    GP_TRY(write_all(f, &h, sizeof(h), &crc, tmp, err));
    GP_TRY(write_all(f, st->params, m->n_params * sizeof(float), &crc, tmp, err));
    GP_TRY(write_all(f, st->opt, nopt * sizeof(float), &crc, tmp, err));
    uint32_t c = (uint32_t)crc;
    if (fwrite(&c, 1, sizeof(c), f) != sizeof(c) || fflush(f) != 0 || fsync(fileno(f)) != 0)
        return gp_error_set(err, GP_EIO, tmp, "cannot write: %s", strerror(errno));
    return GP_OK;
}

/* The file a checkpoint at `path` replaces: a symlink's target (the link stays), else `path`.
 * Malloc'd; NULL when out of memory. */
static char *replaced_file(const char *path)
{
    struct stat st;
    char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
    return real ? real : strdup(path);
}

/* "<file>.tmp.<pid>", allocated to fit: always longer than the file's name, never the file. */
static char *temp_name(const char *file)
{
    size_t n = strlen(file) + 32;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%s.tmp.%ld", file, (long)getpid());
    return tmp;
}

gp_status checkpoint_check_target(const char *path, gp_error *err)
{
    struct stat st;
    int linked = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return gp_error_set(err, GP_EINVAL, path, "cannot save a checkpoint: it is a directory");
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return gp_error_set(err, GP_EINVAL, path,
                            "cannot save a checkpoint: not a regular file (it would be replaced)");
    if (linked && stat(path, &st) != 0)
        return gp_error_set(err, GP_EINVAL, path,
                            "cannot save a checkpoint: a symlink that points to nothing");
    char *file = replaced_file(path), *tmp = file ? temp_name(file) : NULL;
    int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    int e = tmp ? errno : ENOMEM;
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    free(tmp);
    free(file);
    if (fd < 0)
        return gp_error_set(err, e == ENOMEM ? GP_ENOMEM : GP_EIO, path,
                            "cannot save a checkpoint there: %s", strerror(e));
    return GP_OK;
}

/* Write the checkpoint to `tmp`, with `old`'s mode when it replaces a file. */
static gp_status write_temp(const char *tmp, const struct stat *old, const struct model_spec *m,
                            enum optim_kind opt, const struct backend_state *st, gp_error *err)
{
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return gp_error_set(err, GP_EIO, tmp, "cannot create: %s", strerror(errno));
    if (old)
        fchmod(fileno(f), old->st_mode & 07777);
    gp_status rc = write_body(f, m, opt, st, tmp, err);
    if (fclose(f) != 0 && rc == GP_OK)
        rc = gp_error_set(err, GP_EIO, tmp, "cannot write: %s", strerror(errno));
    return rc;
}

gp_status checkpoint_save(const char *path, const struct model_spec *m, enum optim_kind opt,
                          const struct backend_state *st, gp_error *err)
{
    char *file = replaced_file(path), *tmp = file ? temp_name(file) : NULL;
    if (!tmp) {
        free(file);
        return gp_error_set(err, GP_ENOMEM, path, "out of memory");
    }
    struct stat old;
    int exists = stat(file, &old) == 0 && S_ISREG(old.st_mode);
    gp_status rc = write_temp(tmp, exists ? &old : NULL, m, opt, st, err);
    if (rc == GP_OK && rename(tmp, file) != 0)
        rc = gp_error_set(err, GP_EIO, path, "cannot rename '%s' to it: %s", tmp, strerror(errno));
    if (rc != GP_OK)
        unlink(tmp);
    free(tmp);
    free(file);
    return rc;
}

static gp_status read_all(FILE *f, void *p, size_t len, uLong *crc, const char *path,
                          long long *off, gp_error *err)
{
    size_t got = fread(p, 1, len, f);
    if (got != len) {
        gp_error_set(err, GP_EPARSE, path, "truncated checkpoint: %zu of %zu bytes", got, len);
        gp_error_at(err, *off + (long long)got, 0, 0);
        return GP_EPARSE;
    }
    if (crc)
        *crc = crc32(*crc, p, (uInt)len);
    *off += (long long)len;
    return GP_OK;
}

static const char *model_kind_name(uint32_t kind)
{
    return kind == MODEL_MLP ? "mlp" : kind == MODEL_CNN ? "cnn" : "unknown model";
}

static gp_status check_header(const struct ckpt_header *h, const struct model_spec *m,
                              const char *path, gp_error *err)
{
    if (memcmp(h->magic, CKPT_MAGIC, 8) != 0)
        return gp_error_set(err, GP_EPARSE, path, "not a gprof-train checkpoint (no magic bytes)");
    if (h->version != CKPT_VERSION)
        return gp_error_set(err, GP_EPARSE, path,
                            "checkpoint version %u, but this gprof-train reads version %u",
                            h->version, CKPT_VERSION);
    if (h->model != (uint32_t)m->kind || h->n_params != m->n_params)
        return gp_error_set(err, GP_EPARSE, path,
                            "checkpoint is for the %s (%llu parameters); --model %s has %zu",
                            model_kind_name(h->model), (unsigned long long)h->n_params, m->name,
                            m->n_params);
    if (h->optimizer > OPTIM_SGD)
        return gp_error_set(err, GP_EPARSE, path, "unknown optimizer %u", h->optimizer);
    return GP_OK;
}

static gp_status load_body(FILE *f, const char *path, const struct model_spec *m,
                           enum optim_kind opt, struct backend_state *st, int *opt_loaded,
                           gp_error *err)
{
    struct ckpt_header h;
    uLong crc = crc32(0L, Z_NULL, 0);
    long long off = 0;
    GP_TRY(read_all(f, &h, sizeof(h), &crc, path, &off, err));
    GP_TRY(check_header(&h, m, path, err));
    size_t saved = m->n_params * (size_t)backend_opt_slots((enum optim_kind)h.optimizer);
    float *moments = malloc(saved * sizeof(float) + 1);
    if (!moments)
        return gp_error_set(err, GP_ENOMEM, path, "out of memory");
    gp_status rc = read_all(f, st->params, m->n_params * sizeof(float), &crc, path, &off, err);
    if (rc == GP_OK)
        rc = read_all(f, moments, saved * sizeof(float), &crc, path, &off, err);
    uint32_t want = 0;
    if (rc == GP_OK)
        rc = read_all(f, &want, sizeof(want), NULL, path, &off, err);
    if (rc == GP_OK && want != (uint32_t)crc)
        rc = gp_error_set(err, GP_EPARSE, path, "checksum mismatch: the checkpoint is corrupt");
    if (rc == GP_OK && (h.t < 0 || h.t > CKPT_MAX_STEPS)) /* its optimizer counts on from it */
        rc = gp_error_set(err, GP_EPARSE, path,
                          "optimizer step count %lld is out of range (0 to 2^53)", (long long)h.t);
    *opt_loaded = rc == GP_OK && h.optimizer == (uint32_t)opt;
    size_t nopt = m->n_params * (size_t)backend_opt_slots(opt);
    if (*opt_loaded)
        memcpy(st->opt, moments, nopt * sizeof(float));
    else
        memset(st->opt, 0, nopt * sizeof(float));
    st->t = *opt_loaded ? h.t : 0;
    free(moments);
    return rc;
}

gp_status checkpoint_load(const char *path, const struct model_spec *m, enum optim_kind opt,
                          struct backend_state *st, int *opt_loaded, gp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return gp_error_set(err, GP_EIO, path, "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* fopen opens one for reading */
        fclose(f);
        return gp_error_set(err, GP_EINVAL, path, "is a directory, not a checkpoint file");
    }
    gp_status rc = load_body(f, path, m, opt, st, opt_loaded, err);
    fclose(f);
    return rc;
}
