/* capture.h - an in-memory FILE for a renderer under test: what it wrote
 * is read once the FILE is closed. */
#ifndef LOCKLAB_TEST_CAPTURE_H
#define LOCKLAB_TEST_CAPTURE_H

#include <stdio.h>

struct capture {
    char *text;
    size_t len;
    FILE *f;
};

/* The FILE to write into (a failed test when it cannot be made). */
FILE *capture_open(struct capture *c);
/* The FILE closed, its text (the caller frees it). */
char *capture_text(struct capture *c);

#endif
