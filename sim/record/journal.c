/* journal.c - the run's history file, written as the run goes (journal.h). */
#include "sim/record/journal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/record/history_bin.h"
#include "sim/record/history_reader.h"

struct journal {
    FILE *f;
    struct llh_writer *w;
    int error;
    char path[700];
    char name[720]; /* how the reader names it: the path, or the unnamed file */
};

struct journal *journal_open(const char *dir, char *err, size_t errlen)
{
    struct journal *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        snprintf(err, errlen, "out of memory opening the history");
        return NULL;
    }
    if (dir && dir[0]) {
        snprintf(j->path, sizeof(j->path), "%s/history.llh", dir);
        j->f = fopen(j->path, "w+b");
    } else {
        j->f = tmpfile();
    }
    snprintf(j->name, sizeof(j->name), "%s", j->path[0] ? j->path : "the run's history");
    if (j->f == NULL) {
        snprintf(err, errlen, "cannot write %s: %s", j->path[0] ? j->path : "a temporary history",
                 strerror(errno));
        free(j);
        return NULL;
    }
    return j;
}

int journal_begin(struct journal *j, const struct history *start)
{
    errno = 0;
    j->w = llh_writer_new(j->f, start);
    if (j->w == NULL)
        j->error = errno ? errno : ENOMEM;
    return j->error;
}

int journal_write(struct journal *j, const struct history_event *e,
                  const struct history_names *names)
{
    if (j->error)
        return j->error;
    errno = 0;
    if (j->w == NULL || llh_write_event(j->w, e, names) < 0)
        j->error = errno ? errno : EIO;
    return j->error;
}

int journal_error(const struct journal *j)
{
    return j->error;
}

/* The file read from its start by a stream of its own, the writer's place
 * untouched: by its path, or the unnamed file through its descriptor. */
static FILE *read_back(struct journal *j)
{
    if (j->path[0])
        return fopen(j->path, "rb");
    char fd_path[64];
    snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fileno(j->f));
    return fopen(fd_path, "rb");
}

/* The names the file gave its ids, moved into names (its own freed). */
static void take_names(struct history_reader *rd, struct history *names)
{
    struct history h;
    history_reader_take(rd, &h);
    struct history old = *names;
    old.ev = NULL;
    old.n = 0;
    history_free(&old); /* the tables only: the caller's other fields stay */
    names->keys = h.keys;
    names->n_keys = h.n_keys;
    names->owners = h.owners;
    names->n_owners = h.n_owners;
    names->notes = h.notes;
    names->n_notes = h.n_notes;
    h.keys = h.owners = h.notes = NULL;
    h.n_keys = h.n_owners = h.n_notes = 0;
    history_free(&h);
}

int journal_replay(struct journal *j, int (*fn)(void *ctx, const struct history_event *e),
                   void *ctx, struct history *names, char *err, size_t errlen)
{
    errno = 0;
    if (j->error == 0 && (j->w == NULL || llh_writer_flush(j->w) < 0))
        j->error = errno ? errno : EIO; /* what the writer held could not be written */
    if (j->error) {
        snprintf(err, errlen, "%s: %s", j->name, strerror(j->error));
        return -1;
    }
    FILE *f = read_back(j);
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s back: %s", j->name, strerror(errno));
        return -1;
    }
    struct history_reader *rd = history_reader_stream(f, j->name, err, errlen);
    int rc = rd ? 0 : -1, got = 0;
    struct history_event e;
    while (rc == 0 && (got = history_reader_next(rd, &e)) == 1)
        rc = fn(ctx, &e);
    if (rd && got < 0) {
        snprintf(err, errlen, "%s", history_reader_error(rd));
        rc = -1;
    }
    if (rc == 0 && names)
        take_names(rd, names);
    history_reader_close(rd);
    fclose(f);
    return rc;
}

int journal_finish(struct journal *j, const struct history *end)
{
    int rc = 0;
    errno = j->error;
    if (j->error || j->w == NULL || llh_write_end(j->w, end) < 0)
        rc = -1;
    int saved = errno ? errno : EIO;
    llh_writer_free(j->w);
    j->w = NULL;
    if (fclose(j->f) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    j->f = NULL;
    errno = saved;
    return rc;
}

const char *journal_path(const struct journal *j)
{
    return j->path;
}

void journal_free(struct journal *j)
{
    if (j == NULL)
        return;
    if (j->f && j->w == NULL && j->path[0])
        unlink(j->path); /* never begun: no run, so no history file */
    llh_writer_free(j->w);
    if (j->f)
        fclose(j->f);
    free(j);
}
