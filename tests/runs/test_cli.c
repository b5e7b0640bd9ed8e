/* test_cli.c - the command line a newcomer meets: help for every command,
 * `list` for scripts, a run folder never overwritten, the start header in a
 * log that is not a terminal, what a SIGKILLed run left behind cleaned
 * by the next one, `check` refusing a hostile history and judging one by
 * its lock modes. Real runs
 * against real redis-servers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algorithms/lock.h"
#include "sim/fleet/server_kind.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"
#include "tests/lib/harness.h"

static const char *const commands[] = {"run",     "compare", "show", "check",
                                       "cluster", "list",    "help", "history"};

/* `locklab CMD --help`, `locklab CMD -h` and `locklab help CMD` print the
 * same text: its usage line first, an example last; exit 0. */
static void every_command_answers_help(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        struct outcome a = {0}, b = {0}, c = {0};
        const char *help[] = {"--help", NULL}, *h[] = {"-h", NULL};
        run(&a, NULL, commands[i], NULL, help);
        run(&b, NULL, "help", commands[i], NULL);
        run(&c, NULL, commands[i], NULL, h);
        assert_int_equal(a.status, 0);
        assert_int_equal(b.status, 0);
        assert_int_equal(c.status, 0);
        char usage[64];
        snprintf(usage, sizeof(usage), "usage: locklab %s", commands[i]);
        if (strncmp(a.out, usage, strlen(usage)) != 0)
            fail_msg("%s --help starts \"%.60s\"", commands[i], a.out);
        assert_non_null(strstr(a.out, "example:\n  locklab "));
        assert_string_equal(a.out, b.out);
        assert_string_equal(a.out, c.out);
    }
    struct outcome top = {0}, typo = {0};
    run(&top, NULL, "help", NULL, NULL);
    assert_int_equal(top.status, 0);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        char line[32];
        snprintf(line, sizeof(line), "\n  %-9s ", commands[i]);
        assert_non_null(strstr(top.out, line));
    }
    run(&typo, NULL, "compre", NULL, NULL);
    assert_int_equal(typo.status, 2);
    assert_string_equal(typo.err, "locklab: unknown command \"compre\" (did you mean \"compare\"?) "
                                  "(see locklab --help)\n");
}

static const char *lock_name(size_t i)
{
    return lock_at(i)->name;
}

static const char *workload_name_at(size_t i)
{
    return workload_at(i)->name;
}

static const char *fault_at(size_t i)
{
    return fault_type_name((unsigned)i);
}

static const char *server_at(size_t i)
{
    return server_kind_at(i)->name;
}

/* `list KIND` prints the n names of its registry, one a line, in order:
 * read from the registry, never typed here. */
static void lists_registry(const char *kind, size_t n, const char *(*at)(size_t))
{
    struct outcome o = {0};
    char want[2048];
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof(want); i++)
        used += (size_t)snprintf(want + used, sizeof(want) - used, "%s\n", at(i));
    assert_true(n > 1 && used < sizeof(want));
    run(&o, NULL, "list", kind, NULL);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, want);
}

static void list_prints_names_for_scripts(void **state)
{
    (void)state;
    struct outcome bad = {0}, all = {0};
    lists_registry("algorithms", lock_count(), lock_name);
    lists_registry("workloads", workload_count(), workload_name_at);
    lists_registry("faults", fault_kind_count(), fault_at);
    lists_registry("servers", server_kind_count(), server_at);
    run(&bad, NULL, "list", "locks", NULL);
    assert_int_equal(bad.status, 2);
    run(&all, NULL, "list", NULL, NULL);
    assert_int_equal(all.status, 0);
    /* every shipped scenario with its expectation, every fault explained */
    assert_non_null(strstr(all.out, "  flash_sale_pause_fenced.json"));
    assert_non_null(strstr(all.out, "redis; expects violations 0, invariants hold, "
                                    "rejected_accesses >0"));
    assert_non_null(strstr(all.out, "  client_pause   the target stalls"));
    assert_non_null(strstr(all.out, "  redlock                   no       yes"));
    /* every server kind with its roles and what a kill leaves of its data */
    assert_non_null(strstr(all.out, "\nservers (a kind, its servers as fault targets, the roles "
                                    "they play, their data after a kill):\n"));
    assert_non_null(strstr(all.out, "\n  zookeeper      zk-1..       leader, follower   kept\n"));
    assert_non_null(strstr(all.out,
                           "\n  redis          redis-1..    leader, replica    lost  or kept "
                           "by AOF fsync always (data: kept)\n"));
    /* a long description wrapped at word boundaries under its column, whole */
    assert_non_null(
        strstr(all.out,
               "  flash_sale_nested.json             Flash sale on Redisson's RLock whose payment "
               "step takes the\n"
               "                                     item's lock again while the purchase holds it "
               "(a re-entry,\n"
               "                                     counted in the hash and released before the "
               "purchase's own\n"
               "                                     release): 32 buyers, 10 items.\n"
               "                                       redisson; expects violations 0, invariants "
               "hold\n"));
    const char *scenarios = strstr(all.out, "\nscenarios (");
    assert_non_null(scenarios);
    for (const char *line = scenarios + 1; *line;) {
        size_t n = strcspn(line, "\n");
        if (n > 100 && strstr(line, " expects ") == NULL)
            fail_msg("a description line of %zu columns: %.*s", n, (int)n, line);
        line += n + (line[n] == '\n');
    }
}

