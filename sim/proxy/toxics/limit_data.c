/* limit_data.c - Toxiproxy's limit_data: a connection closes once bytes
 * have passed on the stream since the toxic began to apply to it; with
 * several in force, the smallest. */
#include <inttypes.h>
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"

struct limit_data {
    uint64_t bytes;
};
_Static_assert(sizeof(struct limit_data) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "bytes",
     .type = SETTING_U64,
     .offset = offsetof(struct limit_data, bytes),
     .max = 1LL << 40,
     .required = true,
     .what = "bytes let through"},
};

static void limit_data_work(const void *params, struct proxy *p, struct toxic_shape *sh)
{
    const struct limit_data *t = params;
    (void)p;
    if (!sh->limited || t->bytes < sh->limit)
        sh->limit = t->bytes;
    sh->limited = true;
}

static void limit_data_text(const void *params, char *out, size_t len)
{
    const struct limit_data *t = params;
    snprintf(out, len, "limit_data %" PRIu64 " bytes", t->bytes);
}

const struct toxic_kind toxic_limit_data = {
    .name = "limit_data",
    .fault_number = 11,
    .summary = "through the proxy: a connection closes once bytes have passed",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), NULL},
    .streamed = true,
    .counts_bytes = true,
    .work = limit_data_work,
    .text = limit_data_text,
};
