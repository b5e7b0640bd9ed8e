/* down.c - Toxiproxy's disabled proxy: the endpoint refuses new
 * connections (its listeners closed) and drops the open ones, for every
 * client it reaches; it takes no stream and no toxicity. */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"

static void down_text(const void *params, char *out, size_t len)
{
    (void)params;
    snprintf(out, len, "down");
}

const struct toxic_kind toxic_down = {
    .name = "down",
    .summary = "through the proxy: the endpoint refuses new connections and drops the open "
               "ones",
    .refuses = true,
    .text = down_text,
};
