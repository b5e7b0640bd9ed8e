/* test_nemesis.c - process faults on real managed servers: the verdicts
 * they must give, what report.json says each fault did and cost, and that
 * no server is left stopped or running after Ctrl-C or a SIGKILL of
 * locklab in the middle of a fault.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/harness.h"

static json_int_t avail(json_t *r, size_t i, const char *key)
{
    json_t *v = json_object_get(json_object_get(report_fault(r, i), "availability"), key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static const char *text(json_t *r, size_t i, const char *key)
{
    json_t *v = json_object_get(report_fault(r, i), key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

/* One pass over history.jsonl: the acquisitions after t_s seconds into
 * the run, and those both asked for and granted between from_s and to_s. */
struct grants {
    int after;
    int asked_and_granted_within;
};

static struct grants grants_in(const struct outcome *o, double t_s, double from_s, double to_s)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/history.jsonl", o->dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    double t0 = -1, asked[4096];
    struct grants g = {0};
    while (fgets(line, sizeof(line), f)) {
        json_t *e = json_loads(line, 0, NULL);
        assert_non_null(e);
        if (t0 < 0)
            t0 = (double)json_integer_value(json_object_get(e, "mono_ns")) / 1e9;
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *fn = json_string_value(json_object_get(e, "f"));
        json_t *p = json_object_get(e, "process");
        double t = (double)json_integer_value(json_object_get(e, "time")) / 1e9 - t0;
        if (type && fn && json_is_integer(p) && strcmp(fn, "acquire") == 0) {
            json_int_t c = json_integer_value(p);
            assert_true(c >= 0 && c < 4096);
            if (strcmp(type, "invoke") == 0)
                asked[c] = t;
            else if (strcmp(type, "ok") == 0) {
                g.after += t > t_s;
                g.asked_and_granted_within += asked[c] > from_s && t < to_s;
            }
        }
        json_decref(e);
    }
    fclose(f);
    return g;
}

