/* hold.c - a paused client's connections: nothing passes either way until
 * it ends, then all of it, as a stopped process's socket buffers would.
 * No fault of its own: the nemesis holds a client for a client_pause. */
#include "sim/proxy/toxic_kind.h"

const struct toxic_kind toxic_hold = {
    .name = "hold",
    .summary = "a paused client's connections, held until the pause ends",
    .streamed = true,
    .internal = true,
    .holds = true,
};
