/* cluster_failover.c - the fault kind that asks a Redis Cluster replica
 * to take its master's place (CLUSTER FAILOVER), as an operator does for
 * maintenance or to get a cluster out of a stuck state, and ends once the
 * replica says it is a master.
 *
 * Its mode is the command's option. manual (none): the master stops its
 * clients until the replica has its whole stream, then they switch; no
 * write is lost. force (FORCE): no handshake with the master, which may be
 * dead, but an election among the masters; what the replica had not yet
 * received is lost. takeover (TAKEOVER): no election either, the replica
 * takes a new epoch of its own, even against a live master or a better
 * replica: the way to make a lagging replica the new master for certain
 * (Redisson #5256: WAIT counted another replica's ack).
 */
#include <stdio.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

#define TAKEOVER_POLL_NS 10000000ull /* how often the replica is asked whether it leads */

static const char *const option[] = {
    [FAILOVER_MANUAL] = "",
    [FAILOVER_FORCE] = " FORCE",
    [FAILOVER_TAKEOVER] = " TAKEOVER",
};

static int check(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_side_clients(fc) < 0 ||
        fault_refuse(fc, "duration_ms", "it ends when the replica is a master") < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static void strike(struct nemesis *n, size_t i, size_t k)
{
    struct fault_record *r = &n->rec[i];
    int port = nemesis_server(n, k)->port;
    char command[40], rep[128] = "";
    snprintf(command, sizeof(command), "CLUSTER FAILOVER%s", option[r->spec.mode]);
    int got = redis_server_reply(port, command, rep, sizeof(rep));
    rep[strcspn(rep, "\r\n")] = '\0';
    if (got <= 0 || strcmp(rep, "+OK") != 0) {
        nemesis_failed_to(n, i, command, k, got > 0 ? rep : "no answer");
        return;
    }
    nemesis_add_text(r->detail, sizeof(r->detail), "%s to %s (port %d): OK", command,
                     n->nodes.node[k].name, port);
}

static uint64_t end_due(const struct nemesis *n, size_t i)
{
    (void)n, (void)i;
    return TAKEOVER_POLL_NS;
}

/* It ends once every replica it asked says it leads. */
static bool ready_to_end(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    uint64_t now = clock_mono_ns();
    for (size_t k = 0; k < n->nodes.n; k++)
        if ((n->struck[i] & (1u << k)) && !redis_server_leads(nemesis_server(n, k)->port)) {
            n->end_due_ns[i] = now + TAKEOVER_POLL_NS;
            return false;
        }
    r->promoted_ns = now;
    return true;
}

static void end(struct nemesis *n, size_t i, bool healed)
{
    (void)healed;
    struct fault_record *r = &n->rec[i];
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(n->struck[i] & (1u << k)))
            continue;
        if (r->promoted_ns)
            nemesis_add_text(r->detail, sizeof(r->detail), "%s a master after %.3f s",
                             n->nodes.node[k].name, (double)(r->promoted_ns - r->start_ns) / 1e9);
        else
            nemesis_add_text(r->error, sizeof(r->error), "%s was no master when the run ended",
                             n->nodes.node[k].name);
    }
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    snprintf(buf, len, "cluster_failover: CLUSTER FAILOVER%s to %s", option[f->mode],
             f->target_text);
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "mode", json_string(failover_mode_words[f->mode]));
}

const struct fault_kind fault_cluster_failover = {
    .name = "cluster_failover",
    .number = 15,
    .summary = "ask the target Redis Cluster replica to take its master's place (CLUSTER "
               "FAILOVER; mode manual, force or takeover); it ends once the replica is a master",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "process",
    .check = check,
    .misfit = fault_misfit_cluster,
    .strike = strike,
    .end_due = end_due,
    .ready_to_end = ready_to_end,
    .end = end,
    .ends_on_event = true,
    .plan = plan,
    .settings = settings,
};
