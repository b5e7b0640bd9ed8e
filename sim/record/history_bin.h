/* history_bin.h - history.llh, the compact binary form of a history
 * (docs/history.md, "history.llh"): the same start line, events and end
 * line as history.jsonl, about a tenth of its size and read back far
 * faster. Events are records of a tag byte and LEB128 varints, each time a
 * delta from the previous event's, each seq and token a delta from the
 * previous one on the same key; a key, owner or note is written once, as
 * a table record, the first time an event needs it.
 *
 * The writer takes events one at a time in time order, with the tables
 * as they stand then (they may grow between events), so a run can feed it
 * as it goes. It refuses exactly what history_write_jsonl refuses, so any
 * file it writes exports to the JSON lines that writer would have written,
 * byte for byte (history_reader.h reads both).
 */
#ifndef LOCKLAB_HISTORY_BIN_H
#define LOCKLAB_HISTORY_BIN_H

#include <stdio.h>

#include "sim/record/history.h"

/* The first bytes of every history.llh: a non-ASCII byte first, so no
 * text tool takes it for text, then "LLH", and a CR LF, ^Z, LF as PNG's
 * signature has, to show a transfer that mangled line ends. */
#define LLH_MAGIC     "\x89LLH\r\n\x1a\n"
#define LLH_MAGIC_LEN 8
#define LLH_VERSION   1

/* Record tags. An event's is LLH_EVENT + (f << 2 | type). */
enum llh_tag {
    LLH_START = 0x01,
    LLH_KEY = 0x02,
    LLH_OWNER = 0x03,
    LLH_NOTE = 0x04,
    LLH_END = 0x05,
    LLH_LATCH = 0x06, /* a latch run's settings, right after the start record */
    LLH_EVENT = 0x20,
};

/* A string's most bytes: what a JSON line may hold (history.h). */
#define LLH_STR_MAX HISTORY_LINE_MAX

struct llh_writer;

/* A writer onto f (not closed by it); its start record written from h's
 * start fields. NULL when out of memory or the write failed. */
struct llh_writer *llh_writer_new(FILE *f, const struct history *h);
/* One event, after every earlier one in time; the table entries it needs
 * that were not written yet go first. An id beyond its table is written
 * as the name "#id", as history_write_jsonl does. Returns 0, or -1 with
 * errno set (EINVAL: an event the format cannot express). */
int llh_write_event(struct llh_writer *w, const struct history_event *e,
                    const struct history_names *names);
/* Everything written so far on its way to the file, which then reads back
 * as a history whose writer stopped (no end record). 0, or -1 with errno. */
int llh_writer_flush(struct llh_writer *w);
/* The end record from h's end fields, and everything flushed. 0, or -1
 * with errno set. */
int llh_write_end(struct llh_writer *w, const struct history *h);
void llh_writer_free(struct llh_writer *w); /* accepts NULL */

/* The whole of h as history.llh. 0, or -1 with errno set. */
int history_write_llh(const struct history *h, FILE *f);

#endif
