/* capture.c - an in-memory FILE for a renderer under test (capture.h). */
#include "tests/lib/capture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

FILE *capture_open(struct capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
    return c->f;
}

char *capture_text(struct capture *c)
{
    fclose(c->f);
    return c->text;
}
