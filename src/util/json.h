/* json.h — a small streaming JSON writer (commas, nesting and escaping handled here). */
#ifndef GL_JSON_H
#define GL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GL_JSON_MAX_DEPTH 64

typedef struct gl_json {
    FILE *f;
    int depth;
    bool has_items[GL_JSON_MAX_DEPTH]; /* the open container already has a member */
    bool pretty;
} gl_json;

void gl_json_init(gl_json *j, FILE *f, bool pretty);
/* `key` names the member inside an object; pass NULL inside arrays and at the top. */
void gl_json_object_begin(gl_json *j, const char *key);
void gl_json_object_end(gl_json *j);
void gl_json_array_begin(gl_json *j, const char *key);
void gl_json_array_end(gl_json *j);
void gl_json_string(gl_json *j, const char *key, const char *v); /* NULL -> null */
void gl_json_int(gl_json *j, const char *key, int64_t v);
void gl_json_double(gl_json *j, const char *key, double v);   /* nan/inf -> null */
/* v / 1000, exactly: digits, then up to 3 decimals (1500 -> 1.5, 7 -> 0.007, 2000 -> 2). */
void gl_json_thousandths(gl_json *j, const char *key, int64_t v);
void gl_json_bool(gl_json *j, const char *key, bool v);
void gl_json_null(gl_json *j, const char *key);
/* Ends the document with a newline. */
void gl_json_finish(gl_json *j);

#endif
