/* hosts.h - the machines locklab reaches over SSH, as the user lists them:
 * an inventory file ops teams already keep (Ansible's INI format, or a
 * JSON list) or --nodes on the command line.
 *
 * Only what ssh needs is read (where, which port, as whom, with which
 * key) and the groups, for faults and reports to name hosts by. What
 * locklab cannot honour is refused with a one-line message that points
 * into the file, never ignored: a password (locklab logs in with keys
 * only), a connection other than ssh. docs/hosts.md ("The inventory")
 * says what each format accepts.
 */
#ifndef LOCKLAB_HOSTS_H
#define LOCKLAB_HOSTS_H

#include <stddef.h>

#define HOSTS_MAX        16
#define HOST_GROUPS_MAX  8
#define HOSTS_PORT       22     /* ssh's port when nothing else is said */
#define HOSTS_USER       "root" /* the user when nothing else is said */
#define HOSTS_FILE_BYTES (1 << 20)

struct host_spec {
    char name[64];     /* its inventory name ("n1"), how faults and reports name it */
    char address[256]; /* where ssh and the lock's clients reach it: ansible_host, else the name */
    int port;          /* ssh port: ansible_port, else the default (22) */
    char user[64];     /* ansible_user, else the default ("root") */
    char key[512];     /* ansible_ssh_private_key_file, ~ expanded; "" = ssh's own default */
    char groups[HOST_GROUPS_MAX][64]; /* the inventory groups it is in, in file order */
    size_t n_groups;
};

struct host_list {
    struct host_spec host[HOSTS_MAX];
    size_t n;
};

struct host_defaults { /* from --ssh-user, --ssh-key, --ssh-port; NULL/0: root, "", 22 */
    const char *user;
    const char *key; /* ~ expanded here too: --ssh-key=~/k reaches us unexpanded */
    int port;
};

/* Read the inventory file at path into out (d NULL: the defaults above):
 * an Ansible INI inventory, or a JSON list of hosts, told apart by the
 * first non-blank character: '[' then blanks then '{', '"' or ']' (or a
 * first '{') is JSON, anything else INI (an INI group header is
 * "[name]"). Hosts in the order the file first names them. Returns 0, or
 * -1 with out->n = 0 and a one-line err naming the file and where:
 * "hosts.ini:7:12: ..." (line:column) for INI and for JSON syntax,
 * "hosts.json: $[2].port: ..." (a JSON path) for a JSON value. */
int hosts_load(const char *path, const struct host_defaults *d, struct host_list *out, char *err,
               size_t errlen);

/* --nodes n1,n2,n3: each item a name or address, optionally user@ and
 * :port ("root@10.0.0.5:2222", "[fe80::1]:2222"), the name being the
 * address as written; d gives the rest. Blanks around an item are
 * dropped. Returns 0, or -1 with out->n = 0 and err
 * "--nodes: item 2 (\"...\"): ...". */
int hosts_from_nodes(const char *csv, const struct host_defaults *d, struct host_list *out,
                     char *err, size_t errlen);

/* The host named name, or NULL. */
const struct host_spec *hosts_find(const struct host_list *l, const char *name);

#endif
