/* signals.c — see signals.h. */
#include "util/signals.h"

#include <pthread.h>
#include <stddef.h>

/* Delivered to the faulting thread whatever its mask says; blocked, they kill unhandled. */
static const int FAULT_SIGNALS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};

void gl_block_async_signals(sigset_t *old)
{
    sigset_t async;
    sigfillset(&async);
    for (size_t i = 0; i < sizeof(FAULT_SIGNALS) / sizeof(FAULT_SIGNALS[0]); i++)
        sigdelset(&async, FAULT_SIGNALS[i]);
    pthread_sigmask(SIG_SETMASK, &async, old);
}
