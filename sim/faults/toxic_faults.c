/* toxic_faults.c - the network fault kinds: Toxiproxy's toxics under its
 * names and attributes (latency, bandwidth, timeout, reset_peer,
 * limit_data, slicer) and its "down" (an endpoint disabled), played by
 * locklab's own proxy (sim/proxy/) on the connections a target names.
 * network_faults.c puts them in force; this file says what each takes
 * and what it is.
 */
#include <inttypes.h>
#include <stdio.h>

#include "sim/faults/fault.h"
#include "sim/proxy/toxic_kind.h"

extern const struct toxic_kind toxic_latency, toxic_bandwidth, toxic_timeout, toxic_reset_peer,
    toxic_limit_data, toxic_slicer, toxic_down;

#define TAKES(k) (1u << (k))
#define STREAMED (TAKES(TOXIC_KEY_STREAM) | TAKES(TOXIC_KEY_TOXICITY))

/* What every network fault checks after its own attributes. */
static int check_network(struct fault_check *fc)
{
    const struct fault_spec *f = fault_checked(fc);
    if (f->duration_ms == 0 && fault_has(fc, "duration_ms"))
        return fault_blame(fc, "duration_ms",
                           "0 is out of range for a %s (1..%d; leave it out for the rest of "
                           "the run)",
                           fault_type_name(f->kind), SCENARIO_MS_MAX);
    if (!fault_has(fc, "target"))
        return fault_fail(fc,
                          "missing required key \"target\" (a %s names whose traffic: \"all\", "
                          "\"redis-2\", \"holder\", \"client:3\", ...)",
                          fault_type_name(f->kind));
    if (fault_check_no_data(fc) < 0 || fault_check_no_restart(fc) < 0 ||
        fault_check_no_clock_keys(fc) < 0)
        return -1;
    return fault_check_holder_majority(fc);
}

static int check_latency(struct fault_check *fc)
{
    unsigned takes = STREAMED | TAKES(TOXIC_KEY_LATENCY) | TAKES(TOXIC_KEY_JITTER);
    if (fault_check_toxic_keys(fc, takes, TAKES(TOXIC_KEY_LATENCY)) < 0)
        return -1;
    return check_network(fc);
}

static int check_bandwidth(struct fault_check *fc)
{
    if (fault_check_toxic_keys(fc, STREAMED | TAKES(TOXIC_KEY_RATE), TAKES(TOXIC_KEY_RATE)) < 0)
        return -1;
    return check_network(fc);
}

static int check_timeout(struct fault_check *fc)
{
    if (fault_check_toxic_keys(fc, STREAMED | TAKES(TOXIC_KEY_TIMEOUT), 0) < 0)
        return -1;
    return check_network(fc);
}

static int check_limit_data(struct fault_check *fc)
{
    if (fault_check_toxic_keys(fc, STREAMED | TAKES(TOXIC_KEY_BYTES), TAKES(TOXIC_KEY_BYTES)) < 0)
        return -1;
    return check_network(fc);
}

static int check_slicer(struct fault_check *fc)
{
    unsigned takes = STREAMED | TAKES(TOXIC_KEY_AVERAGE_SIZE) | TAKES(TOXIC_KEY_SIZE_VARIATION) |
                     TAKES(TOXIC_KEY_DELAY);
    if (fault_check_toxic_keys(fc, takes, TAKES(TOXIC_KEY_AVERAGE_SIZE)) < 0)
        return -1;
    const struct fault_spec *f = fault_checked(fc);
    if (f->size_variation >= f->average_size)
        return fault_blame(fc, "size_variation", "%u is not less than average_size (%u)",
                           (unsigned)f->size_variation, (unsigned)f->average_size);
    return check_network(fc);
}

static int check_down(struct fault_check *fc)
{
    if (fault_check_toxic_keys(fc, 0, 0) < 0)
        return -1;
    return check_network(fc);
}

/* ---- what each says of itself ---------------------------------------- */

static void text_latency(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "latency %u +- %u ms", (unsigned)f->latency_ms, (unsigned)f->jitter_ms);
}

static void text_bandwidth(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "bandwidth %u KB/s", (unsigned)f->rate_kbs);
}

static void text_timeout(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "timeout %u ms%s", (unsigned)f->timeout_ms,
             f->timeout_ms ? "" : " (black hole)");
}

static void text_reset_peer(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "reset_peer after %u ms", (unsigned)f->timeout_ms);
}

static void text_limit_data(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "limit_data %" PRIu64 " bytes", f->bytes);
}

static void text_slicer(const struct fault_spec *f, char *out, size_t len)
{
    snprintf(out, len, "slicer %u +- %u bytes, %u us apart", (unsigned)f->average_size,
             (unsigned)f->size_variation, (unsigned)f->delay_us);
}

static void text_down(const struct fault_spec *f, char *out, size_t len)
{
    (void)f;
    snprintf(out, len, "down");
}

