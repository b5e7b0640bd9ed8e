/* test_group_blame.c - whose grant a group of violations blames, and the
 * words it says so in (sim/check/groups.h's groups_blame, the late grants
 * of sim/check/stale_grants.h, reports/violation_groups.c's cause), on
 * histories made by hand after runs that showed each case, checked both
 * ways (the whole history, and the one pass a run makes); and the grants
 * lost at release. Times in ms from 0, the run's start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/etcd.h"
#include "algorithms/zookeeper_settings.h"
#include "reports/violation_groups.h"
#include "sim/check/check_pass.h"
#include "sim/check/groups.h"
#include "sim/check/result.h"
#include "sim/check/stale_grants.h"
#include "sim/scenario/scenario.h"
#include "tests/lib/history_make.h"

#define MS 1000000ULL
#define US 1000ULL

static const char *const keys[] = {"lock:stock:0"};
static const char *const owners[] = {"o0", "o1", "o2"};

static uint8_t client_pause(void)
{
    int k = fault_kind_index("client_pause");
    assert_true(k >= 0);
    return (uint8_t)k;
}

static struct history_event op(uint64_t t_ns, uint32_t client, uint8_t type, uint8_t f)
{
    struct history_event e = ev(t_ns, client, type, f);
    e.owner = client;
    e.seq = HISTORY_NO_SEQ;
    if (f == HF_RELEASE && type == HT_INVOKE)
        e.arg = EFFECT_APPLIED;
    return e;
}

static struct history_event failed(uint64_t t_ns, uint32_t client, uint8_t type, uint8_t f,
                                   uint8_t error)
{
    struct history_event e = op(t_ns, client, type, f);
    e.arg = error;
    return e;
}

/* A history of e[0..n) on one key, by algorithm with the lease ttl_ms. */
static void history_of(struct history *h, const struct history_event *e, size_t n,
                       const char *algorithm, uint32_t ttl_ms)
{
    make_history(h, e, n, keys, 1, owners, 3);
    snprintf(h->algorithm, sizeof(h->algorithm), "%s", algorithm);
    h->ttl_ms = ttl_ms;
    h->start_mono_ns = 1;
    h->end_mono_ns = 10000 * MS;
}

/* h checked as `check --in-memory` does (whole) or as a run and `check`
 * do (one pass); r owns h's copy. */
static void checked(struct run_result *r, const struct history *h, bool whole, bool writes_only)
{
    memset(r, 0, sizeof(*r));
    uint64_t lookback = (uint64_t)h->ttl_ms * MS;
    if (whole) {
        r->hist = *h;
        assert_int_equal(result_check_history(r, lookback, writes_only), 0);
        return;
    }
    struct check_pass *p = check_pass_begin(lookback, writes_only);
    assert_non_null(p);
    for (size_t i = 0; i < h->n; i++)
        assert_int_equal(check_pass_event(p, &h->ev[i]), 0);
    assert_int_equal(check_pass_end(p, h->end_mono_ns, r), 0);
    r->hist = *h;
}

/* The one group's cause, both ways, is want; r keeps the last way's. */
static void assert_cause(const struct history *h, const struct scenario *scn, const char *want,
                         enum group_blame_kind why)
{
    for (int whole = 0; whole < 2; whole++) {
        struct history copy = *h;
        struct run_result r;
        checked(&r, &copy, whole, false);
        r.scn = scn;
        r.algorithm = scn ? h->algorithm : NULL;
        assert_int_equal(r.check.groups.n_list, 1);
        const struct violation_group *g = &r.check.groups.list[0];
        char cause[600];
        assert_string_equal(report_group_cause(&r, g, cause, sizeof(cause)), want);
        assert_int_equal(report_group_blame(&r, g).why, why);
        memset(&r.hist, 0, sizeof(r.hist)); /* h's, freed by the caller */
        result_free(&r);
    }
}

