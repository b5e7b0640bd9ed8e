/* janitor.c - see janitor.h. The janitor blocks in flock on ROOT's owner
 * file: the owner (the locklab that made ROOT) holds that lock for the
 * folder's whole life, and the kernel drops it when the owner dies, so
 * the janitor wakes exactly then. A normal stop removes ROOT first and
 * then lets go of the lock: the janitor finds nothing and ends.
 *
 * Woken with ROOT still there, its owner died. Servers die with their
 * owner (PR_SET_PDEATHSIG), but one that changed user before that was
 * set, or that is between fork and exec, may not: every process whose
 * command line names ROOT (a server's data or config folder) is killed,
 * stopped ones too, then the folder goes, and the run's shared folder
 * (cluster_shared_dir: the postgres user's, outside TMPDIR) with it. It
 * runs in a session of its own (a terminal's Ctrl-C is its owner's
 * business) and ignores SIGINT.
 */
#include "sim/fleet/janitor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/fleet/cluster.h"
#include "sim/fleet/netfilter.h"
#include "sim/fleet/remote.h"

#define KILL_WAIT_MS 5000 /* for what it killed to be gone */

static const char *janitor_exe;

void janitor_set_exe(const char *exe)
{
    janitor_exe = exe;
}

pid_t janitor_start(const char *root)
{
    if (janitor_exe == NULL)
        return 0;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        /* only async-signal-safe calls until exec: locklab has threads */
        char *argv[] = {(char *)janitor_exe, "__janitor", (char *)root, NULL};
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); /* locklab blocks them for its sigwait thread */
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        /* nothing of locklab's may live on in it: a socket it kept would
         * keep a port bound or a connection open after its owner closed it */
        if (close_range(3, ~0U, 0) < 0)
            for (int fd = 3; fd < 1024; fd++)
                close(fd);
        setsid();
        /* this very binary, even when the file was rebuilt since it started */
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(null);
    return pid > 0 ? pid : 0;
}

void janitor_reap(pid_t pid)
{
    int status;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
}

/* Does /proc/<pid>/cmdline name root (as a path, or inside an argument)? */
static int names_root(const char *pid, const char *root, size_t root_len)
{
    char path[300], buf[8192];
    snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    /* an argument that is root or a path in it, or an option's value
     * (--data-dir=ROOT/...): not a user's command that merely mentions it */
    for (const char *p = strstr(buf, root); p; p = strstr(p + 1, root)) {
        bool starts = p == buf || p[-1] == ' ' || p[-1] == '=';
        if (starts && (p[root_len] == '/' || p[root_len] == ' ' || p[root_len] == '\0'))
            return 1;
    }
    return 0;
}

/* Does /proc/<pid> stand in root (its working folder there)? A
 * PostgreSQL's backends name no folder, and once their postmaster died
 * (with locklab, by PR_SET_PDEATHSIG) they are init's; they stand in its
 * data folder, and a paused one stays stopped until it is killed. */
static int stands_in_root(const char *pid, const char *root, size_t root_len)
{
    char path[300], cwd[4096];
    snprintf(path, sizeof(path), "/proc/%s/cwd", pid);
    ssize_t n = readlink(path, cwd, sizeof(cwd) - 1);
    if (n <= 0)
        return 0;
    cwd[n] = '\0';
    return strncmp(cwd, root, root_len) == 0 && (cwd[root_len] == '/' || cwd[root_len] == '\0');
}

/* SIGKILL every other process naming or standing in root, every process
 * under it and its process group; how many were found. */
static int kill_named(const char *root)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    size_t len = strlen(root);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1 || pid == (long)getpid() ||
            !(names_root(e->d_name, root, len) || stands_in_root(e->d_name, root, len)))
            continue;
        if (cluster_kill_tree((pid_t)pid) > 0)
            found++;
        kill(-(pid_t)pid, SIGKILL); /* none when it leads no group */
    }
    closedir(d);
    return found;
}

/* Stop what still runs from root and from its shared folder, then remove
 * them, the shared one first (the run's own cluster_stop order). */
static void clean_up(const char *root, const char *shared)
{
    netfilter_clear(root); /* a partition in force when locklab died */
    remote_clean_up(root); /* its servers on other hosts: from its notes, before they go */
    for (int waited = 0; kill_named(root) + kill_named(shared) > 0 && waited < KILL_WAIT_MS;
         waited += 50) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* what a dying server writes last may land after a pass: try again */
    for (int pass = 0; pass < 50 && (access(shared, F_OK) == 0 || access(root, F_OK) == 0);
         pass++) {
        cluster_remove_tree(shared);
        cluster_remove_tree(root);
        struct timespec ts = {0, 100 * 1000000L};
        if (access(shared, F_OK) == 0 || access(root, F_OK) == 0)
            nanosleep(&ts, NULL);
    }
}

int janitor_main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *root = argv[2];
    char owner[4096], shared[4096];
    snprintf(owner, sizeof(owner), "%s/" CLUSTER_OWNER_FILE, root);
    cluster_shared_path(root, shared, sizeof(shared));
    signal(SIGINT, SIG_IGN);
    int fd = open(owner, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0; /* already gone */
    while (flock(fd, LOCK_EX) < 0)
        if (errno != EINTR)
            return 1;
    if (access(owner, F_OK) < 0) {
        /* The owner removed its folder. A normal stop removed the shared
         * one before; one still there was abandoned (a second Ctrl-C
         * removes the run folder alone): its owner is gone too. */
        char lock[4200];
        snprintf(lock, sizeof(lock), "%s/" CLUSTER_OWNER_FILE, shared);
        int sfd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (sfd >= 0 && flock(sfd, LOCK_EX | LOCK_NB) == 0)
            clean_up(root, shared); /* root is gone: its share of the passes is nothing */
        if (sfd >= 0)
            close(sfd);
        return 0;
    }
    clean_up(root, shared); /* orphaned */
    return 0;
}
