/* text_table.c - a terminal table within 120 columns (text_table.h). */
#include "reports/text_table.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t text_table_column(struct text_table *t, const char *head, bool left, int gap)
{
    size_t c = t->n_cols < TEXT_TABLE_MAX_COLS ? t->n_cols++ : TEXT_TABLE_MAX_COLS - 1;
    t->head[c] = head;
    t->left[c] = left;
    t->gap[c] = gap;
    return c;
}

size_t text_table_row(struct text_table *t)
{
    return t->n_rows < TEXT_TABLE_MAX_ROWS ? t->n_rows++ : TEXT_TABLE_MAX_ROWS - 1;
}

void text_table_cell(struct text_table *t, size_t row, size_t col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL; /* out of memory: the cell stays empty */
    va_end(ap);
    free(t->cell[row][col]);
    t->cell[row][col] = text;
}

static const char *cell_of(const struct text_table *t, size_t r, size_t c)
{
    return t->cell[r][c] ? t->cell[r][c] : "";
}

/* Each column on the first line that has room for it, in their order:
 * a wide one that goes under the row leaves the row to the narrow ones
 * after it. */
void text_table_layout(struct text_table *t)
{
    int pos[TEXT_TABLE_MAX_COLS]; /* where each line ends so far */
    t->n_bands = 0;
    for (size_t c = 0; c < t->n_cols; c++) {
        int w = (int)strlen(t->head[c]);
        for (size_t r = 0; r < t->n_rows; r++) {
            int n = (int)strlen(cell_of(t, r, c));
            w = n > w ? n : w;
        }
        t->width[c] = w;
        size_t b = 0;
        while (b < t->n_bands && pos[b] + t->gap[c] + w > TEXT_TABLE_WIDTH)
            b++;
        if (b == t->n_bands) /* a line of its own */
            pos[t->n_bands++] = (b ? TEXT_TABLE_INDENT : 0) + w;
        else
            pos[b] += t->gap[c] + w;
        t->band[c] = b;
    }
}

/* A line without the padding of its last cell. */
static void put_line(FILE *f, char *line, size_t len)
{
    while (len > 0 && line[len - 1] == ' ')
        len--;
    fprintf(f, "%.*s\n", (int)len, line);
}

/* The columns of band b, their heads (row SIZE_MAX) or a row's cells; a
 * column alone on its line and wider than it is wrapped instead (no
 * column joins one that wide). */
static void print_band(FILE *f, const struct text_table *t, size_t b, size_t row)
{
    char line[4096];
    size_t len = 0;
    bool first = true, any = false;
    for (size_t c = 0; c < t->n_cols; c++) {
        if (t->band[c] != b)
            continue;
        const char *text = row == SIZE_MAX ? t->head[c] : cell_of(t, row, c);
        any = any || text[0];
        int lead = first ? (b ? TEXT_TABLE_INDENT : 0) : t->gap[c];
        if (first && b && TEXT_TABLE_INDENT + t->width[c] > TEXT_TABLE_WIDTH) {
            if (text[0])
                text_wrap(f, text, TEXT_TABLE_INDENT, 2);
            return;
        }
        first = false;
        int n = snprintf(line + len, sizeof(line) - len, t->left[c] ? "%*s%-*s" : "%*s%*s", lead,
                         "", t->width[c], text);
        if (n > 0)
            len = len + (size_t)n < sizeof(line) ? len + (size_t)n : sizeof(line) - 1;
    }
    if (any || b == 0) /* a second line with nothing on it is left out */
        put_line(f, line, len);
}

void text_table_print_head(FILE *f, const struct text_table *t)
{
    for (size_t b = 0; b < t->n_bands; b++)
        print_band(f, t, b, SIZE_MAX);
}

void text_table_print_row(FILE *f, const struct text_table *t, size_t row)
{
    for (size_t b = 0; b < t->n_bands; b++)
        print_band(f, t, b, row);
}

void text_table_free(struct text_table *t)
{
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_cols; c++) {
            free(t->cell[r][c]);
            t->cell[r][c] = NULL;
        }
    t->n_rows = 0;
}

void text_wrap(FILE *f, const char *text, int indent, int more)
{
    int col = indent;
    bool fresh = true; /* nothing on this line yet */
    fprintf(f, "%*s", indent, "");
    for (const char *p = text + strspn(text, " "); *p;) {
        size_t n = strcspn(p, " ");
        if (!fresh && col + 1 + (int)n > TEXT_TABLE_WIDTH) {
            fprintf(f, "\n%*s", indent + more, "");
            col = indent + more;
        } else if (!fresh) {
            fputc(' ', f);
            col++;
        }
        fresh = false;
        fprintf(f, "%.*s", (int)n, p);
        col += (int)n;
        p += n;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}
