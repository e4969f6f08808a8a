/* libprof's session: name interning, option checks, one session at a time, drop counting
 * with a full ring, and the window (schedule) arithmetic through real traces. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "gp/trace_schema.h"
#include "gp_test.h"
#include "prof_int.h"

static char *slurp(const char *path)
{
    static char buf[1 << 22];
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    int n = gzread(f, buf, sizeof(buf) - 1);
    gzclose(f);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void *intern_many(void *arg)
{
    uint32_t *ids = arg;
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        ids[i] = gp_prof_intern(name);
    }
    return NULL;
}

static void test_intern(void)
{
    gp_prof_name a = gp_prof_intern("alpha");
    GP_CHECK(a != 0);
    GP_ASSERT_EQ_INT(gp_prof_intern("alpha"), a);
    gp_prof_name op = gp_prof_intern_cat("alpha", GP_PROF_CAT_CPU_OP);
    GP_CHECK(op != a);
    GP_ASSERT_EQ_INT(prof_name_cat(op), GP_PROF_CAT_CPU_OP);
    GP_ASSERT_STR_EQ(prof_name_str(a), "alpha");
    GP_ASSERT_EQ_INT(gp_prof_intern(NULL), 0);
    static uint32_t ids[4][1000];
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, intern_many, ids[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 1000; i++) {
        GP_ASSERT_EQ_INT(ids[1][i], ids[0][i]);
        GP_ASSERT_EQ_INT(ids[3][i], ids[2][i]);
        GP_ASSERT_EQ_INT(ids[0][i], ids[2][i]);
    }
    GP_ASSERT_STR_EQ(prof_name_str(ids[0][999]), "n999");
}

static void test_bad_options(void)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/tmp/gp_prof_never.json";
    o.schedule.wait = -1;
    gp_error err;
    GP_ASSERT_EQ_INT(gp_prof_init(&o, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "schedule");
    GP_CHECK(!gp_prof_running());
    GP_ASSERT_OK(gp_prof_shutdown(NULL)); /* no session: nothing to do */
}

static void test_one_session_at_a_time(void)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/tmp/gp_prof_once.json";
    GP_ASSERT_OK(gp_prof_init(&o, NULL));
    gp_error err;
    GP_ASSERT_EQ_INT(gp_prof_init(&o, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "already running");
    GP_CHECK(gp_prof_trace_path() == NULL); /* not written yet */
    GP_ASSERT_OK(gp_prof_shutdown(NULL));
    GP_ASSERT_STR_EQ(gp_prof_trace_path(), "/tmp/gp_prof_once.json");
    unlink("/tmp/gp_prof_once.json");
}

static void test_full_ring_counts_drops(void)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/tmp/gp_prof_drops.json";
    o.buffer_bytes = 64 << 10;    /* at most 2048 records, in blocks of 256, 512, 1024 */
    o.flush_interval_ms = 100000; /* the writer drains only at shutdown */
    GP_ASSERT_OK(gp_prof_init(&o, NULL));
    gp_prof_name n = gp_prof_intern("r");
    for (int i = 0; i < 5000; i++) {
        gp_prof_push(n);
        gp_prof_pop();
    }
    GP_ASSERT_OK(gp_prof_shutdown(NULL));
    char *t = slurp("/tmp/gp_prof_drops.json");
    GP_CHECK(t != NULL);
    int kept = count(t, "\"name\":\"r\"");
    GP_CHECK(kept >= 1536 && kept <= 2048);
    char want[64];
    snprintf(want, sizeof(want), "\"" GP_CFG_DROPPED_RECORDS "\":%d,", 5000 - kept);
    GP_ASSERT_CONTAINS(t, want);
    snprintf(want, sizeof(want), "%d CPU record(s) dropped", 5000 - kept);
    GP_ASSERT_CONTAINS(t, want);
    GP_ASSERT_CONTAINS(t, "\"" GP_CFG_BUFFER_LIMIT "\":65536,");
    unlink("/tmp/gp_prof_drops.json");
}

