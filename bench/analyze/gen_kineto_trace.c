/* Writes a Kineto-style trace (PyTorch 2.x layout: ProfilerStep#N, cpu_ops with Input Dims,
 * cuda_runtime launches, ac2g flows, kernels with Kineto's full arg set, memcpys, [memory]) of
 * at least the requested size, for bench_analyze.sh. usage: gen_kineto_trace OUT MEGABYTES */
#include <stdio.h>
#include <stdlib.h>

static const char *const ops[] = {"aten::linear",
                                  "aten::addmm",
                                  "aten::relu",
                                  "aten::add_",
                                  "aten::mul",
                                  "aten::conv2d",
                                  "aten::cudnn_convolution"};
static const char *const kernels[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3>)",
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4",
        "void cudnn::cnn::conv2d_grouped_direct_kernel<false, true, false, false, 0, 0, int, "
        "float>",
        "ampere_sgemm_128x64_tn"};

static void launch(FILE *f, long long ts, long ext, long corr, int k, int stream)
{
    fprintf(f,
            "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
            "\"pid\": 4242, \"tid\": 4242, \"ts\": %lld.%03d, \"dur\": 4.120, \"args\": "
            "{\"External id\": %ld, \"cbid\": 211, \"correlation\": %ld}},\n",
            ts, (int)(corr % 1000), ext, corr);
    fprintf(f,
            "  {\"ph\": \"s\", \"id\": %ld, \"pid\": 4242, \"tid\": 4242, \"ts\": %lld.%03d, "
            "\"cat\": \"ac2g\", \"name\": \"ac2g\"},\n",
            corr, ts, (int)(corr % 1000));
    fprintf(f,
            "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
            "\"ts\": %lld.500, \"dur\": %d.250, \"args\": {\"External id\": %ld, \"queued\": 0, "
            "\"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %ld, "
            "\"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 1.5, "
            "\"warps per SM\": 6.0, \"grid\": [162, 1, 1], \"block\": [128, 1, 1], "
            "\"est. achieved occupancy %%\": 12}},\n",
            kernels[k % 4], stream, ts + 8, 3 + k % 17, ext, stream, corr);
    fprintf(f,
            "  {\"ph\": \"f\", \"id\": %ld, \"pid\": 0, \"tid\": %d, \"ts\": %lld.500, "
            "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n",
            corr, stream, ts + 8);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *f = fopen(argv[1], "w");
    long long want = atoll(argv[2]) << 20;
    if (!f)
        return 1;
    fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": "
               "\"NVIDIA H100\", \"totalGlobalMem\": 85018279936, \"computeMajor\": 9, "
               "\"computeMinor\": 0, \"numSms\": 132}],\n  \"baseTimeNanoseconds\": "
               "1751410836000000000,\n  \"traceEvents\": [\n");
    long ext = 1, corr = 1;
    long long ts = 1000;
    for (int step = 1; ftell(f) < want; step++) {
        fprintf(f,
                "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
                "\"pid\": 4242, \"tid\": 4242, \"ts\": %lld.000, \"dur\": 20000.000, \"args\": "
                "{\"External id\": %ld}},\n",
                step, ts, ext++);
        for (int i = 0; i < 400; i++, ts += 50) {
            fprintf(f,
                    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 4242, "
                    "\"tid\": 4242, \"ts\": %lld.%03d, \"dur\": 40.500, \"args\": {\"External "
                    "id\": %ld, \"Record function id\": 0, \"Ev Idx\": %ld, \"Input Dims\": "
                    "[[64, 784], [784, 128], []], \"Input type\": [\"float\", \"float\", "
                    "\"Scalar\"], \"Sequence number\": %d, \"Fwd thread id\": 0}},\n",
                    ops[i % 7], ts + 1, i % 1000, ext, ext, i);
            launch(f, ts + 5, ext, corr++, i, 7 + i % 2);
            if (i % 50 == 0)
                fprintf(f,
                        "  {\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
                        "\"name\": \"[memory]\", \"pid\": 4242, \"tid\": 4242, \"ts\": %lld.0, "
                        "\"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": %d, "
                        "\"Bytes\": 512, \"Addr\": 140000000, \"Device Id\": 0, \"Device "
                        "Type\": 1}},\n",
                        ts + 2, 1024 + i);
            ext++;
        }
        ts += 1000;
    }
    fprintf(f,
            "  {\"ph\": \"i\", \"s\": \"g\", \"name\": \"Record Window End\", \"pid\": \"\", "
            "\"tid\": \"\", \"ts\": %lld.0}\n  ],\n  \"traceName\": \"bench\"\n}\n",
            ts);
    return fclose(f) == 0 ? 0 : 1;
}
