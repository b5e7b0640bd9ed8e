/* test_runs.c - whole `locklab run` invocations against a real, managed
 * redis-server: the known results, the reports, the exit codes, bad input,
 * and Ctrl-C. Each test reads report.json (and history.jsonl through
 * `locklab check`) and asserts what the run must have found.
 *
 * Durations are the scenarios' own where the verdict depends on them
 * (pause scenarios), shortened with --duration elsewhere to keep CI short.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin, *src;
static char tmp[256];
static int run_no;

struct outcome {
    int status; /* exit code; 128+N for a signal */
    char dir[512];
    char err[4096]; /* what it wrote on stderr */
    char out[16384];
};

static void slurp(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static pid_t spawn(char *const argv[], const char *out, const char *err, const char *mark)
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
            snprintf(wrap, sizeof(wrap), "%s/tests/redis-marker.sh", src);
            setenv("LOCKLAB_REDIS_SERVER", wrap, 1);
            setenv("LOCKLAB_MARK", mark, 1);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Wait for pid at most timeout_s; a hang is a failure, not a stuck CI. */
static int reap(pid_t pid, int timeout_s)
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
static void run(struct outcome *o, const char *mark, const char *a1, const char *a2,
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
    if (strcmp(a1, "run") == 0) {
        argv[n++] = "--out";
        argv[n++] = o->dir;
    }
    argv[n] = NULL;
    char out[600], err[600];
    snprintf(out, sizeof(out), "%s.out", o->dir);
    snprintf(err, sizeof(err), "%s.err", o->dir);
    o->status = reap(spawn(argv, out, err, mark), 120);
    slurp(out, o->out, sizeof(o->out));
    slurp(err, o->err, sizeof(o->err));
}

static void scenario_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/scenarios/%s", src, name);
}

static json_t *report(const struct outcome *o)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/report.json", o->dir);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        fail_msg("%s: %s (stderr: %s)", path, e.text, o->err);
    return j;
}

static json_int_t jint(json_t *root, const char *obj, const char *key)
{
    json_t *v = json_object_get(obj ? json_object_get(root, obj) : root, key);
    if (!json_is_integer(v))
        fail_msg("report.json: %s.%s is not an integer", obj ? obj : "", key);
    return json_integer_value(v);
}

static int jbool(json_t *root, const char *obj, const char *key)
{
    json_t *v = json_object_get(obj ? json_object_get(root, obj) : root, key);
    if (!json_is_boolean(v))
        fail_msg("report.json: %s.%s is not a boolean", obj ? obj : "", key);
    return json_is_true(v);
}

static int invariant_holds(json_t *root, const char *name)
{
    size_t i;
    json_t *inv;
    json_array_foreach(json_object_get(root, "invariants"), i, inv)
    {
        if (strcmp(json_string_value(json_object_get(inv, "name")), name) == 0)
            return json_is_true(json_object_get(inv, "holds"));
    }
    fail_msg("no invariant %s", name);
    return 0;
}

static void assert_files(const struct outcome *o)
{
    const char *files[] = {"report.json",  "report.md", "history.jsonl", "acquire.hgrm",
                           "release.hgrm", "hold.hgrm", "step.hgrm"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[700];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", o->dir, files[i]);
        if (stat(path, &st) != 0 || st.st_size == 0)
            fail_msg("missing or empty %s", path);
    }
}

/* The offline check of the written history must find what the run found. */
static void assert_check_agrees(const struct outcome *o, json_int_t violations)
{
    struct outcome c = {0};
    char hist[600], expect[32];
    snprintf(hist, sizeof(hist), "%s/history.jsonl", o->dir);
    snprintf(expect, sizeof(expect), "%lld", (long long)violations);
    const char *extra[] = {"--expect", expect, NULL};
    run(&c, NULL, "check", hist, extra);
    if (c.status != 0)
        fail_msg("locklab check disagrees with the run (%lld violations): %s%s",
                 (long long)violations, c.out, c.err);
}

/* A run's verdict: exit status and the safety figures in report.json. */
static json_t *run_scenario(struct outcome *o, const char *name, int want_status,
                            const char *const *extra)
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
    assert_check_agrees(o, jint(r, "checker", "violations"));
    return r;
}

