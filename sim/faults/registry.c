/* registry.c - the one list of fault kinds, and the queries the rest of
 * locklab asks of a fault instead of naming its kind.
 *
 * Every kind carries its number (fault_kind.number: a history file's
 * fault events and a fault span name a kind by it), so the lists' order
 * is not what numbers them: a new kind here and a new toxic in sim/proxy
 * (one network kind each, toxic_faults.c) each take the next free
 * number, and neither renumbers the other. A number with no kind, or two
 * kinds with one, fails test_scenario_values.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "sim/faults/fault.h"

extern const struct fault_kind fault_client_pause, fault_client_crash;
extern const struct fault_kind fault_kill, fault_pause, fault_restart;
extern const struct fault_kind fault_clock_jump, fault_failover, fault_replica_cut;
extern const struct fault_kind fault_cluster_failover, fault_slot_migrate, fault_partition;

static const struct fault_kind *const own[] = {
    &fault_client_pause,     &fault_client_crash, &fault_kill,      &fault_pause,
    &fault_restart,          &fault_clock_jump,   &fault_failover,  &fault_replica_cut,
    &fault_cluster_failover, &fault_slot_migrate, &fault_partition,
};

#define N_OWN      (sizeof(own) / sizeof(own[0]))
#define MAX_NUMBER 256 /* a fault_spec's uint8_t kind */

static const struct fault_kind *by_number[MAX_NUMBER];
static size_t n_numbers; /* the highest number and one */
static pthread_once_t numbered = PTHREAD_ONCE_INIT;

static void number(const struct fault_kind *k)
{
    /* the first kind of a number keeps it: a second is left out, which
     * the registry's test finds */
    if (by_number[k->number] == NULL)
        by_number[k->number] = k;
    if ((size_t)k->number + 1 > n_numbers)
        n_numbers = (size_t)k->number + 1;
}

static void number_kinds(void)
{
    for (size_t i = 0; i < N_OWN; i++)
        number(own[i]);
    for (size_t i = 0; i < fault_network_kind_count(); i++)
        number(fault_network_kind_at(i));
}

const struct fault_kind *fault_kind_at(size_t i)
{
    pthread_once(&numbered, number_kinds);
    return i < n_numbers ? by_number[i] : NULL;
}

const struct fault_kind *fault_kind_of(const struct fault_spec *f)
{
    const struct fault_kind *k = fault_kind_at(f->kind);
    return k ? k : own[0];
}

/* ---- fault_spec.h's queries ----------------------------------------- */

size_t fault_kind_count(void)
{
    pthread_once(&numbered, number_kinds);
    return n_numbers;
}

size_t fault_kind_declared(void)
{
    return N_OWN + fault_network_kind_count();
}

const char *fault_type_name(unsigned kind)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k ? k->name : "unknown";
}

int fault_kind_index(const char *name)
{
    for (size_t i = 0; i < fault_kind_count(); i++)
        if (strcmp(fault_kind_at(i)->name, name) == 0)
            return (int)i;
    return -1;
}

static bool of_family(unsigned kind, enum fault_family family)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k && k->family == family;
}

bool fault_on_servers(unsigned kind)
{
    return of_family(kind, FAULT_FAMILY_SERVERS);
}

bool fault_on_network(unsigned kind)
{
    return of_family(kind, FAULT_FAMILY_NETWORK);
}

bool fault_on_client(unsigned kind)
{
    return of_family(kind, FAULT_FAMILY_CLIENT);
}

bool fault_recovers_from_start(unsigned kind)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k && k->window == WINDOW_RESTART;
}

const char *fault_band(unsigned kind)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k ? k->band : "process";
}

bool fault_kills_holder(unsigned kind)
{
    return of_family(kind, FAULT_FAMILY_CLIENT) && fault_kind_at(kind)->holder_act == HOLDER_DIES;
}

bool fault_holds_connections(unsigned kind)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k && k->holds_connections;
}

bool fault_splits_clients(unsigned kind)
{
    const struct fault_kind *k = fault_kind_at(kind);
    return k && k->splits_clients;
}

bool fault_on_holder(const struct fault_spec *f)
{
    return (fault_on_client(f->kind) && f->target != FAULT_TARGET_WAITER) ||
           (fault_on_network(f->kind) && f->scope == NET_HOLDER);
}

bool fault_on_waiter(const struct fault_spec *f)
{
    return fault_on_client(f->kind) && f->target == FAULT_TARGET_WAITER;
}

const char *fault_plan(const struct fault_spec *f, char *buf, size_t len)
{
    fault_kind_of(f)->plan(f, buf, len);
    return buf;
}

void fault_settings(const struct fault_spec *f, struct json_t *o)
{
    fault_kind_of(f)->settings(f, o);
}

uint64_t fault_end_ms(const struct fault_spec *f, uint64_t run_ms)
{
    const struct fault_kind *k = fault_kind_of(f);
    if (k->family == FAULT_FAMILY_NETWORK && f->duration_ms == 0)
        return run_ms;
    if (k->window == WINDOW_RESTART)
        return f->restart_after_ms ? f->at_ms + f->restart_after_ms : run_ms;
    return f->at_ms + f->duration_ms;
}
