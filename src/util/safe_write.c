/* safe_write.c — guarded atomic writes, protected inputs, temporary-file cleanup on
 * signals (safe_write.h). */
#include "util/safe_write.h"

#include "util/file_read.h"
#include "util/folder.h"
#include "util/manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp.XXXXXX"

/* ==== protected inputs ================================================================ */

typedef struct protected_file {
    dev_t dev;
    ino_t ino;
    char *path; /* as it was read, for messages */
} protected_file;

static pthread_mutex_t protect_lock = PTHREAD_MUTEX_INITIALIZER;
static protected_file *protected_files; /* kept for the life of the process */
static size_t n_protected, cap_protected;

void gl_protect_input(int fd, const char *path)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    pthread_mutex_lock(&protect_lock);
    bool known = false;
    for (size_t i = 0; i < n_protected && !known; i++)
        known = protected_files[i].dev == st.st_dev && protected_files[i].ino == st.st_ino;
    if (!known) {
        GL_GROW(protected_files, cap_protected, n_protected + 1);
        protected_files[n_protected++] =
            (protected_file){st.st_dev, st.st_ino, gl_xstrdup(path ? path : "?")};
    }
    pthread_mutex_unlock(&protect_lock);
}

/* The name under which the file `st` was read as input (malloc'd), or NULL. */
static char *protected_name(const struct stat *st)
{
    char *name = NULL;
    pthread_mutex_lock(&protect_lock);
    for (size_t i = 0; i < n_protected && !name; i++)
        if (protected_files[i].dev == st->st_dev && protected_files[i].ino == st->st_ino)
            name = gl_xstrdup(protected_files[i].path);
    pthread_mutex_unlock(&protect_lock);
    return name;
}

/* ==== live temporary files and the signals that remove them =========================== */

/* Fixed slots with their own path buffers: the handler reads them without locks or
 * allocation. `used` (under temp_lock) reserves a slot; `live` publishes its path. More
 * temporary files at once than slots (the program keeps two or three) go unregistered. */
#define TEMP_SLOTS 16

typedef struct temp_slot {
    bool used;
    bool folder;       /* a temporary folder: its files go with it */
    volatile sig_atomic_t live;
    char path[PATH_MAX];
} temp_slot;

static temp_slot temp_slots[TEMP_SLOTS];
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot + 1, or 0 when the path could not be registered. */
static int temp_register(const char *path, bool folder)
{
    size_t n = strlen(path);
    if (n >= PATH_MAX)
        return 0;
    int slot = -1;
    pthread_mutex_lock(&temp_lock);
    for (int i = 0; i < TEMP_SLOTS && slot < 0; i++)
        if (!temp_slots[i].used) {
            temp_slots[i].used = true;
            slot = i;
        }
    pthread_mutex_unlock(&temp_lock);
    if (slot >= 0) {
        memcpy(temp_slots[slot].path, path, n + 1);
        temp_slots[slot].folder = folder;
        __atomic_store_n(&temp_slots[slot].live, 1, __ATOMIC_RELEASE);
    }
    return slot + 1;
}

static void temp_unregister(int slot_plus_1)
{
    if (slot_plus_1 <= 0 || slot_plus_1 > TEMP_SLOTS)
        return;
    int slot = slot_plus_1 - 1;
    __atomic_store_n(&temp_slots[slot].live, 0, __ATOMIC_RELEASE);
    pthread_mutex_lock(&temp_lock);
    temp_slots[slot].used = false;
    pthread_mutex_unlock(&temp_lock);
}

/* Removes folder `path` and the files in it (it holds no folders: ours are flat).
 * Async-signal-safe: getdents64 on a descriptor, no opendir (it allocates). */
static void remove_flat_folder(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        char buf[4096] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
            for (long off = 0; off < n;) {
                /* linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
                unsigned short reclen;
                memcpy(&reclen, buf + off + 16, sizeof(reclen));
                const char *name = buf + off + 19;
                if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                    unlinkat(fd, name, 0);
                off += reclen ? reclen : n;
            }
        }
        close(fd);
    }
    rmdir(path);
}

void gl_temp_files_remove(void)
{
    /* files first: a temporary file may sit in a temporary folder */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < TEMP_SLOTS; i++) {
            if (!__atomic_load_n(&temp_slots[i].live, __ATOMIC_ACQUIRE) ||
                temp_slots[i].folder != (pass == 1))
                continue;
            if (pass == 0)
                unlink(temp_slots[i].path);
            else
                remove_flat_folder(temp_slots[i].path);
        }
}

