/* text_table.h - a terminal table that keeps within a width (compare's and
 * matrix's): each column as wide as its head and its widest cell, and the
 * columns that do not fit beside the others go on an indented line of
 * their own under each row (each on the first line with room for it, in
 * their order), their heads likewise under the head line, as the
 * scorecard's grid puts its figures under its words. A cell wider than a
 * whole line is wrapped at its spaces. --wide keeps the callers' one-line
 * tables; this is the default. */
#ifndef LOCKLAB_TEXT_TABLE_H
#define LOCKLAB_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TEXT_TABLE_WIDTH    120 /* a terminal beside another, as redis-benchmark -q fits */
#define TEXT_TABLE_INDENT   4   /* where a row's second line starts */
#define TEXT_TABLE_MAX_COLS 24
#define TEXT_TABLE_MAX_ROWS 64

struct text_table {
    size_t n_cols, n_rows;
    const char *head[TEXT_TABLE_MAX_COLS];
    bool left[TEXT_TABLE_MAX_COLS]; /* words, aligned left; figures align right */
    int gap[TEXT_TABLE_MAX_COLS];   /* spaces before the column on its line */
    char *cell[TEXT_TABLE_MAX_ROWS][TEXT_TABLE_MAX_COLS]; /* owned; NULL: "" */
    /* text_table_layout's: each column's width and the line it goes on */
    int width[TEXT_TABLE_MAX_COLS];
    size_t band[TEXT_TABLE_MAX_COLS];
    size_t n_bands;
};

/* A column: its head, words or figures, the spaces before it; its index. */
size_t text_table_column(struct text_table *t, const char *head, bool left, int gap);
/* A new row (its index), then each of its cells in column order. */
size_t text_table_row(struct text_table *t);
void text_table_cell(struct text_table *t, size_t row, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The widths and lines of every column, within TEXT_TABLE_WIDTH. */
void text_table_layout(struct text_table *t);
/* The head lines, then one row's lines (each after layout). */
void text_table_print_head(FILE *f, const struct text_table *t);
void text_table_print_row(FILE *f, const struct text_table *t, size_t row);
void text_table_free(struct text_table *t);

/* text's words on lines of at most TEXT_TABLE_WIDTH: the first after
 * indent spaces, the later ones after more; a word longer than a line
 * (a path) keeps a line of its own. */
void text_wrap(FILE *f, const char *text, int indent, int more);

#endif
