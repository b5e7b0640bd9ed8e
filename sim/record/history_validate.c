/* history_validate.c - each event of a history file held to the file's
 * promises as it comes (history_validate.h). */
#include "sim/record/history_validate.h"

#include <stdio.h>

static int check_seq(struct history_validator *v, const struct history_event *e, uint64_t at,
                     const char *const *keys, const struct history_words *w, char *msg, size_t len)
{
    if (!history_has_seq(e))
        return 0;
    struct seq_fault f;
    int rc = seq_check_add(&v->seqs, e->key, e->client, e->seq, at, &f);
    if (rc == 0)
        return 0;
    if (rc < 0)
        snprintf(msg, len, "out of memory");
    else if (f.kind == SEQ_AGAIN)
        snprintf(msg, len,
                 "%s %llu on key \"%.60s\" again (%s %llu had it): the witness numbers each "
                 "entry and exit on a key once",
                 w->seq, (unsigned long long)f.seq, keys[f.key], w->place,
                 (unsigned long long)f.prev_line);
    else if (f.kind == SEQ_BELOW)
        snprintf(msg, len,
                 "%s %llu on key \"%.60s\" again (every seq below %llu had come by %s %llu): "
                 "the witness numbers each entry and exit on a key once",
                 w->seq, (unsigned long long)f.seq, keys[f.key], (unsigned long long)f.prev_seq,
                 w->place, (unsigned long long)f.prev_line);
    else
        snprintf(msg, len,
                 "%s %llu of client %u on key \"%.60s\" is not after its %llu %s %s %llu: a "
                 "client's entries and exits on a key come in the order of their seqs",
                 w->seq, (unsigned long long)f.seq, (unsigned)f.client, keys[f.key],
                 (unsigned long long)f.prev_seq, w->on, w->place, (unsigned long long)f.prev_line);
    return -1;
}

int history_validate_event(struct history_validator *v, const struct history_event *e, uint64_t at,
                           const char *const *keys, const struct history_words *w, char *msg,
                           size_t len)
{
    if (v->have_last && e->t_ns < v->last_t) {
        snprintf(msg, len, "%s %llu is before the previous event's %llu", w->time,
                 (unsigned long long)e->t_ns, (unsigned long long)v->last_t);
        return -1;
    }
    if (check_seq(v, e, at, keys, w, msg, len) < 0)
        return -1;
    v->have_last = true;
    v->last_t = e->t_ns;
    return 0;
}

void history_validator_free(struct history_validator *v)
{
    seq_check_free(&v->seqs);
}
