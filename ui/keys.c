/* keys.c — the key table generated from keys.def: key names to curses codes, codes to
 * requests, and the help screen (a view) written from the same list. */
#include "ui/ui.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct request_entry {
    const char *id;   /* "STEP_NEXT" */
    const char *keys; /* "Right ]" */
    const char *help;
} request_entry;

static const request_entry requests[] = {
#define GL_REQ(id, key_names, help) {#id, key_names, help},
#include "ui/keys.def"
#undef GL_REQ
};
_Static_assert(GL_ARRAY_LEN(requests) == GL_REQ_COUNT, "one entry per request");

/* Key names longer than one character; `shown` is how the help screen writes them on
 * a UTF-8 terminal (NULL: the name itself). */
typedef struct named_key {
    const char *name;
    int code;
    const char *shown;
} named_key;

#define KEY_ESCAPE 27

static const named_key named_keys[] = {
    {"Right", KEY_RIGHT, "→"}, {"Left", KEY_LEFT, "←"},  {"Up", KEY_UP, "↑"},
    {"Down", KEY_DOWN, "↓"},   {"PgDn", KEY_NPAGE, NULL}, {"PgUp", KEY_PPAGE, NULL},
    {"Home", KEY_HOME, NULL},  {"End", KEY_END, NULL},    {"Enter", '\n', NULL},
    {"Esc", KEY_ESCAPE, NULL}, {"Tab", '\t', NULL},       {"Space", ' ', NULL},
};

int gl_key_parse(const char *name)
{
    if (!name || !*name)
        return -1;
    for (size_t i = 0; i < GL_ARRAY_LEN(named_keys); i++)
        if (strcmp(name, named_keys[i].name) == 0)
            return named_keys[i].code;
    if (name[0] == 'C' && name[1] == '-' && name[2] >= 'a' && name[2] <= 'z' && !name[3])
        return name[2] & 0x1f;
    if (!name[1] && (unsigned char)name[0] > ' ' && (unsigned char)name[0] < 127)
        return (unsigned char)name[0];
    return -1;
}

/* ---- bindings ----------------------------------------------------------------------- */

typedef struct binding {
    int key;
    gl_request request;
} binding;

enum { MAX_BINDINGS = 96, MAX_KEY_NAME = 16 };

static binding bindings[MAX_BINDINGS];
static size_t n_bindings;

/* Each space-separated name of `keys` in turn: returns the next position, or NULL. */
static const char *next_name(const char *p, char *name)
{
    while (*p == ' ')
        p++;
    if (!*p)
        return NULL;
    size_t n = 0;
    while (p[n] && p[n] != ' ')
        n++;
    size_t keep = n < MAX_KEY_NAME - 1 ? n : MAX_KEY_NAME - 1;
    memcpy(name, p, keep);
    name[keep] = '\0';
    return p + n;
}

/* Built on first use from the table; names that do not parse are skipped here and
 * caught by the tests (test_ui: every name of keys.def parses). */
static void build_bindings(void)
{
    if (n_bindings)
        return;
    char name[MAX_KEY_NAME];
    for (size_t r = 0; r < GL_REQ_COUNT; r++) {
        for (const char *p = requests[r].keys; (p = next_name(p, name)) != NULL;) {
            int code = gl_key_parse(name);
            if (code >= 0 && n_bindings < MAX_BINDINGS)
                bindings[n_bindings++] = (binding){code, (gl_request)r};
        }
    }
}

/* Terminals send Enter as CR, LF or KEY_ENTER, Backspace as several codes. */
static int normalise(int key)
{
    if (key == '\r' || key == KEY_ENTER)
        return '\n';
    return key;
}

gl_request gl_key_request(int key)
{
    build_bindings();
    key = normalise(key);
    for (size_t i = 0; i < n_bindings; i++)
        if (bindings[i].key == key)
            return bindings[i].request;
    return GL_REQ_COUNT;
}

const char *gl_request_keys(gl_request r) { return r < GL_REQ_COUNT ? requests[r].keys : ""; }
const char *gl_request_help(gl_request r) { return r < GL_REQ_COUNT ? requests[r].help : ""; }

/* ---- the help text ---------------------------------------------------------------- */

