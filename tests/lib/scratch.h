/* scratch.h - a test's temporary folder, removed when the test is done.
 * LOCKLAB_KEEP_TMP=1 in the environment keeps it (and says where), to
 * look at what a failed test left. */
#ifndef LOCKLAB_TEST_SCRATCH_H
#define LOCKLAB_TEST_SCRATCH_H

/* Remove dir and everything under it, never following a link and never
 * leaving its file system; only while dir is a real folder. `who` names
 * the test in messages. */
void scratch_remove(const char *who, const char *dir);

#endif
