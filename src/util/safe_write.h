/* safe_write.h — the one way graphlab writes a file: guarded and atomic.
 *
 * Every file the program writes (models and their external data, .pb tensors, export's
 * .dot/.svg/.diff.txt/decisions.json/index.html, the TUI's exports) goes through
 * gl_atomic_open/write/commit or gl_write_file:
 *
 *   - the bytes go to "<path>.tmp.<pid>.XXXXXX" beside the destination (O_EXCL, mode 0600
 *     until the final mode is set), are fsynced, and the temporary file is renamed over
 *     the destination; the folder is fsynced too (best effort). Readers see the old file
 *     or the new one, never half of one. rename() replaces a name, never the contents of
 *     an existing file: whatever appears at the destination meanwhile, no other file is
 *     written into.
 *   - the destination is refused (GL_ERR_INPUT, one line naming it) when it is a symbolic
 *     link (we never write through one), or when it is a file this process read as input
 *     (same device and inode as a protected input: the model, its external data, --data
 *     tensors; a hard link to them too); it is refused with GL_ERR_IO when it exists and
 *     is not a regular file (a folder, a device: `-o /dev/null` must not replace the
 *     device node).
 *   - while a temporary file exists its name is in a registry that a signal handler
 *     reads: SIGINT, SIGTERM and SIGHUP unlink every live temporary file, restore the
 *     default action and re-raise. The handlers are installed on the first open, only
 *     for signals whose disposition is still the default (a program with its own
 *     handlers — the TUI — calls gl_temp_files_remove from them).
 *   - a folder of files (an export) is written the same way, into a temporary folder
 *     registered like a temporary file (a signal removes it and its files). A new folder
 *     is written as ".<name>.tmp.XXXXXX" beside it and renamed to it at the end: nothing
 *     appears before that, so a cancelled or failed export leaves no half folder. An
 *     existing folder (a mount point too: a Docker volume, a USB stick, /dev/shm) gets
 *     "DIR/.graphlab.tmp.XXXXXX" inside it, on its own file system, and the files are
 *     moved in at the end, each name checked by the guard before the first moves.
 *   - one writer at a time in an existing folder: DIR/.graphlab.lock, held with flock(2)
 *     from open to the end and holding the writer's PID; a second writer is refused with
 *     a message naming the folder and that PID (GL_ERR_IO: exit 2). The lock goes with
 *     the process that holds it (a lock file left by a killed one is simply taken); the
 *     file is removed at the end, and by the cleanup signals.
 *   - an owned folder (gl_temp_dir_open_owned) keeps a manifest, DIR/<manifest> (JSON,
 *     util/manifest.h), listing the files the writer owns there. Replacing, the commit
 *     removes the listed files it did not write again; adding (`e` beside `E`), it lists
 *     the new ones with them. A file the manifest does not list (a user's notes, an
 *     older graphlab's export) is never removed: names written again are replaced, the
 *     rest is left. Nor is a listed name that is no longer a regular file, or a file read
 *     as input. Until the commit ends the manifest lists the old files and the new ones,
 *     so that an interrupted commit leaves every file of ours there listed.
 *
 * The loader and the tensor-file reader register what they read with gl_protect_input.
 * Thread-safe; registries are process-wide.
 */
#ifndef GL_SAFE_WRITE_H
#define GL_SAFE_WRITE_H

#include "util/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Zeroed with fd = -1 it is closed, and gl_atomic_abort on it does nothing. */
typedef struct gl_atomic_file {
    int fd;         /* -1 when closed */
    FILE *stream;   /* gl_atomic_stream's view of fd, or NULL */
    char *path;     /* destination (owned) */
    char *tmp_path; /* owned; NULL once renamed or unlinked */
    int slot;       /* in the registry of temporary files, + 1; 0: not registered */
} gl_atomic_file;

/* Checks the destination and creates the temporary file beside it. On failure nothing
 * exists and f needs no abort. */
gl_status gl_atomic_open(gl_atomic_file *f, const char *path);
/* Appends bytes; on failure the temporary file is removed (no abort needed). */
gl_status gl_atomic_write(gl_atomic_file *f, const void *data, size_t len);
/* A stdio stream on the temporary file, for fprintf-style writers; commit flushes it and
 * fails if any write through it failed. Do not fclose it. NULL when it cannot be made. */
