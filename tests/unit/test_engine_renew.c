/* test_engine_renew.c - the engine's renewals of held grants, driven
 * through the runner itself (runner_new .. runner_collect) with a lock
 * that lives in this file: a lease table in the test's memory, as a lock
 * server keeps one (a key, its owner, when it expires), so a lapse is a
 * real lapse that the next acquire takes over and the checker sees.
 *
 * What is asked of the engine: a lock that keeps its lease alive
 * (lock_ops.keeps_lease_alive, etcd's Session) is renewed every renew_ms
 * (ttl/3 by default) while held, with no watchdog in the scenario; kept
 * locks (scheduled_tasks' hold) too; a paused holder renews nothing for
 * the pause, and the renewal after it fails as a watchdog's would. The
 * same lock without the flag is never renewed and lapses: the tests can
 * fail. And a pause aimed at a waiter stops it inside acquire, at the
 * seam: this lock has no traffic a proxy could hold, so only the seam
 * can stop its looks at the lease.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "algorithms/lock.h"
#include "sim/check/result.h"
#include "sim/engine/runner.h"
#include "sim/engine/verdict.h"
#include "sim/record/history.h"
#include "sim/record/journal.h"
#include "sim/scenario/scenario.h"

#define NS_PER_MS  1000000ULL
#define MAX_KEYS   16
#define MAX_RENEWS 8192

/* --- the lease table: one server's worth of state ----------------------- */

struct lease {
    char key[64];
    char owner[LOCK_OWNER_MAX];
    uint64_t expires_ns; /* 0: free */
};

struct renew_call {
    uint32_t client;
    uint64_t t_ns;
    enum lock_result r;
};

static struct {
    pthread_mutex_t mu;
    struct lease lease[MAX_KEYS];
    size_t n;
    uint64_t lapsed_takeovers; /* grants over a lease that had expired under its owner */
    struct renew_call renew[MAX_RENEWS];
    size_t n_renew;
    struct renew_call tries[MAX_RENEWS]; /* every look at a lease by acquire */
    size_t n_tries;
} table = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void table_reset(void)
{
    pthread_mutex_lock(&table.mu);
    table.n = 0;
    table.lapsed_takeovers = 0;
    table.n_renew = 0;
    table.n_tries = 0;
    pthread_mutex_unlock(&table.mu);
}

/* The lease of key, made free if new; under table.mu. */
static struct lease *lease_of(const char *key, size_t len)
{
    for (size_t i = 0; i < table.n; i++)
        if (strlen(table.lease[i].key) == len && memcmp(table.lease[i].key, key, len) == 0)
            return &table.lease[i];
    if (table.n == MAX_KEYS || len >= sizeof(table.lease[0].key))
        return NULL;
    struct lease *l = &table.lease[table.n++];
    memcpy(l->key, key, len);
    l->key[len] = '\0';
    l->expires_ns = 0;
    return l;
}

static bool ours(const struct lease *l, const struct lock_client *c, uint64_t now)
{
    return l != NULL && l->expires_ns > now && strcmp(l->owner, c->owner) == 0;
}

/* "<run id>:<client>:<incarnation>" */
static uint32_t client_of(const char *owner)
{
    const char *p = strchr(owner, ':');
    return p ? (uint32_t)strtoul(p + 1, NULL, 10) : UINT32_MAX;
}

static int table_connect(struct lock_client *c)
{
    c->impl = NULL;
    return 0;
}

static void table_disconnect(struct lock_client *c)
{
    c->impl = NULL;
}

static enum lock_result table_acquire(struct lock_client *c, const char *key, size_t key_len,
                                      uint32_t ttl_ms, uint32_t wait_ms, struct lock_grant *g)
{
    uint64_t deadline = lock_now_ns() + (uint64_t)wait_ms * NS_PER_MS;
    for (;;) {
        uint64_t now = lock_now_ns();
        bool got = false;
        pthread_mutex_lock(&table.mu);
        struct lease *l = lease_of(key, key_len);
        if (table.n_tries < MAX_RENEWS)
            table.tries[table.n_tries++] =
                (struct renew_call){.client = client_of(c->owner), .t_ns = now, .r = LOCK_BUSY};
        if (l && l->expires_ns <= now) {
            table.lapsed_takeovers += l->expires_ns != 0;
            snprintf(l->owner, sizeof(l->owner), "%s", c->owner);
            l->expires_ns = now + (uint64_t)ttl_ms * NS_PER_MS;
            got = true;
        }
        pthread_mutex_unlock(&table.mu);
        if (l == NULL) {
            lock_set_error(c, LOCK_ERR_CONFIG, "the test's lease table is full");
            return LOCK_ERR;
        }
        if (got) {
            *g = (struct lock_grant){
                .key = key, .key_len = key_len, .ttl_ms = ttl_ms, .validity_ms = ttl_ms};
            return LOCK_OK;
        }
        if (now >= deadline || lock_cancelled(c))
            return LOCK_BUSY;
        lock_sleep(c, 1);
    }
}

