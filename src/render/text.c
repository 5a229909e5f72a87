/* text.c — the display text of drawings: names as valid UTF-8 without control
 * characters, cut in the middle when long, counts with thousands separators, numbers that
 * ignore the locale, DOT string quoting (stages.h). */
#include "render/stages.h"

#include "util/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "20,000": counts in notes are read by people. */
const char *gl_rv_count(char buf[32], size_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof(digits), "%zu", n);
    size_t o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* ==== display text ===================================================================== */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes are not one:
 * overlong forms, surrogates, code points past U+10FFFF and the XML-forbidden
 * U+FFFE/U+FFFF are all rejected, so what passes is safe in DOT and in SVG. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || n > avail)
        return 0;
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

/* "&amp;", "&#1;": Graphviz decodes these in plain labels and copies them raw into SVG,
 * where an undefined entity or "&#1;" is not XML. */
static bool looks_like_entity(const char *s)
{
    size_t i = 1;
    while (i < 12 && (s[i] == '#' || (s[i] >= '0' && s[i] <= '9') ||
                      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
        i++;
    return i > 1 && s[i] == ';';
}

static void put_escaped_byte(gl_strbuf *b, unsigned char c)
{
    static const struct {
        unsigned char c;
        const char *text;
    } named[] = {{'\n', "\\n"}, {'\t', "\\t"}, {'\r', "\\r"}};
    for (size_t i = 0; i < GL_ARRAY_LEN(named); i++)
        if (named[i].c == c) {
            gl_sb_puts(b, named[i].text);
            return;
        }
    gl_sb_printf(b, "\\x%02X", c);
}

/* Display form of a name: valid UTF-8 without control characters (those and invalid
 * bytes are spelled \xNN; C1 and bidi controls, util/escape.h's list, too). */
static void put_sanitized(gl_strbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t avail = strlen(s);
    while (avail) {
        size_t n = utf8_seq_len(p, avail);
        uint32_t cp = 0;
        bool control = n && gl_utf8_decode((const char *)p, &cp) == n && gl_codepoint_unsafe(cp);
        if (n == 0 || control) {
            for (size_t i = 0; i < (n ? n : 1); i++)
                put_escaped_byte(b, p[i]);
            n = n ? n : 1;
        } else if (p[0] == '&' && looks_like_entity((const char *)p)) {
            put_escaped_byte(b, '&');
        } else {
            gl_sb_putn(b, (const char *)p, n);
        }
        p += n;
        avail -= n;
    }
}

static size_t utf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Byte offset of code point `k` of valid UTF-8 text. */
static size_t utf8_offset(const char *s, size_t len, size_t k)
{
    size_t i = 0;
    for (size_t seen = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == k)
            break;
    }
    return i;
}

/* Sanitized display text, cut in the middle ("abc…xyz") past `max_chars` characters:
 * the start and end of a long ONNX name are the informative parts. */
void gl_rv_put_display(gl_strbuf *b, const char *s, size_t max_chars)
{
    gl_strbuf t = {0};
    put_sanitized(&t, s ? s : "");
    size_t chars = utf8_count(t.s ? t.s : "", t.len);
    if (chars <= max_chars) {
        if (t.len)
            gl_sb_putn(b, t.s, t.len);
    } else {
        size_t keep = (max_chars - 1) / 2;
        size_t head = utf8_offset(t.s, t.len, keep);
        size_t tail = utf8_offset(t.s, t.len, chars - keep);
        gl_sb_putn(b, t.s, head);
        gl_sb_puts(b, "\xE2\x80\xA6"); /* … */
        gl_sb_putn(b, t.s + tail, t.len - tail);
    }
    free(t.s);
}

void gl_rv_put_name(gl_strbuf *b, const char *s) { gl_rv_put_display(b, s, NAME_DISPLAY_MAX); }

/* A DOT double-quoted string for display text whose lines are separated by '\n'.
 * Graphviz reads "\\" as a backslash and "\n" as a line break in labels. */
void gl_rv_put_dot_string(gl_strbuf *b, const char *text)
{
    gl_sb_putc(b, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '\n')
            gl_sb_puts(b, "\\n");
        else if (*p == '\\' || *p == '"') {
            gl_sb_putc(b, '\\');
            gl_sb_putc(b, *p);
        } else
            gl_sb_putc(b, *p);
    }
    gl_sb_putc(b, '"');
}

/* Locale-proof %g: a TUI that called setlocale(LC_ALL, "") must not get "0,5" here. */
void gl_rv_put_number(gl_strbuf *b, double v)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%.4g", v);
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
    gl_sb_puts(b, buf);
}

void gl_rv_put_type(gl_strbuf *t, const gl_type *type)
{
    char buf[512];
    gl_type_format(type, buf, sizeof(buf));
    gl_rv_put_display(t, buf, 80);
}
