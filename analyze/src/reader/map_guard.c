/* analyze/src/reader/map_guard.c: the trace reader maps plain files (no copy, and the split parser
 * needs the whole file at once), but a mapped file that shrinks turns the next read past its new
 * end into SIGBUS. Checking the size with fstat first races with the truncation, and reading the
 * whole file into memory first would cost its size in RSS (the reader holds ~0.2x). So a SIGBUS
 * handler, installed once when the first file is mapped, replaces the mapping from the faulting
 * page to its end with zero pages and returns: the faulting read is retried and sees NUL, which
 * the lexer rejects, and the reader then reads the file as the truncated trace it now is. A
 * fault anywhere else goes to the handler that was there before (or the default action, as if
 * we were not here). This file holds analyze's only process-global state: the guarded ranges
 * (lock-free slots the handler can read) and the previous SIGBUS action. */
#include "reader/map_guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define N_SLOTS 64

struct guard_slot {
    atomic_uintptr_t start; /* 0: free */
    atomic_size_t len;
    atomic_int hit;
    atomic_int used; /* claimed by map_guard_add */
};

static struct guard_slot slots[N_SLOTS];
static struct sigaction previous;
static uintptr_t page_size;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

static void pass_on(int sig, siginfo_t *si, void *ctx)
{
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction)
        previous.sa_sigaction(sig, si, ctx);
    else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN)
        previous.sa_handler(sig);
    else
        signal(sig, SIG_DFL); /* the read faults again and the process dies as it would have */
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < N_SLOTS; i++) {
        uintptr_t s = atomic_load(&slots[i].start);
        size_t n = atomic_load(&slots[i].len);
        if (!s || a < s || a >= s + n)
            continue;
        uintptr_t page = a & ~(page_size - 1);
        void *m = mmap((void *)page, s + n - page, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (m != MAP_FAILED) {
            atomic_store(&slots[i].hit, 1);
            return;
        }
    }
    pass_on(sig, si, ctx);
}

static void install(void)
{
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    installed = sigaction(SIGBUS, &sa, &previous) == 0;
}

int map_guard_add(const void *start, size_t len)
{
    pthread_once(&install_once, install);
    if (!installed)
        return MAP_GUARD_NONE;
    for (int i = 0; i < N_SLOTS; i++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&slots[i].used, &free_slot, 1))
            continue;
        atomic_store(&slots[i].hit, 0);
        atomic_store(&slots[i].len, len);
        atomic_store(&slots[i].start, (uintptr_t)start);
        return i;
    }
    return MAP_GUARD_NONE;
}

int map_guard_hit(int slot)
{
    return slot >= 0 && atomic_load(&slots[slot].hit);
}

void map_guard_remove(int slot)
{
    if (slot < 0)
        return;
    atomic_store(&slots[slot].start, 0);
    atomic_store(&slots[slot].used, 0);
}
