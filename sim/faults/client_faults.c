/* client_faults.c - the fault kinds a lock holder suffers in its own
 * thread (sim/engine/client.c carries them out): client_pause, a stop
 * inside the critical section (a GC pause: its watchdog stalls with it and
 * its connections are held at the proxy), and client_crash, a death while
 * holding the lock, a new process coming back after duration_ms.
 */
#include <stdio.h>

#include "sim/faults/fault.h"

static int check_client(struct fault_check *fc)
{
    if (fault_check_no_toxic_keys(fc) < 0 || fault_check_no_data(fc) < 0 ||
        fault_check_no_restart(fc) < 0 || fault_check_no_clock_keys(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static int check_pause(struct fault_check *fc)
{
    if (check_client(fc) < 0)
        return -1;
    return fault_check_needs_duration(fc);
}

static void plan_with(const struct fault_spec *f, const char *how, char *buf, size_t len)
{
    char who[32] = "the next holder", a[32];
    if (f->target != FAULT_TARGET_HOLDER)
        snprintf(who, sizeof(who), "client %d", (int)f->target);
    snprintf(buf, len, "%s %s, %s %s s", fault_type_name(f->kind), who, how,
             scenario_seconds(f->duration_ms, a, sizeof(a)));
}

static void plan_pause(const struct fault_spec *f, char *buf, size_t len)
{
    plan_with(f, "for", buf, len);
}

static void plan_crash(const struct fault_spec *f, char *buf, size_t len)
{
    plan_with(f, "restarts after", buf, len);
}

static void settings(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_integer(f->target));
}

const struct fault_kind fault_client_pause = {
    .name = "client_pause",
    .summary = "the target stalls inside its critical section for duration_ms, as in "
               "a long GC pause; its lease can lapse while it still believes it "
               "holds the lock (its watchdog stalls with it)",
    .family = FAULT_FAMILY_CLIENT,
    .window = WINDOW_DURATION,
    .band = "client",
    .check = check_pause,
    .holds_connections = true, /* a stopped process sends nothing, and nothing reaches it */
    .holder_act = HOLDER_STALLS,
    .plan = plan_pause,
    .settings = settings,
};

const struct fault_kind fault_client_crash = {
    .name = "client_crash",
    .summary = "the target dies holding its lock without releasing it, and comes "
               "back as a new client after duration_ms; the lock must expire",
    .family = FAULT_FAMILY_CLIENT,
    .window = WINDOW_DURATION,
    .band = "client",
    .check = check_client,
    .holder_act = HOLDER_DIES,
    .plan = plan_crash,
    .settings = settings,
};
