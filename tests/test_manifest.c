/* test_manifest.c — util/manifest.h: what a folder's manifest gives back, forged or
 * damaged ones included (a name read back is a file the next export may remove). */
#include "util/manifest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names, sorted, joined by '|'. */
static char *joined(gl_names *s)
{
    gl_names_sort(s);
    size_t len = 1;
    for (size_t i = 0; i < s->n; i++)
        len += strlen(s->items[i]) + 1;
    char *out = calloc(1, len);
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            strcat(out, "|");
        strcat(out, s->items[i]);
    }
    return out;
}

#define DEEP "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"

static const struct {
    const char *what, *text;
    bool ok;
    const char *names; /* read back, sorted, '|'-joined */
} cases[] = {
    {"two names", "{\"files\": [\"a\", \"b\"]}", true, "a|b"},
    {"no names", "{\"files\": []}", true, ""},
    {"other members around, nested", "{\"format\": 1, \"x\": {\"y\": [1, -2.5e3, {\"z\": null}]}, "
     "\"files\": [\"a\"], \"t\": true, \"s\": \"}\"}", true, "a"},
    {"escapes decoded", "{\"files\": [\"q\\\"uote\", \"back\\\\slash\", \"nl\\n\", \"\\u00e9\", "
     "\"\\ud83d\\ude00\"]}", true, "back\\slash|nl\n|q\"uote|\xc3\xa9|\xf0\x9f\x98\x80"},
    {"names that leave the folder or are ours dropped",
     "{\"files\": [\"\", \".\", \"..\", \"a/b\", \"../x\", \"/abs\", \"\\/slash\", "
     "\".graphlab.lock\", \".graphlab-export.json\", \".graphlab.tmp.abc\", \".hidden\"]}",
     true, ".hidden"},
    {"bytes that are not UTF-8 kept as they are", "{\"files\": [\"\xff" "x\"]}", true, "\xff" "x"},
    {"the first files member counts", "{\"files\": [\"a\"], \"files\": [\"b\"]}", true, "a"},
    {"\\u0000 refuses the manifest", "{\"files\": [\"a\", \"x\\u0000y\"]}", false, ""},
    {"a lone low surrogate", "{\"files\": [\"a\", \"\\udc00\"]}", false, ""},
    {"a high surrogate alone", "{\"files\": [\"a\", \"\\ud800x\"]}", false, ""},
    {"a bad escape", "{\"files\": [\"a\\q\"]}", false, ""},
    {"a raw tab in a string", "{\"files\": [\"a\tb\"]}", false, ""},
    {"cut short", "{\"files\": [\"a\", ", false, ""},
    {"an unterminated string", "{\"files\": [\"a", false, ""},
    {"not an object", "[\"a\"]", false, ""},
    {"no files member", "{\"format\": 1}", false, ""},
    {"files not an array", "{\"files\": \"a\"}", false, ""},
    {"a number among the files", "{\"files\": [\"a\", 1]}", false, ""},
    {"something after the object", "{\"files\": [\"a\"]} x", false, ""},
    {"nesting deeper than a manifest's", "{\"x\": " DEEP ", \"files\": [\"a\"]}", false, ""},
    {"empty", "", false, ""},
};

Test(manifest, parse_table)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gl_names got = {0};
        bool ok = gl_manifest_parse(cases[i].text, strlen(cases[i].text), &got);
        char *names = joined(&got);
        cr_expect_eq(ok, cases[i].ok, "%s: parsed %d, expected %d", cases[i].what, ok,
                     cases[i].ok);
        cr_expect_str_eq(names, cases[i].names, "%s", cases[i].what);
        free(names);
        gl_names_free(&got);
    }
}

/* What the writer lists reads back byte for byte; what would not (not UTF-8) or may not
 * be listed is left out. */
Test(manifest, write_reads_back)
{
    static const char *const in[] = {
        "00-input.svg", "q\"uote", "back\\slash", "nl\nname", "\xe2\x80\xae" "bidi",
        "\x1b[31mred", "\xff" "not-utf8", "a/b", ".graphlab.lock"};
    gl_names files = {0}, back = {0};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
        gl_names_add(&files, in[i]);
    gl_names_sort(&files);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    gl_manifest_write(f, &(gl_manifest_about){"graphlab test", "m \"x\".onnx"}, &files);
    fclose(f);
    cr_assert(gl_manifest_parse(text, len, &back), "%s", text);
    char *names = joined(&back);
    cr_expect_str_eq(names, "\x1b[31mred|00-input.svg|back\\slash|nl\nname|q\"uote|"
                            "\xe2\x80\xae" "bidi", "%s", text);
    free(names);
    free(text);
    gl_names_free(&files);
    gl_names_free(&back);
}

Test(manifest, names_set)
{
    gl_names s = {0};
    gl_names_add(&s, "b");
    gl_names_add(&s, "a");
    gl_names_add(&s, "b");
    gl_names_sort(&s);
    cr_expect_eq(s.n, 2, "each name once");
    cr_expect(gl_names_has(&s, "a") && gl_names_has(&s, "b") && !gl_names_has(&s, "c"));
    gl_names_free(&s);
    cr_expect(!gl_names_has(&s, "a"), "an empty set has nothing");
}
