/* sweep_gen.c - one random scenario shape per seed, for the no-false-alarm
 * sweep (scripts/sweep.sh, tests/runs/test_sweep.c).
 *
 *   sweep_gen SEED [--duration S]
 *
 * prints a scenario JSON on stdout, chosen from SEED alone (splitmix64, no
 * rand()), so `sweep_gen SEED` replays a shape exactly. Every value lies in
 * the valid range docs/scenario.md gives: a shape the validator refuses is a
 * bug here, never something to skip. What a shape never sets, on purpose:
 * the algorithm (the command line picks it), ttl_ms (default), watchdog,
 * fencing, faults, expect (so the run expects safety: 0 violations and the
 * invariants hold) and scheduled_tasks' hold_min_ms (its default). Any
 * FAIL of a correct lock on such a shape is a false alarm.
 *
 * Sizes are drawn log-uniformly (small and large both appear), with the
 * edges (1 client, 200 clients, 0 ms, the period's bound) drawn on purpose.
 * A quarter of the seeds give order_ids (gives_order_ids), and of the
 * rest an eighth each read_mostly and pool (mode_workload); a pool shape
 * sets lock.permits, the pool's connections (a lock that is no semaphore
 * refuses it: the sweep runs it with redisson-semaphore). An eighth of the
 * seeds left give a latch (gives_latch), which sets the run's clients
 * from its parties and waiters; only a latch runs it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLIENTS     200
#define MAX_KEYS        5000
#define MAX_TASKS       1000 /* the scenario's own bound */
#define DEFAULT_WAIT    5000 /* lock.wait_ms's default */
#define MIN_PERIOD_MS   10
#define DESCRIPTION_MAX 255
/* "latch_" then 0x0002: the first (counting up) that spares test_sweep's seeds */
#define LATCH_SALT 0x6c617463685f0002ULL

static uint64_t state;

/* splitmix64: one 64-bit draw per call, a full period over any seed. */
static uint64_t next64(void)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in lo..hi inclusive (hi >= lo). */
static uint64_t uniform(uint64_t lo, uint64_t hi)
{
    if (lo == 0 && hi == UINT64_MAX) /* the whole 64-bit range: span would wrap */
        return next64();
    uint64_t span = hi - lo + 1;
    /* rejection keeps it exactly uniform */
    uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do
        x = next64();
    while (x >= limit);
    return lo + x % span;
}

/* True with probability pct/100. */
static int chance(unsigned pct)
{
    return uniform(0, 99) < pct;
}

static unsigned bits(uint64_t v)
{
    unsigned b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

/* Log-uniform in lo..hi inclusive: a bit length first, then a value of
 * that length, so 1..9 is as likely as 1000..9999. */
static uint64_t log_uniform(uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return lo;
    unsigned b = (unsigned)uniform(bits(lo), bits(hi));
    uint64_t from = b ? 1ULL << (b - 1) : 0, to = b ? (1ULL << (b - 1)) * 2 - 1 : 0;
    if (from < lo)
        from = lo;
    if (to > hi)
        to = hi;
    return uniform(from, to);
}

/* A time inside a step (critical, load, read, run): mostly small,
 * sometimes 0, now and then tens of ms. */
static uint64_t small_ms(void)
{
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 20)
        return 0;
    if (r < 80)
        return uniform(1, 5);
    return log_uniform(6, 60);
}

static uint64_t pick_clients(void)
{
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 5)
        return 1;
    if (r < 15)
        return MAX_CLIENTS;
    return log_uniform(1, MAX_CLIENTS);
}

/* keys / items: the edges on purpose, else log-uniform */
static uint64_t pick_count(void)
{
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 5)
        return 1;
    if (r < 15)
        return MAX_KEYS;
    return log_uniform(1, MAX_KEYS);
}

/* lock.wait_ms: 0 (tryLock) to the default; -1 leaves the key out. */
static int64_t pick_wait(void)
{
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 15)
        return 0;
    if (r < 35)
        return -1;
    return (int64_t)log_uniform(1, DEFAULT_WAIT);
}

