/* etcd_server.h - what others must know of a managed etcd member: the
 * timings it runs with (algorithms/etcd.h, where the lock's lease is
 * resolved from them), and its JSON gateway, for whoever must look at one
 * (etcd_server.c, tests): one blocking HTTP call with a short timeout. */
#ifndef LOCKLAB_ETCD_SERVER_H
#define LOCKLAB_ETCD_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "algorithms/etcd.h" /* the members' timing, which the lease rests on */

/* GET (post NULL) or POST post to http://127.0.0.1:port/path; the answer
 * into reply (NUL-terminated, cut to len). Its length when the server
 * answered 200, else -1. */
int etcd_server_ask(int port, const char *path, const char *post, char *reply, size_t len);

#endif
