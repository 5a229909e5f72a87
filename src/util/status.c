/* status.c — per-thread error message and aborting allocators. */
#include "util/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char error_buf[1024];
static void (*fatal_hook)(void);

gl_status gl_failv(gl_status st, const char *fmt, va_list ap)
{
    vsnprintf(error_buf, sizeof(error_buf), fmt, ap);
    return st;
}

gl_status gl_fail(gl_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gl_failv(st, fmt, ap);
    va_end(ap);
    return st;
}

void gl_error_prefix(const char *fmt, ...)
{
    char prefix[512], old[sizeof(error_buf)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, error_buf, sizeof(old));
    /* Truncation is fine here: the message is for people. */
    size_t plen = strnlen(prefix, sizeof(error_buf) - 3);
    memcpy(error_buf, prefix, plen);
    memcpy(error_buf + plen, ": ", 2);
    size_t room = sizeof(error_buf) - plen - 3;
    size_t olen = strnlen(old, room);
    memcpy(error_buf + plen + 2, old, olen);
    error_buf[plen + 2 + olen] = '\0';
}

const char *gl_error_message(void) { return error_buf; }
void gl_error_clear(void) { error_buf[0] = '\0'; }

const char *gl_status_name(gl_status st)
{
    static const char *const names[] = {
        [GL_OK] = "ok",
        [GL_ERR_INPUT] = "bad input",
        [GL_ERR_NOMEM] = "out of memory",
        [GL_ERR_IO] = "i/o error",
        [GL_ERR_INTERNAL] = "internal error",
        [GL_ERR_UNSUPPORTED] = "unsupported",
        [GL_ERR_CANCELLED] = "cancelled",
    };
    if ((size_t)st < GL_ARRAY_LEN(names) && names[st])
        return names[st];
    return "unknown status";
}

void gl_set_fatal_hook(void (*hook)(void)) { fatal_hook = hook; }

static void die_oom(size_t n)
{
    if (fatal_hook)
        fatal_hook();
    fprintf(stderr, "graphlab: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *gl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die_oom(n);
    return p;
}

void *gl_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        die_oom(count * size);
    return p;
}

void *gl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die_oom(n);
    return q;
}

char *gl_xstrdup(const char *s)
{
    return s ? gl_xstrndup(s, strlen(s)) : NULL;
}

char *gl_xstrndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *d = gl_xmalloc(len + 1);
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

void gl_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 4;
    while (ncap < need)
        ncap *= 2;
    *arr = gl_xrealloc(*arr, ncap * elem);
    *cap = ncap;
}
