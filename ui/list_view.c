/* list_view.c — what every list view shares: moving the selection (up/down/pages/top/
 * bottom), sideways scroll of long rows (h/L), find (n/N over the rows) and
 * click-to-select. A view supplies its number of rows and, for find, whether a row
 * matches; the graph view, a canvas rather than rows, has its own. */
#include "ui/ui.h"

#include <stdio.h>

int gl_ui_find_row(int n_rows, int from, int dir, bool inclusive,
                   bool (*match)(int row, void *ctx), void *ctx)
{
    if (n_rows <= 0)
        return -1;
    dir = dir < 0 ? -1 : 1;
    if (from < 0 || from >= n_rows)
        from = dir > 0 ? 0 : n_rows - 1;
    int row = inclusive ? from : from + dir;
    for (int i = 0; i < n_rows; i++, row += dir) {
        row = (row % n_rows + n_rows) % n_rows;
        if (match(row, ctx))
            return row;
    }
    return -1;
}

void gl_ui_clamp(gl_view *v, int n_rows, int height)
{
    if (v->selected >= n_rows)
        v->selected = n_rows - 1;
    if (v->selected < 0)
        v->selected = 0;
    if (height < 1)
        height = 1;
    if (v->scroll > v->selected)
        v->scroll = v->selected;
    if (v->selected >= v->scroll + height)
        v->scroll = v->selected - height + 1;
    if (v->scroll > n_rows - height)
        v->scroll = n_rows - height;
    if (v->scroll < 0)
        v->scroll = 0;
}

/* Columns h/L move a list's rows by, and the most they scroll (rows are cut far before:
 * the views format rows into buffers of about 1 KB). */
enum { HSCROLL_STEP = 8, HSCROLL_MAX = 1024 };

unsigned gl_ui_list_move(gl_view *v, gl_request r, int n_rows)
{
    int page = v->height > 1 ? v->height - 1 : 1;
    int half = v->height > 1 ? v->height / 2 : 1;
    int before = v->selected;
    if (r == GL_REQ_PAN_LEFT || r == GL_REQ_PAN_RIGHT) {
        int was = v->hscroll;
        v->hscroll += r == GL_REQ_PAN_LEFT ? -HSCROLL_STEP : HSCROLL_STEP;
        v->hscroll = v->hscroll < 0 ? 0 : v->hscroll > HSCROLL_MAX ? HSCROLL_MAX : v->hscroll;
        return v->hscroll != was ? GL_REDRAW_VIEW : GL_REDRAW_NONE;
    }
    switch (r) {
    case GL_REQ_HALF_DOWN: v->selected += half; v->scroll += half; break;
    case GL_REQ_HALF_UP: v->selected -= half; v->scroll -= half; break;
    case GL_REQ_MOVE_DOWN: v->selected++; break;
    case GL_REQ_MOVE_UP: v->selected--; break;
    case GL_REQ_PAGE_DOWN: v->selected += page; v->scroll += page; break;
    case GL_REQ_PAGE_UP: v->selected -= page; v->scroll -= page; break;
    case GL_REQ_TOP: v->selected = 0; break;
    case GL_REQ_BOTTOM: v->selected = n_rows - 1; break;
    default: return GL_REDRAW_NONE;
    }
    gl_ui_clamp(v, n_rows, v->height);
    return v->selected != before || r == GL_REQ_PAGE_DOWN || r == GL_REQ_PAGE_UP ||
                   r == GL_REQ_HALF_DOWN || r == GL_REQ_HALF_UP
               ? GL_REDRAW_VIEW
               : GL_REDRAW_NONE;
}

bool gl_ui_list_find(gl_view *v, int n_rows, int dir, bool inclusive,
                     bool (*match)(int row, void *ctx), void *ctx)
{
    int row = gl_ui_find_row(n_rows, v->selected, dir, inclusive, match, ctx);
    if (row >= 0) {
        v->selected = row;
        gl_ui_note_match(v, n_rows, row, match, ctx);
    }
    return row >= 0;
}

