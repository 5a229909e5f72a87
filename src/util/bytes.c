/* bytes.c — a byte count as people read it (bytes.h). */
#include "util/bytes.h"

#include <stdio.h>

void gl_bytes_text(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    uint64_t scale = 1;
    while (bytes / scale >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        scale *= 1024;
        u++;
    }
    if (bytes % scale == 0)
        snprintf(buf, len, "%llu %s", (unsigned long long)(bytes / scale), units[u]);
    else
        snprintf(buf, len, "%.1f %s", (double)bytes / (double)scale, units[u]);
}
