/* escape.h — text from a model (names, paths, messages) made safe to print.
 *
 * Whatever leaves the program for a terminal or a text file goes through here: the stderr
 * error line, the names the subcommands print, the text the workbench draws. A name is
 * bytes from someone else's file: an ESC sequence in it would drive the terminal, a
 * CR or LF would forge lines (and break the one-line error rule), a right-to-left
 * override would show text in another order than it is. Escaped, they read as:
 *   - C0 control bytes, DEL and bytes that are not UTF-8:  \xNN   (ESC -> \x1B)
 *   - C1 controls (U+0080..U+009F) and the bidirectional controls U+061C, U+200E/F,
 *     U+202A..U+202E, U+2066..U+2069:                    \u{NNNN} (\u{202E})
 * Everything else (printable ASCII, valid UTF-8, the backslash itself) is kept: the
 * escapes are for reading, not for decoding back.
 * JSON has its own escaping (util/json.c), Graphviz labels theirs (render.c).
 */
#ifndef GL_UTIL_ESCAPE_H
#define GL_UTIL_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Room for the escape of one character, "\u{10FFFF}", and its NUL. */
#define GL_ESCAPE_CHAR_MAX 12

/* The character at s (a NUL ends it; s must not be at the NUL): its length in bytes
 * (1..4; an invalid byte is a character of 1) into *len, and, when it must be escaped,
 * its escape into out (NUL-terminated) and the escape's length; 0 when it is safe. */
size_t gl_escape_char(const char *s, char out[GL_ESCAPE_CHAR_MAX], size_t *len);

/* Whether the code point must not reach a terminal raw (controls, bidi controls). */
bool gl_codepoint_unsafe(uint32_t cp);

/* The valid UTF-8 character at s: its length (1..4) and code point; 0 when the bytes
 * there are not one (overlong, surrogate, beyond U+10FFFF, truncated, stray). Reads no
 * further than a NUL. */
size_t gl_utf8_decode(const char *s, uint32_t *cp);

/* Whether anything in s needs escaping. */
bool gl_escape_needed(const char *s);

/* s escaped into dst (cap bytes; NUL-terminated when cap > 0; an escape or character
 * that does not fit whole is left out with everything after it). Returns the length of
 * the whole escaped text, as snprintf does. */
size_t gl_escape(char *dst, size_t cap, const char *s);

/* For printf arguments: s itself when nothing in it needs escaping, else its escaped
 * form in one of 8 per-thread buffers that are reused in turn (so up to 8 per call
 * are safe); an escaped form longer than a buffer ends in "...". NULL gives "". */
const char *gl_esc(const char *s);

#endif
