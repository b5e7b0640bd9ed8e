/* run_meta.c - the process's part of a run's metadata: the build, the
 * command line, the host. */
#include "sim/record/run_meta.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static const struct run_meta *current;

/* Letters a shell never reads specially, so a word of them needs no quotes. */
static bool plain(const char *w)
{
    if (*w == '\0')
        return false;
    for (; *w; w++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+@%^-",
                    *w))
            return false;
    return true;
}

/* c appended at *at when it fits (the '\0' always kept); counted either way. */
static void put(char *out, size_t len, size_t *at, char c)
{
    if (*at + 1 < len)
        out[*at] = c;
    (*at)++;
}

size_t run_meta_quote(char *out, size_t len, size_t argc, const char *const *argv)
{
    size_t at = 0;
    for (size_t i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (i > 0)
            put(out, len, &at, ' ');
        if (plain(w)) {
            for (; *w; w++)
                put(out, len, &at, *w);
            continue;
        }
        put(out, len, &at, '\'');
        for (; *w; w++) {
            if (*w != '\'') {
                put(out, len, &at, *w);
                continue;
            }
            for (const char *q = "'\\''"; *q; q++) /* close, an escaped quote, open again */
                put(out, len, &at, *q);
        }
        put(out, len, &at, '\'');
    }
    if (len > 0)
        out[at < len ? at : len - 1] = '\0';
    return at;
}

void run_meta_init(struct run_meta *m, int argc, char *const *argv)
{
    memset(m, 0, sizeof(*m));
    m->version = LOCKLAB_VERSION;
    m->commit = locklab_commit;
    for (int i = 0; i < argc && m->argc < RUN_META_ARGS; i++)
        m->argv[m->argc++] = argv[i];
    run_meta_quote(m->command_line, sizeof(m->command_line), m->argc, m->argv);
    if (gethostname(m->host, sizeof(m->host)) != 0)
        snprintf(m->host, sizeof(m->host), "unknown");
    m->host[sizeof(m->host) - 1] = '\0';
    m->cores_online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    m->cores_usable =
        sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : m->cores_online;
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof(m->kernel), "%.40s %.100s %.40s", u.sysname, u.release,
                 u.machine);
    else
        snprintf(m->kernel, sizeof(m->kernel), "unknown");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m->started_wall_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const struct run_meta *run_meta_current(void)
{
    return current;
}

void run_meta_set(const struct run_meta *m)
{
    current = m;
}
