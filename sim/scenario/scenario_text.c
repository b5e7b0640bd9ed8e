/* scenario_text.c - the values of a scenario that are written as text:
 * server endpoints ("host:port,host:port", also --redis/--zookeeper) and
 * expectations ("0", ">0", ">= 3"), read and written back; and the
 * external server lists a scenario names, by server kind.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/server_kind.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parse.h"

int endpoint_parse(const char *text, struct lock_endpoint *ep, char *err, size_t errlen)
{
    const char *colon = strrchr(text, ':');
    char *end;
    if (text[0] == '[') {
        snprintf(err, errlen, "%s: IPv6 addresses are not supported, use 127.0.0.1 or a name",
                 scn_quote(text).s);
        return -1;
    }
    if (colon == NULL || colon == text || (size_t)(colon - text) >= sizeof(ep->host)) {
        snprintf(err, errlen, "expected HOST:PORT (host up to %zu characters), got %s",
                 sizeof(ep->host) - 1, scn_quote(text).s);
        return -1;
    }
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || port < 1 || port > 65535) {
        snprintf(err, errlen, "%s: port must be 1..65535", scn_quote(text).s);
        return -1;
    }
    snprintf(ep->host, sizeof(ep->host), "%.*s", (int)(colon - text), text);
    ep->port = (int)port;
    return 0;
}

int endpoints_parse(const char *text, struct server_list *out, char *err, size_t errlen)
{
    /* room for the most endpoints at their longest; a cut list would parse a wrong port */
    char buf[LOCK_ENDPOINT_MAX * (sizeof(out->ep[0].host) + sizeof(":65535,"))];
    if (strlen(text) >= sizeof(buf)) {
        snprintf(err, errlen, "server list longer than %zu characters", sizeof(buf) - 1);
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", text);
    out->n = 0;
    /* strtok would skip an empty item: a stray comma is a typo to report */
    if (buf[0] == ',' || (buf[0] && buf[strlen(buf) - 1] == ',') || strstr(buf, ",,")) {
        snprintf(err, errlen, "an empty item in %s", scn_quote(text).s);
        return -1;
    }
    for (char *save = NULL, *one = strtok_r(buf, ",", &save); one;
         one = strtok_r(NULL, ",", &save)) {
        if (out->n == LOCK_ENDPOINT_MAX) {
            snprintf(err, errlen, "at most %d servers", LOCK_ENDPOINT_MAX);
            return -1;
        }
        if (endpoint_parse(one, &out->ep[out->n], err, errlen) < 0)
            return -1;
        out->n++;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "expected HOST:PORT[,HOST:PORT...], got %s", scn_quote(text).s);
        return -1;
    }
    return 0;
}

/* ---- expectations ---------------------------------------------------- */

static const struct {
    const char *text;
    enum expect_op op;
} expect_ops[] = {
    /* two-character operators first, so ">=" is not read as ">" */
    {"==", EXPECT_EQ}, {">=", EXPECT_GE}, {"<=", EXPECT_LE}, {">", EXPECT_GT}, {"<", EXPECT_LT},
};

int expect_parse(const char *text, struct expect_num *e)
{
    enum expect_op op = EXPECT_EQ;
    uint64_t v = 0;
    const char *p = text;

    if (!text || !e)
        return -1;
    p += strspn(p, " ");
    for (size_t i = 0; i < N_OF(expect_ops); i++) {
        size_t n = strlen(expect_ops[i].text);
        if (strncmp(p, expect_ops[i].text, n) == 0) {
            op = expect_ops[i].op;
            p += n;
            break;
        }
    }
    p += strspn(p, " ");
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*p)
        return -1;
    e->op = op;
    e->value = v;
    return 0;
}

const char *expect_format(const struct expect_num *e, char *buf, size_t len)
{
    const char *sym = "";

    if (!buf || len == 0)
        return buf;
    if (e->op == EXPECT_UNSET) {
        snprintf(buf, len, "any");
        return buf;
    }
    for (size_t i = 1; i < N_OF(expect_ops); i++) /* [0] is "==", written as nothing */
        if (expect_ops[i].op == e->op)
            sym = expect_ops[i].text;
    snprintf(buf, len, "%s%" PRIu64, sym, e->value);
    return buf;
}

bool expect_met(const struct expect_num *e, uint64_t got)
{
    switch (e->op) {
    case EXPECT_EQ:
        return got == e->value;
    case EXPECT_GT:
        return got > e->value;
    case EXPECT_GE:
        return got >= e->value;
    case EXPECT_LT:
        return got < e->value;
    case EXPECT_LE:
        return got <= e->value;
    default:
        return true; /* nothing expected */
    }
}

const struct server_list *scenario_external(const struct scenario *s, const char *kind)
{
    static const struct server_list none; /* read-only: a kind nobody named */
    int k = server_kind_index(kind);
    return k < 0 || k >= SCENARIO_SERVER_KINDS ? &none : &s->servers[k];
}

const struct server_list *scenario_finders(const struct scenario *s, const struct lock_ops *ops)
{
    const struct server_kind *k = server_kind_find(ops->server);
    return scenario_external(s, k && k->found_by ? k->found_by : "");
}

bool scenario_external_for(const struct scenario *s, const struct lock_ops *ops)
{
    return scenario_external(s, ops->server)->n > 0 || scenario_finders(s, ops)->n > 0;
}

bool scenario_names_finders(const struct scenario *s)
{
    for (size_t k = 0; k < server_kind_count(); k++) {
        const char *finder = server_kind_at(k)->found_by;
        if (finder && scenario_external(s, finder)->n > 0)
            return true;
    }
    return false;
}

const char *scenario_seconds(uint64_t ms, char *buf, size_t len)
{
    if (ms % 1000 == 0)
        snprintf(buf, len, "%" PRIu64, ms / 1000);
    else
        snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
    return buf;
}