static const int CLEANUP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};

/* SA_RESETHAND restored the default action on entry; the re-raised signal is delivered
 * when the handler returns and ends the process as it would have without us. */
static void on_cleanup_signal(int sig)
{
    int saved = errno;
    gl_temp_files_remove();
    errno = saved;
    raise(sig);
}

static mode_t process_umask;

static void init_once(void)
{
    /* POSIX reads the umask only by setting it; done once, before the first file. */
    process_umask = umask(0);
    umask(process_umask);
    for (size_t i = 0; i < GL_ARRAY_LEN(CLEANUP_SIGNALS); i++) {
        struct sigaction old;
        if (sigaction(CLEANUP_SIGNALS[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue; /* ignored, or someone else's handler: theirs to call us */
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sigemptyset(&sa.sa_mask);
        sa.sa_handler = on_cleanup_signal;
        sa.sa_flags = SA_RESETHAND;
        sigaction(CLEANUP_SIGNALS[i], &sa, NULL);
    }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void block_cleanup_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < GL_ARRAY_LEN(CLEANUP_SIGNALS); i++)
        sigaddset(&block, CLEANUP_SIGNALS[i]);
    pthread_sigmask(SIG_BLOCK, &block, old);
}

/* ==== the atomic file ================================================================== */

bool gl_write_fully(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static void atomic_release(gl_atomic_file *f)
{
    if (f->stream)
        fclose(f->stream);
    else if (f->fd >= 0)
        close(f->fd);
    f->stream = NULL;
    f->fd = -1;
    if (f->tmp_path)
        unlink(f->tmp_path);
    temp_unregister(f->slot);
    f->slot = 0;
    free(f->tmp_path);
    free(f->path);
    f->tmp_path = NULL;
    f->path = NULL;
}

static gl_status atomic_fail(gl_atomic_file *f, const char *what, int err)
{
    gl_status st = gl_fail(GL_ERR_IO, "%s: %s: %s", f->path ? f->path : "?", what,
                           strerror(err));
    atomic_release(f);
    return st;
}

static gl_status refuse_link(const char *path)
{
    return gl_fail(GL_ERR_INPUT, "%s: is a symbolic link; graphlab does not write through "
                                 "links (remove it or choose another name)", path);
}

/* The guard: what may stand at the destination, and the mode the new file gets (the old
 * file's, or what creat() would give). */
static gl_status check_destination(const char *path, mode_t *mode)
{
    *mode = 0666 & ~process_umask;
    struct stat st;
    if (lstat(path, &st) != 0)
        return GL_OK; /* absent (or unreachable: creating the temporary file says why) */
    if (S_ISLNK(st.st_mode))
        return refuse_link(path);
    if (!S_ISREG(st.st_mode))
        return gl_fail(GL_ERR_IO, "%s: exists and is not a regular file", path);
    char *input = protected_name(&st);
    if (input) {
        gl_status rc = gl_fail(GL_ERR_INPUT, "%s: is the input file '%s'; refusing to "
                                             "overwrite it", path, input);
        free(input);
        return rc;
    }
    *mode = st.st_mode & 07777;
    return GL_OK;
}

bool gl_is_protected_input(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    char *input = protected_name(&st);
    bool is_input = input != NULL;
    free(input);
    return is_input;
}

gl_status gl_atomic_open(gl_atomic_file *f, const char *path)
{
    *f = (gl_atomic_file){.fd = -1};
    if (!path || !*path)
        return gl_fail(GL_ERR_INPUT, "no output file name given");
    pthread_once(&once, init_once);
    mode_t mode;
    gl_status st = check_destination(path, &mode);
    if (st != GL_OK)
        return st;
    f->path = gl_xstrdup(path);
    /* "<path>.tmp.<pid>.XXXXXX": the PID tells a later writer whether the maker is gone
     * (util/stale_temps.h; SIGKILL leaves the file) */
    size_t len = strlen(path) + sizeof(".tmp..XXXXXX") + 24;
    f->tmp_path = gl_xmalloc(len);
    snprintf(f->tmp_path, len, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    /* No cleanup signal between creating the file and registering it. */
    sigset_t old;
    block_cleanup_signals(&old);
    f->fd = mkstemp(f->tmp_path);
    int err = errno;
    if (f->fd >= 0)
        f->slot = temp_register(f->tmp_path, false);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (f->fd < 0) {
        free(f->tmp_path); /* nothing was created: nothing to unlink */
        f->tmp_path = NULL;
        return atomic_fail(f, "cannot create a temporary file beside it", err);
    }
    if (fchmod(f->fd, mode) != 0)
        return atomic_fail(f, "cannot set the file mode", errno);
    return GL_OK;
}

gl_status gl_atomic_write(gl_atomic_file *f, const void *data, size_t len)
{
    if (f->fd < 0)
        return gl_fail(GL_ERR_INTERNAL, "write to a closed file");
    if (f->stream) {
        if (len && fwrite(data, 1, len, f->stream) != len)
            return atomic_fail(f, "cannot write", errno ? errno : EIO);
        return GL_OK;
    }
    if (!gl_write_fully(f->fd, data, len))
        return atomic_fail(f, "cannot write", errno);
    return GL_OK;
}

FILE *gl_atomic_stream(gl_atomic_file *f)
{
    if (!f->stream && f->fd >= 0)
        f->stream = fdopen(f->fd, "wb");
    return f->stream;
}

static void fsync_folder(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: some file systems cannot sync folders */
        close(fd);
    }
}

static void fsync_folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? gl_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
                      : gl_xstrdup(".");
    fsync_folder(dir);
    free(dir);
}

gl_status gl_atomic_commit(gl_atomic_file *f)
{
    if (f->fd < 0)
        return gl_fail(GL_ERR_INTERNAL, "commit of a closed file");
    if (f->stream && (fflush(f->stream) != 0 || ferror(f->stream)))
        return atomic_fail(f, "cannot write", errno ? errno : EIO);
    if (fsync(f->fd) != 0)
        return atomic_fail(f, "cannot sync", errno);
    int rc = f->stream ? fclose(f->stream) : close(f->fd);
    f->stream = NULL;
    f->fd = -1;
    if (rc != 0)
        return atomic_fail(f, "cannot close", errno);
    if (rename(f->tmp_path, f->path) != 0)
        return atomic_fail(f, "cannot replace", errno);
    free(f->tmp_path);
    f->tmp_path = NULL;
    fsync_folder_of(f->path);
    atomic_release(f);
    return GL_OK;
}

void gl_atomic_abort(gl_atomic_file *f) { atomic_release(f); }

/* ==== hard links ======================================================================== */

static bool same_inode(const char *a, const char *b)
{
    struct stat sa, sb;
    return lstat(a, &sa) == 0 && lstat(b, &sb) == 0 && S_ISREG(sa.st_mode) &&
           S_ISREG(sb.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Errors of link(2) that mean "not here": the caller copies instead. */
static bool link_unsupported(int err)
{
    return err == EXDEV || err == EPERM || err == EMLINK || err == ENOTSUP ||
           err == EOPNOTSUPP;
}

gl_status gl_link_file(const char *src, const char *dest)
{
    pthread_once(&once, init_once);
    if (same_inode(src, dest))
        return GL_OK; /* made by an earlier save: already the file */
    mode_t mode;
    gl_status st = check_destination(dest, &mode);
    if (st != GL_OK)
        return st;
    size_t len = strlen(dest) + 64;
    char *tmp = gl_xmalloc(len);
    sigset_t old;
    block_cleanup_signals(&old);
    int err = 0, slot = 0;
    /* link(2) has no mkstemp: try a few random names, as mkstemp does. */
    for (int attempt = 0; attempt < 16; attempt++) {
        /* "<dest>.tmp.<pid>.XXXXXX", as gl_atomic_open names its files (stale_temps.h) */
        snprintf(tmp, len, "%s.tmp.%ld.%06lx", dest, (long)getpid(),
                 (unsigned long)random() & 0xfffffful);
        err = link(src, tmp) == 0 ? 0 : errno;
        if (err != EEXIST)
            break;
    }
    if (!err)
        slot = temp_register(tmp, false);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        st = gl_fail(link_unsupported(err) ? GL_ERR_UNSUPPORTED : GL_ERR_IO,
                     "%s: cannot link %s there: %s", dest, src, strerror(err));
    } else if (rename(tmp, dest) != 0) {
        st = gl_fail(GL_ERR_IO, "%s: cannot rename %s to it: %s", dest, tmp, strerror(errno));
        unlink(tmp);
    } else {
        fsync_folder_of(dest);
    }
    temp_unregister(slot);
    free(tmp);
    return st;
}

gl_status gl_atomic_open_stream(gl_atomic_file *f, const char *path, FILE **stream)
{
    gl_status st = gl_atomic_open(f, path);
    if (st == GL_OK && !(*stream = gl_atomic_stream(f))) {
        st = gl_fail(GL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        gl_atomic_abort(f);
    }
    return st;
}

gl_status gl_write_file(const char *path, const void *data, size_t len)
{
    gl_atomic_file f;
    gl_status st = gl_atomic_open(&f, path);
    if (st == GL_OK)
        st = gl_atomic_write(&f, data, len);
    if (st == GL_OK)
        st = gl_atomic_commit(&f);
    return st;
}

/* ==== folders ============================================================= */

/* One folder: created when absent, accepted when it exists as a folder. */
static gl_status make_one_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return GL_OK;
        return gl_fail(GL_ERR_IO, "%s: exists and is not a folder", dir);
    }
    return gl_fail(GL_ERR_IO, "%s: cannot create folder: %s", dir, strerror(errno));
}

gl_status gl_make_dir(const char *dir)
{
    size_t n = strlen(dir);
    char *path = malloc(n + 1);
    if (!path)
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", dir);
    memcpy(path, dir, n + 1);
    /* Each parent in turn, as mkdir -p does; a leading '/' and repeated '/' are skipped. */
    gl_status st = GL_OK;
    for (char *p = path + 1; st == GL_OK && *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = '\0';
        st = make_one_dir(path);
        *p = '/';
    }
    if (st == GL_OK)
        st = make_one_dir(path);
    free(path);
    return st;
}


/* ==== folders written as a whole ========================================================= */

/* What graphlab keeps in a destination folder while it writes into it (util/manifest.h
 * keeps every ".graphlab…" name out of manifests). */
#define LOCK_NAME ".graphlab.lock"
#define INSIDE_TMP_NAME ".graphlab" TMP_SUFFIX
/* A manifest larger than this is not read (nothing it lists is removed). */
#define MANIFEST_MAX ((size_t)16 << 20)

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = gl_xmalloc(len);
    snprintf(p, len, "%s/%s", dir, name);
    return p;
}

/* ---- the lock: one writer at a time in a folder ----------------------------------------- */

/* The lock at `path` (open on fd) is held by another process, which wrote its PID into
 * it when it took it (or has not yet). */
static gl_status refuse_busy(const char *dir, const char *path, int fd)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    char *end;
    long pid = strtol(text, &end, 10);
    if (pid > 0 && (*end == '\n' || *end == '\0'))
        return gl_fail(GL_ERR_IO, "%s: another graphlab (process %ld) is writing into this "
                                  "folder; try again when it has finished", dir, pid);
    return gl_fail(GL_ERR_IO, "%s: another process is writing into this folder (it holds %s); "
                              "try again when it has finished", dir, path);
}

