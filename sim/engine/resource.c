/* resource.c - the in-process store, its witness and its fencing check. */
#include "sim/engine/resource.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "sim/scenario/scenario.h"

/* The witness word (resource.h): two holder counts and the sequence. A
 * count holds every client of a run inside at once, so neither carries
 * into the next field; the 30 bits of sequence left wrap (resource.h). */
#define COUNT_BITS   17
#define COUNT_MASK   ((1ULL << COUNT_BITS) - 1)
#define EXCL_ONE     1ULL
#define SHARED_SHIFT COUNT_BITS
#define SHARED_ONE   (1ULL << SHARED_SHIFT)
#define SEQ_SHIFT    (2 * COUNT_BITS)
#define SEQ_ONE      (1ULL << SEQ_SHIFT)
_Static_assert(SCENARIO_MAX_CLIENTS <= COUNT_MASK, "a count holds every client");
_Static_assert(64 - SEQ_SHIFT == RESOURCE_SEQ_BITS, "the sequence's width, as resource.h says");

/* One cache line per key: holders of different keys never share a line. */
struct slot {
    _Alignas(64) _Atomic uint64_t witness;
    _Atomic int64_t value;
    uint64_t max_token; /* guarded by mu */
    uint64_t version;   /* versioned only, guarded by mu: the committed version; 0 = not yet seen */
    bool unsure;        /* versioned: a commit's answer never came; the next newer version read
                           is adopted */
    uint32_t inflight;  /* versioned: commits begun and not yet written or failed */
    pthread_mutex_t mu; /* fencing and versions: check-and-act must be one step, as in a store */
};

struct resource {
    struct slot *slots;
    size_t n;
    bool fencing;
    bool versioned;
    uint32_t permits; /* the witness's N for permit holders */
    _Atomic uint64_t concurrent;
    _Atomic uint64_t lost_commits; /* versioned: committed writes the store could not apply */
    _Atomic uint64_t rejected;     /* accesses fencing refused */
};

struct resource *resource_new(size_t n_keys, int64_t initial, bool fencing)
{
    struct resource *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return NULL;
    r->slots = aligned_alloc(64, sizeof(struct slot) * (n_keys ? n_keys : 1));
    if (r->slots == NULL) {
        free(r);
        return NULL;
    }
    r->n = n_keys;
    r->fencing = fencing;
    r->permits = 1;
    for (size_t i = 0; i < n_keys; i++) {
        atomic_init(&r->slots[i].witness, 0);
        atomic_init(&r->slots[i].value, initial);
        r->slots[i].max_token = 0;
        r->slots[i].version = 0;
        r->slots[i].unsure = false;
        r->slots[i].inflight = 0;
        pthread_mutex_init(&r->slots[i].mu, NULL);
    }
    atomic_init(&r->concurrent, 0);
    atomic_init(&r->rejected, 0);
    atomic_init(&r->lost_commits, 0);
    return r;
}

void resource_preset(struct resource *r, uint32_t key, int64_t value)
{
    atomic_store_explicit(&r->slots[key].value, value, memory_order_relaxed);
}

void resource_free(struct resource *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        pthread_mutex_destroy(&r->slots[i].mu);
    free(r->slots);
    free(r);
}

void resource_set_permits(struct resource *r, uint32_t permits)
{
    r->permits = permits ? permits : 1;
}

/* What one holder in mode adds to the word's counts. */
static uint64_t holder_one(enum lock_mode mode)
{
    return mode == LOCK_MODE_EXCLUSIVE ? EXCL_ONE : SHARED_ONE;
}

bool resource_enter(struct resource *r, uint32_t key, enum lock_mode mode, uint64_t *seq)
{
    uint64_t old = atomic_fetch_add(&r->slots[key].witness, SEQ_ONE + holder_one(mode));
    uint64_t excl = old & COUNT_MASK, shared = (old >> SHARED_SHIFT) & COUNT_MASK;
    *seq = old >> SEQ_SHIFT;
    bool conflict = mode == LOCK_MODE_EXCLUSIVE ? excl + shared > 0
                    : mode == LOCK_MODE_PERMIT  ? excl > 0 || shared >= r->permits
                                                : excl > 0;
    if (conflict)
        atomic_fetch_add_explicit(&r->concurrent, 1, memory_order_relaxed);
    return conflict;
}

