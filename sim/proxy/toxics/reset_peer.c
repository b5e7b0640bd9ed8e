/* reset_peer.c - Toxiproxy's reset_peer: each connection it applies to is
 * reset (RST) after timeout ms; the bytes pass until then. */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"
#include "sim/record/figures.h"

struct reset_peer {
    uint32_t timeout_ms;
};
_Static_assert(sizeof(struct reset_peer) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "timeout",
     .type = SETTING_U32,
     .offset = offsetof(struct reset_peer, timeout_ms),
     .max = SCENARIO_MS_MAX},
};

static bool reset_peer_ends(const void *params, uint32_t *after_ms, bool *reset)
{
    const struct reset_peer *t = params;
    *after_ms = t->timeout_ms;
    *reset = true;
    return true;
}

static void reset_peer_text(const void *params, char *out, size_t len)
{
    const struct reset_peer *t = params;
    snprintf(out, len, "reset_peer after %u ms", (unsigned)t->timeout_ms);
}

const struct toxic_kind toxic_reset_peer = {
    .name = "reset_peer",
    .fault_number = 10,
    .summary = "through the proxy: connections are reset (RST) after timeout ms",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), NULL},
    .streamed = true,
    .ends = reset_peer_ends,
    .text = reset_peer_text,
};
