/* test_run_meta.c - a run's metadata: the command line quoted so a shell
 * reads it back into the same words (exact strings), cut to its buffer
 * with the length it needed; what run_meta_init takes of argv and of the
 * build; and the fleet's reading of a server's version out of its answer
 * (server_version_field), on answers as Redis, ZooKeeper and a refusal give
 * them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "sim/engine/fleet.h"
#include "sim/fleet/server_kind.h"
#include "sim/record/run_meta.h"

static void quote(const char *const *argv, size_t argc, const char *want)
{
    char out[256];
    size_t n = run_meta_quote(out, sizeof(out), argc, argv);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
}

static void plain_words_stay_as_they_are(void **state)
{
    (void)state;
    const char *argv[] = {"build/locklab",  "run", "scenarios/x.json",   "--duration", "2.5",
                          "--out=/tmp/a_b", "-r",  "127.0.0.1:6379,h:1", "%^@+"};
    quote(argv, 9,
          "build/locklab run scenarios/x.json --duration 2.5 --out=/tmp/a_b -r "
          "127.0.0.1:6379,h:1 %^@+");
}

static void other_words_are_single_quoted(void **state)
{
    (void)state;
    const char *argv[] = {"locklab", "a b", "", "it's", "$HOME", "x*", "tab\there", "\"q\""};
    quote(argv, 8, "locklab 'a b' '' 'it'\\''s' '$HOME' 'x*' 'tab\there' '\"q\"'");
}

static void a_short_buffer_is_cut_and_told(void **state)
{
    (void)state;
    const char *argv[] = {"locklab", "a b"};
    char out[8];
    assert_int_equal(run_meta_quote(out, sizeof(out), 2, argv), 13); /* locklab 'a b' */
    assert_string_equal(out, "locklab");
    assert_int_equal(run_meta_quote(out, 1, 2, argv), 13);
    assert_string_equal(out, "");
}

static void init_keeps_argv_and_the_build(void **state)
{
    (void)state;
    char *argv[] = {"locklab", "run", "my file.json"};
    struct run_meta m;
    run_meta_init(&m, 3, argv);
    assert_int_equal(m.argc, 3);
    assert_ptr_equal(m.argv[2], argv[2]);
    assert_string_equal(m.command_line, "locklab run 'my file.json'");
    assert_string_equal(m.version, LOCKLAB_VERSION);
    assert_ptr_equal(m.commit, locklab_commit);
    assert_true(m.commit[0] != '\0');
    assert_true(m.cores_online >= 1);
    assert_true(m.cores_usable >= 1 && m.cores_usable <= m.cores_online);
    assert_true(m.started_wall_ns > 0);
}

static void versions_read_from_answers(void **state)
{
    (void)state;
    static const struct {
        const char *answer, *key, *end;
        int rc;
        const char *version, *answer_kept, *why;
    } cases[] = {
        {"$2000\r\n# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n",
         "redis_version:", NULL, 0, "7.0.15", "redis_version:7.0.15", ""},
        {"Zookeeper version: 3.8.0-1, built on 2024-12-29 17:54 UTC\nLatency min/avg/max: "
         "0/0.0/0\n",
         "Zookeeper version:", ",", 0, "3.8.0-1",
         "Zookeeper version: 3.8.0-1, built on 2024-12-29 17:54 UTC", ""},
        {"srvr is not executed because it is not in the whitelist.\n", "Zookeeper version:", ",",
         -1, "", NULL,
         "no Zookeeper version: in its answer: srvr is not executed because it is not in the "
         "whitelist."},
        {"redis_version:\r\n", "redis_version:", NULL, -1, "", NULL,
         "an empty redis_version: in its answer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct server_version v = {0};
        assert_int_equal(server_version_field(cases[i].answer, cases[i].key, cases[i].end, &v),
                         cases[i].rc);
        assert_string_equal(v.version, cases[i].version);
        if (cases[i].answer_kept)
            assert_string_equal(v.answer, cases[i].answer_kept);
        assert_string_equal(v.why, cases[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_words_stay_as_they_are),
        cmocka_unit_test(other_words_are_single_quoted),
        cmocka_unit_test(a_short_buffer_is_cut_and_told),
        cmocka_unit_test(init_keeps_argv_and_the_build),
        cmocka_unit_test(versions_read_from_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
