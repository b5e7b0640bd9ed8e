/* history_intern.h - string -> dense id tables for the history readers
 * (history_read.c, history_bin_read.c): a file names its keys, owners and
 * fault notes millions of times, and equal strings must be one id. Private
 * to sim/record/.
 */
#ifndef LOCKLAB_HISTORY_INTERN_H
#define LOCKLAB_HISTORY_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* Slots hold id + 1 (0 = empty); capacity is a power of two kept at most
 * half full. names[0..n) are malloc'ed copies, owned by the table until
 * intern_release hands them over. */
struct intern {
    char **names;
    size_t n, cap;
    uint32_t *slot;
    size_t n_slot;
};

/* The id of s (len bytes, no NUL inside), a new one when s is new (*added
 * set, when not NULL). Returns 0, or -1 out of memory. */
int intern_id(struct intern *t, const char *s, size_t len, uint32_t *id, int *added);
/* Frees the hash slots only: the names now belong to whoever took t->names. */
void intern_release(struct intern *t);
void intern_free(struct intern *t); /* everything; accepts a zeroed table */

#endif
