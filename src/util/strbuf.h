/* strbuf.h — a growable NUL-terminated string (the text of DOT files, labels, diffs).
 *
 * The buffer grows with the aborting allocators of status.h: use it for text whose size
 * follows from what is already in memory (a graph, a diff), not for sizes read from a
 * file. A zeroed gl_strbuf is empty and ready; `s` is NULL until the first byte, and
 * NUL-terminated after it. */
#ifndef GL_STRBUF_H
#define GL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct gl_strbuf {
    char *s;
    size_t len, cap;
} gl_strbuf;

void gl_sb_putn(gl_strbuf *b, const char *s, size_t n);
void gl_sb_puts(gl_strbuf *b, const char *s);
void gl_sb_putc(gl_strbuf *b, char c);
void gl_sb_printf(gl_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gl_sb_vprintf(gl_strbuf *b, const char *fmt, va_list ap);
/* s as one word of a POSIX shell command line: as it is when every byte is one a shell
 * leaves alone (letters, digits, and -_./:=,+@%), else in single quotes, a quote in it
 * written '\''. So a printed command line pastes. */
void gl_sb_shell_word(gl_strbuf *b, const char *s);
/* The text as a malloc'd string ("" when empty); the buffer is left empty. */
char *gl_sb_take(gl_strbuf *b);
void gl_sb_free(gl_strbuf *b);

#endif
