/* The batch loader: worker threads claim batch numbers in order, fill ring slots and mark them
 * READY; the training thread takes them in order and gives them back. Backpressure is the ring:
 * a worker whose slot is still in use waits, so memory stays bounded. */
#include "loader.h"
#include "gp/prof.h"
#include "rng.h"
#include "thread_stat.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_IN_USE };

struct slot {
    struct batch b;
    enum slot_state state;
    long long turn; /* the only batch number that may fill this slot next */
    void *mem;      /* x, y (one allocation from cfg.alloc) */
};

struct loader {
    struct loader_config cfg;
    int n_slots;
    struct slot *slots;
    int32_t *perm; /* permutation of the epoch `perm_epoch` */
    int perm_epoch;
    long long nb;    /* batches per epoch */
    long long total; /* batches in the run */
    long long next_claim, next_take;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    gp_status failed; /* first worker failure */
    gp_error fail_err;
    pthread_t *threads;
    int n_threads;
    int64_t worker_cpu_ns;  /* CPU time of the workers that have ended */
    int64_t worker_runq_ns; /* ...their time waiting for a core (-1 unknown) */
    uint8_t *inline_px;     /* pixel scratch for workers == 0 */
};

void loader_transform(float *out, const uint8_t *px, int rows, int cols, int augment, uint64_t seed,
                      int epoch, int index)
{
    int dx = 0, dy = 0, flip = 0;
    if (augment) {
        uint64_t s = rng_stream(seed, 0xA46u + (uint64_t)epoch, (uint64_t)index);
        dx = (int)rng_below(&s, 5) - 2;
        dy = (int)rng_below(&s, 5) - 2;
        flip = (int)rng_below(&s, 2);
    }
    for (int r = 0; r < rows; r++) {
        int sr = r + dy;
        for (int c = 0; c < cols; c++) {
            int sc = (flip ? cols - 1 - c : c) + dx;
            int v = sr >= 0 && sr < rows && sc >= 0 && sc < cols ? px[sr * cols + sc] : 0;
            out[r * cols + c] = (float)v * (2.0f / 255.0f) - 1.0f;
        }
    }
}

/* Fisher-Yates from (seed, epoch); identity without shuffling. */
static void make_perm(struct loader *l, int epoch)
{
    int n = l->cfg.ds->n;
    for (int i = 0; i < n; i++)
        l->perm[i] = i;
    if (l->cfg.shuffle) {
        uint64_t s = rng_stream(l->cfg.seed, 0x5EEDu, (uint64_t)epoch);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rng_below(&s, (uint32_t)i + 1);
            int32_t t = l->perm[i];
            l->perm[i] = l->perm[j];
            l->perm[j] = t;
        }
    }
    l->perm_epoch = epoch;
}

/* Under the lock: claim the next batch number and its slot (waiting for the slot to be free).
 * @return the slot, or NULL when the run is done or stopping. */
static struct slot *claim(struct loader *l)
{
    if (l->stop || l->failed || l->next_claim >= l->total)
        return NULL;
    long long seq = l->next_claim++;
    struct slot *s = &l->slots[seq % l->n_slots];
    /* FREE is not enough: with several workers, batch seq + n_slots may already wait here */
    while ((s->state != SLOT_FREE || s->turn != seq) && !l->stop && !l->failed)
        pthread_cond_wait(&l->cv, &l->mu);
    if (l->stop || l->failed)
        return NULL;
    int epoch = (int)(seq / l->nb);
    if (epoch != l->perm_epoch)
        make_perm(l, epoch);
    long long first = (seq % l->nb) * l->cfg.batch;
    int n = l->cfg.ds->n - first < l->cfg.batch ? (int)(l->cfg.ds->n - first) : l->cfg.batch;
    memcpy(s->b.index, l->perm + first, (size_t)n * sizeof(int32_t));
    s->b.n = n;
    s->b.epoch = epoch;
    s->b.step = seq % l->nb;
    s->b.seq = seq;
    s->state = SLOT_FILLING;
    return s;
}

