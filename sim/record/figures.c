/* figures.c - bounds on a run's figures, and seconds as a scenario writes
 * them (figures.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/record/figures.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
    const char *text;
    enum expect_op op;
} expect_ops[] = {
    /* two-character operators first, so ">=" is not read as ">" */
    {"==", EXPECT_EQ}, {">=", EXPECT_GE}, {"<=", EXPECT_LE}, {">", EXPECT_GT}, {"<", EXPECT_LT},
};

int expect_parse(const char *text, struct expect_num *e)
{
    enum expect_op op = EXPECT_EQ;
    uint64_t v = 0;
    const char *p = text;

    if (!text || !e)
        return -1;
    p += strspn(p, " ");
    for (size_t i = 0; i < N_OF(expect_ops); i++) {
        size_t n = strlen(expect_ops[i].text);
        if (strncmp(p, expect_ops[i].text, n) == 0) {
            op = expect_ops[i].op;
            p += n;
            break;
        }
    }
    p += strspn(p, " ");
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (*p)
        return -1;
    e->op = op;
    e->value = v;
    return 0;
}

const char *expect_format(const struct expect_num *e, char *buf, size_t len)
{
    const char *sym = "";

    if (!buf || len == 0)
        return buf;
    if (e->op == EXPECT_UNSET) {
        snprintf(buf, len, "any");
        return buf;
    }
    for (size_t i = 1; i < N_OF(expect_ops); i++) /* [0] is "==", written as nothing */
        if (expect_ops[i].op == e->op)
            sym = expect_ops[i].text;
    snprintf(buf, len, "%s%" PRIu64, sym, e->value);
    return buf;
}

bool expect_met(const struct expect_num *e, uint64_t got)
{
    switch (e->op) {
    case EXPECT_EQ:
        return got == e->value;
    case EXPECT_GT:
        return got > e->value;
    case EXPECT_GE:
        return got >= e->value;
    case EXPECT_LT:
        return got < e->value;
    case EXPECT_LE:
        return got <= e->value;
    default:
        return true; /* nothing expected */
    }
}

const char *figure_seconds(uint64_t ms, char *buf, size_t len)
{
    if (ms % 1000 == 0)
        snprintf(buf, len, "%" PRIu64, ms / 1000);
    else
        snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, ms / 1000, ms % 1000);
    return buf;
}