static const char *shown_name(const char *name, bool utf8)
{
    for (size_t i = 0; utf8 && i < GL_ARRAY_LEN(named_keys); i++)
        if (strcmp(name, named_keys[i].name) == 0 && named_keys[i].shown)
            return named_keys[i].shown;
    return name;
}

/* The key column of one request: names as shown, a run of three or more consecutive
 * one-character keys written as a range ("0-9"). */
static void key_column(const char *keys, bool utf8, char *out, size_t len)
{
    char names[MAX_BINDINGS][MAX_KEY_NAME];
    size_t n = 0;
    for (const char *p = keys; n < MAX_BINDINGS && (p = next_name(p, names[n])) != NULL;)
        n++;
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j + 1 < n && !names[j][1] && !names[j + 1][1] && names[j + 1][0] == names[j][0] + 1)
            j++;
        const char *sep = used ? " " : "";
        int w;
        if (j >= i + 2) {
            w = snprintf(out + used, len - used, "%s%s-%s", sep, names[i], names[j]);
            i = j;
        } else {
            w = snprintf(out + used, len - used, "%s%s", sep, shown_name(names[i], utf8));
        }
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
}

void gl_request_key_column(gl_request r, bool utf8, char *out, size_t len)
{
    if (r < GL_REQ_COUNT)
        key_column(requests[r].keys, utf8, out, len);
    else if (len)
        out[0] = '\0';
}

size_t gl_keys_help_lines(char ***lines, bool utf8)
{
    char cols[GL_REQ_COUNT][64];
    int width = 0;
    for (size_t r = 0; r < GL_REQ_COUNT; r++) {
        key_column(requests[r].keys, utf8, cols[r], sizeof(cols[r]));
        int w = gl_ui_text_width(cols[r]);
        width = w > width ? w : width;
    }
    *lines = gl_xcalloc(GL_REQ_COUNT, sizeof(char *));
    for (size_t r = 0; r < GL_REQ_COUNT; r++) {
        /* Pad by columns, not bytes: the arrows are three bytes wide in UTF-8. */
        int pad = width - gl_ui_text_width(cols[r]) + 2;
        size_t n = strlen(cols[r]) + (size_t)pad + strlen(requests[r].help) + 3;
        (*lines)[r] = gl_xmalloc(n);
        snprintf((*lines)[r], n, "  %s%*s%s", cols[r], pad, "", requests[r].help);
    }
    return GL_REQ_COUNT;
}

typedef struct mark_entry {
    const char *where, *utf8, *ascii, *meaning;
} mark_entry;

static const mark_entry marks[] = {
#define GL_MARK(where, utf8, ascii, meaning) {where, utf8, ascii, meaning},
#include "ui/marks.def"
#undef GL_MARK
};

size_t gl_marks_help_lines(char ***lines, bool utf8)
{
    int where_w = 0, mark_w = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(marks); i++) {
        int w = gl_ui_text_width(marks[i].where);
        int m = gl_ui_text_width(utf8 ? marks[i].utf8 : marks[i].ascii);
        where_w = w > where_w ? w : where_w;
        mark_w = m > mark_w ? m : mark_w;
    }
    *lines = gl_xcalloc(GL_ARRAY_LEN(marks), sizeof(char *));
    for (size_t i = 0; i < GL_ARRAY_LEN(marks); i++) {
        const char *mark = utf8 ? marks[i].utf8 : marks[i].ascii;
        /* pad by columns: the UTF-8 marks are several bytes wide */
        int pad_where = where_w - gl_ui_text_width(marks[i].where) + 2;
        int pad_mark = mark_w - gl_ui_text_width(mark) + 2;
        size_t n = strlen(marks[i].where) + strlen(mark) + strlen(marks[i].meaning) +
                   (size_t)(pad_where + pad_mark) + 3;
        (*lines)[i] = gl_xmalloc(n);
        snprintf((*lines)[i], n, "  %s%*s%s%*s%s", marks[i].where, pad_where, "", mark,
                 pad_mark, "", marks[i].meaning);
    }
    return GL_ARRAY_LEN(marks);
}

void gl_free_lines(char **lines, size_t n)
{
    for (size_t i = 0; lines && i < n; i++)
        free(lines[i]);
    free(lines);
}

