/* test_fleet.c - every algorithm on every business scenario, the
 * side-by-side comparison, external endpoints, and the managed fleet for
 * manual use, all through the locklab binary against real servers.
 *
 * Runs are shortened with --duration to keep CI short; none of these
 * verdicts depends on the length: with no faults a correct lock must show
 * zero violations however long it runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/harness.h"

/* read_mostly.json names redisson-rw; with these its readers take the
 * lock exclusively. */
static const char *const scenarios[] = {"flash_sale.json", "cache_rebuild.json",
                                        "scheduled_tasks.json", "order_ids.json",
                                        "read_mostly.json"};

static void all_scenarios_safe_with(const char *algorithm)
{
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        struct outcome o = {0};
        const char *extra[] = {"--algorithm", algorithm, "--duration", "4", "--quiet", NULL};
        json_t *r = run_scenario(&o, scenarios[i], 0, extra);
        if (jint(r, "checker", "violations") != 0 || !jbool(r, NULL, "invariants_hold"))
            fail_msg("%s on %s: violations %lld, invariants_hold %d\n%s", algorithm, scenarios[i],
                     (long long)jint(r, "checker", "violations"), jbool(r, NULL, "invariants_hold"),
                     o.out);
        assert_true(jint(json_object_get(r, "operations"), "acquire", "count") > 0);
        assert_string_equal(json_string_value(json_object_get(r, "algorithm")), algorithm);
        json_decref(r);
    }
}

static void redis_keeps_every_scenario_safe(void **state)
{
    (void)state;
    all_scenarios_safe_with("redis");
}

static void redlock_keeps_every_scenario_safe(void **state)
{
    (void)state;
    all_scenarios_safe_with("redlock");
}

static void zookeeper_keeps_every_scenario_safe(void **state)
{
    (void)state;
    all_scenarios_safe_with("zookeeper");
}

/* The unsafe baseline must break each new invariant, or the workloads
 * could not tell a broken lock from a sound one. */
