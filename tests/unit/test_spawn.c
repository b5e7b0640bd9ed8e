/* test_spawn.c - what a process the fleet starts inherits of locklab:
 * stdin, stdout and stderr, nothing more. A server restarted mid-run used
 * to keep copies of every client socket open at the time (the client
 * libraries open them without close-on-exec), so a closed client
 * connection never ended at its server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim/fleet/spawn.h"

/* The descriptors a child started by spawn_run has, as it lists them: its
 * own /proc/self/fd, read by ls (whose directory handle is the 3). */
static void child_fds(char *out, size_t len)
{
    char path[] = "/tmp/locklab-spawn-XXXXXX";
    int f = mkstemp(path);
    assert_true(f >= 0);
    close(f);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "exec ls /proc/self/fd > %s", path);
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    assert_int_equal(spawn_run(NULL, argv, NULL, 5000), 0);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    size_t at = 0;
    char word[32];
    out[0] = '\0';
    while (fscanf(in, "%31s", word) == 1)
        at += (size_t)snprintf(out + at, len - at, "%s%s", at ? " " : "", word);
    fclose(in);
    unlink(path);
}

static void a_child_gets_no_descriptor_past_stderr(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); /* no close-on-exec */
    int high = dup2(sv[0], 200);
    assert_int_equal(high, 200);
    char fds[256];
    child_fds(fds, sizeof(fds));
    assert_string_equal(fds, "0 1 2 3");
    close(sv[0]);
    close(sv[1]);
    close(high);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_child_gets_no_descriptor_past_stderr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
