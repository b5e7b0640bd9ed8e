/* harness.h - what the whole-run tests share: run the locklab binary with a
 * time limit (a hang is a failure, not a stuck CI), capture what it wrote,
 * read its report.json. LOCKLAB_BIN and LOCKLAB_SOURCE_DIR come from ctest.
 * Each test's scratch folder is removed by its group teardown;
 * LOCKLAB_KEEP_TMP=1 keeps it (see harness_teardown). */
#ifndef LOCKLAB_TEST_HARNESS_H
#define LOCKLAB_TEST_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

extern const char *bin, *src; /* the binary under test, the source tree */
extern char tmp[256];         /* this test's scratch folder */
extern int run_no;

struct outcome {
    int status; /* exit code; 128+N for a signal */
    char dir[512];
    char err[4096]; /* what it wrote on stderr */
    char out[16384];
};

void slurp(const char *path, char *buf, size_t len);
void sleep_ms(long ms);
/* Start argv with stdout/stderr into files; with mark, every redis-server
 * it starts leaves its PID there (tests/lib/redis-marker.sh). */
pid_t spawn(char *const argv[], const char *out, const char *err, const char *mark);
/* Its exit code (128+N for a signal); kills it and fails after timeout_s. */
int reap(pid_t pid, int timeout_s);
/* locklab A1 A2 EXTRA... (run and compare get --out <fresh dir>). */
void run(struct outcome *o, const char *mark, const char *a1, const char *a2,
         const char *const *extra);
void scenario_path(char *buf, size_t len, const char *name);
json_t *report(const struct outcome *o);
json_int_t jint(json_t *root, const char *obj, const char *key);
int jbool(json_t *root, const char *obj, const char *key);
int invariant_holds(json_t *root, const char *name);
const char *invariant_detail(json_t *root, const char *name); /* owned by root */
void assert_files(const struct outcome *o);
/* `locklab check` of the written history must find the same violations
 * and fenced pairs. */
void assert_check_agrees(const struct outcome *o, json_int_t violations, json_int_t fenced_pairs);
/* `check` of dir's history.llh and history.jsonl, in one pass, prints
 * byte for byte what `check --in-memory` (the whole history loaded, as
 * `run` checks it) prints, with the same exit code. */
void assert_check_streams_as_whole(const char *dir);
/* `locklab run scenarios/NAME EXTRA...`: the exit code, the files, a
 * complete run, witness == checker == locklab check. */
json_t *run_scenario(struct outcome *o, const char *name, int want_status,
                     const char *const *extra);
/* pid is a running process: not gone, not a zombie (nothing here reaps
 * an orphan soon, and a zombie serves nobody). */
int pid_runs(pid_t pid);
/* report.json's faults[i] (owned by r). */
json_t *report_fault(json_t *r, size_t i);
/* `locklab run scenarios/SCENARIO --quiet --out tmp/NAME` in the
 * background, every redis-server it starts marked in *mark (a path in
 * tmp); after_ms later, its pid. */
pid_t start_marked_run(const char *scenario, const char *name, long after_ms, char *mark,
                       size_t len);
/* The first redis-server pid a marked run left in mark. */
pid_t marked_server(const char *mark);
/* Wait up to 5 s for pid to be gone (a SIGKILLed locklab's servers die by
 * PR_SET_PDEATHSIG, a moment later). Gone or a zombie: an orphan's zombie
 * waits for whoever reaps orphans here, and it runs nothing. */
void assert_gone(pid_t pid);
/* A managed fleet shared by many runs (cluster up --dir DIR): 5
 * redis-servers and a standalone ZooKeeper; their --redis and --zookeeper
 * lists. 0, or -1 with the fleet down again. */
int cluster_up(const char *dir, char *redis, size_t redis_len, char *zookeeper, size_t zk_len);
void cluster_down(const char *dir);
/* cmocka group setup: reads the environment, makes tmp
 * ($TMPDIR/locklab-runs-XXXXXX, /tmp without TMPDIR). */
int harness_setup(void **state);
/* cmocka group teardown (or the end of one that first brings a cluster
 * down: nothing may still run or write in tmp): removes tmp and all in it,
 * without following symbolic links, and only the folder harness_setup
 * made. LOCKLAB_KEEP_TMP=1 in the environment keeps it for a look and
 * prints where it is, e.g.
 *   LOCKLAB_KEEP_TMP=1 ctest -R test_runs --output-on-failure */
int harness_teardown(void **state);

#endif
