/* gprof-train doctor: can this machine record GPU activity and train on its GPU? One line a
 * check (ok / problem / note, with a hint where there is something to do), like
 * `nsys status --environment`: the driver and its CUDA version, each GPU and its compute
 * capability against the architectures this build has kernels for, CUPTI and whether another
 * tool holds it, the CUDA libraries the trainer loads, the profiling permission, the clock the
 * ranges use, and the profiler library `run -- CMD` injects. Exit 0 when nothing blocks GPU
 * profiling, 2 when something does. Libraries are probed with dlopen and never kept. */
#include "cli.h"
#include "cmds.h"
#include "opt.h"
#include "run_child.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef GP_HAVE_CUPTI
#    include <cuda.h>
#    include <cupti.h>
#endif

enum verdict { V_OK, V_NOTE, V_PROBLEM };

static int n_problems;

static void line(enum verdict v, const char *what, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void line(enum verdict v, const char *what, const char *hint, const char *fmt, ...)
{
    static const char *const tag[] = {"ok", "note", "problem"};
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    printf("%-8s %-10s %s\n", tag[v], what, text);
    if (hint)
        printf("%-8s %-10s hint: %s\n", "", "", hint);
    n_problems += v == V_PROBLEM;
}

/* <dir of this binary>/../lib/NAME, if it exists. */
static int sibling_lib(const char *name, char *out, size_t cap)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/../lib/%s", exe, name);
    return realpath(path, out) && strlen(out) < cap && access(out, R_OK) == 0 ? 0 : -1;
}

static void check_build(void)
{
#ifdef GP_HAVE_CUDA
    line(V_OK, "build", NULL, "gprof-train %s with CUDA, kernels for %s", GP_VERSION,
         GP_CUDA_ARCHS);
#else
    line(V_NOTE, "build", "rebuild on a machine with the CUDA toolkit to train on a GPU",
         "gprof-train %s built without CUDA: CPU training and trace analysis only", GP_VERSION);
#endif
}

#ifdef GP_HAVE_CUPTI
/* Does this build run on compute capability `cc` (e.g. 86)? Machine code for the same major
 * version and an older or equal minor runs; PTX compiles for anything at least as new. */
static int build_runs_on(int cc)
{
#    ifdef GP_HAVE_CUDA
    char archs[256];
    snprintf(archs, sizeof(archs), "%s", GP_CUDA_ARCHS);
    for (char *save = NULL, *tok = strtok_r(archs, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        int a = atoi(tok);
        int sass = strstr(tok, "-virtual") == NULL, ptx = strstr(tok, "-real") == NULL;
        if ((sass && a / 10 == cc / 10 && a <= cc) || (ptx && a <= cc))
            return 1;
    }
#    else
    (void)cc;
#    endif
    return 0;
}

typedef struct driver_api {
    __typeof__(&cuInit) init;
    __typeof__(&cuDriverGetVersion) version;
    __typeof__(&cuDeviceGetCount) count;
    __typeof__(&cuDeviceGet) get;
    __typeof__(&cuDeviceGetName) name;
    __typeof__(&cuDeviceGetAttribute) attr;
    __typeof__(&cuDeviceTotalMem) mem;
    __typeof__(&cuGetErrorString) error;
} driver_api;

static int driver_load(void *h, driver_api *d)
{
    *(void **)&d->init = dlsym(h, "cuInit");
    *(void **)&d->version = dlsym(h, "cuDriverGetVersion");
    *(void **)&d->count = dlsym(h, "cuDeviceGetCount");
    *(void **)&d->get = dlsym(h, "cuDeviceGet");
    *(void **)&d->name = dlsym(h, "cuDeviceGetName");
    *(void **)&d->attr = dlsym(h, "cuDeviceGetAttribute");
    *(void **)&d->mem = dlsym(h, "cuDeviceTotalMem_v2");
    *(void **)&d->error = dlsym(h, "cuGetErrorString");
    return d->init && d->version && d->count && d->get && d->name && d->attr && d->mem && d->error
                   ? 0
                   : -1;
}

static void check_gpu(const driver_api *d, int i)
{
    CUdevice dev;
    char name[256] = "?";
    int major = 0, minor = 0;
    size_t mem = 0;
    if (d->get(&dev, i) != CUDA_SUCCESS)
        return;
    d->name(name, sizeof(name) - 1, dev);
    name[sizeof(name) - 1] = '\0'; /* a driver that fills the buffer leaves no terminator */
    d->attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d->attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d->mem(&mem, dev);
    char what[16];
    snprintf(what, sizeof(what), "gpu %d", i);
    int cc = major * 10 + minor;
    if (cc < 75)
        line(V_PROBLEM, what, "CUDA 13 supports compute capability 7.5 (Turing) and newer",
             "%s, compute capability %d.%d, %.1f GiB: too old for CUDA 13", name, major, minor,
             mem / 1073741824.0);
    else if (!build_runs_on(cc))
        line(V_PROBLEM, what, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=native",
             "%s, compute capability %d.%d, %.1f GiB: this build has no kernels for it", name,
             major, minor, mem / 1073741824.0);
    else
        line(V_OK, what, NULL, "%s, compute capability %d.%d, %.1f GiB", name, major, minor,
             mem / 1073741824.0);
}

/* @return 1 when a driver with at least one device answered. */
static int check_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    driver_api d;
    if (!h) {
        line(V_PROBLEM, "driver",
             "install the NVIDIA driver; on a CPU-only machine train with "
             "--device cpu and analyse traces (report, diagnose, export)",
             "no NVIDIA driver (libcuda.so.1 not found): GPU activity cannot be recorded");
        return 0;
    }
    if (driver_load(h, &d) != 0) {
        line(V_PROBLEM, "driver", NULL, "libcuda.so.1 lacks driver API entry points");
        return 0;
    }
    int version = 0, n = 0;
    CUresult rc = d.init(0);
    d.version(&version);
    const char *msg = NULL;
    if (rc != CUDA_SUCCESS || d.count(&n) != CUDA_SUCCESS || n == 0) {
        d.error(rc, &msg);
        line(V_PROBLEM, "driver", "check nvidia-smi and that /dev/nvidia* are accessible",
             "driver %d.%d found but no usable GPU (%s)", version / 1000, version % 1000 / 10,
             rc != CUDA_SUCCESS && msg ? msg : "no device");
        return 0;
    }
    if (version < 13000)
        line(V_PROBLEM, "driver", "update the driver to one that supports CUDA 13",
             "driver supports CUDA %d.%d; this build needs 13.0", version / 1000,
             version % 1000 / 10);
    else
        line(V_OK, "driver", NULL, "supports CUDA %d.%d, %d GPU(s)", version / 1000,
             version % 1000 / 10, n);
    for (int i = 0; i < n; i++)
        check_gpu(&d, i);
    return 1;
}