static void naive_lock_breaks_the_new_invariants(void **state)
{
    (void)state;
    static const char *const names[][2] = {
        {"cache_rebuild_naive_slow.json", "one_load_per_epoch"},
        {"scheduled_tasks_naive_slow.json", "no_duplicate_runs"},
        {"order_ids_naive_slow.json", "no_duplicate_id"},
        {"read_mostly_naive_slow.json", "no_torn_read"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct outcome o = {0};
        const char *extra[] = {"--duration", "4", "--quiet", NULL};
        json_t *r = run_scenario(&o, names[i][0], 0, extra);
        assert_true(jint(r, "checker", "violations") > 0);
        assert_false(invariant_holds(r, names[i][1]));
        json_decref(r);
    }
}

/* The figure after `what` in an invariant's detail ("... at most 12 at
 * once": "at most " gives 12); -1 when it is not there. */
static long long detail_figure(json_t *r, const char *name, const char *what)
{
    const char *d = invariant_detail(r, name);
    const char *at = d ? strstr(d, what) : NULL;
    return at ? strtoll(at + strlen(what), NULL, 10) : -1;
}

/* read_mostly: under a read-write lock readers share an entry (more than
 * one inside at once, no violation); under a mutex they never do. Either
 * way no reader sees a half-written entry. */
static void readers_share_under_a_read_write_lock_alone(void **state)
{
    (void)state;
    static const char *const locks[] = {"redisson-rw", "redisson"};
    for (size_t i = 0; i < 2; i++) {
        struct outcome o = {0};
        const char *extra[] = {"--algorithm", locks[i], "--duration", "3", "--quiet", NULL};
        json_t *r = run_scenario(&o, "read_mostly.json", 0, extra);
        assert_int_equal(jint(r, "checker", "violations"), 0);
        assert_true(invariant_holds(r, "no_torn_read"));
        long long most = detail_figure(r, "no_torn_read", "at most ");
        if (i == 0 ? most < 2 : most != 1)
            fail_msg("%s: at most %lld readers at once: %s", locks[i], most,
                     invariant_detail(r, "no_torn_read"));
        json_decref(r);
    }
}

/* pool_crash.json: one holder crashes with its permit. The semaphore never
 * gets it back (no owner, no lease): exactly one permit lost, measured by
 * the advisory invariant, and the run still passes, never over capacity. */
static void a_crashed_holder_loses_its_permit_for_good(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "pool_crash.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(invariant_holds(r, "never_over_capacity"));
    assert_false(invariant_holds(r, "every_permit_returned"));
    assert_true(jbool(r, NULL, "invariants_hold"));
    assert_int_equal(detail_figure(r, "every_permit_returned", ""), 1);
    assert_int_equal(detail_figure(r, "every_permit_returned", "lost availability); "), 1);
    assert_int_equal(detail_figure(r, "never_over_capacity", "at most "), 4);
    json_decref(r);
}

/* A hold shorter than the instances' lateness, on a correct lock: late
 * instances run the period again. The invariant breaks with no violation,
 * and the report lays the duplicates at the configuration's door, with the
 * hold that would have covered them. */
static void short_hold_duplicates_are_the_configurations(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *extra[] = {"--quiet", NULL};
    json_t *r = run_scenario(&o, "scheduled_tasks_short_hold.json", 0, extra);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_false(invariant_holds(r, "no_duplicate_runs"));
    const char *d = invariant_detail(r, "no_duplicate_runs");
    if (!strstr(d, ": 0 while another instance held the lock") ||
        !strstr(d, "by a late instance beyond hold") || !strstr(d, "would have covered them"))
        fail_msg("no_duplicate_runs: %s", d);
    json_decref(r);
}

/* ZooKeeper's token is the sequence number a client got when it queued,
 * long before its grant: so tokens of successive grants of the one key
 * that rise strictly mean every holder was served in queue order. */
static void zookeeper_serves_one_key_in_sequence_order(void **state)
{
    (void)state;
    struct outcome o = {0};
    /* A number of steps, not of seconds: how many grants 3 s hold depends
     * on the host's load, and the order check needs enough of them. */
    const char *extra[] = {"--requests", "150", "--duration", "120", "--quiet", NULL};
    json_decref(run_scenario(&o, "zookeeper_fair_queue.json", 0, extra));
    char path[700], line[1024];
    snprintf(path, sizeof(path), "%s/history.jsonl", o.dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    json_int_t last = 0, grants = 0;
    while (fgets(line, sizeof(line), f)) {
        json_t *e = json_loads(line, 0, NULL);
        assert_non_null(e);
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *fn = json_string_value(json_object_get(e, "f"));
        if (type && fn && strcmp(type, "ok") == 0 && strcmp(fn, "acquire") == 0) {
            json_int_t token = json_integer_value(json_object_get(e, "token"));
            if (token <= last)
                fail_msg("grant %lld has token %lld after %lld: out of sequence order",
                         (long long)grants, (long long)token, (long long)last);
            last = token;
            grants++;
        }
        json_decref(e);
    }
    fclose(f);
    assert_true(grants >= 150);
}

static json_t *load_json(const char *dir, const char *name)
{
    char path[700];
    json_error_t e;
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        fail_msg("%s/%s: path too long", dir, name);
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        fail_msg("%s: %s", path, e.text);
    return j;
}

/* The PostgreSQL locks side by side on each of the four scenarios: every
 * one that runs is safe; postgres-optimistic, no lock, is NOT RUN where
 * the section does more than write a value, with the reason. */
static void postgres_locks_compare_safe_or_say_why_not(void **state)
{
    (void)state;
    static const char *const four[] = {"flash_sale.json", "order_ids.json", "cache_rebuild.json",
                                       "scheduled_tasks.json"};
    for (size_t i = 0; i < 4; i++) {
        struct outcome o = {0};
        char path[600];
        scenario_path(path, sizeof(path), four[i]);
        const char *extra[] = {"--algorithms", "postgres-advisory,postgres-row,postgres-optimistic",
                               "--duration", "2", NULL};
        run(&o, NULL, "compare", path, extra);
        /* the scenarios are written for redis: no PostgreSQL lock is held to them */
        const char *end = i < 2 ? "\nEnd of compare: PASS; expectation (written for redis): not "
                                  "judged; safe: postgres-advisory, postgres-row, "
                                  "postgres-optimistic\n"
                                : "\nEnd of compare: PASS; expectation (written for redis): not "
                                  "judged; safe: postgres-advisory, postgres-row; NOT RUN: "
                                  "postgres-optimistic\n";
        if (o.status != 0 || strstr(o.out, end) == NULL)
            fail_msg("compare %s: exit %d\n%s\n%s", four[i], o.status, o.out, o.err);
        if (i >= 2 && strstr(o.out, "postgres-optimistic is not a lock: a refused write cannot "
                                    "undo") == NULL)
            fail_msg("compare %s: no reason for NOT RUN\n%s", four[i], o.out);
    }
}

static void compare_writes_one_table_for_all(void **state)
{
    (void)state;
    struct outcome o = {0};
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale.json");
    const char *extra[] = {"--algorithms", "redis,redlock,zookeeper", "--duration", "2", NULL};
    run(&o, NULL, "compare", path, extra);
    if (o.status != 0)
        fail_msg("compare: exit %d\n%s\n%s", o.status, o.out, o.err);
    assert_non_null(strstr(o.out, "\nEnd of compare: PASS; expectation (written for redis): met; "
                                  "safe: redis, redlock, zookeeper\n"));
    assert_non_null(strstr(o.out, "\nexpectation (written for redis): met - violations 0, "
                                  "invariants hold\n"));
    /* before each algorithm but the first, the wait for the servers to
     * settle, and what it came to, on stderr */
    assert_null(strstr(o.err, "locklab: before redis: "));
    static const char *const next[] = {"locklab: before redlock: ", "locklab: before zookeeper: "};
    for (size_t i = 0; i < 2; i++) {
        const char *at = strstr(o.err, next[i]);
        if (at == NULL)
            fail_msg("no \"%s\" on stderr:\n%s", next[i], o.err);
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(at, "\n"), at);
        if (strstr(line, "the servers were quiet (") == NULL &&
            strstr(line, " to settle (under 5 % of a core)") == NULL &&
            strstr(line, ", the bound, for the servers to settle; still busy: ") == NULL)
            fail_msg("what the wait came to is not said: %s", line);
    }
    json_t *c = load_json(o.dir, "compare.json");
    assert_string_equal(json_string_value(json_object_get(c, "schema")), "locklab.compare/3");
    assert_string_equal(json_string_value(json_object_get(c, "verdict")), "PASS");
    json_t *rows = json_object_get(c, "algorithms");
    assert_int_equal(json_array_size(rows), 3);
    static const char *const names[] = {"redis", "redlock", "zookeeper"};
    for (size_t i = 0; i < 3; i++) {
        json_t *row = json_array_get(rows, i);
        assert_string_equal(json_string_value(json_object_get(row, "algorithm")), names[i]);
        assert_string_equal(json_string_value(json_object_get(row, "verdict")), "safe");
        assert_int_equal(json_is_true(json_object_get(row, "scenario_lock")), i == 0);
        /* the lease beside the ttl: ZooKeeper's session, the others the ttl */
        json_int_t lease = json_integer_value(json_object_get(row, "lease_ms"));
        assert_int_equal(json_integer_value(json_object_get(row, "ttl_ms")), 10000);
        const char *text =
            json_string_value(json_object_get(json_object_get(row, "settings"), "text"));
        char session[64];
        snprintf(session, sizeof(session), "session_timeout=%lldms", (long long)lease);
        if (i == 2 ? strstr(text, session) == NULL : lease != 10000)
            fail_msg("%s: lease_ms %lld, its settings: %s", names[i], (long long)lease, text);
        assert_true(json_integer_value(json_object_get(row, "acquired")) > 0);
        assert_int_equal(json_integer_value(json_object_get(row, "violations")), 0);
        /* fencing off: nothing fenced, nothing rejected, and no old "fenced" */
        assert_int_equal(json_integer_value(json_object_get(row, "fenced_pairs")), 0);
        assert_int_equal(json_integer_value(json_object_get(row, "rejected_accesses")), 0);
        assert_null(json_object_get(row, "fenced"));
        assert_true(json_is_real(json_object_get(json_object_get(row, "acquire_ms"), "p99")));
        /* the table's row and that algorithm's own report agree */
        char dir[700];
        snprintf(dir, sizeof(dir), "%s/%s", o.dir, names[i]);
        json_t *r = load_json(dir, "report.json");
        assert_int_equal(jint(r, "counters", "acquire_ok"),
                         json_integer_value(json_object_get(row, "acquired")));
        json_decref(r);
        assert_non_null(strstr(o.out, names[i]));
    }
    json_decref(c);
    char md[700], text[8192];
    snprintf(md, sizeof(md), "%s/compare.md", o.dir);
    slurp(md, text, sizeof(text));
    assert_non_null(strstr(text, "| [redlock](redlock/report.md) |"));
    assert_non_null(strstr(text, "| [zookeeper](zookeeper/report.md) |"));
}

/* A row is judged by what happened in it: under the pause written for
 * redis ("violations": ">0"), postgres-advisory stays safe and says so,
 * and the comparison passes (exit 0) because redis met its expectation.
 * The old rule held every lock to redis's expectation: postgres-advisory
 * read FAIL for being safe, and compare exited 1. Two seeds: each row
 * lists each seed with its folder. */
static void compare_judges_each_lock_by_what_happened(void **state)
{
    (void)state;
    struct outcome o = {0};
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale_pause.json");
    const char *extra[] = {
        "--algorithms", "redis,postgres-advisory", "--duration", "4", "--seeds", "2", NULL};
    run(&o, NULL, "compare", path, extra);
    if (o.status != 0)
        fail_msg("compare: exit %d, expected 0\n%s\n%s", o.status, o.out, o.err);
    if (strstr(o.out, "\nEnd of compare: PASS; expectation (written for redis): met; UNSAFE: "
                      "redis; safe: postgres-advisory\n") == NULL ||
        strstr(o.out, "\nexpectation (written for redis): met in 2 of 2 seeds - violations >0, "
                      "invariants broken\n") == NULL)
        fail_msg("compare's verdict:\n%s", o.out);
    json_t *c = load_json(o.dir, "compare.json");
    assert_int_equal(json_integer_value(json_object_get(c, "seeds")), 2);
    json_t *rows = json_object_get(c, "algorithms");
    json_t *redis = json_array_get(rows, 0), *pg = json_array_get(rows, 1);
    assert_string_equal(json_string_value(json_object_get(redis, "verdict")), "UNSAFE");
    assert_string_equal(json_string_value(json_object_get(pg, "verdict")), "safe");
    assert_string_equal(json_string_value(json_object_get(pg, "safety_text")),
                        "safe in 2 of 2 seeds");
    assert_int_equal(json_integer_value(json_object_get(pg, "lease_ms")), 0); /* none */
    assert_non_null(strstr(o.out, "\npostgres-advisory    500     none "));
    for (size_t k = 0; k < 2; k++) {
        json_t *seed = json_array_get(json_object_get(pg, "seeds"), k);
        char dir[700], line[800];
        snprintf(dir, sizeof(dir), "%s/postgres-advisory/seed-%zu", o.dir, k + 1);
        assert_string_equal(json_string_value(json_object_get(seed, "run_dir")), dir);
        /* its own run judged by safety, not by redis's ">0" */
        json_t *r = load_json(dir, "report.json");
        assert_string_equal(json_string_value(json_object_get(r, "verdict")), "PASS");
        assert_string_equal(json_string_value(json_object_get(seed, "verdict")), "PASS");
        json_decref(r);
        snprintf(line, sizeof(line), "seed %zu: safe; stuck ", k + 1);
        assert_non_null(strstr(o.out, line));
        assert_non_null(strstr(o.out, dir));
    }
    json_decref(c);
}

/* The scenario's own lock missing its expectation is what fails a
 * comparison: exit 1, FAIL, and the row says which expectation. */
static void compare_fails_when_the_scenarios_lock_misses(void **state)
{
    (void)state;
    struct outcome o = {0};
    char path[600];
    scenario_path(path, sizeof(path), "../tests/fixtures/advisory_pause_expects_unsafe.json");
    const char *extra[] = {"--algorithms", "postgres-advisory,redis", NULL};
    run(&o, NULL, "compare", path, extra);
    if (o.status != 1)
        fail_msg("compare: exit %d, expected 1\n%s\n%s", o.status, o.out, o.err);
    if (strstr(o.out, "\nEnd of compare: FAIL; expectation (written for postgres-advisory): "
                      "missed; UNSAFE: redis; safe: postgres-advisory\n") == NULL ||
        strstr(o.out, "\nexpectation (written for postgres-advisory): missed - violations: "
                      "expected >0, got 0\n") == NULL ||
        strstr(o.out, "   expectation missed: violations: expected >0, got 0\n") == NULL)
        fail_msg("compare's verdict:\n%s", o.out);
    json_t *c = load_json(o.dir, "compare.json");
    assert_string_equal(json_string_value(json_object_get(c, "verdict")), "FAIL");
    json_t *x = json_object_get(c, "expectation");
    assert_string_equal(json_string_value(json_object_get(x, "state")), "missed");
    assert_string_equal(json_string_value(json_object_get(x, "written_for")), "postgres-advisory");
    json_decref(c);
}

/* With fencing on, the comparison keeps the two counts apart: overlapping
 * pairs fencing made safe, and the accesses the store rejected. */
static void compare_shows_fenced_pairs_and_rejected_accesses(void **state)
{
    (void)state;
    struct outcome o = {0};
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale_pause_fenced.json");
    const char *extra[] = {"--algorithms", "redis", "--duration", "5", NULL};
    run(&o, NULL, "compare", path, extra);
    if (o.status != 0)
        fail_msg("compare: exit %d\n%s\n%s", o.status, o.out, o.err);
    json_t *c = load_json(o.dir, "compare.json");
    json_t *row = json_array_get(json_object_get(c, "algorithms"), 0);
    assert_int_equal(json_integer_value(json_object_get(row, "violations")), 0);
    json_int_t pairs = json_integer_value(json_object_get(row, "fenced_pairs"));
    json_int_t rejected = json_integer_value(json_object_get(row, "rejected_accesses"));
    assert_true(pairs > 0);
    assert_true(rejected > 0);
    char dir[700];
    snprintf(dir, sizeof(dir), "%s/redis", o.dir);
    json_t *r = load_json(dir, "report.json");
    assert_int_equal(jint(r, "checker", "fenced_pairs"), pairs);
    assert_int_equal(jint(r, "checker", "rejected_accesses"), rejected);
    json_decref(r);
    json_decref(c);
    char md[700], text[8192], cells[64];
    snprintf(md, sizeof(md), "%s/compare.md", o.dir);
    slurp(md, text, sizeof(text));
    assert_non_null(strstr(text, "| violations | fenced pairs | rejected accesses |"));
    snprintf(cells, sizeof(cells), "| 0 | %lld | %lld |", (long long)pairs, (long long)rejected);
    assert_non_null(strstr(text, cells));
}

/* `locklab cluster`: the state file's endpoint line for a kind. */
static void state_line(const char *dir, const char *key, char *out, size_t len)
{
    char path[600], text[4096];
    snprintf(path, sizeof(path), "%s/state", dir);
    slurp(path, text, sizeof(text));
    const char *p = strstr(text, key);
    assert_non_null(p);
    p += strlen(key);
    size_t n = strcspn(p, "\n");
    assert_true(n < len);
    memcpy(out, p, n);
    out[n] = '\0';
}

static void state_pids(const char *dir, pid_t *pids, size_t *n)
{
    char path[600], line[256];
    snprintf(path, sizeof(path), "%s/state", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    *n = 0;
    while (fgets(line, sizeof(line), f) && *n < 16) {
        int pid, port;
        char kind[16];
        if (sscanf(line, "supervisor=%d", &pid) == 1 ||
            sscanf(line, "server=%15s %d %d", kind, &port, &pid) == 3)
            pids[(*n)++] = (pid_t)pid;
    }
    fclose(f);
}

static char cluster_dir[400], saved_tmpdir[256];
static int tmpdir_was_set;

/* The cluster tests keep their pointer file (TMPDIR/locklab-cluster-UID.current)
 * and server folders in this test's scratch folder: a cluster of the
 * engineer running the tests is not theirs to find or to stop. */
static void private_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    tmpdir_was_set = t != NULL;
    snprintf(saved_tmpdir, sizeof(saved_tmpdir), "%s", t ? t : "");
    setenv("TMPDIR", tmp, 1);
}

static void pointer_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/locklab-cluster-%u.current", tmp, (unsigned)getuid());
}

