/* test_manifest.c — util/manifest.h: what a folder's manifest gives back, forged or
 * damaged ones included (a name read back is a file the next export may remove); and the
 * owned folders of util/safe_write.h that keep one. */
#include "util/manifest.h"
#include "util/safe_write.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- owned folders (util/safe_write.h) ------------------------------------------------ */

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void put(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    cr_assert_eq(gl_write_file(p, name, strlen(name)), GL_OK, "%s", gl_error_message());
    free(p);
}

static bool there(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    bool yes = access(p, F_OK) == 0;
    free(p);
    return yes;
}

/* The names the folder's manifest lists, '|'-joined. */
static char *listed(const char *dir)
{
    char *p = path_in(dir, "m.json");
    FILE *f = fopen(p, "rb");
    free(p);
    cr_assert(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof(text), f);
    fclose(f);
    gl_names names = {0};
    cr_assert(gl_manifest_parse(text, len, &names));
    char *out = joined(&names);
    gl_names_free(&names);
    return out;
}

/* One owned write of `names` into dir (replacing, or adding). */
static void write_owned(const char *dir, const char *const *names, bool add)
{
    const gl_dir_owner owner = {"m.json", "test", "model.onnx", add};
    gl_temp_dir d;
    cr_assert_eq(gl_temp_dir_open_owned(&d, dir, &owner), GL_OK, "%s", gl_error_message());
    for (; *names; names++)
        put(d.path, *names);
    cr_assert_eq(gl_temp_dir_commit(&d), GL_OK, "%s", gl_error_message());
}

Test(owned_folder, replace_add_and_the_lock)
{
    char root[] = "/tmp/gl-owned.XXXXXX";
    cr_assert(mkdtemp(root));
    char *dir = path_in(root, "out");

    /* a new folder that appears before the commit (another writer made it): the files
     * are moved in, the other writer's file is not listed */
    const gl_dir_owner owner = {"m.json", "test", "model.onnx", false};
    gl_temp_dir d;
    cr_assert_eq(gl_temp_dir_open_owned(&d, dir, &owner), GL_OK, "%s", gl_error_message());
    put(d.path, "a");
    cr_assert_eq(mkdir(dir, 0777), 0);
    put(dir, "theirs");
    cr_assert_eq(gl_temp_dir_commit(&d), GL_OK, "%s", gl_error_message());
    char *got = listed(dir);
    cr_expect_str_eq(got, "a");
    free(got);
    cr_expect(there(dir, "a") && there(dir, "theirs"));

    write_owned(dir, (const char *const[]){"b", NULL}, false);
    cr_expect(!there(dir, "a"), "replacing: the listed file not written again is removed");
    cr_expect(there(dir, "b") && there(dir, "theirs"), "the unlisted file is kept");
    got = listed(dir);
    cr_expect_str_eq(got, "b");
    free(got);

    write_owned(dir, (const char *const[]){"c", NULL}, true);
    cr_expect(there(dir, "b") && there(dir, "c"), "adding keeps what was listed");
    got = listed(dir);
    cr_expect_str_eq(got, "b|c");
    free(got);

    /* the lock: a second writer (another open file description) is refused while the
     * first holds it, with our PID in the message */
    cr_assert_eq(gl_temp_dir_open_owned(&d, dir, &owner), GL_OK, "%s", gl_error_message());
    gl_temp_dir second;
    cr_expect_eq(gl_temp_dir_open_owned(&second, dir, &owner), GL_ERR_IO);
    char pid[32];
    snprintf(pid, sizeof(pid), "process %ld", (long)getpid());
    cr_expect(strstr(gl_error_message(), pid), "%s", gl_error_message());
    gl_temp_dir_abort(&d);
    cr_expect(!there(dir, ".graphlab.lock"), "the lock file goes with the abort");
    cr_expect_eq(gl_temp_dir_open_owned(&second, dir, &owner), GL_OK, "free again: %s",
                 gl_error_message());
    gl_temp_dir_abort(&second);

    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
    free(dir);
}
