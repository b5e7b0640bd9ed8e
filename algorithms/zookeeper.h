/* zookeeper.h - what a test may ask the zookeeper lock that the engine
 * never needs. The engine reaches the algorithm only through zookeeper_ops;
 * these look inside one client to prove properties of the recipe.
 */
#ifndef LOCKLAB_ZOOKEEPER_H
#define LOCKLAB_ZOOKEEPER_H

#include <stdint.h>

#include "algorithms/lock.h"

/* Watch notifications this client received on predecessor nodes since it
 * connected: one per wake-up, so a waiter woken only by its predecessor's
 * deletion counts 1 per grant (no herd effect). 0 for a NULL impl. */
uint64_t zookeeper_watch_events(const struct lock_client *c);
/* The current ZooKeeper session id, 0 when there is none. A new id after
 * acquire means the client opened a new session (the old one expired). */
int64_t zookeeper_session_id(const struct lock_client *c);

#endif