static double fault_s(json_t *r, size_t i, const char *key)
{
    json_t *v = json_object_get(report_fault(r, i), key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Redlock carries on with 4 of 5 nodes: no violation, acquisitions after
 * the kill, and the report names the server and its pid. */
static void redlock_one_of_five_killed_is_safe_and_goes_on(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_scenario(&o, "redlock_kill_one.json", 0, NULL);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(json_is_true(json_object_get(report_fault(r, 0), "fired")));
    assert_non_null(strstr(text(r, 0, "detail"), "SIGKILL redis-"));
    assert_non_null(strstr(text(r, 0, "servers"), "redis-"));
    /* never restarted: brought back only when the run ended */
    assert_true(json_is_true(json_object_get(report_fault(r, 0), "healed_at_end")));
    assert_true(grants_in(&o, 2.5, 0, 0).after > 0);
    assert_true(avail(r, 0, "granted") > 0);
    json_decref(r);
}

/* When client c last asked for key before t_s seconds into the run. */
static double asked_before(const struct outcome *o, json_int_t c, const char *key, double t_s)
{
    char path[700], line[1024];
    snprintf(path, sizeof(path), "%s/history.jsonl", o->dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    double t0 = -1, last = -1;
    while (fgets(line, sizeof(line), f)) {
        json_t *e = json_loads(line, 0, NULL);
        assert_non_null(e);
        if (t0 < 0)
            t0 = (double)json_integer_value(json_object_get(e, "mono_ns")) / 1e9;
        double t = (double)json_integer_value(json_object_get(e, "time")) / 1e9 - t0;
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *k = json_string_value(json_object_get(e, "key"));
        if (t < t_s && type && k && strcmp(type, "invoke") == 0 && strcmp(k, key) == 0 &&
            json_integer_value(json_object_get(e, "process")) == c &&
            strcmp(json_string_value(json_object_get(e, "f")), "acquire") == 0)
            last = t;
        json_decref(e);
    }
    fclose(f);
    return last;
}

/* A stopped Redis answers nobody: no acquire asked while it is paused is
 * granted before it runs again. A violation can still come, and only one
 * way: a SET the server ran just before SIGSTOP whose reply waited the
 * pause out reaches its client after its 500 ms ttl, and the key has
 * expired under it; the first holder of every violation must be such a
 * grant (asked before the pause, granted after it). */
static void redis_server_paused_grants_nothing_meanwhile(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_scenario(&o, "redis_server_pause.json", 0, NULL);
    assert_non_null(strstr(text(r, 0, "detail"), "SIGSTOP redis-1"));
    assert_non_null(strstr(text(r, 0, "end_detail"), "SIGCONT redis-1"));
    double from = fault_s(r, 0, "start_s"), to = fault_s(r, 0, "end_s");
    /* an answer sent before SIGSTOP can reach its client after the window
     * opened; an acquire asked inside it waits for SIGCONT */
    struct grants g = grants_in(&o, 4.2, from, to);
    assert_int_equal(g.asked_and_granted_within, 0);
    assert_true(avail(r, 0, "granted") <= 8); /* at most one answer in flight per client */
    assert_true(json_is_number(
        json_object_get(json_object_get(report_fault(r, 0), "availability"), "recovery_ms")));
    assert_true(g.after > 0);
    json_t *listed = json_object_get(json_object_get(r, "checker"), "listed");
    for (size_t i = 0; i < json_array_size(listed); i++) {
        json_t *v = json_array_get(listed, i), *a = json_object_get(v, "a");
        double granted = json_number_value(json_object_get(a, "from_s"));
        double asked = asked_before(&o, json_integer_value(json_object_get(a, "client")),
                                    json_string_value(json_object_get(v, "key")), granted);
        if (!(asked < from && granted >= to))
            fail_msg("violation %zu: its first holder asked at %.3f s, granted at %.3f s; the "
                     "pause ran %.3f .. %.3f s",
                     i, asked, granted, from, to);
    }
    json_decref(r);
}

/* Kleppmann's case: a node of the holder's bare majority back empty hands
 * the lock to a second client; each violation names the kill. */
static void redlock_node_restarted_empty_breaks_the_lock(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_scenario(&o, "redlock_restart_empty.json", 0, NULL);
    assert_true(jint(r, "checker", "violations") > 0);
    json_t *v = json_array_get(json_object_get(json_object_get(r, "checker"), "listed"), 0);
    json_t *faults = json_object_get(v, "faults");
    int named = 0;
    for (size_t i = 0; i < json_array_size(faults); i++) {
        json_t *f = json_array_get(faults, i);
        named +=
            strcmp(json_string_value(json_object_get(f, "type")), "kill") == 0 &&
            strcmp(json_string_value(json_object_get(f, "servers")), text(r, 2, "servers")) == 0;
    }
    assert_int_equal(named, 1);
    assert_non_null(strstr(text(r, 2, "end_detail"), "data lost"));
    json_decref(r);
}

/* antirez's mitigation: with AOF fsync always the node keeps the vote. */
static void redlock_node_restarted_with_its_data_is_safe(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_scenario(&o, "redlock_restart_kept.json", 0, NULL);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_non_null(strstr(text(r, 2, "end_detail"), "data kept"));
    json_decref(r);
}

/* ZooKeeper's leader stopped: the ensemble elects another or waits; no
 * two holders either way, and grants come back after the pause. */
static void zookeeper_leader_paused_is_safe(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_scenario(&o, "zookeeper_pause_leader.json", 0, NULL);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_non_null(strstr(text(r, 0, "detail"), "SIGSTOP zk-"));
    assert_non_null(strstr(text(r, 1, "detail"), "SIGTERM zk-"));
    assert_non_null(strstr(text(r, 1, "end_detail"), " back on port "));
    /* on disk: a ZooKeeper's data comes back through a restart */
    assert_non_null(strstr(text(r, 1, "end_detail"), ", data kept"));
    assert_true(grants_in(&o, 7.0, 0, 0).after > 0);
    json_decref(r);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The run folder's servers/ holds exactly the logs want names ("pg-1.log
 * redis-1.log", sorted): each named as the faults name its server. */
static void assert_server_logs(const struct outcome *o, const char *want)
{
    char path[600], got[512] = "", *names[32];
    size_t n = 0, used = 0;
    snprintf(path, sizeof(path), "%s/servers", o->dir);
    DIR *d = opendir(path);
    if (d == NULL)
        fail_msg("no %s", path);
    for (struct dirent *e; (e = readdir(d)) != NULL && n < 32;)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof(names[0]), by_name);
    for (size_t i = 0; i < n; i++) {
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s", i ? " " : "", names[i]);
        free(names[i]);
    }
    if (strcmp(got, want) != 0)
        fail_msg("%s holds \"%s\", want \"%s\"", path, got, want);
}

/* `locklab show` of a fixture names its servers as its logs are kept. */
static void assert_show_names(const char *name, const char *want)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/tests/fixtures/%s", src, name);
    struct outcome o = {0};
    run(&o, NULL, "show", path, NULL);
    if (o.status != 0 || strstr(o.out, want) == NULL)
        fail_msg("show %s: exit %d, no \"%s\" in:\n%s", name, o.status, want, o.out);
}

static json_t *run_fixture(struct outcome *o, const char *name, int want_status)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "../tests/fixtures/%s", name); /* run_scenario looks in scenarios/ */
    return run_scenario(o, rel, want_status, NULL);
}

