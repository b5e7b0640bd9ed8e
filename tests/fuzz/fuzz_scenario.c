/* fuzz_scenario.c - libFuzzer target: any bytes as a scenario file, loaded
 * and validated as `locklab run` and `show` do (scenario_load_text: each
 * value, then the checks of the whole), and a valid one asked what each
 * algorithm lacks for it, as `compare` asks. Whatever the input, the
 * answer is a scenario or one error line, never a crash, a leak or
 * undefined behaviour. The input has no file name ("").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/lock.h"
#include "sim/scenario/scenario.h"

static void ask_every_algorithm(const struct scenario *s)
{
    char why[256];
    for (size_t i = 0; i < lock_count(); i++) {
        const struct lock_ops *ops = lock_at(i);
        (void)scenario_lacks(s, ops);
        (void)scenario_servers(s, ops);
        if (scenario_fault_misfit(s, ops, why, sizeof(why)) >= 0 && strchr(why, '\n') != NULL)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct scenario s; /* large: off the stack */
    char err[SCENARIO_ERR_MAX];
    if (scenario_load_text("", (const char *)data, size, NULL, &s, err) == 0)
        ask_every_algorithm(&s);
    else if (strchr(err, '\n') != NULL || err[0] == '\0')
        abort(); /* a refusal is one line */
    return 0;
}
