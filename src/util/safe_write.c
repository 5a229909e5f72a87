/* safe_write.c — guarded atomic writes, protected inputs, temporary-file cleanup on
 * signals (safe_write.h). */
#include "util/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    volatile sig_atomic_t live;
    char path[PATH_MAX];
} temp_slot;

static temp_slot temp_slots[TEMP_SLOTS];
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot + 1, or 0 when the path could not be registered. */
static int temp_register(const char *path)
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

void gl_temp_files_remove(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (__atomic_load_n(&temp_slots[i].live, __ATOMIC_ACQUIRE))
            unlink(temp_slots[i].path);
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

/* The guard: what may stand at the destination, and the mode the new file gets (the old
 * file's, or what creat() would give). */
static gl_status check_destination(const char *path, mode_t *mode)
{
    *mode = 0666 & ~process_umask;
    struct stat st;
    if (lstat(path, &st) != 0)
        return GL_OK; /* absent (or unreachable: creating the temporary file says why) */
    if (S_ISLNK(st.st_mode))
        return gl_fail(GL_ERR_INPUT, "%s: is a symbolic link; graphlab does not write through "
                                     "links (remove it or choose another name)", path);
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
    size_t n = strlen(path);
    f->tmp_path = gl_xmalloc(n + sizeof(TMP_SUFFIX));
    memcpy(f->tmp_path, path, n);
    memcpy(f->tmp_path + n, TMP_SUFFIX, sizeof(TMP_SUFFIX));
    /* No cleanup signal between creating the file and registering it. */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < GL_ARRAY_LEN(CLEANUP_SIGNALS); i++)
        sigaddset(&block, CLEANUP_SIGNALS[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    f->fd = mkstemp(f->tmp_path);
    int err = errno;
    if (f->fd >= 0)
        f->slot = temp_register(f->tmp_path);
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

static void fsync_folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? gl_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
                      : gl_xstrdup(".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: some file systems cannot sync folders */
        close(fd);
    }
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
