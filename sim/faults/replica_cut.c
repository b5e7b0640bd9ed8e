/* replica_cut.c - the fault kind that cuts a Redis replica off its
 * master for duration_ms, so that what the master grants meanwhile exists
 * nowhere else: the replica is stopped (SIGSTOP) and then the master's
 * replication links closed (CLIENT KILL TYPE replica), then at the end
 * the replica continued, to resynchronise if its master still lives.
 *
 * Stopping the replica alone cuts nothing: the master keeps writing the
 * replication stream into the socket, the kernel buffers it, and the
 * replica reads all of it once continued, even after its master died (a
 * master killed behind a merely paused replica loses no lock). Closing the
 * link from the master's side after the stop ends that stream where it
 * is; the stopped replica cannot dial again. A Redis Cluster's replicas
 * dial their master's own port, past locklab's proxy, so the proxy's
 * "replication" target cannot reach them; this reaches them through Redis
 * itself. Another replica of the same master loses its link too and dials
 * again within its next second (replicationCron), catching up from the
 * backlog.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/redis_server.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/figures.h"

static int check(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0)
        return -1;
    return fault_check_needs_duration(fc);
}

static int misfit(const struct fault_fit *fit, const struct fault_spec *f, const char **key,
                  char *why, size_t len)
{
    (void)f;
    const struct server_kind *kind = server_kind_find(fit->ops->server);
    if (kind && kind->follower_word && strcmp(kind->follower_word, "replica") == 0)
        return 0;
    *key = "type";
    snprintf(why, len, "a replica_cut cuts a Redis replica off its master; %s runs on %s servers",
             fit->ops->name, fit->ops->server ? fit->ops->server : "no");
    return -1;
}

/* The port of the master the replica on port follows, from its INFO
 * replication; 0 when it names none. */
static int master_port_of(int port)
{
    char info[4096];
    if (redis_server_reply(port, "INFO replication", info, sizeof(info)) <= 0)
        return 0;
    const char *at = strstr(info, "master_port:");
    return at ? atoi(at + strlen("master_port:")) : 0;
}

static void strike(struct nemesis *n, size_t i, size_t k)
{
    struct fault_record *r = &n->rec[i];
    int master = master_port_of(nemesis_server(n, k)->port);
    if (master == 0) {
        nemesis_failed_to(n, i, "find the master of", k, "it follows none (INFO replication)");
        return;
    }
    size_t errors = strlen(r->error);
    nemesis_strike(n, i, k, SIGSTOP);
    if (strlen(r->error) != errors)
        return; /* not stopped: the failure is recorded */
    char rep[64] = "";
    int got = redis_server_reply(master, "CLIENT KILL TYPE replica", rep, sizeof(rep));
    long closed = got > 1 && rep[0] == ':' ? strtol(rep + 1, NULL, 10) : -1;
    if (closed < 1) {
        rep[strcspn(rep, "\r\n")] = '\0';
        nemesis_failed_to(n, i, "close the replication links to", k,
                          got > 0 ? rep : "its master did not answer CLIENT KILL");
        return;
    }
    nemesis_add_text(r->detail, sizeof(r->detail),
                     "CLIENT KILL TYPE replica on its master (port %d): %ld link%s closed", master,
                     closed, closed == 1 ? "" : "s");
}

static uint64_t end_due(const struct nemesis *n, size_t i)
{
    return n->rec[i].spec.duration_ms * 1000000u;
}

static void end(struct nemesis *n, size_t i, bool healed)
{
    (void)healed;
    nemesis_resume_all(n, i);
}

static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char b[32];
    snprintf(buf, len, "replica_cut %s off its master for %s s", f->target_text,
             figure_seconds(f->duration_ms, b, sizeof(b)));
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
}

const struct fault_kind fault_replica_cut = {
    .name = "replica_cut",
    .number = 14,
    .summary = "cut the target Redis replicas off their master for duration_ms: each stopped "
               "(SIGSTOP) and its master's replication links closed (CLIENT KILL TYPE replica), "
               "so what the master writes meanwhile is on the master alone; then continued",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "process",
    .check = check,
    .misfit = misfit,
    .strike = strike,
    .silences = true,
    .opens_when_stopped = true,
    .end_due = end_due,
    .end = end,
    .ends_as_end_begins = true,
    .plan = plan,
    .settings = settings,
};