/* Our PID in the lock we hold, for the message of whoever is refused. */
static void write_pid(int fd)
{
    char pid[24];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        return; /* best effort: only messages read it */
}

/* One try at the lock file `path` of d->target. GL_OK with *taken when it is ours now;
 * GL_OK without: the file we locked had been removed or replaced meanwhile (its holder
 * was finishing), try again. flock(2) locks go with the process: a lock file left by a
 * process that died is free to take. */
static gl_status try_lock(gl_temp_dir *d, const char *path, bool *taken)
{
    *taken = false;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ELOOP)
        return refuse_link(path);
    if (fd < 0 && errno == EISDIR)
        return gl_fail(GL_ERR_IO, "%s: exists and is not a regular file", path);
    if (fd < 0)
        return gl_fail(GL_ERR_IO, "%s: cannot write into it: %s", d->target, strerror(errno));
    struct stat held, named;
    gl_status st = GL_OK;
    if (fstat(fd, &held) != 0 || !S_ISREG(held.st_mode))
        st = gl_fail(GL_ERR_IO, "%s: exists and is not a regular file", path);
    else if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        st = errno == EWOULDBLOCK ? refuse_busy(d->target, path, fd)
                                  : gl_fail(GL_ERR_IO, "%s: cannot lock: %s", path, strerror(errno));
    else if (lstat(path, &named) == 0 && named.st_dev == held.st_dev &&
             named.st_ino == held.st_ino) {
        write_pid(fd);
        d->lock_fd = fd;
        d->lock_path = gl_xstrdup(path);
        d->lock_slot = temp_register(path, false); /* a signal removes it with the rest */
        *taken = true;
        return GL_OK;
    }
    close(fd);
    return st;
}

