/* The bundled models: mlp = 784-128-64-10 with ReLU; cnn = conv3x3(32)+ReLU+maxpool2,
 * conv3x3(64)+ReLU+maxpool2, FC 128 + ReLU, FC 10 (the seeds' models). */
#include "model.h"
#include "rng.h"

#include <math.h>
#include <string.h>

/* Append a layer taking the current shape (c, h, w) and update it. */
static void add(struct model_spec *m, enum layer_kind kind, int cout, int *c, int *h, int *w)
{
    struct layer_spec *l = &m->l[m->n_layers++];
    memset(l, 0, sizeof(*l));
    l->kind = kind;
    l->cin = *c;
    l->h = *h;
    l->w = *w;
    switch (kind) {
    case LAYER_LINEAR:
        l->cin = *c * *h * *w;
        l->h = l->w = 1;
        l->cout = cout;
        l->oh = l->ow = 1;
        l->w_len = (size_t)cout * (size_t)l->cin;
        l->b_len = (size_t)cout;
        break;
    case LAYER_CONV3:
        l->cout = cout;
        l->oh = *h;
        l->ow = *w;
        l->w_len = (size_t)cout * (size_t)*c * 9;
        l->b_len = (size_t)cout;
        break;
    case LAYER_POOL2:
        l->cout = *c;
        l->oh = *h / 2;
        l->ow = *w / 2;
        break;
    case LAYER_RELU:
        l->cout = l->cin;
        l->oh = l->h;
        l->ow = l->w;
        break;
    }
    l->w_off = m->n_params;
    l->b_off = m->n_params + l->w_len;
    m->n_params += l->w_len + l->b_len;
    *c = l->cout;
    *h = l->oh;
    *w = l->ow;
}

void model_spec_init(struct model_spec *m, enum model_kind kind, int rows, int cols)
{
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->in_c = 1;
    m->in_h = rows;
    m->in_w = cols;
    m->classes = 10;
    int c = 1, h = rows, w = cols;
    if (kind == MODEL_MLP) {
        m->name = "mlp";
        add(m, LAYER_LINEAR, 128, &c, &h, &w);
        add(m, LAYER_RELU, 0, &c, &h, &w);
        add(m, LAYER_LINEAR, 64, &c, &h, &w);
        add(m, LAYER_RELU, 0, &c, &h, &w);
    } else {
        m->name = "cnn";
        add(m, LAYER_CONV3, 32, &c, &h, &w);
        add(m, LAYER_RELU, 0, &c, &h, &w);
        add(m, LAYER_POOL2, 0, &c, &h, &w);
        add(m, LAYER_CONV3, 64, &c, &h, &w);
        add(m, LAYER_RELU, 0, &c, &h, &w);
        add(m, LAYER_POOL2, 0, &c, &h, &w);
        add(m, LAYER_LINEAR, 128, &c, &h, &w);
        add(m, LAYER_RELU, 0, &c, &h, &w);
    }
    add(m, LAYER_LINEAR, m->classes, &c, &h, &w);
}

size_t model_act_size(const struct model_spec *m, int i)
{
    if (i >= m->n_layers) {
        const struct layer_spec *l = &m->l[m->n_layers - 1];
        return (size_t)l->cout * (size_t)l->oh * (size_t)l->ow;
    }
    const struct layer_spec *l = &m->l[i];
    return (size_t)l->cin * (size_t)l->h * (size_t)l->w;
}

int model_ckpt_kept(const struct model_spec *m, int i)
{
    if (i <= 0 || i >= m->n_layers - 1)
        return 1;
    enum layer_kind prev = m->l[i - 1].kind;
    return prev == LAYER_POOL2 || (prev == LAYER_RELU && m->l[i].kind != LAYER_POOL2);
}

int model_ckpt_segment(const int *dropped, int e)
{
    if (!dropped[e - 1] || dropped[e])
        return -1;
    int s = e - 1;
    while (s > 0 && dropped[s])
        s--;
    return s;
}

size_t model_ckpt_saving(const struct model_spec *m, int fused_relu)
{
    size_t dropped = 0, seg = 0, most = 0;
    for (int i = 1; i < m->n_layers; i++) {
        enum layer_kind prev = m->l[i - 1].kind;
        if (m->l[i].kind == LAYER_RELU &&
            (((fused_relu & MODEL_FUSE_CONV) && prev == LAYER_CONV3) ||
             ((fused_relu & MODEL_FUSE_LINEAR) && prev == LAYER_LINEAR)))
            continue;
        int drop = !model_ckpt_kept(m, i);
        dropped += drop ? model_act_size(m, i) : 0;
        seg = drop ? seg + model_act_size(m, i) : 0;
        most = seg > most ? seg : most;
    }
    return dropped - most;
}

size_t model_max_act(const struct model_spec *m)
{
    size_t best = 0;
    for (int i = 0; i <= m->n_layers; i++) {
        size_t s = model_act_size(m, i);
        best = s > best ? s : best;
    }
    return best;
}

void model_init_params(const struct model_spec *m, float *params, uint64_t seed)
{
    for (int i = 0; i < m->n_layers; i++) {
        const struct layer_spec *l = &m->l[i];
        if (!l->w_len)
            continue;
        uint64_t s = rng_stream(seed, 0x1417u, (uint64_t)i);
        size_t fan_in = l->w_len / (size_t)l->cout;
        /* kaiming_uniform(a = sqrt(5)) gives bound sqrt(6 / ((1 + 5) * fan_in)) = 1/sqrt(fan_in) */
        float bound = 1.0f / sqrtf((float)fan_in);
        for (size_t k = 0; k < l->w_len; k++)
            params[l->w_off + k] = rng_uniform(&s, -bound, bound);
        for (size_t k = 0; k < l->b_len; k++)
            params[l->b_off + k] = rng_uniform(&s, -bound, bound);
    }
}
