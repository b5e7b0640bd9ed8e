/* server_faults.c - the nemesis's thread: process faults on the managed
 * servers, at their times, each start and end logged with what was done.
 *
 * Times: a start is logged at the moment before the first signal; a
 * pause's end at the moment before SIGCONT, a kill's or restart's once the
 * servers answer again. So no answer a paused server gave can fall after
 * its window, and a window covers all a fault did to the servers.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

#define SLICE_NS 10000000ull /* how often a waiting nemesis looks at the stop flag */

bool nemesis_has_server_faults(const struct nemesis *n)
{
    if (n->nodes.cl == NULL)
        return false;
    for (size_t i = 0; i < n->n; i++)
        if (fault_on_servers(n->rec[i].spec.kind))
            return true;
    return false;
}

void nemesis_add_text(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 3 >= len)
        return;
    if (used > 0)
        used += (size_t)snprintf(buf + used, len - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void log_fault(struct nemesis *n, size_t i, uint64_t t, int end)
{
    struct history_event e;
    nemesis_fault_event(n, i, t, end, HISTORY_SERVERS, &e);
    history_append(n->hist, &e);
}

struct managed_server *nemesis_server(struct nemesis *n, size_t k)
{
    return &n->nodes.cl->srv[n->nodes.node[k].idx];
}

pid_t nemesis_pid(struct nemesis *n, size_t k)
{
    cluster_lock();
    pid_t p = nemesis_server(n, k)->pid;
    cluster_unlock();
    return p;
}

void nemesis_failed_to(struct nemesis *n, size_t i, const char *what, size_t k, const char *err)
{
    nemesis_add_text(n->rec[i].error, sizeof(n->rec[i].error), "%s of %s failed: %s", what,
                     n->nodes.node[k].name, err);
}

/* The paused servers of fault i continued. */
void nemesis_resume_all(struct nemesis *n, size_t i)
{
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(n->struck[i] & (1u << k)))
            continue;
        char err[256];
        pid_t p = nemesis_pid(n, k);
        if (cluster_resume(n->nodes.cl, n->nodes.node[k].idx, err, sizeof(err)) == 0)
            nemesis_add_text(n->rec[i].end_detail, sizeof(n->rec[i].end_detail),
                             "SIGCONT %s (pid %d)", n->nodes.node[k].name, (int)p);
        else
            nemesis_failed_to(n, i, "SIGCONT", k, err);
    }
}

/* The servers fault i took down, started again on their ports: all of
 * them before any is waited for, since a ZooKeeper member serves only once
 * a quorum of them is back. */
void nemesis_restart_all(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    bool keep = r->spec.data == DATA_KEPT;
    uint32_t started = 0;
    char err[256];
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->struck[i] & (1u << k)) {
            if (cluster_revive_start(n->nodes.cl, n->nodes.node[k].idx, keep, err, sizeof(err)) ==
                0)
                started |= 1u << k;
            else
                nemesis_failed_to(n, i, "restart", k, err);
        }
    size_t together = (size_t)__builtin_popcount(started);
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(started & (1u << k)))
            continue;
        if (cluster_revive_wait(n->nodes.cl, n->nodes.node[k].idx, together, err, sizeof(err)) <
            0) {
            nemesis_failed_to(n, i, "restart", k, err);
            continue;
        }
        bool data = nemesis_server(n, k)->kind->forget_data != NULL; /* it has data to lose */
        nemesis_add_text(r->end_detail, sizeof(r->end_detail), "%s back on port %d as pid %d%s",
                         n->nodes.node[k].name, nemesis_server(n, k)->port, (int)nemesis_pid(n, k),
                         !data  ? ""
                         : keep ? ", data kept"
                                : ", data lost");
    }
}

/* After a fault on an ensemble that elects a leader (ZooKeeper's): which
 * member leads now (a leader's kill shows the one elected in its place). */
