/* etcd_server.h - etcd's JSON gateway, for whoever must look at a managed
 * etcd member (etcd_server.c, tests): one blocking HTTP call with a short
 * timeout. */
#ifndef LOCKLAB_ETCD_SERVER_H
#define LOCKLAB_ETCD_SERVER_H

#include <stddef.h>

/* GET (post NULL) or POST post to http://127.0.0.1:port/path; the answer
 * into reply (NUL-terminated, cut to len). Its length when the server
 * answered 200, else -1. */
int etcd_server_ask(int port, const char *path, const char *post, char *reply, size_t len);

#endif