void gl_ui_note_match(gl_view *v, int n_rows, int row, bool (*match)(int row, void *ctx),
                      void *ctx)
{
    v->match_at = v->match_count = 0;
    for (int r = 0; r < n_rows; r++) {
        if (match(r, ctx)) {
            v->match_count++;
            if (r == row)
                v->match_at = v->match_count;
        }
    }
}

typedef struct text_match {
    const char *(*text)(int row, void *ctx);
    void *ctx;
    const char *pattern;
} text_match;

static bool text_matches(int row, void *ctx)
{
    const text_match *m = ctx;
    return gl_ui_match(m->text(row, m->ctx), m->pattern);
}

bool gl_ui_list_find_text(gl_view *v, int n_rows, const char *pattern, int dir, bool inclusive,
                          const char *(*text)(int row, void *ctx), void *ctx)
{
    text_match m = {text, ctx, pattern};
    return gl_ui_list_find(v, n_rows, dir, inclusive, text_matches, &m);
}

int gl_ui_column_width(int longest, int base, int spare)
{
    int most = base + (spare > 0 ? spare : 0);
    return longest <= base ? base : longest < most ? longest : most;
}

int gl_ui_pan_stop(const int *stops, int n_stops, int at, int dir, int most)
{
    int to = at;
    if (dir > 0) {
        to = most; /* past the last column start: on to where the rows end */
        for (int i = n_stops - 1; i >= 0; i--)
            if (stops[i] > at)
                to = stops[i] < most ? stops[i] : most;
        if (to < at) /* the end of the rows is in sight already */
            to = at;
    } else {
        to = 0;
        for (int i = 0; i < n_stops; i++)
            if (stops[i] < at && stops[i] > to)
                to = stops[i];
    }
    return to;
}

unsigned gl_ui_list_click(gl_view *v, int n_rows, int header_rows, int row)
{
    int r = v->scroll + row - header_rows;
    /* below the rows (a footer, a pane) is not a row */
    if (row < header_rows || row - header_rows >= v->height || r >= n_rows)
        return GL_REDRAW_NONE;
    v->selected = r;
    return GL_REDRAW_VIEW;
}

/* A footer wraps onto at most this many lines, and onto more than one only in a view
 * of FOOTER_WRAP_HEIGHT lines or more: the rows stay the most of the view. */
enum { FOOTER_MAX_LINES = 3, FOOTER_WRAP_HEIGHT = 12 };

/* Columns of the text a wrapped line shows: the rest of the width is its '…'. */
static int footer_step(const gl_ui *ui, int width)
{
    int step = width - (ui->utf8 ? 1 : 3);
    return step > 0 ? step : 1;
}

void gl_ui_footer_make(gl_ui_footer *f, const gl_ui *ui, const gl_view *v, int n_rows,
                       const char *row_text, int height, int width)
{
    if (!row_text || v->selected < 0 || v->selected >= n_rows)
        snprintf(f->text, sizeof(f->text), "(no rows)");
    else
        snprintf(f->text, sizeof(f->text), "%d/%d %s", v->selected + 1, n_rows, row_text);
    int most = height >= FOOTER_WRAP_HEIGHT ? FOOTER_MAX_LINES : 1;
    int rest = gl_ui_text_width(f->text) - width, step = footer_step(ui, width);
    f->lines = 1;
    if (rest > 0 && width > 0)
        f->lines += (rest + step - 1) / step;
    if (f->lines > most)
        f->lines = most;
}

void gl_ui_footer_draw(const gl_ui_footer *f, gl_ui *ui, int top, int left, int height,
                       int width)
{
    int attr = gl_ui_attr(ui, GL_ROLE_HEADER), step = footer_step(ui, width);
    /* each line goes on where the one above ends in '…' (gl_ui_put escapes the names;
     * the last line cuts what is left) */
    for (int line = 0; line < f->lines && line < height; line++)
        gl_ui_put_at(top + height - f->lines + line, left, width, attr, f->text, line * step);
}