static void note_leader(struct nemesis *n, size_t i)
{
    if (n->nodes.n < 3)
        return;
    const struct server_kind *kind = nemesis_server(n, 0)->kind;
    if (!kind->one_service || kind->leads == NULL)
        return;
    for (size_t k = 0; k < n->nodes.n; k++)
        if (kind->leads(nemesis_server(n, k)->port))
            nemesis_add_text(n->rec[i].end_detail, sizeof(n->rec[i].end_detail), "%s leads",
                             n->nodes.node[k].name);
}

static void end_fault(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    const struct fault_kind *kind = fault_kind_of(&r->spec);
    uint64_t before = clock_mono_ns();
    if (kind->end)
        kind->end(n, i, healed);
    if (!healed)
        note_leader(n, i);
    if (healed)
        nemesis_add_text(r->end_detail, sizeof(r->end_detail), "at the end of the run");
    n->busy &= ~n->struck[i];
    r->healed = healed;
    r->ended = true;
    r->end_ns = kind->ends_as_end_begins ? before : clock_mono_ns();
    log_fault(n, i, r->end_ns, 1);
}

void nemesis_signal(struct nemesis *n, size_t i, size_t k, const char *what,
                    int (*act)(struct cluster *c, size_t idx, char *err, size_t errlen))
{
    struct fault_record *r = &n->rec[i];
    pid_t p = nemesis_pid(n, k);
    char err[256];
    if (act(n->nodes.cl, n->nodes.node[k].idx, err, sizeof(err)) == 0)
        nemesis_add_text(r->detail, sizeof(r->detail), "%s %s (pid %d)", what,
                         n->nodes.node[k].name, (int)p);
    else
        nemesis_failed_to(n, i, what, k, err);
}

static bool stopping(const struct nemesis *n, uint64_t now);

/* holder-majority strikes only while someone holds the key: ask the nodes
 * again each millisecond until then. false when the run ended first. */
static void end_what_is_due(struct nemesis *n);

static bool wait_for_holder(struct nemesis *n, size_t i, char *why, size_t len)
{
    struct fault_record *r = &n->rec[i];
    for (;;) {
        n->struck[i] = nemesis_pick(n, i, why, len);
        if (n->struck[i] != 0)
            return true;
        if (stopping(n, clock_mono_ns())) {
            r->ended = true; /* never fired: nothing to bring back */
            char key[sizeof(r->spec.key)];
            memcpy(key, r->spec.key, sizeof(key));
            snprintf(r->error, sizeof(r->error), "nobody held %s before the run ended", key);
            return false;
        }
        end_what_is_due(n); /* the wait must not stretch another fault past its end */
        struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
        nanosleep(&ms, NULL);
    }
}

/* A server fault's window as the scenario wrote it ends (CLOCK_MONOTONIC);
 * 0 when it lasts to the run's end or ends on an event (a failover ends
 * once sentinel has promoted). */
static uint64_t written_end_ns(const struct nemesis *n, size_t j)
{
    const struct fault_spec *f = &n->rec[j].spec;
    const uint64_t open = UINT64_MAX / 2000000u; /* a window to the run's end */
    uint64_t end_ms = fault_end_ms(f, open);
    if (fault_kind_of(f)->ends_on_event || end_ms >= open)
        return 0;
    return n->due_ns[j] + (end_ms - f->at_ms) * 1000000u;
}

/* Faults written to end where fault i starts (the scenario's validation
 * allows back-to-back windows) end first. Their own ends are timed from
 * their actual starts, a little after their due times, so they would
 * still hold the servers fault i is to strike, and it would strike none. */
static void end_windows_before(struct nemesis *n, size_t i)
{
    for (size_t j = 0; j < n->n; j++) {
        const struct fault_record *x = &n->rec[j];
        uint64_t end = written_end_ns(n, j);
        if (j != i && fault_on_servers(x->spec.kind) && x->fired && !x->ended && end &&
            end <= n->due_ns[i])
            end_fault(n, j, false);
    }
}

