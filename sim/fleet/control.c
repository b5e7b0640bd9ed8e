/* control.c - what a process fault does to one managed server: kill it,
 * pause and continue it, stop it cleanly, start it again on its port.
 * Each takes cluster_lock() (cluster.c) around the pid and fault state it
 * changes: the main thread watches for servers that died meanwhile.
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
#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"

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

int cluster_kill(struct cluster *c, size_t i, char *err, size_t errlen)
{
    cluster_lock();
    struct managed_server *s = live(c, i, err, errlen);
    int rc = s ? signal_server(s, SIGKILL, err, errlen) : -1;
    if (rc == 0) {
        waitpid(s->pid, NULL, 0); /* SIGKILL ends a stopped process too */
        s->pid = 0;
        s->killed = true;
        s->paused = false;
    }
    cluster_unlock();
    return rc;
}

/* SIGSTOP or SIGCONT, and the state that goes with it. */
static int set_paused(struct cluster *c, size_t i, bool paused, char *err, size_t errlen)
{
    cluster_lock();
    struct managed_server *s = live(c, i, err, errlen);
    int rc = s ? signal_server(s, paused ? SIGSTOP : SIGCONT, err, errlen) : -1;
    if (rc == 0)
        s->paused = paused;
    cluster_unlock();
    return rc;
}

int cluster_pause(struct cluster *c, size_t i, char *err, size_t errlen)
{
    return set_paused(c, i, true, err, errlen);
}

int cluster_resume(struct cluster *c, size_t i, char *err, size_t errlen)
{
    return set_paused(c, i, false, err, errlen);
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
