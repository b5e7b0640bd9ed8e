/* history.h - the run's history: every lock operation and every fault.
 *
 * Each client appends fixed-size events to its own buffer (no lock,
 * no per-event allocation: buffers grow by chunks). At the end the buffers
 * are merged by time and written as JSON lines with Jepsen's vocabulary
 * (invoke / ok / fail / info), one operation completion per line; the
 * format is documented in docs/history.md. `locklab check` reads the file
 * back into the same structure, so the offline checker sees the same
 * sections either way.
 *
 * Times are CLOCK_MONOTONIC nanoseconds as the kernel gives them, so they
 * compare with readings taken by any other process on the machine.
 */
#ifndef LOCKLAB_HISTORY_H
#define LOCKLAB_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "algorithms/lock.h"
#include "sim/record/section_effect.h"

enum history_type { HT_INVOKE = 0, HT_OK, HT_FAIL, HT_INFO };

enum history_f {
    HF_ACQUIRE = 0,
    HF_RELEASE, /* its invoke ends the critical section and carries the effect */
    HF_RENEW,   /* watchdog renewals: completion only, no invoke */
    HF_CRASH,   /* info: the client died inside its critical section (ends it) */
    HF_FAULT,   /* info: a fault started (arg2 = 0) or ended (arg2 = 1) */
    HF_LINK,    /* info: the client's link to its service changed (arg = enum lock_link) */
    HF_STALL,   /* info: the stall meter asked to wake at t_ns and ran at end_ns (hiccup.h) */
    /* A countdown latch's calls (Redisson's RCountDownLatch): no sections. */
    HF_SET_COUNT,    /* trySetCount: invoke (permits = the count), ok set, fail busy: set already */
    HF_LATCH_DELETE, /* delete: ok answered (deleted, or none there) */
    HF_COUNT_DOWN,   /* countDown: invoke sent, ok answered, info no answer */
    HF_AWAIT,        /* await: invoke; ok passed, fail busy its wait ran out; each result
                        with what the waiter saw (permits, zero_ns, unanswered, resumed_ns) */
};
#define HF_LATCH_FIRST HF_SET_COUNT
#define HF_COUNT       (HF_AWAIT + 1)

static inline bool history_f_latch(unsigned f)
{
    return f >= HF_LATCH_FIRST && f <= HF_AWAIT;
}

/* A fault event's client when the fault struck servers, not a client. */
#define HISTORY_SERVERS UINT32_MAX
/* A stall event's client: the testbed's process, not a client of it. */
#define HISTORY_HOST (UINT32_MAX - 1)
/* A fault event's key when the file did not say which fault it was. */
#define HISTORY_NO_FAULT UINT32_MAX
/* A fault event's owner or seq when it carries no note. */
#define HISTORY_NO_NOTE UINT32_MAX

/* Why an operation failed or is unknown (arg of fail / info events). */
enum history_error {
    HE_NONE = 0,
    HE_BUSY,    /* acquire: wait elapsed */
    HE_LOST,    /* release/renew: the lock was no longer ours */
    HE_ERROR,   /* info: sent, no answer (timeout, reset): outcome unknown */
    HE_UNSENT,  /* fail: the request never left (no connection): it surely did not happen */
    HE_REFUSED, /* fail: the server refused it, or the lock undid it: surely not in effect */
};

struct history_event {
    uint64_t t_ns;
    union {
        uint64_t token;   /* acquire ok: fencing token (0 = none) */
        uint64_t due_ns;  /* acquire invoke: in open loop, when its step was due to start
                             (latency counts from there); 0 = closed loop */
        uint64_t end_ns;  /* HF_STALL: when the testbed ran again */
        uint64_t zero_ns; /* HF_AWAIT result: the last countDown's answer as the waiter saw
                             it (the count's zero), 0 = not all answered yet */
    };
    union {
        uint64_t seq;        /* acquire ok / release invoke / crash: witness sequence;
                                HF_FAULT: the note saying what it did (or HISTORY_NO_NOTE) */
        uint64_t resumed_ns; /* HF_AWAIT result: the end of a pause of the waiter inside
                                it, 0 = none */
    };
    uint32_t client;     /* HF_FAULT: the client it struck, or HISTORY_SERVERS */
    uint32_t key;        /* key id (index into history.keys); HF_FAULT: the fault's index in
                            the scenario's list (HISTORY_NO_FAULT: not known) */
    uint32_t owner;      /* owner id (index into history.owners); HF_FAULT: the note naming
                            the servers it struck (history.notes; HISTORY_NO_NOTE: none) */
    uint8_t type;        /* enum history_type */
    uint8_t f;           /* enum history_f */
    uint8_t arg;         /* release invoke: enum section_effect; fail/info: enum history_error;
                            HF_FAULT: fault type number (see fault_type_name) */
    uint8_t arg2;        /* HF_FAULT: 0 = start, 1 = end */
    uint8_t mode;        /* acquire: the enum lock_mode asked (invoke) and held (ok) */
    uint16_t unanswered; /* HF_AWAIT result: countDowns of the round the waiter saw go
                            unanswered (at most HISTORY_MAX_LATCH_COUNT) */
    uint32_t permits;    /* acquire in LOCK_MODE_PERMIT: the key's permits, at least 1;
                            HF_SET_COUNT invoke: the count; HF_AWAIT result: the countDowns
                            sent when the waiter looked */
};
/* unanswered fits the padding before permits: an event stays 48 bytes */
_Static_assert(sizeof(struct history_event) <= 48, "a history event is 48 bytes");
#define HISTORY_MAX_LATCH_COUNT 65535u

