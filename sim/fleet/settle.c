/* settle.c - waiting for the managed servers to go quiet between two
 * algorithms of a comparison (settle.h says why and the rule). */
#include "sim/fleet/settle.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/clock.h"

void settle_begin(struct settle *s, size_t n, const uint64_t *cpu_ms, uint64_t now_ms,
                  uint64_t max_ms)
{
    memset(s, 0, sizeof(*s));
    s->n = n < CLUSTER_MAX_SERVERS ? n : CLUSTER_MAX_SERVERS;
    s->start_ms = s->last_ms = now_ms;
    s->max_ms = max_ms;
    for (size_t i = 0; i < s->n; i++) {
        s->last_cpu_ms[i] = cpu_ms[i];
        s->busy[i] = true; /* nothing is known quiet before one window */
    }
}

enum settle_state settle_sample(struct settle *s, const uint64_t *cpu_ms, uint64_t now_ms)
{
    bool past = now_ms - s->start_ms >= s->max_ms;
    if (now_ms <= s->last_ms)
        return past ? SETTLE_BOUND : SETTLE_BUSY;
    uint64_t dt = now_ms - s->last_ms;
    size_t busy = 0;
    for (size_t i = 0; i < s->n; i++) {
        /* a server started again counts from zero: what it did since is
         * its whole CPU time */
        uint64_t used = cpu_ms[i] >= s->last_cpu_ms[i] ? cpu_ms[i] - s->last_cpu_ms[i] : cpu_ms[i];
        s->busy_pct[i] = used * 100 / dt;
        s->busy[i] = used * 100 >= (uint64_t)SETTLE_BUSY_PCT * dt;
        s->ever_busy[i] = s->ever_busy[i] || s->busy[i];
        s->last_cpu_ms[i] = cpu_ms[i];
        busy += s->busy[i];
    }
    s->last_ms = now_ms;
    if (busy == 0)
        return SETTLE_QUIET;
    return past ? SETTLE_BOUND : SETTLE_BUSY;
}

/* utime + stime (ticks) and the parent of /proc/<name>/stat; -1 if gone. */
static int64_t stat_ticks(const char *name, long *ppid)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%s/stat", name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = '\0';
    /* the command may hold spaces and parentheses: fields start after the last ')' */
    const char *p = strrchr(line, ')');
    unsigned long long ut, st;
    char state;
    if (p == NULL || sscanf(p + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state,
                            ppid, &ut, &st) != 4)
        return -1;
    return (int64_t)(ut + st);
}

void settle_cpu_ms_each(const int *pids, size_t n, int64_t *ms)
{
    char name[24];
    long ppid;
    size_t live = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%d", pids[i]);
        ms[i] = stat_ticks(name, &ppid);
        live += ms[i] >= 0;
    }
    /* one pass over /proc for their children, whatever the number of pids */
    DIR *d = live ? opendir("/proc") : NULL;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        int64_t t = stat_ticks(e->d_name, &ppid);
        for (size_t i = 0; t > 0 && i < n; i++)
            if (ms[i] >= 0 && ppid == pids[i])
                ms[i] += t;
    }
    if (d)
        closedir(d);
    long hz = sysconf(_SC_CLK_TCK);
    for (size_t i = 0; i < n; i++)
        if (ms[i] >= 0)
            ms[i] = ms[i] * 1000 / (hz > 0 ? hz : 100);
}

int64_t settle_cpu_ms(int pid)
{
    int64_t ms;
    settle_cpu_ms_each(&pid, 1, &ms);
    return ms;
}

static uint64_t now_ms(void)
{
    return clock_mono_ns() / 1000000u;
}

static void sample_all(const struct cluster *cl, const size_t *idx, size_t n, uint64_t *cpu)
{
    int pids[CLUSTER_MAX_SERVERS] = {0};
    int64_t ms[CLUSTER_MAX_SERVERS];
    for (size_t i = 0; i < n; i++)
        pids[i] = (int)cl->srv[idx[i]].pid;
    settle_cpu_ms_each(pids, n, ms);
    for (size_t i = 0; i < n; i++)
        cpu[i] = ms[i] > 0 ? (uint64_t)ms[i] : 0; /* gone: it does nothing more */
}

static void append(char *buf, size_t len, const char *text)
{
    size_t at = strlen(buf);
    if (at < len)
        snprintf(buf + at, len - at, "%s%s", at ? ", " : "", text);
}

void fleet_settle(const struct cluster *cl, uint64_t max_ms, int (*stop)(void),
                  struct settle_report *r)
{
    size_t idx[CLUSTER_MAX_SERVERS], n = 0;
    uint64_t cpu[CLUSTER_MAX_SERVERS];
    memset(r, 0, sizeof(*r));
    for (size_t j = 0; j < cl->n && n < CLUSTER_MAX_SERVERS; j++)
        if (cl->srv[j].pid > 0 && !cl->srv[j].paused && !cl->srv[j].killed)
            idx[n++] = j;
    r->state = SETTLE_QUIET;
    r->n_watched = n;
    if (n == 0)
        return;
    struct settle *s = malloc(sizeof(*s));
    if (s == NULL)
        return; /* no wait is no harm: the next run goes on as before */
    sample_all(cl, idx, n, cpu);
    uint64_t t0 = now_ms();
    settle_begin(s, n, cpu, t0, max_ms);
    do {
        spawn_sleep_ms(SETTLE_SAMPLE_MS);
        sample_all(cl, idx, n, cpu);
        r->state = settle_sample(s, cpu, now_ms());
    } while (r->state == SETTLE_BUSY && !(stop && stop()));
    r->waited_ms = s->last_ms - t0;
    for (size_t i = 0; i < n; i++) {
        char one[96];
        const struct managed_server *m = &cl->srv[idx[i]];
        snprintf(one, sizeof(one), "%s pid %d", m->kind->name, (int)m->pid);
        if (s->ever_busy[i]) {
            r->n_busy++;
            append(r->busy, sizeof(r->busy), one);
        }
        if (r->state == SETTLE_BOUND && s->busy[i]) {
            snprintf(one + strlen(one), sizeof(one) - strlen(one), " (%" PRIu64 " %% of a core)",
                     s->busy_pct[i]);
            append(r->still, sizeof(r->still), one);
        }
    }
    free(s);
}
