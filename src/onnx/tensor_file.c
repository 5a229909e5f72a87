/* tensor_file.c — serialized onnx.TensorProto files (test_data_set_N/input_K.pb).
 *
 * Reading goes through the same decoder as initializers, so a .pb file may use any
 * encoding ONNX allows (typed fields, raw_data, external data beside the file); a file
 * read is a protected input (never overwritten afterwards). Writing always uses raw_data
 * and goes through the guarded atomic write (util/safe_write.h).
 */
#include "onnx/onnx_io.h"

#include "onnx.pb-c.h"
#include "util/file_read.h"
#include "util/safe_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    gl_status st = gl_file_read_all(path, INT32_MAX, "protobuf's 2 GiB limit", &data, &len);
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
