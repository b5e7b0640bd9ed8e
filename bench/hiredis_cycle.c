/* hiredis_cycle.c - the peer for bench/cycle_instructions.sh: the same
 * uncontended Redis lock cycle locklab's redis algorithm runs (SET key
 * owner NX PX ttl, then the compare-and-delete script by EVALSHA), written
 * the way a hiredis user usually would, with redisCommandArgv, and nothing
 * else: no histogram, no history, no resource. Callgrind counts the
 * instructions of lock_cycle() only.
 *
 *   hiredis_cycle PORT CYCLES
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char release_script[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/* Kept out of line so callgrind can collect exactly one cycle's work. */
__attribute__((noinline)) static int lock_cycle(redisContext *c, const char *sha)
{
    const char *set[] = {"SET", "lock:stock:0", "owner", "NX", "PX", "10000"};
    size_t set_len[] = {3, 12, 5, 2, 2, 5};
    redisReply *r = redisCommandArgv(c, 6, set, set_len);
    int ok = r && r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    const char *rel[] = {"EVALSHA", sha, "1", "lock:stock:0", "owner"};
    size_t rel_len[] = {7, 40, 1, 12, 5};
    r = redisCommandArgv(c, 5, rel, rel_len);
    ok = ok && r && r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hiredis_cycle PORT CYCLES\n");
        return 2;
    }
    redisContext *c = redisConnect("127.0.0.1", atoi(argv[1]));
    if (c == NULL || c->err) {
        fprintf(stderr, "hiredis_cycle: connect: %s\n", c ? c->errstr : "out of memory");
        return 3;
    }
    redisReply *r = redisCommand(c, "SCRIPT LOAD %s", release_script);
    if (r == NULL || r->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "hiredis_cycle: SCRIPT LOAD failed\n");
        return 3;
    }
    char sha[41];
    snprintf(sha, sizeof(sha), "%s", r->str);
    freeReplyObject(r);
    long n = atol(argv[2]);
    for (long i = 0; i < n; i++)
        if (!lock_cycle(c, sha)) {
            fprintf(stderr, "hiredis_cycle: cycle %ld failed\n", i);
            return 1;
        }
    redisFree(c);
    return 0;
}