/* "latency on all (downstream), for 2 s" */
static void plan(const struct fault_spec *f, char *buf, size_t len)
{
    char span[48] = "until the run ends";
    if (f->duration_ms) {
        char a[32];
        snprintf(span, sizeof(span), "for %s s", figure_seconds(f->duration_ms, a, sizeof(a)));
    }
    const char *way = !fault_kind_of(f)->has_stream   ? ""
                      : f->stream == STREAM_BOTH_WAYS ? " (both ways)"
                      : f->stream == STREAM_UPSTREAM  ? " (upstream)"
                                                      : " (downstream)";
    snprintf(buf, len, "%s on %s%s, %s", fault_type_name(f->kind), f->target_text, way, span);
}

/* Its target as written and Toxiproxy's attributes, only those it takes. */
static void settings_common(const struct fault_spec *f, json_t *o)
{
    json_object_set_new(o, "target", json_string(f->target_text));
    if (fault_kind_of(f)->has_stream) {
        json_object_set_new(o, "stream", json_string(fault_stream_name(f->stream)));
        json_object_set_new(o, "toxicity", json_real(f->toxicity));
    }
}

static void settings_latency(const struct fault_spec *f, json_t *o)
{
    settings_common(f, o);
    json_object_set_new(o, "latency", json_integer(f->latency_ms));
    json_object_set_new(o, "jitter", json_integer(f->jitter_ms));
}

static void settings_bandwidth(const struct fault_spec *f, json_t *o)
{
    settings_common(f, o);
    json_object_set_new(o, "rate", json_integer(f->rate_kbs));
}

static void settings_timeout(const struct fault_spec *f, json_t *o)
{
    settings_common(f, o);
    json_object_set_new(o, "timeout", json_integer(f->timeout_ms));
}

static void settings_limit_data(const struct fault_spec *f, json_t *o)
{
    settings_common(f, o);
    json_object_set_new(o, "bytes", json_integer((json_int_t)f->bytes));
}

static void settings_slicer(const struct fault_spec *f, json_t *o)
{
    settings_common(f, o);
    json_object_set_new(o, "average_size", json_integer(f->average_size));
    json_object_set_new(o, "size_variation", json_integer(f->size_variation));
    json_object_set_new(o, "delay", json_integer(f->delay_us));
}

#define NETWORK_KIND                                                                               \
    .family = FAULT_FAMILY_NETWORK, .window = WINDOW_DURATION, .band = "network", .plan = plan

const struct fault_kind fault_latency = {
    .name = "latency",
    .summary = "through the proxy: every chunk on the stream waits latency +- jitter ms",
    NETWORK_KIND,
    .check = check_latency,
    .toxic = &toxic_latency,
    .has_stream = true,
    .toxic_text = text_latency,
    .settings = settings_latency,
};

const struct fault_kind fault_bandwidth = {
    .name = "bandwidth",
    .summary = "through the proxy: the stream carries at most rate KB/s",
    NETWORK_KIND,
    .check = check_bandwidth,
    .toxic = &toxic_bandwidth,
    .has_stream = true,
    .toxic_text = text_bandwidth,
    .settings = settings_bandwidth,
};

const struct fault_kind fault_timeout = {
    .name = "timeout",
    .summary = "through the proxy: nothing on the stream gets through (dropped); with "
               "timeout > 0 the connections close after it, with 0 they stay open: a "
               "black hole",
    NETWORK_KIND,
    .check = check_timeout,
    .toxic = &toxic_timeout,
    .has_stream = true,
    .toxic_text = text_timeout,
    .settings = settings_timeout,
};

const struct fault_kind fault_reset_peer = {
    .name = "reset_peer",
    .summary = "through the proxy: connections are reset (RST) after timeout ms",
    NETWORK_KIND,
    .check = check_timeout,
    .toxic = &toxic_reset_peer,
    .has_stream = true,
    .toxic_text = text_reset_peer,
    .settings = settings_timeout,
};

const struct fault_kind fault_limit_data = {
    .name = "limit_data",
    .summary = "through the proxy: a connection closes once bytes have passed",
    NETWORK_KIND,
    .check = check_limit_data,
    .toxic = &toxic_limit_data,
    .has_stream = true,
    .toxic_text = text_limit_data,
    .settings = settings_limit_data,
};

const struct fault_kind fault_slicer = {
    .name = "slicer",
    .summary = "through the proxy: data cut into slices of average_size +- "
               "size_variation bytes, delay us apart",
    NETWORK_KIND,
    .check = check_slicer,
    .toxic = &toxic_slicer,
    .has_stream = true,
    .toxic_text = text_slicer,
    .settings = settings_slicer,
};

const struct fault_kind fault_down = {
    .name = "down",
    .summary = "through the proxy: the endpoint refuses new connections and drops the open "
               "ones",
    NETWORK_KIND,
    .check = check_down,
    .toxic = &toxic_down,
    .toxic_text = text_down,
    .settings = settings_common,
};
