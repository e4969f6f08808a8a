/* rules_fault_allow.c: how much of a call's time first-touch page faults could explain (GT19's
 * timing-only measure). glibc gives large freed blocks back to the OS (mmap'd above
 * MALLOC_MMAP_THRESHOLD_, the heap's top trimmed past MALLOC_TRIM_THRESHOLD_), so a training
 * loop that frees its tensors each step faults fresh pages in the next: a quiet 1-thread CNN
 * took 0-5301 minor faults a step, its step time tracking them (392 faults: 20-22 ms, 3074:
 * 27-33 ms) while its thread never waited for a core (run-queue 0.000-0.016 ms a step), and
 * a first touch cost 2.6-3.1 us a 4 KiB page on that VM (0.01 us a second touch). Such a call
 * is slower than its fastest by up to its fresh pages times that cost, and reads as a stall.
 *
 * The bound on the fresh memory a call touches, from its "Input Dims" alone (no output shapes
 * in a trace): its inputs (an in-place fill_ or zero_ on a new tensor is the first touch) plus
 * one output, the larger of the inputs' broadcast envelope (the largest size at each dimension,
 * aligned from the right) and, for a convolution, its output with the spatial size kept.
 * The envelope is the output of an elementwise or broadcasting op and of a reduction, and at
 * least the output of a matrix product ([M, K] x [K, N]: max(M, K) x max(K, N) >= M x N, also
 * with addmm's bias, linear's [N, K] weight and bmm's batch); a backward op's outputs are shaped
 * like its forward inputs, which it takes in. A convolution's output (x [N, Cin, H, W], w
 * [Cout, Cin, kH, kW]) outgrows its input Cout/Cin times: N x Cout x H x W, the output of a
 * stride-1 convolution padded to keep the size (a stride or less padding gives less). The
 * inputs' own bytes leave room for a workspace as large as them (a convolution's reorders).
 * Not covered: ops whose output outgrows every input in a dimension (a transposed convolution,
 * upsampling, repeat, embedding of many indices): the allowance falls short and a stall may
 * still count. Every element counts 4 bytes (float32; the trace's dtypes are not read): a
 * float64 tensor's allowance is half its due. */
#include "rules/rules_int.h"

#include <stdlib.h>
#include <string.h>

#define ENVELOPE_DIMS 8 /* dims of the envelope kept, from the right */
#define PAGE_BYTES    4096.0
#define ELEM_BYTES    4.0

struct tensor_sum {
    double elems;               /* the inputs' elements, all of them */
    double env[ENVELOPE_DIMS];  /* the envelope, env[0] the last dimension */
    int n_env;                  /* dims the envelope has */
    double dims[ENVELOPE_DIMS]; /* the tensor being read, in order */
    int n_dims;
    int n_tensors;                 /* tensors read so far */
    double x_elems, x_chan, w_out; /* a convolution's input: elements, dim 1; weight's dim 0 */
};

/* One tensor's dims read: add its elements and widen the envelope. */
static void close_tensor(struct tensor_sum *s)
{
    double prod = 1;
    for (int i = 0; i < s->n_dims; i++) {
        prod *= s->dims[i];
        int from_right = s->n_dims - 1 - i;
        if (from_right < ENVELOPE_DIMS && s->dims[i] > s->env[from_right])
            s->env[from_right] = s->dims[i];
    }
    s->elems += prod;
    if (s->n_tensors == 0 && s->n_dims >= 3)
        s->x_elems = prod, s->x_chan = s->dims[1];
    if (s->n_tensors == 1 && s->n_dims >= 3)
        s->w_out = s->dims[0];
    s->n_tensors++;
    if (s->n_dims > s->n_env)
        s->n_env = s->n_dims < ENVELOPE_DIMS ? s->n_dims : ENVELOPE_DIMS;
}

/* A forward convolution (input, weight, ...) by its name: "aten::conv2d", "aten::_convolution",
 * "aten::mkldnn_convolution", "aten::_slow_conv2d_forward"; not a backward or transposed one. */
static int is_conv_forward(const char *name)
{
    return strstr(name, "conv") && !strstr(name, "backward") && !strstr(name, "transpose");
}

/* The output: the envelope, or a convolution's N x Cout x H x W where that is more. */
static double output_elems(const struct tensor_sum *s, int conv)
{
    double env = s->n_env ? 1 : 0;
    for (int i = 0; i < s->n_env; i++)
        env *= s->env[i];
    double out = conv && s->x_chan > 0 ? s->x_elems / s->x_chan * s->w_out : 0;
    return out > env ? out : env;
}

/* The elements of the inputs plus an output's in "[[64, 16, 28, 28], [16, 1, 3, 3], [],
 * None]" (a tensor list's tensors count as inputs); RULES_UNREADABLE_SHAPE where the text is no
 * shape list. */
double rules_touched_elems(const char *name, const char *shape)
{
    struct tensor_sum s = {0};
    int depth = 0, innermost = 0;
    for (const char *p = shape; *p; p++) {
        if (*p == '[') {
            depth++, innermost = 1, s.n_dims = 0;
        } else if (*p == ']') {
            if (innermost)
                close_tensor(&s);
            innermost = 0;
            if (--depth < 0)
                return RULES_UNREADABLE_SHAPE;
        } else if (*p >= '0' && *p <= '9' && innermost) {
            char *end;
            double v = strtod(p, &end);
            if (s.n_dims < ENVELOPE_DIMS)
                s.dims[s.n_dims++] = v;
            p = end - 1;
        }
    }
    if (depth != 0)
        return RULES_UNREADABLE_SHAPE;
    return s.elems + output_elems(&s, is_conv_forward(name));
}

int64_t rules_fault_allowance(const char *name, const char *shape, double ns_per_page)
{
    double elems = rules_touched_elems(name, shape);
    if (elems <= 0 || ns_per_page <= 0)
        return 0;
    double pages = elems * ELEM_BYTES / PAGE_BYTES;
    return (int64_t)(pages * ns_per_page);
}

int64_t rules_call_faults(const struct rules_ctx *c, const gp_event *e, gp_str shape,
                          double ns_per_page)
{
    if (c->has_gpu || shape == GP_STR_NONE || e->kind != GP_EV_CPU_OP)
        return 0;
    return rules_fault_allowance(gp_trace_str(c->t, e->name), gp_trace_str(c->t, shape),
                                 ns_per_page);
}
