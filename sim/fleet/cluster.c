/* cluster.c - the managed servers of a run: their folder, their ports,
 * started together and stopped together (one process's life: spawn.c). */
#include "sim/fleet/cluster.h"
#include "sim/fleet/janitor.h"
#include "sim/fleet/netfilter.h"
#include "sim/fleet/remote.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/fleet/server_kind.h"
#include "sim/fleet/spawn.h"
#include "sim/record/clock.h"

/* One lock guards every server's pid and fault state: the nemesis thread
 * changes them while the main thread watches for servers that died. */
static pthread_mutex_t procs = PTHREAD_MUTEX_INITIALIZER;

void cluster_lock(void)
{
    pthread_mutex_lock(&procs);
}

void cluster_unlock(void)
{
    pthread_mutex_unlock(&procs);
}

#define START_ATTEMPTS 3 /* a freshly picked free port can be taken before the server binds it */

/* A port the kernel's own choices never take: below its ephemeral range
 * (ip_local_port_range), which every bind(0) and outgoing connection
 * draws from. A server's port must stay free while a fault keeps the
 * server down (a kill with restart_after_ms): with a port from that
 * range, the thousands of connections the clients, the proxy and the
 * other servers open meanwhile could take it, and the restart would
 * fail. The floor keeps clear of the ports people give services. */
#define PORT_FLOOR 10000

static const int busy_defaults[] = {26379, 2181, 2379, 2380, 3306, 5432,
                                    6379,  6432, 8080, 9090, 11211};

static int ephemeral_low(void)
{
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = 32768;
        fclose(f);
    }
    return lo;
}

/* Bind 127.0.0.1:port (0: any); the port bound, or -1. */
static int try_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    int got = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        got = ntohs(a.sin_port);
    close(fd);
    return got;
}

/* Ports this process gave a server: never given again, so a server
 * that a fault keeps down keeps its port from the next server started. */
static struct {
    pthread_mutex_t mu;
    int given[256];
    size_t n;
    uint64_t rng;
} ports = {.mu = PTHREAD_MUTEX_INITIALIZER};

static bool port_unusable(int port)
{
    for (size_t i = 0; i < sizeof(busy_defaults) / sizeof(busy_defaults[0]); i++)
        if (busy_defaults[i] == port)
            return true;
    for (size_t i = 0; i < ports.n && i < 256; i++)
        if (ports.given[i] == port)
            return true;
    return false;
}

int cluster_free_port(void)
{
    int lo = ephemeral_low(), port = -1;
    pthread_mutex_lock(&ports.mu);
    if (ports.rng == 0) /* another locklab beside this one draws elsewhere */
        ports.rng = (clock_mono_ns() ^ ((uint64_t)getpid() << 32)) | 1;
    for (int tries = 0; port < 0 && lo - PORT_FLOOR >= 1000 && tries < 200; tries++) {
        ports.rng ^= ports.rng << 13, ports.rng ^= ports.rng >> 7, ports.rng ^= ports.rng << 17;
        int p = PORT_FLOOR + (int)(ports.rng % (uint64_t)(lo - PORT_FLOOR));
        if (!port_unusable(p))
            port = try_port(p);
    }
    if (port < 0) /* a range set so low that none is left below it */
        port = try_port(0);
    if (port > 0)
        ports.given[ports.n++ % 256] = port;
    pthread_mutex_unlock(&ports.mu);
    return port;
}

int cluster_start_server(struct managed_server *s, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        s->port = cluster_free_port();
        if (s->port < 0) {
            snprintf(err, errlen, "no free loopback port: %s", strerror(errno));
            return -1;
        }
        if (spawn_start(s, err, errlen) < 0)
            return -1;
        struct spawn_wait w;
        if (spawn_wait_ready(s, 1, &w) == 0)
            return 0;
        char tail[200];
        spawn_log_tail(s, tail, sizeof(tail));
        int retry = w.rc > 0 && strstr(tail, "in use") != NULL && attempt + 1 < START_ATTEMPTS;
        if (!retry)
            spawn_failed(s, &w, err, errlen);
        spawn_stop(s, SIGKILL);
        if (!retry)
            return -1;
    }
    return -1;
}

