/* deadline.h — run a piece of work in a forked child and give it a deadline.
 *
 * Some work cannot be bounded from inside: dot's layout runs for minutes on some graphs,
 * nothing in Graphviz stops it and a thread cannot be cancelled in the middle of it. So
 * the work runs in a child process that sends its result through a pipe; the parent
 * reads while it waits (a full pipe never stalls the child) and kills and reaps the
 * child when the deadline passes. A crash of the child is an error naming the signal,
 * not a crash of ours. No child and no descriptor outlives the call; on Linux the child
 * also dies with the thread that waits for it (PR_SET_PDEATHSIG), so an interrupted
 * export leaves nothing running.
 *
 * The child takes SIGINT, SIGTERM, SIGHUP, SIGWINCH, ... with their default action:
 * handlers of the parent (the TUI's) have no business running in a worker. It leaves
 * with _exit: no atexit handlers, no second flush of the parent's stdio buffers. */
#ifndef GL_DEADLINE_H
#define GL_DEADLINE_H

#include "util/status.h"
#include "util/strbuf.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The work: its result bytes into `out`, or a failure with a message (gl_fail). */
typedef gl_status (*gl_deadline_fn)(void *ctx, gl_strbuf *out);

typedef struct gl_deadline_job {
    gl_deadline_fn fn;
    void *ctx;
    const char *what;       /* names the child in messages: "the Graphviz process" */
    pthread_mutex_t *guard; /* may be NULL: protects library state fn uses; held across
                             * fork so that the child's copy of that state is whole, and
                             * the child gets it unlocked */
    unsigned timeout_ms;    /* fork and transfer included */
} gl_deadline_job;

/* Runs the job and returns its status; on GL_OK *bytes (malloc'd, NUL-terminated) holds
 * *len result bytes. Past the deadline the child is killed, *timed_out is set and
 * GL_ERR_UNSUPPORTED returned with no message: the caller words it. When no child can be
 * made (fork or pipe fail) the work runs in this process, without a bound. */
gl_status gl_run_with_deadline(const gl_deadline_job *job, char **bytes, size_t *len,
                               bool *timed_out);

#endif
