/* seam.h - the engine's struct lock_seam (algorithms/lock.h): how a
 * client's lock waits on its sockets and sleeps.
 *
 * A client on a worker (a coroutine) waits through the worker's loop
 * (worker.h): the others run meanwhile. A client set up outside a runner
 * (no worker) blocks its thread in ppoll / clock_nanosleep
 * (lock_blocking_seam). Either way, a
 * client a waiter pause holds (client_pause, target "waiter") first stops
 * inside the call until the pause is over, wherever its lock waits: inside
 * acquire, between its keep-alives, in its retry back-off. */
#ifndef LOCKLAB_SEAM_H
#define LOCKLAB_SEAM_H

#include "algorithms/lock.h"

struct client;

/* The seam cl's lock gets (cl->seam filled, or NULL: the blocking
 * fallback, for a thread that no pause of a waiter can strike). Call again
 * once cl->waiter is known. */
const struct lock_seam *client_seam(struct client *cl);

#endif