static enum lock_result table_release(struct lock_client *c, const struct lock_grant *g)
{
    uint64_t now = lock_now_ns();
    pthread_mutex_lock(&table.mu);
    struct lease *l = lease_of(g->key, g->key_len);
    bool mine = ours(l, c, now);
    if (mine)
        l->expires_ns = 0;
    pthread_mutex_unlock(&table.mu);
    return mine ? LOCK_OK : LOCK_LOST;
}

static enum lock_result table_renew(struct lock_client *c, struct lock_grant *g)
{
    uint64_t now = lock_now_ns();
    pthread_mutex_lock(&table.mu);
    struct lease *l = lease_of(g->key, g->key_len);
    bool mine = ours(l, c, now);
    if (mine)
        l->expires_ns = now + (uint64_t)g->ttl_ms * NS_PER_MS;
    if (table.n_renew < MAX_RENEWS)
        table.renew[table.n_renew++] = (struct renew_call){
            .client = client_of(c->owner), .t_ns = now, .r = mine ? LOCK_OK : LOCK_LOST};
    pthread_mutex_unlock(&table.mu);
    return mine ? LOCK_OK : LOCK_LOST;
}

static void table_crash(struct lock_client *c)
{
    c->impl = NULL;
}

/* The lease kept alive by the client, as etcd's Session keeps its. */
static const struct lock_ops kept_ops = {
    .name = "test-kept-lease",
    .summary = "a lease table in the test's memory, kept alive by its holders",
    .server = "redis",
    .keeps_lease_alive = true,
    .connect = table_connect,
    .disconnect = table_disconnect,
    .acquire = table_acquire,
    .release = table_release,
    .renew = table_renew,
    .crash = table_crash,
};

/* The same lease, renewable but not kept alive: renewed only by a watchdog. */
static const struct lock_ops plain_ops = {
    .name = "test-plain-lease",
    .summary = "the same lease table, renewed only by a watchdog",
    .server = "redis",
    .connect = table_connect,
    .disconnect = table_disconnect,
    .acquire = table_acquire,
    .release = table_release,
    .renew = table_renew,
    .crash = table_crash,
};

/* --- driving the engine ------------------------------------------------- */

/* json as a scenario (checked as the redis lock's, whose keys it uses),
 * then resolved for ops, as scenario_load resolves it for its own lock. */
static void load(const char *json, const struct lock_ops *ops, struct scenario *s)
{
    char err[SCENARIO_ERR_MAX];
    int rc = scenario_load_text("", json, strlen(json), NULL, s, err);
    if (rc != 0)
        fail_msg("scenario refused: %s", err);
    scenario_resolve(s, ops);
}

/* One whole run of s with ops; the result judged, into res. */
static void run(const struct scenario *s, const struct lock_ops *ops, struct run_result *res)
{
    char err[256];
    struct lock_config cfg = {.io_timeout_ms = 1000, .retry_min_ms = 1, .retry_max_ms = 1};
    table_reset();
    struct runner *r = runner_new(s, ops, &cfg, err, sizeof(err));
    assert_non_null(r);
    cfg.cancel = runner_cancel_flag(r);
    assert_int_equal(runner_start(r, err, sizeof(err)), 0);
    runner_go(r);
    /* bounded: the run's own length and its faults, and then some */
    assert_true(runner_wait(r, (uint32_t)s->duration_ms + 10000));
    memset(res, 0, sizeof(*res));
    assert_int_equal(runner_collect(r, res), 0);
    result_judge(res);
    runner_free(r);
}

static size_t renewals(uint32_t client, enum lock_result want)
{
    size_t k = 0;
    for (size_t i = 0; i < table.n_renew; i++)
        k += (client == UINT32_MAX || table.renew[i].client == client) && table.renew[i].r == want;
    return k;
}

/* The run's events, read back from its history file as `check` reads it. */
struct events {
    struct history_event *ev;
    size_t n, cap;
};

static int keep_event(void *ctx, const struct history_event *e)
{
    struct events *x = ctx;
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 1024;
        x->ev = realloc(x->ev, x->cap * sizeof(*x->ev));
        assert_non_null(x->ev);
    }
    x->ev[x->n++] = *e;
    return 0;
}