static void flash_sale_on_redis_is_safe(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--duration", "5", "--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(jint(r, "checker", "sections") > 1000);
    assert_int_equal(jint(r, "scenario", "clients"), 32);
    assert_true(invariant_holds(r, "no_oversell"));
    assert_true(invariant_holds(r, "stock_accounting"));
    assert_true(jint(json_object_get(r, "operations"), "acquire", "count") > 1000);
    json_decref(r);
}

static void pause_past_ttl_without_fencing_oversells(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_pause.json", 0, extra);
    assert_true(jint(r, "checker", "violations") > 0);
    assert_false(invariant_holds(r, "no_oversell"));
    assert_false(invariant_holds(r, "stock_accounting"));
    json_t *f = json_array_get(json_object_get(r, "faults"), 0);
    assert_true(json_is_true(json_object_get(f, "fired")));
    /* Every listed violation happened while the pause was on. */
    json_t *v = json_array_get(json_object_get(json_object_get(r, "checker"), "listed"), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(v, "faults"), 0), "type")),
        "client_pause");
    json_decref(r);
}

static void pause_past_ttl_with_fencing_is_fenced(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_pause_fenced.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(jint(r, "checker", "fenced") > 0);
    assert_true(jint(r, "checker", "fenced_accesses") > 0);
    assert_true(jint(r, "checker", "overlaps") > 0); /* the lock was shared; the store said no */
    assert_true(invariant_holds(r, "no_oversell"));
    assert_true(invariant_holds(r, "stock_accounting"));
    json_decref(r);
}

static void watchdog_keeps_long_sections_safe(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--duration", "5", "--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_watchdog_long.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(jint(r, "counters", "renew_ok") > 10);
    assert_int_equal(jint(r, "counters", "renew_lost"), 0);
    json_decref(r);
}

static void watchdog_paused_with_its_holder_breaks(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_watchdog_pause.json", 0, extra);
    assert_true(jint(r, "checker", "violations") > 0);
    assert_true(jint(r, "counters", "renew_lost") + jint(r, "counters", "release_lost") > 0);
    json_decref(r);
}

static void naive_lock_violations_seen_by_checker_and_witness(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_naive_slow.json", 0, extra);
    assert_true(jint(r, "checker", "violations") > 0);
    assert_true(jint(r, "checker", "witness_concurrent_entries") > 0);
    json_decref(r);
}

static void crashed_holder_lock_expires_safely(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale_crash.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_int_equal(jint(r, "counters", "crashes"), 1);
    json_decref(r);
}

static void unmet_expectation_exits_1(void **state)
{
    (void)state;
    struct outcome o = {0};
    /* The pause scenario run without its fault window expects violations it cannot get. */
    const char *extra[] = {"--duration", "0.8", "--quiet", NULL};
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale_pause.json");
    run(&o, NULL, "run", path, extra);
    /* at_ms 1000 is past a 0.8 s run: rejected before anything starts. */
    assert_int_equal(o.status, 2);
    const char *extra2[] = {"--duration", "1.5", "--quiet", "--clients", "1", NULL};
    run(&o, NULL, "run", path, extra2);
    assert_int_equal(o.status, 1);
    assert_non_null(strstr(o.out, "End of run: FAIL"));
}

/* ---- bad input: one line, exit 2, no server ----------------------------- */

