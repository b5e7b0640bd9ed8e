/* history_decode.h - the two decoders behind history_reader.h, one per
 * format: history_read.c (JSON lines) and history_bin_read.c (the binary
 * form). Private to sim/record/.
 *
 * Each fills the header h it is given (start, tables as they grow, end)
 * and hands out events one at a time; messages go into err, "name:where:
 * reason", one line. h's tables belong to h from the moment they exist:
 * free them with history_free(h) whatever the decoder returned.
 */
#ifndef LOCKLAB_HISTORY_DECODE_H
#define LOCKLAB_HISTORY_DECODE_H

#include <stddef.h>
#include <stdio.h>

#include "sim/record/history.h"

/* Both: next returns 1 (an event in e), 0 (the end of the file, the end
 * line's fields in h), -1 (err set). */
struct reader;
struct reader *jsonl_dec_new(FILE *f, const char *name, struct history *h, char *err,
                             size_t errlen);
int jsonl_dec_next(struct reader *r, struct history_event *e);
void jsonl_dec_free(struct reader *r); /* accepts NULL */

/* The binary decoder is handed the stream after its magic bytes. */
struct llh_dec;
struct llh_dec *llh_dec_new(FILE *f, const char *name, struct history *h, char *err, size_t errlen);
int llh_dec_next(struct llh_dec *d, struct history_event *e);
void llh_dec_free(struct llh_dec *d); /* accepts NULL */

/* Text from a file made safe to print: its control bytes (a newline, a
 * terminal's escape sequence) become '?'. */
void history_printable(char *s);

#endif
