/* fault_spec.c - the words of a fault spec's values and what its own
 * fields say, for the parser, the nemesis and the reports alike
 * (fault_spec.h). */
#include "sim/faults/fault_spec.h"

const char *const clock_method_words[3] = {"auto", "faketime", "ttl"};
const char *const failover_mode_words[3] = {"manual", "force", "takeover"};
const char *const fault_stream_words[3] = {"upstream", "downstream", "both"};
const char *const fault_data_words[2] = {"lost", "kept"};

const char *const fault_expect_names[FAULT_EXPECTS] = {"acquired", "failed", "recovery_ms"};

const struct expect_num *fault_expect_at(const struct fault_expect *x, size_t k)
{
    const struct expect_num *all[FAULT_EXPECTS] = {&x->acquired, &x->failed, &x->recovery_ms};
    return all[k];
}

const char *clock_method_name(enum clock_method m)
{
    return m < 3 ? clock_method_words[m] : "?";
}

size_t fault_node_count(const struct fault_spec *f, size_t n)
{
    switch (f->pick) {
    case PICK_NODE:
    case PICK_ONE:
    case PICK_LEADER:
    case PICK_FOLLOWER:
        return 1;
    case PICK_POOLER:
        return 0; /* none of the lock's servers: the one in front of them */
    case PICK_MINORITY:
        return n / 2;
    case PICK_MAJORITY:
        return n / 2 + 1;
    case PICK_ALL:
    case PICK_PRIMARIES:
        return n;
    case PICK_HOLDER_MAJORITY:
        return f->count ? f->count : n / 2 + 1;
    }
    return n;
}

const char *fault_stream_name(unsigned stream)
{
    return stream >= STREAM_UPSTREAM && stream <= STREAM_BOTH_WAYS
               ? fault_stream_words[stream - STREAM_UPSTREAM]
               : fault_stream_words[STREAM_DOWNSTREAM - STREAM_UPSTREAM];
}

const char *fault_data_name(enum fault_data d)
{
    return fault_data_words[d == DATA_KEPT ? DATA_KEPT - DATA_LOST : 0];
}
