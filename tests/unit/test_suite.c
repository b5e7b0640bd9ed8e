/* test_suite.c - a scorecard's suite file (docs/scorecard.md): its errors,
 * each one located line naming the path, and a class turned into a cell's
 * scenario: lease multiples as milliseconds of the lease given, the lock
 * and its mode, the layout, optional faults left out, the run stretched
 * past its last fault, no expectation. Inputs are written into a fresh
 * temporary folder, with ' standing for ". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/scenario/suite.h"
#include "tests/lib/scratch.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "%s/locklab-suite.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    scratch_remove("test_suite", dir);
    return 0;
}

/* text (with ' for ") into dir/s.json; its path in path. */
static void write_suite(const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/s.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (const char *p = text; *p; p++)
        fputc(*p == '\'' ? '"' : *p, f);
    fclose(f);
}

/* The error of loading text, with the folder stripped. */
static const char *load_error(const char *text, char *err)
{
    char path[512];
    struct suite s;
    write_suite(text, path, sizeof(path));
    assert_int_equal(suite_load(path, &s, err), -1);
    size_t n = strlen(dir) + 1;
    if (strncmp(err, dir, n - 1) == 0)
        memmove(err, err + n, strlen(err + n) + 1);
    return err;
}

#define HEAD "{'name': 'q', 'scenario': 'b.json', 'ttl_ms': 1000, "
#define NONE                                                                                       \
    "{'name': 'none', 'title': 'no fault', 'short': 'none', 'strikes': 'nothing', 'faults': []}"

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{'name': 'q'", "s.json:1:12: '}' expected near end of file"},
        {"{'name': 'q', 'scenario': 'b.json', 'classes': [" NONE "]}",
         "s.json:1:1: missing required key \"ttl_ms\" (the one lease asked of every lock)"},
        {HEAD "'clases': []}",
         "s.json:1:53: clases: unknown key \"clases\" (did you mean \"classes\"?)"},
        {HEAD "'classes': []}",
         "s.json:1:64: classes: expected 1..16 fault classes in \"classes\""},
        {HEAD "'seeds': 11, 'classes': [" NONE "]}",
         "s.json:1:62: seeds: expected an integer in 1..10"},
        {HEAD "'classes': [" NONE ", " NONE "]}",
         "s.json:1:166: classes[1].name: \"none\" names classes[0] already"},
        {HEAD
         "'classes': [{'name': 'No', 'title': 't', 'short': 's', 'strikes': 'x', 'faults': []}]}",
         "s.json:1:74: classes[0].name: expected lower-case letters, digits and _ (it names a "
         "folder)"},
        {HEAD "'classes': [{'name': 'p', 'title': 't', 'short': 's', 'strikes': 'x', 'faults': "
              "[{'type': 'client_pause', 'at_leases': -1}]}]}",
         "s.json:1:172: classes[0].faults[0].at_leases: expected a number of leases in 0..1000"},
        {HEAD "'classes': [{'name': 'p', 'title': 't', 'short': 's', 'strikes': 'x', 'faults': "
              "[{'type': 'kill', 'at_leases': 1, 'at_ms': 3}]}]}",
         "s.json:1:164: classes[0].faults[0].at_leases: give at_leases or at_ms, not both"},
        {HEAD "'classes': [{'name': 'p', 'title': 't', 'short': 's', 'strikes': 'x', 'faults': "
              "[{'at_ms': 3}]}]}",
         "s.json:1:134: classes[0].faults[0]: missing required key \"type\" (a fault kind: "
         "`locklab list faults`)"},
        {HEAD "'classes': [{'name': 'p', 'title': 't', 'short': 's', 'strikes': 'x', 'layout': "
              "'replicated', 'faults': []}]}",
         "s.json:1:133: classes[0].layout: \"replicated\" is no layout of the suite's \"layouts\""},
        {HEAD "'rows': ['redis+fencng'], 'classes': [" NONE "]}",
         "s.json:1:62: rows[0]: \"redis+fencng\": after the name only @mode and +fencing may "
         "follow"},
        {HEAD "'rows': ['redlock+fencing'], 'classes': [" NONE "]}",
         "s.json:1:62: rows[0]: redlock gives no fencing token: no +fencing row"},
        {HEAD "'rows': ['etcd@3.6'], 'classes': [" NONE "]}",
         "s.json:1:62: rows[0]: etcd has no mode \"3.6\" (`locklab list algorithms` names its "
         "modes)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[SCENARIO_ERR_MAX];
        const char *got = load_error(cases[i].text, err);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu:\n  got  %s\n  want %s", i, got, cases[i].want);
    }
}

