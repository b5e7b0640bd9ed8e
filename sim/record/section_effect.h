/* section_effect.h - what a critical section did to the resource, as a
 * release's invoke carries it in the history and the checker reads it. */
#ifndef LOCKLAB_SECTION_EFFECT_H
#define LOCKLAB_SECTION_EFFECT_H

/* What the critical section did to the resource. */
enum section_effect {
    EFFECT_APPLIED = 0, /* its write took effect */
    EFFECT_NONE,        /* it wrote nothing (e.g. sold out, cache already filled) */
    EFFECT_FENCED,      /* its write was rejected: token lower than one already seen */
    EFFECT_CRASHED,     /* the client died inside; what it did is unknown */
    EFFECT_COUNT,       /* the effects a release can carry */
    /* Never ended: the history stops while it is still held (the writer
     * died, or the holder never let go). It overlaps everything that enters
     * the key after it, however late: a history cut short must not hide a
     * second holder by closing the first one at its last line. */
    EFFECT_OPEN = EFFECT_COUNT,
};

#endif
