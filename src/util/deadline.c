/* deadline.c — work in a forked child under a deadline (deadline.h).
 *
 * The child sends one frame: u32 status, u64 payload length, then the result bytes or the
 * failure message. */
#include "util/deadline.h"

#include "util/safe_write.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define MAX_JOB_OUTPUT ((size_t)1 << 31) /* 2 GiB: far beyond any result we make */
#define JOB_HEADER 12                    /* u32 status, u64 payload length */
#define READ_CHUNK 65536

/* Signals the child takes with their default action, unblocked: a handler of the
 * parent's (the TUI's SIGINT or SIGWINCH, the temporary-file cleanup of safe_write.c)
 * has no business running in a worker. They stay blocked from before fork until here. */
static const int CHILD_DEFAULT_SIGNALS[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,  SIGPIPE,
                                            SIGALRM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD};

static void reset_child_signals(void)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(CHILD_DEFAULT_SIGNALS); i++)
        signal(CHILD_DEFAULT_SIGNALS[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
}

/* The child: run the job, send one frame (status, length, then the result or the
 * message) and leave with _exit: no atexit handlers, no second flush of the parent's
 * stdio buffers, no leak report about the heap it inherited. */
static _Noreturn void child_main(int fd, const gl_deadline_job *job, pid_t parent)
{
#ifdef __linux__
    /* Die with the waiting parent: an interrupted export must not leave a layout
     * running for hours. (The forking thread waits for us, so it outlives us.) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
#else
    (void)parent;
#endif
    reset_child_signals();
    gl_strbuf out = {0};
    gl_status st = job->fn(job->ctx, &out);
    const char *payload = st == GL_OK ? (out.s ? out.s : "") : gl_error_message();
    uint32_t status = (uint32_t)st;
    uint64_t len = st == GL_OK ? out.len : strlen(payload);
    unsigned char head[JOB_HEADER];
    memcpy(head, &status, 4);
    memcpy(head + 4, &len, 8);
    bool sent =
        gl_write_fully(fd, head, sizeof(head)) && gl_write_fully(fd, payload, (size_t)len);
    _exit(sent ? 0 : 1);
}

/* Append what the child writes until it closes the pipe (GL_OK) or the deadline passes
 * (*timed_out). */
static gl_status read_until(const gl_deadline_job *job, int fd, int64_t deadline, gl_strbuf *in,
                            bool *timed_out)
{
    for (;;) {
        int64_t left = deadline - (int64_t)gl_now_ms();
        if (left <= 0) {
            *timed_out = true;
            return GL_ERR_UNSUPPORTED;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (ready < 0 && errno != EINTR)
            return gl_fail(GL_ERR_IO, "waiting for %s: %s", job->what, strerror(errno));
        if (ready <= 0)
            continue;
        GL_GROW(in->s, in->cap, in->len + READ_CHUNK);
        ssize_t n = read(fd, in->s + in->len, READ_CHUNK);
        if (n == 0)
            return GL_OK;
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return gl_fail(GL_ERR_IO, "reading from %s: %s", job->what, strerror(errno));
        in->len += (size_t)n;
        if (in->len > MAX_JOB_OUTPUT)
            return gl_fail(GL_ERR_INTERNAL, "%s sent more than %zu bytes", job->what,
                           MAX_JOB_OUTPUT);
    }
}

/* Wait for the child to end (killing it first when asked) and return its wait status;
 * -1 when there is none to be had (SIGCHLD ignored: the kernel reaped it already). */
static int reap(pid_t pid, bool kill_first)
{
    if (kill_first)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

/* The child's frame as the job's result: *bytes is the payload, NUL-terminated. */
static gl_status job_result(const gl_deadline_job *job, int status, gl_strbuf *in,
                            char **bytes, size_t *len)
{
    if (status != -1 && WIFSIGNALED(status))
        return gl_fail(GL_ERR_INTERNAL, "%s died of signal %d (%s)", job->what,
                       WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return gl_fail(GL_ERR_INTERNAL, "%s exited with status %d", job->what,
                       WEXITSTATUS(status));
    uint32_t st = 0;
    uint64_t n = 0;
    if (in->len >= JOB_HEADER) {
        memcpy(&st, in->s, 4);
        memcpy(&n, in->s + 4, 8);
    }
    if (in->len < JOB_HEADER || n != in->len - JOB_HEADER)
        return gl_fail(GL_ERR_INTERNAL, "%s ended after %zu bytes without a whole result",
                       job->what, in->len);
    memmove(in->s, in->s + JOB_HEADER, (size_t)n);
    in->s[n] = '\0'; /* room: the buffer held the header too */
    if (st != GL_OK)
        return gl_fail(st <= GL_ERR_UNSUPPORTED ? (gl_status)st : GL_ERR_INTERNAL, "%s", in->s);
    *len = (size_t)n;
    *bytes = in->s;
    *in = (gl_strbuf){0};
    return GL_OK;
}

/* No child to be had: run the job here, without a bound. */
static gl_status run_here(const gl_deadline_job *job, char **bytes, size_t *len)
{
    gl_strbuf out = {0};
    gl_status st = job->fn(job->ctx, &out);
    if (st != GL_OK) {
        free(out.s);
        return st;
    }
    *len = out.len;
    *bytes = gl_sb_take(&out);
    return GL_OK;
}

gl_status gl_run_with_deadline(const gl_deadline_job *job, char **bytes, size_t *len,
                               bool *timed_out)
{
    *bytes = NULL;
    *len = 0;
    *timed_out = false;
    int fds[2];
    if (pipe(fds) != 0)
        return run_here(job, bytes, len);
    for (int i = 0; i < 2; i++) /* another thread's fork+exec must not keep our pipe open */
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    int64_t deadline = (int64_t)gl_now_ms() + job->timeout_ms;
    pid_t parent = getpid();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (job->guard)
        pthread_mutex_lock(job->guard);
    pid_t pid = fork();
    if (pid == 0) {
        if (job->guard)
            pthread_mutex_init(job->guard, NULL);
        close(fds[0]);
        child_main(fds[1], job, parent);
    }
    if (job->guard)
        pthread_mutex_unlock(job->guard);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return run_here(job, bytes, len);
    }
    gl_strbuf in = {0};
    gl_status st = read_until(job, fds[0], deadline, &in, timed_out);
    int status = reap(pid, st != GL_OK);
    close(fds[0]);
    if (st == GL_OK)
        st = job_result(job, status, &in, bytes, len);
    free(in.s);
    return st;
}
