/* control.c - what a process fault does to one managed server: kill it,
 * pause and continue it, stop it cleanly, start it again on its port.
 * Each takes cluster_lock() (cluster.c) around the pid and fault state it
 * changes: the main thread watches for servers that died meanwhile.
 *
 * A kill or a pause strikes every process of the server, found through
 * /proc (spawn_processes): PostgreSQL's postmaster hands each connection
 * to a backend in a session of its own, which keeps serving it while the
 * postmaster alone is stopped.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/remote.h"
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/clock.h"

static struct managed_server *live(struct cluster *c, size_t i, char *err, size_t errlen)
{
    if (i >= c->n || c->srv[i].pid <= 0) {
        snprintf(err, errlen, "server %zu is not running", i);
        return NULL;
    }
    return &c->srv[i];
}

static int signal_server(struct managed_server *s, int sig, char *err, size_t errlen)
{
    if (kill(s->pid, sig) == 0)
        return 0;
    snprintf(err, errlen, "%s on port %d (pid %d): %s", s->kind->name, s->port, (int)s->pid,
             strerror(errno));
    return -1;
}

/* Has p done what sig asks: gone (a zombie is: it serves nobody), or
 * stopped? */
static bool moved(const struct cluster_proc *p, int sig)
{
    char state = spawn_process_state(p);
    if (sig == SIGKILL)
        return state == 0 || state == 'Z' || state == 'X';
    return state == 'T' || state == 't' || state == 0;
}

/* Wait, up to CLUSTER_STRIKE_WAIT_MS, until every one of p[0..n) has done
 * what sig asks; those that have not, into st. */
static void await_moved(const struct cluster_proc *p, size_t n, int sig, struct cluster_struck *st)
{
    uint64_t from = clock_mono_ns(), until = from + CLUSTER_STRIKE_WAIT_MS * 1000000ull;
    size_t done = 0; /* p[0..done) have */
    for (;;) {
        while (done < n && moved(&p[done], sig))
            done++;
        if (done == n || clock_mono_ns() >= until)
            break;
        spawn_sleep_ms(1);
    }
    st->moved_ns = clock_mono_ns();
    st->waited_ms = (unsigned)((st->moved_ns - from) / 1000000u);
    for (size_t k = done; k < n; k++)
        if (!moved(&p[k], sig)) {
            if (st->unmoved++ == 0)
                st->unmoved_pid = p[k].pid;
        }
}

size_t cluster_kill_tree(pid_t pid)
{
    struct cluster_proc *tree = malloc(CLUSTER_MAX_PROCESSES * sizeof(*tree));
    size_t n = tree ? spawn_processes(pid, tree, CLUSTER_MAX_PROCESSES) : 0;
    size_t reached = n ? spawn_signal_all(tree, n, SIGKILL) : kill(pid, SIGKILL) == 0;
    free(tree);
    return reached;
}

size_t cluster_processes(struct cluster *c, size_t i, struct cluster_proc *tree, size_t max)
{
    cluster_lock();
    pid_t pid = i < c->n ? c->srv[i].pid : 0;
    /* on a host the strike reads its tree there, in the same command */
    size_t n = pid > 0 && c->srv[i].host == NULL ? spawn_processes(pid, tree, max) : 0;
    cluster_unlock();
    return n;
}

static bool listed(const struct cluster_proc *tree, size_t n, const struct cluster_proc *p)
{
    for (size_t k = 0; k < n; k++)
        if (tree[k].pid == p->pid && tree[k].start == p->start)
            return true;
    return false;
}

/* The children s forked since tree[0..n) was read, signalled too and
 * added to it, s stopped first so that it forks none while they are read;
 * the new count. */
static size_t catch_new(struct managed_server *s, int sig, struct cluster_proc *tree, size_t n)
{
    struct cluster_proc *now = malloc(CLUSTER_MAX_PROCESSES * sizeof(*now));
    struct cluster_struck root = {0};
    kill(s->pid, SIGSTOP);
    await_moved(tree, 1, SIGSTOP, &root);
    size_t m = now ? spawn_processes(s->pid, now, CLUSTER_MAX_PROCESSES) : 0;
    for (size_t k = 1; k < m && n < CLUSTER_MAX_PROCESSES; k++)
        if (!listed(tree, n, &now[k])) {
            kill(now[k].pid, sig);
            tree[n++] = now[k];
        }
    free(now);
    return n;
}

static void note_children(struct cluster_struck *st, const struct cluster_proc *tree, size_t n)
{
    st->children = n > 1 ? n - 1 : 0;
    for (size_t k = 1; k < n && k - 1 < CLUSTER_STRUCK_LISTED; k++)
        st->child[k - 1] = tree[k].pid;
}

/* sig to s's children, then to s; a kill reaps s. The children go first:
 * they serve the clients (PostgreSQL's backends), and each signal is a
 * few microseconds once the tree is known. */