/* Whatever the test's outcome, the supervisor it started is stopped. */
static int cluster_teardown(void **state)
{
    (void)state;
    struct outcome o = {0};
    const char *at[] = {"--dir", cluster_dir, NULL};
    run(&o, NULL, "cluster", "down", at);
    if (tmpdir_was_set)
        setenv("TMPDIR", saved_tmpdir, 1);
    else
        unsetenv("TMPDIR");
    return 0;
}

static int exists_nonempty(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* A second cluster elsewhere is refused, on one line naming the first. */
static void assert_second_refused(const char *dir)
{
    char other[600], state[700], want[600];
    snprintf(other, sizeof(other), "%s/other", tmp);
    const char *up[] = {"--redis-nodes", "1", "--zookeeper-nodes", "0", "--dir", other, NULL};
    struct outcome o = {0};
    run(&o, NULL, "cluster", "up", up);
    snprintf(want, sizeof(want), "locklab: a cluster is already up in %s ", dir);
    if (o.status != 3 || strncmp(o.err, want, strlen(want)) != 0)
        fail_msg("second cluster up: exit %d, stderr \"%s\"; want 3 and \"%s...\"", o.status, o.err,
                 want);
    assert_int_equal(strchr(o.err, '\n')[1], '\0');
    snprintf(state, sizeof(state), "%s/state", other);
    assert_false(exists_nonempty(state));
}

/* After down: each server's log kept in DIR/logs, the state and the
 * pointer gone, no process left. */
static void assert_down_kept_logs(const char *dir, const struct outcome *o, const pid_t *pids,
                                  size_t n)
{
    char path[700], want[600];
    snprintf(want, sizeof(want), "their logs are in %s/logs\n", dir);
    if (strstr(o->out, want) == NULL)
        fail_msg("cluster down does not say \"%s\":\n%s", want, o->out);
    for (size_t i = 0; i + 1 < n; i++) { /* 5 redis, then the ZooKeepers: named per kind */
        snprintf(path, sizeof(path), "%s/logs/%s-%zu.log", dir, i < 5 ? "redis" : "zk",
                 i < 5 ? i + 1 : i - 4);
        if (!exists_nonempty(path))
            fail_msg("missing or empty %s after cluster down", path);
    }
    snprintf(path, sizeof(path), "%s/state", dir);
    assert_false(exists_nonempty(path));
    pointer_path(path, sizeof(path));
    assert_false(exists_nonempty(path));
    for (size_t i = 0; i < n; i++)
        if (pid_runs(pids[i]))
            fail_msg("pid %d still runs after cluster down", (int)pids[i]);
}

static void cluster_up_serves_runs_until_down(void **state)
{
    (void)state;
    char *dir = cluster_dir, redis[400], zk[200], path[600];
    private_tmpdir();
    snprintf(cluster_dir, sizeof(cluster_dir), "%s/cluster", tmp);
    const char *up[] = {"--redis-nodes", "5", "--zookeeper-nodes", "3", "--dir", dir, NULL};
    struct outcome o = {0};
    run(&o, NULL, "cluster", "up", up);
    if (o.status != 0)
        fail_msg("cluster up: exit %d\n%s%s", o.status, o.out, o.err);
    assert_non_null(strstr(o.out, "--redis 127.0.0.1:"));
    state_line(dir, "redis=", redis, sizeof(redis));
    state_line(dir, "zookeeper=", zk, sizeof(zk));
    pid_t pids[16];
    size_t n;
    state_pids(dir, pids, &n);
    assert_int_equal(n, 9); /* supervisor, 5 redis, a 3-node ZooKeeper ensemble */
    assert_int_equal(strchr(strchr(zk, ',') + 1, ',') != NULL, 1);

    /* external endpoints: runs use the fleet without starting anything */
    scenario_path(path, sizeof(path), "flash_sale.json");
    const char *rl[] = {"--algorithm", "redlock", "--redis", redis,
                        "--duration",  "2",       "--quiet", NULL};
    json_t *r = run_scenario(&o, "flash_sale.json", 0, rl);
    json_t *servers = json_object_get(r, "servers");
    assert_int_equal(json_array_size(servers), 5);
    assert_non_null(strstr(json_string_value(json_array_get(servers, 0)), "(external)"));
    json_decref(r);
    const char *zo[] = {"--algorithm", "zookeeper", "--zookeeper", zk,
                        "--duration",  "2",         "--quiet",     NULL};
    json_decref(run_scenario(&o, "flash_sale.json", 0, zo));

    /* without --dir, status and down find the cluster where up started it */
    const char *at[] = {"--dir", dir, NULL};
    run(&o, NULL, "cluster", "status", at);
    assert_int_equal(o.status, 0);
    assert_null(strstr(o.out, "DOWN"));
    /* each server by the name its log is kept under */
    assert_non_null(strstr(o.out, "\n  redis-5      redis      127.0.0.1:"));
    assert_non_null(strstr(o.out, "\n  zk-3         zookeeper  127.0.0.1:"));
    run(&o, NULL, "cluster", "status", NULL);
    assert_int_equal(o.status, 0);
    assert_non_null(strstr(o.out, dir));
    assert_null(strstr(o.out, "DOWN"));
    assert_second_refused(dir);
    run(&o, NULL, "cluster", "down", NULL);
    assert_int_equal(o.status, 0);
    assert_down_kept_logs(dir, &o, pids, n);
    run(&o, NULL, "cluster", "status", NULL);
    assert_int_equal(o.status, 3);
    run(&o, NULL, "cluster", "status", at);
    assert_int_equal(o.status, 3);
}

/* Poll up to 5 s: the kernel delivers the parent-death signal at once, but
 * the process still has to exit. */
static void assert_stops(pid_t pid)
{
    for (int i = 0; i < 500 && pid_runs(pid); i++)
        sleep_ms(10);
    if (pid_runs(pid))
        fail_msg("pid %d still runs", (int)pid);
}

/* A supervisor killed outright leaves its state behind: status says the
 * cluster is gone rather than listing dead servers, and down forgets it,
 * keeping the servers' logs in DIR/logs (a later run sweeps the folder they
 * were in). */
static void cluster_killed_supervisor_is_reported_gone(void **state)
{
    (void)state;
    char *dir = cluster_dir, path[600];
    private_tmpdir();
    snprintf(cluster_dir, sizeof(cluster_dir), "%s/gone", tmp);
    const char *up[] = {"--redis-nodes", "1", "--zookeeper-nodes", "0", "--dir", dir, NULL};
    struct outcome o = {0};
    run(&o, NULL, "cluster", "up", up);
    if (o.status != 0)
        fail_msg("cluster up: exit %d\n%s%s", o.status, o.out, o.err);
    pid_t pids[16];
    size_t n;
    state_pids(dir, pids, &n);
    assert_int_equal(n, 2);
    assert_int_equal(kill(pids[0], SIGKILL), 0);
    assert_stops(pids[0]);
    assert_stops(pids[1]); /* the servers die with their supervisor */

    run(&o, NULL, "cluster", "status", NULL);
    assert_int_equal(o.status, 3);
    snprintf(path, sizeof(path), "the locklab cluster in %s is gone", dir);
    if (strstr(o.out, path) == NULL)
        fail_msg("status does not say \"%s\":\n%s", path, o.out);
    run(&o, NULL, "cluster", "down", NULL);
    assert_int_equal(o.status, 0);
    assert_non_null(strstr(o.out, "was already gone"));
    snprintf(path, sizeof(path), "its servers' logs are in %s/logs\n", dir);
    if (strstr(o.out, path) == NULL)
        fail_msg("down does not say \"%s\":\n%s", path, o.out);
    snprintf(path, sizeof(path), "%s/logs/redis-1.log", dir);
    if (!exists_nonempty(path))
        fail_msg("missing or empty %s after down of a killed cluster", path);
    pointer_path(path, sizeof(path));
    assert_false(exists_nonempty(path));
    run(&o, NULL, "cluster", "status", NULL);
    assert_int_equal(o.status, 3);
    assert_non_null(strstr(o.out, "no locklab cluster is up"));
}

/* locklab cluster EXTRA...: exit 2 with exactly the line want, and no
 * redis-server started. */
static void assert_cluster_refused(const char *action, const char *const *extra, const char *want)
{
    char mark[600];
    struct stat st;
    struct outcome o = {0};
    snprintf(mark, sizeof(mark), "%s/mark-%d", tmp, run_no);
    run(&o, mark, "cluster", action, extra);
    if (o.status != 2 || strcmp(o.err, want) != 0)
        fail_msg("cluster %s: exit %d, stderr \"%s\"; want 2 and \"%s\"", action, o.status, o.err,
                 want);
    if (stat(mark, &st) == 0)
        fail_msg("cluster %s: a redis-server was started for bad input", action);
}

/* Refused before anything starts: a --dir that is a file (the state file
 * could never be written there), and the sizes only `up` takes given to
 * status or down. */
static void cluster_bad_options_start_nothing(void **state)
{
    (void)state;
    char want[800];
    private_tmpdir();
    snprintf(cluster_dir, sizeof(cluster_dir), "%s/afile", tmp);
    FILE *f = fopen(cluster_dir, "w");
    assert_non_null(f);
    fclose(f);
    const char *file[] = {"--redis-nodes", "1", "--zookeeper-nodes", "0", "--dir",
                          cluster_dir,     NULL};
    snprintf(want, sizeof(want), "locklab: --dir %s is not a folder (see locklab --help)\n",
             cluster_dir);
    assert_cluster_refused("up", file, want);
    const char *redis[] = {"--redis-nodes", "3", NULL};
    assert_cluster_refused(
        "status", redis,
        "locklab: cluster status: --redis-nodes is for `cluster up` only (see locklab --help)\n");
    const char *zk[] = {"--dir", cluster_dir, "--zookeeper-nodes", "1", NULL};
    assert_cluster_refused(
        "down", zk,
        "locklab: cluster down: --zookeeper-nodes is for `cluster up` only (see locklab --help)\n");
}

static void assert_usage_error(const char *a1, const char *const *extra, const char *want)
{
    char path[600], mark[600];
    struct outcome o = {0};
    struct stat st;
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(mark, sizeof(mark), "%s/mark-%d", tmp, run_no);
    run(&o, mark, a1, path, extra);
    if (o.status != 2 || strstr(o.err, want) == NULL)
        fail_msg("exit %d, stderr \"%s\"; want 2 and \"%s\"", o.status, o.err, want);
    assert_non_null(strchr(o.err, '\n'));
    assert_int_equal(strchr(o.err, '\n')[1], '\0');
    if (stat(mark, &st) == 0)
        fail_msg("a redis-server was started for bad input");
}

static void bad_fleet_options_are_usage_errors(void **state)
{
    (void)state;
    const char *port[] = {"--redis", "127.0.0.1:x", NULL};
    assert_usage_error("run", port, "--redis");
    const char *few[] = {"--algorithm", "redlock", "--redis", "127.0.0.1:1", NULL};
    assert_usage_error("run", few, "redlock needs 5 redis servers");
    const char *typo[] = {"--algorithms", "redis,redlok", NULL};
    assert_usage_error("compare", typo, "did you mean \"redlock\"");
    const char *twice[] = {"--algorithms", "redis,redis", NULL};
    assert_usage_error("compare", twice, "named twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redis_keeps_every_scenario_safe),
        cmocka_unit_test(redlock_keeps_every_scenario_safe),
        cmocka_unit_test(zookeeper_keeps_every_scenario_safe),
        cmocka_unit_test(naive_lock_breaks_the_new_invariants),
        cmocka_unit_test(readers_share_under_a_read_write_lock_alone),
        cmocka_unit_test(a_crashed_holder_loses_its_permit_for_good),
        cmocka_unit_test(short_hold_duplicates_are_the_configurations),
        cmocka_unit_test(zookeeper_serves_one_key_in_sequence_order),
        cmocka_unit_test(compare_writes_one_table_for_all),
        cmocka_unit_test(postgres_locks_compare_safe_or_say_why_not),
        cmocka_unit_test(compare_shows_fenced_pairs_and_rejected_accesses),
        cmocka_unit_test(compare_judges_each_lock_by_what_happened),
        cmocka_unit_test(compare_fails_when_the_scenarios_lock_misses),
        cmocka_unit_test_teardown(cluster_up_serves_runs_until_down, cluster_teardown),
        cmocka_unit_test_teardown(cluster_killed_supervisor_is_reported_gone, cluster_teardown),
        cmocka_unit_test_teardown(cluster_bad_options_start_nothing, cluster_teardown),
        cmocka_unit_test(bad_fleet_options_are_usage_errors),
    };
    const char *only = getenv("LOCKLAB_TEST_FILTER"); /* some by name: "compare_*" */
    if (only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
