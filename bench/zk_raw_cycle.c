/* zk_raw_cycle.c - the peer for bench/zookeeper_cycle.sh: the raw rate of
 * the ZooKeeper C client (libzookeeper_st, the one locklab uses) doing the three requests an
 * uncontended lock cycle of the recipe needs, create(EPHEMERAL|SEQUENCE),
 * get_children of the parent, delete, and nothing else: no queue logic, no
 * histogram, no history. Each thread has its own session and its own
 * parent node, as each locklab client has its own key there, and drives
 * it itself (zookeeper_interest, poll, zookeeper_process) until each
 * answer is in: the single-threaded library has no threads of its own.
 *
 *   zk_raw_cycle HOST:PORT[,HOST:PORT...] THREADS SECONDS
 * prints one line: cycles=N seconds=S rate=R (cycles per second, all threads)
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#define SESSION_MS  10000
#define CONNECT_MS  10000
#define MAX_THREADS 1024
#define PATH_LEN    128

static const char root[] = "/zk_raw_cycle";

struct worker {
    const char *hosts;
    int id;
    zhandle_t *zh;
    char parent[PATH_LEN];
    long cycles;
    char err[160];
};

static pthread_barrier_t ready;
static atomic_int stop;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(struct worker *w, const char *what, const char *path, int rc)
{
    snprintf(w->err, sizeof(w->err), "thread %d: %s %s: %s", w->id, what, path, zerror(rc));
    return -1;
}

/* One turn of the session's loop: wait (poll) for what the library asks,
 * no longer than it says, and let it process. -1 when the handle is past
 * use. */
static int turn(zhandle_t *zh)
{
    int fd = -1, interest = 0;
    struct timeval tv = {0, 0};
    if (zookeeper_interest(zh, &fd, &interest, &tv) == ZINVALIDSTATE)
        return -1;
    struct pollfd p = {.fd = fd,
                       .events = (short)(((interest & ZOOKEEPER_READ) ? POLLIN : 0) |
                                         ((interest & ZOOKEEPER_WRITE) ? POLLOUT : 0))};
    int events = 0;
    if (poll(&p, fd >= 0 ? 1 : 0, (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000)) > 0) {
        events |= (p.revents & (POLLIN | POLLERR)) ? ZOOKEEPER_READ : 0;
        events |= (p.revents & (POLLOUT | POLLHUP | POLLERR)) ? ZOOKEEPER_WRITE : 0;
    }
    zookeeper_process(zh, events);
    return 0;
}

/* A request's answer: the library ends every request it sent, with an
 * error when the connection gives out. */
struct call {
    bool done;
    int rc;
    char *out;
    size_t out_len;
};

static int await(zhandle_t *zh, struct call *k, int rc)
{
    while (rc == ZOK && !k->done)
        if (turn(zh) < 0)
            return ZINVALIDSTATE;
    return rc == ZOK ? k->rc : rc;
}

static void created(int rc, const char *value, const void *data)
{
    struct call *k = (struct call *)data;
    if (rc == ZOK && k->out)
        snprintf(k->out, k->out_len, "%s", value);
    k->rc = rc;
    k->done = true;
}

static void listed(int rc, const struct String_vector *strings, const void *data)
{
    (void)strings; /* the peer only asks, as the recipe's uncontended cycle does */
    struct call *k = (struct call *)data;
    k->rc = rc;
    k->done = true;
}

static void deleted(int rc, const void *data)
{
    struct call *k = (struct call *)data;
    k->rc = rc;
    k->done = true;
}

static int zk_create(zhandle_t *zh, const char *path, const char *value, int len, int mode,
                     char *out, size_t out_len)
{
    struct call k = {.out = out, .out_len = out_len};
    return await(zh, &k,
                 zoo_acreate(zh, path, value, len, &ZOO_OPEN_ACL_UNSAFE, mode, created, &k));
}

static int zk_children(zhandle_t *zh, const char *path)
{
    struct call k = {0};
    return await(zh, &k, zoo_aget_children(zh, path, 0, listed, &k));
}

static int zk_delete(zhandle_t *zh, const char *path)
{
    struct call k = {0};
    return await(zh, &k, zoo_adelete(zh, path, -1, deleted, &k));
}

