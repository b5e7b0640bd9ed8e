/* faketime_shim.c - preloaded before libfaketime into a managed Redis whose
 * clock a clock_jump fault moves (SETUP.md: Debian's redis hangs under a
 * plain LD_PRELOAD of libfaketime).
 *
 * Why it hangs: jemalloc sets itself up under its own lock and, while it
 * holds it, calls clock_gettime and pthread_cond_init; libfaketime wraps
 * both and, on its first use, looks up symbols, and a failed lookup
 * allocates: jemalloc's lock again, held by the same thread. So until
 * libfaketime has been set up (by this library's constructor, outside any
 * allocator lock), time comes straight from the kernel; and a default
 * condition variable, all zeros as PTHREAD_COND_INITIALIZER, is made here
 * without libfaketime. After that every time call goes to libfaketime.
 *
 * libfaketime also makes a shared memory segment and a semaphore named by
 * the pid, for children it execs, and removes them only at a clean exit:
 * a killed server (a kill fault, or locklab SIGKILLed) would leave them in
 * /dev/shm. Redis execs nothing, so their names go at once; the process
 * keeps what it opened.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_fn)(clockid_t, struct timespec *);
typedef int (*cond_init_fn)(pthread_cond_t *, const pthread_condattr_t *);

static clock_fn faked_clock; /* libfaketime's, once it is set up */
static atomic_bool ready;
static _Thread_local int inside; /* this thread is in libfaketime already */

static int kernel_clock(clockid_t id, struct timespec *ts)
{
    return (int)syscall(SYS_clock_gettime, id, ts);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!atomic_load_explicit(&ready, memory_order_acquire) || inside)
        return kernel_clock(id, ts);
    inside = 1;
    int rc = faked_clock(id, ts);
    inside = 0;
    return rc;
}

int pthread_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr)
{
    if (attr == NULL) {
        memset(cond, 0, sizeof(*cond));
        return 0;
    }
    cond_init_fn next = (cond_init_fn)dlsym(RTLD_NEXT, "pthread_cond_init");
    return next ? next(cond, attr) : -1;
}

__attribute__((constructor)) static void set_up_libfaketime(void)
{
    faked_clock = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
    if (faked_clock == NULL)
        return; /* no libfaketime after us: the kernel's time throughout */
    struct timespec ts;
    inside = 1;
    faked_clock(CLOCK_REALTIME, &ts); /* its first use: it sets itself up now */
    inside = 0;
    atomic_store_explicit(&ready, 1, memory_order_release);
    char name[64];
    snprintf(name, sizeof(name), "/faketime_shm_%ld", (long)getpid());
    shm_unlink(name);
    snprintf(name, sizeof(name), "/faketime_sem_%ld", (long)getpid());
    sem_unlink(name);
}
