/* timeout.c - Toxiproxy's timeout: nothing on the stream gets through,
 * and the connection closes after timeout ms (0: never). Unlike
 * Toxiproxy's, the data it holds is dropped, not delivered when it ends:
 * a black hole (docs/scenario.md). */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"
#include "sim/record/figures.h"

struct timeout {
    uint32_t timeout_ms;
};
_Static_assert(sizeof(struct timeout) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "timeout",
     .type = SETTING_U32,
     .offset = offsetof(struct timeout, timeout_ms),
     .max = SCENARIO_MS_MAX},
};

static void timeout_work(const void *params, struct proxy *p, struct toxic_shape *sh)
{
    (void)params;
    (void)p;
    sh->drop = true;
}

static bool timeout_ends(const void *params, uint32_t *after_ms, bool *reset)
{
    const struct timeout *t = params;
    *after_ms = t->timeout_ms;
    *reset = false;
    return t->timeout_ms != 0;
}

static void timeout_text(const void *params, char *out, size_t len)
{
    const struct timeout *t = params;
    snprintf(out, len, "timeout %u ms%s", (unsigned)t->timeout_ms,
             t->timeout_ms ? "" : " (black hole)");
}

const struct toxic_kind toxic_timeout = {
    .name = "timeout",
    .fault_number = 9,
    .summary = "through the proxy: nothing on the stream gets through (dropped); with "
               "timeout > 0 the connections close after it, with 0 they stay open: a "
               "black hole",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), NULL},
    .streamed = true,
    .holds = true,
    .work = timeout_work,
    .ends = timeout_ends,
    .text = timeout_text,
};
