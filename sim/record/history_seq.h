/* history_seq.h - the witness's numbers a history file gives, held to what
 * docs/history.md promises of them. Private to the reader (history_read.c).
 *
 * The witness gives each entry into and exit from the resource on a key
 * its own seq, so on a key no seq comes twice; and one client enters and
 * leaves a key one step after the other, so its seqs on that key grow in
 * the file's order. Across clients the file promises no order of seqs: two
 * clients read the clock a few nanoseconds away from their witness step,
 * so their lines may sit in either order. The checker sorts on seq and
 * counts on no ties, which a duplicate would break.
 */
#ifndef LOCKLAB_HISTORY_SEQ_H
#define LOCKLAB_HISTORY_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct seq_mark {
    uint64_t seq;
    uint64_t line; /* of the file, from 1 */
    uint32_t key;
    uint32_t client;
};

struct seq_marks {
    struct seq_mark *m;
    size_t n, cap;
};

/* A promise broken: at line, seq on key (of client) came again (again:
 * prev_line had it too) or not after prev_seq, the client's previous one
 * on the key at prev_line. */
struct seq_fault {
    uint64_t line, prev_line;
    uint64_t seq, prev_seq;
    uint32_t key, client;
    bool again;
};

/* Returns 0, or -1 out of memory. */
int seq_marks_add(struct seq_marks *s, const struct seq_mark *m);
/* True when a promise is broken, with the earliest line that breaks one in
 * f (a seq that comes again before one out of order on the same line).
 * Reorders the marks. */
bool seq_marks_broken(struct seq_marks *s, struct seq_fault *f);
void seq_marks_free(struct seq_marks *s);

#endif
