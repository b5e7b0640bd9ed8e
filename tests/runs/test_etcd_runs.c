/* test_etcd_runs.c - the locklab binary on the etcd lock: a flash sale on
 * one managed member and on a 3-member cluster passes; the cluster's
 * leader killed (etcd-leader, asked with maintenance/status) and started
 * again with its data: still no two holders, and grants go on. The
 * scenarios are tests/fixtures/etcd_*.json. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tests/lib/harness.h"

static json_t *run_fixture(struct outcome *o, const char *name)
{
    char rel[128];
    snprintf(rel, sizeof(rel), "../tests/fixtures/%s", name); /* run_scenario looks in scenarios/ */
    return run_scenario(o, rel, 0, NULL);
}

static void passes(const char *name, const char *servers)
{
    struct outcome o;
    json_t *r = run_fixture(&o, name);
    assert_int_equal(jint(r, "checker", "violations"), 0);
    assert_true(jint(r, "checker", "sections") > 0);
    assert_int_equal(jbool(r, NULL, "invariants_hold"), 1);
    assert_non_null(strstr(o.out, servers));
    assert_non_null(strstr(o.out, "End of run: PASS"));
    json_decref(r);
}

static void flash_sale_on_one_member_passes(void **state)
{
    (void)state;
    passes("etcd_flash_sale.json", "etcd: nodes=1 recheck=on lease=4000ms");
}

static void flash_sale_on_three_members_passes(void **state)
{
    (void)state;
    passes("etcd_flash_sale_3.json", "etcd: nodes=3 recheck=on lease=4000ms");
}

static void leader_killed_is_safe(void **state)
{
    (void)state;
    struct outcome o;
    json_t *r = run_fixture(&o, "etcd_leader_killed.json");
    assert_int_equal(jint(r, "checker", "violations"), 0);
    json_t *f = report_fault(r, 0);
    const char *detail = json_string_value(json_object_get(f, "detail"));
    const char *end = json_string_value(json_object_get(f, "end_detail"));
    assert_non_null(detail);
    assert_non_null(end);
    assert_non_null(strstr(detail, "SIGKILL etcd-"));
    assert_non_null(strstr(end, " back on port "));
    /* a leader was found and struck, and another led after it */
    assert_non_null(strstr(end, " leads"));
    /* grants came back after it (a request caught by the election may hang
     * until etcd's own request timeout: how many are granted during the
     * fault is not the test's matter) */
    json_t *av = json_object_get(f, "availability");
    assert_true(json_is_number(json_object_get(av, "recovery_ms")));
    assert_non_null(strstr(o.out, "End of run: PASS"));
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flash_sale_on_one_member_passes),
        cmocka_unit_test(flash_sale_on_three_members_passes),
        cmocka_unit_test(leader_killed_is_safe),
    };
    return cmocka_run_group_tests(tests, harness_setup, harness_teardown);
}
