/* test_hosts.c - the hosts inventory (sim/fleet/hosts.h) with exact
 * expected values: every field of a realistic Ansible INI inventory
 * (groups, children, :vars and their precedence, ranges, quotes, comments)
 * and of a JSON list; --nodes items; and each refusal with its whole
 * message, file:line:column for INI, the JSON path for JSON. The files
 * are written into a temporary folder the test works in, so messages name
 * them as a user would ("hosts.ini:7:12: ...").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fleet/hosts.h"
#include "tests/lib/scratch.h"

static char root[256], back[512];
static struct host_list list;
static char err[512];

static int make_root(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "%s/locklab-hosts-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(root) == NULL || getcwd(back, sizeof(back)) == NULL || chdir(root) < 0)
        return -1;
    /* ~ in a key is this home */
    return setenv("HOME", "/home/tester", 1);
}

static int remove_root(void **state)
{
    (void)state;
    if (chdir(back) < 0)
        return -1;
    scratch_remove("test_hosts", root);
    return 0;
}

static void file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Load text written as name with no defaults: 0 or -1, err set. */
static int load(const char *name, const char *text)
{
    file(name, text);
    memset(&list, 0x5a, sizeof(list));
    err[0] = '\0';
    return hosts_load(name, NULL, &list, err, sizeof(err));
}

static void refused(const char *name, const char *text, const char *message)
{
    assert_int_equal(load(name, text), -1);
    assert_string_equal(err, message);
    assert_int_equal(list.n, 0);
}

static void host_is(size_t i, const char *name, const char *address, int port, const char *user,
                    const char *key, const char *groups)
{
    char joined[HOST_GROUPS_MAX * 64] = "";
    assert_true(i < list.n);
    const struct host_spec *h = &list.host[i];
    assert_string_equal(h->name, name);
    assert_string_equal(h->address, address);
    assert_int_equal(h->port, port);
    assert_string_equal(h->user, user);
    assert_string_equal(h->key, key);
    for (size_t g = 0; g < h->n_groups; g++)
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s", g ? "," : "",
                 h->groups[g]);
    assert_string_equal(joined, groups);
}

static const char realistic[] = "# locklab's lock servers, as ops keep them\n"
                                "; the staging box, outside every group\n"
                                "n0 ansible_host=10.0.0.10\n"
                                "\n"
                                "[redis]   # the masters\n"
                                "n1 ansible_host=10.0.0.11 ansible_port=2201\n"
                                "n2 ansible_host=\"10.0.0.12\"   # the quiet one\n"
                                "web[01:02] ansible_user='ops' rack=r7\n"
                                "\n"
                                "[etcd]\n"
                                "n1\n"
                                "e[a:b].lab ansible_ssh_user=etcd ansible_connection=ssh\n"
                                "\n"
                                "[db:children]\n"
                                "redis\n"
                                "etcd  # both stores\n"
                                "\n"
                                "[db:vars]\n"
                                "ansible_port=2222\n"
                                "ansible_ssh_private_key_file=~/.ssh/lab\n"
                                "\n"
                                "[redis:vars]\n"
                                "ansible_user = redis\n"
                                "ansible_become=true\n"
                                "note=a user's own # variable, ignored\n"
                                "\n"
                                "[all:vars]\n"
                                "ansible_user=admin\n"
                                "ansible_port=2200\n";

/* all < db < etcd, redis by depth then name: a host's own var wins, then
 * the deeper group, then the later name, then all:vars. */
static void a_realistic_ini_inventory(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", realistic), 0);
    assert_int_equal(list.n, 7);
    host_is(0, "n0", "10.0.0.10", 2200, "admin", "", "ungrouped");
    host_is(1, "n1", "10.0.0.11", 2201, "redis", "/home/tester/.ssh/lab", "redis,etcd,db");
    host_is(2, "n2", "10.0.0.12", 2222, "redis", "/home/tester/.ssh/lab", "redis,db");
    host_is(3, "web01", "web01", 2222, "ops", "/home/tester/.ssh/lab", "redis,db");
    host_is(4, "web02", "web02", 2222, "ops", "/home/tester/.ssh/lab", "redis,db");
    host_is(5, "ea.lab", "ea.lab", 2222, "etcd", "/home/tester/.ssh/lab", "etcd,db");
    host_is(6, "eb.lab", "eb.lab", 2222, "etcd", "/home/tester/.ssh/lab", "etcd,db");
    assert_ptr_equal(hosts_find(&list, "web02"), &list.host[4]);
    assert_null(hosts_find(&list, "web03"));
    assert_null(hosts_find(&list, "N1"));
}

