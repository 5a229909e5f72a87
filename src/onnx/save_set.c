/* save_set.c — a save's files put into a folder as a whole (save_set.h). */
#include "onnx/save_set.h"

#include "onnx/onnx_io.h"
#include "util/file_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary folder is DIR/.graphlab-save.<pid>.tmp.XXXXXX (stale_temps.h): what
 * gl_temp_dir_open makes of DIR/graphlab-save.<pid>. */
#define TEMP_STEM "graphlab-save"
#define TEMP_BEFORE "." TEMP_STEM "."
#define TEMP_AFTER ".tmp."
/* The copy of the old index in the temporary folder, for undoing a killed save. */
#define PREVIOUS_INDEX "previous-index.json"
/* An index larger than this is not read: its files are then never removed. */
#define MAX_INDEX_BYTES ((size_t)64 << 20)

/* ---- lists of file names ----------------------------------------------------------------- */

typedef gl_save_names name_list;

static void names_add(name_list *l, const char *name)
{
    GL_GROW(l->v, l->cap, l->n + 1);
    l->v[l->n++] = gl_xstrdup(name);
}

static bool names_have(const name_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0)
            return true;
    return false;
}

static void names_free(name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (name_list){0};
}

static char *path_in(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = gl_xmalloc(len);
    snprintf(p, len, "%s/%s", dir, name);
    return p;
}

static bool safe_name_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

bool gl_save_tensor_file_name(const char *name)
{
    size_t digits = 0, len = strlen(name);
    while (name[digits] >= '0' && name[digits] <= '9')
        digits++;
    if (digits < 4 || name[digits] != '_' || len < digits + 1 + 3 ||
        strcmp(name + len - 3, ".pb") != 0)
        return false;
    for (size_t i = digits + 1; i < len; i++)
        if (!safe_name_byte(name[i]))
            return false;
    return true;
}

/* output_K.pb, K in decimal: an output of a test data set. */
static bool is_output_file_name(const char *name)
{
    const char *p = name + strlen("output_");
    if (strncmp(name, "output_", strlen("output_")) != 0 || *p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, ".pb") == 0;
}

/* ---- reading an index ---------------------------------------------------------------------- */

typedef enum index_state {
    INDEX_ABSENT,  /* no such file */
    INDEX_READ,
    INDEX_UNKNOWN, /* there, but not read: a link, not a regular file, too large, unreadable */
} index_state;

/* The whole file at `path`, NUL-terminated, in *doc (malloc'd). Not opened with
 * file_read.h's gl_file_open_regular: that would make the index a protected input, which
 * no save could then replace. */
static index_state read_index(const char *path, char **doc, size_t *len)
{
    *doc = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? INDEX_ABSENT : INDEX_UNKNOWN;
    struct stat st;
    index_state state = INDEX_UNKNOWN;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size <= MAX_INDEX_BYTES) {
        size_t size = (size_t)st.st_size;
        char *buf = malloc(size + 1);
        if (buf && gl_file_read_exact(fd, buf, size, path) == GL_OK) {
            buf[size] = '\0';
            *doc = buf;
            *len = size;
            state = INDEX_READ;
        } else {
            free(buf);
        }
    }
    close(fd);
    return state;
}

/* The "file" members of an index (the files it names) that are names a tensor set gives
 * its files, added to `out`. Our own writer's output is all this reads: a "file" key
 * cannot occur inside a string, where every quote is escaped; a value with an escape in
 * it is no name of ours and is skipped. */
static void index_files(const char *doc, name_list *out)
{
    static const char key[] = "\"file\"";
    for (const char *p = strstr(doc, key); p; p = strstr(p, key)) {
        p += strlen(key);
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            p++;
        if (*p != '"')
            continue;
        const char *end = strpbrk(++p, "\"\\");
        if (!end)
            break;
        char *name = gl_xstrndup(p, (size_t)(end - p));
        if (*end == '"' && gl_save_tensor_file_name(name))
            names_add(out, name);
        free(name);
        p = end;
    }
}

