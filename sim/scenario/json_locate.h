/* json_locate.h - where a JSON path sits in the raw text.
 *
 * jansson reports a line and column only for syntax errors; a scenario error
 * found after parsing ("faults[2].at_ms: expected an integer >= 0") must
 * still point into the file. These functions walk the raw text with a
 * minimal tokenizer and never allocate. They expect text that jansson has
 * accepted, at least up to the place they look at; on anything else they
 * fail rather than guess.
 *
 * Positions count like jansson's: line and column from 1, the column in
 * characters (a UTF-8 sequence counts once), so a located error and a
 * jansson syntax error in the same file agree.
 */
#ifndef LOCKLAB_JSON_LOCATE_H
#define LOCKLAB_JSON_LOCATE_H

#include <stdbool.h>
#include <stddef.h>

struct json_pos {
    int line;   /* from 1 */
    int column; /* from 1, in characters */
};

/* One step of a path: an object member (key != NULL, key_len bytes, which
 * may contain '.' or '[') or an array element (key == NULL, index). */
struct json_step {
    const char *key;
    size_t key_len;
    size_t index;
};

/* Position of the value at steps[0..n) in text (n == 0: the root value).
 * With at_key and a last step that is a member, the position of that
 * member's key string instead. Keys compare after decoding escapes, as
 * jansson does; the first of duplicate keys wins. Returns 0, or -1 when the
 * path is not in the text. */
int json_locate_steps(const char *text, size_t len, const struct json_step *steps, size_t n,
                      bool at_key, struct json_pos *pos);

/* The same with a path written "faults[2].at_ms" ("" is the root; a key
 * cannot contain '.' or '[' here). Returns -1 also for a malformed path. */
int json_locate(const char *text, size_t len, const char *path, bool at_key, struct json_pos *pos);

/* The path of the innermost member key or value that contains byte offset
 * `at` (jansson's error.position - 1 is the last byte it read), written
 * into path like "lock.ttl_ms" (keys decoded, "" for the root; truncated to
 * fit), and the position where that key or value starts. Returns 0, or -1
 * when `at` lies outside every value or the text is malformed before it. */
int json_path_at(const char *text, size_t len, size_t at, char *path, size_t path_len,
                 struct json_pos *pos);

#endif
