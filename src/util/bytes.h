/* bytes.h — a byte count as people read it, one way everywhere graphlab prints one. */
#ifndef GL_UTIL_BYTES_H
#define GL_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* "512 B", "32 KiB" (whole units without decimals, as planned and aligned sizes often
 * are), "1.5 KiB", "3.2 MiB": powers of 1024 with their IEC names, so a size never reads
 * as a thousand-based one. */
void gl_bytes_text(uint64_t bytes, char *buf, size_t len);

#endif
