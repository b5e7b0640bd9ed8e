/* scenario_parse.h - private to the scenario parser (scenario.c, the format,
 * and scenario_error.c, its messages). */
#ifndef LOCKLAB_SCENARIO_PARSE_H
#define LOCKLAB_SCENARIO_PARSE_H

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "algorithms/settings.h"
#include "sim/fleet/server_kind.h"
#include "sim/scenario/json_locate.h"
#include "sim/scenario/scenario.h"

#define FILE_MAX_BYTES (1 << 20) /* a scenario is a few hundred bytes */
#define PATH_MAX_DEPTH 4         /* faults[i].target is the deepest path */
#define QUOTE_MAX      40        /* bytes of a user's string echoed in a message */
#define MS_MAX         SCENARIO_MS_MAX
#define NO_MAX         LLONG_MAX /* an integer field with only a lower bound */

/* A value of the file the command line replaced: the path it was at. */
struct scn_override {
    const char *keys[2]; /* "clients"; "lock", "algorithm"; NULL after the last */
};

/* Validation state: where the walker is, and what to tell on failure. */
struct ctx {
    const char *file; /* as the caller named it; "" for none */
    const char *text; /* the file's bytes, while scenario_load runs */
    size_t len;
    /* the paths whose values the command line gave: a message blaming one
     * names it without pointing into the file */
    const struct scn_override *given;
    size_t n_given;
    char *err; /* SCENARIO_ERR_MAX bytes */
    struct json_step path[PATH_MAX_DEPTH];
    size_t depth;
};

struct field;
typedef int (*parse_fn)(struct ctx *c, json_t *v, const struct field *f, void *base);

struct table {
    const struct field *fields;
    size_t n;
    /* checks between fields of one object, once all are read */
    int (*after)(struct ctx *c, json_t *obj, void *base);
};

struct names {
    const char *noun; /* "unknown <noun> \"x\"" */
    const char *const *list;
    size_t n;
    int first; /* the enum value of list[0] */
};

struct field {
    const char *key;
    parse_fn parse;
    size_t offset;           /* of the destination in the base struct */
    long long min, max;      /* integer bounds; max bytes for a string */
    const struct table *sub; /* an object's own table */
    const struct names *names;
    bool required;
    const struct setting_key *setting;    /* parse_setting: the plug-in's key */
    const struct setting_table *settings; /* parse_settings: a plug-in's object */
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A user's string, in quotes, escaped and cut: safe to put in a message.
 * Returned by value, so it lives until the end of the calling expression. */
struct quoted {
    char s[QUOTE_MAX * 6 + 8];
};

/* The user's string s, quoted, escaped and cut: safe inside a message. */
struct quoted scn_quote(const char *s);
/* "file:line:col: path: msg" into err, leaving out what is not known. */
void scn_emit(char *err, const char *file, const struct json_pos *pos, const char *path,
              const char *msg);
/* The whole file, at most FILE_MAX_BYTES; -1 with why set. */
int scn_read_file(const char *path, char **text, size_t *len, char *why, size_t why_len);

/* The walker's JSON path. */
void scn_push_key(struct ctx *c, const char *key);
void scn_push_index(struct ctx *c, size_t i);
void scn_pop(struct ctx *c);

/* Each returns -1 after writing c->err. */
/* Fail at the value under check. */
__attribute__((format(printf, 2, 3))) int scn_fail(struct ctx *c, const char *fmt, ...);
__attribute__((format(printf, 2, 0))) int scn_vfail(struct ctx *c, const char *fmt, va_list ap);
/* The checks of the whole: fail at the value, pointing into the file only
 * when the value blamed is the file's (want NULL: it cannot be); takes
 * want's reference. */
__attribute__((format(printf, 3, 4))) int scn_fail_if_file(struct ctx *c, json_t *want,
                                                           const char *fmt, ...);
int scn_type_error(struct ctx *c, const json_t *v, const char *what);
int scn_unknown_name(struct ctx *c, const struct names *nm, const char *value);
int scn_unknown_key(struct ctx *c, const struct table *t, const char *key);
/* takes want's reference */
int scn_unknown_algorithm(struct ctx *c, const char *name, json_t *want);

/* fields.c: the field parsers a table names, and the walker. */
void *field_at(void *base, const struct field *f);
int get_int(struct ctx *c, json_t *v, const struct field *f, long long *out);
int parse_u32(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_u64(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_i64(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_bool(struct ctx *c, json_t *v, const struct field *f, void *base);
int match_name(struct ctx *c, json_t *v, const struct names *nm, int *out);
int parse_enum(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_name(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_text(struct ctx *c, json_t *v, const struct field *f, void *base);
int get_positive(struct ctx *c, json_t *v, double max, double *out);
int parse_duration(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_positive(struct ctx *c, json_t *v, const struct field *f, void *base);
int parse_object(struct ctx *c, json_t *v, const struct field *f, void *base);
int walk_object(struct ctx *c, json_t *obj, const struct table *t, void *base);
int parse_expect(struct ctx *c, json_t *v, const struct field *f, void *base);
/* A plug-in's object (f->settings) into its struct at f->offset: its keys
 * walked like a table's, then its checks (algorithms/settings.h). */
int parse_settings(struct ctx *c, json_t *v, const struct field *f, void *base);
/* The same of an object already known to be one, into settings. */
int walk_settings(struct ctx *c, json_t *obj, const struct setting_table *t, void *settings);
/* The field that reads plug-in key k into the plug-in's struct, which sits
 * at bytes into the base (0: the base is that struct). */
struct field setting_field(const struct setting_key *k, size_t at);
/* The same after lead, a key of the object read before its keys (NULL:
 * none): a workload's "type", which chose the table. */
int walk_settings_after(struct ctx *c, json_t *obj, const struct field *lead,
                        const struct setting_table *t, void *settings);
/* The characters of a scenario's name. */
extern const char name_chars[];

/* scenario.c: the document walked against the format's top table. */
int scn_walk_top(struct ctx *c, json_t *root, struct scenario *s);

/* fault_fields.c: the "faults" array. */
int parse_faults(struct ctx *c, json_t *v, const struct field *f, void *base);
/* The role a role target (PICK_IS_ROLE) names. */
enum server_role scn_pick_role(enum node_pick p);

/* What only the whole can tell, once every value is in place, then the
 * defaults resolved (scenario_finish.c). 0, or -1 with c->err set. */
int scn_finish(struct ctx *c, struct scenario *s);

/* The fault timeline against the run and ops's servers (scenario_faults.c). */
int scenario_finish_faults(struct ctx *c, const struct scenario *s, const struct lock_ops *ops);

#endif
