/* meta.c - the "meta" object of report.json, compare.json and
 * matrix.json: the locklab built, the command line, the host, the start
 * and each server's version as it answered (docs/report-json.md). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "reports/report.h"

void report_meta_time(uint64_t wall_ns, char *buf, size_t len)
{
    time_t t = (time_t)(wall_ns / 1000000000u);
    struct tm tm;
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03uZ", (unsigned)(wall_ns / 1000000u % 1000u));
}

static json_t *string_or_null(const char *s)
{
    return s && s[0] ? json_string(s) : json_null();
}

void report_meta_shown(const struct run_meta *m, uint64_t started_wall_ns,
                       const struct server_version *v, size_t n, bool proxy,
                       struct report_meta_shown *out)
{
    const size_t max = sizeof(out->all) / sizeof(out->all[0]);
    size_t k = 0;
    report_meta_time(started_wall_ns, out->when, sizeof(out->when));
    for (size_t i = 0; i < n && k < max; i++)
        out->all[k++] = v[i];
    if (proxy && k < max) { /* locklab's own: its version is locklab's */
        struct server_version *p = &out->all[k++];
        memset(p, 0, sizeof(*p));
        snprintf(p->kind, sizeof(p->kind), "proxy");
        snprintf(p->version, sizeof(p->version), "%s", m ? m->version : LOCKLAB_VERSION);
        snprintf(p->answer, sizeof(p->answer), "locklab's own proxy");
    }
    out->n = k;
}

void report_meta_merge(struct server_version *into, size_t *n, size_t max,
                       const struct server_version *v, size_t nv, bool by_address)
{
    for (size_t i = 0; i < nv; i++) {
        struct server_version one = v[i];
        if (!by_address)
            one.address[0] = '\0';
        bool seen = false;
        for (size_t j = 0; j < *n && !seen; j++)
            seen = strcmp(into[j].kind, one.kind) == 0 &&
                   strcmp(into[j].version, one.version) == 0 &&
                   strcmp(into[j].address, one.address) == 0 && strcmp(into[j].why, one.why) == 0;
        if (!seen && *n < max)
            into[(*n)++] = one;
    }
}

json_t *report_meta_json(const struct run_meta *m, uint64_t started_wall_ns,
                         const struct server_version *v, size_t n, bool proxy)
{
    if (m == NULL)
        return json_null();
    struct report_meta_shown sh;
    report_meta_shown(m, started_wall_ns, v, n, proxy, &sh);
    const struct server_version *all = sh.all;
    json_t *argv = json_array(), *servers = json_array();
    for (size_t i = 0; i < m->argc; i++)
        json_array_append_new(argv, json_string(m->argv[i]));
    for (size_t i = 0; i < sh.n; i++)
        json_array_append_new(servers, json_pack("{s:s, s:o, s:o, s:o, s:o}", "kind", all[i].kind,
                                                 "address", string_or_null(all[i].address),
                                                 "version", string_or_null(all[i].version),
                                                 "answer", string_or_null(all[i].answer),
                                                 "unknown_why", string_or_null(all[i].why)));
    return json_pack("{s:{s:s, s:s}, s:s, s:o, s:{s:s, s:I, s:I, s:s}, s:s, s:o}", "locklab",
                     "version", m->version, "commit", m->commit, "command_line", m->command_line,
                     "argv", argv, "host", "name", m->host, "cores_online",
                     (json_int_t)m->cores_online, "cores_usable", (json_int_t)m->cores_usable,
                     "kernel", m->kernel, "started_at", sh.when, "servers", servers);
}

void report_meta_line(FILE *f, const struct run_meta *m, uint64_t started_wall_ns,
                      const struct server_version *v, size_t n, bool proxy)
{
    if (m == NULL)
        return;
    struct report_meta_shown sh;
    report_meta_shown(m, started_wall_ns, v, n, proxy, &sh);
    fprintf(f, "Ran on %s (%ld cores, %ld usable; %s), locklab %s (%s), %s; servers:", m->host,
            m->cores_online, m->cores_usable, m->kernel, m->version, m->commit, sh.when);
    for (size_t i = 0; i < sh.n; i++)
        fprintf(f, "%s %s %s", i ? "," : "", sh.all[i].kind,
                sh.all[i].version[0] ? sh.all[i].version : "(version unknown)");
    fprintf(f, "%s; command: `%s`\n", sh.n ? "" : " none", m->command_line);
}