static gl_status lock_folder(gl_temp_dir *d)
{
    char *path = join(d->target, LOCK_NAME);
    gl_status st = GL_OK;
    bool taken = false;
    for (int attempt = 0; st == GL_OK && !taken && attempt < 8; attempt++) {
        sigset_t old; /* no cleanup signal between creating the file and registering it */
        block_cleanup_signals(&old);
        st = try_lock(d, path, &taken);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (st == GL_OK && !taken)
        st = gl_fail(GL_ERR_IO, "%s: cannot take its lock %s: it keeps being replaced",
                     d->target, path);
    free(path);
    return st;
}

static void unlock_folder(gl_temp_dir *d)
{
    if (!d->lock_path)
        return;
    /* Unregistered first: from here on a signal must not remove the lock file another
     * writer may have made by then. Removed while still held: a writer that opened it
     * meanwhile finds the name gone once it gets the lock, and tries again. */
    temp_unregister(d->lock_slot);
    unlink(d->lock_path);
    close(d->lock_fd);
    free(d->lock_path);
    d->lock_path = NULL;
    d->lock_slot = 0;
}

/* ---- opening ------------------------------------------------------------------------------ */

/* d->path (a mkdtemp template) made and registered: from then on a signal removes it. */
static gl_status make_temp_folder(gl_temp_dir *d)
{
    sigset_t old;
    block_cleanup_signals(&old);
    bool made = mkdtemp(d->path) != NULL;
    int err = errno;
    if (made)
        d->slot = temp_register(d->path, true);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!made) {
        free(d->path); /* nothing was made: nothing for abort to remove */
        d->path = NULL;
    } else if (!d->inside && chmod(d->path, 0777 & ~process_umask) != 0) {
        /* it becomes the folder: mkdtemp's 0700 would be its mode; give it mkdir's */
        err = errno;
        made = false;
    }
    if (!made)
        return gl_fail(GL_ERR_IO, "%s: cannot create a temporary folder %s it: %s", d->target,
                       d->inside ? "in" : "beside", strerror(err));
    return GL_OK;
}

