// cuda_app.cu: known GPU work for the CUPTI test: KERNELS launches of scale_kernel, one H2D copy
// from pageable memory, one from pinned memory, one D2H into pageable memory, one cudaMalloc and
// its cudaFree. Prints what it did as one JSON line; exits 77 when there is no GPU.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>

#define KERNELS 5
#define N       (1 << 20)

__global__ void scale_kernel(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
        return 77;
    size_t bytes = N * sizeof(float);
    float *host = (float *)calloc(N, sizeof(float));
    float *pinned = NULL, *dev = NULL;
    cudaMallocHost((void **)&pinned, bytes);
    nvtxRangePushA("setup");
    cudaMalloc((void **)&dev, bytes);
    nvtxRangePop();
    nvtxRangePushA("work");
    cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice);
    for (int k = 0; k < KERNELS; k++)
        scale_kernel<<<(N + 255) / 256, 256>>>(dev, 2.0f, N);
    cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    nvtxRangePop();
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(host);
    cudaDeviceSynchronize();
    printf("{\"kernels\":%d,\"alloc\":%zu,\"copies\":[\"Memcpy HtoD (Pageable -> Device)\","
           "\"Memcpy HtoD (Pinned -> Device)\",\"Memcpy DtoH (Device -> Pageable)\"]}\n",
           KERNELS, bytes);
    return 0;
}