/* ---- the help view ------------------------------------------------------------------ */

static const char *const help_footer[] = {
    "",
    "  / in nodes and graph: all words hold (Conv group=32); perm= finds any perm;",
    "  [N,?,768]: ? any dim, N a symbolic one; other views match text; n/N: 3 of 17.",
    "  In the '/' prompt: type to search as you go, Enter keeps it, Esc goes back,",
    "  Backspace and C-u edit. A mouse click selects a row; a click on the bar a step;",
    "  the wheel moves three rows (where the terminal reports it).",
    "  Stepping keeps the selection on the same node, or on what replaced it.",
    "  Long work runs in the background: C-c stops waiting for it (its result is",
    "  dropped); q quits at once.",
};

const char *const *gl_keys_help_notes(size_t *n)
{
    *n = GL_ARRAY_LEN(help_footer);
    return help_footer;
}

typedef struct help_state {
    char **lines;
    size_t n;
} help_state;

static void help_open(gl_ui *ui, gl_view *v)
{
    if (v->state)
        return;
    help_state *s = gl_xcalloc(1, sizeof(*s));
    char **keys, **marks_lines;
    size_t n_keys = gl_keys_help_lines(&keys, ui->utf8);
    size_t n_marks = gl_marks_help_lines(&marks_lines, ui->utf8);
    s->n = 1 + n_keys + 2 + n_marks + GL_ARRAY_LEN(help_footer);
    s->lines = gl_xcalloc(s->n, sizeof(char *));
    size_t at = 0;
    s->lines[at++] = gl_xstrdup("graphlab keys (Esc goes back)");
    for (size_t i = 0; i < n_keys; i++)
        s->lines[at++] = keys[i];
    s->lines[at++] = gl_xstrdup("");
    s->lines[at++] = gl_xstrdup("marks the views draw");
    for (size_t i = 0; i < n_marks; i++)
        s->lines[at++] = marks_lines[i];
    free(keys);
    free(marks_lines);
    for (size_t i = 0; i < GL_ARRAY_LEN(help_footer); i++)
        s->lines[at++] = gl_xstrdup(help_footer[i]);
    v->state = s;
}

static void help_draw(gl_ui *ui, gl_view *v, int top, int left, int height, int width)
{
    help_state *s = v->state;
    if (!s)
        return;
    v->height = height;
    gl_ui_clamp(v, (int)s->n, height);
    for (int row = 0; row < height && v->scroll + row < (int)s->n; row++) {
        int i = v->scroll + row;
        bool heading = s->lines[i][0] && s->lines[i][0] != ' ';
        int attr = i == v->selected ? gl_ui_attr(ui, GL_ROLE_SELECTED)
                   : heading        ? gl_ui_attr(ui, GL_ROLE_HEADER)
                                    : gl_ui_attr(ui, GL_ROLE_NORMAL);
        int w = gl_ui_put_at(top + row, left, width, attr, s->lines[i], v->hscroll);
        gl_ui_fill(top + row, left + w, width - w, attr);
    }
}

static unsigned help_request(gl_ui *ui, gl_view *v, gl_request r)
{
    help_state *s = v->state;
    return s ? gl_ui_list_move(v, r, (int)s->n) : GL_REDRAW_NONE;
}

static const char *help_line(int row, void *ctx)
{
    const help_state *s = ctx;
    return s->lines[row];
}

static bool help_find(gl_ui *ui, gl_view *v, int dir, bool inclusive)
{
    help_state *s = v->state;
    return s && gl_ui_list_find_text(v, (int)s->n, ui->search, dir, inclusive, help_line, s);
}

static unsigned help_click(gl_ui *ui, gl_view *v, int row, int col)
{
    help_state *s = v->state;
    return s ? gl_ui_list_click(v, (int)s->n, 0, row) : GL_REDRAW_NONE;
}

static void help_close(gl_ui *ui, gl_view *v)
{
    help_state *s = v->state;
    if (s)
        gl_free_lines(s->lines, s->n);
    free(s);
    v->state = NULL;
}

const gl_view_ops gl_view_help_ops = {
    .name = "help",
    .open = help_open,
    .draw = help_draw,
    .request = help_request,
    .close = help_close,
    .find = help_find,
    .click = help_click,
};
