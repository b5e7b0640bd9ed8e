/* zookeeper_server.h - ZooKeeper's four-letter words, for whoever must
 * look at a managed ZooKeeper (zookeeper_server.c). */
#ifndef LOCKLAB_ZOOKEEPER_SERVER_H
#define LOCKLAB_ZOOKEEPER_SERVER_H

#include <stddef.h>

/* Send a four-letter word to a loopback port and read the whole answer
 * into reply (NUL-terminated). Returns its length, -1 on error. */
int zookeeper_server_ask(int port, const char *word, char *reply, size_t len);

#endif
