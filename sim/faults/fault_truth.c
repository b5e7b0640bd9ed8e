/* fault_truth.c - was a kill or a pause carried out as its class means?
 * Once struck, its servers must answer nobody. Each is asked on its port
 * the way its kind asks whether it serves (kind->answers: a real request,
 * since a stopped process's kernel still accepts TCP connections on its
 * listening socket), from a thread of its own, since a stopped server
 * keeps the question waiting until it runs again. The nemesis waits for
 * the answers at most TRUTH_WAIT_MS (half the fault's window when that is
 * shorter), and looks once more just before the fault ends; a server that
 * answered in between is the fault's error, so the run cannot be judged.
 *
 * An asker is never waited for once the fault has ended: a connect to a
 * port whose listen queue is full (a program that took the port of a
 * killed server and accepts nobody) retries for minutes. Each asker and
 * the nemesis share its probe, and the last to let go frees it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/faults/nemesis_state.h"
#include "sim/fleet/cluster.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/clock.h"

#define TRUTH_WAIT_MS 200

enum { TRUTH_ASKING, TRUTH_ANSWERED, TRUTH_SILENT };

struct truth_probe {
    int port;
    bool (*answers)(int port);
    uint64_t asked_ns;
    bool reported;    /* the nemesis's: its answer is in the fault's error */
    _Atomic int said; /* TRUTH_* */
    _Atomic uint64_t answered_ns;
    _Atomic int holders; /* the asker and the nemesis */
};

static void let_go(struct truth_probe *p)
{
    if (atomic_fetch_sub(&p->holders, 1) == 1)
        free(p);
}

static void *ask(void *arg)
{
    struct truth_probe *p = arg;
    bool yes = p->answers(p->port);
    if (yes)
        atomic_store(&p->answered_ns, clock_mono_ns());
    atomic_store(&p->said, yes ? TRUTH_ANSWERED : TRUTH_SILENT);
    let_go(p);
    return NULL;
}

/* Ask the server on port from a thread of its own; NULL when none could
 * be started. */
static struct truth_probe *ask_on(int port, bool (*answers)(int port), uint64_t now)
{
    struct truth_probe *p = malloc(sizeof(*p));
    if (p == NULL)
        return NULL;
    *p = (struct truth_probe){.port = port, .answers = answers, .asked_ns = now};
    atomic_init(&p->said, TRUTH_ASKING);
    atomic_init(&p->answered_ns, 0);
    atomic_init(&p->holders, 2);
    pthread_attr_t attr;
    pthread_t t;
    bool started = pthread_attr_init(&attr) == 0 &&
                   pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                   pthread_create(&t, &attr, ask, p) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
        free(p);
        return NULL;
    }
    return p;
}

/* How long to wait for the answers: the fault's window, halved, when it
 * is shorter than TRUTH_WAIT_MS (a 50 ms pause must end on time). */
static uint64_t wait_ns(const struct fault_spec *f)
{
    uint64_t ms = TRUTH_WAIT_MS;
    uint64_t window = f->duration_ms ? f->duration_ms : f->restart_after_ms;
    if (window && window / 2 < ms)
        ms = window / 2;
    return ms * 1000000u;
}

/* Every answer that came, into fault i's error, once. */
static void report_answers(struct nemesis *n, size_t i)
{
    struct fault_record *r = &n->rec[i];
    for (size_t k = 0; k < n->nodes.n; k++) {
        struct truth_probe *p = n->probe[i][k];
        if (p == NULL || p->reported || atomic_load(&p->said) != TRUTH_ANSWERED)
            continue;
        p->reported = true;
        double ms = (double)(atomic_load(&p->answered_ns) - p->asked_ns) / 1e6;
        nemesis_add_text(r->error, sizeof(r->error),
                         "%s still answered on port %d, %.0f ms after the %s struck it",
                         n->nodes.node[k].name, p->port, ms, fault_type_name(r->spec.kind));
    }
}

static bool still_asking(const struct nemesis *n, size_t i)
{
    for (size_t k = 0; k < n->nodes.n; k++)
        if (n->probe[i][k] && atomic_load(&n->probe[i][k]->said) == TRUTH_ASKING)
            return true;
    return false;
}

void nemesis_truth_ask(struct nemesis *n, size_t i)
{
    if (!fault_kind_of(&n->rec[i].spec)->silences)
        return;
    uint64_t now = clock_mono_ns();
    for (size_t k = 0; k < n->nodes.n; k++) {
        const struct managed_server *s = nemesis_server(n, k);
        if ((n->struck[i] & (1u << k)) && s->kind->answers)
            n->probe[i][k] = ask_on(s->port, s->kind->answers, now);
    }
    uint64_t until = now + wait_ns(&n->rec[i].spec);
    while (still_asking(n, i) && clock_mono_ns() < until) {
        history_buf_floor(n->hist, clock_mono_ns()); /* nothing it logs next is earlier */
        struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
        nanosleep(&ms, NULL);
    }
    report_answers(n, i);
}

void nemesis_truth_look(struct nemesis *n, size_t i)
{
    report_answers(n, i);
}

void nemesis_truth_done(struct nemesis *n, size_t i)
{
    for (size_t k = 0; k < LOCK_ENDPOINT_MAX; k++)
        if (n->probe[i][k]) {
            let_go(n->probe[i][k]);
            n->probe[i][k] = NULL;
        }
}