static struct events run_events(struct run_result *res)
{
    struct events x = {0};
    char err[512];
    assert_non_null(res->journal);
    if (journal_replay(res->journal, keep_event, &x, NULL, err, sizeof(err)) != 0)
        fail_msg("history not read back: %s", err);
    assert_int_equal(x.n, res->history_events);
    return x;
}

static size_t history_renewals(struct run_result *res, uint8_t type)
{
    struct events x = run_events(res);
    size_t k = 0;
    for (size_t i = 0; i < x.n; i++)
        k += x.ev[i].f == HF_RENEW && x.ev[i].type == type;
    free(x.ev);
    return k;
}

/* One client holds 900 ms sections under a 300 ms lease, no watchdog. */
#define LONG_HOLDS                                                                                 \
    "{\"name\": \"t\", \"clients\": 2, \"duration_s\": 2, \"seed\": 1,"                            \
    " \"lock\": {\"algorithm\": \"redis\", \"ttl_ms\": 300, \"wait_ms\": 3000},"                   \
    " \"workload\": {\"type\": \"flash_sale\", \"items\": 1, \"stock\": 1000000,"                  \
    " \"critical_ms\": 900}%s}"

static void kept_lease_is_renewed_without_a_watchdog(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof(json), LONG_HOLDS, "");
    struct scenario s;
    load(json, &kept_ops, &s);
    assert_false(s.watchdog);
    assert_int_equal(s.renew_ms, 100); /* ttl / 3 */
    assert_true(s.n_resolved > 0);
    assert_non_null(strstr(s.resolved[0], "lock.renew_ms: 100 = ttl_ms / 3 (the lease's "
                                          "keep-alive period)"));
    struct run_result res;
    run(&s, &kept_ops, &res);
    /* 2 s of 900 ms holds renewed every 100 ms: a dozen and more, while
     * the host keeps time (a machine loaded past its cores stalls the
     * clients, and the run records each stall) */
    print_message("%zu renewals, %zu host stalls\n", renewals(UINT32_MAX, LOCK_OK), res.n_stalls);
    assert_true(renewals(UINT32_MAX, LOCK_OK) >= (res.n_stalls == 0 ? 12 : 1));
    assert_int_equal(history_renewals(&res, HT_OK), renewals(UINT32_MAX, LOCK_OK));
    assert_true(res.complete);
    /* A lease lapses only when its renewer stands still for 200 ms, which
     * on a machine loaded far past its cores happens: the run must then
     * lay the lapse on the host's stall, never on the lock. */
    if (table.lapsed_takeovers > 0 || res.check.concurrent_entries > 0) {
        char why[256] = "";
        bool host = result_host_made_violations(&res, why, sizeof(why));
        print_message("a lease lapsed (%llu takeovers); the host made it: %s\n",
                      (unsigned long long)table.lapsed_takeovers, host ? why : "no");
        assert_true(host);
    } else {
        assert_int_equal(renewals(UINT32_MAX, LOCK_LOST), 0);
    }
    result_free(&res);
}

static void plain_lease_is_not_renewed_and_lapses(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof(json), LONG_HOLDS, "");
    struct scenario s;
    load(json, &plain_ops, &s);
    assert_int_equal(s.renew_ms, 0);
    struct run_result res;
    run(&s, &plain_ops, &res);
    assert_int_equal(table.n_renew, 0);
    assert_true(table.lapsed_takeovers > 0);
    assert_true(res.check.concurrent_entries > 0); /* the checker sees the lapse */
    result_free(&res);
}

/* A pause of 600 ms (two leases) 300 ms into the run: the paused holder
 * renews nothing meanwhile; its lease lapses, the other client takes the
 * lock, and the holder's first renewal after the pause finds it lost. */
static void paused_holder_stops_renewing(void **state)
{
    (void)state;
    char json[1024];
    snprintf(json, sizeof(json), LONG_HOLDS,
             ", \"faults\": [{\"type\": \"client_pause\", \"at_ms\": 300, \"target\": \"holder\","
             " \"duration_ms\": 600}]");
    struct scenario s;
    load(json, &kept_ops, &s);
    struct run_result res;
    run(&s, &kept_ops, &res);
    assert_int_equal(res.n_faults, 1);
    const struct fault_record *f = &res.faults[0];
    assert_true(f->fired && f->ended);
    size_t lost = 0;
    for (size_t i = 0; i < table.n_renew; i++) {
        const struct renew_call *c = &table.renew[i];
        if (c->client != f->client)
            continue;
        assert_false(c->t_ns > f->start_ns && c->t_ns < f->end_ns); /* nothing while paused */
        lost += c->r == LOCK_LOST && c->t_ns >= f->end_ns;
    }
    assert_true(lost >= 1);
    assert_true(table.lapsed_takeovers > 0);
    assert_true(history_renewals(&res, HT_FAIL) >= 1); /* logged as a watchdog's loss */
    assert_true(res.check.concurrent_entries > 0);
    result_free(&res);
}

