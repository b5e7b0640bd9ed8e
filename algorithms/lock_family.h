/* lock_family.h - a lock family: the settings its locks read, declared by
 * the family itself.
 *
 * A family is the object under "lock" in a scenario file that configures
 * some locks ("lock.redlock" for redlock and redisson-multi), its struct,
 * its keys (algorithms/settings.h) and what the scenario, the fleet and the
 * reports ask of it instead of naming it: its defaults, the defaults that
 * depend on the ttl, how many servers its locks use, the lease their
 * grants really run on, the line the header prints. A client reads them
 * from its lock_config (lock_settings). A family is defined in the file of
 * the lock that owns it, or in a small file of its own when several locks
 * share it; lock_ops.family points to it. The scenario keeps every
 * family's struct, each in a settings_store at its family's place in the
 * registry (lock.c).
 */
#ifndef LOCKLAB_LOCK_FAMILY_H
#define LOCKLAB_LOCK_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algorithms/settings.h"

#define LOCK_FAMILIES_MAX 8 /* room in a scenario for the families' settings */
#define FAMILY_NOTE_MAX   160

/* What a family's resolve hooks know of the run besides its settings. */
struct family_scene {
    uint32_t ttl_ms;
    uint32_t wait_ms; /* lock.wait_ms, for a family that maps it onto its server's timeouts */
    size_t named;     /* the external servers named for its lock's kind; 0: managed */
    /* Say a value chosen rather than read, one line (the scenario's notes). */
    void (*note)(void *ctx, const char *line);
    void *ctx;
};

/* The servers a family's settings lay out around its locks' own, one
 * field each family may fill (lock_family.layout). */
struct family_layout {
    uint32_t followers;    /* replicas of the one that leads, through locklab's proxy */
    uint32_t finders;      /* servers that watch it and promote a follower (sentinels) */
    const char *pool_mode; /* a pooler in front of its server, in this mode; NULL: none */
};

struct lock_family {
    const char *key; /* its object under "lock": "redlock" */
    size_t size;     /* of its settings struct, at most SETTINGS_BYTES_MAX */
    const struct setting_table *table;
    /* A family whose settings its locks read too (the Redisson family:
     * lock.redis's topology); it answers the hooks this one leaves NULL
     * (servers, lease_ms, ...). NULL: none. */
    const struct lock_family *base;
    /* Every default, into zeroed settings. NULL: all zero. */
    void (*defaults)(void *settings);
    /* The lease its grants run on, resolved before the renewal period that
     * rests on it; then the other defaults that depend on the run. Each
     * noted through sc. NULL: none. Called for the family of the lock that
     * runs. */
    void (*resolve_lease)(void *settings, const struct family_scene *sc);
    void (*resolve)(void *settings, const struct family_scene *sc);
    /* How many servers its locks use (resolved). NULL: one. */
    size_t (*servers)(const void *settings);
    /* How many of them lead, each its own share of the keys (a Redis
     * Cluster's masters), what the target "primaries" holds (resolved).
     * NULL: one when they have followers, else each of them. */
    size_t (*leaders)(const void *settings);
    /* Its servers are independent nodes its locks vote across (Redlock's
     * masters): the votes a grant needs (resolved). None of them leads or
     * follows another, a fault may strike a holder's majority, and of the
     * external servers named its locks use `servers`. NULL: the servers
     * are one service. */
    size_t (*quorum)(const void *settings);
    /* The lease its grants really run on, for a ttl of ttl_ms (resolved).
     * NULL: the ttl. */
    uint32_t (*lease_ms)(const void *settings, uint32_t ttl_ms);
    /* The lease a client keeps alive by itself, in the renewal period's
     * note ("the etcd lease"); its keep-alive is a third of lease_ms.
     * NULL: a kept lease is the ttl. */
    const char *kept_lease;
    /* Its lease is a session the client keeps alive and the server ends
     * (ZooKeeper's): the reports say "its session (timeout N ms)". */
    bool session;
    /* How often a client refreshes its lease whatever it holds (ZooKeeper's
     * pings, a third of the session). NULL: only a renewal does. */
    uint32_t (*pings_ms)(const void *settings);
    /* Whether the header and report.json show these settings; own: the
     * lock that runs is of this family. NULL: when own. */
    bool (*shown)(const void *settings, bool own);
    /* The header's line of them ("redlock: nodes=5 ..."). NULL: none. */
    void (*describe)(const void *settings, char *buf, size_t len);
    /* report.json's "lock" holds its object, every key of its table, when
     * shown. */
    bool reported;
    /* What its settings lay out (resolved), into out, leaving the fields
     * it does not fill. Asked whatever lock runs: the fleet starts it, and
     * followers or finders asked of a lock outside the family are refused
     * with layout_words ("replicas and sentinels are the topology of ...").
     * NULL: its servers alone. */
    void (*layout)(const void *settings, struct family_layout *out);
    const char *layout_words;
    /* Why its layout does not fit the external servers named for the lock
     * that runs (finders: those that name its leader, found_by; named:
     * its kind's own), in why, with the keys to blame from the scenario's
     * root in *blame (NULL-ended); 0 when it fits. NULL: any fits. */
    int (*layout_misfit)(const void *settings, size_t finders, size_t named,
                         const char *const **blame, char *why, size_t len);
    /* `locklab list`'s servers column for its locks ("N redis masters
     * (lock.redlock.nodes, 5)"). NULL: one server of the lock's kind. */
    const char *list_servers;
};

/* The registry of families (lock.c), in the order of their objects under
 * "lock" and in report.json; _line_at: in the order of the header's
 * lines. */
size_t lock_family_count(void);
const struct lock_family *lock_family_at(size_t i);
const struct lock_family *lock_family_line_at(size_t i);
/* f's place in the registry; LOCK_FAMILIES_MAX for one it lacks. */
size_t lock_family_index(const struct lock_family *f);

/* The first of f and its bases whose hook at offset hook (FAMILY_HOOK:
 * one of the function pointers above) is set; NULL when none has it, or f
 * is NULL. What a family leaves to its base, its base answers. */
const struct lock_family *lock_family_with(const struct lock_family *f, size_t hook);
#define FAMILY_HOOK(name) offsetof(struct lock_family, name)

/* A managed cluster of n servers is one locklab runs (1: standalone, or
 * 3): 0, or -1 with why, the check of a key such as lock.etcd.nodes. */
int family_check_ensemble(uint32_t n, char *why, size_t len);

/* One note through sc, printf-style, cut to FAMILY_NOTE_MAX. */
void family_note(const struct family_scene *sc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
