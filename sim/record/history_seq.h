/* history_seq.h - the witness's numbers a history file gives, held to what
 * docs/history.md promises of them, as the reader meets them. Private to
 * the readers (history_read.c, history_bin_read.c).
 *
 * The witness gives each entry into and exit from the resource on a key
 * its own seq, so on a key no seq comes twice; and one client enters and
 * leaves a key one step after the other, so its seqs on that key grow in
 * the file's order. Across clients the file promises no order of seqs: two
 * clients read the clock a few nanoseconds away from their witness step,
 * so their lines may sit in either order. The checker sorts on seq and
 * counts on no ties, which a duplicate would break.
 *
 * Checked event by event in memory bounded by the keys and the witness's
 * steps still missing: per key, the step below which every one has come
 * (its watermark), and the steps above it with their lines and clients.
 * A seq below the watermark is one that came before; a client's seq on a
 * key below the watermark needs no remembering, since whatever it gives
 * next there is either below too (a seq again) or after it. A locklab
 * history leaves no step out, so what waits above the watermark is the
 * few lines logged out of the witness's order: the memory does not grow
 * with the file. A file that leaves steps out (events dropped, another
 * tool's numbering) keeps every step above the first gap, as the checker's
 * sequence sweep does.
 */
#ifndef LOCKLAB_HISTORY_SEQ_H
#define LOCKLAB_HISTORY_SEQ_H

#include <stddef.h>
#include <stdint.h>

/* One table of (key, id) -> (val, line), open addressing. */
struct seq_slot {
    uint64_t id, val, line;
    uint32_t key;
    uint32_t used;
};

struct seq_table {
    struct seq_slot *s;
    size_t cap, n; /* cap a power of two, or 0 */
};

struct seq_key {
    uint64_t next; /* every seq below it has come */
    uint64_t next_line;
};

struct seq_check {
    struct seq_key *keys; /* by key id */
    size_t cap_keys;
    struct seq_table above; /* (key, seq) -> (client, line): seqs come above next */
    struct seq_table last;  /* (key, client) -> (seq, line): the client's newest, above next */
};

enum seq_broken {
    SEQ_AGAIN = 1, /* seq came at prev_line too */
    SEQ_BELOW,     /* seq is below prev_seq, every seq under which came by prev_line */
    SEQ_NOT_AFTER, /* seq is not after prev_seq, the client's previous one there, at prev_line */
};

/* A promise broken at line, by seq on key (of client). */
struct seq_fault {
    enum seq_broken kind;
    uint64_t line, prev_line;
    uint64_t seq, prev_seq;
    uint32_t key, client;
};

/* Take seq of client on key at line (lines grow down the file). Returns 0,
 * 1 when it breaks a promise (a seq again before one out of order, as
 * they are checked; described in f), or -1 out of memory. */
int seq_check_add(struct seq_check *s, uint32_t key, uint32_t client, uint64_t seq, uint64_t line,
                  struct seq_fault *f);
/* The entries kept now, for the tests of bounded memory. */
size_t seq_check_held(const struct seq_check *s);
void seq_check_free(struct seq_check *s);

#endif
