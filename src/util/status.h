/* status.h — error reporting shared by every module.
 *
 * Functions that can fail return gl_status (GL_OK == 0) and, on failure, leave one
 * message in a per-thread buffer that says what and where, e.g.
 *   "model.onnx: node 'conv_3' (Conv): input 'w' has rank 3, expected 4".
 * The CLI prints gl_error_message() as the single stderr line and maps the status to
 * the exit code of DESIGN.md (GL_ERR_INPUT -> 2).
 */
#ifndef GL_STATUS_H
#define GL_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum gl_status {
    GL_OK = 0,
    GL_ERR_INPUT,    /* the input (file, model, arguments) is bad: exit 2 */
    GL_ERR_NOMEM,    /* an allocation failed */
    GL_ERR_IO,       /* reading or writing a file failed */
    GL_ERR_INTERNAL, /* a bug of ours: an invariant did not hold */
    GL_ERR_UNSUPPORTED,
    GL_ERR_CANCELLED, /* stopped on request (Ctrl-C in the workbench) */
} gl_status;

/* Set the message (printf-style) and return `st` so callers can write
 * `return gl_fail(GL_ERR_INPUT, "%s: ...", path);`. */
gl_status gl_fail(gl_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
gl_status gl_failv(gl_status st, const char *fmt, va_list ap);

/* Prefix the current message with "prefix: " (adds context on the way up). */
void gl_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *gl_error_message(void); /* "" when none */
void gl_error_clear(void);
const char *gl_status_name(gl_status st);

/* Allocation helpers that never return NULL: on failure they print to stderr, run the
 * registered cleanup hook (the TUI restores the terminal there) and abort. Use them for
 * small bookkeeping; allocations sized by the input file use plain malloc and report
 * GL_ERR_NOMEM instead, so a hostile file cannot abort us. */
void *gl_xmalloc(size_t n);
void *gl_xcalloc(size_t count, size_t size);
void *gl_xrealloc(void *p, size_t n);
char *gl_xstrdup(const char *s);     /* NULL -> NULL */
char *gl_xstrndup(const char *s, size_t n);
void gl_set_fatal_hook(void (*hook)(void));

/* Grow a dynamic array `*arr` of `*cap` elements of `elem` bytes so that it holds at
 * least `need` elements (doubling). */
void gl_grow(void **arr, size_t *cap, size_t need, size_t elem);
#define GL_GROW(arr, cap, need) gl_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#define GL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
