/* history_make.h - what the history unit tests (tests/unit/test_history_*.c)
 * share: events and histories made by hand, and history files written to
 * /tmp and read back. Each function asserts (cmocka) rather than returning
 * an error. */
#ifndef LOCKLAB_TEST_HISTORY_MAKE_H
#define LOCKLAB_TEST_HISTORY_MAKE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/check/checker.h"
#include "sim/record/history.h"

/* Kinds by their index in the fault registry, which history files number
 * them by: kill is 2, pause 3 (sim/faults/registry.c). */
#define KIND_KILL  2
#define KIND_PAUSE 3

#define PATH_LEN 32
#define ERR_LEN  256

/* The smallest start line the reader takes: mono_ns 1, nothing else. */
extern const char start_line[];

/* a and b alike in every field (cmocka asserts). */
void assert_event_equal(const struct history_event *a, const struct history_event *b);

/* An event of client at time t, of type (HT_*) and f (HF_*); the rest 0. */
struct history_event ev(uint64_t t, uint32_t client, uint8_t type, uint8_t f);

/* The start (end 0) or end (end 1) of the scenario's first fault, of
 * registry index kind, aimed at client target. */
struct history_event fault(uint64_t t, uint32_t target, uint8_t kind, uint8_t end);

void assert_section_equal(const struct section *a, const struct section *b);

/* A history made by hand, owning copies of everything like a merged one;
 * the caller frees it with history_free. */
void make_history(struct history *h, const struct history_event *e, size_t n,
                  const char *const *keys, size_t n_keys, const char *const *owners,
                  size_t n_owners);

/* A fresh file holding text; its name goes into path, the caller unlinks it. */
const char *write_file(char path[PATH_LEN], const char *text);

/* h as history_write_jsonl writes it; the caller frees it. */
char *jsonl_of(const struct history *h);

/* What the reader says about text, or "" when it read it into h. The
 * message names the file; the path is stripped so tests read ":N: what". */
const char *read_text(const char *text, struct history *h, char err[ERR_LEN]);

/* w written, then read back into r: the text, for the caller to look
 * into and free. */
char *written_and_read(const struct history *w, struct history *r);

#endif