/* The group's report.json entry, read from the one-pass check. */
static json_t *group_json(const struct history *h, uint64_t *lost)
{
    struct history copy = *h;
    struct run_result r;
    checked(&r, &copy, false, false);
    json_t *gs = report_groups_json(&r, 10);
    *lost = r.lost_at_release;
    memset(&r.hist, 0, sizeof(r.hist));
    result_free(&r);
    return gs;
}

/* redisson-fair, watchdog on, a waiter paused 1.7 .. 4.5 s inside acquire
 * (a run of flash_sale with 200 ms on every reply): client 1 asked at
 * 0.3 s, its grant came back while it stood still, and it entered at
 * 4.5 s while client 0, granted 4.308 s, held a sound one. The group is
 * client 0's (it entered first), but the stale grant was client 1's. The
 * pause's end is written just after the entry it let go; client 1's
 * release answers "released", as the fair lock's unlock of a key nobody
 * holds does. */
static const struct history_event late_entrant[] = {
    {.t_ns = 300 * MS, .client = 1, .type = HT_INVOKE, .f = HF_ACQUIRE},
    {.t_ns = 1700 * MS, .client = 1, .type = HT_INFO, .f = HF_FAULT},
    {.t_ns = 4000 * MS, .client = 0, .type = HT_INVOKE, .f = HF_ACQUIRE},
    {.t_ns = 4308 * MS, .client = 0, .type = HT_OK, .f = HF_ACQUIRE},
    {.t_ns = 4500 * MS, .client = 1, .type = HT_OK, .f = HF_ACQUIRE},
    {.t_ns = 4500 * MS + 10 * US, .client = 1, .type = HT_INFO, .f = HF_FAULT, .arg2 = 1},
    {.t_ns = 4608 * MS, .client = 0, .type = HT_INVOKE, .f = HF_RELEASE},
    {.t_ns = 4800 * MS, .client = 1, .type = HT_INVOKE, .f = HF_RELEASE},
    {.t_ns = 4810 * MS, .client = 0, .type = HT_OK, .f = HF_RELEASE},
    {.t_ns = 5001 * MS, .client = 1, .type = HT_OK, .f = HF_RELEASE},
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The table's events made whole: owners, no sequence, the pause's kind. */
static void events_of(const struct history_event *in, size_t n, struct history_event *out)
{
    for (size_t i = 0; i < n; i++) {
        if (in[i].f == HF_FAULT) {
            out[i] = fault(in[i].t_ns, in[i].client, client_pause(), in[i].arg2);
            continue;
        }
        out[i] = op(in[i].t_ns, in[i].client, in[i].type, in[i].f);
        if (in[i].arg)
            out[i].arg = in[i].arg;
    }
}

static void test_late_entrant(void **state)
{
    (void)state;
    struct history_event e[N_OF(late_entrant)];
    events_of(late_entrant, N_OF(e), e);
    struct history h;
    history_of(&h, e, N_OF(e), "redisson-fair", 1000);
    /* it was: "... the first other holder entered at 4.500 s, 808.0 ms
     * before its lease (ttl 1000 ms) ran out at 5.308 s: its grant was lost" */
    assert_cause(&h, NULL,
                 "client 0 held the lock 4.308 .. 4.608 s; client 1, the first other holder, "
                 "entered at 4.500 s on a stale grant: it asked at 0.300 s and was stopped by "
                 "client_pause from 1.700 to 4.500 s inside acquire: its lease (ttl 1000 ms), from "
                 "a grant made before the stop, had run out by 2.700 s at the latest, 1800.0 ms "
                 "before it entered; during client_pause (client 1)",
                 BLAME_LATE_ENTRANT);
    uint64_t lost;
    json_t *gs = group_json(&h, &lost);
    json_t *g = json_array_get(json_object_get(gs, "list"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "blame")), "late_entrant");
    json_t *late = json_object_get(g, "late");
    assert_int_equal(json_integer_value(json_object_get(late, "client")), 1);
    assert_true(json_real_value(json_object_get(late, "lease_out_by_s")) == 2.7);
    assert_string_equal(json_string_value(json_object_get(late, "release")), "released");
    assert_true(json_real_value(json_object_get(g, "lease_ends_s")) == 5.308);
    assert_int_equal(lost, 0);
    json_decref(gs);
    history_free(&h);
}

