/* file_read.c — input files: regular files only, opened without blocking. */
#include "util/file_read.h"

#include "util/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a file";
}

gl_status gl_file_open_regular(const char *path, const char *label, int *fd, size_t *size)
{
    label = label ? label : path;
    *fd = -1;
    /* Non-blocking, so that a FIFO with no writer does not stop us here. */
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return gl_fail(GL_ERR_IO, "%s: cannot open: %s", label, strerror(errno));
    struct stat st;
    gl_status rc = GL_OK;
    int flags;
    if (fstat(f, &st) != 0)
        rc = gl_fail(GL_ERR_IO, "%s: cannot stat: %s", label, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = gl_fail(GL_ERR_INPUT, "%s: not a regular file (%s)", label, kind_of(st.st_mode));
    else if ((uint64_t)st.st_size > SIZE_MAX)
        rc = gl_fail(GL_ERR_INPUT, "%s: %lld bytes do not fit in memory", label,
                     (long long)st.st_size);
    else if ((flags = fcntl(f, F_GETFL)) < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) < 0)
        rc = gl_fail(GL_ERR_IO, "%s: cannot read in blocking mode: %s", label, strerror(errno));
    if (rc != GL_OK) {
        close(f);
        return rc;
    }
    gl_protect_input(f, path); /* no output of this process may replace it */
    *fd = f;
    *size = (size_t)st.st_size;
    return GL_OK;
}

gl_status gl_file_read_exact(int fd, void *buf, size_t len, const char *label)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, (char *)buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return gl_fail(GL_ERR_IO, "%s: cannot read: %s", label, strerror(errno));
        if (r == 0)
            return gl_fail(GL_ERR_IO, "%s: the file shrank while being read", label);
        got += (size_t)r;
    }
    return GL_OK;
}

gl_status gl_file_read_all(const char *path, size_t max, const char *max_why, uint8_t **data,
                           size_t *len)
{
    int fd;
    size_t size;
    gl_status rc = gl_file_open_regular(path, NULL, &fd, &size);
    if (rc != GL_OK)
        return rc;
    uint8_t *buf = NULL;
    if (size > max)
        rc = gl_fail(GL_ERR_INPUT, "%s: %zu bytes is over %s", path, size, max_why);
    else if (!(buf = malloc(size ? size : 1)))
        rc = gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
    else
        rc = gl_file_read_exact(fd, buf, size, path);
    close(fd);
    if (rc != GL_OK) {
        free(buf);
        return rc;
    }
    *data = buf;
    *len = size;
    return GL_OK;
}
