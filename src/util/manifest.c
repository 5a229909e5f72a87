/* manifest.c — a folder's list of owned files as JSON (manifest.h): the name set, the
 * writer, and a small strict JSON reader that keeps the "files" array. */
#include "util/manifest.h"

#include "util/status.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ==== the name set ====================================================================== */

void gl_names_add(gl_names *s, const char *name)
{
    GL_GROW(s->items, s->cap, s->n + 1);
    s->items[s->n++] = gl_xstrdup(name);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gl_names_sort(gl_names *s)
{
    if (s->n > 1)
        qsort(s->items, s->n, sizeof(*s->items), compare_names);
    size_t kept = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (kept && strcmp(s->items[kept - 1], s->items[i]) == 0)
            free(s->items[i]);
        else
            s->items[kept++] = s->items[i];
    }
    s->n = kept;
}

bool gl_names_has(const gl_names *s, const char *name)
{
    return s->n && bsearch(&name, s->items, s->n, sizeof(*s->items), compare_names);
}

void gl_names_free(gl_names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i]);
    free(s->items);
    *s = (gl_names){0};
}

bool gl_manifest_name_ok(const char *name)
{
    return *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/') &&
           strncmp(name, ".graphlab", 9) != 0;
}

/* ==== writing ============================================================================ */

/* JSON text is UTF-8: the writer would turn other bytes into U+FFFD, and the name read
 * back would be another one. */
static bool reads_back(const char *name)
{
    uint32_t cp;
    for (size_t n; *name; name += n)
        if ((n = gl_utf8_decode(name, &cp)) == 0)
            return false;
    return true;
}

void gl_manifest_write(FILE *f, const gl_manifest_about *about, const gl_names *files)
{
    gl_json j;
    gl_json_init(&j, f, true);
    gl_json_object_begin(&j, NULL);
    gl_json_int(&j, "format", 1);
    gl_json_string(&j, "about", "the files graphlab wrote here; the next export into this "
                                "folder removes those it does not write again, and nothing else");
    gl_json_string(&j, "written_by", about->written_by);
    gl_json_string(&j, "source", about->source);
    gl_json_array_begin(&j, "files");
    for (size_t i = 0; i < files->n; i++)
        if (gl_manifest_name_ok(files->items[i]) && reads_back(files->items[i]))
            gl_json_string(&j, NULL, files->items[i]);
    gl_json_array_end(&j);
    gl_json_object_end(&j);
    gl_json_finish(&j);
}

/* ==== reading ============================================================================ */

/* Deeper nesting than a manifest ever has is refused rather than recursed into. */
#define MAX_DEPTH 16

typedef struct reader {
    const char *p, *end;
} reader;

static void skip_space(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

/* Consumes `c` (after blanks) when it is next. */
static bool take(reader *r, char c)
{
    skip_space(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The 4 hex digits of a \u escape. */
static bool read_hex4(reader *r, uint32_t *v)
{
    if (r->end - r->p < 4)
        return false;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(*r->p++);
        if (d < 0)
            return false;
        *v = *v << 4 | (uint32_t)d;
    }
    return true;
}

static void put_utf8(gl_strbuf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    gl_sb_putn(b, u, n);
}

/* A \u escape (the "\u" read): a code point, a surrogate pair joined. U+0000 and lone
 * surrogates are refused: no file name holds them. */
static bool read_unicode_escape(reader *r, gl_strbuf *b)
{
    uint32_t cp, low;
    if (!read_hex4(r, &cp) || cp == 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
        return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
            return false;
        r->p += 2;
        if (!read_hex4(r, &low) || low < 0xDC00 || low > 0xDFFF)
            return false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    put_utf8(b, cp);
    return true;
}

/* A string (the opening quote next, after blanks), decoded into *out (malloc'd; NULL:
 * only checked). */
static bool read_string(reader *r, char **out)
{
    if (!take(r, '"'))
        return false;
    gl_strbuf b = {0};
    bool ok = false;
    while (r->p < r->end) {
        char c = *r->p++;
        if (c == '"') {
            ok = true;
            break;
        }
        if ((unsigned char)c < 0x20)
            break; /* raw controls are not JSON */
        if (c != '\\') {
            gl_sb_putc(&b, c);
            continue;
        }
        if (r->p == r->end)
            break;
        c = *r->p++;
        static const char plain[] = "\"\\/bfnrt", meant[] = "\"\\/\b\f\n\r\t";
        const char *at = c ? strchr(plain, c) : NULL;
        if (at)
            gl_sb_putc(&b, meant[at - plain]);
        else if (c != 'u' || !read_unicode_escape(r, &b))
            break;
    }
    if (ok && out)
        *out = gl_sb_take(&b);
    gl_sb_free(&b);
    return ok;
}

static bool skip_value(reader *r, int depth);

/* The members of an array or object (its opening bracket read) up to its closing one;
 * each value is skipped. */
static bool skip_members(reader *r, int depth, bool object)
{
    char close = object ? '}' : ']';
    if (take(r, close))
        return true;
    do {
        if (object && (!read_string(r, NULL) || !take(r, ':')))
            return false;
        if (!skip_value(r, depth + 1))
            return false;
    } while (take(r, ','));
    return take(r, close);
}

/* A literal or number: its characters are checked loosely (the manifest's own are never
 * read back), enough to step over them. */
static bool skip_scalar(reader *r)
{
    const char *start = r->p;
    while (r->p < r->end && (strchr("+-.eE", *r->p) || (*r->p >= '0' && *r->p <= '9') ||
                             (*r->p >= 'a' && *r->p <= 'z')))
        r->p++;
    return r->p > start;
}

static bool skip_value(reader *r, int depth)
{
    if (depth > MAX_DEPTH)
        return false;
    skip_space(r);
    if (take(r, '{'))
        return skip_members(r, depth, true);
    if (take(r, '['))
        return skip_members(r, depth, false);
    if (r->p < r->end && *r->p == '"')
        return read_string(r, NULL);
    return skip_scalar(r);
}

/* The "files" array (its key read): each valid name added to *files. */
static bool read_files(reader *r, gl_names *files)
{
    if (!take(r, '['))
        return false;
    if (take(r, ']'))
        return true;
    do {
        char *name = NULL;
        if (!read_string(r, &name))
            return false;
        /* a NUL from \u0000 is refused above; one mid-string would cut the name short */
        if (gl_manifest_name_ok(name))
            gl_names_add(files, name);
        free(name);
    } while (take(r, ','));
    return take(r, ']');
}

bool gl_manifest_parse(const char *text, size_t len, gl_names *files)
{
    reader r = {text, text + len};
    gl_names found = {0};
    bool ok = take(&r, '{'), seen = false;
    if (ok && !take(&r, '}')) {
        do {
            char *key = NULL;
            ok = read_string(&r, &key) && take(&r, ':');
            if (ok && strcmp(key, "files") == 0 && !seen)
                ok = seen = read_files(&r, &found);
            else if (ok)
                ok = skip_value(&r, 1);
            free(key);
        } while (ok && take(&r, ','));
        ok = ok && take(&r, '}');
    }
    skip_space(&r);
    ok = ok && seen && r.p == r.end;
    for (size_t i = 0; ok && i < found.n; i++)
        gl_names_add(files, found.items[i]);
    gl_names_free(&found);
    return ok;
}
