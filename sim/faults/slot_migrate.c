/* slot_migrate.c - the fault kind that moves the slot of a lock's key to
 * another master of a Redis Cluster while clients use it, as
 * `redis-cli --cluster reshard` does a slot at a time (redis.io, "Redis
 * cluster specification": live resharding): the target master set
 * IMPORTING it, its owner MIGRATING it, every key of it moved with
 * MIGRATE (a held lock keeps its ttl), and after duration_ms the keys
 * written meanwhile moved too and the slot given to the target
 * (SETSLOT NODE, on every master).
 *
 * While the slot is on the move its owner answers ASK for a key it no
 * longer has, and TRYAGAIN for a command whose keys are split between the
 * two nodes (a fenced acquire, the key and its counter): that is the
 * availability a migration costs, and a lock must pay it without losing
 * mutual exclusion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/record/figures.h"

#define MOVE_MAX_KEYS 10000 /* keys moved at one step, at most: a bounded loop */

static int check(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0 || fault_refuse(fc, "count", "it moves one slot") < 0)
        return -1;
    if (!fault_has(fc, "key"))
        return fault_needs(fc, "key", "the key whose slot it moves");
    return fault_check_needs_duration(fc);
}

/* The answer of the node on port to command, as an integer (":N"); -1. */
static long integer_reply(int port, const char *command)
{
    char rep[64];
    return redis_server_reply(port, command, rep, sizeof(rep)) > 1 && rep[0] == ':'
               ? strtol(rep + 1, NULL, 10)
               : -1;
}

/* Does the node on port serve slot, by its own CLUSTER NODES line? */
static bool serves(int port, long slot)
{
    char nodes[8192];
    if (redis_server_reply(port, "CLUSTER NODES", nodes, sizeof(nodes)) <= 0)
        return false;
    const char *line = strstr(nodes, "myself,master");
    if (line == NULL)
        return false;
    const char *eol = strchr(line, '\n');
    /* from the flags (the third field), six on to the slots: "0-5460",
     * "7", "[7->-<id>]" for one on the move */
    const char *at = line;
    for (int field = 0; field < 6 && at; field++)
        at = strchr(at + 1, ' ');
    while (at && (!eol || at < eol)) {
        at++;
        if (*at != '[') {
            char *dash;
            long from = strtol(at, &dash, 10),
                 to = *dash == '-' ? strtol(dash + 1, NULL, 10) : from;
            if (from <= slot && slot <= to)
                return true;
        }
        at = strchr(at, ' ');
    }
    return false;
}

/* The first key of slot the node on port still has into key (cut to
 * len); 0 when it has none, -1 when it did not answer. */
static int first_key(int port, long slot, char *key, size_t len)
{
    char cmd[64], rep[512];
    snprintf(cmd, sizeof(cmd), "CLUSTER GETKEYSINSLOT %ld 1", slot);
    if (redis_server_reply(port, cmd, rep, sizeof(rep)) <= 0 || rep[0] != '*')
        return -1;
    if (strncmp(rep, "*0", 2) == 0)
        return 0;
    const char *bulk = strstr(rep, "\r\n$");
    const char *body = bulk ? strstr(bulk + 3, "\r\n") : NULL;
    if (body == NULL)
        return -1;
    body += 2;
    size_t n = strcspn(body, "\r\n");
    snprintf(key, len, "%.*s", (int)n, body);
    return 1;
}

/* Every key of slot from the node on from_port to the one on to_port:
 * how many, or -1 with err set. */
static long move_keys(int from_port, int to_port, long slot, char *err, size_t len)
{
    long moved = 0;
    for (; moved < MOVE_MAX_KEYS; moved++) {
        char key[400], cmd[560], rep[128];
        int got = first_key(from_port, slot, key, sizeof(key));
        if (got <= 0) {
            if (got < 0)
                snprintf(err, len, "CLUSTER GETKEYSINSLOT got no answer");
            return got < 0 ? -1 : moved;
        }
        snprintf(cmd, sizeof(cmd), "MIGRATE %s %d %s 0 5000 REPLACE", cluster_port_addr(to_port),
                 to_port, key);
        if (redis_server_reply(from_port, cmd, rep, sizeof(rep)) <= 0 ||
            strncmp(rep, "+OK", 3) != 0) {
            rep[strcspn(rep, "\r\n")] = '\0';
            snprintf(err, len, "MIGRATE %.64s: %.64s", key, rep[0] ? rep : "no answer");
            return -1;
        }
    }
    snprintf(err, len, "more than %d keys in the slot", MOVE_MAX_KEYS);
    return -1;
}

/* The node (of the lock's) that serves slot now; -1 when none says so. */
static int owner_of(struct nemesis *n, long slot)
{
    for (size_t k = 0; k < n->lock_nodes; k++)
        if (serves(nemesis_server(n, k)->port, slot))
            return (int)k;
    return -1;
}

