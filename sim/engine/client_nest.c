/* client_nest.c - sections inside sections: a client that takes a lock
 * while it holds one (a second account of a transfer, or the same lock
 * again: a re-entry) keeps the outer section while the inner one runs,
 * and takes several at once through the lock's acquire_all (Redisson's
 * MultiLock) or one by one, all or none.
 */
#include "sim/engine/client.h"

#include <stdio.h>

#include "sim/engine/client_log.h"
#include "sim/engine/run_ctx.h"
#include "sim/faults/nemesis.h"
#include "sim/workloads/workload.h"

/* Is the client inside a section on key (an outer one)? */
bool cl_holds_key(const struct client *cl, uint32_t key)
{
    for (size_t i = 0; i < cl->n_outer; i++)
        if (cl->outer[i].key == key)
            return true;
    return false;
}

/* The current section becomes an outer one, and back. */
void cl_push_outer(struct client *cl)
{
    cl->outer[cl->n_outer++] = (struct outer_hold){.key = cl->key,
                                                   .reentry = cl->reentry,
                                                   .grant = cl->grant,
                                                   .from_ns = cl->from_ns,
                                                   .next_renew_ns = cl->next_renew_ns};
    cl->holding = false;
}

void cl_pop_outer(struct client *cl)
{
    const struct outer_hold *o = &cl->outer[--cl->n_outer];
    cl->key = o->key;
    cl->reentry = o->reentry;
    cl->grant = o->grant;
    cl->from_ns = o->from_ns;
    cl->next_renew_ns = o->next_renew_ns;
    cl->holding = true;
}

/* acquire_all: every key in one call of the lock's, each section then
 * begun in order, each nested in the one before. */
static bool lock_all_at_once(struct client *cl, const uint32_t *keys, size_t n, enum lock_mode mode)
{
    struct run_ctx *run = cl->run;
    struct workload *w = run->wl;
    struct lock_grant g[CLIENT_MAX_NESTED];
    if (n + cl->n_outer + cl->holding > CLIENT_MAX_NESTED + 1) {
        snprintf(cl->last_error, sizeof(cl->last_error), "cannot nest %zu sections", n);
        client_bump(cl, ST_ACQUIRE_ERR);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        if (!cl_may_ask(cl, keys[i], mode))
            return false;
    if (cl->n_parked)
        client_service_parked(cl, false);
    client_log_links(cl);
    bool nested = cl->holding;
    if (nested)
        cl_push_outer(cl);
    uint64_t from = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t f = cl_acquire_begins(cl, keys[i], mode);
        from = i == 0 ? f : from;
        g[i] = (struct lock_grant){
            .key = w->keys[keys[i]], .key_len = w->key_lens[keys[i]], .mode = (uint8_t)mode};
    }
    enum lock_result r = run->ops->acquire_all(&cl->lc, g, n, run->scn->ttl_ms, run->scn->wait_ms);
    if (cl->waiter)
        atomic_store_explicit(&cl->waiter->waiting_since, 0, memory_order_relaxed);
    if (r != LOCK_OK) {
        for (size_t i = 0; i < n; i++) {
            cl->key = keys[i];
            cl_acquire_failed(cl, r, from);
        }
        if (nested)
            cl_pop_outer(cl);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            cl_push_outer(cl);
        bool reentry = cl_holds_key(cl, keys[i]);
        cl->key = keys[i];
        cl->grant = g[i];
        cl->grant.mode = (uint8_t)mode;
        cl_section_begins(cl, mode, reentry, from);
    }
    return true;
}

bool client_lock_all(struct client *cl, const uint32_t *keys, size_t n, enum lock_mode mode)
{
    if (cl->run->ops->acquire_all && n > 1)
        return lock_all_at_once(cl, keys, n, mode);
    for (size_t i = 0; i < n; i++) {
        if (!client_lock_mode(cl, keys[i], mode, cl->run->scn->wait_ms)) {
            while (i-- > 0) /* all or none: what it took goes back */
                client_unlock(cl, EFFECT_NONE);
            return false;
        }
    }
    return true;
}

uint64_t client_token_of(const struct client *cl, uint32_t key)
{
    if (cl->holding && cl->key == key)
        return cl->grant.token;
    for (size_t i = cl->n_outer; i-- > 0;)
        if (cl->outer[i].key == key)
            return cl->outer[i].grant.token;
    return 0;
}