static void check_subscriber(void *h)
{
    __typeof__(&cuptiSubscribe) subscribe;
    __typeof__(&cuptiUnsubscribe) unsubscribe;
    *(void **)&subscribe = dlsym(h, "cuptiSubscribe");
    *(void **)&unsubscribe = dlsym(h, "cuptiUnsubscribe");
    CUpti_SubscriberHandle sub;
    if (!subscribe || !unsubscribe)
        return;
    CUptiResult rc = subscribe(&sub, NULL, NULL);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        line(V_PROBLEM, "cupti", "run without nsys, ncu or compute-sanitizer around gprof-train",
             "another tool holds CUPTI: GPU activity would not be recorded");
    else if (rc == CUPTI_SUCCESS)
        unsubscribe(sub);
}

static void check_cupti(int have_gpu)
{
    const char *const names[] = {
#    ifdef GP_CUPTI_LIBDIR
            GP_CUPTI_LIBDIR "/libcupti.so.13",
#    endif
            "libcupti.so.13"};
    void *h = NULL;
    const char *found = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
        if ((h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
            found = names[i];
    if (!h) {
        line(V_PROBLEM, "cupti",
             "install CUPTI (CUDA toolkit extras, or pip's nvidia-cuda-cupti) "
             "and put it on LD_LIBRARY_PATH",
             "libcupti.so.13 not found: only CPU ranges would be recorded");
        return;
    }
    __typeof__(&cuptiGetVersion) get_version;
    *(void **)&get_version = dlsym(h, "cuptiGetVersion");
    uint32_t v = 0;
    if (!get_version || get_version(&v) != CUPTI_SUCCESS || v < 130000)
        line(V_PROBLEM, "cupti", "use the CUPTI of CUDA 13",
             "%s is version %u; gprof-train "
             "reads CUDA 13 records (130000 or newer)",
             found, v);
    else
        line(V_OK, "cupti", NULL, "%s, API version %u", found, v);
    if (have_gpu)
        check_subscriber(h);
}
/* The driver and CUPTI are probed in a child process: a driver whose cuInit crashes must not
 * take doctor, and the lines already printed, with it. The child writes its phase to `fd`
 * ('d' driver, 'c' CUPTI) so that a crash is put where it happened, and exits with its count of
 * problems. */
static void probe_child(int fd)
{
    if (write(fd, "d", 1) != 1)
        _exit(127);
    int have_gpu = check_driver();
    fflush(stdout);
    if (write(fd, "c", 1) != 1)
        _exit(127);
    check_cupti(have_gpu);
    fflush(stdout);
    _exit(n_problems > 100 ? 100 : n_problems);
}

static void check_driver_and_cupti(void)
{
    int fds[2];
    fflush(stdout);
    pid_t pid = pipe(fds) == 0 ? fork() : -1;
    if (pid == 0) {
        close(fds[0]);
        probe_child(fds[1]);
    }
    if (pid < 0) {
        line(V_PROBLEM, "driver", NULL, "cannot start the driver probe: %s", strerror(errno));
        return;
    }
    close(fds[1]);
    char phase = 0, c;
    while (read(fds[0], &c, 1) == 1)
        phase = c;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) <= 100) {
        n_problems += WEXITSTATUS(status);
        return;
    }
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    line(V_PROBLEM, phase == 'c' ? "cupti" : "driver", "check nvidia-smi; reinstall the driver",
         "%s crashed while it was probed (%s %d%s%s): GPU activity cannot be recorded",
         phase == 'c' ? "CUPTI" : "the driver (cuInit or a device query)",
         sig ? "signal" : "exit status", sig ? sig : WEXITSTATUS(status),
         sig && run_signal_name(sig) ? ", " : "", sig ? run_signal_name(sig) : "");
}
#endif /* GP_HAVE_CUPTI */

