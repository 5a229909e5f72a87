/* canvas_paint.h — a window of a canvas painted on the curses screen (main thread).
 *
 * Kept apart from canvas.c so that the canvas, the drawing of layouts and their tests
 * need no terminal, and apart from the graph view so that the benchmark can paint
 * without a workbench.
 */
#ifndef GL_UI_CANVAS_PAINT_H
#define GL_UI_CANVAS_PAINT_H

#include "ui/canvas.h"

#include <stdbool.h>

typedef struct gl_paint_style {
    int attr[GL_STYLE_COUNT]; /* curses attributes (colour pair included) per gl_style */
    int cursor_attr;          /* the inside of the cursor box */
    int32_t cursor_box;       /* box drawn with a heavy border; -1: none */
    bool utf8;                /* else line drawing falls back to the terminal's ACS set
                               * and other characters to ASCII */
} gl_paint_style;

/* Paint canvas cells (x0 .., y0 ..) into the screen rectangle at (top, left) of
 * height x width; cells past the canvas are blanks. */
void gl_canvas_paint(const gl_canvas *c, int x0, int y0, int top, int left, int height,
                     int width, const gl_paint_style *style);

#endif