FILE *gl_atomic_stream(gl_atomic_file *f);
/* fsync, rename over the destination, fsync the folder. The file is closed either way. */
gl_status gl_atomic_commit(gl_atomic_file *f);
/* Drop the temporary file (safe on a closed or failed file). */
void gl_atomic_abort(gl_atomic_file *f);
/* gl_atomic_open, then gl_atomic_stream into *stream (on failure nothing is left). */
gl_status gl_atomic_open_stream(gl_atomic_file *f, const char *path, FILE **stream);

/* A hard link named `dest` to the file `src` (an input's external data, say, that a
 * saved model points into instead of copying it: onnx_io.h), as the guard allows any
 * write: never through a link, never over an input or what is not a regular file. The
 * link is made at a temporary name beside `dest` (registered: a signal removes it) and
 * renamed over it, so `dest` is never written into. When `dest` already is `src` (same
 * device and inode, as a protected input's link is) nothing changes. GL_ERR_UNSUPPORTED,
 * with the reason, when no link can be made there (another file system, one without hard
 * links): the caller copies the bytes instead. */
gl_status gl_link_file(const char *src, const char *dest);

/* The whole file at once: open, write, commit. */
gl_status gl_write_file(const char *path, const void *data, size_t len);

/* Make sure `dir` exists as a folder, creating it and its missing parents (mkdir -p), for
 * what writes into it. */
gl_status gl_make_dir(const char *dir);

/* Who owns the files a folder is written with (gl_temp_dir_open_owned). */
typedef struct gl_dir_owner {
    const char *manifest;   /* the list's name in the folder: ".graphlab-export.json" */
    const char *written_by; /* recorded in it: "graphlab 0.1 export" */
    const char *source;     /* recorded in it: what the files were made from; may be NULL */
    bool add;               /* the files written join the listed ones (the workbench's `e`);
                             * false: they become the set, the listed files not written
                             * again are removed */
} gl_dir_owner;

/* A folder written as a whole (see above). Zeroed it is closed. */
typedef struct gl_temp_dir {
    char *path;   /* the temporary folder to write into (owned); NULL when closed */
    char *target; /* the destination (owned) */
    int slot;     /* in the registry, + 1; 0: not registered */
    bool inside;  /* path is inside target (it existed): commit moves the files in */
    char *lock_path; /* target's lock file while held (owned), else NULL */
    int lock_fd;
    int lock_slot;
    /* the owner's (copies, owned); manifest NULL: no manifest */
    char *manifest, *written_by, *source;
    bool add;
} gl_temp_dir;

/* The temporary folder for `target`: inside it when it exists as a folder (locked
 * first), else beside it, its missing parents created (as mkdir -p). A link or a
 * non-folder at `target` is refused. On failure nothing new but parents exists and d
 * needs no abort. */
gl_status gl_temp_dir_open(gl_temp_dir *d, const char *target);
/* The same for an owned folder: `owner` (copied; NULL as gl_temp_dir_open) names the
 * manifest that commit keeps and how it treats the files listed before. */
gl_status gl_temp_dir_open_owned(gl_temp_dir *d, const char *target, const gl_dir_owner *owner);
/* Puts the files written into d->path at the destination: renames the folder when it was
 * new; into an existing folder moves each file, every name checked by the guard first
 * (no link, no input, nothing not a regular file replaced), so a refused name leaves the
 * destination as it was; then, owned, removes what the manifest listed and was not
 * written again (see above). The temporary folder and the lock are gone either way. */
gl_status gl_temp_dir_commit(gl_temp_dir *d);
/* Removes the temporary folder and what was written into it, and releases the lock (safe
 * on a closed one). */
void gl_temp_dir_abort(gl_temp_dir *d);

/* The file open on `fd` (read from `path`, for messages) is an input: no write may
 * replace it for the rest of the process. Files that are not regular are ignored. */
void gl_protect_input(int fd, const char *path);
/* Whether the file at `path` is one of those inputs (a write there would be refused). */
bool gl_is_protected_input(const char *path);

/* Unlinks every live temporary file and folder (with its files). Async-signal-safe:
 * for signal handlers. */
void gl_temp_files_remove(void);

/* write(2) until done, retrying EINTR; false on any other failure (errno says why). */
bool gl_write_fully(int fd, const void *data, size_t len);

#endif
