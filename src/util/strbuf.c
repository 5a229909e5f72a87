/* strbuf.c — a growable NUL-terminated string. */
#include "util/strbuf.h"

#include "util/status.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gl_sb_putn(gl_strbuf *b, const char *s, size_t n)
{
    GL_GROW(b->s, b->cap, b->len + n + 1);
    if (n)
        memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void gl_sb_puts(gl_strbuf *b, const char *s) { gl_sb_putn(b, s, strlen(s)); }

void gl_sb_putc(gl_strbuf *b, char c) { gl_sb_putn(b, &c, 1); }

void gl_sb_vprintf(gl_strbuf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0) {
        GL_GROW(b->s, b->cap, b->len + (size_t)n + 1);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void gl_sb_printf(gl_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gl_sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *gl_sb_take(gl_strbuf *b)
{
    char *s = b->s ? b->s : gl_xstrdup("");
    *b = (gl_strbuf){0};
    return s;
}

void gl_sb_free(gl_strbuf *b)
{
    free(b->s);
    *b = (gl_strbuf){0};
}

void gl_sb_shell_word(gl_strbuf *b, const char *s)
{
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = isalnum((unsigned char)*c) || strchr("-_./:=,+@%", *c);
    if (plain) {
        gl_sb_puts(b, s);
        return;
    }
    gl_sb_putc(b, '\'');
    for (const char *c = s; *c; c++)
        if (*c == '\'')
            gl_sb_puts(b, "'\\''");
        else
            gl_sb_putc(b, *c);
    gl_sb_putc(b, '\'');
}
