/* json.c — a small streaming JSON writer. */
#include "util/json.h"
#include "util/escape.h"

#include <math.h>
#include <string.h>

void gl_json_init(gl_json *j, FILE *f, bool pretty)
{
    *j = (gl_json){.f = f, .pretty = pretty};
}

/* JSON text is UTF-8: a byte that is not (names are bytes from someone's file) becomes
 * U+FFFD. Controls (C0, DEL, C1) and bidirectional controls are written as \u escapes
 * so that printing the document to a terminal cannot drive it. */
static void write_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    size_t n;
    for (const char *p = s; *p; p += n) {
        uint32_t cp = 0;
        n = gl_utf8_decode(p, &cp);
        if (n == 0) {
            fputs("\\ufffd", f);
            n = 1;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (gl_codepoint_unsafe(cp))
                fprintf(f, "\\u%04x", (unsigned)cp);
            else
                fwrite(p, 1, n, f);
        }
    }
    fputc('"', f);
}

/* Comma, newline/indent and key before a member. */
static void member(gl_json *j, const char *key)
{
    if (j->depth > 0) {
        if (j->has_items[j->depth])
            fputc(',', j->f);
        j->has_items[j->depth] = true;
        if (j->pretty) {
            fputc('\n', j->f);
            for (int i = 0; i < j->depth; i++)
                fputs("  ", j->f);
        }
    }
    if (key) {
        write_escaped(j->f, key);
        fputs(j->pretty ? ": " : ":", j->f);
    }
}

static void open_container(gl_json *j, const char *key, char c)
{
    member(j, key);
    fputc(c, j->f);
    if (j->depth < GL_JSON_MAX_DEPTH - 1)
        j->depth++;
    j->has_items[j->depth] = false;
}

static void close_container(gl_json *j, char c)
{
    bool had = j->has_items[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (j->pretty && had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void gl_json_object_begin(gl_json *j, const char *key) { open_container(j, key, '{'); }
void gl_json_object_end(gl_json *j) { close_container(j, '}'); }
void gl_json_array_begin(gl_json *j, const char *key) { open_container(j, key, '['); }
void gl_json_array_end(gl_json *j) { close_container(j, ']'); }

void gl_json_string(gl_json *j, const char *key, const char *v)
{
    member(j, key);
    if (v)
        write_escaped(j->f, v);
    else
        fputs("null", j->f);
}

void gl_json_int(gl_json *j, const char *key, int64_t v)
{
    member(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void gl_json_double(gl_json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

void gl_json_thousandths(gl_json *j, const char *key, int64_t v)
{
    member(j, key);
    /* printed from integers: a double's %g would round or show 0.30000000000000004 */
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char frac[8];
    snprintf(frac, sizeof(frac), ".%03u", (unsigned)(m % 1000));
    for (size_t n = strlen(frac); n > 1 && frac[n - 1] == '0'; n--)
        frac[n - 1] = '\0';
    fprintf(j->f, "%s%llu%s", v < 0 ? "-" : "", (unsigned long long)(m / 1000),
            frac[1] ? frac : "");
}

void gl_json_bool(gl_json *j, const char *key, bool v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}

void gl_json_null(gl_json *j, const char *key)
{
    member(j, key);
    fputs("null", j->f);
}

void gl_json_finish(gl_json *j) { fputc('\n', j->f); }