/* A pause of PostgreSQL stops its postmaster and every backend (each
 * serves its own client, in a session of its own): no acquire begun in
 * the window is granted in it (the fault's expect.acquired says so too),
 * and the record names the processes. A kill kills them all, and the
 * server comes back with its data, which is on disk. */
static void postgres_pause_stops_every_backend_and_a_kill_keeps_the_data(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_fixture(&o, "postgres_servers_paused.json", 0);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_non_null(strstr(text(r, 0, "detail"), "SIGSTOP pg-1 (postmaster "));
    assert_non_null(strstr(text(r, 0, "detail"), " children: "));
    assert_non_null(strstr(text(r, 0, "end_detail"), "SIGCONT pg-1 (postmaster "));
    assert_int_equal(avail(r, 0, "granted_within"), 0);
    assert_true(json_is_null(json_object_get(report_fault(r, 0), "error")));
    assert_non_null(strstr(text(r, 1, "detail"), "SIGKILL pg-1 (postmaster "));
    assert_non_null(strstr(text(r, 1, "end_detail"), ", data kept"));
    assert_string_equal(text(r, 1, "data"), "kept");
    assert_true(json_is_null(json_object_get(report_fault(r, 1), "error")));
    assert_true(grants_in(&o, 5.2, 0, 0).after > 0);
    assert_server_logs(&o, "pg-1.log"); /* not postgres-0.log: its slot */
    assert_show_names("postgres_servers_paused.json",
                      "\n  servers: 1 postgres (pg-1), managed: started on free 127.0.0.1 ports, "
                      "stopped by PID at the end, each log kept as servers/<name>.log\n");
    json_decref(r);
}

/* Under a sentinel the leader is the master it names: first the one the
 * run began with, killed (the sentinel promotes the replica, as in a
 * failover, and the old master comes back empty), then the replica it
 * promoted, paused. */
static void the_leader_under_a_sentinel_is_the_master_it_names(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_fixture(&o, "sentinel_leader_faults.json", 0);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_string_equal(text(r, 0, "servers"), "redis-1");
    assert_non_null(strstr(text(r, 0, "detail"), "SIGKILL redis-1 (pid "));
    assert_non_null(strstr(text(r, 0, "end_detail"), ", data lost"));
    assert_non_null(strstr(text(r, 0, "end_detail"), "redis-2 leads (as the sentinels name it)"));
    assert_string_equal(text(r, 1, "servers"), "redis-2");
    assert_non_null(strstr(text(r, 1, "detail"), "SIGSTOP redis-2 (pid "));
    /* the logs of the servers the faults struck, by the names they struck;
     * the sentinel the first of its kind, not the third slot */
    assert_server_logs(&o, "redis-1.log redis-2.log sentinel-1.log");
    assert_show_names("sentinel_leader_faults.json",
                      "\n  servers: a redis master (redis-1), 1 replica (redis-2) replicating "
                      "through locklab's proxy, 1 sentinel (sentinel-1), managed: ");
    json_decref(r);
}