/* The file's words for f (operations only, not HF_FAULT), a release's
 * effect (enum section_effect) and an error: one table for the writer and
 * the reader. */
extern const char *const history_f_names[HF_CRASH + 1];
/* A latch's calls, by f - HF_LATCH_FIRST: "set_count", "delete", "count_down", "await". */
extern const char *const history_latch_f_names[HF_COUNT - HF_LATCH_FIRST];
extern const char *const history_effect_names[EFFECT_COUNT];
extern const char *const history_error_names[HE_REFUSED + 1];
/* An acquire's mode, by enum lock_mode: "exclusive" (never written: the
 * mode of a line without one), "shared", "permit". */
extern const char *const history_mode_names[LOCK_MODE_COUNT];
/* A link event's value, by enum lock_link: "connected", "connecting", "expired". */
#define HISTORY_LINK_STATES 3
extern const char *const history_link_names[HISTORY_LINK_STATES];

/* seq of an event read from a file that gave none (the witness counts from 0). */
#define HISTORY_NO_SEQ UINT64_MAX

/* Whether e carries the witness's number of an entry or exit: the acquire
 * that got in, the release as it begins to leave, a crash that left (a
 * re-entry's carries HISTORY_NO_SEQ). */
static inline bool history_has_seq(const struct history_event *e)
{
    bool numbered = (e->f == HF_ACQUIRE && e->type == HT_OK) ||
                    (e->f == HF_RELEASE && e->type == HT_INVOKE) || e->f == HF_CRASH;
    return numbered && e->seq != HISTORY_NO_SEQ;
}

/* Per-thread append-only buffer (history_buf.c). One thread appends; one
 * other may take its events as they come (the recorder, recorder.h), or
 * history_merge reads them all once the appending is over. */
struct history_buf;
struct history_buf *history_buf_new(void);
void history_buf_free(struct history_buf *b); /* accepts NULL */
/* Append a copy of e. Returns 0, or -1 when memory ran out (the event is
 * dropped and counted in history_buf_dropped). */
int history_append(struct history_buf *b, const struct history_event *e);
size_t history_buf_len(const struct history_buf *b); /* every event appended */
uint64_t history_buf_dropped(const struct history_buf *b);
/* The appender's promise: no event it appends from now on is earlier than
 * t_ns (it must know: a time it read and has not logged yet counts). 0
 * until it says; close: it appends nothing more. */
void history_buf_floor(struct history_buf *b, uint64_t t_ns);
void history_buf_close(struct history_buf *b);
uint64_t history_buf_floor_of(struct history_buf *b);
/* The consumer's side: up to max of the events appended since its last
 * take, in the order they were appended, into out; how many. */
size_t history_buf_take(struct history_buf *b, struct history_event *out, size_t max);

/* A latch run's settings, from the start line (latches 0: no latch). */
struct history_latch {
    uint32_t latches;  /* its latches, one key each */
    uint32_t parties;  /* the count each round is set to */
    uint32_t bound_ms; /* every waiter passes within this of being able to */
};

