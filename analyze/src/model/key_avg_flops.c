/* An op's FLOPs as PyTorch's profiler estimates them with with_flops=True (the formulas of
 * torch/csrc/profiler/util.cpp, saveExtraArgs + computeFlops, which the trace does not carry:
 * they are recomputed here from its "Input Dims" and, for aten::conv2d, "Concrete Inputs"):
 *   aten::mm, aten::addmm      2 * (mat1's elements / its last dim) * mat2's elements
 *   aten::bmm, aten::baddbmm   the same, also divided by mat1's first (batch) dim
 *   aten::conv2d               2 * N * H_out * W_out * kH * kW * C_in * C_out / groups
 *   aten::add, aten::mul       the first input's elements
 * mat1/mat2 are inputs 0 and 1 (mm, bmm) or 1 and 2 (addmm, baddbmm). Everything is unsigned
 * 64-bit arithmetic in PyTorch's order, so overflow and truncation match. Any other op, or a
 * missing or malformed input, is 0 FLOPs, as PyTorch's checks make it. */
#include "model/key_avg_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_IN  8 /* inputs read: conv2d's 7 */
#define MAX_DIM 4 /* dims kept: conv2d's 4; any number counts in prod and last */

/* An input's dims: n = -1 when it is no list of integers (None, a tensor list, ...); the first
 * MAX_DIM of them, the last, and the product of all (unsigned, in order, as PyTorch's loop). */
typedef struct op_dims {
    int n;
    int64_t d[MAX_DIM];
    int64_t last;
    uint64_t prod;
} op_dims;

static const char *skip_ws(const char *p)
{
    while (*p == ' ')
        p++;
    return p;
}

/* "[6, 1, 14, 14]" at p: its integers (n = -1 if anything else). */
static const char *int_list(const char *p, op_dims *out)
{
    out->n = -1;
    out->prod = 1;
    if (*p != '[')
        return p;
    p = skip_ws(p + 1);
    int n = 0;
    while (*p != ']') {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || n == 1 << 20)
            return p;
        if (n < MAX_DIM)
            out->d[n] = v;
        n++;
        out->last = v;
        out->prod *= (uint64_t)v;
        p = skip_ws(end);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != ']')
            return p;
    }
    out->n = n;
    return p + 1;
}

/* The first inputs of a shape text "[[6, 1, 14, 14], [4, 1, 3, 3], [4], [], None]".
 * @return how many inputs the text has (read or not), or INPUTS_MALFORMED. */
#define INPUTS_MALFORMED (-1)
static int parse_inputs(const char *s, op_dims in[MAX_IN])
{
    const char *p = skip_ws(s);
    if (*p++ != '[')
        return INPUTS_MALFORMED;
    int k = 0;
    for (p = skip_ws(p); *p && *p != ']'; k++) {
        op_dims dims;
        const char *q = int_list(p, &dims);
        if (dims.n < 0) /* not a list of integers: skip to the next top-level comma */
            for (int depth = 0; *q && (depth || (*q != ',' && *q != ']')); q++)
                depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
        if (k < MAX_IN)
            in[k] = dims;
        p = skip_ws(q);
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    return *p == ']' ? k : INPUTS_MALFORMED;
}

static uint64_t gemm_flops(const op_dims *m1, const op_dims *m2, int batched)
{
    if (m1->n <= 0 || m2->n < 0)
        return 0;
    int64_t overlap = m1->last, batch = m1->d[0];
    if (overlap == 0 || (batched && batch == 0))
        return 0;
    uint64_t f = m1->prod / (uint64_t)overlap;
    if (batched)
        f /= (uint64_t)batch;
    return f * m2->prod * 2;
}

/* The k-th string of a JSON array of strings ('["", "[1, 1]", "1"]') parsed as an integer list
 * ("[1, 1]") or, with scalar set, one integer ("1", as n = 1). n = -1 when it is neither. */
static void concrete_at(const char *s, int k, int scalar, op_dims *out)
{
    out->n = -1;
    const char *p = strchr(s, '[');
    for (int i = 0; p && *p; i++) {
        p = strchr(p, '"');
        if (!p)
            return;
        const char *v = ++p;
        while (*p && *p != '"')
            p += *p == '\\' && p[1] ? 2 : 1;
        if (i < k) {
            p += *p == '"';
            continue;
        }
        if (!scalar) {
            int_list(v, out);
            return;
        }
        char *end;
        out->d[0] = strtoll(v, &end, 10);
        out->n = end != v && end == p ? 1 : -1;
        return;
    }
}

static uint64_t conv2d_flops(const op_dims in[MAX_IN], int n_in, const char *concrete)
{
    op_dims stride, pad, dil, groups;
    if (n_in < 7 || in[0].n != 4 || in[1].n != 4 || !concrete)
        return 0;
    concrete_at(concrete, 3, 0, &stride);
    concrete_at(concrete, 4, 0, &pad);
    concrete_at(concrete, 5, 0, &dil);
    concrete_at(concrete, 6, 1, &groups);
    if (groups.n != 1 || groups.d[0] == 0 || pad.n != 2 || dil.n != 2 || stride.n != 2 ||
        stride.d[0] * stride.d[1] == 0)
        return 0;
    const int64_t *x = in[0].d, *w = in[1].d;
    uint64_t oh = ((uint64_t)x[2] + 2 * pad.d[0] - dil.d[0] * ((uint64_t)w[2] - 1) - 1) /
                          (uint64_t)stride.d[0] +
                  1;
    uint64_t ow = ((uint64_t)x[3] + 2 * pad.d[1] - dil.d[1] * ((uint64_t)w[3] - 1) - 1) /
                          (uint64_t)stride.d[1] +
                  1;
    return 2 * (uint64_t)x[0] * oh * ow * (uint64_t)w[2] * (uint64_t)w[3] * (uint64_t)x[1] *
           (uint64_t)w[0] / (uint64_t)groups.d[0];
}

static int name_is(const char *s, const char *op)
{
    return strcmp(s + 6, op) == 0;
}

uint64_t ka_op_flops(const gp_trace *t, const gp_event *e)
{
    const char *name = gp_trace_str(t, e->name);
    gp_str shape = gp_trace_event_shape(t, e);
    if (e->kind != GP_EV_CPU_OP || strncmp(name, "aten::", 6) != 0 || shape == GP_STR_NONE)
        return 0;
    op_dims in[MAX_IN];
    int n = parse_inputs(gp_trace_str(t, shape), in);
    if (n < 1 || in[0].n < 0)
        return 0;
    if (name_is(name, "add") || name_is(name, "mul"))
        return in[0].prod;
    int lead = name_is(name, "addmm") || name_is(name, "baddbmm");
    if (n >= 2 + lead && (name_is(name, "mm") || name_is(name, "addmm")))
        return gemm_flops(&in[lead], &in[1 + lead], 0);
    if (n >= 2 + lead && (name_is(name, "bmm") || name_is(name, "baddbmm")))
        return gemm_flops(&in[lead], &in[1 + lead], 1);
    if (name_is(name, "conv2d")) {
        gp_str c = gp_trace_event_concrete(t, e);
        return conv2d_flops(in, n, c == GP_STR_NONE ? NULL : gp_trace_str(t, c));
    }
    return 0;
}

int ka_trace_with_flops(const gp_trace *t)
{
    size_t n;
    const gp_kv *kv = gp_trace_meta(t, &n);
    const gp_kv *f = gp_kv_find(kv, n, "with_flops");
    return f && (f->type == GP_KV_INT || f->type == GP_KV_BOOL) && f->i != 0;
}
