/* stale_temps.c — finding and removing the temporary folders of processes that are gone
 * (stale_temps.h). */
#include "util/stale_temps.h"

#include "ir/status.h"

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

pid_t gl_temp_name_pid(const char *name, const char *stem)
{
    size_t sl = strlen(stem);
    if (name[0] != '.' || strncmp(name + 1, stem, sl) != 0 || name[1 + sl] != '.')
        return 0;
    const char *p = name + sl + 2;
    if (*p < '1' || *p > '9')
        return 0;
    long long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        pid = pid * 10 + (*p - '0');
        if (pid > INT_MAX)
            return 0;
    }
    if (strncmp(p, ".tmp.", 5) != 0)
        return 0;
    p += 5;
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

size_t gl_stale_temps_find(const char *dir, const char *stem, char ***paths)
{
    *paths = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t pid = gl_temp_name_pid(e->d_name, stem);
        if (!pid || !gl_process_gone(pid))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = gl_xmalloc(len);
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
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
