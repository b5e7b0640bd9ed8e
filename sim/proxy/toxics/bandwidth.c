/* bandwidth.c - Toxiproxy's bandwidth: the stream carries at most rate
 * KB/s (1 KB = 1000 bytes); with several in force, the slowest. */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"

struct bandwidth {
    uint32_t rate_kbs;
};
_Static_assert(sizeof(struct bandwidth) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "rate",
     .type = SETTING_U32,
     .offset = offsetof(struct bandwidth, rate_kbs),
     .min = 1,
     .max = 10000000,
     .required = true,
     .what = "KB/s"},
};

static void bandwidth_work(const void *params, struct proxy *p, struct toxic_shape *sh)
{
    const struct bandwidth *t = params;
    (void)p;
    if (sh->rate_kbs == 0 || t->rate_kbs < sh->rate_kbs)
        sh->rate_kbs = t->rate_kbs;
}

static void bandwidth_text(const void *params, char *out, size_t len)
{
    const struct bandwidth *t = params;
    snprintf(out, len, "bandwidth %u KB/s", (unsigned)t->rate_kbs);
}

const struct toxic_kind toxic_bandwidth = {
    .name = "bandwidth",
    .fault_number = 8,
    .summary = "through the proxy: the stream carries at most rate KB/s",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), NULL},
    .streamed = true,
    .work = bandwidth_work,
    .text = bandwidth_text,
};