/* scheduled_tasks keeps each won lock 1 s (lockAtLeastFor) under a 300 ms
 * lease while the instance goes on: the kept locks are renewed too. */
static void kept_locks_are_renewed(void **state)
{
    (void)state;
    const char *json =
        "{\"name\": \"t\", \"clients\": 2, \"duration_s\": 2, \"seed\": 1,"
        " \"lock\": {\"algorithm\": \"redis\", \"ttl_ms\": 300, \"wait_ms\": 0},"
        " \"workload\": {\"type\": \"scheduled_tasks\", \"tasks\": 1, \"period_ms\": 1000,"
        " \"run_ms\": 5, \"jitter_ms\": 0, \"hold_min_ms\": 1000}}";
    struct scenario s;
    load(json, &kept_ops, &s);
    struct run_result res;
    run(&s, &kept_ops, &res);
    assert_true(renewals(UINT32_MAX, LOCK_OK) >= 6);
    assert_int_equal(renewals(UINT32_MAX, LOCK_LOST), 0);
    assert_int_equal(table.lapsed_takeovers, 0);
    assert_int_equal(res.check.concurrent_entries, 0);
    result_free(&res);
    /* without the keep-alive, the 1 s holds outlive their 300 ms leases */
    load(json, &plain_ops, &s);
    run(&s, &plain_ops, &res);
    assert_int_equal(table.n_renew, 0);
    result_free(&res);
}

/* The holder keeps the lock 1 s; the other client waits inside acquire,
 * looking at the lease every millisecond, and is paused from 300 ms for
 * 1.5 s: it looks at nothing between the pause's start and its end, and
 * takes the lock only after the pause, though it was free from about 1 s. */
static void paused_waiter_stops_inside_acquire(void **state)
{
    (void)state;
    const char *json =
        "{\"name\": \"t\", \"clients\": 2, \"duration_s\": 2, \"seed\": 1,"
        " \"lock\": {\"algorithm\": \"redis\", \"ttl_ms\": 5000, \"wait_ms\": 5000},"
        " \"workload\": {\"type\": \"flash_sale\", \"items\": 1, \"stock\": 1000000,"
        " \"critical_ms\": 1000},"
        " \"faults\": [{\"type\": \"client_pause\", \"at_ms\": 300, \"target\": \"waiter\","
        " \"duration_ms\": 1500}]}";
    struct scenario s;
    load(json, &plain_ops, &s);
    struct run_result res;
    run(&s, &plain_ops, &res);
    const struct fault_record *f = &res.faults[0];
    assert_true(f->fired && f->ended);
    assert_true(f->end_ns - f->start_ns >= 1500 * NS_PER_MS);
    size_t before = 0, during = 0, after = 0;
    for (size_t i = 0; i < table.n_tries; i++) {
        const struct renew_call *t = &table.tries[i];
        if (t->client != f->client)
            continue;
        before += t->t_ns < f->start_ns;
        /* a look already under way as the pause began may finish: 1 ms */
        during += t->t_ns > f->start_ns + NS_PER_MS && t->t_ns < f->end_ns;
        after += t->t_ns >= f->end_ns;
    }
    assert_true(before > 0); /* it was waiting */
    assert_int_equal(during, 0);
    assert_true(after > 0);
    /* its grant came after the pause, the lock free since about 1 s */
    bool granted_after = false;
    struct events x = run_events(&res);
    for (size_t i = 0; i < x.n; i++) {
        const struct history_event *e = &x.ev[i];
        if (e->client == f->client && e->f == HF_ACQUIRE && e->type == HT_OK) {
            assert_true(e->t_ns >= f->end_ns);
            granted_after = true;
        }
    }
    free(x.ev);
    assert_true(granted_after);
    assert_int_equal(res.check.concurrent_entries, 0);
    result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_lease_is_renewed_without_a_watchdog),
        cmocka_unit_test(plain_lease_is_not_renewed_and_lapses),
        cmocka_unit_test(paused_holder_stops_renewing),
        cmocka_unit_test(kept_locks_are_renewed),
        cmocka_unit_test(paused_waiter_stops_inside_acquire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
