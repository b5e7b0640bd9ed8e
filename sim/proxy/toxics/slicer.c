/* slicer.c - Toxiproxy's slicer: the data cut into slices of
 * average_size +- size_variation bytes (drawn per slice from the seed),
 * delay us apart. */
#include <stdio.h>

#include "sim/proxy/toxic_kind.h"

struct slicer {
    uint32_t average_size, size_variation, delay_us;
};
_Static_assert(sizeof(struct slicer) <= SETTINGS_BYTES_MAX, "fits a toxic's params");

static const struct setting_key keys[] = {
    {.key = "average_size",
     .type = SETTING_U32,
     .offset = offsetof(struct slicer, average_size),
     .min = 1,
     .max = 1 << 20,
     .required = true,
     .what = "bytes per slice"},
    {.key = "size_variation",
     .type = SETTING_U32,
     .offset = offsetof(struct slicer, size_variation),
     .max = 1 << 20},
    {.key = "delay",
     .type = SETTING_U32,
     .offset = offsetof(struct slicer, delay_us),
     .max = 1000000},
};

/* A slice can be no smaller than 1 byte. */
static int slicer_after(void *params, const bool *given, const char **blame, char *why, size_t len)
{
    const struct slicer *t = params;
    (void)given;
    if (t->size_variation < t->average_size)
        return 0;
    *blame = "size_variation";
    snprintf(why, len, "%u is not less than average_size (%u)", (unsigned)t->size_variation,
             (unsigned)t->average_size);
    return -1;
}

static void slicer_work(const void *params, struct proxy *p, struct toxic_shape *sh)
{
    const struct slicer *t = params;
    (void)p;
    sh->slice = t->average_size;
    sh->variation = t->size_variation;
    sh->gap_ns = (uint64_t)t->delay_us * 1000u;
}

static void slicer_text(const void *params, char *out, size_t len)
{
    const struct slicer *t = params;
    snprintf(out, len, "slicer %u +- %u bytes, %u us apart", (unsigned)t->average_size,
             (unsigned)t->size_variation, (unsigned)t->delay_us);
}

const struct toxic_kind toxic_slicer = {
    .name = "slicer",
    .fault_number = 12,
    .summary = "through the proxy: data cut into slices of average_size +- "
               "size_variation bytes, delay us apart",
    .params = {keys, sizeof(keys) / sizeof(keys[0]), slicer_after},
    .streamed = true,
    .work = slicer_work,
    .text = slicer_text,
};
