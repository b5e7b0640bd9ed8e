/* janitor.h - the run folder's keeper when locklab itself dies (SIGKILL,
 * an OOM kill): a small process of its own that waits on the folder's
 * owner lock, which the kernel drops with its owner, then stops what is
 * still running from the folder and removes it. Without it the folder
 * stayed until the next run's sweep. */
#ifndef LOCKLAB_JANITOR_H
#define LOCKLAB_JANITOR_H

#include <sys/types.h>

/* The janitor is this binary run as `<exe> __janitor ROOT`; main sets the
 * binary once (NULL, the default, as in tests: no janitor is started). */
void janitor_set_exe(const char *exe);
/* A janitor for root, whose owner lock the caller holds: its pid, or 0
 * when none could be started (the sweep stays the backstop). */
pid_t janitor_start(const char *root);
/* After the caller removed root and let go of its lock: the janitor has
 * nothing left to do and ends; reap it. */
void janitor_reap(pid_t pid);
/* `locklab __janitor ROOT`: the janitor's own life. Its exit status. */
int janitor_main(int argc, char **argv);

#endif
