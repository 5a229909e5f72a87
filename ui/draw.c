/* draw.c — the drawing library every view calls: colour roles, text clipped and escaped
 * to a width, blank fills, and the pipeline bar painted from bar.c's text. Main thread,
 * inside draw functions only; app.c owns the terminal these draw on. */
#include "ui/ui.h"

#include "util/escape.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- colour roles ------------------------------------------------------------------- */

static int role_attr[GL_ROLE_COUNT];
static bool utf8_terminal; /* gl_ui_put draws UTF-8 as is (else non-ASCII as '?') */

/* Colours where the terminal has them and NO_COLOR is not set; otherwise attributes
 * alone (the marks + ~ > - are in the text too, never colour alone). */
static void setup_roles(gl_ui *ui)
{
    static const struct {
        gl_ui_role role;
        short fg, bg;
        int extra, mono;
    } table[] = {
        {GL_ROLE_NORMAL, -1, -1, A_NORMAL, A_NORMAL},
        {GL_ROLE_BAR, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_REVERSE},
        {GL_ROLE_BAR_CURRENT, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_BOLD},
        {GL_ROLE_SELECTED, -1, -1, A_REVERSE, A_REVERSE},
        {GL_ROLE_HEADER, COLOR_CYAN, -1, A_BOLD, A_BOLD},
        {GL_ROLE_ADDED, COLOR_GREEN, -1, A_NORMAL, A_BOLD},
        {GL_ROLE_REMOVED, COLOR_RED, -1, A_NORMAL, A_DIM},
        {GL_ROLE_CHANGED, COLOR_YELLOW, -1, A_NORMAL, A_BOLD},
        {GL_ROLE_DIM, -1, -1, A_DIM, A_DIM},
        {GL_ROLE_STATUS, -1, -1, A_NORMAL, A_NORMAL},
        {GL_ROLE_ERROR, COLOR_RED, -1, A_BOLD, A_BOLD},
        {GL_ROLE_LINK, COLOR_CYAN, -1, A_NORMAL, A_UNDERLINE},
    };
    _Static_assert(GL_ARRAY_LEN(table) == GL_ROLE_COUNT, "one entry per role");
    const char *no_color = getenv("NO_COLOR");
    ui->color = has_colors() && !(no_color && *no_color);
    if (ui->color) {
        start_color();
        use_default_colors();
    }
    for (size_t i = 0; i < GL_ARRAY_LEN(table); i++) {
        int attr = table[i].mono;
        if (ui->color) {
            attr = table[i].extra;
            if (table[i].fg >= 0 || table[i].bg >= 0) {
                init_pair((short)(i + 1), table[i].fg, table[i].bg);
                attr |= (int)COLOR_PAIR(i + 1);
            }
        }
        role_attr[table[i].role] = attr;
    }
}

void gl_ui_draw_setup(gl_ui *ui)
{
    setup_roles(ui);
    utf8_terminal = ui->utf8;
}

int gl_ui_attr(const gl_ui *ui, gl_ui_role role)
{
    return role < GL_ROLE_COUNT ? role_attr[role] : (int)A_NORMAL;
}

/* ---- text --------------------------------------------------------------------------- */

/* Columns as gl_ui_put draws s: an escaped character takes its escape's width. */
int gl_ui_text_width(const char *s)
{
    int w = 0;
    char esc[GL_ESCAPE_CHAR_MAX];
    size_t n;
    for (; s && *s; s += n) {
        size_t elen = gl_escape_char(s, esc, &n);
        w += elen ? (int)elen : 1;
    }
    return w;
}

/* Length of the UTF-8 sequence at s (0: invalid). */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
                                : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Names are drawn as the command line prints them (util/escape.h): controls, bidi
 * controls and invalid bytes as their escapes, which cannot move the cursor, clear the
 * screen or reorder the row. Without a UTF-8 terminal other non-ASCII shows as '?'. */
