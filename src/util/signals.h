/* signals.h — which signals a worker thread blocks.
 *
 * A worker thread (the workbench's jobs) blocks the asynchronous signals — SIGINT,
 * SIGWINCH, SIGTERM, ... — so that they reach the main thread, whose poll they must
 * wake. It must not block the faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
 * SIGABRT): a fault goes to the thread that caused it, and when that thread blocks it
 * the kernel kills the process without running any handler, so the workbench's handler
 * never puts the terminal back (it stayed raw, without echo, after a crash in `r`).
 */
#ifndef GL_SIGNALS_H
#define GL_SIGNALS_H

#include <signal.h>

/* Block the asynchronous signals in the calling thread (threads it creates inherit the
 * mask); the previous mask goes to *old for pthread_sigmask(SIG_SETMASK, old, NULL). */
void gl_block_async_signals(sigset_t *old);

#endif
