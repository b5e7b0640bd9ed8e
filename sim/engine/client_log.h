/* client_log.h - what the client's files share and nothing else includes:
 * its history lines, its measurements and its sleep, defined in client.c,
 * and the renewal of a held lock, defined in client_hold.c.
 */
#ifndef LOCKLAB_CLIENT_LOG_H
#define LOCKLAB_CLIENT_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine/client.h"
#include "sim/record/measures.h"

struct scenario;

/* The renewal period, as scenario_resolve set it (never 0 when renewing). */
uint64_t cl_renew_period_ns(const struct scenario *s);
/* A sample of op, ns long, that ended at end_ns: the clock reading just
 * taken, with no yield since (tally.h: a thread's samples in time order). */
void cl_record_us(struct client *cl, enum op_kind op, uint64_t end_ns, uint64_t ns);
uint32_t cl_owner_id(const struct client *cl);
/* One history event of this client's, on key; cl_log_full on the key it
 * is working on (cl->key), cl_log_event without seq or token. */
void cl_log_key(struct client *cl, uint32_t key, uint64_t t, uint8_t type, uint8_t f, uint8_t arg,
                uint8_t arg2, uint64_t seq, uint64_t token);
void cl_log_full(struct client *cl, uint64_t t, uint8_t type, uint8_t f, uint8_t arg, uint8_t arg2,
                 uint64_t seq, uint64_t token);
void cl_log_event(struct client *cl, uint64_t t, uint8_t type, uint8_t f, uint8_t arg);
/* An operation that ended in an error: a failure when it surely took no
 * effect (its request never left, or was refused: counted in no_effect
 * too), else unknown (info), as Jepsen has it. */
void cl_log_error(struct client *cl, uint32_t key, uint64_t t, uint8_t f, enum stat_kind no_effect);
void cl_log_fault(struct client *cl, uint64_t t, int idx, int end);
/* Keep the lock's error text as the client's last error. */
void cl_note_error(struct client *cl);
/* Sleep until t (CLOCK_MONOTONIC) through the lock's seam; early when the
 * run is interrupted and cut_short allows it. */
void cl_sleep_until(struct client *cl, uint64_t t, bool cut_short);
/* One renewal (the watchdog's, or the kept lease's) of a lock this client
 * holds on key; sets *next_renew_ns. */
void cl_renew_grant(struct client *cl, uint32_t key, struct lock_grant *g, uint64_t *next_renew_ns);

/* Nesting (client_nest.c): is the client inside an outer section on key;
 * the current section becomes an outer one, and back. */
bool cl_holds_key(const struct client *cl, uint32_t key);
void cl_push_outer(struct client *cl);
void cl_pop_outer(struct client *cl);
/* The steps of an acquire (client.c): may the client ask for mode on key
 * now (false, counted and said, when the workload asks what the lock
 * cannot give); before it (the invoke; where its latency counts from);
 * after a failure; after a grant (the section begins: a re-entry neither
 * enters the witness nor carries a sequence). */
bool cl_may_ask(struct client *cl, uint32_t key, enum lock_mode mode);
uint64_t cl_acquire_begins(struct client *cl, uint32_t key, enum lock_mode mode);
void cl_acquire_failed(struct client *cl, enum lock_result r, uint64_t from);
void cl_section_begins(struct client *cl, enum lock_mode mode, bool reentry, uint64_t from);

#endif
