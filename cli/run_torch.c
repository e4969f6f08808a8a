/* `gprof-train run -- CMD` on a PyTorch program: detection (a cheap scan of the script for an
 * import of torch), the --schedule syntax, and the environment that starts the hook in
 * cli/torch_hook/sitecustomize.py (copied to lib/gprof_train_hook/ next to bin/ at build). */
#include "run_torch.h"
#include "cli.h"
#include "cmds.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCAN_MAX (4 << 20) /* bytes of the script read to find "import torch" */

static int imports_torch(const char *text)
{
    return strstr(text, "import torch") || strstr(text, "from torch");
}

static int script_imports_torch(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *buf = malloc(SCAN_MAX + 1);
    size_t n = buf ? fread(buf, 1, SCAN_MAX, f) : 0;
    fclose(f);
    if (!buf)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    int yes = imports_torch(buf);
    free(buf);
    return yes;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* python [options] (SCRIPT | -c CODE | -m MODULE) ... */
static int python_uses_torch(const char *const *cmd)
{
    int i = 1;
    for (; cmd[i] && cmd[i][0] == '-' && cmd[i][1]; i++) {
        if (strcmp(cmd[i], "-c") == 0)
            return cmd[i + 1] && imports_torch(cmd[i + 1]);
        if (strcmp(cmd[i], "-m") == 0)
            return cmd[i + 1] && strncmp(cmd[i + 1], "torch.", 6) == 0;
        if ((strcmp(cmd[i], "-W") == 0 || strcmp(cmd[i], "-X") == 0) && cmd[i + 1])
            i++;
    }
    return cmd[i] && script_imports_torch(cmd[i]);
}

int run_torch_wanted(const struct run_exec_opts *v, const char *const *cmd)
{
    if (v->torch >= 0)
        return v->torch;
    const char *name = base_name(cmd[0]);
    if (strcmp(name, "torchrun") == 0)
        return 1;
    return strncmp(name, "python", 6) == 0 && python_uses_torch(cmd);
}

/* "wait=2,warmup=1,active=20,repeat=1" -> w[4]. @return 0, or -1 at the first bad item. */
static int parse_schedule(const char *spec, long w[4], const char **bad)
{
    static const char *const keys[4] = {"wait", "warmup", "active", "repeat"};
    const long defaults[4] = {2, 1, 20, 1};
    memcpy(w, defaults, sizeof(defaults));
    for (const char *p = spec; p && *p;) {
        *bad = p;
        size_t len = strcspn(p, ",");
        int k = 0;
        while (k < 4 && !(strncmp(p, keys[k], strlen(keys[k])) == 0 && p[strlen(keys[k])] == '='))
            k++;
        if (k == 4)
            return -1;
        char *end;
        errno = 0;
        w[k] = strtol(p + strlen(keys[k]) + 1, &end, 10);
        if (errno || end != p + len || end == p + strlen(keys[k]) + 1 || w[k] < 0 || w[k] > 1000000)
            return -1;
        p += len + (p[len] == ',');
    }
    *bad = spec;
    return w[2] >= 1 ? 0 : -1;
}

int run_torch_check_schedule(const char *spec)
{
    long w[4];
    const char *bad = spec;
    if (!spec || parse_schedule(spec, w, &bad) == 0)
        return CLI_OK;
    cli_error("invalid value '%s' for --schedule at '%s': expected wait=W,warmup=U,active=A,"
              "repeat=R (non-negative integers, active at least 1)",
              spec, bad);
    cli_hint("gprof-train run --schedule wait=5,warmup=1,active=10 -- python3 train.py");
    return CLI_ERROR;
}

/* <dir of this binary>/../lib/gprof_train_hook, absolute, with sitecustomize.py in it. */
static int find_hook(char *out, size_t cap)
{
    char exe[PATH_MAX], hook[PATH_MAX + 64], file[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return cli_error("cannot locate the gprof-train binary: %s", strerror(errno));
    exe[n] = '\0';
    snprintf(hook, sizeof(hook), "%s/../lib/gprof_train_hook", dirname(exe));
    if (!realpath(hook, out) || strlen(out) + 20 >= cap ||
        (snprintf(file, sizeof(file), "%s/sitecustomize.py", out), access(file, R_OK) != 0)) {
        cli_error("cannot find the PyTorch start-up hook '%s/sitecustomize.py'", hook);
        cli_hint("build the gprof-train target, which copies it there; or run with --no-torch");
        return CLI_ERROR;
    }
    return CLI_OK;
}

static int set_python_path(const char *hook)
{
    const char *old = getenv("PYTHONPATH");
    size_t len = strlen(hook) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (!path)
        return cli_error("out of memory");
    snprintf(path, len, "%s%s%s", hook, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", path, 1);
    free(path);
    return CLI_OK;
}

int run_torch_set_env(const struct run_exec_opts *v, const char *dir)
{
    char hook[PATH_MAX], sched[96];
    long w[4];
    const char *bad;
    int rc = find_hook(hook, sizeof(hook));
    if (rc != CLI_OK || (rc = set_python_path(hook)) != CLI_OK)
        return rc;
    parse_schedule(v->schedule, w, &bad); /* checked by run_torch_check_schedule */
    snprintf(sched, sizeof(sched), "%ld,%ld,%ld,%ld", w[0], w[1], w[2], w[3]);
    setenv("GP_TORCH_OUT", dir, 1);
    setenv("GP_TORCH_SCHEDULE", sched, 1);
    setenv("GP_TORCH_SHAPES", v->record_shapes ? "1" : "0", 1);
    setenv("GP_TORCH_MEMORY", v->profile_memory ? "1" : "0", 1);
    setenv("GP_TORCH_STACK", v->with_stack ? "1" : "0", 1);
    unsetenv("GP_TORCH_PID"); /* set by the process that profiles, for its children */
    fprintf(stderr,
            "gprof-train: a PyTorch program: profiling it with torch.profiler (schedule "
            "wait=%ld,warmup=%ld,active=%ld,repeat=%ld, a step per optimizer step); libprof is "
            "not injected: Kineto owns CUPTI\n",
            w[0], w[1], w[2], w[3]);
    return CLI_OK;
}

int run_torch_has_ranks(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, "rank", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9';
    if (d)
        closedir(d);
    return n > 0;
}