/* A pause whose server still answers was not carried out: here the one
 * that serves runs outside the managed process's tree (it daemonized, as
 * tests/lib/redis-outside.sh makes it), so stopping that tree stops
 * nothing that serves. The nemesis asks the server on its port after the
 * strike: INCOMPLETE (exit 3), never PASS. */
static void a_pause_whose_server_still_answers_makes_the_run_incomplete(void **state)
{
    (void)state;
    char wrap[600], mark[600], said[300] = "";
    snprintf(wrap, sizeof(wrap), "%s/tests/lib/redis-outside.sh", src);
    snprintf(mark, sizeof(mark), "%s/outside.mark", tmp);
    setenv("LOCKLAB_REDIS_SERVER", wrap, 1);
    setenv("LOCKLAB_MARK", mark, 1);
    struct outcome o;
    char path[600];
    snprintf(path, sizeof(path), "%s/tests/fixtures/pause_misses_server.json", src);
    run(&o, NULL, "run", path, NULL);
    unsetenv("LOCKLAB_REDIS_SERVER");
    unsetenv("LOCKLAB_MARK");
    slurp(mark, said, sizeof(said));
    pid_t outside = (pid_t)atoi(said);
    if (outside > 0 && pid_runs(outside)) /* the script stops it when stopped: not when killed */
        kill(outside, SIGKILL);
    assert_int_equal(o.status, 3);
    assert_null(strstr(o.out, "End of run: PASS"));
    assert_non_null(strstr(o.out, "End of run: INCOMPLETE (safe so far) - faults[0] (pause "
                                  "servers) was not carried out: redis-1 still answered on port "));
    json_t *r = report(&o);
    assert_false(jbool(r, NULL, "complete"));
    assert_non_null(strstr(text(r, 0, "error"), "redis-1 still answered on port "));
    json_decref(r);
}

/* the server is stopped from 2 s to 4 s: 3 s in, it is */
static pid_t start_paused_run(const char *name, char *mark, size_t len)
{
    return start_marked_run("redis_server_pause.json", name, 3000, mark, len);
}

static void interrupt_during_a_server_pause_leaves_nothing_stopped(void **state)
{
    (void)state;
    char mark[600];
    pid_t pid = start_paused_run("int-pause", mark, sizeof(mark));
    kill(pid, SIGINT);
    assert_int_equal(reap(pid, 30), 130);
    assert_gone(marked_server(mark));
}

static void sigkill_during_a_server_pause_leaves_nothing_behind(void **state)
{
    (void)state;
    char mark[600];
    pid_t pid = start_paused_run("kill-pause", mark, sizeof(mark));
    kill(pid, SIGKILL);
    assert_int_equal(reap(pid, 30), 128 + SIGKILL);
    assert_gone(marked_server(mark));
}

/* A process fault on servers locklab does not manage: refused, exit 2,
 * nothing started. */
static void process_fault_on_external_servers_is_refused(void **state)
{
    (void)state;
    struct outcome o;
    const char *extra[] = {"--redis", "127.0.0.1:1", NULL};
    char path[600];
    scenario_path(path, sizeof(path), "redis_server_pause.json");
    run(&o, NULL, "run", path, extra);
    assert_int_equal(o.status, 2);
    assert_non_null(strstr(o.err, "faults[0].type: a pause needs servers locklab manages"));
    assert_int_equal(access(o.dir, F_OK), -1);
}

/* The port of the first server a run's header names, read from its
 * stdout file as it runs; fails after 10 s. */
static int first_server_port(const char *out)
{
    char said[8192];
    for (int i = 0; i < 1000; i++) {
        slurp(out, said, sizeof(said));
        const char *at = strstr(said, "  server: redis 127.0.0.1:");
        if (at)
            return atoi(at + strlen("  server: redis 127.0.0.1:"));
        sleep_ms(10);
    }
    fail_msg("no server line in %s", out);
    return -1;
}