static void start_fault(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    char why[128];
    end_windows_before(n, i);
    if (r->spec.pick == PICK_HOLDER_MAJORITY) {
        if (!wait_for_holder(n, i, why, sizeof(why)))
            return;
    } else {
        n->struck[i] = nemesis_pick(n, i, why, sizeof(why));
    }
    if (why[0])
        nemesis_add_text(r->error, sizeof(r->error), "%s", why);
    else if (n->struck[i] == 0) /* e.g. the master a failover is to kill is another fault's */
        nemesis_add_text(r->error, sizeof(r->error), "%s: no server free to strike",
                         r->spec.target_text);
    n->busy |= n->struck[i];
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->struck[i] & (1u << k))
            nemesis_add_text(r->servers, sizeof(r->servers), "%s", n->nodes.node[k].name);
    /* "; " joins details; servers read better joined by commas */
    for (char *c = r->servers; (c = strstr(c, "; ")) != NULL;)
        memmove(c + 1, c + 2, strlen(c + 2) + 1), *c = ',';
    r->fired = true;
    r->start_ns = clock_mono_ns();
    const struct fault_kind *kind = fault_kind_of(&r->spec);
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->struck[i] & (1u << k))
            kind->strike(n, i, k);
    log_fault(n, i, r->start_ns, 0);
    if (kind->end_due == NULL) {
        end_fault(n, i, false); /* over once struck: a clean stop and start, a clock's jump */
        return;
    }
    uint64_t after = kind->end_due(n, i);
    if (after)
        n->end_due_ns[i] = r->start_ns + after;
}

/* Is fault i played on the timeline by this thread (its start and end)? */
static bool timed_here(const struct nemesis *n, const struct fault_spec *f)
{
    if (fault_on_network(f->kind))
        return nemesis_net_proxy(n, f) != NULL && f->scope != NET_HOLDER;
    return fault_on_servers(f->kind) || fault_on_waiter(f);
}

/* A holder's network fault: started by the holder, ended here. */
static bool holder_network(const struct nemesis *n, const struct fault_spec *f)
{
    return n->proxy != NULL && fault_on_network(f->kind) && f->scope == NET_HOLDER;
}

/* When fault i, running, ends (0: with the run). */
static uint64_t end_due(struct nemesis *n, size_t i)
{
    const struct fault_spec *f = &n->rec[i].spec;
    if (!holder_network(n, f))
        return n->end_due_ns[i];
    uint64_t from = nemesis_net_fired(n, i);
    return f->duration_ms ? from + f->duration_ms * 1000000u : 0;
}

/* Has fault i begun? A holder's network fault says so through an atomic:
 * another thread starts it. */
static bool begun(struct nemesis *n, size_t i)
{
    return holder_network(n, &n->rec[i].spec) ? nemesis_net_fired(n, i) != 0 : n->rec[i].fired;
}

/* The next thing to do: a start (is_end false) or an end; false when
 * nothing is left but the end of the run. */
static bool next_action(struct nemesis *n, size_t *which, bool *is_end, uint64_t *when)
{
    bool found = false;
    for (size_t i = 0; i < n->n; i++) {
        const struct fault_record *r = &n->rec[i];
        bool holder = holder_network(n, &r->spec);
        if ((!timed_here(n, &r->spec) && !holder) || r->ended)
            continue;
        bool on = begun(n, i);
        if (holder && !on)
            continue; /* its holder starts it */
        uint64_t t = on ? end_due(n, i) : n->due_ns[i];
        if (on && t == 0)
            continue; /* on until the run ends */
        if (!found || t < *when) {
            *which = i, *is_end = on, *when = t;
            found = true;
        }
    }
    return found;
}

static void act(struct nemesis *n, size_t i, bool is_end);

/* End every fault this thread ends whose time is up: a process fault's
 * pause or restart, a network fault's toxic. */
static void end_what_is_due(struct nemesis *n)
{
    uint64_t now = clock_mono_ns();
    for (size_t i = 0; i < n->n; i++) {
        const struct fault_spec *f = &n->rec[i].spec;
        if ((!timed_here(n, f) && !holder_network(n, f)) || n->rec[i].ended || !begun(n, i))
            continue;
        uint64_t t = end_due(n, i);
        if (t != 0 && t <= now)
            act(n, i, true);
    }
}

