/* test_signals.c — util/signals.h: a worker thread blocks the asynchronous signals and
 * leaves the faults to the process's handlers (the workbench's puts the terminal back). */
#include "util/signals.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HANDLED_EXIT 40 /* the child's exit code: HANDLED_EXIT + the signal its handler saw */

static void exit_from_handler(int sig) { _exit(HANDLED_EXIT + sig); }

/* A fault of the thread's own: a write to a page it may not touch (no undefined
 * behaviour the sanitizers would report first, unlike a null pointer). */
static void *touch_protected_page(void *arg)
{
    (void)arg;
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED)
        page[0] = 1;
    return NULL;
}

static void *raise_signal(void *arg)
{
    pthread_kill(pthread_self(), (int)(intptr_t)arg);
    return NULL;
}

/* In a child: install the handler, make a thread under the worker mask, let it fault;
 * the child's wait status. */
static int worker_fault_status(int sig, void *(*fault)(void *))
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct sigaction sa = {.sa_handler = exit_from_handler};
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
        sigset_t old;
        gl_block_async_signals(&old);
        pthread_t t;
        if (pthread_create(&t, NULL, fault, (void *)(intptr_t)sig) != 0)
            _exit(1);
        pthread_join(t, NULL);
        _exit(0); /* the fault was held back: what must not happen */
    }
    int status = 0;
    cr_assert(waitpid(pid, &status, 0) == pid);
    return status;
}

static const int FAULTS[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};

Test(signals, a_workers_fault_runs_the_process_handler)
{
    int status = worker_fault_status(SIGSEGV, touch_protected_page);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == HANDLED_EXIT + SIGSEGV,
              "a segfault in a worker thread did not reach the handler (status %#x)", status);
}

Test(signals, every_fault_signal_reaches_the_handler)
{
    for (size_t i = 0; i < sizeof(FAULTS) / sizeof(FAULTS[0]); i++) {
        int status = worker_fault_status(FAULTS[i], raise_signal);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == HANDLED_EXIT + FAULTS[i],
                  "%s is blocked in a worker (status %#x)", strsignal(FAULTS[i]), status);
    }
}

Test(signals, asynchronous_signals_are_blocked)
{
    static const int ASYNC[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGCHLD, SIGPIPE, SIGQUIT};
    sigset_t old, now;
    gl_block_async_signals(&old);
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (size_t i = 0; i < sizeof(ASYNC) / sizeof(ASYNC[0]); i++)
        cr_expect(sigismember(&now, ASYNC[i]), "%s is not blocked", strsignal(ASYNC[i]));
    for (size_t i = 0; i < sizeof(FAULTS) / sizeof(FAULTS[0]); i++)
        cr_expect(!sigismember(&now, FAULTS[i]), "%s is blocked", strsignal(FAULTS[i]));
}