/* Outside the lock: decode, augment and normalise the slot's samples. */
static gp_status fill(struct loader *l, struct slot *s, uint8_t *px, gp_error *err)
{
    const struct dataset *ds = l->cfg.ds;
    size_t area = (size_t)ds->rows * (size_t)ds->cols;
    for (int i = 0; i < s->b.n; i++) {
        int label;
        GP_TRY(dataset_get(ds, s->b.index[i], px, &label, err));
        loader_transform(s->b.x + i * area, px, ds->rows, ds->cols, l->cfg.augment, l->cfg.seed,
                         s->b.epoch, s->b.index[i]);
        s->b.y[i] = label;
    }
    return GP_OK;
}

/* Under the lock: publish a filled slot, or record the first failure. */
static void finish(struct loader *l, struct slot *s, gp_status rc, const gp_error *err)
{
    if (rc == GP_OK) {
        s->state = SLOT_READY;
    } else if (!l->failed) {
        l->failed = rc;
        l->fail_err = *err;
    }
    pthread_cond_broadcast(&l->cv);
}

static void name_thread(int id)
{
#ifdef GP_WITH_PROF
    char name[32];
    snprintf(name, sizeof(name), "DataLoader worker %d", id);
    gp_prof_thread_name(name);
#else
    (void)id;
#endif
}

struct worker_arg {
    struct loader *l;
    int id;
};

static void *worker_main(void *p)
{
    struct worker_arg *a = p;
    struct loader *l = a->l;
    name_thread(a->id);
    size_t area = (size_t)l->cfg.ds->rows * (size_t)l->cfg.ds->cols;
    uint8_t *px = malloc(area);
    gp_error err;
    gp_error_clear(&err);
    pthread_mutex_lock(&l->mu);
    if (!px)
        finish(l, NULL, gp_error_set(&err, GP_ENOMEM, NULL, "loader: out of memory"), &err);
    struct slot *s;
    while (px && (s = claim(l)) != NULL) {
        pthread_mutex_unlock(&l->mu);
        GP_PROF_PUSH("DataLoader.fetch_batch");
        gp_status rc = fill(l, s, px, &err);
        GP_PROF_POP();
        pthread_mutex_lock(&l->mu);
        finish(l, s, rc, &err);
    }
    l->worker_cpu_ns += thread_cpu_ns();
    int64_t runq = gp_prof_thread_runq_ns();
    l->worker_runq_ns = runq < 0 || l->worker_runq_ns < 0 ? -1 : l->worker_runq_ns + runq;
    pthread_mutex_unlock(&l->mu);
    free(px);
    free(a);
    return NULL;
}

static void *slot_alloc(const struct loader_config *c, size_t bytes)
{
    return c->alloc ? c->alloc(bytes, c->alloc_ud) : malloc(bytes);
}

static void slot_free(const struct loader_config *c, void *p)
{
    if (!p)
        return;
    if (c->free)
        c->free(p, c->alloc_ud);
    else
        free(p);
}

static gp_status alloc_slots(struct loader *l, gp_error *err)
{
    size_t area = (size_t)l->cfg.ds->rows * (size_t)l->cfg.ds->cols;
    size_t xbytes = (size_t)l->cfg.batch * area * sizeof(float);
    size_t bytes = xbytes + (size_t)l->cfg.batch * sizeof(int32_t);
    l->slots = calloc((size_t)l->n_slots, sizeof(*l->slots));
    l->perm = malloc((size_t)l->cfg.ds->n * sizeof(int32_t));
    l->inline_px = malloc(area);
    if (!l->slots || !l->perm || !l->inline_px)
        return gp_error_set(err, GP_ENOMEM, NULL, "loader: out of memory");
    for (int i = 0; i < l->n_slots; i++) {
        struct slot *s = &l->slots[i];
        s->mem = slot_alloc(&l->cfg, bytes);
        s->b.index = malloc((size_t)l->cfg.batch * sizeof(int32_t));
        if (!s->mem || !s->b.index)
            return gp_error_set(err, GP_ENOMEM, NULL,
                                "loader: cannot allocate %d slots of %zu bytes", l->n_slots, bytes);
        s->turn = i;
        s->b.x = s->mem;
        s->b.y = (int32_t *)((char *)s->mem + xbytes);
        s->b.bytes = bytes;
    }
    return GP_OK;
}

