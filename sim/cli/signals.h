/* signals.h - Ctrl-C, SIGTERM and SIGHUP during a run.
 *
 * One thread takes them with sigwait. The first stops the clients (the run
 * still writes its report, marked incomplete); the second kills the
 * managed servers, removes their folder and exits at once with 130. It
 * reaches the runner only under a mutex (the main thread frees it) and the
 * servers only through the PIDs published here.
 */
#ifndef LOCKLAB_SIGNALS_H
#define LOCKLAB_SIGNALS_H

struct runner;
struct cluster;

/* Block the signals in the calling thread (and so in every thread it
 * starts afterwards) and start the thread that takes them. Call first. */
void signals_start(void);
/* The runner a first signal should stop; NULL before freeing it. */
void signals_publish_runner(struct runner *r);
/* The servers (and their folder) a second signal should kill. */
void signals_publish_servers(const struct cluster *c);
/* Before the servers are stopped in order: nothing left to kill. */
void signals_forget_servers(void);
/* How many signals have arrived. */
int signals_received(void);

#endif
