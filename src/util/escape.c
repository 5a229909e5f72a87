/* escape.c — text made safe for terminals and text files (see escape.h). */
#include "util/escape.h"

#include <stdio.h>
#include <string.h>

size_t gl_utf8_decode(const char *s, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2
               : p[0] >= 0xE0 && p[0] < 0xF0                 ? 3
               : p[0] >= 0xF0 && p[0] < 0xF5                 ? 4
                                                             : 0;
    if (len == 0)
        return 0;
    uint32_t c = len == 1 ? p[0] : p[0] & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) /* also stops at the NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3Fu);
    }
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min_of_len[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

bool gl_codepoint_unsafe(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x061C || cp == 0x200E ||
           cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t gl_escape_char(const char *s, char out[GL_ESCAPE_CHAR_MAX], size_t *len)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t cp = 0;
    size_t n = gl_utf8_decode(s, &cp);
    *len = n ? n : 1;
    if (n == 0 || (cp < 0x80 && gl_codepoint_unsafe(cp)))
        return (size_t)snprintf(out, GL_ESCAPE_CHAR_MAX, "\\x%02X", p[0]);
    if (gl_codepoint_unsafe(cp))
        return (size_t)snprintf(out, GL_ESCAPE_CHAR_MAX, "\\u{%X}", (unsigned)cp);
    out[0] = '\0';
    return 0;
}

bool gl_escape_needed(const char *s)
{
    char esc[GL_ESCAPE_CHAR_MAX];
    size_t n;
    for (; s && *s; s += n) {
        if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7F) {
            n = 1; /* printable ASCII, the common case */
            continue;
        }
        if (gl_escape_char(s, esc, &n))
            return true;
    }
    return false;
}

size_t gl_escape(char *dst, size_t cap, const char *s)
{
    size_t total = 0, written = 0;
    bool full = cap == 0;
    char esc[GL_ESCAPE_CHAR_MAX];
    size_t n;
    for (; s && *s; s += n) {
        size_t elen = gl_escape_char(s, esc, &n);
        size_t ulen = elen ? elen : n;
        if (!full && written + ulen < cap) {
            memcpy(dst + written, elen ? esc : s, ulen);
            written += ulen;
        } else {
            full = true;
        }
        total += ulen;
    }
    if (cap > 0)
        dst[written] = '\0';
    return total;
}

#define ESC_SLOTS 8
#define ESC_SLOT_BYTES 1024

const char *gl_esc(const char *s)
{
    static _Thread_local char slots[ESC_SLOTS][ESC_SLOT_BYTES];
    static _Thread_local unsigned next;
    if (!s)
        return "";
    if (!gl_escape_needed(s))
        return s;
    char *buf = slots[next++ % ESC_SLOTS];
    if (gl_escape(buf, ESC_SLOT_BYTES - 3, s) >= ESC_SLOT_BYTES - 3)
        strcat(buf, "...");
    return buf;
}
