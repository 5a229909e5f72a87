/* canvas_paint.c — a window of a canvas on the curses screen (see canvas_paint.h). */
#include "ui/canvas_paint.h"

#include <curses.h>
#include <stdlib.h>
#include <wchar.h>

/* Without UTF-8 the box-drawing characters come from the terminal's alternate character
 * set, arrows and the ellipsis from ASCII. */
static chtype ascii_fallback(uint32_t cp)
{
    if (cp >= ' ' && cp < 127)
        return (chtype)cp;
    switch (cp) {
    case 0x2500: case 0x2501: case 0x2504: return ACS_HLINE;
    case 0x2502: case 0x2503: case 0x2506: return ACS_VLINE;
    case 0x250C: case 0x250F: case 0x256D: return ACS_ULCORNER;
    case 0x2510: case 0x2513: case 0x256E: return ACS_URCORNER;
    case 0x2514: case 0x2517: case 0x2570: return ACS_LLCORNER;
    case 0x2518: case 0x251B: case 0x256F: return ACS_LRCORNER;
    case 0x251C: case 0x2520: return ACS_LTEE;
    case 0x2524: case 0x2528: return ACS_RTEE;
    case 0x252C: case 0x252F: return ACS_TTEE;
    case 0x2534: case 0x2537: return ACS_BTEE;
    case 0x253C: case 0x253F: case 0x2542: return ACS_PLUS;
    case 0x25B2: return '^';
    case 0x25BC: return 'v';
    case 0x25C4: return '<';
    case 0x25BA: return '>';
    case 0x2026: return '~';
    case 0x00B7: return '.';
    case 0x25CF: return '*'; /* ● a node on the compact view's rails */
    case 0x25CB: return 'o'; /* ○ an input, output or constant there */
    default: return '?';
    }
}

/* The attribute of one cell: its style's, the cursor's inside, or bold on the cursor's
 * border. */
static int cell_attr(const gl_canvas *c, int x, int y, const gl_paint_style *s)
{
    const gl_cell *cell = gl_canvas_cell_const(c, x, y);
    if (!cell)
        return s->attr[GL_STYLE_NONE];
    int attr = cell->style < GL_STYLE_COUNT ? s->attr[cell->style] : s->attr[GL_STYLE_NONE];
    if (s->cursor_box >= 0 && cell->box == s->cursor_box)
        attr = (cell->flags & GL_CELL_INSIDE) || cell->ch ? s->cursor_attr : attr | (int)A_BOLD;
    return attr;
}

static void paint_row_wide(const gl_canvas *c, int x0, int y, int row, int left, int width,
                           const gl_paint_style *s, cchar_t *line)
{
    for (int i = 0; i < width; i++) {
        wchar_t text[2] = {(wchar_t)gl_canvas_glyph(c, x0 + i, y, s->cursor_box), 0};
        int attr = cell_attr(c, x0 + i, y, s);
        setcchar(&line[i], text, (attr_t)attr & ~A_COLOR, (short)PAIR_NUMBER(attr), NULL);
    }
    mvadd_wchnstr(row, left, line, width);
}

static void paint_row_ascii(const gl_canvas *c, int x0, int y, int row, int left, int width,
                            const gl_paint_style *s, chtype *line)
{
    for (int i = 0; i < width; i++) {
        /* the cursor's heavy border is bold already (cell_attr) */
        uint32_t cp = gl_canvas_glyph(c, x0 + i, y, s->cursor_box);
        line[i] = ascii_fallback(cp) | (chtype)cell_attr(c, x0 + i, y, s);
    }
    mvaddchnstr(row, left, line, width);
}

void gl_canvas_paint(const gl_canvas *c, int x0, int y0, int top, int left, int height,
                     int width, const gl_paint_style *s)
{
    if (height <= 0 || width <= 0)
        return;
    cchar_t *wide = s->utf8 ? calloc((size_t)width, sizeof(*wide)) : NULL;
    chtype *narrow = s->utf8 ? NULL : calloc((size_t)width, sizeof(*narrow));
    if (!wide && !narrow)
        return;
    for (int r = 0; r < height; r++) {
        if (wide)
            paint_row_wide(c, x0, y0 + r, top + r, left, width, s, wide);
        else
            paint_row_ascii(c, x0, y0 + r, top + r, left, width, s, narrow);
    }
    free(wide);
    free(narrow);
}