/* The files the index at `path` names, added to `out`. */
static index_state index_names(const char *path, name_list *out)
{
    char *doc;
    size_t len;
    index_state state = read_index(path, &doc, &len);
    if (state == INDEX_READ)
        index_files(doc, out);
    free(doc);
    return state;
}

/* ---- the folder's lock, signals, removing --------------------------------------------------- */

/* DIR open and locked (flock) for the caller: saves into one folder take turns at their
 * commits and cleanups. A file system without locks leaves the folder unlocked. -1 when
 * the folder cannot be opened. */
static int lock_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
        continue;
    return fd;
}

static void unlock_dir(int fd)
{
    if (fd >= 0)
        close(fd); /* closing releases the flock */
}

/* SIGINT, SIGTERM and SIGHUP (safe_write.h's cleanup signals) held back: the commit
 * finishes, then the signal is delivered. */
static void hold_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Unlinks DIR/name when it is a regular file (never a link, a folder or a device). */
static void remove_file(const char *dir, const char *name)
{
    char *path = path_in(dir, name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        unlink(path);
    free(path);
}

/* Test-only: GRAPHLAB_TEST_SAVE_SIGNAL (save_set.h). */
static void test_signal_point(const char *phase, size_t done)
{
    const char *v = getenv("GRAPHLAB_TEST_SAVE_SIGNAL");
    char sig[8], at[8];
    unsigned long n;
    if (!v || sscanf(v, "%7[A-Z]:%7[a-z]:%lu", sig, at, &n) != 3 || strcmp(at, phase) != 0 ||
        n != done)
        return;
    if (strcmp(sig, "KILL") == 0)
        raise(SIGKILL);
    else if (strcmp(sig, "STOP") == 0)
        raise(SIGSTOP);
}

/* ---- what a killed save left ----------------------------------------------------------------- */

/* Undoes the save whose temporary folder `tmp` is: removes from DIR the files its new
 * index or its copy of the old one names that DIR/index.json does not (save_set.h), then
 * the folder. When DIR/index.json cannot be read, no file is removed but the folder. */
static void undo_killed_save(const char *dir, const char *tmp)
{
    name_list current = {0}, named = {0};
    char *index = path_in(dir, GL_SAVE_INDEX);
    if (index_names(index, &current) != INDEX_UNKNOWN) {
        static const char *const journal[] = {GL_SAVE_INDEX, PREVIOUS_INDEX};
        for (size_t k = 0; k < GL_ARRAY_LEN(journal); k++) {
            char *path = path_in(tmp, journal[k]);
            index_names(path, &named);
            free(path);
        }
        for (size_t i = 0; i < named.n; i++)
            if (!names_have(&current, named.v[i]))
                remove_file(dir, named.v[i]);
    }
    free(index);
    names_free(&named);
    names_free(&current);
    gl_stale_temp_remove(tmp);
}

static void undo_killed_saves(const char *dir)
{
    char **stale;
    size_t n = gl_stale_temps_find(dir, TEMP_BEFORE, TEMP_AFTER, true, &stale);
    for (size_t i = 0; i < n; i++) {
        undo_killed_save(dir, stale[i]);
        free(stale[i]);
    }
    free(stale);
}

/* ---- opening and writing ----------------------------------------------------------------------- */

/* The id of the save: the random part of its temporary folder's name, which must be
 * ".graphlab-save.<our pid>.tmp.XXXXXX" for a later save to know it (stale_temps.h). */
static bool take_id(gl_save_set *s)
{
    const char *slash = strrchr(s->tmp.path, '/');
    const char *base = slash ? slash + 1 : s->tmp.path;
    if (gl_temp_name_pid(base, TEMP_BEFORE, TEMP_AFTER) != getpid())
        return false;
    memcpy(s->id, base + strlen(base) - GL_TEMP_RANDOM_LEN, GL_TEMP_RANDOM_LEN);
    s->id[GL_TEMP_RANDOM_LEN] = '\0';
    return true;
}

gl_status gl_save_set_open(gl_save_set *s, gl_save_kind kind, const char *dir)
{
    *s = (gl_save_set){.kind = kind};
    gl_status st = gl_make_dir(dir);
    if (st != GL_OK)
        return st;
    int lock = lock_dir(dir);
    if (lock < 0)
        return gl_fail(GL_ERR_IO, "%s: cannot open the folder: %s", dir, strerror(errno));
    undo_killed_saves(dir);
    unlock_dir(lock);
    size_t len = strlen(dir) + sizeof(TEMP_STEM) + 24;
    char *target = gl_xmalloc(len);
    snprintf(target, len, "%s/%s.%ld", dir, TEMP_STEM, (long)getpid());
    st = gl_temp_dir_open(&s->tmp, target);
    free(target);
    if (st != GL_OK)
        return st;
    if (!take_id(s)) {
        st = gl_fail(GL_ERR_INTERNAL, "%s: the temporary folder '%s' is not named "
                     TEMP_BEFORE "<pid>" TEMP_AFTER "XXXXXX", dir, s->tmp.path);
        gl_temp_dir_abort(&s->tmp);
        return st;
    }
    s->dir = gl_xstrdup(dir);
    return GL_OK;
}

gl_status gl_save_set_tensor(gl_save_set *s, const char *name, const gl_tensor *t)
{
    if (!s->dir || strchr(name, '/') || name[0] == '.' || strcmp(name, GL_SAVE_INDEX) == 0 ||
        strcmp(name, PREVIOUS_INDEX) == 0 ||
        (s->kind == GL_SAVE_TENSORS && !gl_save_tensor_file_name(name)))
        return gl_fail(GL_ERR_INTERNAL, "%s: '%s' is no name for a file of the save",
                       s->dir ? s->dir : "?", name);
    char *path = path_in(s->tmp.path, name);
    gl_status st = gl_tensor_write_pb(t, path);
    free(path);
    if (st != GL_OK)
        return st;
    names_add(&s->names, name);
    test_signal_point("write", s->names.n);
    return GL_OK;
}

gl_status gl_save_set_index(gl_save_set *s, const char *doc, size_t len)
{
    char *path = path_in(s->tmp.path, GL_SAVE_INDEX);
    gl_status st = gl_write_file(path, doc, len);
    free(path);
    s->has_index = st == GL_OK;
    return st;
}

void gl_save_set_abort(gl_save_set *s)
{
    gl_temp_dir_abort(&s->tmp);
    names_free(&s->names);
    free(s->dir);
    *s = (gl_save_set){0};
}

/* ---- the commit ------------------------------------------------------------------------------------ */

/* The write guard's verdict on replacing `path` (safe_write.h: not a link, not an input,
 * nothing but a regular file). The guard has no door of its own: opening an atomic file
 * asks it, and the abort removes the empty temporary file the open made. */
static gl_status guard_check(const char *path)
{
    gl_atomic_file probe;
    gl_status st = gl_atomic_open(&probe, path);
    if (st == GL_OK)
        gl_atomic_abort(&probe);
    return st;
}

/* Every destination checked before anything moves: a refusal leaves DIR as it was. A
 * tensor file's name is new (it carries the save's id); an existing file of that name
 * is no file of an index's and is not replaced. */
static gl_status check_destinations(const gl_save_set *s)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < s->names.n && st == GL_OK; i++) {
        char *path = path_in(s->dir, s->names.v[i]);
        struct stat sb;
        if (s->kind == GL_SAVE_OUTPUTS)
            st = guard_check(path);
        else if (lstat(path, &sb) == 0)
            st = gl_fail(GL_ERR_IO, "%s: exists already; not replaced (a save's files have "
                         "names of their own)", path);
        free(path);
    }
    if (st == GL_OK && s->kind == GL_SAVE_TENSORS) {
        char *index = path_in(s->dir, GL_SAVE_INDEX);
        st = guard_check(index);
        free(index);
    }
    return st;
}

