/* harness.c - running the locklab binary from a test: spawn it with a
 * time limit, capture its output, read its report.json. */
#include "tests/lib/harness.h"
#include "tests/lib/scratch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *bin, *src;
char tmp[256];
int run_no;
static char made[256]; /* the folder harness_setup made; "" once removed */

void slurp(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

pid_t spawn(char *const argv[], const char *out, const char *err, const char *mark)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        if (mark) {
            /* Every redis-server locklab starts leaves its PID in `mark`. */
            char wrap[600];
            snprintf(wrap, sizeof(wrap), "%s/tests/lib/redis-marker.sh", src);
            setenv("LOCKLAB_REDIS_SERVER", wrap, 1);
            setenv("LOCKLAB_MARK", mark, 1);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Wait for pid at most timeout_s; a hang is a failure, not a stuck CI. */
int reap(pid_t pid, int timeout_s)
{
    int status;
    for (int i = 0; i < timeout_s * 100; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("locklab did not finish within %d s", timeout_s);
    return -1;
}

/* locklab ARGS... --out <fresh dir>; `extra` are appended. */
void run(struct outcome *o, const char *mark, const char *a1, const char *a2,
         const char *const *extra)
{
    char *argv[32];
    int n = 0;
    snprintf(o->dir, sizeof(o->dir), "%s/run-%d", tmp, run_no++);
    argv[n++] = (char *)bin;
    argv[n++] = (char *)a1;
    if (a2)
        argv[n++] = (char *)a2;
    for (; extra && *extra; extra++)
        argv[n++] = (char *)*extra;
    if (strcmp(a1, "run") == 0 || strcmp(a1, "compare") == 0) {
        argv[n++] = "--out";
        argv[n++] = o->dir;
        /* the tests read the text, and assert_check_agrees holds the
         * export of history.llh to it */
        argv[n++] = "--history-jsonl";
    }
    argv[n] = NULL;
    char out[600], err[600];
    snprintf(out, sizeof(out), "%s.out", o->dir);
    snprintf(err, sizeof(err), "%s.err", o->dir);
    o->status = reap(spawn(argv, out, err, mark), 120);
    slurp(out, o->out, sizeof(o->out));
    slurp(err, o->err, sizeof(o->err));
}

void scenario_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/scenarios/%s", src, name);
}

json_t *report(const struct outcome *o)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/report.json", o->dir);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        fail_msg("%s: %s (stderr: %s)", path, e.text, o->err);
    return j;
}

json_int_t jint(json_t *root, const char *obj, const char *key)
{
    json_t *v = json_object_get(obj ? json_object_get(root, obj) : root, key);
    if (!json_is_integer(v))
        fail_msg("report.json: %s.%s is not an integer", obj ? obj : "", key);
    return json_integer_value(v);
}

int jbool(json_t *root, const char *obj, const char *key)
{
    json_t *v = json_object_get(obj ? json_object_get(root, obj) : root, key);
    if (!json_is_boolean(v))
        fail_msg("report.json: %s.%s is not a boolean", obj ? obj : "", key);
    return json_is_true(v);
}

/* report.json's invariant of that name; fails the test when there is none. */
static json_t *invariant(json_t *root, const char *name)
{
    size_t i;
    json_t *inv;
    json_array_foreach(json_object_get(root, "invariants"), i, inv)
    {
        if (strcmp(json_string_value(json_object_get(inv, "name")), name) == 0)
            return inv;
    }
    fail_msg("no invariant %s", name);
    return NULL;
}

int invariant_holds(json_t *root, const char *name)
{
    return json_is_true(json_object_get(invariant(root, name), "holds"));
}

const char *invariant_detail(json_t *root, const char *name)
{
    return json_string_value(json_object_get(invariant(root, name), "detail"));
}

void assert_files(const struct outcome *o)
{
    const char *files[] = {"report.json",   "report.md",    "report.html",  "history.llh",
                           "history.jsonl", "acquire.hgrm", "release.hgrm", "hold.hgrm",
                           "step.hgrm",     "acquire.hlog", "release.hlog", "hold.hlog",
                           "step.hlog"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[700];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", o->dir, files[i]);
        if (stat(path, &st) != 0 || st.st_size == 0)
            fail_msg("missing or empty %s", path);
    }
}

/* True when the two files hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    int ca = 0;
    while (same && ca != EOF) {
        ca = getc(fa);
        same = ca == getc(fb);
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* `show --history` of the run's history.llh is its history.jsonl, byte
 * for byte: the binary form loses nothing the text says. */
static void assert_export_matches(const struct outcome *o)
{
    struct outcome x = {0};
    char text[600], exported[600];
    const char *dir[] = {o->dir, NULL};
    run(&x, NULL, "show", "--history", dir);
    if (x.status != 0)
        fail_msg("locklab show --history %s: exit %d: %s", o->dir, x.status, x.err);
    snprintf(text, sizeof(text), "%s/history.jsonl", o->dir);
    snprintf(exported, sizeof(exported), "%s.out", x.dir);
    if (!same_bytes(text, exported))
        fail_msg("the export of %s/history.llh (%s) differs from its history.jsonl", o->dir,
                 exported);
}

/* The offline check of the written history must find what the run found:
 * the same violations and the same fenced pairs. */
void assert_check_agrees(const struct outcome *o, json_int_t violations, json_int_t fenced_pairs)
{
    struct outcome c = {0};
    char hist[600], expect[32], figures[128];
    assert_export_matches(o);
    snprintf(hist, sizeof(hist), "%s/history.llh", o->dir);
    snprintf(expect, sizeof(expect), "%lld", (long long)violations);
    const char *extra[] = {"--expect", expect, NULL};
    run(&c, NULL, "check", hist, extra);
    if (c.status != 0)
        fail_msg("locklab check disagrees with the run (%lld violations): %s%s",
                 (long long)violations, c.out, c.err);
    long long v = (long long)violations, f = (long long)fenced_pairs;
    if (f > 0)
        snprintf(figures, sizeof(figures),
                 "%lld violation%s (%lld overlapping pair%s, %lld of them made safe by fencing)", v,
                 v == 1 ? "" : "s", v + f, v + f == 1 ? "" : "s", f);
    else
        snprintf(figures, sizeof(figures), "%lld violation%s (%lld overlapping pair%s)", v,
                 v == 1 ? "" : "s", v, v == 1 ? "" : "s");
    if (strstr(c.out, figures) == NULL)
        fail_msg("locklab check does not say \"%s\":\n%s", figures, c.out);
    assert_check_streams_as_whole(o->dir);
}

/* The whole file, or fail. */
static char *slurp_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *more = realloc(buf, cap + 1);
            assert_non_null(more);
            buf = more;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

void assert_check_streams_as_whole(const char *dir)
{
    const char *const files[] = {"history.llh", "history.jsonl"};
    for (size_t i = 0; i < 2; i++) {
        char hist[600];
        snprintf(hist, sizeof(hist), "%s/%s", dir, files[i]);
        struct outcome s = {0}, w = {0};
        const char *stream[] = {"--show-violations", "1000", NULL};
        const char *whole[] = {"--show-violations", "1000", "--in-memory", NULL};
        run(&s, NULL, "check", hist, stream);
        run(&w, NULL, "check", hist, whole);
        char path[600];
        snprintf(path, sizeof(path), "%s.out", s.dir);
        char *so = slurp_all(path);
        snprintf(path, sizeof(path), "%s.out", w.dir);
        char *wo = slurp_all(path);
        if (s.status != w.status || strcmp(so, wo) != 0)
            fail_msg("%s: check (exit %d) and check --in-memory (exit %d) differ:\n%s\n--- "
                     "in memory:\n%s",
                     hist, s.status, w.status, s.out, w.out);
        free(so);
        free(wo);
    }
}

/* A run's verdict: exit status and the safety figures in report.json. */
json_t *run_scenario(struct outcome *o, const char *name, int want_status, const char *const *extra)
{
    char path[600];
    scenario_path(path, sizeof(path), name);
    run(o, NULL, "run", path, extra);
    if (o->status != want_status)
        fail_msg("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, o->status, want_status,
                 o->out, o->err);
    assert_files(o);
    json_t *r = report(o);
    assert_true(jbool(r, NULL, "complete"));
    assert_true(jbool(r, "checker", "witness_agrees"));
    assert_int_equal(jint(r, "checker", "witness_concurrent_entries"),
                     jint(r, "checker", "concurrent_entries"));
    assert_check_agrees(o, jint(r, "checker", "violations"), jint(r, "checker", "fenced_pairs"));
    return r;
}

int harness_setup(void **state)
{
    (void)state;
    bin = getenv("LOCKLAB_BIN");
    src = getenv("LOCKLAB_SOURCE_DIR");
    if (bin == NULL || src == NULL)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s/locklab-runs-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmp) == NULL)
        return -1;
    /* mkdtemp's 0700 would stop the servers that run as their own user
     * (PostgreSQL, pgbouncer) from reaching their folders under it */
    if (chmod(tmp, 0711) < 0)
        return -1;
    snprintf(made, sizeof(made), "%s", tmp);
    return 0;
}