static char desc[DESCRIPTION_MAX + 1];
static size_t desc_len;

/* Appends to the one-line description; the caller keeps it short. */
static void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(desc + desc_len, sizeof(desc) - desc_len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(desc) - desc_len) {
        fprintf(stderr, "sweep_gen: description longer than %d bytes\n", DESCRIPTION_MAX);
        exit(1);
    }
    desc_len += (size_t)n;
}

/* The workload object's members, as JSON text, and its description. */
static char workload[1024];
static size_t workload_len;

static void member(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(workload + workload_len, sizeof(workload) - workload_len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(workload) - workload_len) {
        fprintf(stderr, "sweep_gen: workload too long\n");
        exit(1);
    }
    workload_len += (size_t)n;
}

static void flash_sale(void)
{
    static const char *const skews[] = {"uniform", "hot", "per_client"};
    uint64_t items = pick_count();
    uint64_t stock;
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 10)
        stock = 0; /* sold out before the first buyer */
    else if (r < 40)
        stock = log_uniform(1, 50); /* sells out within the run */
    else
        stock = log_uniform(1000, 1000000000); /* never sells out */
    uint64_t critical = small_ms();
    r = (unsigned)uniform(0, 99);
    const char *skew = skews[r < 40 ? 0 : r < 70 ? 1 : 2];
    member("\"type\": \"flash_sale\", \"items\": %" PRIu64 ", \"stock\": %" PRIu64
           ", \"critical_ms\": %" PRIu64 ", \"skew\": \"%s\"",
           items, stock, critical, skew);
    describe("flash_sale items=%" PRIu64 " stock=%" PRIu64 " critical_ms=%" PRIu64 " skew=%s",
             items, stock, critical, skew);
    if (strcmp(skew, "hot") == 0) {
        uint64_t hot_items = chance(30) ? 1 : log_uniform(1, items);
        /* (0, 1]: thousandths, 1 itself now and then */
        uint64_t permille = chance(15) ? 1000 : uniform(1, 1000);
        member(", \"hot_items\": %" PRIu64 ", \"hot_fraction\": %" PRIu64 ".%03" PRIu64, hot_items,
               permille / 1000, permille % 1000);
        describe(" hot_items=%" PRIu64 " hot_fraction=%" PRIu64 ".%03" PRIu64, hot_items,
                 permille / 1000, permille % 1000);
    }
}

static void cache_rebuild(void)
{
    uint64_t keys = pick_count();
    uint64_t period = chance(15) ? MIN_PERIOD_MS : log_uniform(MIN_PERIOD_MS, 2000);
    uint64_t load = small_ms(), read = small_ms();
    member("\"type\": \"cache_rebuild\", \"keys\": %" PRIu64 ", \"period_ms\": %" PRIu64
           ", \"load_ms\": %" PRIu64 ", \"read_ms\": %" PRIu64,
           keys, period, load, read);
    describe("cache_rebuild keys=%" PRIu64 " period_ms=%" PRIu64 " load_ms=%" PRIu64
             " read_ms=%" PRIu64,
             keys, period, load, read);
}

static void scheduled_tasks(uint64_t duration_ms)
{
    /* the run must last at least two periods */
    uint64_t max_period = duration_ms / 2;
    uint64_t period = chance(10) ? MIN_PERIOD_MS : log_uniform(MIN_PERIOD_MS, max_period);
    /* at most period_ms tasks, so each has a slot of at least 1 ms */
    uint64_t max_tasks = period < MAX_TASKS ? period : MAX_TASKS;
    uint64_t tasks = chance(10) ? max_tasks : log_uniform(1, max_tasks);
    uint64_t slot = period / tasks;
    /* run_ms < period_ms / tasks */
    uint64_t run = chance(10) ? slot - 1 : small_ms();
    if (run >= slot)
        run = slot - 1;
    uint64_t jitter;
    unsigned r = (unsigned)uniform(0, 99);
    if (r < 20)
        jitter = 0;
    else if (r < 85)
        jitter = log_uniform(1, 400);
    else
        jitter = uniform(period + 1, 2 * period + 100); /* later than a whole period */
    member("\"type\": \"scheduled_tasks\", \"tasks\": %" PRIu64 ", \"period_ms\": %" PRIu64
           ", \"run_ms\": %" PRIu64 ", \"jitter_ms\": %" PRIu64,
           tasks, period, run, jitter);
    describe("scheduled_tasks tasks=%" PRIu64 " period_ms=%" PRIu64 " run_ms=%" PRIu64
             " jitter_ms=%" PRIu64,
             tasks, period, run, jitter);
}