/* The files of the save being replaced: those DIR/index.json names, or the output_K.pb
 * in DIR. For tensors the old index is kept in the temporary folder first (the journal
 * of save_set.h). */
static gl_status old_set(const gl_save_set *s, name_list *old)
{
    if (s->kind == GL_SAVE_OUTPUTS) {
        DIR *d = opendir(s->dir);
        if (!d)
            return gl_fail(GL_ERR_IO, "%s: cannot read: %s", s->dir, strerror(errno));
        for (struct dirent *e; (e = readdir(d));)
            if (is_output_file_name(e->d_name))
                names_add(old, e->d_name);
        closedir(d);
        return GL_OK;
    }
    char *index = path_in(s->dir, GL_SAVE_INDEX), *doc;
    size_t len;
    gl_status st = GL_OK;
    if (read_index(index, &doc, &len) == INDEX_READ) {
        index_files(doc, old);
        char *copy = path_in(s->tmp.path, PREVIOUS_INDEX);
        st = gl_write_file(copy, doc, len);
        free(copy);
    }
    free(doc);
    free(index);
    return st;
}

static gl_status move_one(const gl_save_set *s, const char *name)
{
    char *from = path_in(s->tmp.path, name), *to = path_in(s->dir, name);
    gl_status st = GL_OK;
    if (rename(from, to) != 0)
        st = gl_fail(GL_ERR_IO, "%s: cannot rename %s to it: %s", to, from, strerror(errno));
    free(from);
    free(to);
    return st;
}

