/* signals.c - the signal thread of `locklab run` (see signals.h). */
#include "sim/cli/signals.h"

#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/engine/runner.h"
#include "sim/fleet/cluster.h"

/* What the signal thread may touch: the runner only under the mutex (the
 * main thread frees it), the servers through PIDs published here. */
static struct {
    _Atomic int signals;
    pthread_mutex_t mu;
    struct runner *runner;
    _Atomic pid_t servers[CLUSTER_MAX_SERVERS];
    char root[sizeof(((struct cluster *)0)->root)];
    _Atomic int root_set;
    _Atomic int remote; /* a server runs on another host: its janitor reaches it */
} sig = {.mu = PTHREAD_MUTEX_INITIALIZER};

void signals_publish_runner(struct runner *r)
{
    pthread_mutex_lock(&sig.mu);
    sig.runner = r;
    pthread_mutex_unlock(&sig.mu);
}

void signals_publish_servers(const struct cluster *c)
{
    for (size_t i = 0; i < CLUSTER_MAX_SERVERS; i++)
        /* a server on another host has a pid of that host's: nothing to kill here */
        atomic_store(&sig.servers[i], i < c->n && c->srv[i].host == NULL ? c->srv[i].pid : 0);
    for (size_t i = 0; i < c->n; i++)
        if (c->srv[i].host)
            atomic_store(&sig.remote, 1);
    if (c->root[0] && !atomic_load(&sig.root_set)) {
        memcpy(sig.root, c->root, sizeof(sig.root));
        atomic_store(&sig.root_set, 1);
    }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Second signal: the user wants out now. PR_SET_PDEATHSIG would take the
 * servers down with us anyway; killing them first keeps them from writing
 * into the folder being removed. */
static void abandon(void)
{
    for (size_t i = 0; i < CLUSTER_MAX_SERVERS; i++) {
        pid_t p = atomic_load(&sig.servers[i]);
        if (p > 0)
            cluster_kill_tree(p); /* a paused PostgreSQL's backends too */
    }
    /* with servers on other hosts the folder holds the notes its janitor
     * needs to reach them (remote.h): it goes when the janitor is done */
    if (atomic_load(&sig.root_set) && !atomic_load(&sig.remote))
        nftw(sig.root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    _exit(130); /* the shell's code for death by SIGINT */
}

void signals_forget_servers(void)
{
    for (size_t i = 0; i < CLUSTER_MAX_SERVERS; i++)
        atomic_store(&sig.servers[i], 0);
}

int signals_received(void)
{
    return atomic_load(&sig.signals);
}

static void *signal_thread(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int s;
        if (sigwait(set, &s) != 0)
            continue;
        if (atomic_fetch_add(&sig.signals, 1) > 0)
            abandon();
        fprintf(stderr, "\nlocklab: stopping (signal %d); again to abandon the report\n", s);
        pthread_mutex_lock(&sig.mu);
        if (sig.runner)
            runner_stop(sig.runner, 1);
        pthread_mutex_unlock(&sig.mu);
    }
    return NULL;
}

void signals_start(void)
{
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    /* Blocked before any other thread exists, so only sigwait sees them. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_t t;
    if (pthread_create(&t, NULL, signal_thread, &set) == 0)
        pthread_detach(t);
}