static void defaults_fill_what_the_file_leaves(void **state)
{
    (void)state;
    const struct host_defaults d = {.user = "deploy", .key = "~/.ssh/k", .port = 2022};
    file("hosts.ini", "[g]\nn1\nn2 ansible_user=ops ansible_private_key_file=/keys/n2\n");
    assert_int_equal(hosts_load("hosts.ini", &d, &list, err, sizeof(err)), 0);
    assert_int_equal(list.n, 2);
    host_is(0, "n1", "n1", 2022, "deploy", "/home/tester/.ssh/k", "g");
    host_is(1, "n2", "n2", 2022, "ops", "/keys/n2", "g");
    assert_int_equal(load("hosts.ini", "n1\n"), 0);
    host_is(0, "n1", "n1", 22, "root", "", "ungrouped");
}

static void the_older_variable_names(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "n1 ansible_ssh_host=h1 ansible_ssh_port=2 "
                                       "ansible_ssh_user=u ansible_private_key_file=~root/id\n"),
                     0);
    host_is(0, "n1", "h1", 2, "u", "/root/id", "ungrouped");
}

/* Ansible's ranges: inclusive, leading zeros kept, letters, a step, and
 * more than one range in a name. */
static void ranges(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "db-[a:b]-[8:10]\nw[001:007:3]\nx[:1]\n"), 0);
    assert_int_equal(list.n, 11);
    const char *names[] = {"db-a-8", "db-a-9", "db-a-10", "db-b-8", "db-b-9", "db-b-10",
                           "w001",   "w004",   "w007",    "x0",     "x1"};
    for (size_t i = 0; i < 11; i++)
        assert_string_equal(list.host[i].name, names[i]);
}

/* "name:port" on a host line; an ansible_port beside it wins. */
static void a_port_after_the_name(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "[g]\nn1:2201\nn[2:3]:2202\nn4:2203 ansible_port=2204\n"),
                     0);
    assert_int_equal(list.n, 4);
    host_is(0, "n1", "n1", 2201, "root", "", "g");
    host_is(1, "n2", "n2", 2202, "root", "", "g");
    host_is(2, "n3", "n3", 2202, "root", "", "g");
    host_is(3, "n4", "n4", 2204, "root", "", "g");
}

/* shlex's rules, as Ansible splits a host line. */
static void quotes_and_comments(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "  ; indented comment\n"
                                       "n1 ansible_ssh_private_key_file='/k/my key' x=\"a b\"\n"
                                       "n2 ansible_host=h#2 comment\n"
                                       "n3 ansible_ssh_private_key_file=\"/k/\\\"q\\\"\"\n"
                                       "n4 ansible_user=o\\ps\r\n"
                                       "[g:vars]   # trailing comment\n"
                                       "ansible_ssh_private_key_file = \"/k/g key\"  # why\n"
                                       "[g]\n"
                                       "n5\n"),
                     0);
    assert_int_equal(list.n, 5);
    host_is(0, "n1", "n1", 22, "root", "/k/my key", "ungrouped");
    host_is(1, "n2", "h", 22, "root", "", "ungrouped");
    host_is(2, "n3", "n3", 22, "root", "/k/\"q\"", "ungrouped");
    host_is(3, "n4", "n4", 22, "ops", "", "ungrouped");
    host_is(4, "n5", "n5", 22, "root", "/k/g key", "g");
}

/* One host in several groups: its vars merged, the same value twice is no
 * conflict, and a host in ungrouped and another group is not ungrouped. */