static int open_session(struct worker *w)
{
    w->zh = zookeeper_init(w->hosts, NULL, SESSION_MS, NULL, NULL, 0);
    if (w->zh == NULL) {
        snprintf(w->err, sizeof(w->err), "thread %d: zookeeper_init %s failed", w->id, w->hosts);
        return -1;
    }
    double deadline = now_s() + CONNECT_MS / 1000.0;
    while (zoo_state(w->zh) != ZOO_CONNECTED_STATE && now_s() < deadline)
        if (turn(w->zh) < 0)
            break;
    if (zoo_state(w->zh) != ZOO_CONNECTED_STATE) {
        snprintf(w->err, sizeof(w->err), "thread %d: no session with %s", w->id, w->hosts);
        return -1;
    }
    return 0;
}

static int make_persistent(struct worker *w, const char *path)
{
    int rc = zk_create(w->zh, path, NULL, -1, ZOO_PERSISTENT, NULL, 0);
    return rc == ZOK || rc == ZNODEEXISTS ? 0 : fail(w, "create", path, rc);
}

static int prepare(struct worker *w)
{
    snprintf(w->parent, sizeof(w->parent), "%s/%ld-%d", root, (long)getpid(), w->id);
    if (open_session(w) < 0 || make_persistent(w, root) < 0)
        return -1;
    return make_persistent(w, w->parent);
}

static int cycle(struct worker *w, const char *prefix)
{
    char node[PATH_LEN];
    int rc = zk_create(w->zh, prefix, "owner", 5, ZOO_EPHEMERAL_SEQUENTIAL, node, sizeof(node));
    if (rc != ZOK)
        return fail(w, "create", prefix, rc);
    rc = zk_children(w->zh, w->parent);
    if (rc != ZOK)
        return fail(w, "get_children", w->parent, rc);
    rc = zk_delete(w->zh, node);
    return rc == ZOK ? 0 : fail(w, "delete", node, rc);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    int ok = prepare(w) == 0;
    /* Every session is up before the clock starts. */
    pthread_barrier_wait(&ready);
    char prefix[PATH_LEN + 8];
    snprintf(prefix, sizeof(prefix), "%s/n-", w->parent);
    while (ok && !atomic_load(&stop)) {
        ok = cycle(w, prefix) == 0;
        /* Only cycles that ended inside the measured time count. */
        if (ok && !atomic_load(&stop))
            w->cycles++;
    }
    if (w->zh && ok)
        zk_delete(w->zh, w->parent);
    if (w->zh)
        zookeeper_close(w->zh);
    if (!ok)
        atomic_store(&stop, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc == 4 ? atoi(argv[2]) : 0;
    double seconds = argc == 4 ? atof(argv[3]) : 0;
    if (threads < 1 || threads > MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: zk_raw_cycle HOST:PORT[,HOST:PORT...] THREADS(1-%d) SECONDS\n",
                MAX_THREADS);
        return 2;
    }
    /* The single-threaded library formats log lines into one static
     * buffer the threads would share: no logging at all. */
    zoo_set_debug_level((ZooLogLevel)0);
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    pthread_t *th = calloc((size_t)threads, sizeof(*th));
    if (w == NULL || th == NULL || pthread_barrier_init(&ready, NULL, (unsigned)threads + 1)) {
        fprintf(stderr, "zk_raw_cycle: out of memory\n");
        return 1;
    }
    int started = 0;
    for (; started < threads; started++) {
        w[started].hosts = argv[1];
        w[started].id = started;
        if (pthread_create(&th[started], NULL, run, &w[started]) != 0)
            break;
    }
    if (started < threads) {
        fprintf(stderr, "zk_raw_cycle: cannot start thread %d\n", started);
        return 1; /* the started ones wait at the barrier; exiting ends them */
    }
    pthread_barrier_wait(&ready);
    double t0 = now_s();
    while (!atomic_load(&stop) && now_s() - t0 < seconds)
        usleep(10000);
    atomic_store(&stop, 1);
    double elapsed = now_s() - t0;
    long cycles = 0;
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        cycles += w[i].cycles;
        if (w[i].err[0]) {
            fprintf(stderr, "zk_raw_cycle: %s\n", w[i].err);
            failed = 1;
        }
    }
    if (!failed)
        printf("cycles=%ld seconds=%.3f rate=%.1f\n", cycles, elapsed, (double)cycles / elapsed);
    free(w);
    free(th);
    pthread_barrier_destroy(&ready);
    return failed;
}