/* matrix --plan prints the rows --only selects, each with its lock and
 * what it expects, and runs none of them. */
static void matrix_plan_lists_what_only_selects(void **state)
{
    (void)state;
    char dir[512], want[1400];
    scenario_path(dir, sizeof(dir), "matrix");
    const char *extra[] = {"--only", "sentinel_failover", dir, NULL};
    struct outcome o = {0};
    run(&o, NULL, "matrix", "--plan", extra);
    assert_int_equal(o.status, 0);
    snprintf(want, sizeof(want),
             "2 rows of %s, 1 seed each:\n"
             "  redis_sentinel_failover        redis; expects violations 0, invariants hold\n"
             "  redis_sentinel_failover_stuck  redis; expects violations 0, invariants hold\n",
             dir);
    assert_string_equal(o.out, want);
}

/* argv refused with exit 2 and exactly the line want on stderr, and no
 * redis-server started (mark stays absent). */
static void assert_refused_before_start(char *const argv[], const char *out, const char *err,
                                        const char *mark, const char *want)
{
    char said[1024];
    struct stat st;
    assert_int_equal(reap(spawn(argv, out, err, mark), 60), 2);
    slurp(err, said, sizeof(said));
    assert_string_equal(said, want);
    if (stat(mark, &st) == 0)
        fail_msg("a redis-server was started for a refused %s", argv[1]);
}

/* A second run into a folder that holds one is refused before anything
 * starts, and the first run's files are left as they were. */