static void one_host_in_several_groups(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "n1 ansible_host=10.0.0.1\n"
                                       "[a]\n"
                                       "n1 ansible_port=2201\n"
                                       "[b]\n"
                                       "n1 ansible_user=ops ansible_host=10.0.0.1\n"),
                     0);
    assert_int_equal(list.n, 1);
    host_is(0, "n1", "10.0.0.1", 2201, "ops", "", "a,b");
}

/* Siblings at one depth: the later name wins, whatever the file order;
 * a grandchild beats both. */
static void group_vars_precedence(void **state)
{
    (void)state;
    assert_int_equal(load("hosts.ini", "[b]\nn1\n[a]\nn1\nn2\n[top:children]\na\n[mid:children]\n"
                                       "b\n[top2:children]\nmid\n"
                                       "[b:vars]\nansible_user=from_b\n"
                                       "[a:vars]\nansible_user=from_a\nansible_port=1\n"
                                       "[top:vars]\nansible_port=2\nansible_host=top\n"
                                       "[all:vars]\nansible_host=all\n"),
                     0);
    assert_int_equal(list.n, 2);
    /* depths: top 1, a 2, top2 1, mid 2, b 3 */
    host_is(0, "n1", "top", 1, "from_b", "", "b,a,top,mid,top2");
    host_is(1, "n2", "top", 1, "from_a", "", "a,top");
}

static void a_json_inventory(void **state)
{
    (void)state;
    assert_int_equal(
        load("hosts.json",
             "[\n"
             "  \"n1\",\n"
             "  \"ops@10.0.0.5:2201\",\n"
             "  {\"name\": \"n3\", \"address\": \"10.0.0.3\", \"port\": 2203,\n"
             "   \"user\": \"deploy\", \"key\": \"~/.ssh/lab\", \"groups\": [\"redis\", "
             "\"db\"]},\n"
             "  {\"address\": \"fe80::1\"},\n"
             "  {\"name\": \"n5\", \"groups\": []}\n"
             "]\n"),
        0);
    assert_int_equal(list.n, 5);
    host_is(0, "n1", "n1", 22, "root", "", "");
    host_is(1, "10.0.0.5", "10.0.0.5", 2201, "ops", "", "");
    host_is(2, "n3", "10.0.0.3", 2203, "deploy", "/home/tester/.ssh/lab", "redis,db");
    host_is(3, "fe80::1", "fe80::1", 22, "root", "", "");
    host_is(4, "n5", "n5", 22, "root", "", "");
}

static void nodes_items(void **state)
{
    (void)state;
    const struct host_defaults d = {.user = "deploy", .key = "/k/id", .port = 2022};
    assert_int_equal(hosts_from_nodes("n1,root@10.0.0.5:2222, ops@n3 ,[fe80::1]:2201,fe80::2", &d,
                                      &list, err, sizeof(err)),
                     0);
    assert_int_equal(list.n, 5);
    host_is(0, "n1", "n1", 2022, "deploy", "/k/id", "");
    host_is(1, "10.0.0.5", "10.0.0.5", 2222, "root", "/k/id", "");
    host_is(2, "n3", "n3", 2022, "ops", "/k/id", "");
    host_is(3, "fe80::1", "fe80::1", 2201, "deploy", "/k/id", "");
    host_is(4, "fe80::2", "fe80::2", 2022, "deploy", "/k/id", "");
}

static void nodes_refused(const char *csv, const char *message)
{
    memset(&list, 0x5a, sizeof(list));
    assert_int_equal(hosts_from_nodes(csv, NULL, &list, err, sizeof(err)), -1);
    assert_string_equal(err, message);
    assert_int_equal(list.n, 0);
}

