/* lock_config.h - the configuration the lock tests give a client of one
 * server on loopback: 2 s to connect and to answer, retries of a busy lock
 * after 1 to 20 ms. Header-only: the lock tests link locklab_core alone.
 */
#ifndef LOCKLAB_TEST_LOCK_CONFIG_H
#define LOCKLAB_TEST_LOCK_CONFIG_H

#include <stdio.h>

#include "algorithms/lock.h"

static inline void lock_config_one(struct lock_config *cfg, int port)
{
    snprintf(cfg->endpoints[0].host, sizeof(cfg->endpoints[0].host), "127.0.0.1");
    cfg->endpoints[0].port = port;
    cfg->n_endpoints = 1;
    cfg->connect_timeout_ms = 2000;
    cfg->io_timeout_ms = 2000;
    cfg->retry_min_ms = 1;
    cfg->retry_max_ms = 20;
}

#endif
