/* tensor_file.c — serialized onnx.TensorProto files (test_data_set_N/input_K.pb).
 *
 * Reading goes through the same decoder as initializers, so a .pb file may use any
 * encoding ONNX allows (typed fields, raw_data, external data beside the file); a file
 * read is a protected input (never overwritten afterwards). Writing always uses raw_data
 * and goes through the guarded atomic write (util/safe_write.h).
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"
#include "util/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole file in a malloc'd buffer; its size comes from fstat, so what we allocate
 * is what the disk holds. */
static gl_status read_file(const char *path, uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return gl_fail(GL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    gl_status rc = GL_OK;
    uint8_t *buf = NULL;
    size_t size = 0, got = 0;
    if (fstat(fd, &st) != 0)
        rc = gl_fail(GL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = gl_fail(GL_ERR_INPUT, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > (uint64_t)INT32_MAX)
        rc = gl_fail(GL_ERR_INPUT, "%s: %lld bytes is over protobuf's 2 GiB limit", path,
                     (long long)st.st_size);
    else if (!(buf = malloc((size = (size_t)st.st_size) ? size : 1)))
        rc = gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
    if (rc == GL_OK)
        gl_protect_input(fd, path);
    while (rc == GL_OK && got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = gl_fail(GL_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
        else if (r == 0)
            rc = gl_fail(GL_ERR_IO, "%s: the file shrank while being read", path);
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc != GL_OK) {
        free(buf);
        return rc;
    }
    *data = buf;
    *len = size;
    return GL_OK;
}

static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return gl_xstrdup(".");
    return gl_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

gl_status gl_tensor_read_pb(const char *path, gl_tensor **out)
{
    *out = NULL;
    uint8_t *data = NULL;
    size_t len = 0;
    gl_status st = read_file(path, &data, &len);
    if (st != GL_OK)
        return st;
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, data);
    free(data);
    if (!tp)
        return gl_fail(GL_ERR_INPUT, "%s: not a serialized onnx.TensorProto (%zu bytes)",
                       path, len);
    char *dir = folder_of(path);
    st = gl_tensor_from_proto(tp, path, dir, true, false, out);
    free(dir);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return st;
}

gl_status gl_tensor_write_pb(const gl_tensor *t, const char *path)
{
    Onnx__TensorProto tp;
    gl_status st = gl_tensor_to_proto(t, &tp);
    if (st != GL_OK) {
        gl_error_prefix("%s", path);
        return st;
    }
    size_t size = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = NULL;
    if (size > (size_t)INT32_MAX)
        st = gl_fail(GL_ERR_UNSUPPORTED, "%s: %zu bytes is over protobuf's 2 GiB limit", path,
                     size);
    else if (!(buf = malloc(size ? size : 1)))
        st = gl_fail(GL_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, size);
    else if (onnx__tensor_proto__pack(&tp, buf) != size)
        st = gl_fail(GL_ERR_INTERNAL, "%s: protobuf packed a different size than announced",
                     path);
    gl_tensor_proto_release(&tp);
    if (st == GL_OK)
        st = gl_write_file(path, buf, size);
    free(buf);
    return st;
}