/* The ports of every server started, with its address: the servers'
 * helpers that reach one by its port (the kinds' answers, the faults'
 * commands) ask here where it is. */
#define NOTED_PORTS 512
static struct {
    pthread_mutex_t mu;
    struct {
        int port;
        char addr[64];
    } at[NOTED_PORTS];
    size_t n;
} noted = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void note_port(int port, const char *addr)
{
    if (port <= 0)
        return;
    size_t i = 0;
    while (i < noted.n && noted.at[i].port != port)
        i++;
    if (i == noted.n) {
        if (noted.n == NOTED_PORTS)
            return;
        noted.n++;
    }
    noted.at[i].port = port;
    snprintf(noted.at[i].addr, sizeof(noted.at[i].addr), "%s", addr);
}

void cluster_note_ports(const struct managed_server *s)
{
    pthread_mutex_lock(&noted.mu);
    note_port(s->port, s->addr);
    note_port(s->peer_port, s->addr);
    note_port(s->election_port, s->addr);
    pthread_mutex_unlock(&noted.mu);
}

struct lock_endpoint server_endpoint(const struct managed_server *s)
{
    struct lock_endpoint ep = {.port = s->port};
    snprintf(ep.host, sizeof(ep.host), "%s", s->addr);
    return ep;
}

const char *cluster_port_addr(int port)
{
    const char *addr = "127.0.0.1";
    pthread_mutex_lock(&noted.mu);
    for (size_t i = 0; i < noted.n; i++)
        if (noted.at[i].port == port)
            addr = noted.at[i].addr; /* never changed once noted: a server keeps its host */
    pthread_mutex_unlock(&noted.mu);
    return addr;
}

/* A file of a server's configuration, in its folder, for writing. */
FILE *cluster_server_file(const char *dir, const char *name)
{
    char path[320];
    snprintf(path, sizeof(path), "%.250s/%s", dir, name);
    return fopen(path, "w");
}

/* Never stops the walk: one entry that cannot go (gone already, a folder
 * a dying server still writes in) must not keep the rest. The folder
 * itself and its owner file are left for last (cluster_remove_tree). */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    if (ftw->level == 0 || (ftw->level == 1 && strcmp(path + ftw->base, CLUSTER_OWNER_FILE) == 0))
        return 0;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void cluster_remove_tree(const char *dir)
{
    /* the owner file goes last: a removal cut short (the remover killed
     * with the PID namespace it ran in) leaves a folder the next run's
     * sweep still knows for an orphan, not an empty one nobody owns */
    char owner[PATH_MAX + 32];
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(owner, sizeof(owner), "%.4000s/" CLUSTER_OWNER_FILE, dir);
    unlink(owner);
    rmdir(dir);
}

/* A run owns its folder by an advisory lock on this file for its whole
 * life. The kernel drops the lock when the owner dies, and every process
 * that sees the file sees the lock, whatever PID namespace it is in: a
 * PID written in a file means nothing to a locklab in a container or an
 * `unshare -p` sharing the temp folder, which would take every live run's
 * folder for an orphan. The PID inside is for people only. */
#define OWNER_FILE CLUSTER_OWNER_FILE

/* The kernel's start time of a live pid (clock ticks since boot); 0 when
 * it is gone or a zombie (an orphan waits for init to reap it, and some
 * inits take their time), 1 when /proc cannot tell. With the pid it names
 * one process, even after the pid is reused. */
unsigned long long cluster_process_start(pid_t pid)
{
    char path[64], buf[1024] = "";
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return kill(pid, 0) == 0 || errno == EPERM ? 1 : 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name in field 2 may hold spaces: count from its ')' */
    const char *p = strrchr(buf, ')');
    if (p == NULL || p[1] == '\0' || p[2] == 'Z' || p[2] == 'X')
        return 0;
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    unsigned long long t = 1;
    if (p == NULL || sscanf(p + 1, "%llu", &t) != 1)
        return 1;
    return t;
}

