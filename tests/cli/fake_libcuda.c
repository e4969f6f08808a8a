/* A fake libcuda.so.1 for `gprof-train doctor` (issue 26): FAKE_CUDA=crash makes cuInit crash
 * (a broken driver), FAKE_CUDA=longname reports one GPU whose name fills the whole buffer with
 * no terminating NUL. Only what doctor's driver probe calls. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;

static int mode_is(const char *m)
{
    const char *v = getenv("FAKE_CUDA");
    return v && strcmp(v, m) == 0;
}

CUresult cuInit(unsigned flags)
{
    (void)flags;
    if (mode_is("crash"))
        raise(SIGSEGV);
    return 0;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return 0;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return 0;
}

CUresult cuDeviceGet(CUdevice *d, int i)
{
    *d = i;
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    memset(name, 'X', (size_t)len); /* no NUL: the caller must not read past len */
    return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    (void)attr, (void)d;
    *v = attr == 75 ? 9 : 0; /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 9.0 */
    return 0;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    (void)d;
    *bytes = (size_t)1 << 30;
    return 0;
}

CUresult cuGetErrorString(CUresult rc, const char **s)
{
    (void)rc;
    *s = "fake error";
    return 0;
}
