/* What first-touch page faults may add to a call (rules_fault_allow.c, GT19's timing-only
 * measure): the elements of an op's inputs plus one output's, read from its "Input Dims". */
#include "rules/rules_int.h"
#include "gp_test.h"

/* An elementwise op: its inputs plus an output as large as the largest (the quiet CNN's
 * threshold_backward, 3.2 MB a tensor); a broadcast output is larger than either input. */
static void test_elementwise(void)
{
    const double t = 64.0 * 16 * 28 * 28;
    GP_ASSERT_NEAR(rules_touched_elems("aten::threshold_backward",
                                       "[[64, 16, 28, 28], [64, 16, 28, 28], []]"),
                   3 * t + 1, 0.5);
    GP_ASSERT_NEAR(rules_touched_elems("aten::fill_", "[[64, 16, 28, 28], []]"), 2 * t + 1, 0.5);
    GP_ASSERT_NEAR(rules_touched_elems("aten::add", "[[64, 1], [1, 32], []]"),
                   64 + 32 + 64 * 32 + 1, 0.5);
}

/* Matrix products: the envelope covers M x N (mm, addmm with its bias, linear's [N, K] weight). */
static void test_matrix_products(void)
{
    GP_ASSERT_NEAR(rules_touched_elems("aten::mm", "[[64, 64], [64, 1568]]"),
                   64 * 64 + 2 * 64 * 1568, 0.5);
    GP_CHECK(rules_touched_elems("aten::mm", "[[512, 1], [1, 512]]") >= 512 * 512);
    GP_CHECK(rules_touched_elems("aten::addmm", "[[10], [64, 64], [64, 10]]") >= 64 * 10);
    GP_CHECK(rules_touched_elems("aten::linear", "[[64, 1568], [64, 1568], [64]]") >= 64 * 64);
}

/* A forward convolution's output outgrows its input Cout/Cin times: N x Cout x H x W (the
 * broadcast envelope aligns the weight's Cout with the batch and would miss it). */
static void test_convolution(void)
{
    const char *s = "[[64, 1, 28, 28], [16, 1, 3, 3], [16], [], [], [], []]";
    double in = 64 * 28 * 28 + 16 * 9 + 16 + 4, out = 64.0 * 16 * 28 * 28;
    GP_ASSERT_NEAR(rules_touched_elems("aten::mkldnn_convolution", s), in + out, 0.5);
    GP_ASSERT_NEAR(rules_touched_elems("aten::conv2d", s), in + out, 0.5);
    /* backward: its outputs are shaped like its inputs; no Cout/Cin growth */
    double g = rules_touched_elems("aten::convolution_backward",
                                   "[[64, 16, 28, 28], [64, 1, 28, 28], [16, 1, 3, 3]]");
    GP_ASSERT_NEAR(g, 64.0 * 16 * 784 + 64 * 784 + 144 + 64.0 * 16 * 784, 0.5);
}

/* Tensor lists count their tensors (cat's output, 18, is within the inputs' 18 + the
 * envelope's 12); a scalar counts 1; a text that is no shape list is -1 and allows nothing. */
static void test_lists_and_malformed(void)
{
    GP_ASSERT_NEAR(rules_touched_elems("aten::cat", "[[[2, 3], [4, 3]], []]"), 6 + 12 + 1 + 12,
                   0.5);
    GP_CHECK(rules_touched_elems("aten::add", "[[64, 10]") < 0);
    GP_ASSERT_EQ_INT(rules_fault_allowance("aten::add", "[[64, 10]", 3000), 0);
    /* 3.2 MB of one tensor, 4 bytes an element: 784 pages + the output's 784, 3 us each */
    GP_ASSERT_NEAR((double)rules_fault_allowance("aten::fill_", "[[64, 16, 28, 28]]", 3000),
                   2 * 784 * 3000, 10);
}

int main(void)
{
    GP_RUN(test_elementwise);
    GP_RUN(test_matrix_products);
    GP_RUN(test_convolution);
    GP_RUN(test_lists_and_malformed);
    return gp_test_summary();
}
