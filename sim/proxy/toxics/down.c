/* down.c - Toxiproxy's disabled proxy: the endpoint refuses new
 * connections (its listeners closed) and drops the open ones, for every
 * client it reaches; it takes no stream and no toxicity. */
#include "sim/proxy/toxic_kind.h"

const struct toxic_kind toxic_down = {
    .name = "down",
    .fault_number = 13,
    .summary = "through the proxy: the endpoint refuses new connections and drops the open "
               "ones",
    .refuses = true,
};