static gp_status start_workers(struct loader *l, gp_error *err)
{
    l->threads = calloc((size_t)l->cfg.workers, sizeof(*l->threads));
    if (!l->threads)
        return gp_error_set(err, GP_ENOMEM, NULL, "loader: out of memory");
    for (int i = 0; i < l->cfg.workers; i++) {
        struct worker_arg *a = malloc(sizeof(*a));
        if (!a)
            return gp_error_set(err, GP_ENOMEM, NULL, "loader: out of memory");
        a->l = l;
        a->id = i;
        if (pthread_create(&l->threads[i], NULL, worker_main, a) != 0) {
            free(a);
            return gp_error_set(err, GP_EIO, NULL, "loader: cannot start worker thread %d", i);
        }
        l->n_threads++;
    }
    return GP_OK;
}

gp_status loader_open(struct loader **out, const struct loader_config *cfg, gp_error *err)
{
    *out = NULL;
    GP_FAIL_IF(cfg->batch < 1 || cfg->workers < 0 || cfg->prefetch < 1 || cfg->epochs < 0 ||
                       cfg->ds->n < 1,
               GP_EINVAL, err, "loader: bad configuration");
    GP_FAIL_IF(cfg->drop_last && cfg->ds->n < cfg->batch, GP_EINVAL, err,
               "loader: drop_last with fewer samples (%d) than a batch (%d) leaves none",
               (int)cfg->ds->n, cfg->batch);
    struct loader *l = calloc(1, sizeof(*l));
    if (!l)
        return gp_error_set(err, GP_ENOMEM, NULL, "loader: out of memory");
    l->cfg = *cfg;
    l->n_slots = cfg->workers ? cfg->workers * cfg->prefetch : 2;
    l->nb = cfg->drop_last ? cfg->ds->n / cfg->batch : (cfg->ds->n + cfg->batch - 1) / cfg->batch;
    l->total = l->nb * cfg->epochs;
    l->perm_epoch = -1;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    gp_status rc = alloc_slots(l, err);
    if (rc == GP_OK)
        rc = start_workers(l, err);
    if (rc != GP_OK) {
        loader_close(l);
        return rc;
    }
    *out = l;
    return GP_OK;
}

long long loader_epoch_batches(const struct loader *l)
{
    return l->nb;
}

/* workers == 0: claim and fill the next batch here, in the training thread. */
static void fill_inline(struct loader *l)
{
    struct slot *s = claim(l);
    if (!s)
        return;
    gp_error err;
    gp_error_clear(&err);
    pthread_mutex_unlock(&l->mu);
    gp_status rc = fill(l, s, l->inline_px, &err);
    pthread_mutex_lock(&l->mu);
    finish(l, s, rc, &err);
}

gp_status loader_next(struct loader *l, struct batch **out, gp_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&l->mu);
    if (l->cfg.workers == 0)
        fill_inline(l);
    struct slot *s = &l->slots[l->next_take % l->n_slots];
    while (!l->failed && l->next_take < l->total &&
           !(s->state == SLOT_READY && s->b.seq == l->next_take))
        pthread_cond_wait(&l->cv, &l->mu);
    gp_status rc = l->failed;
    if (rc != GP_OK) {
        if (err)
            *err = l->fail_err;
    } else if (l->next_take < l->total) {
        s->state = SLOT_IN_USE;
        l->next_take++;
        *out = &s->b;
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

void loader_release(struct loader *l, struct batch *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&l->mu);
    struct slot *s = &l->slots[b->seq % l->n_slots];
    s->state = SLOT_FREE;
    s->turn = b->seq + l->n_slots;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
}

int64_t loader_join(struct loader *l, int64_t *runq_ns)
{
    if (runq_ns)
        *runq_ns = l ? l->worker_runq_ns : 0;
    if (!l)
        return 0;
    pthread_mutex_lock(&l->mu);
    l->stop = 1;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->n_threads; i++)
        pthread_join(l->threads[i], NULL);
    l->n_threads = 0;
    if (runq_ns)
        *runq_ns = l->worker_runq_ns;
    return l->worker_cpu_ns;
}

void loader_close(struct loader *l)
{
    if (!l)
        return;
    loader_join(l, NULL);
    for (int i = 0; l->slots && i < l->n_slots; i++) {
        slot_free(&l->cfg, l->slots[i].mem);
        free(l->slots[i].b.index);
    }
    free(l->slots);
    free(l->threads);
    free(l->perm);
    free(l->inline_px);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