/* A whole history, merged or read back from a file. Owns everything. */
struct history {
    struct history_event *ev; /* sorted by t_ns, ties by client then buffer order */
    size_t n;
    char **keys; /* key id -> name */
    size_t n_keys;
    char **owners; /* owner id -> the value the lock stored on the server */
    size_t n_owners;
    char **notes; /* note id -> a fault's servers or what it did ("redis-2", "SIGKILL pid 7") */
    size_t n_notes;
    /* from the start and end lines */
    uint64_t start_mono_ns;
    uint64_t start_wall_ns; /* CLOCK_REALTIME at the same moment */
    uint64_t end_mono_ns;
    bool complete;
    char incomplete_reason[640]; /* the end line's "reason" when not complete ("": none given) */
    bool end_line; /* read back: the file had its end line (false: the writer stopped) */
    char scenario[64];
    char algorithm[32];
    uint32_t clients;
    uint64_t seed;
    uint32_t ttl_ms; /* the lock's lease (0: not known), how far back a violation's cause may lie */
    /* The longest stall of its holder the lock survives by design: the
     * lease less the holder's refresh period (0: not known, or none) */
    uint32_t slack_ms;
    bool metered;               /* the host stall meter ran: no stall line means none happened */
    struct history_latch latch; /* a latch run's settings (latches 0: not a latch run) */
    uint64_t dropped;           /* events lost to memory exhaustion */
};

/* Whether a latch event is one the files can say: a known type (renew's
 * rule aside, every latch call has an invoke), an error in range, a time
 * a waiter saw not after its line's. Both writers refuse the rest. */
static inline bool history_latch_expressible(const struct history_event *e)
{
    if (!history_f_latch(e->f) || e->type > HT_INFO || e->arg > HE_REFUSED)
        return false;
    if (e->f != HF_AWAIT || e->type == HT_INVOKE)
        return true;
    return e->zero_ns <= e->t_ns && e->resumed_ns <= e->t_ns;
}

/* The string tables a history's ids point into. */
struct history_names {
    const char *const *keys;
    size_t n_keys;
    const char *const *owners;
    size_t n_owners;
    const char *const *notes;
    size_t n_notes;
};

/* Merge n thread buffers into h (events copied; buffers untouched, and
 * none of them taken from), the tables copied from names. Returns 0, or -1 out of memory. */
int history_merge(struct history *h, struct history_buf *const *bufs, size_t n,
                  const struct history_names *names);

/* Write h as JSON lines: a "start" line, the events, an "end" line.
 * Returns 0, or -1 when writing failed (errno set). */
int history_write_jsonl(const struct history *h, FILE *f);
/* The same one line at a time (the start line, each event with names from
 * h's tables, the end line), for a history streamed from a reader; the
 * end flushes f. Each returns 0, or -1 with errno set. */
int history_jsonl_start(const struct history *h, FILE *f);
int history_jsonl_event(const struct history *h, const struct history_event *e, FILE *f);
int history_jsonl_end(const struct history *h, FILE *f);

/* What the reader takes from a file, which may come from anywhere (docs/history.md,
 * "Bounds"). A line locklab writes is under 3 KiB: its longest is a fault's, with a
 * 383-byte detail and 63 bytes of servers, each byte at worst escaped as \u00XX.
 * 64 KiB leaves another tool room for longer keys and owners, and is all the
 * reader ever holds of one line, however long the line is. */
#define HISTORY_LINE_MAX 65536
/* locklab runs at most 100,000 clients (SCENARIO_MAX_CLIENTS); another tool may
 * have more. The check keeps a few words per client, so 2^20 stays a few MiB. */
#define HISTORY_MAX_CLIENTS (1u << 20)
/* A fault's index in its scenario's list (at most 64 there); another tool
 * numbering every nemesis operation has room for a million. */
#define HISTORY_MAX_FAULT_INDEX ((1u << 20) - 1)
/* CLOCK_MONOTONIC counts from boot and CLOCK_REALTIME from 1970: 2^62 ns is
 * 146 years of uptime and the year 2116, and a week more cannot overflow. */
#define HISTORY_MAX_CLOCK_NS (1ULL << 62)
/* How long after the start line an event may be: a run lasts at most a day
 * (duration_s), and what happens past its end (a fault ending, a crashed
 * client's restart) at most a day more each; a week holds them all. */
#define HISTORY_MAX_SPAN_NS (7ULL * 86400 * 1000000000)
/* A seq counts one key's entries and exits, and dropped counts events:
 * 48 bits, more than a week of entries every 100 ns (2^43) would need.
 * locklab's own witness counts in 30 bits and the run unwraps them (resource.h). */
#define HISTORY_MAX_COUNT ((1ULL << 48) - 1)
/* The longest lease or slack: the scenario's ttl_ms is at most a day. */
#define HISTORY_MAX_MS 86400000u

/* Reading a history back, either format: history_reader.h. The binary
 * form, history.llh: history_bin.h. */

void history_free(struct history *h); /* frees contents; accepts a zeroed struct */

#endif