static void nodes_errors(void **state)
{
    (void)state;
    nodes_refused("n1,,n2", "--nodes: item 2 (\"\"): empty");
    nodes_refused("n1,n2,n1", "--nodes: item 3 (\"n1\"): n1 is item 1 already");
    nodes_refused("n1,root@n2:ssh", "--nodes: item 2 (\"root@n2:ssh\"): \"ssh\": not a port (a "
                                    "number from 1 to 65535)");
    nodes_refused("-oProxyCommand=x",
                  "--nodes: item 1 (\"-oProxyCommand=x\"): \"-oProxyCommand=x\": "
                  "not a valid address (starts with '-')");
    nodes_refused("a b@n1", "--nodes: item 1 (\"a b@n1\"): \"a b\": not a valid user (letters, "
                            "digits, '.', '-' and '_')");
    nodes_refused("[fe80::1", "--nodes: item 1 (\"[fe80::1\"): '[' without ']'");
    nodes_refused("  ", "--nodes: no hosts");
    nodes_refused("n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12,n13,n14,n15,n16,n17",
                  "--nodes: item 17 (\"n17\"): more than 16 hosts");
    const struct host_defaults d = {.port = 70000};
    assert_int_equal(hosts_from_nodes("n1", &d, &list, err, sizeof(err)), -1);
    assert_string_equal(err, "--ssh-port 70000: not a port (a number from 1 to 65535)");
}

static void passwords_are_refused(void **state)
{
    (void)state;
    refused("hosts.ini", "[g]\nn1 ansible_host=a ansible_ssh_pass=secret\n",
            "hosts.ini:2:19: ansible_ssh_pass: passwords are not read: use a key "
            "(ansible_ssh_private_key_file)");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_become_password=secret\n",
            "hosts.ini:4:1: ansible_become_password: passwords are not read: use a key "
            "(ansible_ssh_private_key_file)");
    refused("hosts.ini", "n1 ansible_password=x\n",
            "hosts.ini:1:4: ansible_password: passwords are not read: use a key "
            "(ansible_ssh_private_key_file)");
}

static void bad_ports(void **state)
{
    (void)state;
    refused("hosts.ini", "[g]\nn1 ansible_port=22x\n",
            "hosts.ini:2:17: ansible_port: \"22x\": not a port (a number from 1 to 65535)");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_ssh_port = 65536\n",
            "hosts.ini:4:20: ansible_ssh_port: 65536: not a port (a number from 1 to 65535)");
    refused("hosts.ini", "n1:0\n",
            "hosts.ini:1:4: ansible_port: 0: not a port (a number from 1 to "
            "65535)");
}

static void an_empty_address(void **state)
{
    (void)state;
    refused("hosts.ini", "n1 ansible_host=\"\"\n", "hosts.ini:1:17: ansible_host: empty address");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_host=\n",
            "hosts.ini:4:14: ansible_host: empty address");
}

static void one_name_two_addresses(void **state)
{
    (void)state;
    refused("hosts.ini", "[a]\nn1 ansible_host=10.0.0.1\n[b]\nn1 ansible_host=10.0.0.2\n",
            "hosts.ini:4:17: n1: ansible_host=10.0.0.2 here, ansible_host=10.0.0.1 at line 2");
    refused("hosts.ini", "[a]\nn1 ansible_port=1\n[b]\nn1 ansible_ssh_port=2\n",
            "hosts.ini:4:21: n1: ansible_ssh_port=2 here, ansible_port=1 at line 2");
}

static void too_many_hosts(void **state)
{
    (void)state;
    refused("hosts.ini", "[g]\nn[1:17]\n", "hosts.ini:2:2: more than 16 hosts");
    refused("hosts.ini", "a[1:8]\nb[1:8]\nc\n", "hosts.ini:3:1: more than 16 hosts");
    refused("hosts.ini", "a[1:2][1:9]\n", "hosts.ini:1:1: more than 16 hosts");
}

static void unterminated(void **state)
{
    (void)state;
    refused("hosts.ini", "[g]\nn1 ansible_user='ops\n", "hosts.ini:2:17: unterminated quote (')");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_user=\"ops\n",
            "hosts.ini:4:14: unterminated quote (\")");
    refused("hosts.ini", "n1\n  [web\n", "hosts.ini:2:3: unterminated section header (no ']')");
    refused("hosts.ini", "n1 ansible_user=ops\\", "hosts.ini:1:20: a backslash ends the line");
}

