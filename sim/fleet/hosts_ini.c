/* hosts_ini.c - an Ansible INI inventory, read as Ansible reads it
 * (lib/ansible/plugins/inventory/ini.py): host lines split into words as
 * Python's shlex.split(comments=True) splits them, so quotes, backslashes
 * and a '#' anywhere outside quotes mean what they mean there; a :vars
 * line is one key=value with everything after '=' the value; groups,
 * children and the precedence of their vars as Ansible's (a deeper group
 * wins, then the later name, then the host's own). Only the variables ssh
 * needs are kept; the rest are users' own and ignored, except what locklab
 * cannot honour (a password, a connection other than ssh), refused.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet/hosts_parse.h"

#define INI_GROUPS_MAX 64
#define INI_EDGES_MAX  256
#define INI_LINE_MAX   4096
#define PATTERN_MAX    256 /* a host pattern, ranges and :port included */

enum var { V_HOST, V_PORT, V_USER, V_KEY, V_N };

/* The variables read, with the older names Ansible still takes. */
static const struct {
    const char *name;
    enum var var;
} read_vars[] = {
    {"ansible_host", V_HOST},
    {"ansible_ssh_host", V_HOST},
    {"ansible_port", V_PORT},
    {"ansible_ssh_port", V_PORT},
    {"ansible_user", V_USER},
    {"ansible_ssh_user", V_USER},
    {"ansible_ssh_private_key_file", V_KEY},
    {"ansible_private_key_file", V_KEY},
};

/* What ansible_connection may say: ssh, and the names Ansible gives it. */
static const char *const ssh_connections[] = {"ssh", "smart", "paramiko", "paramiko_ssh"};

struct ivar {
    bool set;
    char value[512]; /* checked; a key ~ expanded */
    char as[40];     /* the name it was written under */
    int line, col;
};

struct igroup {
    char name[64];
    bool declared;         /* by [g], [g:hosts] or [g:children] */
    int ref_line, ref_col; /* the first use while undeclared: [g:vars] or a child line */
    size_t ref_parent;     /* that child line's group, or INI_GROUPS_MAX for [g:vars] */
    struct ivar var[V_N];
    int depth; /* from all (0); -1 not yet known, -2 being worked out */
};

struct iedge {
    size_t child, parent;
    int line, col;
};

struct ihost {
    char name[64];
    int line, col;
    struct ivar var[V_N];
    size_t group[HOST_GROUPS_MAX]; /* direct, all left out */
    size_t n_groups;
};

enum section { SEC_HOSTS, SEC_VARS, SEC_CHILDREN };

struct ini {
    const char *file;
    char *err;
    size_t errlen;
    const struct hosts_base *b;
    struct igroup group[INI_GROUPS_MAX]; /* in the order the file first names them */
    size_t n_groups;
    struct iedge edge[INI_EDGES_MAX];
    size_t n_edges;
    struct ihost host[HOSTS_MAX];
    size_t n_hosts;
    int line;
    enum section sec;
    size_t cur;
};

enum { G_ALL, G_UNGROUPED };

__attribute__((format(printf, 4, 5))) static int ifail(const struct ini *p, int line, int col,
                                                       const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return hosts_fail(p->err, p->errlen, "%s:%d:%d: %s", p->file, line, col, msg);
}

/* The column of line[i], from 1, in characters (jansson's count, so INI
 * and JSON messages agree on a line holding UTF-8). */
