/* process_faults.c - the fault kinds that signal server processes: kill
 * (SIGKILL, back after restart_after_ms), pause (SIGSTOP for duration_ms,
 * then SIGCONT) and restart (SIGTERM, started again at once). Jepsen's
 * kill, pause and restart nemeses on the servers a run uses. A kill and a
 * pause strike every process of a server (PostgreSQL's backends with its
 * postmaster), and are checked to have silenced it (fault_truth.c).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>

#include "sim/faults/fault.h"
#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"

/* ---- the keys -------------------------------------------------------- */

static int check_kill(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_refuse(fc, "duration_ms", "it lasts until restart_after_ms") < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static int check_pause(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0 || fault_check_no_mode(fc) < 0 ||
        fault_check_no_side_clients(fc) < 0 || fault_check_holder_majority(fc) < 0)
        return -1;
    return fault_check_needs_duration(fc);
}

static int check_restart(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_servers(fc) < 0 ||
        fault_refuse(fc, "duration_ms", "it ends when the server answers again") < 0 ||
        fault_check_no_restart(fc) < 0 || fault_check_no_clock_keys(fc) < 0 ||
        fault_check_no_mode(fc) < 0 || fault_check_no_side_clients(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

/* ---- the nemesis ----------------------------------------------------- */

static void strike_kill(struct nemesis *n, size_t i, size_t k)
{
    nemesis_strike(n, i, k, SIGKILL);
}

static void strike_pause(struct nemesis *n, size_t i, size_t k)
{
    nemesis_strike(n, i, k, SIGSTOP);
}

static void strike_restart(struct nemesis *n, size_t i, size_t k)
{
    nemesis_signal(n, i, k, "SIGTERM", cluster_stop_one);
}

static uint64_t kill_end_due(const struct nemesis *n, size_t i)
{
    return n->rec[i].spec.restart_after_ms * 1000000u; /* 0: down until the run ends */
}

static uint64_t pause_end_due(const struct nemesis *n, size_t i)
{
    return n->rec[i].spec.duration_ms * 1000000u;
}

static void bring_back(struct nemesis *n, size_t i, bool healed)
{
    (void)healed;
    nemesis_restart_all(n, i);
}

static void resume(struct nemesis *n, size_t i, bool healed)
{
    (void)healed;
    nemesis_resume_all(n, i);
}

/* ---- what it says of itself ----------------------------------------- */

/* what the servers come back with: as the file says, or (a fault's
 * record, resolved by the nemesis) their kind's own */
static void data_text(const struct fault_spec *f, char *buf, size_t len)
{
    buf[0] = '\0';
    if (f->data != DATA_UNSET)
        snprintf(buf, len, ", data %s", fault_data_name(f->data));
}

static void plan_kill(const struct fault_spec *f, char *buf, size_t len)
{
    char data[24];
    data_text(f, data, sizeof(data));
    if (f->restart_after_ms) {
        char b[32];
        snprintf(buf, len, "kill %s, back after %s s%s", f->target_text,
                 figure_seconds(f->restart_after_ms, b, sizeof(b)), data);
    } else
        snprintf(buf, len, "kill %s, down until the run ends%s", f->target_text, data);
}

static void plan_pause(const struct fault_spec *f, char *buf, size_t len)
{
    char a[32];
    snprintf(buf, len, "pause %s for %s s", f->target_text,
             figure_seconds(f->duration_ms, a, sizeof(a)));
}

static void plan_restart(const struct fault_spec *f, char *buf, size_t len)
{
    char data[24];
    data_text(f, data, sizeof(data));
    snprintf(buf, len, "restart %s%s", f->target_text, data);
}

/* "data": as the file gave it, or in a run's record what came back (its
 * kind's own when the file said nothing); none for a pooler, which keeps
 * no data */
static void settings_data(const struct fault_spec *f, json_t *o)
{
    if (f->data != DATA_UNSET)
        json_object_set_new(o, "data", json_string(fault_data_name(f->data)));
}

static void settings_kill(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    json_object_set_new(o, "restart_after_ms", json_integer((json_int_t)f->restart_after_ms));
    settings_data(f, o);
}

static void settings_pause(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
}

static void settings_restart(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    settings_data(f, o);
}

const struct fault_kind fault_kill = {
    .name = "kill",
    .number = 2,
    .summary = "SIGKILL the target servers, every process of each; with restart_after_ms "
               "they come back on the same port, with their data where it is on disk "
               "(PostgreSQL, etcd, ZooKeeper), else empty (data: lost) or from an AOF "
               "fsynced on every write (data: kept)",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_RESTART,
    .band = "process",
    .check = check_kill,
    .takes_data = true,
    .takes_restart = true,
    .misfit = fault_misfit_data,
    .strike = strike_kill,
    .silences = true,
    .end_due = kill_end_due,
    .end = bring_back,
    .plan = plan_kill,
    .settings = settings_kill,
};

const struct fault_kind fault_pause = {
    .name = "pause",
    .number = 3,
    .summary = "SIGSTOP every process of the target servers for duration_ms, then SIGCONT: "
               "they hold every connection and answer nobody meanwhile",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "process",
    .check = check_pause,
    .strike = strike_pause,
    .silences = true,
    .opens_when_stopped = true,
    .end_due = pause_end_due,
    .end = resume,
    .ends_as_end_begins = true, /* any answer after SIGCONT may be the running server's */
    .plan = plan_pause,
    .settings = settings_pause,
};

const struct fault_kind fault_restart = {
    .name = "restart",
    .number = 4,
    .summary = "stop the target servers cleanly (SIGTERM) and start them again at once, "
               "with their data where it is on disk, else lost unless kept",
    .family = FAULT_FAMILY_SERVERS,
    .window = WINDOW_DURATION,
    .band = "process",
    .check = check_restart,
    .takes_data = true,
    .misfit = fault_misfit_data,
    .strike = strike_restart,
    .end = bring_back, /* no end_due: back as soon as stopped */
    .plan = plan_restart,
    .settings = settings_restart,
};
