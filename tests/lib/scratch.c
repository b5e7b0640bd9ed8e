/* scratch.c - removing a test's temporary folder (scratch.h). */
#include "tests/lib/scratch.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *who_now = "test";

/* One entry, its contents first (FTW_DEPTH); a symbolic link is removed,
 * never followed (FTW_PHYS). Goes on past an entry it cannot remove: that
 * one stays and is named. */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    int rc = flag == FTW_DP || flag == FTW_DNR ? rmdir(path) : unlink(path);
    if (rc != 0 && errno != ENOENT)
        fprintf(stderr, "%s: cannot remove %s: %s\n", who_now, path, strerror(errno));
    return 0;
}

void scratch_remove(const char *who, const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return; /* gone, or a link put in its place: nothing of ours */
    const char *keep = getenv("LOCKLAB_KEEP_TMP");
    if (keep != NULL && strcmp(keep, "1") == 0) {
        fprintf(stderr, "%s: LOCKLAB_KEEP_TMP=1: kept %s\n", who, dir);
        return;
    }
    who_now = who;
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
