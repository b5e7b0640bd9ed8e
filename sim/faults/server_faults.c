/* server_faults.c - the nemesis's thread: process faults on the managed
 * servers, at their times, each start and end logged with what was done.
 *
 * Times: a start is logged at the moment before the first signal (a
 * pause's once every process it struck was seen stopped); a
 * pause's end at the moment before SIGCONT, a kill's or restart's once the
 * servers answer again. So no answer a paused server gave can fall after
 * its window, and a window covers all a fault did to the servers.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char *signal_word(int sig)
{
    return sig == SIGKILL ? "SIGKILL" : sig == SIGSTOP ? "SIGSTOP" : "SIGCONT";
}

/* Append to buf (len, *used of it taken), cut at its end. */
static void put(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 ? *used : *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

/* "SIGSTOP pg-1 (postmaster 5875 and 9 children: 5876 5877 ...)", or
 * "SIGKILL redis-2 (pid 4242)" for a server of one process, into buf;
 * the children's pids only when list. */
static void struck_text(const struct nemesis *n, size_t k, int sig, const struct cluster_struck *st,
                        bool list, char *buf, size_t len)
{
    const char *own = n->nodes.cl->srv[n->nodes.node[k].idx].kind->main_process;
    size_t used = 0;
    buf[0] = '\0';
    put(buf, len, &used, "%s %s (%s %d", signal_word(sig), n->nodes.node[k].name,
        own && st->children ? own : "pid", (int)st->pid);
    if (st->children)
        put(buf, len, &used, " and %zu child%s%s", st->children, st->children == 1 ? "" : "ren",
            list ? ":" : "");
    for (size_t c = 0; list && c < st->children && c < CLUSTER_STRUCK_LISTED; c++)
        put(buf, len, &used, " %d", (int)st->child[c]);
    if (list && st->children > CLUSTER_STRUCK_LISTED)
        put(buf, len, &used, " ...");
    put(buf, len, &used, ")");
}

/* A process that did not stop, or outlived its kill: not the fault its
 * class means. */
static void note_unmoved(struct nemesis *n, size_t i, size_t k, int sig,
                         const struct cluster_struck *st)
{
    if (st->unmoved == 0)
        return;
    nemesis_add_text(n->rec[i].error, sizeof(n->rec[i].error),
                     "%zu of %zu processes of %s %s %u ms after %s (pid %d)", st->unmoved,
                     st->children + 1, n->nodes.node[k].name,
                     sig == SIGKILL ? "still lived" : "still ran", st->waited_ms, signal_word(sig),
                     (int)st->unmoved_pid);
}

void nemesis_strike(struct nemesis *n, size_t i, size_t k, int sig)
{
    struct fault_record *r = &n->rec[i];
    struct cluster_struck st;
    char err[256], text[FAULT_TEXT_MAX];
    if (cluster_strike(n->nodes.cl, n->nodes.node[k].idx, sig, n->tree[k], n->tree_n[k], &st, err,
                       sizeof(err)) < 0) {
        nemesis_failed_to(n, i, signal_word(sig), k, err);
        return;
    }
    if (n->first_signal_ns == 0 || st.first_ns < n->first_signal_ns)
        n->first_signal_ns = st.first_ns;
    if (st.moved_ns > n->last_moved_ns)
        n->last_moved_ns = st.moved_ns;
    struck_text(n, k, sig, &st, true, text, sizeof(text));
    nemesis_add_text(r->detail, sizeof(r->detail), "%s", text);
    note_unmoved(n, i, k, sig, &st);
}

/* The paused servers of fault i continued, every process of each. */
void nemesis_resume_all(struct nemesis *n, size_t i)
{
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(n->struck[i] & (1u << k)))
            continue;
        char err[256];
        struct cluster_struck st;
        if (cluster_strike(n->nodes.cl, n->nodes.node[k].idx, SIGCONT, NULL, 0, &st, err,
                           sizeof(err)) == 0) {
            char text[FAULT_TEXT_MAX];
            /* the children were listed at the start: their count will do */
            struck_text(n, k, SIGCONT, &st, false, text, sizeof(text));
            nemesis_add_text(n->rec[i].end_detail, sizeof(n->rec[i].end_detail), "%s", text);
        } else {
            nemesis_failed_to(n, i, "SIGCONT", k, err);
        }
    }
}

