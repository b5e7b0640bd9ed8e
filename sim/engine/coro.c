/* coro.c - coroutines (coro.h): stacks, the switch, and what the
 * sanitizers must be told about it. */
#include "sim/engine/coro.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORO_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CORO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CORO_TSAN 1
#endif
#endif

#ifdef CORO_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#ifdef CORO_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

static void coro_main(struct coro *co);

#if defined(__x86_64__)
/* coro_switch(from, to): push the callee-saved registers on the current
 * stack, save it in *from, take to's, pop its registers, return into it.
 * A new coroutine's stack is laid out (coro_new) so that this return lands
 * in coro_trampoline with the coroutine in r12. */
void coro_switch(void **from_sp, void *to_sp);
void coro_trampoline(void);
__asm__(".text\n"
        ".globl coro_switch\n"
        ".type coro_switch,@function\n"
        "coro_switch:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size coro_switch,.-coro_switch\n"
        ".globl coro_trampoline\n"
        ".type coro_trampoline,@function\n"
        "coro_trampoline:\n"
        "  movq %r12, %rdi\n"
        "  call coro_main_entry\n"
        "  ud2\n"
        ".size coro_trampoline,.-coro_trampoline\n");

void coro_main_entry(struct coro *co);
void coro_main_entry(struct coro *co)
{
    coro_main(co);
}

static void prepare(struct coro *co)
{
    /* After the six pops and the ret, rsp is the 16-aligned top: the
     * trampoline's call then enters coro_main_entry as the ABI wants. */
    uintptr_t top = ((uintptr_t)co->stack + co->size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 56);
    memset(sp, 0, 56);
    sp[3] = (uint64_t)(uintptr_t)co; /* r12 */
    sp[6] = (uint64_t)(uintptr_t)coro_trampoline;
    co->sp = sp;
}

static void switch_to(struct coro *from, struct coro *to)
{
    coro_switch(&from->sp, to->sp);
}
#else
#include <ucontext.h>

static struct coro *starting; /* ucontext hands no pointer to its entry */

static void uc_entry(void)
{
    coro_main(starting);
}

static void prepare(struct coro *co)
{
    ucontext_t *uc = co->ucp;
    getcontext(uc);
    uc->uc_stack.ss_sp = co->stack;
    uc->uc_stack.ss_size = co->size;
    uc->uc_link = NULL;
    makecontext(uc, uc_entry, 0);
}

static void switch_to(struct coro *from, struct coro *to)
{
    if (to->sp == NULL) { /* first run */
        to->sp = to;
        starting = to;
    }
    swapcontext(from->ucp, to->ucp);
}
#endif

/* The switch, told to the sanitizers: from may be left for good (it
 * returned), to be resumed later otherwise. A coroutine switched back to
 * learns the stack it came from (back_*): the home's, which worker_run
 * prepares afresh each time it is called; kept from the first entry only,
 * ASan took the home's stack for [0, 0) after a second worker_run. */
static void hand_over(struct coro *from, struct coro *to, const void *to_bottom, size_t to_size,
                      bool from_done, const void **back_bottom, size_t *back_size)
{
#ifdef CORO_TSAN
    __tsan_switch_to_fiber(to->san, 0);
#endif
#ifdef CORO_ASAN
    __sanitizer_start_switch_fiber(from_done ? NULL : &from->fake, to_bottom, to_size);
#else
    (void)to_bottom;
    (void)to_size;
    (void)from_done;
#endif
    switch_to(from, to);
#ifdef CORO_ASAN
    __sanitizer_finish_switch_fiber(from->fake, back_bottom, back_size);
#else
    (void)back_bottom;
    (void)back_size;
#endif
}

static void coro_main(struct coro *co)
{
    struct coro_home *home = co->home;
#ifdef CORO_ASAN
    __sanitizer_finish_switch_fiber(NULL, &home->bottom, &home->size);
#endif
    co->fn(co->arg);
    co->done = true;
    hand_over(co, &home->self, home->bottom, home->size, true, NULL, NULL);
    abort(); /* a finished coroutine is never resumed */
}

void coro_home_init(struct coro_home *home)
{
    memset(home, 0, sizeof(*home));
#ifdef CORO_TSAN
    home->self.san = __tsan_get_current_fiber();
#endif
#if !defined(__x86_64__)
    static _Thread_local ucontext_t uc;
    home->self.ucp = &uc;
#endif
}

int coro_new(struct coro *co, void (*fn)(void *), void *arg, bool guard)
{
    memset(co, 0, sizeof(*co));
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    co->map_size = CORO_STACK_SIZE + (guard ? page : 0);
    co->map = mmap(NULL, co->map_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (co->map == MAP_FAILED) {
        co->map = NULL;
        return -1;
    }
    if (guard && mprotect(co->map, page, PROT_NONE) < 0) {
        int e = errno;
        coro_free(co);
        errno = e;
        return -1;
    }
    co->stack = (char *)co->map + (guard ? page : 0);
    co->size = CORO_STACK_SIZE;
    co->fn = fn;
    co->arg = arg;
#if !defined(__x86_64__)
    co->ucp = calloc(1, sizeof(ucontext_t));
    if (co->ucp == NULL) {
        coro_free(co);
        errno = ENOMEM;
        return -1;
    }
#endif
#ifdef CORO_TSAN
    co->san = __tsan_create_fiber(0);
#endif
    prepare(co);
    return 0;
}

void coro_free(struct coro *co)
{
#ifdef CORO_TSAN
    if (co->san)
        __tsan_destroy_fiber(co->san);
#endif
    if (co->map)
        munmap(co->map, co->map_size);
    free(co->ucp);
    memset(co, 0, sizeof(*co));
}

void coro_resume(struct coro_home *home, struct coro *co)
{
    co->home = home;
    home->current = co;
    hand_over(&home->self, co, co->stack, co->size, false, NULL, NULL);
    home->current = NULL;
}

void coro_yield(struct coro_home *home)
{
    struct coro *co = home->current;
    hand_over(co, &home->self, home->bottom, home->size, false, &home->bottom, &home->size);
}