static void test_repeat_schedule(void)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = "/tmp/gp_prof_sched.json.gz";
    o.schedule = (gp_prof_schedule){0, 1, 0, 1, 0}; /* every other step, forever */
    GP_ASSERT_OK(gp_prof_init(&o, NULL));
    GP_CHECK(!prof_recording(GP_PROF_RECORD_CPU)); /* step 0 waits */
    for (int i = 0; i < 6; i++) {
        GP_ASSERT_EQ_INT(gp_prof_step(), i);
        GP_ASSERT_EQ_INT(prof_recording(GP_PROF_RECORD_CPU) != 0, i % 2 == 1);
        GP_PROF_RANGE("body");
    }
    GP_ASSERT_OK(gp_prof_shutdown(NULL));
    GP_ASSERT_EQ_INT(gp_prof_step(), -1); /* no session */
    char *t = slurp("/tmp/gp_prof_sched.json.gz");
    GP_CHECK(t != NULL);
    GP_ASSERT_EQ_INT(count(t, "\"name\":\"body\""), 3);
    GP_ASSERT_EQ_INT(count(t, GP_NAME_STEP_PREFIX), 3);
    GP_ASSERT_CONTAINS(t, "ProfilerStep#5");
    GP_CHECK(strstr(t, "ProfilerStep#4") == NULL);
    unlink("/tmp/gp_prof_sched.json.gz");
}

static gp_status trace_to(const char *path, gp_error *err)
{
    gp_prof_options o;
    gp_prof_options_init(&o);
    o.output_path = path;
    GP_TRY(gp_prof_init(&o, err));
    GP_PROF_RANGE("r");
    return gp_prof_shutdown(err);
}

/* A null device of our own where we may make one (root), so that a writer that renames over
 * its target would replace this node and never the machine's /dev/null; else /dev/null itself,
 * which a user other than root cannot replace. */
static const char *null_device(const char *dir, char *buf, size_t cap)
{
    if (geteuid() != 0)
        return "/dev/null";
    snprintf(buf, cap, "%s/null", dir);
    if (mknod(buf, S_IFCHR | 0666, makedev(1, 3)) == 0)
        return buf;
    printf("note: cannot make a null device here (mknod: no CAP_MKNOD): device target not run\n");
    return NULL;
}

static int is_chr(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISCHR(st.st_mode);
}

/* What a trace path may name: a symlink is followed (the link stays, its file gets the trace);
 * a character device is written in place and never replaced (as root, a rename of
 * /dev/null.tmp over /dev/null made it a regular file: bench_prof_range did); a FIFO, a folder
 * or a dangling link are refused before anything is written. */
static void test_output_targets(void)
{
    char dir[] = "/tmp/gp_prof_targetsXXXXXX", file[256], link[256], fifo[256], nul[256];
    GP_CHECK(mkdtemp(dir) != NULL);
    gp_error err;
    struct stat st;
    snprintf(file, sizeof(file), "%s/t.json", dir);
    snprintf(link, sizeof(link), "%s/link.json", dir);
    GP_CHECK(close(open(file, O_WRONLY | O_CREAT, 0600)) == 0 && symlink(file, link) == 0);
    GP_ASSERT_OK(trace_to(link, &err));
    GP_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    GP_CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
    GP_ASSERT_CONTAINS(slurp(file), "\"" GP_KEY_TRACE_EVENTS "\"");
    const char *dev = null_device(dir, nul, sizeof(nul));
    if (dev) {
        GP_ASSERT_OK(trace_to(dev, &err));
        GP_CHECK(is_chr(dev));
        GP_ASSERT_STR_EQ(gp_prof_trace_path(), dev);
        unlink(link);
        GP_CHECK(symlink(dev, link) == 0);
        GP_ASSERT_OK(trace_to(link, &err));
        GP_CHECK(is_chr(dev) && lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    }
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    GP_CHECK(mkfifo(fifo, 0600) == 0);
    GP_ASSERT_EQ_INT(trace_to(fifo, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "is not a regular file or a character device");
    GP_ASSERT_EQ_INT(trace_to(dir, &err), GP_EINVAL);
    unlink(link);
    GP_CHECK(symlink("/nonexistent/gp", link) == 0);
    GP_ASSERT_EQ_INT(trace_to(link, &err), GP_EINVAL);
    GP_ASSERT_CONTAINS(err.msg, "symlink to nothing");
    GP_CHECK(!gp_prof_running());
    unlink(link), unlink(fifo), unlink(file), unlink(nul), rmdir(dir);
}

static void test_no_session_is_noop(void)
{
    gp_prof_push(gp_prof_intern("x"));
    gp_prof_pop();
    gp_prof_mark(1);
    gp_prof_counter(1, 2.0);
    gp_prof_step_end();
    GP_CHECK(!gp_prof_running());
}

int main(void)
{
    GP_RUN(test_intern);
    GP_RUN(test_bad_options);
    GP_RUN(test_no_session_is_noop);
    GP_RUN(test_one_session_at_a_time);
    GP_RUN(test_full_ring_counts_drops);
    GP_RUN(test_repeat_schedule);
    GP_RUN(test_output_targets);
    return gp_test_summary();
}