/* The same pause, the other order (the run with 200 ms on every reply
 * and 20 ms sections): client 1, paused 1.5 .. 4.0 s, entered first, on
 * its grant from before the stop, and client 0 entered on a sound one at
 * 4.012 s; client 1's release answered not-owner. */
static const struct history_event late_holder[] = {
    {.t_ns = 720 * MS, .client = 1, .type = HT_INVOKE, .f = HF_ACQUIRE},
    {.t_ns = 1500 * MS, .client = 1, .type = HT_INFO, .f = HF_FAULT},
    {.t_ns = 3900 * MS, .client = 0, .type = HT_INVOKE, .f = HF_ACQUIRE},
    {.t_ns = 4000 * MS, .client = 1, .type = HT_OK, .f = HF_ACQUIRE},
    {.t_ns = 4000 * MS + 10 * US, .client = 1, .type = HT_INFO, .f = HF_FAULT, .arg2 = 1},
    {.t_ns = 4012 * MS, .client = 0, .type = HT_OK, .f = HF_ACQUIRE},
    {.t_ns = 4021 * MS, .client = 1, .type = HT_INVOKE, .f = HF_RELEASE},
    {.t_ns = 4032 * MS, .client = 0, .type = HT_INVOKE, .f = HF_RELEASE},
    {.t_ns = 4221 * MS, .client = 1, .type = HT_FAIL, .f = HF_RELEASE, .arg = HE_LOST},
    {.t_ns = 4233 * MS, .client = 0, .type = HT_OK, .f = HF_RELEASE},
};

static void test_late_holder(void **state)
{
    (void)state;
    struct history_event e[N_OF(late_holder)];
    events_of(late_holder, N_OF(e), e);
    struct history h;
    history_of(&h, e, N_OF(e), "redisson-fair", 1000);
    /* it was: "... the first other holder entered at 4.012 s, 988.0 ms
     * before its lease (ttl 1000 ms) ran out at 5.000 s: its grant was lost" */
    assert_cause(&h, NULL,
                 "client 1 held the lock 4.000 .. 4.021 s; it entered on a stale grant: it asked "
                 "at 0.720 s and was stopped by client_pause from 1.500 to 4.000 s inside acquire: "
                 "its lease (ttl 1000 ms), from a grant made before the stop, had run out by "
                 "2.500 s at the latest, 1500.0 ms before it entered; its release answered "
                 "not-owner; the first other holder entered at 4.012 s; during client_pause "
                 "(client 1)",
                 BLAME_LATE_HOLDER);
    uint64_t lost;
    json_t *gs = group_json(&h, &lost);
    json_t *g = json_array_get(json_object_get(gs, "list"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "blame")), "late_holder");
    /* its lease as granted ran out from the stop, not from its entry */
    assert_true(json_real_value(json_object_get(g, "lease_ends_s")) == 2.5);
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "late"), "release")),
                        "not_owner");
    assert_int_equal(lost, 1);
    json_decref(gs);
    history_free(&h);
}

/* A stop inside acquire says nothing when a grant asked before it could
 * still have been good at the entry (stopped 3.5 .. 4.0 s, 1000 ms lease),
 * or when the entry came a lease or more after the stop ended (1.5 .. 2.0
 * s, entered 4.0 s: a grant asked afresh). Then the holder's own acquire
 * ran from 0.720 s: the server may have granted it any time from then to
 * the entry, so its lease may have run out long before client 0 entered
 * (outlived), not that it must still have run (lost). */