/* The files renamed into DIR, a tensor set's index last (the commit). When a rename
 * fails before the index moved, the tensor files already moved are taken back out: the
 * old index and its files are as they were. */
static gl_status move_into_place(const gl_save_set *s)
{
    gl_status st = GL_OK;
    size_t moved = 0;
    for (; moved < s->names.n && st == GL_OK; moved++) {
        st = move_one(s, s->names.v[moved]);
        test_signal_point("move", moved + 1);
    }
    if (st == GL_OK && s->kind == GL_SAVE_TENSORS) {
        st = move_one(s, GL_SAVE_INDEX);
        test_signal_point("move", moved + 1);
    }
    if (st != GL_OK && s->kind == GL_SAVE_TENSORS)
        for (size_t i = 0; i < moved; i++)
            remove_file(s->dir, s->names.v[i]);
    return st;
}

gl_status gl_save_set_commit(gl_save_set *s)
{
    if (!s->dir || (s->kind == GL_SAVE_TENSORS && !s->has_index)) {
        gl_save_set_abort(s);
        return gl_fail(GL_ERR_INTERNAL, "commit of a save that is closed or has no index");
    }
    int lock = lock_dir(s->dir);
    gl_status st = GL_OK;
    if (lock < 0)
        st = gl_fail(GL_ERR_IO, "%s: cannot open the folder: %s", s->dir, strerror(errno));
    name_list old = {0};
    if (st == GL_OK)
        st = check_destinations(s);
    if (st == GL_OK)
        st = old_set(s, &old);
    sigset_t signals;
    hold_signals(&signals);
    if (st == GL_OK)
        st = move_into_place(s);
    if (st == GL_OK) {
        (void)fsync(lock); /* best effort: some file systems cannot sync folders */
        for (size_t i = 0; i < old.n; i++)
            if (!names_have(&s->names, old.v[i]))
                remove_file(s->dir, old.v[i]);
    }
    gl_save_set_abort(s);
    pthread_sigmask(SIG_SETMASK, &signals, NULL);
    unlock_dir(lock);
    names_free(&old);
    return st;
}
