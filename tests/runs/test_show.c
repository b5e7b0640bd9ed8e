/* test_show.c - `locklab show` tells the truth: for every shipped scenario
 * and every algorithm, what `show --json` prints is exactly the "scenario"
 * object of report.json after a real run with the same options, and the
 * header `show` prints is the one the run prints before it starts. Where
 * an algorithm cannot run a scenario, show and run refuse it alike (exit 2,
 * the same message), with nothing started.
 *
 * The runs share one managed fleet (cluster up) and stop after a few
 * business steps: what is compared is the settings, not the verdict.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/harness.h"

static char cluster_dir[400], redis[400], zookeeper[200];

static const char *const algorithms[] = {"redis", "redis-naive", "redlock", "zookeeper"};

static int show_setup(void **state)
{
    if (harness_setup(state) < 0)
        return -1;
    snprintf(cluster_dir, sizeof(cluster_dir), "%s/cluster", tmp);
    if (cluster_up(cluster_dir, redis, sizeof(redis), zookeeper, sizeof(zookeeper)) < 0)
        return -1;
    return 0;
}

static int show_teardown(void **state)
{
    cluster_down(cluster_dir);
    return harness_teardown(state); /* the cluster's folder is in tmp: down first */
}

/* The header lines show prints (from "locklab " up to its own "servers:"
 * line): a run prints the same ones before it starts. */
static void header_of_show(const char *out, char *buf, size_t len)
{
    const char *from = strstr(out, "locklab ");
    const char *to = from ? strstr(from, "  servers: ") : NULL;
    assert_non_null(to);
    snprintf(buf, len, "%.*s", (int)(to - from), from);
}

/* One scenario with one algorithm; the number of pairs that ran. */
static int one_pair(const char *path, const char *algo)
{
    const char *opts[] = {"--algorithm", algo,          "--requests", "4",      "--redis",
                          redis,         "--zookeeper", zookeeper,    "--json", NULL};
    struct outcome shown = {0}, ran = {0};
    run(&shown, NULL, "show", path, opts);
    if (shown.status == 2 && strstr(shown.err, "needs servers locklab manages")) {
        /* process faults strike managed servers only: this pair runs on its own */
        opts[4] = "--json";
        opts[5] = NULL;
        run(&shown, NULL, "show", path, opts);
    }
    size_t json_at = opts[5] ? 8 : 4;
    if (shown.status == 2) {
        opts[json_at] = NULL; /* run has no --json */
        run(&ran, NULL, "run", path, opts);
        assert_int_equal(ran.status, 2);
        assert_string_equal(ran.err, shown.err);
        return 0;
    }
    assert_int_equal(shown.status, 0);
    json_error_t je;
    json_t *want = json_loads(shown.out, 0, &je);
    if (want == NULL)
        fail_msg("show --json %s %s: not JSON: %s", path, algo, je.text);

    opts[json_at] = NULL;
    run(&ran, NULL, "run", path, opts);
    json_t *rep = report(&ran);
    /* four steps end a run before most faults are due: a fault that never
     * struck leaves it INCOMPLETE (exit 3), its scenario object whole */
    const char *why = json_string_value(json_object_get(rep, "incomplete_reason"));
    bool unstruck = ran.status == 3 && why && strstr(why, ") never struck: ");
    if (ran.status != 0 && ran.status != 1 && !unstruck)
        fail_msg("run %s --algorithm %s: exit %d: %s", path, algo, ran.status, ran.err);
    json_t *got = json_object_get(rep, "scenario");
    if (!json_equal(want, got)) {
        char *w = json_dumps(want, JSON_SORT_KEYS), *g = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("%s --algorithm %s:\nshow: %s\nrun:  %s", path, algo, w, g);
    }
    json_decref(want);
    json_decref(rep);

    struct outcome text = {0};
    opts[json_at] = NULL;
    run(&text, NULL, "show", path, opts);
    char header[4096];
    header_of_show(text.out, header, sizeof(header));
    if (strstr(ran.out, header) == NULL)
        fail_msg("%s --algorithm %s: the run's header differs from show's:\n%s\n---\n%.2000s", path,
                 algo, header, ran.out);
    return 1;
}

static int is_json(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

static void show_equals_the_run(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/scenarios", src);
    struct dirent **ent;
    int n = scandir(dir, &ent, is_json, alphasort);
    assert_true(n >= 13);
    int pairs = 0, runs = 0;
    for (int i = 0; i < n; i++) {
        char path[900];
        snprintf(path, sizeof(path), "%s/%s", dir, ent[i]->d_name);
        /* the 10,000-buyer sales are about scale (bench/client_sweep.sh,
         * test_segments); their header is flash_sale's, checked here already */
        if (strstr(ent[i]->d_name, "_10k") != NULL) {
            free(ent[i]);
            continue;
        }
        for (size_t a = 0; a < sizeof(algorithms) / sizeof(algorithms[0]); a++, pairs++)
            runs += one_pair(path, algorithms[a]);
        free(ent[i]);
    }
    free(ent);
    /* 50 pairs are refused: the nested flash sale with all four (none of
     * them is reentrant), the two watchdog scenarios with redis-naive
     * and zookeeper (no renewals), the fenced one with redis-naive and
     * redlock (no tokens), the Redis pause with zookeeper, the three
     * Redlock restarts with all but redlock (they name its 4th and 5th
     * nodes); the Redis latency with zookeeper (it names redis-1), the
     * Redis holder's black hole with redis-naive and zookeeper (no
     * renewals), its fenced twin with those and redlock, the two fenced
     * ZooKeeper ones with redis-naive and redlock; the two pools with all
     * four (a pool's sections are a semaphore's permits); the two guarded
     * cluster sales with all four (they kill and cut off rc-1 and rc-2, a
     * Redis Cluster's nodes); the latch with all four (a latch is not a
     * lock); README and docs/scenario.md say the same */
    assert_int_equal(pairs - runs, 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(show_equals_the_run)};
    return cmocka_run_group_tests(tests, show_setup, show_teardown);
}