static void bad_sections(void **state)
{
    (void)state;
    refused("hosts.ini", "[g:foo]\nn1\n",
            "hosts.ini:1:4: [g:foo]: unknown section type \"foo\" (children, hosts, vars)");
    refused("hosts.ini", "[web servers]\nn1\n",
            "hosts.ini:1:2: section \"web servers\": not a valid group name (letters, digits, "
            "'.', '-' and '_')");
    refused("hosts.ini", "[g] x\nn1\n", "hosts.ini:1:5: text after the section header");
    refused("hosts.ini", "[g]\nn1\n[dbs:vars]\nansible_user=x\n",
            "hosts.ini:3:1: [dbs:vars] is for dbs, a group this file never declares ([dbs] or "
            "[dbs:children])");
    refused("hosts.ini", "[g]\nn1\n[prod:children]\ng\ndbx\n",
            "hosts.ini:5:1: [prod:children] names dbx, a group this file never declares ([dbx] "
            "or [dbx:children])");
    refused("hosts.ini", "[a]\nn1\n[b:children]\na\n[a:children]\nb\n",
            "hosts.ini:6:1: b: a child of a, which descends from b (a cycle)");
}

static void only_ssh(void **state)
{
    (void)state;
    refused("hosts.ini", "[g]\nn1 ansible_connection=local\n",
            "hosts.ini:2:23: ansible_connection=local: locklab reaches its hosts over ssh");
    refused("hosts.ini", "[g]\nn1\n[all:vars]\nansible_connection=winrm\n",
            "hosts.ini:4:20: ansible_connection=winrm: locklab reaches its hosts over ssh");
}

static void bad_host_lines(void **state)
{
    (void)state;
    refused("hosts.ini", "n$1\n",
            "hosts.ini:1:1: host \"n$1\": not a valid name (letters, digits, '.', '-' and '_')");
    refused("hosts.ini", "n1 ansible_host 10.0.0.1\n",
            "hosts.ini:1:4: expected key=value, got \"ansible_host\"");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_user\n",
            "hosts.ini:4:1: expected key=value, got \"ansible_user\"");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_host=10.0.0.1 # primary\n",
            "hosts.ini:4:14: ansible_host: '#' in an unquoted :vars value, which Ansible reads "
            "to the line's end: quote the value or put the comment on a line of its own");
    refused("hosts.ini", "n1 ansible_user=\"a b\"\n",
            "hosts.ini:1:17: ansible_user: \"a b\": not a valid user (letters, digits, '.', '-' "
            "and '_')");
    refused("hosts.ini", "[g]\nn1\n[g:vars]\nansible_user='ops' x\n",
            "hosts.ini:4:20: text after the closing quote");
}

static void bad_ranges(void **state)
{
    (void)state;
    refused("hosts.ini", "web[01:3]\n",
            "hosts.ini:1:4: [01:3]: a begin with a leading zero and its end have the same width");
    refused("hosts.ini", "web[3:1]\n", "hosts.ini:1:4: [3:1]: the range ends before it begins");
    refused("hosts.ini", "web[a:3]\n",
            "hosts.ini:1:4: [a:3]: a range is of numbers or of single letters");
    refused("hosts.ini", "web[1-3]\n",
            "hosts.ini:1:4: [1-3]: a range is [begin:end] or [begin:end:step]");
    refused("hosts.ini", "web[1:3\n", "hosts.ini:1:4: web[1:3: '[' without ']' in a host name");
}

static void too_many_groups(void **state)
{
    (void)state;
    refused("hosts.ini",
            "[g1]\nn1\n[g2]\nn1\n[g3]\nn1\n[g4]\nn1\n[g5]\nn1\n[g6]\nn1\n[g7]\nn1\n"
            "[g8]\nn1\n[g9]\nn1\n",
            "hosts.ini:18:1: n1: in more than 8 groups");
    refused("hosts.ini",
            "[g1]\nn1\n[p:children]\ng1\n[q:children]\np\n[r:children]\nq\n"
            "[s:children]\nr\n[t:children]\ns\n[u:children]\nt\n[v:children]\nu\n"
            "[w:children]\nv\n",
            "hosts.ini:2:1: n1: in more than 8 groups");
}