static int strike_tree(struct managed_server *s, int sig, const struct cluster_proc *known,
                       size_t known_n, struct cluster_struck *st, char *err, size_t errlen)
{
    struct cluster_proc *tree = malloc(CLUSTER_MAX_PROCESSES * sizeof(*tree));
    if (tree == NULL) {
        snprintf(err, errlen, "out of memory reading the processes of %s", s->kind->name);
        return -1;
    }
    size_t n = 0;
    if (known && known_n > 0 && known[0].pid == s->pid) {
        n = known_n < CLUSTER_MAX_PROCESSES ? known_n : CLUSTER_MAX_PROCESSES;
        memcpy(tree, known, n * sizeof(*tree));
    } else {
        n = spawn_processes(s->pid, tree, CLUSTER_MAX_PROCESSES);
    }
    st->first_ns = clock_mono_ns();
    if (n > 1 && known)
        spawn_signal_known(tree + 1, n - 1, sig);
    else if (n > 1)
        spawn_signal_all(tree + 1, n - 1, sig);
    if (sig != SIGCONT && n > 0)
        n = catch_new(s, sig, tree, n);
    note_children(st, tree, n);
    int rc = signal_server(s, sig, err, errlen);
    if (rc == 0 && sig == SIGKILL) {
        waitpid(s->pid, NULL, 0); /* SIGKILL ends a stopped process too */
        s->pid = 0;
    }
    if (rc == 0 && sig != SIGCONT)
        await_moved(tree, n, sig, st);
    free(tree);
    return rc;
}

int cluster_strike(struct cluster *c, size_t i, int sig, const struct cluster_proc *tree, size_t n,
                   struct cluster_struck *st, char *err, size_t errlen)
{
    struct cluster_struck none;
    if (st == NULL)
        st = &none;
    memset(st, 0, sizeof(*st));
    cluster_lock();
    struct managed_server *s = live(c, i, err, errlen);
    int rc = -1;
    if (s) {
        st->pid = s->pid;
        rc = s->host ? remote_strike(s, sig, st, err, errlen)
                     : strike_tree(s, sig, tree, n, st, err, errlen);
    }
    if (rc == 0 && sig == SIGKILL)
        s->killed = true;
    if (rc == 0)
        s->paused = sig == SIGSTOP;
    cluster_unlock();
    return rc;
}

int cluster_kill(struct cluster *c, size_t i, char *err, size_t errlen)
{
    return cluster_strike(c, i, SIGKILL, NULL, 0, NULL, err, errlen);
}

int cluster_pause(struct cluster *c, size_t i, char *err, size_t errlen)
{
    return cluster_strike(c, i, SIGSTOP, NULL, 0, NULL, err, errlen);
}

int cluster_resume(struct cluster *c, size_t i, char *err, size_t errlen)
{
    return cluster_strike(c, i, SIGCONT, NULL, 0, NULL, err, errlen);
}

int cluster_stop_one(struct cluster *c, size_t i, char *err, size_t errlen)
{
    cluster_lock();
    struct managed_server *s = live(c, i, err, errlen);
    if (s) {
        spawn_stop_clean(s);
        s->killed = true; /* down on purpose until revived */
        s->paused = false;
    }
    cluster_unlock();
    return s ? 0 : -1;
}

int cluster_revive_start(struct cluster *c, size_t i, bool keep_data, char *err, size_t errlen)
{
    cluster_lock();
    if (i >= c->n || c->srv[i].pid > 0) {
        cluster_unlock();
        snprintf(err, errlen, "server %zu is running", i);
        return -1;
    }
    struct managed_server *s = &c->srv[i];
    if (!keep_data && s->kind->forget_data) /* some kinds' data is a log, always kept */
        s->kind->forget_data(s);
    int rc = spawn_start(s, err, errlen);
    if (rc == 0 && c->pids_changed)
        c->pids_changed(c);
    cluster_unlock();
    return rc;
}

int cluster_revive_wait(struct cluster *c, size_t i, size_t starting, char *err, size_t errlen)
{
    struct managed_server *s = &c->srv[i];
    /* waited for outside the lock: the main thread may look meanwhile */
    struct spawn_wait w;
    int ready = spawn_wait_ready(s, starting, &w);
    cluster_lock();
    if (c->pids_changed)
        c->pids_changed(c);
    if (ready == 0)
        s->killed = false;
    else
        spawn_failed(s, &w, err, errlen);
    cluster_unlock();
    return ready == 0 ? 0 : -1;
}

/* Every server a fault left down is started before any is waited for: a
 * ZooKeeper member serves only once a quorum of them is back. */
size_t cluster_heal(struct cluster *c)
{
    char err[256];
    size_t healed = 0, starting = 0;
    bool started[CLUSTER_MAX_SERVERS] = {false};
    for (size_t i = 0; i < c->n; i++) {
        cluster_lock();
        bool paused = c->srv[i].paused, killed = c->srv[i].killed;
        cluster_unlock();
        if (paused && cluster_resume(c, i, err, sizeof(err)) == 0)
            healed++;
        if (killed && cluster_revive_start(c, i, c->srv[i].aof, err, sizeof(err)) == 0)
            started[i] = true, starting++;
    }
    for (size_t i = 0; i < c->n; i++)
        if (started[i] && cluster_revive_wait(c, i, starting, err, sizeof(err)) == 0)
            healed++;
    return healed;
}

int cluster_clock_jump(struct cluster *c, size_t i, uint64_t ms, char *err, size_t errlen)
{
    cluster_lock();
    struct managed_server *s = i < c->n ? &c->srv[i] : NULL;
    if (s == NULL || s->preload[0] == '\0') {
        cluster_unlock();
        snprintf(err, errlen, "server %zu does not run under libfaketime", i);
        return -1;
    }
    if (s->pid <= 0) { /* its file would be written, and no clock would move */
        cluster_unlock();
        snprintf(err, errlen, "%s on port %d is not running", s->kind->name, s->port);
        return -1;
    }
    uint64_t ahead = s->clock_ahead_ms + ms;
    int rc = spawn_write_clock(s, ahead);
    if (rc == 0) {
        s->clock_ahead_ms = ahead;
    } else {
        char file[300];
        spawn_faketime_file(s, file, sizeof(file));
        snprintf(err, errlen, "cannot write %s: %s", file, strerror(errno));
    }
    cluster_unlock();
    return rc;
}
