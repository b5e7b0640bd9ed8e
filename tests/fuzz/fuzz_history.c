/* fuzz_history.c - libFuzzer target: any bytes as the history file
 * `locklab check` reads (history.jsonl or history.llh, told apart by their
 * first bytes), then checked as cmd_check does (sim/cli/cmd_check.c): the
 * sections, fault spans, availability, stuck keys, host stalls, the
 * checker and the lines it prints. Whatever the input, the reader must
 * end in a history or in one error line, and nothing after it may crash,
 * leak or do undefined behaviour (ASan, UBSan). scripts/fuzz.sh runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/report.h"
#include "sim/check/result.h"
#include "sim/record/history.h"
#include "sim/record/history_reader.h"

/* What cmd_check does with a history it has read, into out. */
static void check_as_cmd_check(struct run_result *res, FILE *out)
{
    char line[320];
    res->t0_mono_ns = res->hist.start_mono_ns;
    if (result_check_history(res, (uint64_t)res->hist.ttl_ms * 1000000u, false) < 0)
        return; /* out of memory: check's exit 3 */
    report_violations(out, res, 10);
    report_spans(out, res);
    if (report_stuck(res, line, sizeof(line)))
        fputs(line, out);
    if (result_host_made_violations(res, line, sizeof(line)))
        fputs(line, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *out;
    static char empty[1];
    if (out == NULL && (out = fopen("/dev/null", "w")) == NULL)
        abort();
    FILE *f = fmemopen(size ? (void *)data : empty, size, "r");
    if (f == NULL)
        abort();
    static struct run_result res;
    memset(&res, 0, sizeof(res));
    char err[512];
    if (history_read_stream(f, "fuzz", &res.hist, err, sizeof(err)) == 0)
        check_as_cmd_check(&res, out);
    else if (strchr(err, '\n') != NULL || strncmp(err, "fuzz:", 5) != 0)
        abort(); /* the error is one line naming the file and its line */
    result_free(&res);
    fclose(f);
    return 0;
}