int pid_runs(pid_t pid)
{
    char path[64], text[512] = "";
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    slurp(path, text, sizeof(text));
    const char *p = strrchr(text, ')'); /* the command name may hold spaces */
    return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

json_t *report_fault(json_t *r, size_t i)
{
    json_t *f = json_array_get(json_object_get(r, "faults"), i);
    assert_non_null(f);
    return f;
}

pid_t start_marked_run(const char *scenario, const char *name, long after_ms, char *mark,
                       size_t len)
{
    char path[600], dir[400], out[700], err[700];
    scenario_path(path, sizeof(path), scenario);
    snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    snprintf(mark, len, "%s/mark-%s", tmp, name);
    char *argv[] = {(char *)bin, "run", path, "--quiet", "--out", dir, NULL};
    pid_t pid = spawn(argv, out, err, mark);
    sleep_ms(after_ms);
    return pid;
}

pid_t marked_server(const char *mark)
{
    char pids[64];
    slurp(mark, pids, sizeof(pids));
    pid_t server = (pid_t)atoi(pids);
    assert_true(server > 0);
    return server;
}

void assert_gone(pid_t pid)
{
    for (int i = 0; i < 100 && pid_runs(pid); i++)
        sleep_ms(50);
    assert_false(pid_runs(pid));
}

int harness_teardown(void **state)
{
    (void)state;
    /* Only the folder harness_setup made, once, and only while tmp still
     * names it. */
    if (made[0] != '\0' && strcmp(made, tmp) == 0)
        scratch_remove("harness", made);
    made[0] = '\0';
    return 0;
}

/* The state file's endpoint line for a kind, e.g. "redis=". */
static int state_line(const char *dir, const char *key, char *out, size_t len)
{
    char path[600], text[4096];
    snprintf(path, sizeof(path), "%s/state", dir);
    slurp(path, text, sizeof(text));
    const char *p = strstr(text, key);
    if (p == NULL)
        return -1;
    p += strlen(key);
    size_t n = strcspn(p, "\n");
    if (n == 0 || n >= len)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

/* `locklab cluster` with TMPDIR set to this test's folder: the cluster it
 * remembers (one at a time per TMPDIR) is this test's alone, whatever
 * else runs on the machine. */
static void cluster_command(struct outcome *o, const char *what, const char *const *args)
{
    const char *was = getenv("TMPDIR");
    char saved[256] = "";
    if (was)
        snprintf(saved, sizeof(saved), "%s", was);
    setenv("TMPDIR", tmp, 1);
    run(o, NULL, "cluster", what, args);
    if (was)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
}

void cluster_down(const char *dir)
{
    struct outcome o = {0};
    const char *at[] = {"--dir", dir, NULL};
    cluster_command(&o, "down", at);
}

int cluster_up(const char *dir, char *redis, size_t redis_len, char *zookeeper, size_t zk_len)
{
    struct outcome o = {0};
    const char *up[] = {"--redis-nodes", "5", "--zookeeper-nodes", "1", "--dir", dir, NULL};
    cluster_command(&o, "up", up);
    if (o.status == 0 && state_line(dir, "redis=", redis, redis_len) == 0 &&
        state_line(dir, "zookeeper=", zookeeper, zk_len) == 0)
        return 0;
    fprintf(stderr, "cluster up: exit %d\n%s%s", o.status, o.out, o.err);
    cluster_down(dir);
    return -1;
}
