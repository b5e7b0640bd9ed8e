/* settings.h - a plug-in's own keys in a scenario file, declared by the
 * plug-in: a lock family's "lock.<family>" object, a workload's keys, a
 * toxic's parameters.
 *
 * A plug-in keeps its values in a struct of its own and describes each key
 * by where its value sits in that struct, its type, its bounds and, where
 * bounds are not enough, a check. The scenario parser reads such a table
 * through its one validation pass (sim/scenario/fields.c: walk_settings),
 * so a plug-in's keys get the messages every other key gets ("x.json:3:9:
 * lock.redlock.nodes: 9 is out of range (1..8)"), and neither the parser
 * nor struct scenario names them. It sits on the lowest floor because
 * every floor above declares such keys; it includes nothing.
 */
#ifndef LOCKLAB_SETTINGS_H
#define LOCKLAB_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#define SETTING_KEYS_MAX   16 /* keys of one table */
#define SETTING_WHY_MAX    160
#define SETTINGS_BYTES_MAX 128 /* the largest plug-in struct a scenario keeps */

enum setting_type {
    SETTING_U32 = 0, /* uint32_t in [min, max] */
    SETTING_U64,     /* uint64_t in [min, max] */
    SETTING_I64,     /* int64_t in [min, max] */
    SETTING_BOOL,    /* bool */
    SETTING_CHOICE,  /* int: the index in names of the string the file gives */
    SETTING_NUMBER,  /* double in (0, max]: a fraction, a rate */
};

struct setting_key {
    const char *key;
    enum setting_type type;
    size_t offset;            /* of the value in the plug-in's struct */
    long long min, max;       /* SETTING_U32, _U64, _I64: inclusive; _NUMBER: max only */
    const char *const *names; /* SETTING_CHOICE: the values, by index */
    size_t n_names;
    const char *noun; /* SETTING_CHOICE: "unknown <noun> \"x\"" */
    bool required;
    const char *what; /* what the value is, where a required key is missing and a
                         plug-in says so itself (a toxic's: "ms added to each chunk") */
    /* SETTING_U32, _U64, _I64: the upper bound when it is what keys before
     * it in the table made it (flash_sale's hot_items: at most items), in
     * place of max; NULL: max. */
    long long (*max_of)(const void *settings);
    /* What bounds cannot tell, once this key's value is stored (the keys
     * before it in the table are stored too): 0, or -1 with one line in
     * why, which the parser prints at this key's value. NULL: none. */
    int (*check)(const void *settings, char *why, size_t len);
};

struct setting_table {
    const struct setting_key *keys;
    size_t n; /* at most SETTING_KEYS_MAX */
    /* What only the whole object can tell, once every key is read; given[i]
     * says keys[i] was in the file. 0, or -1 with one line in why and
     * *blame set to the key it is said at. May set a default that depends
     * on the keys given. NULL: none. */
    int (*after)(void *settings, const bool *given, const char **blame, char *why, size_t len);
};

/* Room for one plug-in's struct, which the scenario keeps without knowing
 * its type: the plug-in casts settings_store.bytes to its own struct
 * (a _Static_assert in its file holds it to SETTINGS_BYTES_MAX). */
struct settings_store {
    _Alignas(max_align_t) unsigned char bytes[SETTINGS_BYTES_MAX];
};

/* The value of k in settings, for every type but SETTING_NUMBER (0): an
 * integer, a bool as 0 or 1, a choice's index. */
long long setting_int(const struct setting_key *k, const void *settings);
/* v into k in settings (SETTING_U32, _U64, _I64, _BOOL), unchecked. */
void setting_set_int(const struct setting_key *k, void *settings, long long v);

#endif
