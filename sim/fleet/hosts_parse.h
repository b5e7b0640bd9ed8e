/* hosts_parse.h - what the inventory's readers share (hosts.c, hosts_ini.c,
 * hosts_json.c): the checks of a name, an address, a user and a port,
 * written once so every format refuses the same things in the same words,
 * and the defaults made concrete. Not for use outside sim/fleet/hosts*.c.
 */
#ifndef LOCKLAB_HOSTS_PARSE_H
#define LOCKLAB_HOSTS_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/fleet/hosts.h"

/* The defaults checked and made concrete (the key ~ expanded). */
struct hosts_base {
    int port;
    char user[64];
    char key[512];
};

/* Each check returns 0, or -1 with why: a phrase that names the value
 * ("\"n 1\": a name is letters, digits, '.', '-' and '_'"). */
int hosts_check_name(const char *s, char *why, size_t n);
int hosts_check_group(const char *s, char *why, size_t n);
int hosts_check_address(const char *s, char *why, size_t n);
int hosts_check_user(const char *s, char *why, size_t n);
/* s: decimal digits only, 1..65535. */
int hosts_parse_port(const char *s, int *port, char *why, size_t n);
/* "~" and "~/..." from $HOME, "~user/..." from the password file. */
int hosts_expand_key(const char *s, char *out, size_t outlen, char *why, size_t n);

/* d checked and made concrete, or -1 with err naming the option. */
int hosts_base_from(const struct host_defaults *d, struct hosts_base *b, char *err, size_t errlen);
/* h reset to name with b's values; name must fit. */
void hosts_spec_init(struct host_spec *h, const char *name, const struct hosts_base *b);
/* One --nodes item (or a JSON string item) of len bytes into h. */
int hosts_parse_item(const char *item, size_t len, const struct hosts_base *b, struct host_spec *h,
                     char *why, size_t n);

/* The readers of each format (file names the file in err). */
int hosts_ini_parse(const char *file, const char *text, size_t len, const struct hosts_base *b,
                    struct host_list *out, char *err, size_t errlen);
int hosts_json_parse(const char *file, const char *text, size_t len, const struct hosts_base *b,
                     struct host_list *out, char *err, size_t errlen);

/* src into dst of size n, cut to fit (every caller checked the length
 * first: this only keeps the compiler's truncation warnings quiet). */
void hosts_copy(char *dst, size_t n, const char *src);

/* snprintf into err, made one line; returns -1. */
int hosts_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
