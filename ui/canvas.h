/* canvas.h — a character grid that boxes, text and line runs are drawn into.
 *
 * No curses here: the graph view draws a whole layout into a canvas once (off the input
 * loop), then each redraw copies the visible window of it to the screen
 * (canvas_paint.h), and the tests read it back as UTF-8 text.
 *
 * Lines are not stored as characters but as the directions that meet in a cell (up,
 * down, left, right); the character is chosen when the cell is read. Two runs that
 * cross therefore read as ┼, a run that meets another as ├ ┤ ┬ ┴, a bend as ┌ ┐ └ ┘,
 * and an edge leaving a box through its bottom border turns that border cell into ┬.
 * Text and arrowheads are characters and win over lines. The inside of a box is never
 * crossed by a line: runs through it leave a gap, as if passing behind the box.
 *
 * Every cell is one terminal column: characters that terminals draw two columns wide
 * (CJK, emoji) or zero wide (combining marks) are stored as '?', invalid UTF-8 as U+FFFD
 * and control characters as '?', so the grid and the screen always line up.
 */
#ifndef GL_UI_CANVAS_H
#define GL_UI_CANVAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Directions of the line ends meeting in a cell. */
enum {
    GL_LINE_UP = 1u << 0,
    GL_LINE_DOWN = 1u << 1,
    GL_LINE_LEFT = 1u << 2,
    GL_LINE_RIGHT = 1u << 3,
};

/* What a cell is part of, for the screen's colours. */
typedef enum gl_style {
    GL_STYLE_NONE = 0,
    GL_STYLE_EDGE,      /* an edge's line or arrowhead */
    GL_STYLE_LABEL,     /* an edge's label */
    GL_STYLE_NODE,      /* a node box */
    GL_STYLE_IO,        /* a graph input or output */
    GL_STYLE_CONSTANT,  /* an initializer box */
    GL_STYLE_OTHER,     /* a group or a "... N more" stub */
    GL_STYLE_ADDED,     /* diff marks, as in the SVG: "+ " green */
    GL_STYLE_MODIFIED,  /* "~ " amber */
    GL_STYLE_REPLACED,  /* "> " blue */
    GL_STYLE_COUNT
} gl_style;

/* Cell flags. */
enum {
    GL_CELL_BORDER_H = 1u << 0, /* on a box's top or bottom border (both: a corner) */
    GL_CELL_BORDER_V = 1u << 1, /* on a box's left or right border */
    GL_CELL_ROUND = 1u << 2,    /* a corner drawn rounded (╭ ╮ ╰ ╯) */
    GL_CELL_SOLID = 1u << 3,    /* a solid line passes */
    GL_CELL_DASHED = 1u << 4,   /* a dashed line passes (drawn ┄ ┆ unless a solid one does) */
    GL_CELL_INSIDE = 1u << 5,   /* inside a box: lines never enter */
    GL_CELL_FLAT_END = 1u << 6, /* an end of a flat box: '[' (lines: GL_LINE_RIGHT) or ']' */
};

typedef struct gl_cell {
    uint32_t ch;   /* text or arrowhead code point; 0: drawn from `lines` (or blank) */
    int32_t box;   /* index of the box the cell belongs to (border or inside); -1: none */
    uint8_t lines; /* GL_LINE_* */
    uint8_t flags; /* GL_CELL_* */
    uint8_t style; /* gl_style */
} gl_cell;

typedef struct gl_canvas {
    int width, height;
    gl_cell *cells; /* row-major, width * height */
} gl_canvas;

/* Most cells a canvas may have (16 Mi: 192 MiB): a drawing past that is refused. */
#define GL_CANVAS_MAX_CELLS (1L << 24)

/* A blank canvas; NULL when a size is not positive, the cells would exceed
 * GL_CANVAS_MAX_CELLS, or memory is short (the size comes from a layout, so this does
 * not abort). */
gl_canvas *gl_canvas_new(int width, int height);
void gl_canvas_free(gl_canvas *c);

/* The cell at (x, y); NULL outside the canvas. */
gl_cell *gl_canvas_cell(gl_canvas *c, int x, int y);
const gl_cell *gl_canvas_cell_const(const gl_canvas *c, int x, int y);