static int column(const char *line, size_t i)
{
    int col = 1;
    for (size_t k = 0; k < i; k++)
        col += ((unsigned char)line[k] & 0xC0) != 0x80;
    return col;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The group named name, made (undeclared) at its first mention. */
static int group_at(struct ini *p, const char *name, int col, size_t *g)
{
    for (*g = 0; *g < p->n_groups; (*g)++)
        if (strcmp(p->group[*g].name, name) == 0)
            return 0;
    if (p->n_groups == INI_GROUPS_MAX)
        return ifail(p, p->line, col, "more than %d groups", INI_GROUPS_MAX);
    struct igroup *gr = &p->group[p->n_groups];
    memset(gr, 0, sizeof(*gr));
    snprintf(gr->name, sizeof(gr->name), "%s", name);
    gr->depth = -1;
    *g = p->n_groups++;
    return 0;
}

/* One word of a host line, as shlex.split(s, comments=True) reads it:
 * quotes join, a backslash outside quotes takes the next character as it
 * is (inside "..." only before '"' or '\'), and '#' outside quotes ends
 * the line, even inside a word. out[k] came from line[at[k]]. 1 a word, 0
 * none left, -1 an error. */
static int next_word(const struct ini *p, const char *line, size_t *pos, char *out, int *at,
                     int *col)
{
    size_t i = *pos, n = 0;
    while (blank(line[i]))
        i++;
    if (line[i] == '\0' || line[i] == '#')
        return 0;
    *col = column(line, i);
    while (line[i] && !blank(line[i])) {
        char c = line[i];
        if (c == '#') {
            i = strlen(line);
            break;
        }
        if (c == '\'' || c == '"') {
            size_t open = i++;
            for (; line[i] != c; i++) {
                if (line[i] == '\0')
                    return ifail(p, p->line, column(line, open), "unterminated quote (%c)", c);
                if (c == '"' && line[i] == '\\' && (line[i + 1] == '"' || line[i + 1] == '\\'))
                    i++;
                at[n] = (int)i;
                out[n++] = line[i];
            }
            i++;
            continue;
        }
        if (c == '\\' && line[++i] == '\0')
            return ifail(p, p->line, column(line, i - 1), "a backslash ends the line");
        at[n] = (int)i;
        out[n++] = line[i++];
    }
    out[n] = '\0';
    at[n] = (int)i;
    *pos = i;
    return 1;
}

/* One of the variables read, checked into v; name as written. */
static int keep_var(const struct ini *p, enum var which, const char *name, const char *value,
                    int col, struct ivar *v)
{
    char why[320];
    int port, rc = 0;
    switch (which) {
    case V_HOST:
        rc = hosts_check_address(value, why, sizeof(why));
        break;
    case V_PORT:
        rc = hosts_parse_port(value, &port, why, sizeof(why));
        break;
    case V_USER:
        rc = hosts_check_user(value, why, sizeof(why));
        break;
    case V_KEY:
        rc = hosts_expand_key(value, v->value, sizeof(v->value), why, sizeof(why));
        break;
    default:
        break;
    }
    if (rc < 0)
        return ifail(p, p->line, col, "%s: %s", name, why);
    if (which != V_KEY)
        snprintf(v->value, sizeof(v->value), "%s", value);
    snprintf(v->as, sizeof(v->as), "%s", name);
    v->set = true;
    v->line = p->line;
    v->col = col;
    return 0;
}

/* key=value into vars[] when it is one ssh needs; refused when locklab
 * cannot honour it; ignored otherwise (users keep many variables). A
 * :vars value is the rest of the line (Ansible's rule), so an unquoted
 * one with '#' in it would carry the comment into the address or path:
 * refused rather than read two ways. */
static int take_var(const struct ini *p, const char *key, const char *value, int kcol, int vcol,
                    bool vars_line, bool quoted, struct ivar *vars)
{
    if (strncmp(key, "ansible_", 8) == 0 && strstr(key, "pass"))
        return ifail(p, p->line, kcol,
                     "%s: passwords are not read: use a key (ansible_ssh_private_key_file)", key);
    if (strcmp(key, "ansible_connection") == 0) {
        for (size_t i = 0; i < sizeof(ssh_connections) / sizeof(ssh_connections[0]); i++)
            if (strcmp(value, ssh_connections[i]) == 0)
                return 0;
        return ifail(p, p->line, vcol, "ansible_connection=%s: locklab reaches its hosts over ssh",
                     value);
    }
    for (size_t i = 0; i < sizeof(read_vars) / sizeof(read_vars[0]); i++) {
        if (strcmp(key, read_vars[i].name) != 0)
            continue;
        if (vars_line && !quoted && strchr(value, '#'))
            return ifail(p, p->line, vcol,
                         "%s: '#' in an unquoted :vars value, which Ansible reads to the line's "
                         "end: quote the value or put the comment on a line of its own",
                         key);
        return keep_var(p, read_vars[i].var, key, value, vcol, &vars[read_vars[i].var]);
    }
    return 0;
}

/* Host names a pattern expands to, at most HOSTS_MAX. */
struct names {
    char name[HOSTS_MAX][64];
    size_t n;
};

static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* One range's bounds, "beg:end" or "beg:end:step", as Ansible's
 * expand_hostname_range takes them: letters (a-z then A-Z), or numbers
 * where an empty begin is 0 and a begin with a leading zero gives every
 * value its width. */
struct range {
    long beg, end, step;
    int width;  /* 0: as printed */
    bool alpha; /* beg and end index letters[] */
};

static int parse_range(const struct ini *p, char *in, int col, struct range *r)
{
    char *beg = in, *end = strchr(in, ':'), *step = NULL;
    if (end == NULL)
        return ifail(p, p->line, col, "[%s]: a range is [begin:end] or [begin:end:step]", in);
    *end++ = '\0';
    if ((step = strchr(end, ':')) != NULL)
        *step++ = '\0';
    *r = (struct range){.step = 1};
    if (step &&
        (step[0] == '\0' || strlen(step) > 4 || strspn(step, "0123456789") != strlen(step) ||
         (r->step = strtol(step, NULL, 10)) < 1))
        return ifail(p, p->line, col, "[%s:%s:%s]: the step is a number from 1", beg, end, step);
    if (strlen(beg) == 1 && strlen(end) == 1 && strchr(letters, beg[0]) &&
        strchr(letters, end[0])) {
        r->alpha = true;
        r->beg = strchr(letters, beg[0]) - letters;
        r->end = strchr(letters, end[0]) - letters;
    } else if (strspn(beg, "0123456789") == strlen(beg) && end[0] &&
               strspn(end, "0123456789") == strlen(end) && strlen(beg) < 10 && strlen(end) < 10) {
        if (beg[0] == '0' && beg[1] && strlen(beg) != strlen(end))
            return ifail(p, p->line, col,
                         "[%s:%s]: a begin with a leading zero and its end have the same width",
                         beg, end);
        r->width = beg[0] == '0' && beg[1] ? (int)strlen(beg) : 0;
        r->beg = strtol(beg, NULL, 10);
        r->end = strtol(end, NULL, 10);
    } else {
        return ifail(p, p->line, col, "[%s:%s]: a range is of numbers or of single letters", beg,
                     end);
    }
    if (r->beg > r->end)
        return ifail(p, p->line, col, "[%s:%s]: the range ends before it begins", beg, end);
    if ((r->end - r->beg) / r->step + 1 > HOSTS_MAX)
        return ifail(p, p->line, col, "more than %d hosts", HOSTS_MAX);
    return 0;
}

/* pat with its ranges expanded into out, left to right (Ansible expands
 * the first range, then each result's next). col: pat's first column. */
static int expand(const struct ini *p, const char *pat, int col, struct names *out)
{
    char head[PATTERN_MAX], inner[PATTERN_MAX];
    const char *open = strchr(pat, '['), *close = open ? strchr(open, ']') : NULL;
    struct range r = {0};
    if (open == NULL) {
        char why[320];
        if (hosts_check_name(pat, why, sizeof(why)) < 0)
            return ifail(p, p->line, col, "host %s", why);
        if (out->n == HOSTS_MAX)
            return ifail(p, p->line, col, "more than %d hosts", HOSTS_MAX);
        snprintf(out->name[out->n++], sizeof(out->name[0]), "%s", pat);
        return 0;
    }
    int at = col + (int)(open - pat);
    if (close == NULL)
        return ifail(p, p->line, at, "%s: '[' without ']' in a host name", pat);
    snprintf(inner, sizeof(inner), "%.*s", (int)(close - open - 1), open + 1);
    if (parse_range(p, inner, at, &r) < 0)
        return -1;
    for (long v = r.beg; v <= r.end; v += r.step) {
        if (r.alpha)
            snprintf(head, sizeof(head), "%.*s%c%s", (int)(open - pat), pat, letters[v], close + 1);
        else
            snprintf(head, sizeof(head), "%.*s%0*ld%s", (int)(open - pat), pat, r.width, v,
                     close + 1);
        if (expand(p, head, col, out) < 0)
            return -1;
    }
    return 0;
}

/* "name:port": the port is after the last ':' outside a range. */
static int pattern_port(const struct ini *p, char *pat, int col, struct ivar *port)
{
    char *colon = NULL;
    int depth = 0;
    for (char *c = pat; *c; c++) {
        depth += (*c == '[') - (*c == ']');
        if (*c == ':' && depth == 0)
            colon = c;
    }
    if (colon == NULL)
        return 0;
    *colon = '\0';
    return keep_var(p, V_PORT, "ansible_port", colon + 1, col + (int)(colon + 1 - pat), port);
}

/* The host named name, made at its first line. */
static int host_at(struct ini *p, const char *name, int col, struct ihost **h)
{
    for (size_t i = 0; i < p->n_hosts; i++)
        if (strcmp(p->host[i].name, name) == 0)
            return *h = &p->host[i], 0;
    if (p->n_hosts == HOSTS_MAX)
        return ifail(p, p->line, col, "more than %d hosts", HOSTS_MAX);
    *h = &p->host[p->n_hosts++];
    memset(*h, 0, sizeof(**h));
    snprintf((*h)->name, sizeof((*h)->name), "%s", name);
    (*h)->line = p->line;
    (*h)->col = col;
    return 0;
}

/* A host named on several lines is one host in several groups, its vars
 * merged; but one that two lines send to two addresses (ports, users,
 * keys) is two machines under one name: refused. */
static int merge_host(struct ini *p, struct ihost *h, const struct ivar *vars, int col)
{
    for (int v = 0; v < V_N; v++) {
        const struct ivar *was = &h->var[v], *now = &vars[v];
        if (now->set && was->set && was->line != now->line && strcmp(was->value, now->value))
            return ifail(p, p->line, now->col, "%s: %s=%s here, %s=%s at line %d", h->name, now->as,
                         now->value, was->as, was->value, was->line);
        if (now->set)
            h->var[v] = *now;
    }
    if (p->cur == G_ALL)
        return 0; /* every host is in all */
    for (size_t i = 0; i < h->n_groups; i++)
        if (h->group[i] == p->cur)
            return 0;
    if (h->n_groups == HOST_GROUPS_MAX)
        return ifail(p, p->line, col, "%s: in more than %d groups", h->name, HOST_GROUPS_MAX);
    h->group[h->n_groups++] = p->cur;
    return 0;
}

/* "alias key=value ...": alias a name, a pattern of ranges, maybe :port. */
static int host_line(struct ini *p, const char *line)
{
    char word[INI_LINE_MAX + 1], pat[INI_LINE_MAX + 1];
    int at[INI_LINE_MAX + 1];
    struct names names;
    struct ivar vars[V_N] = {0};
    size_t pos = 0;
    int col, pcol, rc = next_word(p, line, &pos, pat, at, &pcol);
    if (rc <= 0)
        return rc;
    /* a range only shortens a name: past PATTERN_MAX it names none */
    if (strlen(pat) >= PATTERN_MAX)
        return ifail(p, p->line, pcol, "host \"%.40s...\": longer than %zu characters", pat,
                     sizeof(names.name[0]) - 1);
    if (pattern_port(p, pat, pcol, &vars[V_PORT]) < 0)
        return -1;
    while ((rc = next_word(p, line, &pos, word, at, &col)) > 0) {
        char *eq = strchr(word, '=');
        if (eq == NULL)
            return ifail(p, p->line, col, "expected key=value, got \"%s\"", word);
        *eq = '\0';
        /* the value from the character after '=', its quote if quoted */
        int vcol = column(line, (size_t)at[eq - word] + 1);
        if (take_var(p, word, eq + 1, col, vcol, false, false, vars) < 0)
            return -1;
    }
    if (rc < 0)
        return -1;
    names.n = 0;
    if (expand(p, pat, pcol, &names) < 0)
        return -1;
    for (size_t i = 0; i < names.n; i++) {
        struct ihost *h = NULL;
        if (host_at(p, names.name[i], pcol, &h) < 0 || merge_host(p, h, vars, pcol) < 0)
            return -1;
    }
    return 0;
}

/* "[name]", "[name:hosts]", "[name:vars]" or "[name:children]", then
 * maybe a comment (Ansible's section pattern). */
static int header(struct ini *p, char *line, size_t i)
{
    char why[320];
    char *s = line + i, *close = strchr(s, ']');
    if (close == NULL)
        return ifail(p, p->line, column(line, i), "unterminated section header (no ']')");
    *close = '\0';
    char *suffix = strchr(s + 1, ':');
    if (suffix)
        *suffix++ = '\0';
    if (hosts_check_group(s + 1, why, sizeof(why)) < 0)
        return ifail(p, p->line, column(line, i + 1), "section %s", why);
    const char *rest = close + 1;
    while (blank(*rest))
        rest++;
    if (*rest && *rest != '#')
        return ifail(p, p->line, column(line, (size_t)(rest - line)),
                     "text after the section header");
    if (suffix == NULL || strcmp(suffix, "hosts") == 0)
        p->sec = SEC_HOSTS;
    else if (strcmp(suffix, "vars") == 0)
        p->sec = SEC_VARS;
    else if (strcmp(suffix, "children") == 0)
        p->sec = SEC_CHILDREN;
    else
        return ifail(p, p->line, column(line, (size_t)(suffix - line)),
                     "[%s:%s]: unknown section type \"%s\" (children, hosts, vars)", s + 1, suffix,
                     suffix);
    if (group_at(p, s + 1, column(line, i + 1), &p->cur) < 0)
        return -1;
    struct igroup *g = &p->group[p->cur];
    if (p->sec != SEC_VARS) {
        g->declared = true;
    } else if (!g->declared && g->ref_line == 0) {
        g->ref_line = p->line;
        g->ref_col = column(line, i);
        g->ref_parent = INI_GROUPS_MAX;
    }
    return 0;
}

/* "key=value" of a :vars section: the value is everything after '='. */
static int vars_line(struct ini *p, char *line, size_t i)
{
    char value[INI_LINE_MAX + 1];
    char *s = line + i, *eq = strchr(s, '=');
    if (eq == NULL || eq == s)
        return ifail(p, p->line, column(line, i), "expected key=value, got \"%s\"", s);
    char *end = eq;
    while (end > s && blank(end[-1]))
        end--;
    *end = '\0';
    char *v = eq + 1;
    while (blank(*v))
        v++;
    int vcol = column(line, (size_t)(v - line));
    bool quoted = *v == '\'' || *v == '"';
    if (quoted) {
        /* a quoted value is a Python string literal to Ansible: read up
         * to its closing quote, a comment may follow */
        size_t n = 0;
        char q = *v++;
        for (; *v != q; v++) {
            if (*v == '\0')
                return ifail(p, p->line, vcol, "unterminated quote (%c)", q);
            if (*v == '\\' && (v[1] == q || v[1] == '\\'))
                v++;
            value[n++] = *v;
        }
        value[n] = '\0';
        for (v++; blank(*v); v++)
            ;
        if (*v && *v != '#')
            return ifail(p, p->line, column(line, (size_t)(v - line)),
                         "text after the closing quote");
    } else {
        snprintf(value, sizeof(value), "%s", v);
    }
    return take_var(p, s, value, column(line, i), vcol, true, quoted, p->group[p->cur].var);
}

/* One child group of a :children section. */
static int child_line(struct ini *p, char *line, size_t i)
{
    char why[320];
    char *s = line + i, *end = s + strcspn(s, " \t#");
    const char *rest = end;
    while (blank(*rest))
        rest++;
    if (*rest && *rest != '#')
        return ifail(p, p->line, column(line, i), "expected a group name, got \"%s\"", s);
    *end = '\0';
    int col = column(line, i);
    size_t child;
    if (hosts_check_group(s, why, sizeof(why)) < 0)
        return ifail(p, p->line, col, "%s", why);
    if (strcmp(s, "all") == 0)
        return ifail(p, p->line, col, "all is no group's child: every group is all's");
    if (group_at(p, s, col, &child) < 0)
        return -1;
    struct igroup *g = &p->group[child];
    if (!g->declared && g->ref_line == 0) {
        g->ref_line = p->line;
        g->ref_col = col;
        g->ref_parent = p->cur;
    }
    for (size_t e = 0; e < p->n_edges; e++)
        if (p->edge[e].child == child && p->edge[e].parent == p->cur)
            return 0;
    if (p->n_edges == INI_EDGES_MAX)
        return ifail(p, p->line, col, "more than %d child groups", INI_EDGES_MAX);
    p->edge[p->n_edges++] = (struct iedge){child, p->cur, p->line, col};
    return 0;
}

static int one_line(struct ini *p, char *line)
{
    size_t len = strlen(line), i = 0;
    while (len > 0 && (blank(line[len - 1]) || line[len - 1] == '\r'))
        line[--len] = '\0';
    while (blank(line[i]))
        i++;
    if (line[i] == '\0' || line[i] == '#' || line[i] == ';')
        return 0;
    if (line[i] == '[')
        return header(p, line, i);
    if (p->sec == SEC_VARS)
        return vars_line(p, line, i);
    if (p->sec == SEC_CHILDREN)
        return child_line(p, line, i);
    return host_line(p, line);
}

/* A group named by [g:vars] or as a child but never declared is a typo
 * Ansible refuses too. */
static int check_declared(const struct ini *p)
{
    for (size_t g = 0; g < p->n_groups; g++) {
        const struct igroup *gr = &p->group[g];
        if (gr->declared)
            continue;
        if (gr->ref_parent == INI_GROUPS_MAX)
            return ifail(p, gr->ref_line, gr->ref_col,
                         "[%s:vars] is for %s, a group this file never declares ([%s] or "
                         "[%s:children])",
                         gr->name, gr->name, gr->name, gr->name);
        return ifail(p, gr->ref_line, gr->ref_col,
                     "[%s:children] names %s, a group this file never declares ([%s] or "
                     "[%s:children])",
                     p->group[gr->ref_parent].name, gr->name, gr->name, gr->name);
    }
    return 0;
}

/* Its depth below all, as Ansible counts it for the precedence of group
 * vars: one more than its deepest parent's. A cycle of children is
 * refused where it closes. */
static int depth_of(struct ini *p, size_t g)
{
    struct igroup *gr = &p->group[g];
    if (g == G_ALL)
        return 0;
    if (gr->depth >= 0)
        return gr->depth;
    gr->depth = -2;
    int d = 1;
    for (size_t e = 0; e < p->n_edges; e++) {
        const struct iedge *ed = &p->edge[e];
        if (ed->child != g)
            continue;
        if (p->group[ed->parent].depth == -2)
            return ifail(p, ed->line, ed->col,
                         "%s: a child of %s, which descends from %s (a cycle)", gr->name,
                         p->group[ed->parent].name, gr->name);
        int pd = depth_of(p, ed->parent);
        if (pd < 0)
            return -1;
        if (pd + 1 > d)
            d = pd + 1;
    }
    return gr->depth = d;
}

/* g and every group above it. */
static void mark_up(const struct ini *p, size_t g, bool *in)
{
    if (in[g])
        return;
    in[g] = true;
    for (size_t e = 0; e < p->n_edges; e++)
        if (p->edge[e].child == g)
            mark_up(p, p->edge[e].parent, in);
}

/* Ansible's order of group vars: shallower first, then by name; each
 * later one wins. */
static bool applies_before(const struct ini *p, size_t a, size_t b)
{
    const struct igroup *ga = &p->group[a], *gb = &p->group[b];
    return ga->depth != gb->depth ? ga->depth < gb->depth : strcmp(ga->name, gb->name) < 0;
}

static int resolve_host(const struct ini *p, const struct ihost *ih, struct host_spec *h)
{
    bool in[INI_GROUPS_MAX] = {false};
    size_t order[INI_GROUPS_MAX] = {0}, n = 0;
    const struct ivar *eff[V_N] = {NULL};
    for (size_t i = 0; i < ih->n_groups; i++)
        mark_up(p, ih->group[i], in);
    /* ungrouped holds the hosts in no other group, whatever the file said */
    in[G_UNGROUPED] = true;
    for (size_t g = G_UNGROUPED + 1; g < p->n_groups; g++)
        in[G_UNGROUPED] = in[G_UNGROUPED] && !in[g];
    in[G_ALL] = true;
    hosts_spec_init(h, ih->name, p->b);
    for (size_t g = 0; g < p->n_groups; g++) {
        if (!in[g])
            continue;
        if (g != G_ALL && h->n_groups == HOST_GROUPS_MAX)
            return ifail(p, ih->line, ih->col, "%s: in more than %d groups", ih->name,
                         HOST_GROUPS_MAX);
        if (g != G_ALL)
            snprintf(h->groups[h->n_groups++], sizeof(h->groups[0]), "%s", p->group[g].name);
        size_t k = n++;
        for (; k > 0 && applies_before(p, g, order[k - 1]); k--)
            order[k] = order[k - 1];
        order[k] = g;
    }
    for (size_t k = 0; k < n; k++)
        for (int v = 0; v < V_N; v++)
            if (p->group[order[k]].var[v].set)
                eff[v] = &p->group[order[k]].var[v];
    for (int v = 0; v < V_N; v++)
        if (ih->var[v].set)
            eff[v] = &ih->var[v];
    if (eff[V_HOST])
        hosts_copy(h->address, sizeof(h->address), eff[V_HOST]->value);
    if (eff[V_PORT])
        h->port = (int)strtol(eff[V_PORT]->value, NULL, 10);
    if (eff[V_USER])
        hosts_copy(h->user, sizeof(h->user), eff[V_USER]->value);
    if (eff[V_KEY])
        snprintf(h->key, sizeof(h->key), "%s", eff[V_KEY]->value);
    return 0;
}

static int finish(struct ini *p, struct host_list *out)
{
    if (check_declared(p) < 0)
        return -1;
    for (size_t g = 0; g < p->n_groups; g++)
        if (depth_of(p, g) < 0)
            return -1;
    for (size_t i = 0; i < p->n_hosts; i++)
        if (resolve_host(p, &p->host[i], &out->host[i]) < 0)
            return -1;
    out->n = p->n_hosts;
    return 0;
}

static int read_lines(struct ini *p, const char *text, size_t len)
{
    char line[INI_LINE_MAX + 1];
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - text) - at : len - at;
        p->line++;
        if (n > INI_LINE_MAX)
            return ifail(p, p->line, 1, "a line longer than %d bytes", INI_LINE_MAX);
        memcpy(line, text + at, n);
        line[n] = '\0';
        /* a UTF-8 byte order mark, as some editors write one */
        size_t bom = p->line == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        if (one_line(p, line + bom) < 0)
            return -1;
        at += n + 1;
    }
    return 0;
}

int hosts_ini_parse(const char *file, const char *text, size_t len, const struct hosts_base *b,
                    struct host_list *out, char *err, size_t errlen)
{
    struct ini *p = calloc(1, sizeof(*p));
    size_t g;
    if (p == NULL)
        return hosts_fail(err, errlen, "%s: out of memory", file);
    *p = (struct ini){.file = file, .err = err, .errlen = errlen, .b = b, .sec = SEC_HOSTS};
    group_at(p, "all", 1, &g);
    group_at(p, "ungrouped", 1, &g);
    p->group[G_ALL].declared = p->group[G_UNGROUPED].declared = true;
    p->cur = G_UNGROUPED; /* a host before any header */
    int rc = read_lines(p, text, len);
    if (rc == 0)
        rc = finish(p, out);
    free(p);
    return rc;
}
