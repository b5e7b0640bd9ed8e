/* check_speed.c - the checker's rate and memory on a synthetic history
 * of a long full-rate run, for bench/check_speed.sh.
 *
 *   check_speed stream|whole|today SECTIONS KEYS
 *
 * The history: rounds of 1 us; in each, every key is taken once: three
 * quarters of the keys by one exclusive holder, the rest by three readers
 * sharing it, and key 0, every 100th round, by a second exclusive holder
 * inside the first (a violation, so the listing has work). The witness's
 * steps are numbered per key in the order taken, as a run's own history
 * has them. The same seedless history every time.
 *
 * stream: the events made one at a time and fed to checker_event, never
 * kept. whole: all the events kept as a history, then history_sections and
 * checker_run, as `locklab check` does. today: the same with the checker
 * the bench script built from an earlier commit (TODAY_CHECKER). Each
 * prints its counts, so the modes can be compared, and its rate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/check/check_stream.h"
#include "sim/check/checker.h"
#include "sim/check/sections.h"
#include "sim/record/history.h"

#ifdef TODAY_CHECKER
int today_checker_run(struct section *sections, size_t n, const struct fault_span *faults,
                      size_t nf, uint64_t lookback_ns, size_t max_listed, bool writes_only,
                      struct check_result *out);
#endif

#define PERIOD_NS 1000
#define READERS   3

struct gen {
    uint64_t *seq; /* per key: the witness's next step */
    uint32_t keys;
    uint64_t sections, target;
    uint64_t round;
    struct history_event ev[2 * 64 * READERS + 4]; /* one round's, in time order */
    size_t n, at;
};

static bool shared_key(const struct gen *g, uint32_t k)
{
    return k >= g->keys - g->keys / 4;
}

static struct history_event event(uint64_t t, uint32_t client, uint32_t key, uint8_t type,
                                  uint8_t f, uint8_t mode)
{
    return (struct history_event){.t_ns = t,
                                  .client = client,
                                  .key = key,
                                  .owner = client,
                                  .type = type,
                                  .f = f,
                                  .mode = mode,
                                  .arg = f == HF_RELEASE ? EFFECT_APPLIED : 0};
}

/* One round's events: the entries of every key, then the exits, so time
 * grows; holders of a key in a round are numbered from 4 * key. */
static void make_round(struct gen *g)
{
    uint64_t t0 = 1000000 + g->round * PERIOD_NS;
    g->n = g->at = 0;
    for (int exit = 0; exit < 2; exit++)
        for (uint32_t k = 0; k < g->keys; k++) {
            bool sh = shared_key(g, k);
            bool intruder = k == 0 && g->round % 100 == 0;
            uint32_t holders = sh ? READERS : intruder ? 2 : 1;
            for (uint32_t j = 0; j < holders && (exit || g->sections < g->target); j++) {
                uint64_t t = t0 + (exit ? 500 : 0) + 4 * k + j;
                struct history_event e =
                    event(t, 4 * k + j + (uint32_t)(g->round % 2) * 4 * g->keys, k,
                          exit ? HT_INVOKE : HT_OK, exit ? HF_RELEASE : HF_ACQUIRE,
                          sh ? LOCK_MODE_SHARED : LOCK_MODE_EXCLUSIVE);
                if (!exit)
                    g->sections++;
                e.seq = g->seq[k]++;
                g->ev[g->n++] = e;
            }
        }
    /* the exits match the entries made: drop the ones of holders never entered */
    size_t entries = 0;
    for (size_t i = 0; i < g->n; i++)
        entries += g->ev[i].f == HF_ACQUIRE;
    if (2 * entries < g->n)
        g->n = 2 * entries;
    g->round++;
}

static const struct history_event *next_event(struct gen *g)
{
    if (g->at == g->n) {
        if (g->sections >= g->target)
            return NULL;
        make_round(g);
    }
    return &g->ev[g->at++];
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print(const char *mode, const struct check_result *r, double secs, uint64_t held)
{
    printf("%s: %" PRIu64 " sections, %" PRIu64 " overlaps, %" PRIu64 " violations, %" PRIu64
           " concurrent entries, %zu listed; %.2f s, %.0f sections/s",
           mode, r->sections, r->overlaps, r->violations, r->concurrent_entries, r->n_list, secs,
           secs > 0 ? (double)r->sections / secs : 0.0);
    if (held)
        printf(", at most %" PRIu64 " sections held", held);
    printf("\n");
}

int main(int argc, char **argv)
{
    if (argc != 4 ||
        (strcmp(argv[1], "stream") && strcmp(argv[1], "whole") && strcmp(argv[1], "today"))) {
        fprintf(stderr, "usage: check_speed stream|whole|today SECTIONS KEYS\n");
        return 2;
    }
    struct gen g = {.target = strtoull(argv[2], NULL, 10), .keys = (uint32_t)atoi(argv[3])};
    if (g.keys < 4 || g.keys > 64 || g.target == 0) {
        fprintf(stderr, "check_speed: KEYS in 4..64, SECTIONS > 0\n");
        return 2;
    }
    g.seq = calloc(g.keys, sizeof(*g.seq));
    if (g.seq == NULL)
        return 1;
    struct check_result r;
    const struct history_event *e;
    if (strcmp(argv[1], "stream") == 0) {
        double t0 = now_s();
        struct checker *c = checker_begin(0, 1000, false, &r);
        if (c == NULL)
            return 1;
        uint64_t end = 0;
        while ((e = next_event(&g)) != NULL) {
            if (checker_event(c, e) != 0)
                return 1;
            end = e->t_ns;
        }
        uint64_t held = checker_held_peak(c);
        if (checker_end(c, end + 1, NULL, NULL) < 0)
            return 1;
        print("stream", &r, now_s() - t0, held);
        checker_result_free(&r);
        free(g.seq);
        return 0;
    }
    /* whole: the history kept, as a run's or a read file's */
    size_t cap = 1 << 20, n = 0;
    struct history h = {0};
    h.ev = malloc(cap * sizeof(*h.ev));
    if (h.ev == NULL)
        return 1;
    while ((e = next_event(&g)) != NULL) {
        if (n == cap) {
            struct history_event *p = realloc(h.ev, 2 * cap * sizeof(*p));
            if (p == NULL) {
                free(h.ev);
                return 1;
            }
            h.ev = p;
            cap *= 2;
        }
        h.ev[n++] = *e;
    }
    h.n = n;
    h.end_mono_ns = h.ev[n - 1].t_ns + 1;
    double t0 = now_s();
    struct section *s;
    struct fault_span *f;
    size_t ns, nf;
    if (history_sections(&h, &s, &ns, &f, &nf) < 0)
        return 1;
#ifdef TODAY_CHECKER
    bool today = strcmp(argv[1], "today") == 0;
    int rc = today ? today_checker_run(s, ns, f, nf, 0, 1000, false, &r)
                   : checker_run(s, ns, f, nf, 0, 1000, false, &r);
#else
    if (strcmp(argv[1], "today") == 0) {
        fprintf(stderr,
                "check_speed: built without TODAY_CHECKER (bench/check_speed.sh builds it)\n");
        return 2;
    }
    int rc = checker_run(s, ns, f, nf, 0, 1000, false, &r);
#endif
    if (rc < 0)
        return 1;
    print(argv[1], &r, now_s() - t0, 0);
    checker_result_free(&r);
    free(s);
    free(f);
    free(h.ev);
    free(g.seq);
    return 0;
}
