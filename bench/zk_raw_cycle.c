/* zk_raw_cycle.c - the peer for bench/zookeeper_cycle.sh: the raw rate of
 * the ZooKeeper C client (libzookeeper_mt) doing the three requests an
 * uncontended lock cycle of the recipe needs, create(EPHEMERAL|SEQUENCE),
 * get_children of the parent, delete, and nothing else: no queue logic, no
 * histogram, no history. Each thread has its own session and its own
 * parent node, as each locklab client has its own key there.
 *
 *   zk_raw_cycle HOST:PORT[,HOST:PORT...] THREADS SECONDS
 * prints one line: cycles=N seconds=S rate=R (cycles per second, all threads)
 */
#include <pthread.h>
#include <stdatomic.h>
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

static int open_session(struct worker *w)
{
    w->zh = zookeeper_init(w->hosts, NULL, SESSION_MS, NULL, NULL, 0);
    if (w->zh == NULL) {
        snprintf(w->err, sizeof(w->err), "thread %d: zookeeper_init %s failed", w->id, w->hosts);
        return -1;
    }
    double deadline = now_s() + CONNECT_MS / 1000.0;
    while (zoo_state(w->zh) != ZOO_CONNECTED_STATE && now_s() < deadline)
        usleep(5000);
    if (zoo_state(w->zh) != ZOO_CONNECTED_STATE) {
        snprintf(w->err, sizeof(w->err), "thread %d: no session with %s", w->id, w->hosts);
        return -1;
    }
    return 0;
}

static int make_persistent(struct worker *w, const char *path)
{
    int rc = zoo_create(w->zh, path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
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
    int rc = zoo_create(w->zh, prefix, "owner", 5, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL_SEQUENTIAL,
                        node, sizeof(node));
    if (rc != ZOK)
        return fail(w, "create", prefix, rc);
    struct String_vector kids;
    rc = zoo_get_children(w->zh, w->parent, 0, &kids);
    if (rc != ZOK)
        return fail(w, "get_children", w->parent, rc);
    deallocate_String_vector(&kids);
    rc = zoo_delete(w->zh, node, -1);
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
        zoo_delete(w->zh, w->parent, -1);
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
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull)
        zoo_set_log_stream(devnull);
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
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
    if (devnull)
        fclose(devnull);
    return failed;
}
