/* file_read.h — opening and reading the files graphlab is handed (models, external data,
 * tensor files) without hanging on what is not a file.
 *
 * open() of a FIFO blocks until a writer comes, and a device may never end. Every input
 * file is opened non-blocking (then switched back to blocking), looked at with fstat, and
 * refused unless it is a regular file, with a message naming the path and what it is.
 * Every file opened here is a protected input (util/safe_write.h): no write of the
 * process may replace it afterwards.
 */
#ifndef GL_FILE_READ_H
#define GL_FILE_READ_H

#include "util/status.h"

#include <stddef.h>
#include <stdint.h>

/* Open `path` for reading: *fd (close-on-exec, blocking) and its *size. Messages start
 * with `label` ("m.onnx: external data 'w.bin'"; NULL: the path): GL_ERR_IO when it
 * cannot be opened or stat'ed, GL_ERR_INPUT when it is not a regular file. */
gl_status gl_file_open_regular(const char *path, const char *label, int *fd, size_t *size);

/* Read exactly len bytes from fd (interrupted reads resumed); GL_ERR_IO naming `label`
 * when reading fails or the file ends first. */
gl_status gl_file_read_exact(int fd, void *buf, size_t len, const char *label);

/* A whole regular file in a malloc'd buffer (*data, *len; free it), refused with
 * GL_ERR_INPUT when larger than max bytes ("PATH: N bytes is over MAX_WHY"). */
gl_status gl_file_read_all(const char *path, size_t max, const char *max_why, uint8_t **data,
                           size_t *len);

#endif