static void order_ids(void)
{
    uint64_t sequences = chance(30) ? 1 : log_uniform(1, 1000);
    uint64_t critical = small_ms();
    member("\"type\": \"order_ids\", \"sequences\": %" PRIu64 ", \"critical_ms\": %" PRIu64,
           sequences, critical);
    describe("order_ids sequences=%" PRIu64 " critical_ms=%" PRIu64, sequences, critical);
}

/* Both halves of an entry are written with critical_ms between them, and
 * a write now and then up to every step. */
static void read_mostly(void)
{
    uint64_t keys = pick_count();
    uint64_t critical = small_ms();
    uint64_t permille = chance(15) ? 1000 : log_uniform(1, 1000);
    member("\"type\": \"read_mostly\", \"keys\": %" PRIu64 ", \"critical_ms\": %" PRIu64
           ", \"write_fraction\": %" PRIu64 ".%03" PRIu64,
           keys, critical, permille / 1000, permille % 1000);
    describe("read_mostly keys=%" PRIu64 " critical_ms=%" PRIu64 " write_fraction=%" PRIu64
             ".%03" PRIu64,
             keys, critical, permille / 1000, permille % 1000);
}

static uint64_t permits; /* lock.permits of a pool shape; 0: left out */

static void pool(void)
{
    uint64_t pools = chance(40) ? 1 : log_uniform(1, 1000);
    uint64_t critical = small_ms();
    permits = chance(10) ? 1 : log_uniform(1, 64);
    member("\"type\": \"pool\", \"pools\": %" PRIu64 ", \"critical_ms\": %" PRIu64, pools,
           critical);
    describe("pool pools=%" PRIu64 " critical_ms=%" PRIu64 " permits=%" PRIu64, pools, critical,
             permits);
}

/* A latch round's parties and waiters are the run's clients, all of them
 * (latches x (parties + waiters): the workload refuses any other count),
 * so the shape sets clients itself. Its bound is 2 s: a correct latch's
 * waiter passes in milliseconds once the count is zero, and the bound is
 * counted from when it could pass (resumed, its await begun), so only a
 * host stall longer than that could break it, and the run's host line
 * would say so. */
static void latch(uint64_t *clients)
{
    uint64_t latches = uniform(1, 3), parties = uniform(1, 5), waiters = uniform(1, 6);
    uint64_t work = small_ms();
    *clients = latches * (parties + waiters);
    member("\"type\": \"latch\", \"latches\": %" PRIu64 ", \"parties\": %" PRIu64
           ", \"waiters\": %" PRIu64 ", \"work_ms\": %" PRIu64 ", \"bound_ms\": 2000",
           latches, parties, waiters, work);
    describe("latch latches=%" PRIu64 " parties=%" PRIu64 " waiters=%" PRIu64 " work_ms=%" PRIu64,
             latches, parties, waiters, work);
}

/* An eighth of the seeds left to flash_sale, cache_rebuild and
 * scheduled_tasks give a latch instead, by a salted hash of the seed as
 * mode_workload chooses: every other seed keeps its shape, and the salt
 * leaves every seed tests/runs/test_sweep.c pins with its own. */
static bool gives_latch(uint64_t seed)
{
    uint64_t saved = state;
    state = seed ^ LATCH_SALT;
    bool yes = next64() % 8 == 0;
    state = saved;
    return yes;
}

