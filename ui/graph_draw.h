/* graph_draw.h — a Graphviz layout (render.h) drawn into a canvas: the picture of the
 * terminal graph view. Pure: no curses, no Graphviz; it only reads the gl_layout.
 *
 * Mapping points to cells: a box is sized by its text, not by Graphviz's size (a cell
 * holds one character, whatever the font Graphviz measured), and centred where Graphviz
 * put it. Columns are x * sx and rows (top - y) * sy (y flipped: Graphviz's y grows
 * upwards), with sy = sx / aspect since a terminal cell is about twice as tall as wide.
 * The scale starts at cols_per_point and grows until no two boxes touch: boxes side by
 * side in the layout get at least 2 blank columns between them, boxes above one another
 * at least 2 blank rows (room for a bend and an arrowhead).
 *
 * Edges: each spline is sampled and snapped to cells, the part between the two boxes is
 * reduced to its turning points, and consecutive points are joined by orthogonal runs
 * (vertical, horizontal, vertical — the horizontal on a row free of boxes when there is
 * one near the middle). A route starts on the source's border facing the spline (that
 * border cell reads ┬ ├ ┤ ┴), leaves it at right angles and ends with an arrowhead in
 * the cell just outside the target's border, pointing at it. Runs never cross a box:
 * where one would, it is left out (the line passes behind the box). Edge labels are
 * written where Graphviz put them when those cells are free.
 */
#ifndef GL_UI_GRAPH_DRAW_H
#define GL_UI_GRAPH_DRAW_H

#include "render/render.h"
#include "ui/canvas.h"

#include <stdbool.h>
#include <stddef.h>

/* Most boxes the graph view asks Graphviz to lay out (render.h's max_nodes): bigger
 * graphs are drawn as the selection's neighbourhood. About what dot lays out in a
 * fraction of a second, and already more than a screen shows. */
#define GL_GRAPH_VIEW_MAX_BOXES 150

typedef struct gl_draw_opts {
    double cols_per_point; /* horizontal scale to start from; 0: 0.2 (dot's labels take
                            * about 5 points per character) */
    double aspect;         /* a cell's height over its width; 0: 2 */
    int label_cols;        /* widest text line in a box (longer ones lose their middle to
                            * a '…'); 0: 28 */
    int label_lines;       /* most text lines in a box; 0: 3 (op, name, first shape) */
    int margin;            /* blank cells around the drawing; 0: 2 */
    bool no_edge_labels;
    bool compact;          /* ranks (rows of boxes in the layout) as close as the boxes
                            * drawn allow: 2 blank rows between consecutive ranks, however
                            * far apart Graphviz put them (its boxes hold every label line,
                            * ours at most label_lines), so more ranks fit a screen (the
                            * graph view); rows in between are interpolated */
    bool flat;             /* boxes one row high without a border, "[ first line ]" (the
                            * cursor's ends read ► ◄), and with compact 2 rows between ranks
                            * (one for bends, one for arrowheads): the graph view's compact
                            * boxes */
} gl_draw_opts;

typedef struct gl_cell_rect {
    int x, y, w, h; /* top-left cell, columns, rows */
} gl_cell_rect;

typedef struct gl_drawn_edge {
    bool drawn;      /* false: no route (the two boxes touch, or a self loop) */
    int *path;       /* x0, y0, x1, y1, ...: the route's cells, 4-adjacent, from the cell
                      * on the source's border to the arrowhead (owned) */
    size_t n_path;   /* cells in path */
    unsigned arrow;  /* GL_LINE_* the arrowhead points to */
} gl_drawn_edge;

typedef struct gl_drawing {
    gl_canvas *canvas;     /* the whole layout (owned) */
    gl_cell_rect *boxes;   /* one per layout node, same index */
    size_t n_boxes;
    gl_drawn_edge *edges;  /* one per layout edge, same index */
    size_t n_edges;
    size_t *order;         /* every box (nodes, inputs, outputs, constants, "... N more")
                            * in reading order: by top row, then by left column */
    size_t n_order;
    double sx, sy;         /* cells per point */
    double top;            /* layout y of row 0 before the shift below */
    double *rank_y, *rank_row; /* compact: layout y of each rank, top first, and its row
                            * before the shift (owned); n_ranks 0 otherwise */
    size_t n_ranks;
    int shift_x, shift_y;  /* margins: col = round(x * sx) + shift_x */
} gl_drawing;

/* Draw `l`. GL_ERR_UNSUPPORTED when the canvas would exceed GL_CANVAS_MAX_CELLS,
 * GL_ERR_NOMEM when memory is short; *out is NULL then. `o` may be NULL. */
gl_status gl_drawing_build(const gl_layout *l, const gl_draw_opts *o, gl_drawing **out);
void gl_drawing_free(gl_drawing *d);

/* The same boxes one row each, in a topological order, with the edges on rails to the
 * left of the text (graph_rails.c): the graph view's compact boxes. Reads only the
 * layout's boxes, edges and Graphviz's order of them; `o`'s label_cols (0: 48). */
gl_status gl_drawing_build_rails(const gl_layout *l, const gl_draw_opts *o, gl_drawing **out);
/* A box's colour: its diff mark's, else its kind's. */
gl_style gl_drawing_box_style(const gl_layout_node *n);

/* The cell of layout point (x, y). */
void gl_drawing_map(const gl_drawing *d, double x, double y, int *col, int *row);
/* Index of the box covering cell (col, row), or -1. */
long gl_drawing_box_at(const gl_drawing *d, int col, int row);

#endif