uint64_t resource_leave(struct resource *r, uint32_t key, enum lock_mode mode)
{
    uint64_t old = atomic_fetch_add(&r->slots[key].witness, SEQ_ONE - holder_one(mode));
    return old >> SEQ_SHIFT;
}

uint64_t resource_concurrent_entries(const struct resource *r)
{
    return atomic_load(&r->concurrent);
}

/* Under the slot's mutex: is token not older than any the slot let in? */
static bool fence_admits(struct resource *r, const struct slot *s, uint64_t token)
{
    if (!r->fencing || token >= s->max_token)
        return true;
    atomic_fetch_add_explicit(&r->rejected, 1, memory_order_relaxed);
    return false;
}

void resource_set_versioned(struct resource *r)
{
    r->versioned = true;
}

void resource_commit_begin(struct resource *r, uint32_t key)
{
    struct slot *s = &r->slots[key];
    pthread_mutex_lock(&s->mu);
    s->inflight++;
    pthread_mutex_unlock(&s->mu);
}

void resource_commit_end(struct resource *r, uint32_t key, bool unknown)
{
    struct slot *s = &r->slots[key];
    pthread_mutex_lock(&s->mu);
    s->inflight--;
    s->unsure |= unknown;
    pthread_mutex_unlock(&s->mu);
}

uint64_t resource_lost_commits(const struct resource *r)
{
    return atomic_load(&r->lost_commits);
}

/* Under the slot's mutex: is the value the one version `token` names? A
 * write must find exactly that version. A read that finds an older one is
 * refused while the commit that made the newer one may be on its way to
 * write here (the reader tries again), and adopts it only when no commit
 * is in flight and none may be: the first read of a run (the rows'
 * versions began before it), or after a commit whose answer never came
 * (it may have committed; its section, not knowing, wrote nothing: as
 * though it committed nothing). */
static bool version_current(struct resource *r, struct slot *s, uint64_t token, bool read)
{
    if (!r->versioned)
        return true;
    if (read && token > s->version && s->inflight == 0 && (s->version == 0 || s->unsure)) {
        s->version = token;
        s->unsure = false;
    }
    if (s->version == token)
        return true;
    atomic_fetch_add_explicit(&r->rejected, 1, memory_order_relaxed);
    return false;
}

/* Under the slot's mutex: may an access with token touch the slot, by
 * its fence and its version? Only one let in raises the fence: a store
 * remembers the tokens it admitted, not those it refused (a read refused
 * while a commit is on its way must not fence that commit's write out). */
static bool admit(struct resource *r, struct slot *s, uint64_t token, bool read)
{
    if (!fence_admits(r, s, token) || !version_current(r, s, token, read))
        return false;
    if (r->fencing)
        s->max_token = token;
    return true;
}

enum resource_rc resource_read(struct resource *r, uint32_t key, uint64_t token, int64_t *value)
{
    struct slot *s = &r->slots[key];
    if (!r->fencing && !r->versioned) {
        *value = atomic_load_explicit(&s->value, memory_order_relaxed);
        return RES_OK;
    }
    pthread_mutex_lock(&s->mu);
    bool ok = admit(r, s, token, true);
    if (ok)
        *value = atomic_load_explicit(&s->value, memory_order_relaxed);
    pthread_mutex_unlock(&s->mu);
    return ok ? RES_OK : RES_FENCED;
}

enum resource_rc resource_write(struct resource *r, uint32_t key, uint64_t token, int64_t value)
{
    struct slot *s = &r->slots[key];
    if (!r->fencing && !r->versioned) {
        atomic_store_explicit(&s->value, value, memory_order_relaxed);
        return RES_OK;
    }
    pthread_mutex_lock(&s->mu);
    bool ok = admit(r, s, token, false);
    if (ok) {
        atomic_store_explicit(&s->value, value, memory_order_relaxed);
        if (r->versioned) {
            s->version = token + 1; /* what the commit made it */
            s->unsure = false;      /* past any unknown commit's version */
        }
    } else if (r->versioned) {
        /* only a committed write comes here: the database let two commits
         * from one version through, or the store lost step with it */
        atomic_fetch_add_explicit(&r->lost_commits, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->mu);
    return ok ? RES_OK : RES_FENCED;
}

int64_t resource_value(const struct resource *r, uint32_t key)
{
    return atomic_load(&r->slots[key].value);
}

uint64_t resource_rejected(const struct resource *r)
{
    return atomic_load(&r->rejected);
}

size_t resource_keys(const struct resource *r)
{
    return r->n;
}