/* A locklab-XXXXXX folder whose owner is gone: what a SIGKILLed run left
 * (its servers died with it, PR_SET_PDEATHSIG). Removed while its lock is
 * held here, so two sweeps never race, and no live run's folder is
 * touched: its lock cannot be taken. One without the file is another
 * run's in the instant before its lock file got its name (make_root), or
 * an older locklab's: left alone. */
void cluster_remove_if_orphaned(const char *dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/" OWNER_FILE, dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        cluster_remove_tree(dir);
    close(fd);
}

static void sweep_orphans(const char *tmp)
{
    DIR *d = opendir(tmp);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char dir[PATH_MAX + 32];
        if (strncmp(e->d_name, "locklab-", 8) != 0 || strlen(e->d_name) != 14)
            continue; /* only mkdtemp's names: never a user's cluster --dir */
        snprintf(dir, sizeof(dir), "%.*s/%.14s", PATH_MAX - 1, tmp, e->d_name);
        cluster_remove_if_orphaned(dir);
    }
    closedir(d);
}

/* The owner file, locked before it takes its name: a sweep that sees the
 * name always finds it locked. The descriptor stays open (close-on-exec,
 * so no server inherits it) until cluster_stop. -1 with errno set. */
static int own_root(const char *root)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s/" OWNER_FILE ".new", root);
    snprintf(path, sizeof(path), "%s/" OWNER_FILE, root);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 || write(fd, pid, (size_t)n) != n ||
        rename(tmp, path) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    return fd;
}

