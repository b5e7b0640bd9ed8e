/* netfilter.c - see netfilter.h. nft is run as a tool (spawn_run), its
 * script written to the run folder first, so a refused rule leaves its
 * reason in nft.log beside it. */
#include "sim/fleet/netfilter.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sim/fleet/spawn.h"

#define NFT_WAIT_MS 5000

static const char *nft(void)
{
    return spawn_env_or("LOCKLAB_NFT", "nft");
}

void netfilter_source(const struct managed_server *s, char *out, size_t len)
{
    /* 127.77.x.y: off 127.0.0.0/24, where other software on this machine
     * binds; the peer port's two bytes make it the node's own */
    snprintf(out, len, "127.77.%d.%d", (s->peer_port >> 8) & 0xff, s->peer_port & 0xff);
}

void netfilter_table(const char *root, char *out, size_t len)
{
    const char *base = strrchr(root, '/');
    base = base ? base + 1 : root;
    if (strncmp(base, "locklab", 7) == 0 && (base[7] == '-' || base[7] == '_'))
        base += 8; /* a run folder's own prefix, said once */
    size_t n = (size_t)snprintf(out, len, "locklab_%s", base);
    /* nft's identifiers: letters, digits and underscores */
    for (size_t i = strlen("locklab_"); i < n && i < len; i++)
        if (!isalnum((unsigned char)out[i]))
            out[i] = '_';
}

static int run_nft(const char *root, const char *const *args, size_t n)
{
    const char *argv[8] = {nft()};
    for (size_t i = 0; i < n && i < 6; i++)
        argv[i + 1] = args[i];
    char log[320];
    snprintf(log, sizeof(log), "%s/nft.log", root);
    return spawn_run(NULL, argv, log, NFT_WAIT_MS);
}

int netfilter_set(struct cluster *c, const char *rules, char *err, size_t errlen)
{
    char table[128], path[300];
    netfilter_table(c->root, table, sizeof(table));
    snprintf(path, sizeof(path), "%s/nft.rules", c->root);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    /* made if absent, so that the delete always has a table to delete:
     * the file replaces what the table held, in one transaction */
    fprintf(f,
            "table inet %s\ndelete table inet %s\ntable inet %s {\n"
            "  chain cut {\n    type filter hook output priority 0; policy accept;\n%s  }\n}\n",
            table, table, table, rules);
    fclose(f);
    c->netfilter = true; /* whatever nft made of it, the stop looks */
    const char *args[] = {"-f", path};
    int rc = run_nft(c->root, args, 2);
    if (rc != 0) {
        snprintf(err, errlen, "%s -f %s %s (needs nftables and root; see %s/nft.log)", nft(), path,
                 rc < 0 ? "did not run" : "failed", c->root);
        return -1;
    }
    return 0;
}

int netfilter_clear(const char *root)
{
    char table[128];
    netfilter_table(root, table, sizeof(table));
    const char *list[] = {"list", "table", "inet", table};
    if (run_nft(root, list, 4) != 0)
        return 0; /* none, or no nft: nothing of ours to remove */
    const char *del[] = {"delete", "table", "inet", table};
    return run_nft(root, del, 4) == 0 ? 0 : -1;
}

bool netfilter_present(const struct cluster *c)
{
    char table[128];
    netfilter_table(c->root, table, sizeof(table));
    const char *list[] = {"list", "table", "inet", table};
    return run_nft(c->root, list, 4) == 0;
}
