/* settings.c - a plug-in's integer key read and written by its
 * descriptor, for whoever holds the plug-in's struct without its type:
 * the reports, the proxy's tests, the faults' records. */
#include <stdint.h>
#include <string.h>

#include "algorithms/settings.h"

long long setting_int(const struct setting_key *k, const void *settings)
{
    const char *at = (const char *)settings + k->offset;
    uint32_t u32;
    uint64_t u64;
    int64_t i64;
    int choice;
    switch (k->type) {
    case SETTING_U32:
        memcpy(&u32, at, sizeof(u32));
        return u32;
    case SETTING_U64:
        memcpy(&u64, at, sizeof(u64));
        return (long long)u64;
    case SETTING_I64:
        memcpy(&i64, at, sizeof(i64));
        return i64;
    case SETTING_BOOL:
        return *(const bool *)at;
    case SETTING_CHOICE:
        memcpy(&choice, at, sizeof(choice));
        return choice;
    case SETTING_NUMBER:
        break;
    }
    return 0;
}

void setting_set_int(const struct setting_key *k, void *settings, long long v)
{
    char *at = (char *)settings + k->offset;
    uint32_t u32 = (uint32_t)v;
    uint64_t u64 = (uint64_t)v;
    int64_t i64 = v;
    if (k->type == SETTING_U32)
        memcpy(at, &u32, sizeof(u32));
    else if (k->type == SETTING_U64)
        memcpy(at, &u64, sizeof(u64));
    else if (k->type == SETTING_I64)
        memcpy(at, &i64, sizeof(i64));
    else if (k->type == SETTING_BOOL)
        *(bool *)at = v != 0;
}
