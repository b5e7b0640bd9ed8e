/* bank_transfer.c - money moved between accounts: the total never
 * changes.
 *
 * A transfer picks two accounts, locks both (lock:account:<a> and
 * lock:account:<b>, the lower number first, as banks order their locks so
 * two transfers cannot wait for each other), reads both balances, spends
 * critical_ms (the checks a real transfer makes), and writes the debit
 * and the credit. The two locks are taken all or none: through the lock's
 * acquire_all when it has one (Redisson's MultiLock, the design notes'
 * "financial transaction" row), else one after the other, the first given
 * back when the second cannot be had. Two transfers inside one account at
 * once both read the same balance and one write is lost: money made or
 * destroyed, which the total shows however the accounts are spread.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/workloads/workload.h"

struct bank_transfer_keys {
    uint32_t accounts;    /* one lock key each; a transfer locks two */
    int64_t balance;      /* every account's at the start */
    uint32_t amount_max;  /* a transfer moves 1..amount_max */
    uint32_t critical_ms; /* hold between reading the balances and writing them */
};

#define BT(m) offsetof(struct bank_transfer_keys, m)
static const struct setting_key bank_keys[] = {
    {.key = "accounts", .type = SETTING_U32, .offset = BT(accounts), .min = 2, .max = 100000},
    {.key = "balance", .type = SETTING_I64, .offset = BT(balance), .max = 1000000000000LL},
    {.key = "amount_max",
     .type = SETTING_U32,
     .offset = BT(amount_max),
     .min = 1,
     .max = 1000000000},
    {.key = "critical_ms", .type = SETTING_U32, .offset = BT(critical_ms), .max = 600000},
};

static const struct bank_transfer_keys bank_defaults = {
    .accounts = 10, .balance = 1000, .amount_max = 100, .critical_ms = 1};

static void bank_describe(const void *settings, const struct workload_run *run, char *buf,
                          size_t len)
{
    const struct bank_transfer_keys *b = settings;
    (void)run;
    snprintf(buf, len,
             "bank_transfer accounts=%" PRIu32 " balance=%" PRId64 " amount_max=%" PRIu32
             " critical=%" PRIu32 "ms",
             b->accounts, b->balance, b->amount_max, b->critical_ms);
}

static int bank_init(struct workload *w)
{
    const struct bank_transfer_keys *b = w->settings;
    w->res = w->calls->store_new(b->accounts, b->balance, w->run.fencing);
    if (w->res == NULL || workload_alloc_keys(w, b->accounts) < 0)
        return -1;
    for (uint32_t i = 0; i < b->accounts; i++) {
        char name[40];
        snprintf(name, sizeof(name), "lock:account:%" PRIu32, i);
        if (workload_set_key(w, i, name) < 0)
            return -1;
    }
    return 0;
}

static void bank_free(struct workload *w)
{
    (void)w;
}

/* Leave both sections, the credit's (taken second) first. */
static void unlock_both(const struct workload *w, struct client *cl, enum section_effect from,
                        enum section_effect to)
{
    w->calls->unlock(cl, to);
    w->calls->unlock(cl, from);
}

/* One transfer of amount from account a to account b (a != b). */
static bool transfer(struct workload *w, struct client *cl, uint32_t a, uint32_t b, int64_t amount)
{
    const struct bank_transfer_keys *spec = w->settings;
    uint32_t keys[2] = {a < b ? a : b, a < b ? b : a};
    if (!w->calls->lock_all(cl, keys, 2, LOCK_MODE_EXCLUSIVE))
        return false;
    uint64_t ta = w->calls->token_of(cl, a), tb = w->calls->token_of(cl, b);
    int64_t from, to;
    if (w->calls->store_read(w->res, a, ta, &from) == RES_FENCED ||
        w->calls->store_read(w->res, b, tb, &to) == RES_FENCED) {
        unlock_both(w, cl, EFFECT_FENCED, EFFECT_FENCED);
        return true;
    }
    if (!w->calls->hold(cl, spec->critical_ms))
        return true;     /* crashed inside: both sections ended with it */
    if (from < amount) { /* not enough money: nothing moves */
        unlock_both(w, cl, EFFECT_NONE, EFFECT_NONE);
        return true;
    }
    /* The debit first: a fenced debit moves nothing, a fenced credit after
     * an applied debit loses money, which the total then shows. */
    enum section_effect debit = EFFECT_FENCED, credit = EFFECT_FENCED;
    if (w->calls->store_write(w->res, a, ta, from - amount) == RES_OK) {
        debit = EFFECT_APPLIED;
        if (w->calls->store_write(w->res, b, tb, to + amount) == RES_OK)
            credit = EFFECT_APPLIED;
    }
    /* the sections are nested in key order: the inner one is the higher key */
    if (a < b)
        unlock_both(w, cl, debit, credit);
    else
        unlock_both(w, cl, credit, debit);
    return true;
}

static bool bank_step(struct workload *w, struct client *cl)
{
    const struct bank_transfer_keys *b = w->settings;
    uint32_t from = (uint32_t)w->calls->random(cl, b->accounts);
    uint32_t to = (uint32_t)w->calls->random(cl, b->accounts - 1);
    to += to >= from; /* any account but from */
    int64_t amount = 1 + (int64_t)w->calls->random(cl, b->amount_max);
    return transfer(w, cl, from, to, amount);
}

static size_t bank_invariants(const struct workload *w, struct invariant *out, size_t max)
{
    const struct bank_transfer_keys *b = w->settings;
    int64_t total = 0, negative = 0, lowest = 0;
    for (size_t i = 0; i < w->n_keys; i++) {
        int64_t v = w->calls->store_value(w->res, (uint32_t)i);
        total += v;
        negative += v < 0;
        lowest = i == 0 || v < lowest ? v : lowest;
    }
    int64_t initial = (int64_t)b->accounts * b->balance;
    struct invariant inv[2] = {
        {.name = "total_conserved", .holds = total == initial, .by_overlaps = true},
        {.name = "no_negative_balance", .holds = negative == 0, .by_overlaps = true},
    };
    snprintf(inv[0].detail, sizeof(inv[0].detail),
             "total %" PRId64 " vs %" PRId64 " at the start (%" PRIu32 " accounts of %" PRId64
             "): %" PRId64 " made or destroyed",
             total, initial, b->accounts, b->balance, total - initial);
    snprintf(inv[1].detail, sizeof(inv[1].detail),
             "%" PRId64 " account(s) below zero; the lowest balance %" PRId64, negative, lowest);
    if (max < 2)
        return 0;
    out[0] = inv[0];
    out[1] = inv[1];
    return 2;
}

const struct workload_ops bank_transfer_ops = {
    .name = "bank_transfer",
    .summary = "transfers under both accounts' locks, all or none: the total never changes",
    WORKLOAD_KEYS(bank_keys, bank_defaults),
    .hold_key = "critical_ms",
    .needs_exclusion = "a transfer's debit and credit, written as one",
    .lock_mode = LOCK_MODE_EXCLUSIVE,
    .describe = bank_describe,
    .init = bank_init,
    .free = bank_free,
    .step = bank_step,
    .invariants = bank_invariants,
};