/* An existing folder: locked, and the temporary folder made inside it, on its own file
 * system (a mount point is on another one than its parent). */
static gl_status open_inside(gl_temp_dir *d)
{
    gl_status st = lock_folder(d);
    if (st != GL_OK)
        return st;
    d->inside = true;
    d->path = join(d->target, INSIDE_TMP_NAME);
    return make_temp_folder(d);
}

/* A new folder: its missing parents made, the temporary folder beside it on the file
 * system where it will be ("<parent>/.<name>.tmp.XXXXXX", hidden), renamed to it at the
 * end. */
static gl_status open_beside(gl_temp_dir *d)
{
    size_t n = strlen(d->target), base = n;
    while (base > 0 && d->target[base - 1] != '/')
        base--;
    char *parent = base ? gl_xstrndup(d->target, base) : NULL;
    gl_status st = parent ? gl_make_dir(parent) : GL_OK;
    free(parent);
    if (st != GL_OK)
        return st;
    size_t len = n + 2 + sizeof(TMP_SUFFIX);
    d->path = gl_xmalloc(len);
    snprintf(d->path, len, "%.*s.%s" TMP_SUFFIX, (int)base, d->target, d->target + base);
    return make_temp_folder(d);
}

static void copy_owner(gl_temp_dir *d, const gl_dir_owner *owner)
{
    if (!owner || !owner->manifest)
        return;
    d->manifest = gl_xstrdup(owner->manifest);
    d->written_by = gl_xstrdup(owner->written_by);
    d->source = gl_xstrdup(owner->source);
    d->add = owner->add;
}

