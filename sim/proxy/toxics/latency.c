/* latency.c - Toxiproxy's latency: each chunk waits latency +- jitter ms,
 * drawn per chunk from the seed; the order of the bytes is kept. */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"
#include "sim/record/figures.h"

struct latency {
    uint32_t latency_ms, jitter_ms;
};
_Static_assert(sizeof(struct latency) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "latency",
     .type = SETTING_U32,
     .offset = offsetof(struct latency, latency_ms),
     .max = SCENARIO_MS_MAX,
     .required = true,
     .what = "ms added to each chunk"},
    {.key = "jitter",
     .type = SETTING_U32,
     .offset = offsetof(struct latency, jitter_ms),
     .max = SCENARIO_MS_MAX},
};

static void latency_work(const void *params, struct proxy *p, struct toxic_shape *sh)
{
    const struct latency *t = params;
    int64_t d = (int64_t)t->latency_ms * 1000000 +
                ((int64_t)proxy_draw_upto(p, 2ull * t->jitter_ms * 1000000u) -
                 (int64_t)t->jitter_ms * 1000000);
    sh->delay_ns += d > 0 ? (uint64_t)d : 0;
}

static void latency_text(const void *params, char *out, size_t len)
{
    const struct latency *t = params;
    snprintf(out, len, "latency %u +- %u ms", (unsigned)t->latency_ms, (unsigned)t->jitter_ms);
}

const struct toxic_kind toxic_latency = {
    .name = "latency",
    .fault_number = 7,
    .summary = "through the proxy: every chunk on the stream waits latency +- jitter ms",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), NULL},
    .streamed = true,
    .work = latency_work,
    .text = latency_text,
};
