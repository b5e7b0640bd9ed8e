/* history_reader.h - read a history file one event at a time, whatever
 * its format: history.jsonl (JSON lines) or history.llh (the compact
 * binary form, history_bin.h), told apart by the first bytes. Both are
 * documented in docs/history.md.
 *
 * A reader holds the file's start line, its string tables as they grow,
 * and its end line once reached, never its events: a checker can consume
 * a history of any length in the memory of its tables (and of the
 * witness's steps still missing per key, history_seq.h). Every value is
 * bounded and checked as history.h's HISTORY_MAX_* say, so a hostile file
 * is refused with one line naming the file and where (its line, or byte
 * offset for the binary form), never a crash.
 */
#ifndef LOCKLAB_HISTORY_READER_H
#define LOCKLAB_HISTORY_READER_H

#include <stddef.h>
#include <stdio.h>

#include "sim/record/history.h"

enum history_format { HISTORY_JSONL = 0, HISTORY_LLH };

struct history_reader;

/* Open path (its start is read with the first next). NULL on error, with "path:...: reason" in
 * err. */
struct history_reader *history_reader_open(const char *path, char *err, size_t errlen);
/* The same over an open stream (not closed by the reader), named name in
 * the messages. */
struct history_reader *history_reader_stream(FILE *f, const char *name, char *err, size_t errlen);

enum history_format history_reader_format(const struct history_reader *r);

/* The next event into e: 1, or 0 at the end of the file (the end line, if
 * any, is then in history_reader_header), or -1 with the reason in err
 * (the reader is then done). */
int history_reader_next(struct history_reader *r, struct history_event *e);

/* What the reader knows so far: the start line's fields, the tables the
 * events read so far point into, and after next returned 0 the end line's
 * (with end_mono_ns the last event's time when there was none). ev and n
 * are unused. Owned by the reader. */
const struct history *history_reader_header(const struct history_reader *r);

/* The error of the last call, "" when none. */
const char *history_reader_error(const struct history_reader *r);

/* Move the header and its tables into h (ev, n left empty): call after
 * next returned 0. */
void history_reader_take(struct history_reader *r, struct history *h);

void history_reader_close(struct history_reader *r); /* accepts NULL */

/* Every event of a reader not yet read from, to out as JSON lines with its
 * start and end lines: the bytes `run --history-jsonl` writes. 0; -1 the
 * reader failed (history_reader_error); -2 writing failed (errno set). */
int history_reader_to_jsonl(struct history_reader *r, FILE *out);

/* Make h's names printable (control bytes become '?'), as check prints
 * them: what history_read_file does to what it took. */
void history_names_printable(struct history *h);

/* Read a whole file, either format, into h: a loop over next. The names
 * are made printable (control bytes become '?'), as check prints them.
 * On error returns -1 with "path:where: reason" in err. */
int history_read_file(const char *path, struct history *h, char *err, size_t errlen);
/* The same from an open stream, named name in the messages. */
int history_read_stream(FILE *f, const char *name, struct history *h, char *err, size_t errlen);

#endif
