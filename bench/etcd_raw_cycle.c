/* etcd_raw_cycle.c - the peer for bench/etcd_cycle.sh: the raw rate of a
 * bare libcurl client on etcd's JSON gateway doing what an uncontended
 * cycle of concurrency.Mutex needs, and nothing else: one lease per thread
 * (granted before the clock starts), then per cycle the txn that puts
 * <prefix>/<lease hex> on it and reads the prefix's first key, and the
 * delete. No queue logic, no histogram, no history; libcurl's easy
 * interface, one kept-alive connection per thread. Each thread has its own
 * prefix, as each locklab client has its own key there.
 *
 *   etcd_raw_cycle HOST:PORT THREADS SECONDS
 * prints one line: cycles=N seconds=S rate=R (cycles per second, all threads)
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 1024
#define REPLY_MAX   4096
#define LEASE_S     10

struct worker {
    const char *ep;
    int id;
    CURL *h;
    char reply[REPLY_MAX];
    size_t len;
    long cycles;
    char err[200];
};

static pthread_barrier_t ready;
static atomic_int stop;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t take(char *data, size_t size, size_t n, void *arg)
{
    struct worker *w = arg;
    size_t len = size * n, room = REPLY_MAX - 1 - w->len;
    memcpy(w->reply + w->len, data, len < room ? len : room);
    w->len += len < room ? len : room;
    w->reply[w->len] = '\0';
    return size * n;
}

/* POST body to path; 0 on HTTP 200, with the answer in w->reply. */
static int post(struct worker *w, const char *path, const char *body)
{
    char url[160];
    snprintf(url, sizeof(url), "http://%s%s", w->ep, path);
    w->len = 0;
    curl_easy_setopt(w->h, CURLOPT_URL, url);
    curl_easy_setopt(w->h, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(w->h);
    long code = 0;
    curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &code);
    if (rc == CURLE_OK && code == 200)
        return 0;
    snprintf(w->err, sizeof(w->err), "thread %d: %s: %s (HTTP %ld) %.80s", w->id, path,
             curl_easy_strerror(rc), code, w->reply);
    return -1;
}

static void b64(const char *in, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = strlen(in), o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < len)
            v |= (unsigned char)in[i + 2];
        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        out[o++] = i + 1 < len ? t[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? t[v & 63] : '=';
    }
    out[o] = '\0';
}

static void *run(void *arg)
{
    struct worker *w = arg;
    char body[1024], key[96], pfx[64], end[64], k64[160], p64[96], e64[96];
    w->h = curl_easy_init();
    int ok = w->h != NULL;
    if (ok) {
        curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(w->h, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, take);
        curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
        snprintf(body, sizeof(body), "{\"TTL\":%d}", LEASE_S);
        ok = post(w, "/v3/lease/grant", body) == 0;
    }
    const char *id = ok ? strstr(w->reply, "\"ID\":\"") : NULL;
    int64_t lease = id ? strtoll(id + 6, NULL, 10) : 0;
    ok = ok && lease != 0;
    snprintf(pfx, sizeof(pfx), "raw:%ld:%d/", (long)getpid(), w->id);
    snprintf(end, sizeof(end), "raw:%ld:%d0", (long)getpid(), w->id); /* '/' + 1 */
    snprintf(key, sizeof(key), "%s%" PRIx64, pfx, (uint64_t)lease);
    b64(key, k64);
    b64(pfx, p64);
    b64(end, e64);
    pthread_barrier_wait(&ready);
    while (ok && !atomic_load(&stop)) {
        snprintf(body, sizeof(body),
                 "{\"compare\":[{\"target\":\"CREATE\",\"key\":\"%s\",\"create_revision\":\"0\"}],"
                 "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"\",\"lease\":\"%" PRId64
                 "\"}},{\"request_range\":{\"key\":\"%s\",\"range_end\":\"%s\",\"sort_target\":"
                 "\"CREATE\",\"sort_order\":\"ASCEND\",\"limit\":\"1\"}}],"
                 "\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}",
                 k64, k64, lease, p64, e64, k64);
        ok = post(w, "/v3/kv/txn", body) == 0;
        snprintf(body, sizeof(body), "{\"key\":\"%s\"}", k64);
        ok = ok && post(w, "/v3/kv/deleterange", body) == 0;
        if (ok && !atomic_load(&stop)) /* only cycles that ended inside the measured time */
            w->cycles++;
    }
    if (w->h)
        curl_easy_cleanup(w->h);
    if (!ok)
        atomic_store(&stop, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc == 4 ? atoi(argv[2]) : 0;
    double seconds = argc == 4 ? atof(argv[3]) : 0;
    if (threads < 1 || threads > MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: etcd_raw_cycle HOST:PORT THREADS(1-%d) SECONDS\n", MAX_THREADS);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    pthread_t *th = calloc((size_t)threads, sizeof(*th));
    if (w == NULL || th == NULL || pthread_barrier_init(&ready, NULL, (unsigned)threads + 1)) {
        fprintf(stderr, "etcd_raw_cycle: out of memory\n");
        return 1;
    }
    int started = 0;
    for (; started < threads; started++) {
        w[started].ep = argv[1];
        w[started].id = started;
        if (pthread_create(&th[started], NULL, run, &w[started]) != 0)
            break;
    }
    if (started < threads) {
        fprintf(stderr, "etcd_raw_cycle: cannot start thread %d\n", started);
        return 1;
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
            fprintf(stderr, "etcd_raw_cycle: %s\n", w[i].err);
            failed = 1;
        }
    }
    if (!failed)
        printf("cycles=%ld seconds=%.3f rate=%.1f\n", cycles, elapsed, (double)cycles / elapsed);
    free(w);
    free(th);
    pthread_barrier_destroy(&ready);
    curl_global_cleanup();
    return failed;
}
