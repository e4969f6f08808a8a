/* The CUDA backend lives in lib/libgp_train_cuda.so next to the binary's bin/ folder and is
 * loaded on first use: commands that never train on a GPU (report, diagnose, export, CPU
 * training) never map the CUDA runtime, cuBLAS and cuDNN, which measured ~220 MB of resident
 * memory at load, and gprof-train starts where those libraries are not installed.
 * GP_TRAIN_CUDA_LIB overrides the path. */
#include "backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CUDA_MODULE_NAME "libgp_train_cuda.so"

/* The loaded module: process-wide by nature (dlopen), set once under pthread_once. */
static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static const struct backend_ops *module_ops;
static int (*module_present)(void);
static const char *(*module_absent_why)(void);
static const char *(*module_simulated)(void);
static char module_why[320];

/* <dir of /proc/self/exe>/../lib/libgp_train_cuda.so, or $GP_TRAIN_CUDA_LIB. */
static int module_path(char *buf, size_t cap)
{
    const char *env = getenv("GP_TRAIN_CUDA_LIB");
    if (env && *env)
        return snprintf(buf, cap, "%s", env) < (int)cap ? 0 : -1;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return snprintf(buf, cap, "%s/../lib/" CUDA_MODULE_NAME, exe) < (int)cap ? 0 : -1;
}

/* Without the driver there is no device: say so, and leave the module (and its libraries)
 * unmapped. */
static int driver_present(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return 0;
    dlclose(h);
    return 1;
}

static void module_load(void)
{
    char path[PATH_MAX];
    if (!driver_present()) {
        snprintf(module_why, sizeof(module_why),
                 "no CUDA driver on this machine (libcuda.so.1 not found)");
        return;
    }
    if (module_path(path, sizeof(path)) != 0) {
        snprintf(module_why, sizeof(module_why), "cannot locate " CUDA_MODULE_NAME);
        return;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(module_why, sizeof(module_why),
                 "cannot load the CUDA backend: %s (add the library's folder to LD_LIBRARY_PATH)",
                 dlerror());
        return;
    }
    module_ops = (const struct backend_ops *)dlsym(h, "backend_cuda_ops");
    *(void **)&module_present = dlsym(h, "backend_cuda_present");
    *(void **)&module_absent_why = dlsym(h, "backend_cuda_absent_why");
    *(void **)&module_simulated = dlsym(h, "backend_cuda_simulated"); /* tests/simdev only */
    if (!module_ops || !module_present) {
        snprintf(module_why, sizeof(module_why), "'%.200s' is not gprof-train's CUDA backend",
                 path);
        module_ops = NULL;
        module_present = NULL;
    }
}

const struct backend_ops *train_cuda_ops(void)
{
    pthread_once(&module_once, module_load);
    return module_ops;
}

int train_cuda_present(void)
{
    pthread_once(&module_once, module_load);
    return module_present && module_present();
}

const char *train_cuda_why(void)
{
    pthread_once(&module_once, module_load);
    if (!module_ops)
        return module_why;
    if (module_present())
        return NULL;
    return module_absent_why ? module_absent_why() : "no usable CUDA device on this machine";
}

const char *train_cuda_simulated(void)
{
    pthread_once(&module_once, module_load);
    return module_ops && module_simulated ? module_simulated() : NULL;
}