/* The servers fault i took down, started again on their ports: all of
 * them before any is waited for, since a ZooKeeper member serves only once
 * a quorum of them is back. */
void nemesis_restart_all(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    bool keep = r->spec.data == DATA_KEPT; /* the kind's default when the file left it */
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
        /* unset: a kind with no data (a pooler), or a fault that takes none */
        const struct server_kind *kind = nemesis_server(n, k)->kind;
        bool data = r->spec.data != DATA_UNSET || kind->forget_data;
        nemesis_add_text(r->end_detail, sizeof(r->end_detail), "%s back on port %d as pid %d%s",
                         n->nodes.node[k].name, nemesis_server(n, k)->port, (int)nemesis_pid(n, k),
                         !data  ? ""
                         : keep ? ", data kept"
                                : ", data lost");
    }
}

/* After a fault on an ensemble that elects a leader (ZooKeeper's), or on
 * servers whose sentinels name the master: which one leads now (a
 * leader's kill shows the one elected or promoted in its place). */
static void note_leader(struct nemesis *n, size_t i)
{
    const struct server_kind *kind = n->lock_nodes ? nemesis_server(n, 0)->kind : NULL;
    bool named = n->nodes.n_sentinels > 0 && kind && kind->found_by;
    if (!named && (n->lock_nodes < 3 || !kind->one_service || kind->leads == NULL))
        return;
    int ports[LOCK_ENDPOINT_MAX];
    for (size_t k = 0; k < n->lock_nodes; k++)
        ports[k] = nemesis_server(n, k)->port;
    uint32_t lead = nemesis_leading(n, kind, ports, n->lock_nodes, 0);
    for (size_t k = 0; k < n->lock_nodes; k++)
        if (lead & (1u << k))
            nemesis_add_text(n->rec[i].end_detail, sizeof(n->rec[i].end_detail), "%s leads%s",
                             n->nodes.node[k].name, named ? " (as the sentinels name it)" : "");
}

static void end_fault(struct nemesis *n, size_t i, bool healed)
{
    struct fault_record *r = &n->rec[i];
    const struct fault_kind *kind = fault_kind_of(&r->spec);
    nemesis_truth_look(n, i); /* before it lets them answer again */
    uint64_t before = clock_mono_ns();
    if (kind->end)
        kind->end(n, i, healed);
    nemesis_truth_done(n, i);
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

/* The processes of the servers fault i strikes, read before its start
 * (reading /proc takes milliseconds; the strike, then, microseconds: no
 * client's request begun inside the window finds a server still running),
 * and let go after it. */
static void read_trees(struct nemesis *n, size_t i)
{
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(n->struck[i] & (1u << k)))
            continue;
        n->tree[k] = malloc(CLUSTER_MAX_PROCESSES * sizeof(*n->tree[k]));
        n->tree_n[k] = n->tree[k] ? cluster_processes(n->nodes.cl, n->nodes.node[k].idx, n->tree[k],
                                                      CLUSTER_MAX_PROCESSES)
                                  : 0;
    }
}

static void drop_trees(struct nemesis *n)
{
    for (size_t k = 0; k < LOCK_ENDPOINT_MAX; k++) {
        free(n->tree[k]);
        n->tree[k] = NULL;
        n->tree_n[k] = 0;
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
    const struct fault_kind *kind = fault_kind_of(&r->spec);
    if (kind->silences)
        read_trees(n, i);
    r->fired = true;
    r->start_ns = clock_mono_ns();
    n->first_signal_ns = n->last_moved_ns = 0;
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->struck[i] & (1u << k))
            kind->strike(n, i, k);
    /* the window opens at the first signal: reading the processes and
     * taking the cluster's lock did nothing to the servers; a pause, once
     * every process of its servers was seen stopped: a backend not yet
     * reached still served (under load the signals of fourteen processes
     * took milliseconds, and a grant fell inside) */
    if (n->first_signal_ns > r->start_ns)
        r->start_ns = n->first_signal_ns;
    if (kind->opens_when_stopped && n->last_moved_ns > r->start_ns)
        r->start_ns = n->last_moved_ns;
    drop_trees(n);
    log_fault(n, i, r->start_ns, 0);
    nemesis_truth_ask(n, i);
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
        return (nemesis_net_proxy(n, f) != NULL || nemesis_host_cut(n, f)) &&
               f->scope != NET_HOLDER;
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
