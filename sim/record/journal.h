/* journal.h - the file a run's history goes into while the run goes:
 * history.llh in the run's folder (an unnamed temporary file when it has
 * none). The recorder's sink writes each event as it leaves memory; once
 * the run is over the file is read back to check it (the run's verdict
 * comes from the very file `locklab check` reads); once the run is judged
 * its end record closes it.
 */
#ifndef LOCKLAB_JOURNAL_H
#define LOCKLAB_JOURNAL_H

#include <stddef.h>

#include "sim/record/history.h"

struct journal;

/* dir/history.llh created (dir NULL or "": an unnamed file). NULL with
 * "cannot write PATH: REASON" in err. */
struct journal *journal_open(const char *dir, char *err, size_t errlen);
/* The start record, from start's start fields. 0, or an errno value. */
int journal_begin(struct journal *j, const struct history *start);
/* One event, after every earlier one, its names from names as they stand.
 * 0, or an errno value (the first failure stays: journal_error). */
int journal_write(struct journal *j, const struct history_event *e,
                  const struct history_names *names);
int journal_error(const struct journal *j);
/* Every event written so far, read back from the file in order, to fn (its
 * non-zero return stops the reading and is returned). The events carry the
 * file's ids (it numbers keys, owners and notes as it first meets them):
 * with names, the file's tables replace names' own, so they name them.
 * 0; -1 with the reader's complaint in err. */
int journal_replay(struct journal *j, int (*fn)(void *ctx, const struct history_event *e),
                   void *ctx, struct history *names, char *err, size_t errlen);
/* The end record from end's end fields; the file closed. 0, or -1 with
 * errno set. */
int journal_finish(struct journal *j, const struct history *end);
/* Where the file is ("" for an unnamed one). */
const char *journal_path(const struct journal *j);
/* Accepts NULL. An unfinished file is closed as it is (a reader sees a
 * writer that stopped); one never begun is removed. */
void journal_free(struct journal *j);

#endif