/* Listen on 127.0.0.1:port as soon as it is free (within 5 s), as another
 * program would that took the port in the gap; the socket, or fails. */
static int take_port_when_free(int port)
{
    for (int i = 0; i < 500; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 4) == 0)
            return fd;
        close(fd);
        sleep_ms(10);
    }
    fail_msg("port %d never came free", port);
    return -1;
}

/* A kill whose restart cannot happen (the port is taken in the gap): the
 * fault was not carried out, so the run is INCOMPLETE (exit 3), saying
 * which fault and why, never a PASS. */
static void a_restart_that_cannot_happen_makes_the_run_incomplete(void **state)
{
    (void)state;
    char path[600], dir[600], out[700], said[16384];
    snprintf(path, sizeof(path), "%s/tests/fixtures/restart_port_taken.json", src);
    snprintf(dir, sizeof(dir), "%s/port-taken", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    char *argv[] = {(char *)bin, "run", path, "--out", dir, NULL};
    pid_t pid = spawn(argv, out, out, NULL);
    int fd = take_port_when_free(first_server_port(out));
    assert_int_equal(reap(pid, 60), 3);
    close(fd);
    slurp(out, said, sizeof(said));
    assert_null(strstr(said, "End of run: PASS"));
    const char *why = "faults[0] (kill redis-1) was not carried out: restart of redis-1 failed: "
                      "redis on port ";
    const char *end = strstr(said, "End of run: INCOMPLETE (safe so far) - ");
    assert_non_null(end);
    assert_non_null(strstr(end, why));
    struct outcome o = {0};
    snprintf(o.dir, sizeof(o.dir), "%s/port-taken", tmp);
    json_t *r = report(&o);
    assert_false(jbool(r, NULL, "complete"));
    assert_non_null(strstr(json_string_value(json_object_get(r, "incomplete_reason")), why));
    assert_non_null(strstr(text(r, 0, "error"), "restart of redis-1 failed: "));
    json_decref(r);
}

/* Make every managed Redis's clock file unwritable (the folder
 * faketime.new where its new offset is written), once they exist under
 * tmpdir; fails after 10 s. */
static void block_clock_files(const char *tmpdir)
{
    for (int i = 0; i < 1000; i++) {
        DIR *d = opendir(tmpdir);
        struct dirent *e;
        int blocked = 0;
        while (d && (e = readdir(d)) != NULL) {
            char file[900];
            if (strncmp(e->d_name, "locklab-", 8) != 0)
                continue;
            for (int k = 0; k < 5; k++) {
                snprintf(file, sizeof(file), "%s/%s/redis-%d/faketime", tmpdir, e->d_name, k);
                if (access(file, F_OK) != 0)
                    continue;
                strcat(file, ".new");
                blocked += mkdir(file, 0700) == 0 || errno == EEXIST;
            }
        }
        if (d)
            closedir(d);
        if (blocked == 5)
            return;
        sleep_ms(10);
    }
    fail_msg("no managed Redis with a clock file appeared under %s", tmpdir);
}

/* A clock jump whose clock file cannot be written: not carried out, so
 * INCOMPLETE, in a run and in the matrix (never "match yes"). */
static void a_clock_jump_that_cannot_be_applied_makes_the_run_incomplete(void **state)
{
    (void)state;
    char path[600], dir[600], out[700], said[16384], own_tmp[600];
    snprintf(path, sizeof(path), "%s/tests/fixtures/clock_jump_unwritable.json", src);
    snprintf(own_tmp, sizeof(own_tmp), "%s/clock-tmp", tmp);
    assert_int_equal(mkdir(own_tmp, 0700), 0);
    setenv("TMPDIR", own_tmp, 1);
    snprintf(dir, sizeof(dir), "%s/clock", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    char *argv[] = {(char *)bin, "run", path, "--out", dir, NULL};
    pid_t pid = spawn(argv, out, out, NULL);
    block_clock_files(own_tmp);
    assert_int_equal(reap(pid, 60), 3);
    slurp(out, said, sizeof(said));
    assert_null(strstr(said, "End of run: PASS"));
    assert_non_null(strstr(said, "End of run: INCOMPLETE (safe so far) - faults[0] (clock_jump "
                                 "redis-1) was not carried out: clock jump of redis-1 failed: "
                                 "cannot write "));

    /* the same row in a matrix of its own */
    char rows[600], copy[1200], mx[600];
    snprintf(rows, sizeof(rows), "%s/rows", tmp);
    snprintf(copy, sizeof(copy), "cp %s %s/rows/", path, tmp);
    assert_int_equal(mkdir(rows, 0700), 0);
    assert_int_equal(system(copy), 0);
    snprintf(mx, sizeof(mx), "%s/mx", tmp);
    snprintf(out, sizeof(out), "%s.out", mx);
    char *matrix[] = {(char *)bin, "matrix", rows, "--out", mx, NULL};
    pid = spawn(matrix, out, out, NULL);
    block_clock_files(own_tmp);
    assert_int_equal(reap(pid, 60), 3);
    slurp(out, said, sizeof(said));
    assert_null(strstr(said, " yes "));
    assert_non_null(strstr(said, "\nclock_jump_unwritable redlock   not judged "));
    assert_non_null(strstr(said, "faults[0] (clock_jump redis-1) was not carried out"));
    unsetenv("TMPDIR");
}

/* Faults that each happen as written, where the nemesis once failed them:
 * a whole ZooKeeper ensemble killed and started again (its members must
 * come back together: one alone never serves), and two faults back to
 * back on one server (the second strikes what the first lets go). */
static void faults_that_must_be_carried_out(void **state)
{
    (void)state;
    static const char *const files[] = {"zookeeper_all_killed.json", "pause_then_kill.json"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[600];
        snprintf(path, sizeof(path), "%s/tests/fixtures/%s", src, files[i]);
        struct outcome o = {0};
        const char *quiet[] = {"--quiet", NULL};
        run(&o, NULL, "run", path, quiet);
        if (o.status != 0)
            fail_msg("%s: exit %d: %s%s", files[i], o.status, o.out, o.err);
        json_t *r = report(&o);
        json_t *faults = json_object_get(r, "faults");
        for (size_t k = 0; k < json_array_size(faults); k++) {
            assert_true(json_is_null(json_object_get(report_fault(r, k), "error")));
            assert_non_null(strstr(text(r, k, "servers"), i == 0 ? "zk-1,zk-2,zk-3" : "redis-1"));
        }
        assert_non_null(
            strstr(text(r, 0, "end_detail"), i == 0 ? "zk-3 back on port " : "SIGCONT redis-1"));
        json_decref(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redlock_one_of_five_killed_is_safe_and_goes_on),
        cmocka_unit_test(redis_server_paused_grants_nothing_meanwhile),
        cmocka_unit_test(redlock_node_restarted_empty_breaks_the_lock),
        cmocka_unit_test(redlock_node_restarted_with_its_data_is_safe),
        cmocka_unit_test(zookeeper_leader_paused_is_safe),
        cmocka_unit_test(interrupt_during_a_server_pause_leaves_nothing_stopped),
        cmocka_unit_test(sigkill_during_a_server_pause_leaves_nothing_behind),
        cmocka_unit_test(process_fault_on_external_servers_is_refused),
        cmocka_unit_test(a_restart_that_cannot_happen_makes_the_run_incomplete),
        cmocka_unit_test(a_clock_jump_that_cannot_be_applied_makes_the_run_incomplete),
        cmocka_unit_test(faults_that_must_be_carried_out),
        cmocka_unit_test(postgres_pause_stops_every_backend_and_a_kill_keeps_the_data),
        cmocka_unit_test(the_leader_under_a_sentinel_is_the_master_it_names),
        cmocka_unit_test(a_pause_whose_server_still_answers_makes_the_run_incomplete),
    };
    return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