gl_status gl_temp_dir_open_owned(gl_temp_dir *d, const char *target, const gl_dir_owner *owner)
{
    *d = (gl_temp_dir){0};
    if (!target || !*target)
        return gl_fail(GL_ERR_INPUT, "no output folder name given");
    pthread_once(&once, init_once);
    size_t n = strlen(target);
    while (n > 1 && target[n - 1] == '/') /* "out/" names the folder "out" */
        n--;
    d->target = gl_xstrndup(target, n);
    copy_owner(d, owner);
    struct stat sb;
    gl_status st;
    if (lstat(d->target, &sb) != 0)
        st = open_beside(d);
    else if (S_ISLNK(sb.st_mode))
        st = refuse_link(d->target);
    else if (!S_ISDIR(sb.st_mode))
        st = gl_fail(GL_ERR_IO, "%s: exists and is not a folder", d->target);
    else
        st = open_inside(d);
    if (st != GL_OK)
        gl_temp_dir_abort(d);
    return st;
}

gl_status gl_temp_dir_open(gl_temp_dir *d, const char *target)
{
    return gl_temp_dir_open_owned(d, target, NULL);
}

void gl_temp_dir_abort(gl_temp_dir *d)
{
    if (d->path)
        remove_flat_folder(d->path);
    temp_unregister(d->slot);
    unlock_folder(d);
    free(d->path);
    free(d->target);
    free(d->manifest);
    free(d->written_by);
    free(d->source);
    *d = (gl_temp_dir){0};
}

/* ---- the manifest: the files the writer owns in the folder ------------------------------ */

/* The names the manifest at `path` lists, added to *listed; none when it is absent, not
 * a regular file, too large, or does not parse: then nothing is removed, as files a
 * manifest does not list are never touched. */
static void read_manifest(const char *path, gl_names *listed)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (size_t)st.st_size <= MANIFEST_MAX) {
        char *text = malloc((size_t)st.st_size);
        if (text && gl_file_read_exact(fd, text, (size_t)st.st_size, path) == GL_OK)
            gl_manifest_parse(text, (size_t)st.st_size, listed);
        else
            gl_error_clear(); /* an unreadable list is no list: not an error */
        free(text);
    }
    close(fd);
}

static gl_status write_manifest(const gl_temp_dir *d, const char *path, gl_names *files)
{
    gl_atomic_file f;
    FILE *out;
    gl_status st = gl_atomic_open_stream(&f, path, &out);
    if (st != GL_OK)
        return st;
    gl_names_sort(files);
    gl_manifest_write(out, &(gl_manifest_about){d->written_by, d->source}, files);
    return gl_atomic_commit(&f);
}

static void names_add_all(gl_names *to, const gl_names *from)
{
    for (size_t i = 0; i < from->n; i++)
        gl_names_add(to, from->items[i]);
}

/* Removes the files the manifest listed (`listed`) that were not written again
 * (`written`, sorted); what stays ours is added to *kept: a file that could not be
 * removed, or that this process read as input (never removed). A name that is no longer
 * a regular file (a folder or a link someone put there) is not ours: left alone, no
 * longer listed. */
static void remove_unwritten(const char *dir, const gl_names *listed, const gl_names *written,
                             gl_names *kept)
{
    for (size_t i = 0; i < listed->n; i++) {
        if (gl_names_has(written, listed->items[i]))
            continue;
        char *path = join(dir, listed->items[i]);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            char *input = protected_name(&st);
            if (input || unlink(path) != 0)
                gl_names_add(kept, listed->items[i]);
            free(input);
        }
        free(path);
    }
}

/* ---- committing --------------------------------------------------------------------------- */

/* Every name that will be written in the destination checked by the guard, the manifest
 * too: a refusal leaves the destination as it was. */
static gl_status check_all(const gl_temp_dir *d, const gl_names *written, const char *manifest)
{
    mode_t mode;
    gl_status st = manifest ? check_destination(manifest, &mode) : GL_OK;
    for (size_t i = 0; i < written->n && st == GL_OK; i++) {
        char *to = join(d->target, written->items[i]);
        st = check_destination(to, &mode);
        free(to);
    }
    return st;
}