/* A holder's network fault that some holder may still start: the thread
 * must look again soon, whatever else is due. */
static bool holder_may_start(struct nemesis *n)
{
    for (size_t i = 0; i < n->n; i++)
        if (holder_network(n, &n->rec[i].spec) && !n->rec[i].ended && !begun(n, i))
            return true;
    return false;
}

static bool stopping(const struct nemesis *n, uint64_t now)
{
    return now >= n->deadline_ns || atomic_load(n->stop) || atomic_load(&n->quit);
}

/* Sleep until t, or less when the run stops; true when t was reached. */
static bool wait_until(const struct nemesis *n, uint64_t t)
{
    for (;;) {
        uint64_t now = clock_mono_ns();
        if (stopping(n, now))
            return false;
        if (now >= t)
            return true;
        history_buf_floor(n->hist, now); /* what it logs after the sleep is later */
        uint64_t d = t - now < SLICE_NS ? t - now : SLICE_NS;
        struct timespec ts = {.tv_sec = (time_t)(d / 1000000000u),
                              .tv_nsec = (long)(d % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

void nemesis_start_at_zero(struct nemesis *n)
{
    for (size_t i = 0; i < n->n; i++) {
        const struct fault_spec *f = &n->rec[i].spec;
        if (f->at_ms != 0 || !timed_here(n, f) || fault_on_waiter(f))
            continue; /* nobody waits inside acquire before the clients begin */
        if (fault_on_network(f->kind))
            nemesis_net_start(n, i);
        else if (f->pick != PICK_HOLDER_MAJORITY)
            start_fault(n, i);
    }
}

#define POLL_NS 1000000ull /* how soon a holder's network fault is seen to have begun */

static void act(struct nemesis *n, size_t i, bool is_end)
{
    const struct fault_kind *kind = fault_kind_of(&n->rec[i].spec);
    bool network = kind->family == FAULT_FAMILY_NETWORK;
    if (is_end && kind->ready_to_end && !kind->ready_to_end(n, i))
        return; /* not over yet */
    if (fault_on_waiter(&n->rec[i].spec)) {
        if (is_end)
            nemesis_waiter_end(n, i, false);
        else
            nemesis_waiter_start(n, i);
    } else if (is_end && network)
        nemesis_net_end(n, i, false);
    else if (is_end)
        end_fault(n, i, false);
    else if (network)
        nemesis_net_start(n, i);
    else
        start_fault(n, i);
}

void *nemesis_main(void *arg)
{
    struct nemesis *n = arg;
    for (;;) {
        size_t i = 0;
        bool is_end = false;
        uint64_t when = UINT64_MAX;
        bool found = next_action(n, &i, &is_end, &when);
        bool poll = holder_may_start(n);
        if (!found && !poll)
            break;
        uint64_t now = clock_mono_ns();
        if (poll && (!found || when > now + POLL_NS)) {
            if (!wait_until(n, now + POLL_NS))
                break;
            continue;
        }
        if (!wait_until(n, when))
            break;
        act(n, i, is_end);
    }
    while (!stopping(n, clock_mono_ns())) /* what stays down, until the run ends */
        wait_until(n, n->deadline_ns);
    for (size_t i = 0; i < n->n; i++) {
        struct fault_record *r = &n->rec[i];
        /* a holder's client faults are their clients' own: not even a look here */
        if ((fault_on_client(r->spec.kind) && !fault_on_waiter(&r->spec)) || !begun(n, i) ||
            r->ended)
            continue;
        if (fault_on_waiter(&r->spec))
            nemesis_waiter_end(n, i, true);
        else if (fault_on_network(r->spec.kind))
            nemesis_net_end(n, i, true);
        else if (fault_on_servers(r->spec.kind))
            end_fault(n, i, true);
    }
    return NULL;
}
