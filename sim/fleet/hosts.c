/* hosts.c - the hosts inventory: a file read and told apart (INI or
 * JSON), --nodes, and the checks every format shares (hosts.h says what
 * is accepted; hosts_ini.c and hosts_json.c read each format).
 */
#include "sim/fleet/hosts.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fleet/hosts_parse.h"

static const char name_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";

int hosts_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* a value quoted from the file may hold a control character (JSON's
     * "\n"): the message stays one line */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    return -1;
}

void hosts_copy(char *dst, size_t n, const char *src)
{
    size_t len = strnlen(src, n - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* s is made of name_chars (plus ':' and '%' when v6), not empty, shorter
 * than max, and does not start with '-': ssh would read "-oProxyCommand=..."
 * as an option. */
static int check_chars(const char *s, size_t max, bool v6, const char *what, char *why, size_t n)
{
    size_t len = strlen(s);
    if (len == 0)
        return hosts_fail(why, n, "empty %s", what);
    if (len >= max)
        return hosts_fail(why, n, "\"%.40s...\": %s longer than %zu characters", s, what, max - 1);
    if (s[0] == '-')
        return hosts_fail(why, n, "\"%s\": not a valid %s (starts with '-')", s, what);
    for (const char *p = s; *p; p++)
        if (!strchr(name_chars, *p) && !(v6 && (*p == ':' || *p == '%')))
            return hosts_fail(why, n,
                              "\"%s\": not a valid %s (letters, digits, '.', '-'%s and '_')", s,
                              what, v6 ? ", ':', '%'" : "");
    return 0;
}

int hosts_check_name(const char *s, char *why, size_t n)
{
    return check_chars(s, sizeof(((struct host_spec *)0)->name), false, "name", why, n);
}

int hosts_check_group(const char *s, char *why, size_t n)
{
    return check_chars(s, sizeof(((struct host_spec *)0)->groups[0]), false, "group name", why, n);
}

int hosts_check_address(const char *s, char *why, size_t n)
{
    return check_chars(s, sizeof(((struct host_spec *)0)->address), true, "address", why, n);
}

int hosts_check_user(const char *s, char *why, size_t n)
{
    return check_chars(s, sizeof(((struct host_spec *)0)->user), false, "user", why, n);
}

int hosts_parse_port(const char *s, int *port, char *why, size_t n)
{
    long v = 0;
    size_t len = strlen(s);
    if (len == 0 || len > 5 || strspn(s, "0123456789") != len)
        return hosts_fail(why, n, "\"%s\": not a port (a number from 1 to 65535)", s);
    v = strtol(s, NULL, 10);
    if (v < 1 || v > 65535)
        return hosts_fail(why, n, "%ld: not a port (a number from 1 to 65535)", v);
    *port = (int)v;
    return 0;
}

/* The home of "~" (user NULL: ours) or of "~user". */
static const char *home_of(const char *user, char *why, size_t n)
{
    if (user == NULL && getenv("HOME") && getenv("HOME")[0])
        return getenv("HOME");
    struct passwd *pw = user ? getpwnam(user) : getpwuid(getuid());
    if (pw == NULL || pw->pw_dir == NULL) {
        hosts_fail(why, n, "no home folder for %s%s", user ? "user " : "this user",
                   user ? user : "");
        return NULL;
    }
    return pw->pw_dir;
}

int hosts_expand_key(const char *s, char *out, size_t outlen, char *why, size_t n)
{
    const char *rest = s, *home = "";
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20)
            return hosts_fail(why, n, "\"%s\": a control character in a key's path", s);
    if (s[0] == '~') {
        char user[64];
        size_t ulen = strcspn(s + 1, "/");
        if (ulen >= sizeof(user))
            return hosts_fail(why, n, "\"%.40s...\": no such user", s);
        memcpy(user, s + 1, ulen);
        user[ulen] = '\0';
        home = home_of(ulen ? user : NULL, why, n);
        if (home == NULL)
            return -1;
        rest = s + 1 + ulen;
    }
    int w = snprintf(out, outlen, "%s%s", home, rest);
    if (w < 0 || (size_t)w >= outlen)
        return hosts_fail(why, n, "\"%.40s...\": a key's path longer than %zu characters", s,
                          outlen - 1);
    return 0;
}

int hosts_base_from(const struct host_defaults *d, struct hosts_base *b, char *err, size_t errlen)
{
    char why[320];
    *b = (struct hosts_base){.port = HOSTS_PORT};
    snprintf(b->user, sizeof(b->user), "%s", HOSTS_USER);
    if (d == NULL)
        return 0;
    if (d->port != 0)
        b->port = d->port;
    if (b->port < 1 || b->port > 65535)
        return hosts_fail(err, errlen, "--ssh-port %d: not a port (a number from 1 to 65535)",
                          d->port);
    if (d->user && hosts_check_user(d->user, why, sizeof(why)) < 0)
        return hosts_fail(err, errlen, "--ssh-user: %s", why);
    if (d->user)
        snprintf(b->user, sizeof(b->user), "%s", d->user);
    if (d->key && hosts_expand_key(d->key, b->key, sizeof(b->key), why, sizeof(why)) < 0)
        return hosts_fail(err, errlen, "--ssh-key: %s", why);
    return 0;
}

void hosts_spec_init(struct host_spec *h, const char *name, const struct hosts_base *b)
{
    memset(h, 0, sizeof(*h));
    snprintf(h->name, sizeof(h->name), "%s", name);
    snprintf(h->address, sizeof(h->address), "%s", name);
    h->port = b->port;
    snprintf(h->user, sizeof(h->user), "%s", b->user);
    snprintf(h->key, sizeof(h->key), "%s", b->key);
}

/* The address part of an item, with its port: "[v6]:port", "[v6]",
 * "host:port", "host", or a bare IPv6 address (two ':' or more, no port). */
static int item_address(char *at, char *host, size_t hostlen, int *port, char *why, size_t n)
{
    char *colon = NULL;
    if (at[0] == '[') {
        char *close = strchr(at, ']');
        if (close == NULL)
            return hosts_fail(why, n, "'[' without ']'");
        *close = '\0';
        if (close[1] == ':')
            colon = close + 1;
        else if (close[1] != '\0')
            return hosts_fail(why, n, "\"%s\" after ']'", close + 1);
        at++;
    } else if ((colon = strchr(at, ':')) != NULL && strchr(colon + 1, ':')) {
        colon = NULL; /* IPv6, which takes a port only inside [] */
    }
    if (colon) {
        *colon = '\0';
        if (hosts_parse_port(colon + 1, port, why, n) < 0)
            return -1;
    }
    if (hosts_check_address(at, why, n) < 0)
        return -1;
    hosts_copy(host, hostlen, at);
    return 0;
}

int hosts_parse_item(const char *item, size_t len, const struct hosts_base *b, struct host_spec *h,
                     char *why, size_t n)
{
    char buf[400], host[256];
    int port = b->port;
    if (len == 0)
        return hosts_fail(why, n, "empty");
    if (len >= sizeof(buf))
        return hosts_fail(why, n, "longer than %zu characters", sizeof(buf) - 1);
    memcpy(buf, item, len);
    buf[len] = '\0';
    char *at = strchr(buf, '@'), *user = NULL;
    if (at) {
        *at++ = '\0';
        user = buf;
        if (hosts_check_user(user, why, n) < 0)
            return -1;
    } else {
        at = buf;
    }
    if (item_address(at, host, sizeof(host), &port, why, n) < 0)
        return -1;
    if (strlen(host) >= sizeof(h->name))
        return hosts_fail(why, n, "\"%.40s...\": a name longer than %zu characters", host,
                          sizeof(h->name) - 1);
    hosts_spec_init(h, host, b);
    h->port = port;
    if (user)
        hosts_copy(h->user, sizeof(h->user), user);
    return 0;
}

const struct host_spec *hosts_find(const struct host_list *l, const char *name)
{
    for (size_t i = 0; l && name && i < l->n; i++)
        if (strcmp(l->host[i].name, name) == 0)
            return &l->host[i];
    return NULL;
}

/* The item's text with its blanks dropped. */
static void trim(const char **s, size_t *len)
{
    while (*len > 0 && strchr(" \t", (*s)[0]))
        (*s)++, (*len)--;
    while (*len > 0 && strchr(" \t", (*s)[*len - 1]))
        (*len)--;
}

int hosts_from_nodes(const char *csv, const struct host_defaults *d, struct host_list *out,
                     char *err, size_t errlen)
{
    struct hosts_base b;
    char why[320];
    out->n = 0;
    if (hosts_base_from(d, &b, err, errlen) < 0)
        return -1;
    if (csv == NULL || csv[strspn(csv, " \t")] == '\0')
        return hosts_fail(err, errlen, "--nodes: no hosts");
    size_t item = 1;
    for (const char *p = csv;; item++) {
        const char *s = p;
        size_t len = strcspn(p, ",");
        trim(&s, &len);
        if (out->n == HOSTS_MAX)
            return out->n = 0,
                   hosts_fail(err, errlen, "--nodes: item %zu (\"%.*s\"): more than %d hosts", item,
                              (int)len, s, HOSTS_MAX);
        struct host_spec *h = &out->host[out->n];
        if (hosts_parse_item(s, len, &b, h, why, sizeof(why)) < 0)
            return out->n = 0, hosts_fail(err, errlen, "--nodes: item %zu (\"%.*s\"): %s", item,
                                          (int)len, s, why);
        for (size_t i = 0; i < out->n; i++)
            if (strcmp(out->host[i].name, h->name) == 0)
                return out->n = 0,
                       hosts_fail(err, errlen,
                                  "--nodes: item %zu (\"%.*s\"): %s is item %zu already", item,
                                  (int)len, s, h->name, i + 1);
        out->n++;
        p += strcspn(p, ",");
        if (*p++ == '\0')
            return 0;
    }
}

/* JSON when the first non-blank is '{', or '[' then blanks then '{', '"'
 * or ']': an INI header is '[' then a name. */
static bool looks_json(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", text[i]))
        i++;
    if (i < len && text[i] == '{')
        return true;
    if (i == len || text[i] != '[')
        return false;
    for (i++; i < len && strchr(" \t\r\n", text[i]); i++)
        ;
    return i < len && strchr("{\"]", text[i]);
}

/* The whole file, NUL-terminated (free it), or -1 with why. */
static int read_file(const char *path, char **text, size_t *len, char *why, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return hosts_fail(why, n, "cannot open: %s", strerror(errno));
    char *buf = malloc(HOSTS_FILE_BYTES + 1);
    size_t got = buf ? fread(buf, 1, HOSTS_FILE_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (buf == NULL || bad || got > HOSTS_FILE_BYTES) {
        free(buf);
        if (buf == NULL)
            return hosts_fail(why, n, "out of memory");
        return bad ? hosts_fail(why, n, "cannot read")
                   : hosts_fail(why, n, "larger than %d bytes", HOSTS_FILE_BYTES);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

int hosts_load(const char *path, const struct host_defaults *d, struct host_list *out, char *err,
               size_t errlen)
{
    struct hosts_base b;
    char *text = NULL, why[320];
    size_t len = 0;
    out->n = 0;
    if (hosts_base_from(d, &b, err, errlen) < 0)
        return -1;
    if (read_file(path, &text, &len, why, sizeof(why)) < 0)
        return hosts_fail(err, errlen, "%s: %s", path, why);
    if (memchr(text, '\0', len)) {
        free(text);
        return hosts_fail(err, errlen, "%s: a NUL byte: not a text file", path);
    }
    int rc = looks_json(text, len) ? hosts_json_parse(path, text, len, &b, out, err, errlen)
                                   : hosts_ini_parse(path, text, len, &b, out, err, errlen);
    free(text);
    if (rc == 0 && out->n == 0)
        rc = hosts_fail(err, errlen, "%s: no hosts", path);
    if (rc < 0)
        out->n = 0;
    return rc;
}
