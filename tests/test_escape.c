/* test_escape.c — util/escape.h: what reaches a terminal, and util/json.c's strings. */
#include "util/escape.h"
#include "util/json.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *what, *in, *out; /* out NULL: kept as it is */
} cases[] = {
    {"plain ASCII", "conv_1/Relu:0 (x)", NULL},
    {"the backslash stays", "a\\x1B", NULL},
    {"ESC [2J", "a\x1b[2Jb", "a\\x1B[2Jb"},
    {"BEL, CR, LF, TAB", "\a\r\n\t", "\\x07\\x0D\\x0A\\x09"},
    {"DEL", "x\x7f", "x\\x7F"},
    {"U+202E right-to-left override", "x\xe2\x80\xae" "evil", "x\\u{202E}evil"},
    {"U+200E, U+200F marks", "\xe2\x80\x8e\xe2\x80\x8f", "\\u{200E}\\u{200F}"},
    {"U+202A embedding, U+202C pop", "\xe2\x80\xaa\xe2\x80\xac", "\\u{202A}\\u{202C}"},
    {"U+2066..U+2069 isolates", "\xe2\x81\xa6\xe2\x81\xa9", "\\u{2066}\\u{2069}"},
    {"U+061C Arabic letter mark", "\xd8\x9c", "\\u{61C}"},
    {"C1 control U+009B (CSI)", "\xc2\x9b" "31m", "\\u{9B}31m"},
    {"U+00A0 and after are text", "\xc2\xa0\xc3\xa9", NULL},
    {"U+2028, U+202F and U+2065 are text", "\xe2\x80\xa8\xe2\x80\xaf\xe2\x81\xa5", NULL},
    {"CJK and emoji are text", "\xe4\xb8\xad\xf0\x9f\x98\x80", NULL},
    {"bytes that are not UTF-8", "y_\xff\xfe", "y_\\xFF\\xFE"},
    {"a stray continuation byte", "a\x80z", "a\\x80z"},
    {"an overlong '/'", "\xc0\xaf", "\\xC0\\xAF"},
    {"a surrogate", "\xed\xa0\x80", "\\xED\\xA0\\x80"},
    {"past U+10FFFF", "\xf4\x90\x80\x80", "\\xF4\\x90\\x80\\x80"},
    {"a truncated character at the end", "ok\xe2\x80", "ok\\xE2\\x80"},
};

Test(escape, table)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *want = cases[i].out ? cases[i].out : cases[i].in;
        char buf[256];
        size_t len = gl_escape(buf, sizeof(buf), cases[i].in);
        cr_expect_str_eq(buf, want, "%s", cases[i].what);
        cr_expect_eq(len, strlen(want), "%s: length", cases[i].what);
        cr_expect_eq(gl_escape_needed(cases[i].in), cases[i].out != NULL, "%s: needed",
                     cases[i].what);
        const char *e = gl_esc(cases[i].in);
        cr_expect_str_eq(e, want, "%s: gl_esc", cases[i].what);
        if (!cases[i].out)
            cr_expect_eq(e, cases[i].in, "%s: clean text is not copied", cases[i].what);
    }
    cr_expect_str_eq(gl_esc(NULL), "");
}

Test(escape, cut_only_between_whole_escapes)
{
    char buf[8];
    /* "ab" "\x1B" "cd": the escape does not fit after "ab\x1B"'s 6 bytes + "c" */
    size_t len = gl_escape(buf, sizeof(buf), "ab\x1b" "cdefgh");
    cr_expect_eq(len, 12);
    cr_expect_str_eq(buf, "ab\\x1Bc");
    len = gl_escape(buf, 5, "ab\x1b" "c");
    cr_expect_str_eq(buf, "ab", "no half escape");
    cr_expect_eq(gl_escape(NULL, 0, "\x1b"), 4, "the length without a buffer");
    char e[3] = "zz";
    cr_expect_eq(gl_escape(e, 3, "\xe4\xb8\xad"), 3);
    cr_expect_str_eq(e, "", "no half character");
}

Test(escape, esc_buffers_rotate_and_long_text_is_marked)
{
    const char *seen[8];
    char in[8][8];
    for (int i = 0; i < 8; i++) {
        snprintf(in[i], sizeof(in[i]), "%d\x07", i);
        seen[i] = gl_esc(in[i]);
    }
    for (int i = 0; i < 8; i++) {
        char want[16];
        snprintf(want, sizeof(want), "%d\\x07", i);
        cr_expect_str_eq(seen[i], want, "8 results live at once");
    }
    char *big = malloc(5000);
    memset(big, '\x01', 4999);
    big[4999] = '\0';
    const char *e = gl_esc(big);
    size_t len = strlen(e);
    cr_expect_lt(len, 1024);
    cr_expect_str_eq(e + len - 3, "...");
    cr_expect_str_eq(e + len - 7, "\\x01...", "cut after a whole escape");
    free(big);
}

Test(escape, characters_one_at_a_time)
{
    char out[GL_ESCAPE_CHAR_MAX];
    size_t n;
    cr_expect_eq(gl_escape_char("\xe2\x80\xae!", out, &n), 8);
    cr_expect_eq(n, 3);
    cr_expect_str_eq(out, "\\u{202E}");
    cr_expect_eq(gl_escape_char("\xc3\xa9", out, &n), 0);
    cr_expect_eq(n, 2);
    cr_expect_eq(gl_escape_char("\xf4\x8f\xbf\xbf", out, &n), 0, "U+10FFFF is a character");
    cr_expect_eq(n, 4);
    cr_expect(gl_codepoint_unsafe(0x9F) && !gl_codepoint_unsafe(0xA0));
    uint32_t cp = 0;
    cr_expect_eq(gl_utf8_decode("\xe2\x80", &cp), 0, "stops at the NUL");
}

/* JSON strings: valid UTF-8 whatever the name's bytes, no raw control or bidi control. */
Test(escape, json_strings)
{
    static const struct {
        const char *in, *out;
    } js[] = {
        {"a\x1b[2J", "\"a\\u001b[2J\""},
        {"q\"\\\n\r\t", "\"q\\\"\\\\\\n\\r\\t\""},
        {"x\xe2\x80\xae", "\"x\\u202e\""},
        {"\xc2\x9b\x7f", "\"\\u009b\\u007f\""},
        {"y_\xff\xfe", "\"y_\\ufffd\\ufffd\""},
        {"\xc3\xa9\xe4\xb8\xad", "\"\xc3\xa9\xe4\xb8\xad\""},
    };
    for (size_t i = 0; i < sizeof(js) / sizeof(js[0]); i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gl_json j;
        gl_json_init(&j, f, false);
        gl_json_string(&j, NULL, js[i].in);
        fclose(f);
        cr_expect_str_eq(buf, js[i].out, "case %zu", i);
        free(buf);
    }
}
