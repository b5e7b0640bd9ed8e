/* history_key.h - what puts two runs on one series of `locklab history`:
 * everything in a report.json that changes a figure, as one JSON object,
 * written in a canonical form and hashed (docs/history-index.md, "The
 * series key").
 *
 * The key object: {"algorithm", "scenario", "servers"}; the scenario as
 * report.json holds it (what `show --json` prints) without name,
 * description, file and defaults; per server its kind, layout ("managed,
 * master", "external") and version, never its address. A part the
 * report.json lacks (an older version's) is null in the key.
 */
#ifndef LOCKLAB_HISTORY_KEY_H
#define LOCKLAB_HISTORY_KEY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Digits of the key in the table; history.json has all 16. */
#define HISTORY_KEY_SHORT 8

/* v as canonical compact JSON: no spaces, object keys in byte order,
 * strings escaped as JSON requires and no more (\" \\ \b \f \n \r \t,
 * other controls \u00xx), a real in the fewest digits that read back the
 * same double (%.Ng, N from 1 to 17) with ".0" when it would read as an
 * integer. malloc'd; NULL when memory ran out. */
char *history_canonical_json(const json_t *v);

/* FNV-1a, 64 bits, over n bytes of s. */
uint64_t history_fnv1a64(const char *s, size_t n);

/* The key object of a report.json's root (a new reference); NULL when
 * memory ran out. */
json_t *history_key_object(json_t *report);

/* The settings that differ between two key objects, in words, for a
 * line of the table: "rate 0.0 -> 500.0, clients 32 -> 8", the scenario's
 * keys without "scenario.", at most 3 then "and N more". Returns how many
 * differ. */
int history_key_diff(const json_t *older, const json_t *newer, char *buf, size_t len);

#endif
