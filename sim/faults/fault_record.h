/* fault_record.h - what one fault of the timeline did, as the nemesis hands
 * it over once the run is over (nemesis_report): plain data that the
 * verdict (a fault not carried out leaves the run unjudged) and the reports
 * read without reaching the nemesis. */
#ifndef LOCKLAB_FAULT_RECORD_H
#define LOCKLAB_FAULT_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/faults/fault_spec.h"

#define FAULT_TEXT_MAX 384

struct fault_record {
    struct fault_spec spec;
    bool fired;
    bool ended;
    uint32_t client;   /* client faults: who suffered it */
    uint32_t key;      /* client faults: the key it held */
    uint64_t start_ns; /* CLOCK_MONOTONIC */
    uint64_t end_ns;
    /* process faults */
    char servers[64];                /* the ones it struck: "redis-2,redis-4" */
    char detail[FAULT_TEXT_MAX];     /* what it did: "SIGKILL redis-2 (pid 4242)" */
    char end_detail[FAULT_TEXT_MAX]; /* how it ended: "redis-2 back as pid 4300, data lost" */
    bool healed;                     /* ended by the end of the run, not by its own time */
    int moved_from;                  /* slot_migrate: the node that served the slot */
    long moved_slot;                 /* slot_migrate: the slot on the move, plus 1 (0: none) */
    uint64_t promoted_ns;            /* failover: when sentinel named the new master (0: not yet) */
    char error[FAULT_TEXT_MAX];      /* what could not be done, if anything */
};

#endif
