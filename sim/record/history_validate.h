/* history_validate.h - what a history file promises of each event as it
 * comes, whatever its encoding: times never go back, and the witness's
 * seqs hold to history_seq.h. Private to the readers (history_read.c for
 * history.jsonl, history_bin_read.c for history.llh), so both refuse the
 * same files for the same reasons, each naming the place in its own terms.
 */
#ifndef LOCKLAB_HISTORY_VALIDATE_H
#define LOCKLAB_HISTORY_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/record/history.h"
#include "sim/record/history_seq.h"

/* How a reader's messages name things: JSONL quotes its fields and counts
 * lines ("\"seq\"", "\"time\"", "line", "on"), the binary file counts the
 * bytes its records begin at ("seq", "time", "byte", "at"). */
struct history_words {
    const char *seq, *time; /* the fields */
    const char *place;      /* what at (below) counts */
    const char *on;         /* before a place: "its 5 on line 2" */
};

/* The running state of one file's checks. */
struct history_validator {
    struct seq_check seqs;
    bool have_last; /* last_t holds a time every event must reach */
    uint64_t last_t;
};

/* Take e, found at place at (a line, a byte), the file's key names so far
 * in keys. 0, or -1 with the broken promise in msg (len bytes; "out of
 * memory" when it ran out): the event is then not taken. */
int history_validate_event(struct history_validator *v, const struct history_event *e, uint64_t at,
                           const char *const *keys, const struct history_words *w, char *msg,
                           size_t len);
void history_validator_free(struct history_validator *v);

#endif
