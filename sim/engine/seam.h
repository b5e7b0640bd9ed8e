/* seam.h - the engine's struct lock_seam (algorithms/lock.h): how a
 * client's lock waits on its sockets and sleeps. Every call is handed on to
 * lock_blocking_seam, the thread blocking in ppoll / clock_nanosleep; a
 * client a waiter pause holds (client_pause, target "waiter") first stops
 * inside the call until the pause is over, wherever its lock waits: inside
 * acquire, between its keep-alives, in its retry back-off. */
#ifndef LOCKLAB_SEAM_H
#define LOCKLAB_SEAM_H

struct client;

/* Fill cl->seam for cl (its ctx is cl); client_connect hands it to the
 * lock when cl has a waiter slot (cl->waiter), which it then needs. */
void client_seam_init(struct client *cl);

#endif