static void assert_rejected(const char *json, const char *const *extra, const char *want)
{
    char path[600], mark[600];
    snprintf(path, sizeof(path), "%s/bad-%d.json", tmp, run_no);
    snprintf(mark, sizeof(mark), "%s/mark-%d", tmp, run_no);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(json, f);
    fclose(f);
    struct outcome o = {0};
    run(&o, mark, "run", path, extra);
    if (o.status != 2 || strstr(o.err, want) == NULL)
        fail_msg("exit %d, stderr \"%s\"; want 2 and \"%s\"", o.status, o.err, want);
    /* Exactly one line. */
    char *nl = strchr(o.err, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
    struct stat st;
    if (stat(mark, &st) == 0)
        fail_msg("a redis-server was started for bad input: %s", json);
}

static void bad_input_is_rejected_before_anything_starts(void **state)
{
    (void)state;
    const char *none[] = {NULL};
    assert_rejected("{\"workload\": {\"type\": \"flash_sale\",}}", none, ":1:");
    assert_rejected("{\"clients\": \"many\", \"workload\": {\"type\": \"flash_sale\"}}", none,
                    "clients: expected an integer");
    assert_rejected("{\"workload\": {\"type\": \"flash_sale\", \"critcal_ms\": 5}}", none,
                    "did you mean \"critical_ms\"");
    assert_rejected("{\"clients\": 0, \"workload\": {\"type\": \"flash_sale\"}}", none, "clients");
    assert_rejected(
        "{\"lock\": {\"algorithm\": \"zoo\"}, \"workload\": {\"type\": \"flash_sale\"}}", none,
        "unknown algorithm");
    assert_rejected("{\"workload\": {\"type\": \"flash_sale\"}, \"faults\": [{\"at_ms\": -5, "
                    "\"type\": \"client_pause\", \"duration_ms\": 10}]}",
                    none, "faults[0].at_ms");
    const char *algo[] = {"--algorithm", "etcd", NULL};
    assert_rejected("{\"workload\": {\"type\": \"flash_sale\"}}", algo, "unknown algorithm");
    const char *clients[] = {"--clients", "0", NULL};
    assert_rejected("{\"workload\": {\"type\": \"flash_sale\"}}", clients, "--clients");
}

static void missing_server_binary_is_an_environment_error(void **state)
{
    (void)state;
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale.json");
    char *argv[] = {(char *)bin, "run", path, "--duration", "1", "--quiet", "--out", NULL, NULL};
    char dir[600], out[700], err[700];
    snprintf(dir, sizeof(dir), "%s/envfail", tmp);
    argv[7] = dir;
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    setenv("LOCKLAB_REDIS_SERVER", "/nonexistent/redis-server", 1);
    pid_t pid = spawn(argv, out, err, NULL);
    unsetenv("LOCKLAB_REDIS_SERVER");
    assert_int_equal(reap(pid, 60), 3);
    char text[1024];
    slurp(err, text, sizeof(text));
    assert_non_null(strstr(text, "redis-server"));
}

/* ---- Ctrl-C: a partial report, marked incomplete, and no server left ---- */

static void interrupt_writes_incomplete_report_and_stops_server(void **state)
{
    (void)state;
    char path[600], dir[400], out[700], err[700], mark[600];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/interrupted", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    snprintf(mark, sizeof(mark), "%s/mark-interrupt", tmp);
    char *argv[] = {(char *)bin, "run", path, "--duration", "60", "--quiet", "--out", dir, NULL};
    pid_t pid = spawn(argv, out, err, mark);
    sleep_ms(2500);
    kill(pid, SIGINT);
    assert_int_equal(reap(pid, 30), 130);

    struct outcome o = {0};
    snprintf(o.dir, sizeof(o.dir), "%s", dir);
    json_t *r = report(&o);
    assert_false(jbool(r, NULL, "complete"));
    assert_true(jint(r, "checker", "sections") > 0);
    json_decref(r);
    char hist[700], text[1 << 16];
    snprintf(hist, sizeof(hist), "%s/history.jsonl", dir);
    slurp(hist, text, sizeof(text));
    assert_true(strlen(text) > 0);

    char pids[64];
    slurp(mark, pids, sizeof(pids));
    pid_t server = (pid_t)atoi(pids);
    assert_true(server > 0);
    assert_int_equal(kill(server, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static int setup(void **state)
{
    (void)state;
    bin = getenv("LOCKLAB_BIN");
    src = getenv("LOCKLAB_SOURCE_DIR");
    if (bin == NULL || src == NULL)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s/locklab-runs-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(tmp) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flash_sale_on_redis_is_safe),
        cmocka_unit_test(pause_past_ttl_without_fencing_oversells),
        cmocka_unit_test(pause_past_ttl_with_fencing_is_fenced),
        cmocka_unit_test(watchdog_keeps_long_sections_safe),
        cmocka_unit_test(watchdog_paused_with_its_holder_breaks),
        cmocka_unit_test(naive_lock_violations_seen_by_checker_and_witness),
        cmocka_unit_test(crashed_holder_lock_expires_safely),
        cmocka_unit_test(unmet_expectation_exits_1),
        cmocka_unit_test(bad_input_is_rejected_before_anything_starts),
        cmocka_unit_test(missing_server_binary_is_an_environment_error),
        cmocka_unit_test(interrupt_writes_incomplete_report_and_stops_server),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