static void strike(struct nemesis *n, size_t i, size_t k)
{
    struct fault_record *r = &n->rec[i];
    int to = nemesis_server(n, k)->port;
    char cmd[200], to_id[41], from_id[41], err[160] = "";
    snprintf(cmd, sizeof(cmd), "CLUSTER KEYSLOT %s", r->spec.key);
    long slot = integer_reply(to, cmd);
    int from = slot < 0 ? -1 : owner_of(n, slot);
    if (from < 0 || (size_t)from == k || redis_server_node_id(to, to_id) < 0 ||
        redis_server_node_id(nemesis_server(n, (size_t)from)->port, from_id) < 0) {
        nemesis_failed_to(n, i, "move the slot to", k,
                          from == (int)k ? "it serves the slot already"
                                         : "no master named as serving the key's slot");
        return;
    }
    int from_port = nemesis_server(n, (size_t)from)->port;
    snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %ld IMPORTING %s", slot, from_id);
    bool ok = redis_server_command(to, cmd, "+OK") == 0;
    snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %ld MIGRATING %s", slot, to_id);
    ok = ok && redis_server_command(from_port, cmd, "+OK") == 0;
    long moved = ok ? move_keys(from_port, to, slot, err, sizeof(err)) : -1;
    if (moved < 0) {
        nemesis_failed_to(n, i, "migrate the slot to", k, err[0] ? err : "SETSLOT refused");
        return;
    }
    r->moved_from = from; /* for the end */
    r->moved_slot = slot + 1;
    nemesis_add_text(r->detail, sizeof(r->detail),
                     "slot %ld of %s MIGRATING from %s to %s: %ld key%s moved", slot, r->spec.key,
                     n->nodes.node[from].name, n->nodes.node[k].name, moved, moved == 1 ? "" : "s");
}

static uint64_t end_due(const struct nemesis *n, size_t i)
{
    return n->rec[i].spec.duration_ms * 1000000u;
}

/* The keys written on the old owner meanwhile moved too, then the slot
 * given to the target on every master, the two first. */
static void end(struct nemesis *n, size_t i, bool healed)
{
    (void)healed;
    struct fault_record *r = &n->rec[i];
    for (size_t k = 0; k < n->nodes.n; k++) {
        if (!(n->struck[i] & (1u << k)) || r->moved_slot == 0)
            continue;
        long slot = r->moved_slot - 1;
        int to = nemesis_server(n, k)->port, from = nemesis_server(n, (size_t)r->moved_from)->port;
        char err[160] = "", to_id[41], cmd[96];
        long moved = move_keys(from, to, slot, err, sizeof(err));
        if (moved < 0 || redis_server_node_id(to, to_id) < 0) {
            nemesis_failed_to(n, i, "finish the migration to", k, err[0] ? err : "no id");
            continue;
        }
        snprintf(cmd, sizeof(cmd), "CLUSTER SETSLOT %ld NODE %s", slot, to_id);
        int given = 0;
        int order[LOCK_ENDPOINT_MAX];
        size_t m = 0;
        order[m++] = (int)k;
        order[m++] = r->moved_from;
        for (size_t j = 0; j < n->lock_nodes && m < LOCK_ENDPOINT_MAX; j++)
            if ((int)j != (int)k && (int)j != r->moved_from &&
                redis_server_leads(nemesis_server(n, j)->port))
                order[m++] = (int)j;
        for (size_t j = 0; j < m; j++)
            given +=
                redis_server_command(nemesis_server(n, (size_t)order[j])->port, cmd, "+OK") == 0;
        if (given < 2)
            nemesis_failed_to(n, i, "give the slot to", k, "SETSLOT NODE refused");
        else
            nemesis_add_text(r->detail, sizeof(r->detail),
                             "%ld more key%s moved, slot %ld given to %s (%d masters told)", moved,
                             moved == 1 ? "" : "s", slot, n->nodes.node[k].name, given);
    }
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "slot_migrate: the slot of %s to %s over %s s", f->key, f->target_text,
             figure_seconds(f->duration_ms, b, sizeof(b)));
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "key", json_string(f->key));
}

const struct fault_kind fault_slot_migrate = {
    .name = "slot_migrate",
    .number = 16,
    .summary = "move the slot of key to the target Redis Cluster master while clients use it "
               "(IMPORTING / MIGRATING, MIGRATE of its keys); after duration_ms the slot is "
               "the target's (SETSLOT NODE)",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "process",
    .check = check,
    .misfit = fault_misfit_cluster,
    .strike = strike,
    .end_due = end_due,
    .end = end,
    .plan = plan,
    .settings = settings,
};
