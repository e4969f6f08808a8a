/* OpenBLAS, loaded when the CPU backend first needs it rather than linked into gprof-train: the
 * library starts its thread pool when it is loaded, and those threads spin for ~0.1 s, which took
 * a core from every command (a `report` parsing on both cores lost ~3%) though only training
 * multiplies matrices. */
#include "cpu_ops.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#ifndef GP_OPENBLAS_SONAME
#    define GP_OPENBLAS_SONAME "libopenblas.so.0"
#endif
#ifndef GP_OPENBLAS_PATH
#    define GP_OPENBLAS_PATH GP_OPENBLAS_SONAME
#endif

static __typeof__(&cblas_sgemm) sgemm_fn;
static int (*get_threads_fn)(void); /* openblas_get_num_threads: optional */
static void (*set_threads_fn)(int); /* openblas_set_num_threads: optional */
/* cblas_sbgemm: optional (OpenBLAS builds with BUILD_BFLOAT16 export it); bf16 = uint16_t bits */
typedef void (*sbgemm_t)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                         blasint, blasint, float, const uint16_t *, blasint, const uint16_t *,
                         blasint, float, float *, blasint);
static sbgemm_t sbgemm_fn;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen(GP_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen(GP_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof(load_error), "cannot load OpenBLAS (%s): %s",
                 GP_OPENBLAS_SONAME, dlerror());
        return;
    }
    sgemm_fn = (__typeof__(sgemm_fn))dlsym(h, "cblas_sgemm");
    *(void **)&get_threads_fn = dlsym(h, "openblas_get_num_threads");
    *(void **)&set_threads_fn = dlsym(h, "openblas_set_num_threads");
    *(void **)&sbgemm_fn = dlsym(h, "cblas_sbgemm");
    if (!sgemm_fn)
        snprintf(load_error, sizeof(load_error), "OpenBLAS (%s) has no cblas_sgemm",
                 GP_OPENBLAS_SONAME);
}

const char *cpu_blas_load(void)
{
    pthread_once(&load_once, load);
    return sgemm_fn ? NULL : load_error;
}

int cpu_blas_limit_threads(int most)
{
    if (cpu_blas_load() || !get_threads_fn || !set_threads_fn)
        return 0;
    int n = get_threads_fn();
    if (most > 0 && most < n)
        set_threads_fn(n = most);
    return n;
}

int cpu_blas_has_sbgemm(void)
{
    return !cpu_blas_load() && sbgemm_fn != NULL;
}

/* Under bf16 autocast: the inputs rounded to bf16, products summed in fp32. */
static void gemm_bf16(struct cpu_autocast *ac, int trans_a, int trans_b, int m, int n, int k,
                      float alpha, const float *a, int lda, const float *b, int ldb, float beta,
                      float *c, int ldc)
{
    const void *ra, *rb;
    int bits = sbgemm_fn != NULL;
    if (!cpu_autocast_gemm_inputs(ac, trans_a, trans_b, m, n, k, a, lda, b, ldb, bits, &ra, &rb))
        return; /* ac->failed: the backend reports it */
    enum CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
    if (bits)
        sbgemm_fn(CblasRowMajor, ta, tb, m, n, k, alpha, ra, lda, rb, ldb, beta, c, ldc);
    else
        sgemm_fn(CblasRowMajor, ta, tb, m, n, k, alpha, ra, lda, rb, ldb, beta, c, ldc);
}

void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    if (cpu_blas_load())
        return; /* cpu_open reported it: nothing computes without OpenBLAS */
    struct cpu_autocast *ac = cpu_autocast_current();
    if (ac) {
        gemm_bf16(ac, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    sgemm_fn(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
             trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
