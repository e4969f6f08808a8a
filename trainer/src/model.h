/* trainer/src/model.h: the two bundled models as a list of layers over NCHW activations, with
 * every parameter in one flat fp32 array (weights then bias, layer by layer), so the optimizer,
 * the loss scaler and checkpoints see a single buffer. */
#ifndef GP_TRAINER_MODEL_H
#define GP_TRAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_LAYERS 12

enum model_kind { MODEL_MLP, MODEL_CNN };
enum layer_kind { LAYER_LINEAR, LAYER_RELU, LAYER_CONV3, LAYER_POOL2 };

/* One layer. Shapes per sample: input (cin, h, w), output (cout, oh, ow); a linear layer sees
 * its input flattened (cin = features, h = w = 1). */
struct layer_spec {
    enum layer_kind kind;
    int cin, h, w;
    int cout, oh, ow;
    size_t w_off, b_off; /* offsets of weight and bias in the flat parameter array */
    size_t w_len, b_len;
};

struct model_spec {
    enum model_kind kind;
    const char *name;
    int n_layers;
    struct layer_spec l[MODEL_MAX_LAYERS];
    int in_c, in_h, in_w; /* input image */
    int classes;
    size_t n_params;
};

/* Build the spec of `kind` for rows x cols single-channel images and 10 classes. */
void model_spec_init(struct model_spec *m, enum model_kind kind, int rows, int cols);

/* Per-sample element count of layer i's input (i = n_layers: of the logits). */
size_t model_act_size(const struct model_spec *m, int i);

/* With activation checkpointing: 1 when activation i (0 = input .. n_layers = logits) is kept
 * from forward to backward, 0 when it is dropped and recomputed from the kept one before it.
 * Kept: the input, each max-pool's output (a CNN block ends there), a ReLU's output unless a
 * max-pool follows, the last layer's input and the logits; so the mlp keeps 0, 2, 4, 5 (it drops
 * the pre-activations, which its backward never reads: nothing is recomputed) and the cnn 0, 3,
 * 6, 8, 9 (each conv block is recomputed from its input). */
int model_ckpt_kept(const struct model_spec *m, int i);

/* Backward about to run layer e - 1: the first layer of the checkpointed segment that ends
 * there (after the kept activation before it), whose forward makes the dropped activations
 * again; -1 when activation e - 1 is kept (`dropped`: one flag an activation). */
int model_ckpt_segment(const int *dropped, int e);

/* Per-sample activation floats checkpointing saves: those it drops, less the largest segment's
 * dropped set (live again while backward recomputes it). A ReLU fused into the layer before it
 * (`fused_relu`: MODEL_FUSE_CONV, the CPU backend's; | MODEL_FUSE_LINEAR under --fused) makes
 * that layer's own output never exist. */
#define MODEL_FUSE_CONV   1
#define MODEL_FUSE_LINEAR 2
size_t model_ckpt_saving(const struct model_spec *m, int fused_relu);

/* Largest per-sample activation of the model. */
size_t model_max_act(const struct model_spec *m);

/* PyTorch's default initialisation (kaiming_uniform with a = sqrt(5) for weights, and
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for biases), drawn from `seed`. */
void model_init_params(const struct model_spec *m, float *params, uint64_t seed);

#endif
