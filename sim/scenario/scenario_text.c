/* scenario_text.c - the values of a scenario that are written as text:
 * server endpoints ("host:port,host:port", also --redis/--zookeeper), read
 * and written back; and the external server lists a scenario names, by
 * server kind. Expectations ("0", ">0", ">= 3") are sim/record/figures.c's.
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

void scenario_layout(const struct scenario *s, struct family_layout *out)
{
    *out = (struct family_layout){0};
    for (size_t i = 0; i < lock_family_count(); i++)
        if (lock_family_at(i)->layout)
            lock_family_at(i)->layout(scenario_settings(s, lock_family_at(i)), out);
}

const struct lock_family *scenario_topology_family(const struct scenario *s)
{
    const struct lock_family *could = NULL;
    for (size_t i = 0; i < lock_family_count(); i++) {
        const struct lock_family *f = lock_family_at(i);
        struct family_layout l = {0};
        if (!f->layout || !f->layout_words)
            continue;
        f->layout(scenario_settings(s, f), &l);
        if (l.followers > 0 || l.finders > 0)
            return f;
        if (could == NULL)
            could = f;
    }
    return could;
}

bool scenario_follows_topology(const struct scenario *s, const struct lock_ops *ops)
{
    const struct lock_family *t = scenario_topology_family(s);
    for (const struct lock_family *f = ops->family; f && t; f = f->base)
        if (f == t)
            return true;
    return false;
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
