/* scenario_env.h - what the scenario unit tests (tests/unit/test_scenario_*.c)
 * share: a temporary folder per group, inline JSON written into it with '
 * standing for ", and the loader's answer compared with the folder
 * stripped from its message. The group's state is a struct env. */
#ifndef LOCKLAB_TEST_SCENARIO_ENV_H
#define LOCKLAB_TEST_SCENARIO_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "algorithms/etcd.h"
#include "algorithms/redis.h"
#include "algorithms/redisson.h"
#include "algorithms/redlock.h"
#include "algorithms/zookeeper_settings.h"
#include "sim/scenario/scenario.h"
#include "sim/workloads/workload.h"

/* A lock family's settings in the scenario at sp, as its struct. */
#define SETTINGS_OF(sp, fam, type) ((const struct type *)scenario_settings((sp), &fam##_family))

/* The workload key of a case that is about something else. */
#define WL "'workload': {'type': 'flash_sale'}"

struct env {
    char dir[256]; /* this run's temporary folder */
    char src[1024];
};

/* cmocka's group setup and teardown: a fresh folder under TMPDIR (or
 * /tmp) and the source folder from LOCKLAB_SOURCE_DIR (or "."); the
 * teardown removes the folder (tests/lib/scratch.h). */
int group_setup(void **state);
int group_teardown(void **state);

/* Write json to name in the test folder; with quotes, ' becomes ". */
void write_json(const struct env *e, const char *name, const char *json, bool quotes, char *path,
                size_t len);

/* Strip the temporary folder or the source folder from a message. */
void relative(const struct env *e, char *err);

/* json (' for ") loads whole, every check passed, into s. */
void load_ok(void **state, const char *json, struct scenario *s);

struct bad_case {
    const char *json; /* ' for " */
    const char *err;
};

/* Each case is refused with exactly its message: with finish by the
 * checks of the whole (scenario_load), else as read (scenario_read). */
void check_bad(void **state, const struct bad_case *cases, size_t n, bool finish);

#define CHECK_LOAD(cases)   check_bad(state, cases, sizeof(cases) / sizeof(cases[0]), false)
#define CHECK_FINISH(cases) check_bad(state, cases, sizeof(cases) / sizeof(cases[0]), true)

/* Every name of a registry as the loader's "(known: ...)" lists them,
 * "redis, redis-naive, ...", read from the registry itself, so that no
 * test types a list of kinds: the locks, the workloads, the fault kinds,
 * the server kinds a scenario's "servers" names (all but the internal). */
enum known_kind { KNOWN_ALGORITHMS, KNOWN_WORKLOADS, KNOWN_FAULTS, KNOWN_SERVERS };
const char *known_names(enum known_kind kind);
/* A message built as printf does, in a buffer of the test's (for a case
 * whose message holds known_names): buf. */
__attribute__((format(printf, 3, 4))) const char *message(char *buf, size_t len, const char *fmt,
                                                          ...);

/* The value of key of s's workload, read through its table (the struct is
 * the workload file's own): an integer or a bool; a number; a choice's
 * name. The test fails when the workload has no such key. */
long long wl_int(const struct scenario *s, const char *key);
double wl_number(const struct scenario *s, const char *key);
const char *wl_choice(const struct scenario *s, const char *key);

/* The path of tests/fixtures/name in the source folder. */
void fixture_path(void **state, const char *name, char *path, size_t len);

#endif