static void no_hosts(void **state)
{
    (void)state;
    refused("hosts.ini", "# nothing yet\n[redis]\n[redis:vars]\nansible_user=x\n",
            "hosts.ini: no hosts");
    refused("hosts.json", "[ ]\n", "hosts.json: no hosts");
    refused("empty.ini", "", "empty.ini: no hosts");
    assert_int_equal(hosts_load("nope.ini", NULL, &list, err, sizeof(err)), -1);
    assert_string_equal(err, "nope.ini: cannot open: No such file or directory");
}

static void json_unknown_keys_and_types(void **state)
{
    (void)state;
    refused("hosts.json", "[\"n1\", {\"name\": \"n2\", \"adress\": \"x\"}]",
            "hosts.json: $[1].adress: unknown key (address, groups, key, name, port, user)");
    refused("hosts.json", "[\"n1\", \"n2\", {\"name\": \"n3\", \"port\": \"22\"}]",
            "hosts.json: $[2].port: expected a number from 1 to 65535, got a string");
    refused("hosts.json", "[{\"name\": \"n1\", \"port\": 0}]",
            "hosts.json: $[0].port: 0: not a port (a number from 1 to 65535)");
    refused("hosts.json", "[{\"name\": \"n1\", \"groups\": [\"a\", 2]}]",
            "hosts.json: $[0].groups[1]: expected a string, got a number");
    refused("hosts.json", "[{\"name\": \"n1\", \"groups\": \"a\"}]",
            "hosts.json: $[0].groups: expected a list of group names, got a string");
    refused("hosts.json", "[{\"name\": 1}]",
            "hosts.json: $[0].name: expected a string, got a number");
    refused("hosts.json", "[{\"user\": \"ops\"}]",
            "hosts.json: $[0]: a host needs a name or an address");
    refused("hosts.json", "[\"n1\", true]",
            "hosts.json: $[1]: expected a host (a string or an object), got a boolean");
    refused("hosts.json", "{\"hosts\": []}",
            "hosts.json: $: expected a list of hosts, got an object");
    refused("hosts.json", "[\"ops@-x\"]",
            "hosts.json: $[0]: \"-x\": not a valid address (starts with '-')");
}

static void json_duplicates_and_syntax(void **state)
{
    (void)state;
    refused("hosts.json", "[\"n1\", \"n2\", {\"name\": \"n1\", \"address\": \"10.0.0.1\"}]",
            "hosts.json: $[2]: n1 is $[0] already");
    refused("hosts.json", "[\n  \"n1\",\n  {\"name\": \"n2\",}\n]\n",
            "hosts.json:3:17: string or '}' expected near '}'");
    refused("hosts.json", "[{\"name\": \"n1\", \"name\": \"n2\"}]",
            "hosts.json:1:22: duplicate object key near '\"name\"'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_realistic_ini_inventory),
        cmocka_unit_test(defaults_fill_what_the_file_leaves),
        cmocka_unit_test(the_older_variable_names),
        cmocka_unit_test(ranges),
        cmocka_unit_test(a_port_after_the_name),
        cmocka_unit_test(quotes_and_comments),
        cmocka_unit_test(one_host_in_several_groups),
        cmocka_unit_test(group_vars_precedence),
        cmocka_unit_test(a_json_inventory),
        cmocka_unit_test(nodes_items),
        cmocka_unit_test(nodes_errors),
        cmocka_unit_test(passwords_are_refused),
        cmocka_unit_test(bad_ports),
        cmocka_unit_test(an_empty_address),
        cmocka_unit_test(one_name_two_addresses),
        cmocka_unit_test(too_many_hosts),
        cmocka_unit_test(unterminated),
        cmocka_unit_test(bad_sections),
        cmocka_unit_test(only_ssh),
        cmocka_unit_test(bad_host_lines),
        cmocka_unit_test(bad_ranges),
        cmocka_unit_test(too_many_groups),
        cmocka_unit_test(no_hosts),
        cmocka_unit_test(json_unknown_keys_and_types),
        cmocka_unit_test(json_duplicates_and_syntax),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
