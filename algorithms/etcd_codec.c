/* etcd_codec.c - what etcd's JSON gateway asks of the bytes it carries:
 * keys and values in base64, int64 fields as JSON strings, a prefix's
 * range end (etcd_wire.h declares them). */
#include <stdlib.h>
#include <string.h>

#include "algorithms/etcd_wire.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

json_t *etcd_b64(const char *bytes, size_t len)
{
    size_t n = 4 * ((len + 2) / 3);
    char *s = malloc(n + 1);
    if (s == NULL)
        return NULL;
    const unsigned char *p = (const unsigned char *)bytes;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        s[o++] = b64[(v >> 18) & 63];
        s[o++] = b64[(v >> 12) & 63];
        s[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        s[o++] = i + 2 < len ? b64[v & 63] : '=';
    }
    s[o] = '\0';
    json_t *j = json_stringn(s, o);
    free(s);
    return j;
}

long etcd_unb64(const json_t *v, char *out, size_t len)
{
    const char *s = json_string_value(v);
    if (s == NULL || len == 0)
        return -1;
    uint32_t acc = 0;
    int bits = 0;
    size_t o = 0;
    for (; *s && *s != '='; s++) {
        const char *at = strchr(b64, *s);
        if (at == NULL)
            return -1;
        acc = (acc << 6) | (uint32_t)(at - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 < len)
                out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    return (long)o;
}

int64_t etcd_int(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    const char *s = json_string_value(v);
    return s ? strtoll(s, NULL, 10) : 0;
}

json_t *etcd_prefix_end(const char *prefix, size_t len)
{
    char end[256];
    if (len == 0 || len > sizeof(end))
        return NULL;
    memcpy(end, prefix, len);
    /* the last byte below 0xff, plus one, and nothing after it */
    while (len > 0 && (unsigned char)end[len - 1] == 0xff)
        len--;
    if (len == 0)
        return etcd_b64("\0", 1); /* every key: etcd's "from key" */
    end[len - 1] = (char)((unsigned char)end[len - 1] + 1);
    return etcd_b64(end, len);
}