/* Write one line of UTF-8 text from (x, y): stops at '\n', the end of the text or after
 * `max_cols` columns; text cut short ends in '…'. Cells outside the canvas are skipped.
 * Returns the columns the text took (clipped ones included). */
int gl_canvas_text(gl_canvas *c, int x, int y, const char *text, int max_cols, gl_style style);
/* The same, but text longer than max_cols keeps its first `head_cols` columns, a '…'
 * and its last columns: head_cols = max_cols - 1 cuts at the end (gl_canvas_text), 0 at
 * the start (a node path "/layer3/conv2/Conv" says most at its end), half of it in the
 * middle. */
int gl_canvas_text_cut(gl_canvas *c, int x, int y, const char *text, int max_cols,
                       int head_cols, gl_style style);
/* Columns `text` takes up to its first '\n' (each code point one column). */
int gl_canvas_text_cols(const char *text);

/* A box border with its top-left corner at (x, y), `w` columns by `h` rows (both >= 2;
 * otherwise nothing is drawn), rounded corners when `rounded`. Every cell of it (border
 * and inside) gets box index `box` and `style`; inside cells are cleared and marked
 * GL_CELL_INSIDE. */
void gl_canvas_box(gl_canvas *c, int x, int y, int w, int h, int32_t box, gl_style style,
                   bool rounded);

/* A flat box: one row "[ text ]" from (x, y), `w` >= 2 columns, no border; every cell
 * gets box index `box`, `style` and GL_CELL_INSIDE (lines never enter), the two ends
 * GL_CELL_FLAT_END. As the cursor (gl_canvas_glyph's heavy_box) its ends read ► ◄. */
void gl_canvas_flat_box(gl_canvas *c, int x, int y, int w, int32_t box, gl_style style);

/* Join two 4-adjacent cells with a line end in each. False (nothing drawn) when they are
 * not adjacent, either is outside the canvas, or either is inside a box. */
bool gl_canvas_link(gl_canvas *c, int x0, int y0, int x1, int y1, bool dashed);
/* A straight run from (x0, y0) to (x1, y1), both ends included; they must share a row
 * or a column (false otherwise). Returns false if any link of it was refused. */
bool gl_canvas_run(gl_canvas *c, int x0, int y0, int x1, int y1, bool dashed);
/* Two runs bent once: first vertically then horizontally (`vertical_first`), or the
 * other way round. The bend cell reads as a corner. */
bool gl_canvas_elbow(gl_canvas *c, int x0, int y0, int x1, int y1, bool vertical_first,
                     bool dashed);
/* Half a line in (x, y), toward `direction` (one GL_LINE_* bit): where an edge leaves a
 * flat box, whose cells lines never enter. */
void gl_canvas_half_link(gl_canvas *c, int x, int y, unsigned direction, bool dashed);
/* An arrowhead pointing in `direction` (one GL_LINE_* bit): ▲ ▼ ◄ ►. */
void gl_canvas_arrow(gl_canvas *c, int x, int y, unsigned direction);

/* True when cells (x .. x+w-1, y) are inside the canvas and hold nothing at all. */
bool gl_canvas_blank(const gl_canvas *c, int x, int y, int w);

/* The character shown at (x, y) (' ' outside). The border of box `heavy_box` (>= 0)
 * reads heavy (┏ ━ ┓ ┃, ┯ where an edge leaves it): the view's cursor. */
uint32_t gl_canvas_glyph(const gl_canvas *c, int x, int y, int32_t heavy_box);

/* Row y, columns x .. x+w-1, as UTF-8 into buf (always NUL-terminated when cap > 0);
 * returns the bytes it needed (like snprintf). Columns outside the canvas are blanks. */
size_t gl_canvas_row_utf8(const gl_canvas *c, int y, int x, int w, int32_t heavy_box,
                          char *buf, size_t cap);
/* UTF-8 encoding of one code point into out[4]; returns its length. */
int gl_utf8_encode(uint32_t cp, char out[4]);

#endif
