/* figures.h - a figure's bound as a scenario writes it ("0", ">0", ">= 3"),
 * read, written back and held against what a run measured; and a time in
 * ms written as the scenario's seconds. Plain values, shared by the parser
 * that reads them, the checker and the reports that judge and print them. */
#ifndef LOCKLAB_FIGURES_H
#define LOCKLAB_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest time a scenario gives, in ms: one day. */
#define SCENARIO_MS_MAX 86400000

enum expect_op { EXPECT_UNSET = 0, EXPECT_EQ, EXPECT_GT, EXPECT_GE, EXPECT_LT, EXPECT_LE };

struct expect_num {
    enum expect_op op;
    uint64_t value;
};

/* Parse an expectation as written in a scenario: 0, ">0", ">= 3", "==0".
 * Returns 0 or -1. */
int expect_parse(const char *text, struct expect_num *e);
/* Render it back (">0"), into buf; returns buf. */
const char *expect_format(const struct expect_num *e, char *buf, size_t len);
bool expect_met(const struct expect_num *e, uint64_t got);

/* A time in ms as a scenario's seconds: "1.5" for 1500, "2" for 2000. */
const char *figure_seconds(uint64_t ms, char *buf, size_t len);

#endif