static void test_late_bounds(void **state)
{
    (void)state;
    const uint64_t stops[][2] = {{3500, 4000}, {1500, 2000}};
    for (size_t k = 0; k < 2; k++) {
        struct history_event e[N_OF(late_holder)];
        events_of(late_holder, N_OF(e), e);
        e[1].t_ns = stops[k][0] * MS;
        e[4].t_ns = stops[k][1] * MS + (k == 0 ? 10 * US : 0); /* the history sorts them */
        struct history h;
        history_of(&h, e, N_OF(e), "redisson-fair", 1000);
        char want[300];
        /* it was: "... the first other holder entered at 4.012 s, 988.0 ms
         * before its lease (ttl 1000 ms) ran out at 5.000 s: its grant was
         * lost", from the entry alone */
        snprintf(want, sizeof(want), "%s%s",
                 "client 1 held the lock 4.000 .. 4.021 s; its lease (ttl 1000 ms) ran out at "
                 "1.720 .. 5.000 s (it was granted between its ask and its entry), and the first "
                 "other holder entered at 4.012 s",
                 k == 0 ? "; during client_pause (client 1)" : ""); /* past the lookback */
        assert_cause(&h, NULL, want, BLAME_OUTLIVED);
        history_free(&h);
    }
}

/* A grant is lost only when the other holder entered before the holder's
 * lease could have run out: asked at 3.950 s, entered at 4.000 s, a 1000
 * ms lease ran at least to 4.950 s, and client 0 entered at 4.012 s. An
 * ask no later than a lease before the entrant leaves it outlived. */
static void test_lost_from_ask(void **state)
{
    (void)state;
    const uint64_t asks[] = {3950, 3012, 3013};
    const char *const want[] = {
        "client 1 held the lock 4.000 .. 4.021 s; the first other holder entered at 4.012 s, "
        "938.0 ms before its lease (ttl 1000 ms) ran out at 4.950 s at the earliest (granted as "
        "early as its ask): its grant was lost",
        "client 1 held the lock 4.000 .. 4.021 s; its lease (ttl 1000 ms) ran out at 4.012 .. "
        "5.000 s (it was granted between its ask and its entry), and the first other holder "
        "entered at 4.012 s",
        "client 1 held the lock 4.000 .. 4.021 s; the first other holder entered at 4.012 s, "
        "1.0 ms before its lease (ttl 1000 ms) ran out at 4.013 s at the earliest (granted as "
        "early as its ask): its grant was lost",
    };
    for (size_t k = 0; k < N_OF(asks); k++) {
        struct history_event e[] = {
            op(asks[k] * MS, 1, HT_INVOKE, HF_ACQUIRE), op(3960 * MS, 0, HT_INVOKE, HF_ACQUIRE),
            op(4000 * MS, 1, HT_OK, HF_ACQUIRE),        op(4012 * MS, 0, HT_OK, HF_ACQUIRE),
            op(4021 * MS, 1, HT_INVOKE, HF_RELEASE),    op(4032 * MS, 0, HT_INVOKE, HF_RELEASE),
        };
        struct history h;
        history_of(&h, e, N_OF(e), "redis", 1000);
        assert_cause(&h, NULL, want[k], k == 1 ? BLAME_OUTLIVED : BLAME_LOST);
        history_free(&h);
    }
}

/* postgres-advisory, its server killed 1.0 s while client 1 held the
 * lock (its section 4 s), back 2.197 s: client 0 entered at 2.196 s; client
 * 1's release got no answer. The lock has no lease (ttl 1000 ms means
 * nothing to it). */
