/* stale_temps.c — finding and removing the temporary folders of processes that are gone
 * (stale_temps.h). */
#include "util/stale_temps.h"

#include "util/status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

pid_t gl_temp_name_pid(const char *name, const char *before, const char *after)
{
    size_t bl = strlen(before), al = strlen(after);
    if (strncmp(name, before, bl) != 0)
        return 0;
    const char *p = name + bl;
    if (*p < '1' || *p > '9')
        return 0;
    long long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        pid = pid * 10 + (*p - '0');
        if (pid > INT_MAX)
            return 0;
    }
    if (strncmp(p, after, al) != 0)
        return 0;
    p += al;
    for (int i = 0; i < GL_TEMP_RANDOM_LEN; i++)
        if (!is_alnum(p[i]))
            return 0;
    return p[GL_TEMP_RANDOM_LEN] == '\0' ? (pid_t)pid : 0;
}

bool gl_process_gone(pid_t pid)
{
    /* EPERM: it exists, under another user */
    return pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH;
}

size_t gl_stale_temps_find(const char *dir, const char *before, const char *after,
                           bool folders, char ***paths)
{
    *paths = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t pid = gl_temp_name_pid(e->d_name, before, after);
        if (!pid || !gl_process_gone(pid))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = gl_xmalloc(len);
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !(folders ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
            free(path);
            continue;
        }
        GL_GROW(*paths, cap, n + 1);
        (*paths)[n++] = path;
    }
    closedir(d);
    return n;
}

void gl_stale_temp_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(fd, e->d_name, 0); /* a folder inside fails (EISDIR) and stays */
    closedir(d);
    rmdir(path);
}

void gl_stale_file_temps_remove(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? gl_xstrndup(path, slash == path ? 1 : (size_t)(slash - path))
                      : gl_xstrdup(".");
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(base) + sizeof(".tmp.");
    char *before = gl_xmalloc(len);
    snprintf(before, len, "%s.tmp.", base);
    char **stale;
    size_t n = gl_stale_temps_find(dir, before, ".", false, &stale);
    for (size_t i = 0; i < n; i++) {
        unlink(stale[i]);
        free(stale[i]);
    }
    free(stale);
    free(before);
    free(dir);
}
