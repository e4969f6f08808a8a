/* Running one command of a sweep: spawned with its output in a log file and timed, and reading
 * back what the trainer wrote (summary.json) and where (the run folder). */
#include "cli.h"
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int spawn_with_log(pid_t *pid, char *const *argv, const char *log)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return ENOMEM;
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (rc == 0)
        rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

int sweep_spawn(char *const *argv, const char *log, double *wall_s)
{
    pid_t pid;
    double t0 = now_s();
    int rc = spawn_with_log(&pid, argv, log);
    if (rc != 0) {
        cli_error("cannot run '%s': %s", argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            cli_error("cannot wait for '%s': %s", argv[0], strerror(errno));
            return -1;
        }
    *wall_s = now_s() - t0;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int sweep_summary_number(const char *summary_path, const char *key, double *out)
{
    FILE *f = fopen(summary_path, "r");
    if (!f)
        return 0;
    char buf[4096], pattern[64];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    snprintf(pattern, sizeof(pattern), "\"%s\":", key);
    const char *p = strstr(buf, pattern);
    if (!p)
        return 0;
    char *end;
    *out = strtod(p + strlen(pattern), &end);
    return end != p + strlen(pattern);
}

int sweep_run_dir(const char *dir, char *buf, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error("cannot open '%s': %s", dir, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        snprintf(buf, cap, "%s", path);
        found++;
    }
    closedir(d);
    if (found != 1)
        return cli_error("'%s' holds %d run folders, expected one", dir, found);
    return CLI_OK;
}