static void out_onto_a_run_is_refused(void **state)
{
    (void)state;
    char path[600], mark[600], dir[600], before[700], after[700];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/kept-run", tmp);
    char out[700], err[700];
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    char *argv[] = {(char *)bin, "run", path, "--duration", "0.5", "--quiet", "--out", dir, NULL};
    assert_int_equal(reap(spawn(argv, out, err, NULL), 60), 0);
    snprintf(before, sizeof(before), "%s/report.json", dir);
    struct stat st0, st1;
    assert_int_equal(stat(before, &st0), 0);

    snprintf(mark, sizeof(mark), "%s/mark-refused", tmp);
    snprintf(after, sizeof(after),
             "locklab: --out %s holds a run already (report.json); remove it or name another "
             "folder\n",
             dir);
    assert_refused_before_start(argv, out, err, mark, after);
    assert_int_equal(stat(before, &st1), 0);
    assert_true(st0.st_mtim.tv_sec == st1.st_mtim.tv_sec &&
                st0.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
}

/* compare checks each algorithm's folder before anything starts: a row
 * cannot vanish because its folder held an old run. */
static void compare_out_with_an_old_run_inside_is_refused(void **state)
{
    (void)state;
    char path[600], dir[600], sub[700], mark[700], out[800], err[700], want[1024];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/cmp-old", tmp);
    snprintf(sub, sizeof(sub), "%s/redis", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(out, sizeof(out), "%s/history.jsonl", sub);
    FILE *f = fopen(out, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(mark, sizeof(mark), "%s/mark-cmp-old", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    char *argv[] = {
        (char *)bin, "compare", path, "--algorithms", "redis,redlock", "--duration", "0.5",
        "--out",     dir,       NULL};
    snprintf(want, sizeof(want),
             "locklab: --out %s: its redis/ holds a run already (history.jsonl); remove it or name "
             "another folder\n",
             dir);
    assert_refused_before_start(argv, out, err, mark, want);
}

/* A folder the user made is the user's: a run that could not start leaves
 * it where it was (locklab removes only an empty folder it made itself). */
static void a_users_folder_survives_a_failed_start(void **state)
{
    (void)state;
    char path[600], dir[600], out[700];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/users-own", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    char *argv[] = {(char *)bin, "run", path, "--duration", "0.5", "--out", dir, NULL};
    setenv("LOCKLAB_REDIS_SERVER", "/nonexistent/redis-server", 1);
    pid_t pid = spawn(argv, out, out, NULL);
    unsetenv("LOCKLAB_REDIS_SERVER");
    assert_int_equal(reap(pid, 60), 3);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

/* Output to a file (CI): the header is there while the run still runs. */
static void header_reaches_a_log_before_the_end(void **state)
{
    (void)state;
    char path[600], dir[600], out[700], err[700], text[16384];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/logged", tmp);
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(err, sizeof(err), "%s.err", dir);
    char *argv[] = {(char *)bin, "run", path, "--duration", "4", "--out", dir, NULL};
    pid_t pid = spawn(argv, out, err, NULL);
    text[0] = '\0';
    for (int i = 0; i < 300 && !strstr(text, "  server: redis 127.0.0.1:"); i++) {
        sleep_ms(10);
        slurp(out, text, sizeof(text));
    }
    assert_non_null(strstr(text, "  scenario=flash_sale  algorithm=redis  clients=32  seed=1  "
                                 "duration=4s\n"));
    assert_null(strstr(text, "End of run")); /* printed while it runs */
    assert_int_equal(reap(pid, 60), 0);
}

/* The locklab-XXXXXX folder under tmpdir that pid owns, into root. */
static void owned_folder(const char *tmpdir, pid_t pid, char *root, size_t len)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[900], text[32] = "";
        if (strncmp(e->d_name, "locklab-", 8) != 0 || strlen(e->d_name) != 14)
            continue;
        snprintf(path, sizeof(path), "%s/%s/owner.lock", tmpdir, e->d_name);
        slurp(path, text, sizeof(text));
        if (atol(text) == (long)pid)
            snprintf(root, len, "%s/%s", tmpdir, e->d_name);
    }
    closedir(d);
}

/* A run SIGKILLed mid-way: its servers die with it, and its janitor
 * removes its folder. */
static pid_t killed_run(const char *name, char *root, size_t len, long *server, pid_t *janitor)
{
    char path[600], dir[600], out[700], mark[700], pids[64];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
    snprintf(out, sizeof(out), "%s.out", dir);
    snprintf(mark, sizeof(mark), "%s/mark-%s", tmp, name);
    char *argv[] = {(char *)bin, "run", path, "--duration", "30", "--quiet", "--out", dir, NULL};
    pid_t pid = spawn(argv, out, out, mark);
    /* its folder is the locklab-XXXXXX under TMPDIR whose owner it is */
    const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    root[0] = '\0';
    for (int i = 0; i < 500 && root[0] == '\0'; i++) {
        sleep_ms(10);
        owned_folder(tmpdir, pid, root, len);
    }
    assert_true(root[0] != '\0');
    sleep_ms(500);
    /* its janitor: the process whose command line ends `__janitor ROOT` */
    char cmd[1200], found[700];
    snprintf(found, sizeof(found), "%s/janitor-%s", tmp, name);
    snprintf(cmd, sizeof(cmd), "pgrep -f '__janitor %s$' > %s", root, found);
    pids[0] = '\0';
    if (system(cmd) == 0)
        slurp(found, pids, sizeof(pids));
    *janitor = (pid_t)atol(pids);
    slurp(mark, pids, sizeof(pids));
    *server = atol(pids);
    assert_true(*server > 0);
    return pid;
}

static void server_dies_with(long server)
{
    for (int i = 0; i < 500 && pid_runs((pid_t)server); i++)
        sleep_ms(10);
    if (pid_runs((pid_t)server))
        fail_msg("redis-server %ld outlived the locklab that started it", server);
}

static void a_killed_runs_folder_is_removed_by_its_janitor(void **state)
{
    (void)state;
    char root[900];
    long server;
    pid_t janitor;
    pid_t pid = killed_run("killed", root, sizeof(root), &server, &janitor);
    assert_true(janitor > 0);
    kill(pid, SIGKILL);
    assert_int_equal(reap(pid, 10), 128 + SIGKILL);
    server_dies_with(server);
    struct stat st;
    for (int i = 0; i < 500 && stat(root, &st) == 0; i++)
        sleep_ms(10);
    if (stat(root, &st) == 0)
        fail_msg("%s is still there 5 s after its locklab was killed", root);
}

/* With its janitor killed too, the folder stays until the next run that
 * starts servers, whose sweep removes it. */
static void a_killed_runs_folder_is_removed_by_the_next(void **state)
{
    (void)state;
    char root[900], path[600];
    long server;
    pid_t janitor;
    pid_t pid = killed_run("killed2", root, sizeof(root), &server, &janitor);
    assert_true(janitor > 0);
    kill(janitor, SIGKILL);
    kill(pid, SIGKILL);
    assert_int_equal(reap(pid, 10), 128 + SIGKILL);
    struct stat st;
    assert_int_equal(stat(root, &st), 0); /* nobody could clean up */
    server_dies_with(server);

    struct outcome next = {0};
    const char *brief[] = {"--duration", "0.5", "--quiet", NULL};
    scenario_path(path, sizeof(path), "flash_sale.json");
    run(&next, NULL, "run", path, brief);
    assert_int_equal(next.status, 0);
    if (stat(root, &st) == 0)
        fail_msg("%s is still there after the next run", root);
}

/* The names of the locklab-XXXXXX folders in dir, at most max: a look
 * before a run starts, to tell its folder by its coming. */
static size_t list_folders(const char *dir, char names[][16], size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL && n < max)
        if (strncmp(e->d_name, "locklab-", 8) == 0 && strlen(e->d_name) == 14)
            snprintf(names[n++], 16, "%.14s", e->d_name);
    closedir(d);
    return n;
}

/* A folder in dir that was not there before (before[] of n_before), into
 * root; waits up to 5 s for it. */
static void new_folder(const char *dir, char before[][16], size_t n_before, char *root, size_t len)
{
    root[0] = '\0';
    for (int i = 0; i < 500 && root[0] == '\0'; i++) {
        char now[8][16];
        size_t n = list_folders(dir, now, 8);
        for (size_t k = 0; k < n && root[0] == '\0'; k++) {
            int old = 0;
            for (size_t j = 0; j < n_before; j++)
                old = old || strcmp(now[k], before[j]) == 0;
            if (!old)
                snprintf(root, len, "%s/%s", dir, now[k]);
        }
        if (root[0] == '\0')
            sleep_ms(10);
    }
    assert_true(root[0] != '\0');
}

/* `unshare -pf --mount-proc locklab ARGS...`: a locklab that sees none of
 * this test's PIDs, as in a container or a CI job sharing TMPDIR. Its
 * exit code. */
static int run_in_pid_namespace(char *const *args, const char *name)
{
    char *argv[24];
    int n = 0;
    argv[n++] = "/usr/bin/unshare";
    argv[n++] = "-pf";
    argv[n++] = "--mount-proc";
    argv[n++] = "--kill-child=SIGKILL";
    argv[n++] = (char *)bin;
    for (; *args && n < 23; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    char out[700];
    snprintf(out, sizeof(out), "%s/%s.out", tmp, name);
    return reap(spawn(argv, out, out, NULL), 60);
}

/* Ownership is a lock on the folder's owner file, not a PID: a locklab in
 * another PID namespace leaves a live run's folder alone (the run's
 * restart at 4 s needs it), and the next start on either side removes a
 * SIGKILLed run's. */
static void folders_owned_across_pid_namespaces(void **state)
{
    (void)state;
    if (access("/usr/bin/unshare", X_OK) != 0 || geteuid() != 0)
        skip(); /* a PID namespace needs root here */
    char ns_tmp[400], path[600], late[600], brief_out[600], root[900], dir[600];
    char before[8][16];
    snprintf(ns_tmp, sizeof(ns_tmp), "%s/shared-tmp", tmp);
    assert_int_equal(mkdir(ns_tmp, 0700), 0);
    setenv("TMPDIR", ns_tmp, 1);
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(late, sizeof(late), "%s/tests/fixtures/restart_late_kept.json", src);

    /* a live run, and a short one in another namespace while it runs */
    snprintf(dir, sizeof(dir), "%s/live", tmp);
    char out[700];
    snprintf(out, sizeof(out), "%s.out", dir);
    char *live[] = {(char *)bin, "run", late, "--quiet", "--out", dir, NULL};
    size_t n = list_folders(ns_tmp, before, 8);
    pid_t pid = spawn(live, out, out, NULL);
    new_folder(ns_tmp, before, n, root, sizeof(root));
    snprintf(brief_out, sizeof(brief_out), "%s/ns-brief", tmp);
    char *brief[] = {"run", path, "--duration", "0.3", "--quiet", "--out", brief_out, NULL};
    assert_int_equal(run_in_pid_namespace(brief, "ns-brief"), 0);
    struct stat st;
    if (stat(root, &st) != 0)
        fail_msg("%s, a live run's folder, was removed by a locklab in another PID namespace",
                 root);
    assert_int_equal(reap(pid, 60), 0);
    char text[4096];
    slurp(out, text, sizeof(text));
    assert_non_null(strstr(text, "End of run: PASS"));

    /* killed outside, swept from inside */
    snprintf(dir, sizeof(dir), "%s/killed-out", tmp);
    char *longer[] = {(char *)bin, "run", path, "--duration", "30", "--quiet", "--out", dir, NULL};
    n = list_folders(ns_tmp, before, 8);
    pid = spawn(longer, out, out, NULL);
    new_folder(ns_tmp, before, n, root, sizeof(root));
    sleep_ms(300);
    kill(pid, SIGKILL);
    assert_int_equal(reap(pid, 10), 128 + SIGKILL);
    sleep_ms(200); /* its servers die by PR_SET_PDEATHSIG */
    snprintf(brief_out, sizeof(brief_out), "%s/ns-sweep", tmp);
    assert_int_equal(run_in_pid_namespace(brief, "ns-sweep"), 0);
    if (stat(root, &st) == 0)
        fail_msg("%s, a killed run's folder, is still there after a start in a namespace", root);

    /* killed inside (the namespace's init dies, and all in it), swept from outside */
    snprintf(dir, sizeof(dir), "%s/killed-in", tmp);
    char *ns_long[] = {"/usr/bin/unshare",
                       "-pf",
                       "--mount-proc",
                       "--kill-child=SIGKILL",
                       (char *)bin,
                       "run",
                       path,
                       "--duration",
                       "30",
                       "--quiet",
                       "--out",
                       dir,
                       NULL};
    n = list_folders(ns_tmp, before, 8);
    pid = spawn(ns_long, out, out, NULL);
    new_folder(ns_tmp, before, n, root, sizeof(root));
    sleep_ms(300);
    kill(pid, SIGKILL);
    reap(pid, 10);
    sleep_ms(200);
    struct outcome next = {0};
    const char *quick[] = {"--duration", "0.3", "--quiet", NULL};
    run(&next, NULL, "run", path, quick);
    assert_int_equal(next.status, 0);
    if (stat(root, &st) == 0)
        fail_msg("%s, a run killed in a namespace, is still there after the next start", root);
    unsetenv("TMPDIR");
}

/* A server that cannot start: "is it installed?" only when its program
 * cannot be executed; one that runs and exits says so, with its status. */
static void a_server_that_cannot_start_says_why(void **state)
{
    (void)state;
    char path[600];
    scenario_path(path, sizeof(path), "flash_sale.json");
    const char *brief[] = {"--duration", "0.5", "--quiet", NULL};
    struct outcome missing = {0}, exits = {0};
    setenv("LOCKLAB_REDIS_SERVER", "/nonexistent/redis-server", 1);
    run(&missing, NULL, "run", path, brief);
    setenv("LOCKLAB_REDIS_SERVER", "/bin/false", 1);
    run(&exits, NULL, "run", path, brief);
    unsetenv("LOCKLAB_REDIS_SERVER");
    assert_int_equal(missing.status, 3);
    assert_non_null(strstr(missing.err, " could not be started (is it installed?): "
                                        "/nonexistent/redis-server: cannot execute: not "
                                        "installed, or not executable\n"));
    assert_int_equal(exits.status, 3);
    assert_non_null(strstr(exits.err, " exited at start with status 1: its log is empty\n"));
    assert_null(strstr(exits.err, "installed"));
}

/* --out on a full disk: the record cannot be written, so there is no
 * verdict: exit 3, and no line on the terminal or in a file it left says
 * PASS. A 64 KiB tmpfs in a mount namespace of its own (root): the
 * servers' logs fit, the record of a 2 s run does not (report.html alone
 * is about 58 KB, history.llh some 150 KB). */
static void a_full_disk_gives_no_verdict(void **state)
{
    (void)state;
    if (access("/usr/bin/unshare", X_OK) != 0 || geteuid() != 0)
        skip(); /* mounting a tmpfs needs root */
    char path[600], small[600], script[3000], out[700], err[700], said[16384], errs[4096];
    scenario_path(path, sizeof(path), "flash_sale.json");
    snprintf(small, sizeof(small), "%s/small", tmp);
    assert_int_equal(mkdir(small, 0700), 0);
    snprintf(script, sizeof(script),
             "mount -t tmpfs -o size=64k tmpfs %s || exit 99; %s run %s --duration 2 --out %s/run; "
             "rc=$?; grep -rl PASS %s/run; exit $rc",
             small, bin, path, small, small);
    char *argv[] = {"/usr/bin/unshare", "-m", "--propagation", "private",
                    "/bin/sh",          "-c", script,          NULL};
    snprintf(out, sizeof(out), "%s/full.out", tmp);
    snprintf(err, sizeof(err), "%s/full.err", tmp);
    assert_int_equal(reap(spawn(argv, out, err, NULL), 60), 3);
    slurp(out, said, sizeof(said));
    slurp(err, errs, sizeof(errs));
    if (strstr(said, "PASS") || strstr(errs, "PASS"))
        fail_msg("a run on a full disk said PASS:\n%s%s", said, errs);
    assert_non_null(strstr(said, "End of run: INCOMPLETE (safe so far) - the run's record could "
                                 "not be written (cannot write "));
    assert_non_null(strstr(errs, "No space left on device"));
}

/* `check` reads whatever it is given: a hostile file is bad input, exit 2
 * with one line naming the file and its line, never a crash (the first
 * file ended in SIGSEGV), an out-of-memory exit 3 (the second) or a PASS
 * (the third, "stuck ... from -9223372036.855 s"); /dev/zero, one endless
 * line, is refused without being read into memory. */
static void check_refuses_a_hostile_history(void **state)
{
    (void)state;
#define START(mono) "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":" mono ",\"clients\":2}\n"
#define INVOKE(p)                                                                                  \
    "{\"time\":1100,\"process\":" p ",\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\","        \
    "\"owner\":\"o\"}\n"
    static const char *const files[][2] = {
        {START("1000") INVOKE("4294967295"),
         ":2: \"process\" 4294967295 is not a client: the start line says 2 clients, 0 to 1"},
        {START("1000") INVOKE("4294967294"),
         ":2: \"process\" 4294967294 is not a client: the start line says 2 clients, 0 to 1"},
        {START("9223372036854775807") INVOKE("0"),
         ":1: \"mono_ns\" must be at most 4611686018427387904"},
    };
#undef START
#undef INVOKE
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[600], want[1024];
        snprintf(path, sizeof(path), "%s/hostile-%zu.jsonl", tmp, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i][0], f);
        assert_int_equal(fclose(f), 0);
        struct outcome o = {0};
        run(&o, NULL, "check", path, NULL);
        snprintf(want, sizeof(want), "locklab: %s%s\n", path, files[i][1]);
        assert_int_equal(o.status, 2);
        assert_string_equal(o.err, want);
        assert_string_equal(o.out, "");
    }
    struct outcome z = {0};
    run(&z, NULL, "check", "/dev/zero", NULL);
    assert_int_equal(z.status, 2);
    assert_string_equal(z.err, "locklab: /dev/zero:1: a line longer than 65536 bytes, the most a "
                               "history line may be\n");
}

/* `check` judges a history by its lines' modes (docs/history.md, "Modes
 * and re-entry"): readers overlapping pass, a writer entering on two
 * readers is two violations, a third holder of two permits one; an
 * unknown mode is bad input, one line naming the file and the line. */
static void check_judges_by_mode(void **state)
{
    (void)state;
#define START "{\"type\":\"start\",\"locklab\":1,\"mono_ns\":1000,\"clients\":3}\n"
#define END   "{\"type\":\"end\",\"mono_ns\":2000,\"complete\":true,\"dropped\":0}\n"
#define OK(t, p, mode)                                                                             \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\","         \
    "\"owner\":\"o" #p "\"" mode "}\n"
#define REL(t, p)                                                                                  \
    "{\"time\":" #t ",\"process\":" #p ",\"type\":\"invoke\",\"f\":\"release\",\"key\":\"k\","     \
    "\"owner\":\"o" #p "\"}\n"
#define SHARED ",\"mode\":\"shared\""
#define PERMIT ",\"mode\":\"permit\",\"permits\":2"
    static const struct {
        const char *text;
        int status;
        const char *said; /* the checker's line, or the error after the path */
    } files[] = {
        {START OK(1100, 0, SHARED) OK(1200, 1, SHARED) REL(1300, 0) OK(1350, 2, SHARED) REL(1400, 1)
             REL(1500, 2) END,
         0, "checker: 3 sections, 0 violations (0 overlapping pairs), 0 concurrent entries\n"},
        {START OK(1100, 0, SHARED) OK(1200, 1, SHARED) OK(1250, 2, "") REL(1300, 0) REL(1400, 1)
             REL(1500, 2) END,
         1, "checker: 3 sections, 2 violations (2 overlapping pairs), 1 concurrent entries\n"},
        {START OK(1100, 0, PERMIT) OK(1200, 1, PERMIT) OK(1250, 2, PERMIT) REL(1300, 1) REL(1400, 0)
             REL(1500, 2) END,
         1, "checker: 3 sections, 1 violation (1 overlapping pair), 1 concurrent entries\n"},
        {START OK(1100, 0, SHARED) OK(1200, 1, ",\"mode\":\"upgrade\"") END, 2,
         ":3: unknown mode \"upgrade\"\n"},
        {START OK(1100, 0, ",\"mode\":\"permit\",\"permits\":0") END, 2,
         ":2: \"permits\" must be at least 1\n"},
    };
#undef START
#undef END
#undef OK
#undef REL
#undef SHARED
#undef PERMIT
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[600];
        snprintf(path, sizeof(path), "%s/modes-%zu.jsonl", tmp, i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i].text, f);
        assert_int_equal(fclose(f), 0);
        struct outcome o = {0};
        run(&o, NULL, "check", path, NULL);
        assert_int_equal(o.status, files[i].status);
        if (files[i].status == 2) {
            char want[1024];
            snprintf(want, sizeof(want), "locklab: %s%s", path, files[i].said);
            assert_string_equal(o.err, want);
            assert_string_equal(o.out, "");
            continue;
        }
        if (strstr(o.out, files[i].said) == NULL)
            fail_msg("file %zu: no \"%s\" in:\n%s", i, files[i].said, o.out);
        assert_non_null(strstr(o.out, i == 0 ? "End of check: PASS (safe)" : "End of check: FAIL"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_command_answers_help),
        cmocka_unit_test(check_refuses_a_hostile_history),
        cmocka_unit_test(check_judges_by_mode),
        cmocka_unit_test(list_prints_names_for_scripts),
        cmocka_unit_test(out_onto_a_run_is_refused),
        cmocka_unit_test(compare_out_with_an_old_run_inside_is_refused),
        cmocka_unit_test(a_users_folder_survives_a_failed_start),
        cmocka_unit_test(header_reaches_a_log_before_the_end),
        cmocka_unit_test(a_killed_runs_folder_is_removed_by_its_janitor),
        cmocka_unit_test(a_killed_runs_folder_is_removed_by_the_next),
        cmocka_unit_test(folders_owned_across_pid_namespaces),
        cmocka_unit_test(a_server_that_cannot_start_says_why),
        cmocka_unit_test(a_full_disk_gives_no_verdict),
        cmocka_unit_test(matrix_plan_lists_what_only_selects),
    };
    return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
