/* canvas.c — the character grid of the graph view (see canvas.h). */
#include "ui/canvas.h"
#include "util/escape.h"

#include <stdlib.h>
#include <string.h>

#define LINE_MASK (GL_LINE_UP | GL_LINE_DOWN | GL_LINE_LEFT | GL_LINE_RIGHT)
#define ELLIPSIS 0x2026u
#define REPLACEMENT 0xFFFDu

gl_canvas *gl_canvas_new(int width, int height)
{
    if (width <= 0 || height <= 0 || (long)width * height > GL_CANVAS_MAX_CELLS)
        return NULL;
    gl_canvas *c = calloc(1, sizeof(*c));
    gl_cell *cells = calloc((size_t)width * (size_t)height, sizeof(*cells));
    if (!c || !cells) {
        free(c);
        free(cells);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)width * (size_t)height; i++)
        cells[i].box = -1;
    *c = (gl_canvas){width, height, cells};
    return c;
}

void gl_canvas_free(gl_canvas *c)
{
    if (!c)
        return;
    free(c->cells);
    free(c);
}

gl_cell *gl_canvas_cell(gl_canvas *c, int x, int y)
{
    if (!c || x < 0 || y < 0 || x >= c->width || y >= c->height)
        return NULL;
    return &c->cells[(size_t)y * (size_t)c->width + (size_t)x];
}

const gl_cell *gl_canvas_cell_const(const gl_canvas *c, int x, int y)
{
    return gl_canvas_cell((gl_canvas *)c, x, y);
}

/* ---- text ---- */

/* Decode one code point at *s (advancing it). A malformed sequence gives one U+FFFD for
 * its lead byte and the continuation bytes that did follow (a truncated character is one
 * replacement, not several); overlong forms and surrogates give U+FFFD for their lead
 * byte alone. Never reads past a NUL. */
static uint32_t utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    unsigned len = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : p[0] >= 0xE0 && p[0] < 0xF0 ? 3
                                 : p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : 0;
    if (len == 0) {
        (*s)++;
        return REPLACEMENT;
    }
    uint32_t cp = len == 1 ? p[0] : p[0] & (0x7Fu >> len);
    for (unsigned i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *s += i;
            return REPLACEMENT;
        }
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    static const uint32_t min_of_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_of_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        (*s)++;
        return REPLACEMENT;
    }
    *s += len;
    return cp;
}

/* Code points a terminal draws wider or narrower than one column (East Asian wide and
 * fullwidth blocks, emoji, combining marks): approximate, and on the safe side. */