static void pg_history(struct history *h, bool killed)
{
    struct history_event e[] = {
        op(0, 1, HT_INVOKE, HF_ACQUIRE),
        op(1 * MS, 1, HT_OK, HF_ACQUIRE),
        fault(1000 * MS, HISTORY_SERVERS, KIND_KILL, 0),
        op(2100 * MS, 0, HT_INVOKE, HF_ACQUIRE),
        op(2196 * MS, 0, HT_OK, HF_ACQUIRE),
        fault(2197 * MS, HISTORY_SERVERS, KIND_KILL, 1),
        op(4001 * MS, 1, HT_INVOKE, HF_RELEASE),
        failed(4001 * MS + 100 * US, 1, HT_INFO, HF_RELEASE, HE_ERROR),
        op(6196 * MS, 0, HT_INVOKE, HF_RELEASE),
        op(6197 * MS, 0, HT_OK, HF_RELEASE),
    };
    e[2].owner = e[5].owner = 0; /* the note naming pg-1 */
    size_t n = 0;
    for (size_t i = 0; i < N_OF(e); i++)
        if (killed || e[i].f != HF_FAULT)
            e[n++] = e[i];
    history_of(h, e, n, "postgres-advisory", 1000);
    for (size_t i = 0; i < h->n_notes; i++)
        free(h->notes[i]);
    free(h->notes); /* the merge's own table, replaced by one naming pg-1 */
    h->notes = calloc(1, sizeof(*h->notes));
    assert_non_null(h->notes);
    h->notes[0] = strdup("pg-1");
    h->n_notes = 1;
}

static void test_leaseless(void **state)
{
    (void)state;
    struct history h;
    pg_history(&h, true);
    /* it was: "client 1 held the lock 0.001 .. 4.001 s; its lease (ttl 1000
     * ms) ran out at 1.001 s, 1195.0 ms before the first other holder
     * entered; during kill pg-1" */
    assert_cause(&h, NULL,
                 "client 1 held the lock 0.001 .. 4.001 s; the lock has no lease, it lasts as long "
                 "as its session: kill pg-1 at 1.000 s ended that session with the server while it "
                 "held, 1196.0 ms before the first other holder entered at 2.196 s; during kill "
                 "pg-1",
                 BLAME_SESSION_ENDED);
    uint64_t lost;
    json_t *gs = group_json(&h, &lost);
    assert_true(json_is_true(json_object_get(gs, "leaseless")));
    assert_int_equal(json_integer_value(json_object_get(gs, "lease_ttl_ms")), 0);
    json_t *g = json_array_get(json_object_get(gs, "list"), 0);
    assert_string_equal(json_string_value(json_object_get(g, "blame")), "session_ended");
    assert_true(json_is_null(json_object_get(g, "lease_ends_s")));
    assert_true(json_is_null(json_object_get(g, "late")));
    json_decref(gs);
    history_free(&h);

    pg_history(&h, false); /* no fault: nothing the history shows ended the session */
    assert_cause(&h, NULL,
                 "client 1 held the lock 0.001 .. 4.001 s; the lock has no lease, and nothing in "
                 "the history ended its session, yet the first other holder entered at 2.196 s: "
                 "its grant was lost",
                 BLAME_SESSION_LOST);
    history_free(&h);
}

/* Client 1 holds 0.1 .. 3.0 s, client 2 enters at lease_ms + 600 ms. */
static void outlived_history(struct history *h, const char *algorithm, uint32_t lease_ms)
{
    struct history_event e[] = {
        op(100 * MS, 1, HT_OK, HF_ACQUIRE),
        op((lease_ms + 600) * MS, 2, HT_OK, HF_ACQUIRE),
        op((lease_ms + 700) * MS, 2, HT_INVOKE, HF_RELEASE),
        op(3000 * MS, 1, HT_INVOKE, HF_RELEASE),
    };
    history_of(h, e, N_OF(e), algorithm, lease_ms);
}

/* A lease that is not the ttl is named as the lock ran it: etcd's whole
 * seconds (a ttl of 1500 ms ran on a 2 s lease), ZooKeeper's session
 * timeout (a ttl of 600 ms clamped to 1000 ms); read back from a history
 * alone, the lease its ttl_ms gives. */