static gl_status move_files(const gl_temp_dir *d, const gl_names *written)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < written->n && st == GL_OK; i++) {
        char *from = join(d->path, written->items[i]), *to = join(d->target, written->items[i]);
        if (rename(from, to) != 0)
            st = gl_fail(GL_ERR_IO, "%s: cannot replace: %s", to, strerror(errno));
        free(from);
        free(to);
    }
    return st;
}

/* The files of the temporary folder moved into the existing destination one by one. With
 * a manifest, whatever the folder holds of ours stays listed at every moment: first the
 * list of the old files and the new ones, then the moves, then (replacing) the old files
 * not written again removed and the list of what is left. An interrupted commit leaves a
 * list that covers every file of ours there, for the next export to clean up. */
static gl_status move_in(gl_temp_dir *d)
{
    gl_names written = {0}, listed = {0}, owned = {0};
    char *manifest = d->manifest ? join(d->target, d->manifest) : NULL;
    gl_status st = gl_folder_list(d->path, &written);
    if (st == GL_OK)
        st = check_all(d, &written, manifest);
    if (st == GL_OK && manifest) {
        read_manifest(manifest, &listed);
        gl_names_sort(&listed);
        names_add_all(&owned, &listed);
        names_add_all(&owned, &written);
        st = write_manifest(d, manifest, &owned);
    }
    if (st == GL_OK)
        st = move_files(d, &written);
    if (st == GL_OK && manifest && !d->add) {
        gl_names_free(&owned);
        names_add_all(&owned, &written);
        remove_unwritten(d->target, &listed, &written, &owned);
        st = write_manifest(d, manifest, &owned);
    }
    if (st == GL_OK)
        fsync_folder(d->target);
    gl_names_free(&written);
    gl_names_free(&listed);
    gl_names_free(&owned);
    free(manifest);
    return st;
}

/* A new folder's manifest, in the temporary folder: what was written into it. */
static gl_status write_new_manifest(const gl_temp_dir *d, const char *manifest)
{
    gl_names written = {0};
    gl_status st = gl_folder_list(d->path, &written);
    if (st == GL_OK)
        st = write_manifest(d, manifest, &written);
    gl_names_free(&written);
    return st;
}

/* The temporary folder beside the destination renamed to it, or, the destination there
 * now (made by another writer meanwhile), its files moved in as into any existing folder,
 * under its lock. `manifest`: the new folder's own, in the temporary folder (or NULL). */
static gl_status put_in_place(gl_temp_dir *d, const char *manifest)
{
    struct stat sb;
    bool exists = lstat(d->target, &sb) == 0;
    if (exists && S_ISLNK(sb.st_mode))
        return refuse_link(d->target);
    if (exists && !S_ISDIR(sb.st_mode))
        return gl_fail(GL_ERR_IO, "%s: exists and is not a folder", d->target);
    if (rename(d->path, d->target) == 0) {
        free(d->path); /* renamed: nothing left to remove */
        d->path = NULL;
        fsync_folder_of(d->target);
        return GL_OK;
    }
    if (!exists && errno != ENOTEMPTY && errno != EEXIST)
        return gl_fail(GL_ERR_IO, "%s: cannot rename the temporary folder %s to it: %s",
                       d->target, d->path, strerror(errno));
    if (manifest)
        unlink(manifest); /* move_in keeps the folder's own */
    gl_status st = lock_folder(d);
    return st == GL_OK ? move_in(d) : st;
}

/* The temporary folder beside the destination becomes it, its manifest inside: the files
 * and their list appear at once. */
static gl_status rename_into_place(gl_temp_dir *d)
{
    char *manifest = d->manifest ? join(d->path, d->manifest) : NULL;
    gl_status st = manifest ? write_new_manifest(d, manifest) : GL_OK;
    if (st == GL_OK)
        st = put_in_place(d, manifest);
    free(manifest);
    return st;
}

gl_status gl_temp_dir_commit(gl_temp_dir *d)
{
    if (!d->path)
        return gl_fail(GL_ERR_INTERNAL, "commit of a closed folder");
    gl_status st = d->inside ? move_in(d) : rename_into_place(d);
    gl_temp_dir_abort(d); /* what is left of the temporary folder, the lock */
    return st;
}
