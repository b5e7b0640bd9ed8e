/* suite.h - a scorecard's fault suite (scenarios/scorecard/NAME.json): one
 * business scenario, one lease for every lock, and fault classes as data,
 * each a list of fault templates whose targets are roles and whose times
 * are multiples of the lease. docs/scorecard.md describes the format.
 *
 * suite_load validates the file whole, errors located as a scenario's
 * are ("quick.json:12:18: classes[2].faults[0].at_leases: expected a
 * number >= 0"); suite_cell turns one class into the scenario a cell
 * runs, which scenario_load then validates as any other.
 */
#ifndef LOCKLAB_SUITE_H
#define LOCKLAB_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sim/scenario/scenario.h"

#define SUITE_MAX_CLASSES 16
#define SUITE_MAX_ROWS    40
#define SUITE_MAX_KNOWN   8
#define SUITE_MAX_SEEDS   10

/* A published result a class reproduces for one lock: shown beside the
 * cell, and a cell that disagrees with it is said to. */
struct suite_known {
    char row[64];     /* "algorithm[@tag][+fencing]" it is for */
    char result[96];  /* the known-results row (scenarios/matrix) */
    char source[160]; /* whose finding: "Kleppmann 2016" */
    bool unsafe;      /* the published result: violations */
};

struct suite_class {
    char name[40];        /* "holder_paused_past_lease": its folder and JSON key */
    char title[64];       /* "holder paused past its lease" */
    char short_[16];      /* the terminal's column head */
    char strikes[64];     /* the role it strikes, in words */
    char size[96];        /* its size in leases, in words */
    char layout[32];      /* "default", or a name of the suite's layouts */
    uint64_t duration_ms; /* 0: the suite's run length */
    /* The critical section of a lock that renews its grants (a watchdog,
     * a kept-alive lease), in leases, so that the holder is still inside
     * when a slow blow lands (a failover takes longer than a lease); 0:
     * the scenario's. A lock that does not renew keeps the scenario's: a
     * section longer than its lease would be unsafe by itself. */
    double hold_renewed_leases;
    json_t *run;    /* merged after the suite's run (the class's shape); NULL: none (owned) */
    json_t *faults; /* the templates (an array, owned) */
    struct suite_known known[SUITE_MAX_KNOWN];
    size_t n_known;
};

struct suite {
    char path[512];
    char name[64];
    char description[256];
    char scenario[512];            /* the business scenario's file */
    uint32_t ttl_ms;               /* the lease asked of every lock */
    uint32_t seeds;                /* each cell in this many seeds */
    json_t *run;                   /* merged into the scenario of every cell (object, owned) */
    json_t *layouts;               /* name -> {server kind -> its lock.<kind> settings} (owned) */
    char rows[SUITE_MAX_ROWS][64]; /* "redis", "redis+fencing", "etcd@3.4"; none: every lock */
    size_t n_rows;
    struct suite_class classes[SUITE_MAX_CLASSES];
    size_t n_classes;
};

/* A fault template's time keys in leases and the scenario's keys they
 * become: {"at_leases", "at_ms"}, ... (suite_cell.c). */
#define SUITE_LEASE_KEYS 4
extern const char *const suite_lease_keys[SUITE_LEASE_KEYS][2];

/* The folder a suite's bare name is looked up in: scenarios/scorecard
 * from the source tree, else the one this build ships. */
const char *suite_folder(void);
#define SUITE_DEFAULT "quick" /* scorecard's suite when none is named */
/* A suite by name ("quick": scenarios/scorecard/quick.json) or path, into
 * s (zeroed). 0, or -1 with err one located line; nothing kept. */
int suite_load(const char *name_or_path, struct suite *s, char err[SCENARIO_ERR_MAX]);
void suite_free(struct suite *s); /* accepts a zeroed or half-loaded one */

/* What one row of the scorecard runs: a lock, one of its library's
 * default modes (NULL: as the scenario says), fencing on or off. */
struct suite_lock {
    const struct lock_ops *ops;
    const struct lock_default *mode; /* NULL: none */
    bool fencing;
};

/* "etcd@3.4+fencing" into *out; 0, or -1 with why. A name without @tag
 * means its first default mode when it has some. */
int suite_lock_parse(const char *spec, struct suite_lock *out, char *why, size_t len);
/* The row's name back ("etcd@3.4+fencing") and its folder ("etcd-3.4-fenced"). */
const char *suite_lock_name(const struct suite_lock *l, char *buf, size_t len);
const char *suite_lock_slug(const struct suite_lock *l, char *buf, size_t len);

/* The scenario of one cell: the business scenario base (as its file
 * holds it) with the suite's run settings, the lock l with the suite's
 * ttl and l's mode, the class's layout and its faults sized as z says,
 * no expectation (a cell is judged by what happened). A new object, or
 * NULL with why. */
struct suite_sizing {
    bool layout;       /* the class's layout (false: the default) */
    uint32_t lease_ms; /* 0: no faults (for learning the lease) */
    bool renews;       /* the lock renews its grants under this scenario */
    uint32_t skip;     /* optional templates left out: bit k is template k */
};
json_t *suite_cell(const struct suite *s, const json_t *base, size_t cls,
                   const struct suite_lock *l, const struct suite_sizing *z, char *why, size_t len);
/* Is template k of class cls marked optional? */
bool suite_fault_optional(const struct suite *s, size_t cls, size_t k);

#endif