static void check_libraries(void)
{
#ifdef GP_HAVE_CUDA
    static const char *const libs[] = {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13",
                                       "libcudnn.so.9"};
    char missing[256] = "";
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
        if (h)
            dlclose(h);
        else
            snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", libs[i]);
    }
    if (missing[0])
        line(V_NOTE, "libraries",
             "add their folder to LD_LIBRARY_PATH (pip: site-packages/"
             "nvidia/*/lib)",
             "not found: %s (needed to train on a GPU, not to profile other programs)", missing);
    else
        line(V_OK, "libraries", NULL, "CUDA runtime, cuBLAS, cuBLASLt and cuDNN load");
#endif
}

static void check_permission(void)
{
    FILE *f = fopen("/proc/driver/nvidia/params", "r");
    char buf[256];
    int admin_only = 0;
    while (f && fgets(buf, sizeof(buf), f))
        if (strncmp(buf, "RmProfilingAdminOnly: 1", 23) == 0)
            admin_only = 1;
    if (f)
        fclose(f);
    if (admin_only && geteuid() != 0)
        line(V_NOTE, "permission", NULL,
             "GPU performance counters are for administrators only (RmProfilingAdminOnly=1): "
             "ncu needs them, gprof-train's activity tracing does not");
}

static void check_clock(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char buf[4096];
    int tsc = 0;
    while (f && fgets(buf, sizeof(buf), f))
        if (strncmp(buf, "flags", 5) == 0) {
            tsc = strstr(buf, " constant_tsc") && strstr(buf, " nonstop_tsc");
            break;
        }
    if (f)
        fclose(f);
    const char *env = getenv("GP_PROF_CLOCK");
    if (tsc && !(env && strcmp(env, "realtime") == 0))
        line(V_OK, "clock", NULL,
             "invariant TSC: ranges are timed with rdtsc, converted to "
             "CLOCK_REALTIME (CUPTI's clock)");
    else
        line(V_OK, "clock", NULL, "ranges are timed with clock_gettime(CLOCK_REALTIME)%s",
             tsc ? " (GP_PROF_CLOCK=realtime)" : "");
}

static void check_profiler_library(void)
{
    char path[PATH_MAX];
    if (sibling_lib("libgp_prof.so", path, sizeof(path)) == 0)
        line(V_OK, "libprof", NULL, "%s (injected by 'gprof-train run -- CMD')", path);
    else
        line(V_PROBLEM, "libprof", "build the gp_prof target",
             "lib/libgp_prof.so not found next to the binary: 'run -- CMD' cannot inject it");
}

static const char *const usage[] = {
        "gprof-train doctor",
        NULL,
};

int cmd_doctor(int argc, const char **argv)
{
    const struct opt opts[] = {OPT_END()};
    const struct opt_help help = {
            "doctor", usage,
            "Check what GPU profiling and GPU training need on this machine: the driver, each GPU\n"
            "against this build's kernels, CUPTI, the CUDA libraries, permissions and the clock.\n"
            "Each line is ok, note or problem, with a hint. Exit 0 when nothing blocks GPU\n"
            "profiling, 2 when something does.",
            NULL, NULL};
    int n = opt_parse(argc, argv, opts, &help, 0);
    if (n < 0)
        return opt_exit_code(n);
    if (n > 0)
        return cli_error("unexpected argument '%s'", argv[0]);
    n_problems = 0;
    check_build();
#ifdef GP_HAVE_CUPTI
    check_driver_and_cupti();
#else
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    line(h ? V_NOTE : V_PROBLEM, "driver", NULL, "%s",
         h ? "an NVIDIA driver is installed; this build cannot use it (no CUDA)"
           : "no NVIDIA driver (libcuda.so.1 not found): GPU activity cannot be recorded");
#endif
    check_libraries();
    check_permission();
    check_clock();
    check_profiler_library();
    printf("%s\n", n_problems ? "GPU profiling is not possible here until the problems above "
                                "are fixed (CPU ranges, CPU training and trace analysis work)"
                              : "ready to profile GPU training");
    return n_problems ? CLI_ERROR : CLI_OK;
}