static const char *const full =
    HEAD "'run': {'clients': 4, 'duration_s': 5, 'workload': {'critical_ms': 300}},"
         "'layouts': {'replicated': {'zookeeper': {'ensemble': 3}}},"
         "'classes': [" NONE ", {'name': 'lost', 'title': 'leader lost', 'short': 'leader', "
         "'strikes': 'the leader', 'layout': 'replicated', 'hold_renewed_leases': 3, 'faults': ["
         "{'type': 'timeout', 'target': 'replication', 'at_ms': 0, 'optional': true},"
         "{'type': 'kill', 'target': 'zk-leader', 'at_leases': 1.5, 'restart_after_leases': 3}],"
         "'known': [{'row': 'zookeeper', 'result': 'zookeeper_leader_killed', 'source': 'x', "
         "'unsafe': false}]}]}";

static json_t *cell_of(const struct suite *s, const char *lock, const struct suite_sizing *z)
{
    json_error_t je;
    json_t *base = json_loads("{\"name\": \"b\", \"duration_s\": 20, \"lock\": {\"algorithm\": "
                              "\"redis\", \"ttl_ms\": 10000}, \"workload\": {\"type\": "
                              "\"flash_sale\"}, \"expect\": {\"violations\": 0}}",
                              0, &je);
    struct suite_lock l;
    char why[200];
    assert_int_equal(suite_lock_parse(lock, &l, why, sizeof(why)), 0);
    json_t *c = suite_cell(s, base, 1, &l, z, why, sizeof(why));
    json_decref(base);
    assert_non_null(c);
    return c;
}

static void test_cell(void **state)
{
    (void)state;
    char path[512], err[SCENARIO_ERR_MAX];
    struct suite s;
    write_suite(full, path, sizeof(path));
    assert_int_equal(suite_load(path, &s, err), 0);
    assert_int_equal(s.n_classes, 2);
    assert_int_equal(s.seeds, 1);
    assert_string_equal(s.classes[1].known[0].result, "zookeeper_leader_killed");
    /* the scenario, relative to the suite's folder */
    char want[600];
    snprintf(want, sizeof(want), "%s/b.json", dir);
    assert_string_equal(s.scenario, want);

    /* zookeeper under a 1000 ms lease, its layout, the optional fault left out (bit 0) */
    struct suite_sizing z = {.layout = true, .lease_ms = 1000, .skip = 1};
    json_t *c = cell_of(&s, "zookeeper", &z);
    char *text = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        text, "{\"clients\":4,\"description\":\"scorecard q: leader lost, zookeeper\","
              "\"duration_s\":6.0,\"faults\":[{\"at_ms\":1500,\"restart_after_ms\":3000,"
              "\"target\":\"zk-leader\",\"type\":\"kill\"}],\"fencing\":false,\"lock\":{"
              "\"algorithm\":\"zookeeper\",\"ttl_ms\":1000,\"zookeeper\":{\"ensemble\":3}},"
              "\"name\":\"b-zookeeper-lost\",\"workload\":{\"critical_ms\":300,\"type\":"
              "\"flash_sale\"}}");
    free(text);
    json_decref(c);

    /* a renewing lock's longer hold, a 2 s lease (etcd's), the run stretched to 1.5
     * leases past the end of the last fault: 3000 + 6000 + 3000 = 12 s */
    struct suite_sizing e = {.layout = false, .lease_ms = 2000, .renews = true};
    c = cell_of(&s, "etcd@3.4+fencing", &e);
    text = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        text, "{\"clients\":4,\"description\":\"scorecard q: leader lost, etcd@3.4+fencing\","
              "\"duration_s\":12.0,\"faults\":[{\"at_ms\":0,\"target\":\"replication\",\"type\":"
              "\"timeout\"},{\"at_ms\":3000,\"restart_after_ms\":6000,\"target\":\"zk-leader\","
              "\"type\":\"kill\"}],\"fencing\":true,\"lock\":{\"algorithm\":\"etcd\",\"etcd\":{"
              "\"recheck\":false},\"ttl_ms\":1000},\"name\":\"b-etcd-3.4-fenced-lost\","
              "\"workload\":{\"critical_ms\":6000,\"type\":\"flash_sale\"}}");
    free(text);
    json_decref(c);
    suite_free(&s);
}

static void test_stretch(void **state)
{
    (void)state;
    char path[512], err[SCENARIO_ERR_MAX];
    struct suite s;
    write_suite(HEAD "'run': {'duration_s': 5}, 'classes': [" NONE ", {'name': 'p', 'title': 't', "
                     "'short': 's', 'strikes': 'x', 'faults': [{'type': 'client_pause', "
                     "'target': 'holder', 'at_leases': 1, 'duration_leases': 2.5}]}]}",
                path, sizeof(path));
    assert_int_equal(suite_load(path, &s, err), 0);
    struct suite_sizing one = {.lease_ms = 1000}, two = {.lease_ms = 2000};
    json_t *c = cell_of(&s, "redis", &one); /* 1000 + 2500 + 1500 = 5000: as asked */
    assert_true(json_number_value(json_object_get(c, "duration_s")) == 5.0);
    json_decref(c);
    c = cell_of(&s, "redis", &two); /* 2000 + 5000 + 3000 = 10 s */
    assert_true(json_number_value(json_object_get(c, "duration_s")) == 10.0);
    json_decref(c);
    suite_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cell),
        cmocka_unit_test(test_stretch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