static void test_lease_not_ttl(void **state)
{
    (void)state;
    struct scenario etcd = {.ttl_ms = 1500};
    ((struct etcd_spec *)scenario_settings_mut(&etcd, &etcd_family))->lease_ms = 2000;
    struct history h;
    outlived_history(&h, "etcd", 2000);
    /* it was: "... its lease (ttl 2000 ms) ran out at 2.100 s, ..." */
    assert_cause(&h, &etcd,
                 "client 1 held the lock 0.100 .. 3.000 s; its lease (2000 ms, for a ttl of 1500 "
                 "ms) ran out at 2.100 s, and the first other holder entered at 2.600 s",
                 BLAME_OUTLIVED);
    assert_cause(&h, NULL,
                 "client 1 held the lock 0.100 .. 3.000 s; its lease (2000 ms) ran out at 2.100 s, "
                 "and the first other holder entered at 2.600 s",
                 BLAME_OUTLIVED);
    history_free(&h);

    struct scenario zk = {.ttl_ms = 600};
    ((struct zookeeper_spec *)scenario_settings_mut(&zk, &zookeeper_family))->session_timeout_ms =
        1000;
    outlived_history(&h, "zookeeper", 1000);
    assert_cause(&h, &zk,
                 "client 1 held the lock 0.100 .. 3.000 s; its session (timeout 1000 ms) ran out "
                 "at 1.100 s, and the first other holder entered at 1.600 s",
                 BLAME_OUTLIVED);
    history_free(&h);

    struct scenario redis = {.ttl_ms = 1000};
    outlived_history(&h, "redis", 1000);
    assert_cause(&h, &redis,
                 "client 1 held the lock 0.100 .. 3.000 s; its lease (ttl 1000 ms) ran out at "
                 "1.100 s, and the first other holder entered at 1.600 s",
                 BLAME_OUTLIVED);
    history_free(&h);
}

/* Releases that answered not-owner are counted, both ways: client 0's two;
 * not client 1's, whose renewal answered so but whose release went
 * through; not client 2's, which got no answer; and none at all for
 * optimistic concurrency, whose commits answer so on a conflict. */
static void test_lost_at_release(void **state)
{
    (void)state;
    struct history_event e[] = {
        op(100 * MS, 0, HT_OK, HF_ACQUIRE),
        op(200 * MS, 0, HT_INVOKE, HF_RELEASE),
        failed(201 * MS, 0, HT_FAIL, HF_RELEASE, HE_LOST),
        op(300 * MS, 1, HT_OK, HF_ACQUIRE),
        failed(350 * MS, 1, HT_FAIL, HF_RENEW, HE_LOST),
        op(400 * MS, 1, HT_INVOKE, HF_RELEASE),
        op(401 * MS, 1, HT_OK, HF_RELEASE),
        op(500 * MS, 2, HT_OK, HF_ACQUIRE),
        op(600 * MS, 2, HT_INVOKE, HF_RELEASE),
        failed(601 * MS, 2, HT_INFO, HF_RELEASE, HE_ERROR),
        op(700 * MS, 0, HT_OK, HF_ACQUIRE),
        op(800 * MS, 0, HT_INVOKE, HF_RELEASE),
        failed(801 * MS, 0, HT_FAIL, HF_RELEASE, HE_LOST),
    };
    struct history h;
    history_of(&h, e, N_OF(e), "redis", 1000);
    for (int optimistic = 0; optimistic < 2; optimistic++)
        for (int whole = 0; whole < 2; whole++) {
            struct history copy = h;
            struct run_result r;
            checked(&r, &copy, whole, optimistic);
            assert_int_equal(r.lost_at_release, optimistic ? 0 : 2);
            assert_int_equal(r.n_late_grants, 0);
            memset(&r.hist, 0, sizeof(r.hist));
            result_free(&r);
        }
    history_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_entrant),    cmocka_unit_test(test_late_holder),
        cmocka_unit_test(test_late_bounds),     cmocka_unit_test(test_lost_from_ask),
        cmocka_unit_test(test_leaseless),       cmocka_unit_test(test_lease_not_ttl),
        cmocka_unit_test(test_lost_at_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