static const struct { uint32_t lo, hi; } not_one_column[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
    {0x064B, 0x065F}, {0x1100, 0x115F}, {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF},
    {0x200B, 0x200F}, {0x20D0, 0x20FF}, {0x2E80, 0x303E}, {0x3041, 0x33FF},
    {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3},
    {0xF900, 0xFAFF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE6F}, {0xFF00, 0xFF60},
    {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
};

static uint32_t one_column(uint32_t cp)
{
    if (gl_codepoint_unsafe(cp)) /* a box has no room for the escape */
        return '?';
    for (size_t i = 0; i < sizeof(not_one_column) / sizeof(not_one_column[0]); i++)
        if (cp >= not_one_column[i].lo && cp <= not_one_column[i].hi)
            return '?';
    return cp;
}

static void put_cell(gl_canvas *c, int x, int y, uint32_t cp, gl_style style)
{
    gl_cell *cell = gl_canvas_cell(c, x, y);
    if (cell) {
        cell->ch = cp;
        cell->style = (uint8_t)style;
    }
}

int gl_canvas_text_cols(const char *text)
{
    int cols = 0;
    for (const char *s = text; *s && *s != '\n'; cols++)
        utf8_next(&s);
    return cols;
}

int gl_canvas_text_cut(gl_canvas *c, int x, int y, const char *text, int max_cols,
                       int head_cols, gl_style style)
{
    if (max_cols <= 0)
        return 0;
    int total = gl_canvas_text_cols(text);
    int head = total <= max_cols ? total : head_cols < 0 ? 0
               : head_cols > max_cols - 1 ? max_cols - 1 : head_cols;
    int skip = total <= max_cols ? 0 : total - (max_cols - 1 - head); /* up to the tail */
    const char *s = text;
    for (int col = 0; col < head; col++)
        put_cell(c, x + col, y, one_column(utf8_next(&s)), style);
    if (total <= max_cols)
        return total;
    for (int col = head; col < skip; col++)
        utf8_next(&s);
    put_cell(c, x + head, y, ELLIPSIS, style);
    for (int col = head + 1; col < max_cols; col++)
        put_cell(c, x + col, y, one_column(utf8_next(&s)), style);
    return max_cols;
}

int gl_canvas_text(gl_canvas *c, int x, int y, const char *text, int max_cols, gl_style style)
{
    return gl_canvas_text_cut(c, x, y, text, max_cols, max_cols - 1, style);
}

/* ---- boxes ---- */

void gl_canvas_box(gl_canvas *c, int x, int y, int w, int h, int32_t box, gl_style style,
                   bool rounded)
{
    if (w < 2 || h < 2)
        return;
    for (int row = y; row < y + h; row++)
        for (int col = x; col < x + w; col++) {
            gl_cell *cell = gl_canvas_cell(c, col, row);
            if (!cell)
                continue;
            bool top = row == y, bottom = row == y + h - 1;
            bool left = col == x, right = col == x + w - 1;
            *cell = (gl_cell){.box = box, .style = (uint8_t)style};
            if (top || bottom)
                cell->flags |= GL_CELL_BORDER_H;
            if (left || right)
                cell->flags |= GL_CELL_BORDER_V;
            if (!cell->flags) {
                cell->flags = GL_CELL_INSIDE;
                continue;
            }
            cell->flags |= GL_CELL_SOLID;
            if ((top || bottom) && !left)
                cell->lines |= GL_LINE_LEFT;
            if ((top || bottom) && !right)
                cell->lines |= GL_LINE_RIGHT;
            if ((left || right) && !top)
                cell->lines |= GL_LINE_UP;
            if ((left || right) && !bottom)
                cell->lines |= GL_LINE_DOWN;
            if (rounded && (top || bottom) && (left || right))
                cell->flags |= GL_CELL_ROUND;
        }
}

void gl_canvas_flat_box(gl_canvas *c, int x, int y, int w, int32_t box, gl_style style)
{
    for (int col = x; w >= 2 && col < x + w; col++) {
        gl_cell *cell = gl_canvas_cell(c, col, y);
        if (!cell)
            continue;
        *cell = (gl_cell){.box = box, .style = (uint8_t)style, .flags = GL_CELL_INSIDE};
        if (col == x || col == x + w - 1) {
            cell->flags |= GL_CELL_FLAT_END;
            cell->lines = col == x ? GL_LINE_RIGHT : GL_LINE_LEFT; /* which end */
        }
    }
}

/* ---- lines ---- */

static unsigned direction_of(int dx, int dy)
{
    return dx > 0 ? GL_LINE_RIGHT : dx < 0 ? GL_LINE_LEFT : dy > 0 ? GL_LINE_DOWN : GL_LINE_UP;
}

static unsigned opposite(unsigned direction)
{
    switch (direction) {
    case GL_LINE_UP: return GL_LINE_DOWN;
    case GL_LINE_DOWN: return GL_LINE_UP;
    case GL_LINE_LEFT: return GL_LINE_RIGHT;
    default: return GL_LINE_LEFT;
    }
}

static void mark_line(gl_cell *cell, unsigned direction, bool dashed)
{
    cell->lines |= (uint8_t)direction;
    cell->flags |= dashed ? GL_CELL_DASHED : GL_CELL_SOLID;
    if (cell->style == GL_STYLE_NONE)
        cell->style = GL_STYLE_EDGE;
}

void gl_canvas_half_link(gl_canvas *c, int x, int y, unsigned direction, bool dashed)
{
    gl_cell *cell = gl_canvas_cell(c, x, y);
    if (cell && !(cell->flags & GL_CELL_INSIDE))
        mark_line(cell, direction, dashed);
}

bool gl_canvas_link(gl_canvas *c, int x0, int y0, int x1, int y1, bool dashed)
{
    int dx = x1 - x0, dy = y1 - y0;
    if (abs(dx) + abs(dy) != 1)
        return false;
    gl_cell *a = gl_canvas_cell(c, x0, y0), *b = gl_canvas_cell(c, x1, y1);
    if (!a || !b || (a->flags & GL_CELL_INSIDE) || (b->flags & GL_CELL_INSIDE))
        return false;
    unsigned direction = direction_of(dx, dy);
    mark_line(a, direction, dashed);
    mark_line(b, opposite(direction), dashed);
    return true;
}

bool gl_canvas_run(gl_canvas *c, int x0, int y0, int x1, int y1, bool dashed)
{
    if (x0 != x1 && y0 != y1)
        return false;
    int sx = (x1 > x0) - (x1 < x0), sy = (y1 > y0) - (y1 < y0);
    bool all = true;
    for (int x = x0, y = y0; x != x1 || y != y1; x += sx, y += sy)
        all &= gl_canvas_link(c, x, y, x + sx, y + sy, dashed);
    return all;
}

bool gl_canvas_elbow(gl_canvas *c, int x0, int y0, int x1, int y1, bool vertical_first,
                     bool dashed)
{
    int bend_x = vertical_first ? x0 : x1, bend_y = vertical_first ? y1 : y0;
    bool first = gl_canvas_run(c, x0, y0, bend_x, bend_y, dashed);
    bool second = gl_canvas_run(c, bend_x, bend_y, x1, y1, dashed);
    return first && second;
}

void gl_canvas_arrow(gl_canvas *c, int x, int y, unsigned direction)
{
    static const struct { unsigned direction; uint32_t ch; } heads[] = {
        {GL_LINE_UP, 0x25B2},   /* ▲ */
        {GL_LINE_DOWN, 0x25BC}, /* ▼ */
        {GL_LINE_LEFT, 0x25C4}, /* ◄ */
        {GL_LINE_RIGHT, 0x25BA} /* ► */
    };
    gl_cell *cell = gl_canvas_cell(c, x, y);
    if (!cell || (cell->flags & GL_CELL_INSIDE))
        return;
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        if (heads[i].direction == direction) {
            cell->ch = heads[i].ch;
            cell->style = GL_STYLE_EDGE;
        }
}

bool gl_canvas_blank(const gl_canvas *c, int x, int y, int w)
{
    for (int col = x; col < x + w; col++) {
        const gl_cell *cell = gl_canvas_cell_const(c, col, y);
        if (!cell || cell->ch || cell->lines || cell->box >= 0)
            return false;
    }
    return true;
}

/* ---- reading cells back ---- */

/* Light lines by the directions meeting in the cell: │ ─ corners, tees and the cross. */
static const uint32_t light[16] = {
    [0] = ' ',
    [GL_LINE_UP] = 0x2502, [GL_LINE_DOWN] = 0x2502, [GL_LINE_UP | GL_LINE_DOWN] = 0x2502,
    [GL_LINE_LEFT] = 0x2500, [GL_LINE_RIGHT] = 0x2500, [GL_LINE_LEFT | GL_LINE_RIGHT] = 0x2500,
    [GL_LINE_DOWN | GL_LINE_RIGHT] = 0x250C, /* ┌ */
    [GL_LINE_DOWN | GL_LINE_LEFT] = 0x2510,  /* ┐ */
    [GL_LINE_UP | GL_LINE_RIGHT] = 0x2514,   /* └ */
    [GL_LINE_UP | GL_LINE_LEFT] = 0x2518,    /* ┘ */
    [GL_LINE_UP | GL_LINE_DOWN | GL_LINE_RIGHT] = 0x251C, /* ├ */
    [GL_LINE_UP | GL_LINE_DOWN | GL_LINE_LEFT] = 0x2524,  /* ┤ */
    [GL_LINE_LEFT | GL_LINE_RIGHT | GL_LINE_DOWN] = 0x252C, /* ┬ */
    [GL_LINE_LEFT | GL_LINE_RIGHT | GL_LINE_UP] = 0x2534,   /* ┴ */
    [LINE_MASK] = 0x253C, /* ┼ */
};

static uint32_t rounded_corner(unsigned lines)
{
    switch (lines) {
    case GL_LINE_DOWN | GL_LINE_RIGHT: return 0x256D; /* ╭ */
    case GL_LINE_DOWN | GL_LINE_LEFT: return 0x256E;  /* ╮ */
    case GL_LINE_UP | GL_LINE_LEFT: return 0x256F;    /* ╯ */
    case GL_LINE_UP | GL_LINE_RIGHT: return 0x2570;   /* ╰ */
    default: return light[lines];
    }
}

/* A heavy border with the light edges that leave it: ┏ ┓ ┗ ┛ ━ ┃ ┯ ┷ ┿ ┠ ┨ ╂. */
static uint32_t heavy_border(const gl_cell *cell)
{
    unsigned lines = cell->lines & LINE_MASK;
    bool h = cell->flags & GL_CELL_BORDER_H, v = cell->flags & GL_CELL_BORDER_V;
    if (h && v) {
        static const uint32_t corners[16] = {
            [GL_LINE_DOWN | GL_LINE_RIGHT] = 0x250F, [GL_LINE_DOWN | GL_LINE_LEFT] = 0x2513,
            [GL_LINE_UP | GL_LINE_RIGHT] = 0x2517, [GL_LINE_UP | GL_LINE_LEFT] = 0x251B,
        };
        return corners[lines] ? corners[lines] : light[lines];
    }
    if (h) {
        unsigned across = lines & (GL_LINE_UP | GL_LINE_DOWN);
        return across == (GL_LINE_UP | GL_LINE_DOWN) ? 0x253F
               : across == GL_LINE_DOWN             ? 0x252F
               : across == GL_LINE_UP               ? 0x2537
                                                    : 0x2501;
    }
    unsigned across = lines & (GL_LINE_LEFT | GL_LINE_RIGHT);
    return across == (GL_LINE_LEFT | GL_LINE_RIGHT) ? 0x2542
           : across == GL_LINE_RIGHT               ? 0x2520
           : across == GL_LINE_LEFT                ? 0x2528
                                                   : 0x2503;
}

uint32_t gl_canvas_glyph(const gl_canvas *c, int x, int y, int32_t heavy_box)
{
    const gl_cell *cell = gl_canvas_cell_const(c, x, y);
    if (!cell)
        return ' ';
    if (cell->ch)
        return cell->ch;
    if (cell->flags & GL_CELL_FLAT_END) {
        bool left = cell->lines & GL_LINE_RIGHT, cursor = heavy_box >= 0 && cell->box == heavy_box;
        return cursor ? (left ? 0x25BA : 0x25C4) /* ► ◄ */ : left ? '[' : ']';
    }
    unsigned lines = cell->lines & LINE_MASK;
    bool border = cell->flags & (GL_CELL_BORDER_H | GL_CELL_BORDER_V);
    if (border && heavy_box >= 0 && cell->box == heavy_box)
        return heavy_border(cell);
    if (cell->flags & GL_CELL_ROUND)
        return rounded_corner(lines);
    bool dashed_only = (cell->flags & (GL_CELL_DASHED | GL_CELL_SOLID)) == GL_CELL_DASHED;
    if (dashed_only && (lines == GL_LINE_LEFT || lines == GL_LINE_RIGHT ||
                        lines == (GL_LINE_LEFT | GL_LINE_RIGHT)))
        return 0x2504; /* ┄ */
    if (dashed_only && (lines == GL_LINE_UP || lines == GL_LINE_DOWN ||
                        lines == (GL_LINE_UP | GL_LINE_DOWN)))
        return 0x2506; /* ┆ */
    return light[lines];
}

int gl_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t gl_canvas_row_utf8(const gl_canvas *c, int y, int x, int w, int32_t heavy_box,
                          char *buf, size_t cap)
{
    size_t need = 0, used = 0;
    for (int col = x; col < x + w; col++) {
        char bytes[4];
        size_t n = (size_t)gl_utf8_encode(gl_canvas_glyph(c, col, y, heavy_box), bytes);
        if (used == need && used + n < cap) { /* whole characters only */
            memcpy(buf + used, bytes, n);
            used += n;
        }
        need += n;
    }
    if (cap > 0)
        buf[used] = '\0';
    return need;
}