static int make_root(struct cluster *c, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && tmp[0] ? tmp : "/tmp";
    sweep_orphans(tmp);
    snprintf(c->root, sizeof(c->root), "%s/locklab-XXXXXX", tmp);
    if (mkdtemp(c->root) == NULL) {
        snprintf(err, errlen, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
        c->root[0] = '\0';
        return -1;
    }
    c->root_lock = own_root(c->root);
    if (c->root_lock < 0) {
        snprintf(err, errlen, "cannot lock %s/" OWNER_FILE ": %s", c->root, strerror(errno));
        cluster_remove_tree(c->root);
        c->root[0] = '\0';
        return -1;
    }
    c->janitor = janitor_start(c->root);
    return 0;
}

/* Where the users' shared folders live: /var/tmp, which every user may
 * pass through whatever TMPDIR says; /tmp where there is none. (/var/tmp
 * outlives a reboot: what a machine's crash left there has no owner any
 * more, and the next run's sweep takes it.) */
static const char *shared_base(void)
{
    struct stat st;
    return stat("/var/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/var/tmp" : "/tmp";
}

#define SHARED_NAME_LEN 16 /* a run's shared folder: 16 hex digits */

/* FNV-1a of the run folder's path: the shared folder's name follows from
 * the run folder's alone, so the janitor finds it whatever is left. */
void cluster_shared_path(const char *root, char *buf, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)root; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    snprintf(buf, len, "%s/locklab-%u/%016llx", shared_base(), (unsigned)getuid(),
             (unsigned long long)h);
}

/* The user's folder of shared folders, 0711: made, or one of the user's
 * own taken (another user could have made it first in /var/tmp, mode
 * 1777: never used then). 0, or -1 with err set. */
static int user_folder(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(dir, 0711) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        snprintf(err, errlen, "%s is not a folder of this user's (uid %u): not used", dir,
                 (unsigned)getuid());
        return -1;
    }
    if ((st.st_mode & 07777) != 0711 && chmod(dir, 0711) < 0) {
        snprintf(err, errlen, "chmod 0711 %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The shared folders of runs whose owner is gone (killed with no janitor,
 * or abandoned and then the janitor killed too). */
static void sweep_shared(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        char path[PATH_MAX];
        if (strlen(e->d_name) != SHARED_NAME_LEN ||
            strspn(e->d_name, "0123456789abcdef") != SHARED_NAME_LEN)
            continue;
        /* the name is SHARED_NAME_LEN hex digits, checked above */
        snprintf(path, sizeof(path), "%.*s/%.*s", PATH_MAX - 64, dir, SHARED_NAME_LEN, e->d_name);
        cluster_remove_if_orphaned(path);
    }
    closedir(d);
}

int cluster_shared_dir(struct cluster *c, char *dir, size_t len, char *err, size_t errlen)
{
    if (c->shared[0]) {
        snprintf(dir, len, "%s", c->shared);
        return 0;
    }
    if (c->root[0] == '\0' && make_root(c, err, errlen) < 0)
        return -1;
    char path[sizeof(c->shared)], user[sizeof(c->shared)];
    cluster_shared_path(c->root, path, sizeof(path));
    snprintf(user, sizeof(user), "%.*s", (int)(strrchr(path, '/') - path), path);
    if (user_folder(user, err, errlen) < 0)
        return -1;
    sweep_shared(user);
    if (mkdir(path, 0711) < 0) {
        snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
        return -1;
    }
    c->shared_lock = own_root(path);
    if (c->shared_lock < 0 || chmod(path, 0711) < 0) {
        snprintf(err, errlen, "cannot own %s: %s", path, strerror(errno));
        if (c->shared_lock >= 0)
            close(c->shared_lock);
        cluster_remove_tree(path);
        return -1;
    }
    snprintf(c->shared, sizeof(c->shared), "%s", path);
    snprintf(dir, len, "%s", path);
    return 0;
}

/* The next slot of c, its folder <in>/<kind>-<i>; with a link to it
 * from <root>/<kind>-<i> when in is not root. */
static int place(struct cluster *c, struct managed_server *s, char *err, size_t errlen);

static struct managed_server *add_server(struct cluster *c, const struct server_kind *kind,
                                         const char *in, char *err, size_t errlen)
{
    struct managed_server *s = &c->srv[c->n];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    snprintf(s->addr, sizeof(s->addr), "127.0.0.1");
    if (c->n_hosts > 0 && place(c, s, err, errlen) < 0)
        return NULL;
    s->aof = c->keep_data && kind->durable_mode != NULL;
    if (kind->clock_movable)
        snprintf(s->preload, sizeof(s->preload), "%s", c->clock_preload);
    char dir[sizeof(s->dir)];
    snprintf(dir, sizeof(dir), "%.*s/%s-%zu", (int)(sizeof(dir) - 40), in, kind->name, c->n);
    memcpy(s->dir, dir, sizeof(dir));
    if (mkdir(s->dir, 0700) < 0) {
        snprintf(err, errlen, "mkdir %s: %s", s->dir, strerror(errno));
        return NULL;
    }
    if (in != c->root) {
        char link[sizeof(c->root) + 64];
        snprintf(link, sizeof(link), "%s/%s-%zu", c->root, kind->name, c->n);
        if (symlink(s->dir, link) < 0) {
            snprintf(err, errlen, "symlink %s: %s", link, strerror(errno));
            rmdir(s->dir);
            return NULL;
        }
    }
    c->n++;
    return s;
}

struct managed_server *cluster_add_server(struct cluster *c, const struct server_kind *kind,
                                          char *err, size_t errlen)
{
    if (c->n >= CLUSTER_MAX_SERVERS) {
        snprintf(err, errlen, "at most %d managed servers", CLUSTER_MAX_SERVERS);
        return NULL;
    }
    if (c->root[0] == '\0' && make_root(c, err, errlen) < 0)
        return NULL;
    return add_server(c, kind, c->root, err, errlen);
}

struct managed_server *cluster_add_shared_server(struct cluster *c, const struct server_kind *kind,
                                                 char *err, size_t errlen)
{
    char shared[sizeof(c->shared)];
    if (c->n >= CLUSTER_MAX_SERVERS) {
        snprintf(err, errlen, "at most %d managed servers", CLUSTER_MAX_SERVERS);
        return NULL;
    }
    if (cluster_shared_dir(c, shared, sizeof(shared), err, errlen) < 0)
        return NULL;
    return add_server(c, kind, c->shared, err, errlen);
}

/* s on the next host for its kind, as Jepsen places one database per
 * node: the kind's k-th server on host k (modulo their count). Its clock
 * stays the host's own (no preload there yet). */
static int place(struct cluster *c, struct managed_server *s, char *err, size_t errlen)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        k += c->srv[i].kind == s->kind;
    struct fleet_host *h = &c->hosts[k % c->n_hosts];
    if (remote_fits(h, s->kind, err, errlen) < 0)
        return -1;
    s->host = h;
    snprintf(s->addr, sizeof(s->addr), "%s", h->addr);
    s->preload[0] = '\0';
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "r");
    if (in == NULL)
        return -1;
    FILE *out = fopen(to, "w");
    char buf[8192];
    size_t n;
    int ok = out != NULL;
    while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