/* The workloads of lock modes, for an eighth of the seeds each that do not
 * give order_ids, by a hash of the seed apart from the draws as
 * gives_order_ids does: 0 none, 1 read_mostly, 2 pool. The salt
 * ("modes_wl") leaves every seed tests/runs/test_sweep.c pinned before
 * them with its shape. */
static int mode_workload(uint64_t seed)
{
    uint64_t saved = state;
    state = seed ^ 0x6d6f6465735f776cULL;
    uint64_t r = next64() % 8;
    state = saved;
    return r == 0 ? 1 : r == 1 ? 2 : 0;
}

/* A quarter of the seeds give order_ids, chosen by a hash of the seed
 * apart from the draws, so every other seed keeps the shape it gave
 * before order_ids existed. The salt is the first one (counting up from
 * "order_id") that leaves every seed tests/runs/test_sweep.c pins for the
 * other workloads with its shape. */
static bool gives_order_ids(uint64_t seed)
{
    uint64_t saved = state;
    state = seed ^ 0x6f726465725f6989ULL;
    bool yes = next64() % 4 == 0;
    state = saved;
    return yes;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: sweep_gen SEED [--duration S]   (SEED 0..%" PRId64
            ", S 0.02..86400, default 2)\n",
            INT64_MAX);
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t seed = 0, duration_ms = 2000;
    int have_seed = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
            double s = strtod(argv[++i], &end);
            /* at least two of the shortest period, for scheduled_tasks */
            if (*end || end == argv[i] || !(s >= 0.02 && s <= 86400))
                return usage();
            duration_ms = (uint64_t)(s * 1000 + 0.5);
        } else if (!have_seed && argv[i][0] >= '0' && argv[i][0] <= '9') {
            unsigned long long v = strtoull(argv[i], &end, 10);
            /* the scenario's seed is read as a JSON integer: at most INT64_MAX */
            if (*end || v > (unsigned long long)INT64_MAX)
                return usage();
            seed = v;
            have_seed = 1;
        } else {
            return usage();
        }
    }
    if (!have_seed)
        return usage();
    state = seed;

    uint64_t clients = pick_clients();
    int64_t wait = pick_wait();
    unsigned kind = (unsigned)uniform(0, 2);
    if (gives_order_ids(seed))
        order_ids();
    else if (mode_workload(seed) == 1)
        read_mostly();
    else if (mode_workload(seed) == 2)
        pool();
    else if (gives_latch(seed))
        latch(&clients);
    else if (kind == 0)
        flash_sale();
    else if (kind == 1)
        cache_rebuild();
    else
        scheduled_tasks(duration_ms);
    describe(" clients=%" PRIu64, clients);
    if (wait >= 0)
        describe(" wait_ms=%" PRId64, wait);
    describe(" duration_s=%" PRIu64 ".%03" PRIu64, duration_ms / 1000, duration_ms % 1000);

    printf("{\n");
    printf("    \"name\": \"sweep_%" PRIu64 "\",\n", seed);
    printf("    \"description\": \"%s\",\n", desc); /* only [a-z0-9_=. ]: nothing to escape */
    printf("    \"clients\": %" PRIu64 ",\n", clients);
    printf("    \"duration_s\": %" PRIu64 ".%03" PRIu64 ",\n", duration_ms / 1000,
           duration_ms % 1000);
    printf("    \"seed\": %" PRIu64 ",\n", seed);
    if (wait >= 0 && permits)
        printf("    \"lock\": {\"wait_ms\": %" PRId64 ", \"permits\": %" PRIu64 "},\n", wait,
               permits);
    else if (wait >= 0)
        printf("    \"lock\": {\"wait_ms\": %" PRId64 "},\n", wait);
    else if (permits)
        printf("    \"lock\": {\"permits\": %" PRIu64 "},\n", permits);
    printf("    \"workload\": {%s}\n", workload);
    printf("}\n");
    return fflush(stdout) == 0 ? 0 : 1;
}