int gl_ui_clip(const char *text, int skip, int width, bool utf8, char *buf, size_t len)
{
    const char *mark = utf8 ? "\xE2\x80\xA6" : "...";
    int mark_w = utf8 ? 1 : 3;
    size_t used = 0, cut_at = 0;
    int cols = 0, seen = 0;
    bool more = false, full = false;
    size_t n;
    if (len)
        buf[0] = '\0';
    if (width <= 0 || len == 0)
        return 0;
    for (const char *p = text; p && *p && !more && !full; p += n) {
        char esc[GL_ESCAPE_CHAR_MAX];
        size_t elen = gl_escape_char(p, esc, &n);
        /* the cells this character takes: its escape's bytes, '?', or itself */
        const char *cell = elen ? esc : n > 1 && !utf8 ? "?" : p;
        size_t cells = elen ? elen : 1, cell_bytes = elen || (n > 1 && !utf8) ? 1 : n;
        for (size_t c = 0; c < cells; c++) {
            if (seen < skip) {
                seen++;
                continue;
            }
            if (cols == width) {
                more = true;
                break;
            }
            if (used + cell_bytes >= len) {
                full = true;
                break;
            }
            if (cols == width - mark_w)
                cut_at = used;
            memcpy(buf + used, elen ? cell + c : cell, cell_bytes);
            used += cell_bytes;
            cols++;
        }
    }
    if (more && width >= mark_w && cut_at + strlen(mark) < len) {
        used = cut_at;
        memcpy(buf + used, mark, strlen(mark));
        used += strlen(mark);
        cols = width;
    }
    buf[used] = '\0';
    return cols;
}

int gl_ui_put_at(int y, int x, int width, int attr, const char *text, int skip)
{
    char buf[2048];
    int cols = gl_ui_clip(text, skip, width, utf8_terminal, buf, sizeof(buf));
    if (width <= 0)
        return 0;
    attrset(attr);
    mvaddnstr(y, x, buf, (int)strlen(buf));
    attrset(A_NORMAL);
    return cols;
}

int gl_ui_put(int y, int x, int width, int attr, const char *text)
{
    return gl_ui_put_at(y, x, width, attr, text, 0);
}

void gl_ui_fill(int y, int x, int width, int attr)
{
    if (width <= 0)
        return;
    attrset(attr);
    mvhline(y, x, ' ', width);
    attrset(A_NORMAL);
}

/* ---- the pipeline bar ---------------------------------------------------------------- */

int gl_ui_bar_branch_cols(const gl_ui *ui, int width, char *buf, size_t len)
{
    int w = gl_bar_branch(ui, ui->utf8, buf, len);
    return w > width / 2 ? width / 2 : w;
}

void gl_ui_draw_bar(gl_ui *ui, int width)
{
    gl_ui_fill(0, 0, width, gl_ui_attr(ui, GL_ROLE_BAR));
    gl_bar_item *items;
    size_t n = gl_bar_items(ui, &items);
    if (n == 0) {
        gl_ui_put(0, 0, width, gl_ui_attr(ui, GL_ROLE_BAR), "graphlab");
        return;
    }
    char branch[256];
    int x0 = gl_ui_bar_branch_cols(ui, width, branch, sizeof(branch));
    if (x0)
        gl_ui_put(0, 0, x0, gl_ui_attr(ui, GL_ROLE_HEADER), branch);
    char buf[4096];
    int cur_col, cur_len;
    gl_bar_format(items, n, width - x0, ui->utf8, buf, sizeof(buf), &cur_col, &cur_len);
    gl_ui_put(0, x0, width - x0, gl_ui_attr(ui, GL_ROLE_BAR), buf);
    /* repaint the current item over itself in its own attribute */
    const char *p = buf;
    for (int c = 0; c < cur_col && *p; c++)
        p += utf8_len((const unsigned char *)p) ? utf8_len((const unsigned char *)p) : 1;
    char cur[256];
    int bytes = 0;
    for (int c = 0; c < cur_len && p[bytes]; c++) {
        int l = utf8_len((const unsigned char *)p + bytes);
        bytes += l ? l : 1;
    }
    snprintf(cur, sizeof(cur), "%.*s", bytes, p);
    gl_ui_put(0, x0 + cur_col, cur_len, gl_ui_attr(ui, GL_ROLE_BAR_CURRENT), cur);
    free(items);
}