const char *cluster_node_name(const struct server_kind *kind, size_t nth, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%zu", kind->node_prefix, nth);
    return buf;
}

const char *cluster_server_name(const struct cluster *c, size_t i, char *buf, size_t len)
{
    size_t nth = 1;
    for (size_t j = 0; j < i; j++)
        nth += c->srv[j].kind == c->srv[i].kind;
    return cluster_node_name(c->srv[i].kind, nth, buf, len);
}

/* The log keeps the server's name, not its slot: a slot counts every kind
 * (postgres-7 after seven others), and faults and reports say pg-1. */
int cluster_keep_log(const char *root, const struct server_kind *kind, size_t i, const char *name,
                     const char *logs_dir)
{
    char from[400], to[600];
    snprintf(from, sizeof(from), "%s/%s-%zu/%s", root, kind->name, i, kind->log);
    snprintf(to, sizeof(to), "%s/%s.log", logs_dir, name);
    return copy_file(from, to);
}

static void keep_logs(const struct cluster *c, const char *logs_dir)
{
    if (c->n == 0)
        return; /* external servers only: no log, no empty folder */
    if (mkdir(logs_dir, 0755) < 0 && errno != EEXIST)
        return;
    for (size_t i = 0; i < c->n; i++) {
        char name[64], to[600];
        cluster_server_name(c, i, name, sizeof(name));
        snprintf(to, sizeof(to), "%s/%s.log", logs_dir, name);
        if (c->srv[i].host) /* fetched from its host: its folder goes with the run's */
            remote_fetch(&c->srv[i], c->srv[i].kind->log, to);
        else
            cluster_keep_log(c->root, c->srv[i].kind, i, name, logs_dir);
    }
}

/* The run's folder, and its shared one, off every host it was given. */
static void clear_hosts(const struct cluster *c)
{
    char table[128], err[256];
    netfilter_table(c->root, table, sizeof(table));
    for (size_t h = 0; h < c->n_hosts; h++) {
        if (c->root[0] && c->netfilter)
            remote_nft(&c->hosts[h], table, NULL, err, sizeof(err)); /* a cut in force */
        if (c->root[0])
            remote_remove_dir(&c->hosts[h], c->root);
        if (c->shared[0])
            remote_remove_dir(&c->hosts[h], c->shared);
    }
}

void cluster_stop(struct cluster *c, const char *logs_dir)
{
    for (size_t i = 0; i < c->n; i++)
        spawn_stop_clean(&c->srv[i]);
    if (logs_dir)
        keep_logs(c, logs_dir);
    clear_hosts(c);
    if (c->netfilter && c->root[0] && netfilter_clear(c->root) == 0)
        c->netfilter = false;
    if (c->shared[0]) {
        /* first: once the run folder's lock goes, the janitor takes a
         * shared folder still there for one abandoned */
        cluster_remove_tree(c->shared);
        close(c->shared_lock);
        c->shared[0] = '\0';
    }
    if (c->root[0])
        cluster_remove_tree(c->root);
    if (c->root[0]) {
        close(c->root_lock);      /* after the removal: no sweep takes it half gone */
        janitor_reap(c->janitor); /* it wakes, finds the folder gone, ends */
        c->janitor = 0;
    }
    c->root[0] = '\0';
    c->n = 0;
}

int cluster_alive(struct cluster *c, size_t i)
{
    int status, alive;
    cluster_lock();
    /* one a fault took down is not dead: the nemesis brings it back */
    if (i >= c->n || c->srv[i].killed)
        alive = i < c->n;
    else
        alive = c->srv[i].pid > 0 && !spawn_reap(&c->srv[i], &status);
    cluster_unlock();
    return alive;
}
