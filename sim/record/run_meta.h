/* run_meta.h - where and how a run ran, as its reports state it: the
 * locklab built (version and commit), the command line as given, the host
 * (name, cores, kernel), and each server's version as the server itself
 * answered when asked. Plain data: the face fills the process's part once
 * (run_meta_init, from main's argv), the fleet each run's servers
 * (sim/fleet/version.c); the reports only read it.
 */
#ifndef LOCKLAB_RUN_META_H
#define LOCKLAB_RUN_META_H

#include <stddef.h>
#include <stdint.h>

#define RUN_META_ARGS 64 /* the words of the command line kept one by one */

/* The commit built from (`git describe --always --dirty`), "unknown"
 * outside a checkout: cmake/commit.cmake writes it at every build. */
extern const char locklab_commit[];

/* One server, as it answered "what version are you?". */
struct server_version {
    char kind[16];    /* the server kind's name ("redis"), or "proxy" */
    char address[80]; /* host:port its clients used; "" for the proxy */
    char version[64]; /* "7.0.15"; "" when unknown (then why says so) */
    char answer[160]; /* what it said, cut short: "redis_version:7.0.15" */
    char why[160];    /* why the version is unknown; "" when known */
};

struct run_meta {
    const char *version; /* LOCKLAB_VERSION */
    const char *commit;  /* locklab_commit */
    /* argv as given, each word quoted for a POSIX shell where it needs it,
     * so the line can be pasted back; and the words themselves */
    char command_line[4096];
    const char *argv[RUN_META_ARGS];
    size_t argc;
    char host[256];
    long cores_online;        /* sysconf(_SC_NPROCESSORS_ONLN) */
    long cores_usable;        /* sched_getaffinity: the ones this process may run on */
    char kernel[200];         /* uname: "Linux 6.1.0-18-amd64 x86_64" */
    uint64_t started_wall_ns; /* when the command began (a comparison's, a matrix's start) */
};

/* m filled for this process; argv kept by pointer (main's outlive it). */
void run_meta_init(struct run_meta *m, int argc, char *const *argv);
/* The process's, set by run_meta_set (main); NULL before. */
const struct run_meta *run_meta_current(void);
void run_meta_set(const struct run_meta *m);

/* argv[0..argc) as one line a POSIX shell reads back into the same words:
 * a word of only [A-Za-z0-9_./:=,+@%^-] as it is, any other in single
 * quotes ('' for an empty one, ' written '\''). The length it needed
 * (it is cut to fit len, and always ends in '\0'). */
size_t run_meta_quote(char *out, size_t len, size_t argc, const char *const *argv);

#endif
