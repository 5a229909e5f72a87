/* test_ui_graph.c — the graph view's picture without a terminal: the canvas primitives,
 * a hand-made layout mapped to cells (expected grids written out by hand), real Graphviz
 * layouts drawn and checked box by box, edge by edge, and the view itself driven
 * headless (jobs inline) and drawn into a curses screen on /dev/null. */
#include "ui/canvas.h"
#include "ui/graph_draw.h"

#include "diff/diff.h"
#include "onnx/onnx_io.h"
#include "passes/passes.h"
#include "render/render.h"
#include "testutil.h"
#include "ui/ui.h"

#include <criterion/criterion.h>

#include <curses.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------ */

static char *row_text(const gl_canvas *c, int y, int x, int w, int32_t heavy)
{
    size_t need = gl_canvas_row_utf8(c, y, x, w, heavy, NULL, 0);
    char *buf = malloc(need + 1);
    cr_assert_not_null(buf);
    gl_canvas_row_utf8(c, y, x, w, heavy, buf, need + 1);
    return buf;
}

static void print_canvas(const gl_canvas *c, int32_t heavy)
{
    for (int y = 0; y < c->height; y++) {
        char *row = row_text(c, y, 0, c->width, heavy);
        fprintf(stderr, "%2d|%s|\n", y, row);
        free(row);
    }
}

/* The whole canvas must read as `rows` (n rows, each exactly the canvas width). */
static void expect_grid(const char *what, const gl_canvas *c, int32_t heavy,
                        const char *const *rows, int n)
{
    cr_assert_eq(c->height, n, "%s: %d rows, expected %d", what, c->height, n);
    for (int y = 0; y < n; y++) {
        char *got = row_text(c, y, 0, c->width, heavy);
        if (strcmp(got, rows[y]) != 0) {
            print_canvas(c, heavy);
            cr_assert_fail("%s: row %d is\n|%s|\nexpected\n|%s|", what, y, got, rows[y]);
        }
        free(got);
    }
}

static uint32_t glyph(const gl_canvas *c, int x, int y) { return gl_canvas_glyph(c, x, y, -1); }

static void check_edges(const gl_layout *l, const gl_drawing *d);

/* ---- canvas primitives ---------------------------------------------------------- */

Test(canvas, box_with_label_clipped_to_its_width)
{
    gl_canvas *c = gl_canvas_new(8, 3);
    gl_canvas_box(c, 0, 0, 8, 3, 0, GL_STYLE_NODE, false);
    int cols = gl_canvas_text(c, 2, 1, "Transpose", 4, GL_STYLE_NODE);
    cr_expect_eq(cols, 4);
    static const char *const rows[] = {
        "┌──────┐",
        "│ Tra… │",
        "└──────┘",
    };
    expect_grid("box", c, -1, rows, 3);
    gl_canvas_free(c);
}

Test(canvas, rounded_and_heavy_boxes)
{
    gl_canvas *c = gl_canvas_new(9, 3);
    gl_canvas_box(c, 0, 0, 4, 3, 0, GL_STYLE_IO, true);
    gl_canvas_box(c, 5, 0, 4, 3, 1, GL_STYLE_NODE, false);
    static const char *const plain[] = {
        "╭──╮ ┌──┐",
        "│  │ │  │",
        "╰──╯ └──┘",
    };
    expect_grid("rounded", c, -1, plain, 3);
    static const char *const heavy[] = {
        "╭──╮ ┏━━┓",
        "│  │ ┃  ┃",
        "╰──╯ ┗━━┛",
    };
    expect_grid("heavy second box", c, 1, heavy, 3);
    gl_canvas_free(c);
}

Test(canvas, text_fits_without_ellipsis_and_stops_at_newline)
{
    gl_canvas *c = gl_canvas_new(10, 1);
    cr_expect_eq(gl_canvas_text(c, 0, 0, "Conv\nconv1", 10, GL_STYLE_NODE), 4);
    cr_expect_eq(gl_canvas_text_cols("Conv\nconv1"), 4);
    static const char *const rows[] = {"Conv      "};
    expect_grid("text", c, -1, rows, 1);
    gl_canvas_free(c);
}

Test(canvas, text_cut_keeps_head_and_tail)
{
    static const struct {
        const char *text;
        int max_cols, head;
        const char *row; /* 10 columns */
    } cases[] = {
        {"/layer3/conv2/Conv", 9, 4, "/lay…Conv "},
        {"/layer3/conv2/Conv", 10, 0, "…onv2/Conv"},
        {"/layer3/conv2/Conv", 10, 9, "/layer3/c…"},
        {"short", 9, 0, "short     "},
        {"exactly_9", 9, 4, "exactly_9 "},
        {"ab" "\xC3\xA9" "cdefgh" "\xC3\xA9", 5, 2, "ab…h" "\xC3\xA9" "     "},
        {"abcdef", 2, 5, "a…        "}, /* a head wider than the room: cut at the end */
        {"abcdef", 1, 0, "…         "},
        {"abcdef", 0, 0, "          "},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_canvas *c = gl_canvas_new(10, 1);
        gl_canvas_text_cut(c, 0, 0, cases[i].text, cases[i].max_cols, cases[i].head,
                           GL_STYLE_NODE);
        char *row = row_text(c, 0, 0, 10, -1);
        cr_expect_str_eq(row, cases[i].row, "'%s' in %d columns, head %d", cases[i].text,
                         cases[i].max_cols, cases[i].head);
        free(row);
        gl_canvas_free(c);
    }
}

Test(canvas, text_is_one_column_per_cell_whatever_the_bytes)
{
    gl_canvas *c = gl_canvas_new(8, 1);
    /* é stays; a stray continuation byte is U+FFFD; a control character and a CJK
     * character (two columns on a terminal) become '?'; a truncated sequence at the end
     * is one U+FFFD */
    gl_canvas_text(c, 0, 0, "\xC3\xA9" "\x80" "\x01" "\xE4\xB8\xAD" "a\xE2\x94", 8,
                   GL_STYLE_NODE);
    static const char *const rows[] = {"é" "\xEF\xBF\xBD" "?" "?" "a" "\xEF\xBF\xBD" "  "};
    expect_grid("utf8", c, -1, rows, 1);
    gl_canvas_free(c);
}

Test(canvas, horizontal_vertical_and_elbow_runs)
{
    gl_canvas *c = gl_canvas_new(5, 3);
    cr_assert(gl_canvas_run(c, 0, 1, 4, 1, false));
    static const char *const h[] = {"     ", "─────", "     "};
    expect_grid("horizontal", c, -1, h, 3);
    gl_canvas_free(c);

    c = gl_canvas_new(3, 3);
    cr_assert(gl_canvas_run(c, 1, 2, 1, 0, false)); /* either direction */
    static const char *const v[] = {" │ ", " │ ", " │ "};
    expect_grid("vertical", c, -1, v, 3);
    cr_expect_not(gl_canvas_run(c, 0, 0, 2, 2, false), "a diagonal is not a run");
    gl_canvas_free(c);

    c = gl_canvas_new(5, 3);
    cr_assert(gl_canvas_elbow(c, 0, 0, 4, 2, true, false));
    static const char *const vh[] = {"│    ", "│    ", "└────"};
    expect_grid("vertical then horizontal", c, -1, vh, 3);
    gl_canvas_free(c);

    c = gl_canvas_new(5, 3);
    cr_assert(gl_canvas_elbow(c, 0, 0, 4, 2, false, false));
    static const char *const hv[] = {"────┐", "    │", "    │"};
    expect_grid("horizontal then vertical", c, -1, hv, 3);
    gl_canvas_free(c);

    c = gl_canvas_new(5, 3);
    cr_assert(gl_canvas_elbow(c, 4, 0, 0, 2, true, false));
    static const char *const up_left[] = {"    │", "    │", "────┘"};
    expect_grid("down then left", c, -1, up_left, 3);
    gl_canvas_free(c);
}

/* Arms drawn from the centre of a 3x3 canvas to its neighbours, and the character the
 * centre must show: every way lines can meet in a cell. */
Test(canvas, junctions_where_lines_meet_or_cross)
{
    static const struct {
        const char *arms; /* u d l r */
        const char *centre;
    } cases[] = {
        {"udlr", "┼"}, {"dlr", "┬"}, {"ulr", "┴"}, {"udr", "├"}, {"udl", "┤"},
        {"dr", "┌"},   {"dl", "┐"},  {"ur", "└"},  {"ul", "┘"},  {"ud", "│"},
        {"lr", "─"},   {"u", "│"},   {"r", "─"},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        gl_canvas *c = gl_canvas_new(3, 3);
        for (const char *a = cases[i].arms; *a; a++) {
            int dx = *a == 'l' ? -1 : *a == 'r' ? 1 : 0, dy = *a == 'u' ? -1 : *a == 'd' ? 1 : 0;
            cr_assert(gl_canvas_link(c, 1, 1, 1 + dx, 1 + dy, false));
        }
        char *row = row_text(c, 1, 1, 1, -1);
        cr_expect_str_eq(row, cases[i].centre, "arms '%s'", cases[i].arms);
        free(row);
        gl_canvas_free(c);
    }
}

Test(canvas, two_runs_crossing_and_meeting)
{
    gl_canvas *c = gl_canvas_new(5, 5);
    gl_canvas_run(c, 0, 1, 4, 1, false);
    gl_canvas_run(c, 2, 0, 2, 4, false); /* crosses the first */
    gl_canvas_run(c, 0, 3, 2, 3, false); /* meets the vertical from the left */
    static const char *const rows[] = {
        "  │  ",
        "──┼──",
        "  │  ",
        "──┤  ",
        "  │  ",
    };
    expect_grid("crossing", c, -1, rows, 5);
    gl_canvas_free(c);
}

Test(canvas, dashed_runs_unless_a_solid_one_shares_the_cell)
{
    gl_canvas *c = gl_canvas_new(5, 3);
    gl_canvas_run(c, 0, 1, 4, 1, true);
    gl_canvas_run(c, 2, 0, 2, 1, false); /* a solid line ending on the dashed one */
    gl_canvas_run(c, 4, 0, 4, 2, true);
    static const char *const rows[] = {
        "  │ ┆",
        "┄┄┴┄┤",
        "    ┆",
    };
    expect_grid("dashed", c, -1, rows, 3);
    gl_canvas_free(c);
}

Test(canvas, arrowheads_point_their_way_and_win_over_lines)
{
    gl_canvas *c = gl_canvas_new(4, 2);
    gl_canvas_run(c, 0, 0, 3, 0, false);
    gl_canvas_arrow(c, 0, 0, GL_LINE_UP);
    gl_canvas_arrow(c, 1, 0, GL_LINE_DOWN);
    gl_canvas_arrow(c, 2, 0, GL_LINE_LEFT);
    gl_canvas_arrow(c, 3, 0, GL_LINE_RIGHT);
    gl_canvas_arrow(c, 9, 9, GL_LINE_RIGHT); /* outside: ignored */
    static const char *const rows[] = {"▲▼◄►", "    "};
    expect_grid("arrows", c, -1, rows, 2);
    gl_canvas_free(c);
}

Test(canvas, an_edge_leaving_a_border_makes_a_tee_and_never_enters_a_box)
{
    gl_canvas *c = gl_canvas_new(7, 6);
    gl_canvas_box(c, 1, 0, 5, 3, 0, GL_STYLE_NODE, false);
    cr_assert(gl_canvas_run(c, 3, 2, 3, 4, false)); /* from the bottom border down */
    cr_expect_not(gl_canvas_link(c, 3, 1, 3, 2, false), "the inside takes no line");
    cr_expect_not(gl_canvas_run(c, 0, 1, 6, 1, false), "a run through a box has gaps");
    gl_canvas_arrow(c, 3, 5, GL_LINE_DOWN);
    gl_canvas_arrow(c, 3, 1, GL_LINE_DOWN); /* inside: ignored */
    static const char *const rows[] = {
        " ┌───┐ ",
        "─┤   ├─",
        " └─┬─┘ ",
        "   │   ",
        "   │   ",
        "   ▼   ",
    };
    expect_grid("tee on the border", c, -1, rows, 6);
    static const char *const heavy[] = {
        " ┏━━━┓ ",
        "─┨   ┠─",
        " ┗━┯━┛ ",
        "   │   ",
        "   │   ",
        "   ▼   ",
    };
    expect_grid("tee on a heavy border", c, 0, heavy, 6);
    gl_canvas_free(c);
}

Test(canvas, sizes_and_reads_outside)
{
    cr_expect_null(gl_canvas_new(0, 5));
    cr_expect_null(gl_canvas_new(5, -1));
    cr_expect_null(gl_canvas_new(1 << 16, 1 << 16), "past GL_CANVAS_MAX_CELLS");
    gl_canvas *c = gl_canvas_new(2, 2);
    cr_expect_null(gl_canvas_cell(c, 2, 0));
    cr_expect_null(gl_canvas_cell(c, 0, -1));
    cr_expect_eq(glyph(c, -5, 0), ' ');
    cr_expect_not(gl_canvas_link(c, 1, 1, 2, 1, false), "off the canvas");
    cr_expect_not(gl_canvas_link(c, 0, 0, 1, 1, false), "not adjacent");
    cr_expect(gl_canvas_blank(c, 0, 0, 2));
    cr_expect_not(gl_canvas_blank(c, 1, 0, 2), "runs past the edge");
    gl_canvas_text(c, 0, 0, "xy", 2, GL_STYLE_LABEL);
    cr_expect_not(gl_canvas_blank(c, 0, 0, 1));
    gl_canvas_free(c);
}

Test(canvas, rows_as_utf8_keep_whole_characters)
{
    gl_canvas *c = gl_canvas_new(3, 1);
    gl_canvas_run(c, 0, 0, 2, 0, false); /* "───": 9 bytes */
    char buf[8];
    size_t need = gl_canvas_row_utf8(c, 0, 0, 3, -1, buf, sizeof(buf));
    cr_expect_eq(need, 9);
    cr_expect_str_eq(buf, "──", "two whole characters fit in 8 bytes with the NUL");
    need = gl_canvas_row_utf8(c, 0, -1, 5, -1, buf, sizeof(buf));
    cr_expect_eq(need, 11, "blanks left and right of the canvas");
    gl_canvas_free(c);
}

/* ---- a hand-made layout mapped to cells ----------------------------------------------- */

/* Two boxes labelled "A" and "B" of 40x20 points, one edge between them. */
typedef struct two_boxes {
    gl_layout l;
    gl_layout_node nodes[2];
    gl_layout_edge edge;
    double pts[8];
} two_boxes;

static void two_boxes_init(two_boxes *t, double ax, double ay, double bx, double by,
                           const double *pts, size_t n_pts)
{
    memset(t, 0, sizeof(*t));
    t->nodes[0] = (gl_layout_node){.id = 0, .kind = GL_BOX_NODE, .label = "A",
                                   .x = ax, .y = ay, .w = 40, .h = 20};
    t->nodes[1] = (gl_layout_node){.id = 1, .kind = GL_BOX_NODE, .label = "B",
                                   .x = bx, .y = by, .w = 40, .h = 20};
    memcpy(t->pts, pts, 2 * n_pts * sizeof(double));
    t->edge = (gl_layout_edge){.from = 0, .to = 1, .pts = t->pts, .n_pts = n_pts, .label = ""};
    t->l = (gl_layout){.nodes = t->nodes, .n_nodes = 2, .edges = &t->edge, .n_edges = 1};
}

static gl_drawing *draw(const gl_layout *l, const gl_draw_opts *o)
{
    gl_drawing *d = NULL;
    gl_status st = gl_drawing_build(l, o, &d);
    cr_assert_eq(st, GL_OK, "drawing: %s", gl_error_message());
    cr_assert_not_null(d);
    return d;
}

/* 0.2 columns and 0.1 rows per point; the top of the layout (y = 110: A's top) is row 0
 * before the 2-cell margin. A (y = 100) is drawn above B (y = 20): y is flipped. A's
 * centre: column 50 * 0.2 = 10, row (110 - 100) * 0.1 = 1, so its 5x3 box starts at
 * (8, 0); B's centre row is (110 - 20) * 0.1 = 9. Shifted by the margin: A at (2, 2),
 * B at (2, 10); the edge leaves A's bottom border at column 4 and its arrowhead sits
 * right above B. */
Test(mapping, straight_edge_y_flipped)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 50, 20, (double[]){50, 90, 50, 70, 50, 50, 50, 30}, 4);
    gl_draw_opts o = {.cols_per_point = 0.2, .aspect = 2};
    gl_drawing *d = draw(&t.l, &o);
    cr_expect_float_eq(d->sx, 0.2, 1e-9);
    cr_expect_float_eq(d->sy, 0.1, 1e-9);
    static const char *const rows[] = {
        "         ",
        "         ",
        "  ┌───┐  ",
        "  │ A │  ",
        "  └─┬─┘  ",
        "    │    ",
        "    │    ",
        "    │    ",
        "    │    ",
        "    ▼    ",
        "  ┌───┐  ",
        "  │ B │  ",
        "  └───┘  ",
        "         ",
        "         ",
    };
    expect_grid("straight", d->canvas, -1, rows, 15);
    int col, row;
    gl_drawing_map(d, 50, 110, &col, &row);
    cr_expect(col == 4 && row == 2, "layout (50, 110) is cell (%d, %d)", col, row);
    cr_expect_eq(gl_drawing_box_at(d, 4, 3), 0);
    cr_expect_eq(gl_drawing_box_at(d, 4, 11), 1);
    cr_expect_eq(gl_drawing_box_at(d, 4, 6), -1);
    gl_drawing_free(d);
}

/* B is 50 points right of A: 10 columns. The edge is a straight line of two points
 * (not a Bezier): it leaves A's bottom border at the column it crosses it (11 before the
 * shift of -6), bends on the row halfway between the boxes and comes down onto B. */
Test(mapping, diagonal_edge_becomes_an_orthogonal_bend)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 100, 20, (double[]){50, 90, 100, 30}, 2);
    gl_draw_opts o = {.cols_per_point = 0.2, .aspect = 2};
    gl_drawing *d = draw(&t.l, &o);
    static const char *const rows[] = {
        "                   ",
        "                   ",
        "  ┌───┐            ",
        "  │ A │            ",
        "  └──┬┘            ",
        "     │             ",
        "     └───────┐     ",
        "             │     ",
        "             │     ",
        "             ▼     ",
        "            ┌───┐  ",
        "            │ B │  ",
        "            └───┘  ",
        "                   ",
        "                   ",
    };
    expect_grid("bend", d->canvas, -1, rows, 15);
    cr_assert(d->edges[0].drawn);
    cr_expect_eq(d->edges[0].arrow, GL_LINE_DOWN);
    gl_drawing_free(d);
}

/* An edge label goes where Graphviz put it when the cells (and one each side) are free,
 * and nowhere when they are not. */
Test(mapping, edge_labels_only_in_free_cells)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 100, 20, (double[]){50, 90, 100, 30}, 2);
    t.edge.label = "f32";
    t.edge.label_x = 75; /* column 15 - 6, row 5 + 2: right of the bend's vertical */
    t.edge.label_y = 60;
    gl_draw_opts o = {.cols_per_point = 0.2, .aspect = 2};
    gl_drawing *d = draw(&t.l, &o);
    char *row = row_text(d->canvas, 7, 0, d->canvas->width, -1);
    cr_expect_str_eq(row, "        f32  │     ");
    free(row);
    cr_expect_eq(gl_canvas_cell_const(d->canvas, 8, 7)->style, GL_STYLE_LABEL);
    gl_drawing_free(d);

    t.edge.label_x = 100; /* on the line: not drawn, the line stays whole */
    d = draw(&t.l, &o);
    for (int y = 0; y < d->canvas->height; y++) {
        row = row_text(d->canvas, y, 0, d->canvas->width, -1);
        cr_expect_null(strstr(row, "f32"), "row %d: %s", y, row);
        free(row);
    }
    check_edges(&t.l, d);
    gl_drawing_free(d);

    o.no_edge_labels = true;
    t.edge.label_x = 75;
    d = draw(&t.l, &o);
    cr_expect(gl_canvas_blank(d->canvas, 8, 7, 3), "labels switched off");
    gl_drawing_free(d);
}

/* A cell as tall as it is wide (aspect 1) doubles the rows between the boxes. */
Test(mapping, aspect_sets_rows_per_point)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 50, 20, (double[]){50, 90, 50, 30}, 2);
    gl_draw_opts tall = {.cols_per_point = 0.2, .aspect = 2};
    gl_draw_opts square = {.cols_per_point = 0.2, .aspect = 1};
    gl_drawing *a = draw(&t.l, &tall), *b = draw(&t.l, &square);
    cr_expect_eq(a->boxes[1].y - a->boxes[0].y, 8, "80 points at 0.1 rows per point");
    cr_expect_eq(b->boxes[1].y - b->boxes[0].y, 16, "80 points at 0.2 rows per point");
    cr_expect_eq(a->boxes[0].x, b->boxes[0].x);
    gl_drawing_free(a);
    gl_drawing_free(b);
}

/* Two boxes side by side whose text is wider than the points between them: the scale
 * grows until 2 blank columns separate them, and the rows follow the aspect. */
Test(mapping, scale_grows_until_boxes_side_by_side_keep_apart)
{
    two_boxes t;
    two_boxes_init(&t, 0, 50, 60, 50, (double[]){20, 50, 40, 50}, 2);
    t.nodes[0].label = "a_long_name_here";
    t.nodes[1].label = "another_long_one";
    gl_draw_opts o = {.cols_per_point = 0.2, .aspect = 2};
    gl_drawing *d = draw(&t.l, &o);
    const gl_cell_rect *a = &d->boxes[0], *b = &d->boxes[1];
    cr_expect_gt(d->sx, 0.2);
    cr_expect_geq(b->x - (a->x + a->w), 2, "blank columns between: %d", b->x - (a->x + a->w));
    cr_expect_float_eq(d->sy, d->sx / 2, 1e-9);
    cr_expect_eq(a->y, b->y, "one rank, one row");
    gl_drawing_free(d);
}

Test(mapping, labels_cut_to_the_configured_box_size)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 50, 20, (double[]){50, 90, 50, 30}, 2);
    t.nodes[0].label = "+ Conv\n/block/conv_long_name\nfloat[1,3]\nchanged: attr pads";
    gl_draw_opts o = {.cols_per_point = 0.2, .aspect = 2, .label_cols = 8, .label_lines = 2};
    gl_drawing *d = draw(&t.l, &o);
    const gl_cell_rect *r = &d->boxes[0];
    cr_expect_eq(r->w, 12);
    cr_expect_eq(r->h, 4);
    char *line1 = row_text(d->canvas, r->y + 1, r->x, r->w, -1);
    char *line2 = row_text(d->canvas, r->y + 2, r->x, r->w, -1);
    cr_expect_str_eq(line1, "│ + Conv   │");
    cr_expect_str_eq(line2, "│ …ng_name │", "paths keep their ends");
    free(line1);
    free(line2);
    gl_drawing_free(d);
}

Test(mapping, marks_and_kinds_choose_styles)
{
    two_boxes t;
    two_boxes_init(&t, 50, 100, 50, 20, (double[]){50, 90, 50, 30}, 2);
    t.nodes[0].mark = GL_MARK_ADDED;
    t.nodes[1].kind = GL_BOX_INPUT;
    t.nodes[1].id = UINT32_MAX;
    gl_drawing *d = draw(&t.l, NULL);
    const gl_cell *a = gl_canvas_cell_const(d->canvas, d->boxes[0].x + 2, d->boxes[0].y + 1);
    const gl_cell *b = gl_canvas_cell_const(d->canvas, d->boxes[1].x, d->boxes[1].y);
    cr_expect_eq(a->style, GL_STYLE_ADDED);
    cr_expect_eq(b->style, GL_STYLE_IO);
    cr_expect_eq(glyph(d->canvas, d->boxes[1].x, d->boxes[1].y), 0x256D, "inputs are rounded");
    cr_expect_eq(d->n_order, 2, "every box is in the reading order (inputs are stops too)");
    gl_drawing_free(d);
}

Test(mapping, odd_layouts_do_not_break_the_drawing)
{
    gl_layout empty = {0};
    gl_drawing *d = draw(&empty, NULL);
    cr_expect_eq(d->n_order, 0);
    gl_drawing_free(d);

    two_boxes t; /* a self loop and an edge between boxes drawn on top of each other */
    two_boxes_init(&t, 50, 50, 50, 50, (double[]){50, 50, 50, 50}, 2);
    t.edge.to = 0;
    d = draw(&t.l, NULL);
    cr_expect_not(d->edges[0].drawn, "a self loop");
    gl_drawing_free(d);
    t.edge.to = 1;
    d = draw(&t.l, NULL);
    cr_expect_not(d->edges[0].drawn, "boxes on top of each other");
    gl_drawing_free(d);

    two_boxes_init(&t, NAN, 50, INFINITY, -INFINITY, (double[]){NAN, 1, 2, NAN}, 2);
    d = draw(&t.l, NULL);
    gl_drawing_free(d);

    two_boxes_init(&t, 0, 0, 1e12, -1e12, (double[]){0, 0, 1e12, -1e12}, 2);
    gl_drawing *big = NULL;
    cr_expect_eq(gl_drawing_build(&t.l, NULL, &big), GL_ERR_UNSUPPORTED);
    cr_expect_null(big);
    cr_expect(strstr(gl_error_message(), "cells"), "message: %s", gl_error_message());
}

/* ---- real layouts ------------------------------------------------------------------- */

static bool on_border(const gl_cell_rect *r, int x, int y)
{
    bool inside = x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
    return inside && (x == r->x || x == r->x + r->w - 1 || y == r->y || y == r->y + r->h - 1);
}

static bool in_rect(const gl_cell_rect *r, int x, int y)
{
    return x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

static unsigned direction(int dx, int dy)
{
    return dx > 0 ? GL_LINE_RIGHT : dx < 0 ? GL_LINE_LEFT : dy > 0 ? GL_LINE_DOWN : GL_LINE_UP;
}

static unsigned opposite(unsigned dir)
{
    return dir == GL_LINE_UP ? GL_LINE_DOWN : dir == GL_LINE_DOWN ? GL_LINE_UP
           : dir == GL_LINE_LEFT ? GL_LINE_RIGHT : GL_LINE_LEFT;
}

static uint32_t arrow_char(unsigned dir)
{
    return dir == GL_LINE_DOWN ? 0x25BC : dir == GL_LINE_UP ? 0x25B2
           : dir == GL_LINE_RIGHT ? 0x25BA : 0x25C4;
}

/* Every edge: starts on its source's border, runs through 4-adjacent cells that carry
 * the line both ways and lie in no box, and ends in an arrowhead outside its target
 * pointing into it. */
static void check_edges(const gl_layout *l, const gl_drawing *d)
{
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_drawn_edge *e = &d->edges[i];
        const gl_cell_rect *src = &d->boxes[l->edges[i].from], *dst = &d->boxes[l->edges[i].to];
        cr_assert(e->drawn, "edge %zu (%zu -> %zu) not drawn", i, l->edges[i].from,
                  l->edges[i].to);
        cr_assert_geq(e->n_path, 3, "edge %zu: %zu cells", i, e->n_path);
        const int *p = e->path;
        size_t last = e->n_path - 1;
        cr_expect(on_border(src, p[0], p[1]), "edge %zu starts at (%d, %d), not on the border "
                  "of its source", i, p[0], p[1]);
        int ax = p[2 * last], ay = p[2 * last + 1];
        cr_expect(!in_rect(dst, ax, ay) && in_rect(dst, ax + (e->arrow == GL_LINE_RIGHT) -
                                                            (e->arrow == GL_LINE_LEFT),
                                                   ay + (e->arrow == GL_LINE_DOWN) -
                                                       (e->arrow == GL_LINE_UP)),
                  "edge %zu: the arrowhead at (%d, %d) does not point into its target", i,
                  ax, ay);
        cr_expect_eq(glyph(d->canvas, ax, ay), arrow_char(e->arrow), "edge %zu: arrowhead", i);
        for (size_t k = 0; k < last; k++) {
            int x0 = p[2 * k], y0 = p[2 * k + 1], x1 = p[2 * k + 2], y1 = p[2 * k + 3];
            cr_assert_eq(abs(x1 - x0) + abs(y1 - y0), 1, "edge %zu: cells %zu, %zu apart", i,
                         k, k + 1);
            const gl_cell *a = gl_canvas_cell_const(d->canvas, x0, y0);
            const gl_cell *b = gl_canvas_cell_const(d->canvas, x1, y1);
            unsigned dir = direction(x1 - x0, y1 - y0);
            cr_expect((a->lines & dir) && (b->lines & opposite(dir)),
                      "edge %zu: no line between (%d, %d) and (%d, %d)", i, x0, y0, x1, y1);
            cr_expect(k == 0 || a->box < 0, "edge %zu: (%d, %d) is in box %d", i, x0, y0,
                      a->box);
        }
    }
}

static void check_boxes_apart(const gl_drawing *d)
{
    for (size_t i = 0; i < d->n_boxes; i++) {
        const gl_cell_rect *a = &d->boxes[i];
        cr_expect(a->x >= 0 && a->y >= 0 && a->x + a->w <= d->canvas->width &&
                      a->y + a->h <= d->canvas->height, "box %zu off the canvas", i);
        for (size_t j = i + 1; j < d->n_boxes; j++) {
            const gl_cell_rect *b = &d->boxes[j];
            bool apart = a->x + a->w <= b->x || b->x + b->w <= a->x || a->y + a->h <= b->y ||
                         b->y + b->h <= a->y;
            cr_expect(apart, "boxes %zu and %zu overlap", i, j);
        }
    }
}

/* Compact boxes (issue 24): flat boxes one row high, "[ text ]", consecutive ranks three
 * rows apart (a row for bends, one for arrowheads); the edge's first cell reaches up to
 * its source (lines never enter a flat box), the rest as check_edges asks. */
static void check_flat_edges(const gl_layout *l, const gl_drawing *d)
{
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_drawn_edge *e = &d->edges[i];
        const gl_cell_rect *src = &d->boxes[l->edges[i].from], *dst = &d->boxes[l->edges[i].to];
        cr_assert(e->drawn && e->n_path >= 3, "edge %zu not drawn", i);
        const int *p = e->path;
        cr_expect(in_rect(src, p[0], p[1]) && !in_rect(src, p[2], p[3]),
                  "edge %zu leaves its source's row", i);
        const gl_cell *start = gl_canvas_cell_const(d->canvas, p[2], p[3]);
        cr_expect(start->lines & direction(p[0] - p[2], p[1] - p[3]),
                  "edge %zu: its first cell does not reach up to the box", i);
        size_t last = e->n_path - 1;
        int ax = p[2 * last], ay = p[2 * last + 1];
        cr_expect(in_rect(dst, ax, ay + 1) && e->arrow == GL_LINE_DOWN,
                  "edge %zu: the arrowhead at (%d, %d) is not right above its target", i, ax,
                  ay);
        cr_expect_eq(glyph(d->canvas, ax, ay), arrow_char(e->arrow), "edge %zu: arrowhead", i);
        for (size_t k = 1; k + 1 < last; k++) {
            const gl_cell *a = gl_canvas_cell_const(d->canvas, p[2 * k], p[2 * k + 1]);
            unsigned dir = direction(p[2 * k + 2] - p[2 * k], p[2 * k + 3] - p[2 * k + 1]);
            cr_expect((a->lines & dir) && a->box < 0, "edge %zu: broken at cell %zu", i, k);
        }
    }
}

/* Flat boxes in a Graphviz drawing (gl_draw_opts.flat; the view draws its compact boxes
 * on rails instead). */
Test(real, flat_boxes_are_one_row_each_and_every_edge_connected)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/conv_nhwc/model.onnx"), NULL, &m), GL_OK,
                 "%s", gl_error_message());
    gl_render_opts o = {.fold_constants = true, .one_line = true, .xlabels = true};
    gl_layout *l = NULL;
    cr_assert_eq(gl_render_layout(m->graph, &o, &l, NULL), GL_OK, "%s", gl_error_message());
    gl_drawing *d = draw(l, &(gl_draw_opts){.compact = true, .flat = true, .label_cols = 48,
                                            .no_edge_labels = true});
    for (size_t i = 0; i < l->n_nodes; i++) {
        const gl_cell_rect *r = &d->boxes[i];
        cr_expect_eq(r->h, 1, "box %zu: one row", i);
        char *row = row_text(d->canvas, r->y, r->x, r->w, -1);
        char *cursor = row_text(d->canvas, r->y, r->x, r->w, (int32_t)i);
        cr_expect(row[0] == '[' && row[strlen(row) - 1] == ']', "box %zu reads '%s'", i, row);
        cr_expect(strncmp(cursor, "\xE2\x96\xBA ", 4) == 0, "the cursor's box: '%s'", cursor);
        if (l->nodes[i].kind == GL_BOX_NODE)
            cr_expect(strstr(row, " \xC2\xB7 "), "op, then the name: '%s'", row);
        free(row);
        free(cursor);
    }
    /* ranks three rows apart: every box's row is one of them */
    int first = d->boxes[0].y;
    for (size_t i = 0; i < l->n_nodes; i++)
        cr_expect_eq((d->boxes[i].y - first) % 3, 0, "box %zu on row %d", i, d->boxes[i].y);
    check_flat_edges(l, d);
    check_boxes_apart(d);
    gl_drawing_free(d);
    gl_layout_free(l);
    gl_model_free(m);
}

/* A rail's marker: ● a node, ○ any other box. */
static bool is_marker(uint32_t ch) { return ch == 0x25CF || ch == 0x25CB; }

/* Every edge of a rails drawing runs from its tail's marker down its rail to its head's
 * row, then along that row to the head's marker, every cell between joined to the next. */
static void check_rail_edges(const gl_layout *l, const gl_drawing *d)
{
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_drawn_edge *e = &d->edges[i];
        const gl_cell_rect *src = &d->boxes[l->edges[i].from], *dst = &d->boxes[l->edges[i].to];
        cr_assert(e->drawn && e->n_path == 3, "edge %zu not drawn", i);
        const int *p = e->path;
        int x0 = p[0], y0 = p[1], y1 = p[3], x1 = p[4];
        cr_expect(y0 == src->y && y1 == dst->y && y0 < y1, "edge %zu: rows %d -> %d", i, y0, y1);
        cr_expect(is_marker(glyph(d->canvas, x0, y0)) && is_marker(glyph(d->canvas, x1, y1)),
                  "edge %zu: no marker at its ends", i);
        cr_expect(x0 < src->x && x1 < dst->x, "edge %zu: the rails are left of the text", i);
        for (int y = y0; y < y1; y++) {
            const gl_cell *a = gl_canvas_cell_const(d->canvas, x0, y);
            const gl_cell *b = gl_canvas_cell_const(d->canvas, x0, y + 1);
            cr_expect((a->lines & GL_LINE_DOWN) && (b->lines & GL_LINE_UP),
                      "edge %zu: its rail breaks at row %d", i, y);
        }
        int step = x1 > x0 ? 1 : -1;
        for (int x = x0; x != x1; x += step) {
            const gl_cell *a = gl_canvas_cell_const(d->canvas, x, y1);
            cr_expect(a->lines & (step > 0 ? GL_LINE_RIGHT : GL_LINE_LEFT),
                      "edge %zu: its join breaks at column %d", i, x);
        }
    }
}

Test(real, compact_boxes_are_one_row_each_and_every_edge_on_a_rail)
{
    static const char *const models[] = {"examples/conv_nhwc/model.onnx",
                                         "examples/transformer_block/model.onnx"};
    for (size_t k = 0; k < GL_ARRAY_LEN(models); k++) {
        gl_model *m = NULL;
        cr_assert_eq(gl_model_load(tu_src(models[k]), NULL, &m), GL_OK, "%s",
                     gl_error_message());
        gl_render_opts o = {.fold_constants = true, .one_line = true, .xlabels = true};
        gl_layout *l = NULL;
        cr_assert_eq(gl_render_layout(m->graph, &o, &l, NULL), GL_OK, "%s",
                     gl_error_message());
        gl_drawing *d = NULL;
        cr_assert_eq(gl_drawing_build_rails(l, &(gl_draw_opts){.label_cols = 48}, &d), GL_OK,
                     "%s", gl_error_message());
        bool *row_used = gl_xcalloc((size_t)d->canvas->height, sizeof(bool));
        for (size_t i = 0; i < l->n_nodes; i++) {
            const gl_cell_rect *r = &d->boxes[i];
            cr_expect_eq(r->h, 1, "%s: box %zu: one row", models[k], i);
            cr_assert(r->y >= 0 && r->y < d->canvas->height);
            cr_expect(!row_used[r->y], "%s: box %zu shares row %d", models[k], i, r->y);
            row_used[r->y] = true;
            char *row = row_text(d->canvas, r->y, r->x, r->w, -1);
            char *cursor = row_text(d->canvas, r->y, r->x, r->w, (int32_t)i);
            cr_expect(row[0] == '[' && row[strlen(row) - 1] == ']', "box %zu reads '%s'", i,
                      row);
            cr_expect(strncmp(cursor, "\xE2\x96\xBA ", 4) == 0, "the cursor's box: '%s'",
                      cursor);
            if (l->nodes[i].kind == GL_BOX_NODE)
                cr_expect(strstr(row, " \xC2\xB7 "), "op, then the name: '%s'", row);
            free(row);
            free(cursor);
        }
        /* one box per row, no row left blank between the first and the last */
        for (size_t i = 0; i < d->n_order; i++)
            cr_expect_eq(d->boxes[d->order[i]].y, d->boxes[d->order[0]].y + (int)i,
                         "%s: box %zu of the reading order", models[k], i);
        check_rail_edges(l, d);
        free(row_used);
        gl_drawing_free(d);
        gl_layout_free(l);
        gl_model_free(m);
    }
}

/* The text of line k of box i. */
static char *box_line(const gl_drawing *d, size_t i, int k)
{
    const gl_cell_rect *r = &d->boxes[i];
    return row_text(d->canvas, r->y + 1 + k, r->x + 2, r->w - 4, -1);
}

Test(real, conv_nhwc_every_node_boxed_every_edge_connected)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/conv_nhwc/model.onnx"), NULL, &m), GL_OK,
                 "%s", gl_error_message());
    gl_layout *l = NULL;
    gl_render_info info;
    cr_assert_eq(gl_render_layout(m->graph, NULL, &l, &info), GL_OK, "%s", gl_error_message());
    gl_drawing *d = draw(l, NULL);

    const gl_node *n;
    size_t nodes = 0;
    gl_foreach_node(m->graph, i, n) {
        nodes++;
        long box = -1;
        for (size_t b = 0; b < l->n_nodes && box < 0; b++)
            if (l->nodes[b].kind == GL_BOX_NODE && l->nodes[b].id == n->id)
                box = (long)b;
        cr_assert_geq(box, 0, "no box for node '%s'", n->name);
        char *op = box_line(d, (size_t)box, 0), *name = box_line(d, (size_t)box, 1);
        cr_expect_eq(strncmp(op, n->op_type, strlen(n->op_type)), 0,
                     "box of '%s' reads '%s', not its op %s", n->name, op, n->op_type);
        cr_expect_eq(strncmp(name, n->name, strlen(n->name)), 0, "box of '%s' reads '%s'",
                     n->name, name);
        free(op);
        free(name);
    }
    cr_expect_eq(d->n_order, l->n_nodes, "every box in the reading order");
    cr_expect_gt(l->n_edges, nodes - 1);
    check_edges(l, d);
    check_boxes_apart(d);
    gl_drawing_free(d);
    gl_layout_free(l);
    gl_model_free(m);
}

/* The graph laid out the way the view asks for it (constants folded into their readers),
 * against a changed copy: the marks the SVG shows are in the boxes' text and styles. */
Test(real, diff_marks_show_as_text_and_style)
{
    gl_model *before = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/conv_nhwc/model.onnx"), NULL, &before), GL_OK,
                 "%s", gl_error_message());
    gl_model *after = gl_model_clone(before);
    gl_node *relu = gl_find_node(after->graph, "relu2");
    cr_assert_not_null(relu);
    gl_node *extra = tu_node(after->graph, "Relu", "extra_relu", 1, relu->outputs[0]);
    cr_assert_not_null(extra);
    gl_diff *diff = gl_diff_graphs(before->graph, after->graph, GL_DIFF_MATCH_IDS);
    cr_assert_not_null(diff);

    gl_render_opts o = {.diff = diff, .fold_constants = true};
    gl_layout *l = NULL;
    cr_assert_eq(gl_render_layout(after->graph, &o, &l, NULL), GL_OK, "%s", gl_error_message());
    gl_drawing *d = draw(l, NULL);
    size_t marked = 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        if (l->nodes[i].mark != GL_MARK_ADDED)
            continue;
        marked++;
        cr_expect_eq(l->nodes[i].id, extra->id);
        char *line = box_line(d, i, 0);
        cr_expect_eq(strncmp(line, "+ Relu", 6), 0, "added box reads '%s'", line);
        free(line);
        const gl_cell *cell = gl_canvas_cell_const(d->canvas, d->boxes[i].x, d->boxes[i].y);
        cr_expect_eq(cell->style, GL_STYLE_ADDED);
    }
    cr_expect_eq(marked, 1);
    check_edges(l, d);
    check_boxes_apart(d);
    gl_drawing_free(d);
    gl_layout_free(l);
    gl_diff_free(diff);
    gl_model_free(after);
    gl_model_free(before);
}

/* A neighbourhood of a bigger graph: stubs ("... N more") and dashed edges to them. */
Test(real, neighbourhood_with_stubs)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/transformer_block/model.onnx"), NULL, &m),
                 GL_OK, "%s", gl_error_message());
    const gl_node *focus = NULL, *n;
    gl_foreach_node(m->graph, i, n) {
        if (!focus && i == m->graph->n_nodes / 2)
            focus = n;
    }
    cr_assert_not_null(focus);
    gl_render_opts o = {.max_nodes = 16, .focus = focus->name, .radius = 1,
                        .fold_constants = true};
    gl_layout *l = NULL;
    gl_render_info info;
    cr_assert_eq(gl_render_layout(m->graph, &o, &l, &info), GL_OK, "%s", gl_error_message());
    cr_assert(info.reduced, "%s", info.note);
    gl_drawing *d = draw(l, NULL);
    check_edges(l, d);
    check_boxes_apart(d);
    gl_drawing_free(d);
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- the view, headless ---------------------------------------------------------------- */

typedef struct test_screen {
    FILE *out, *in;
    SCREEN *screen;
} test_screen;

static void screen_open(test_screen *s, int rows, int cols)
{
    setlocale(LC_ALL, "C.UTF-8");
    s->out = fopen("/dev/null", "w");
    s->in = fopen("/dev/null", "r");
    s->screen = newterm("xterm", s->out, s->in);
    cr_assert(s->screen, "no terminfo for xterm");
    set_term(s->screen);
    resize_term(rows, cols);
}

static void screen_close(test_screen *s)
{
    endwin();
    delscreen(s->screen);
    fclose(s->out);
    fclose(s->in);
}

/* Screen row y as UTF-8 (malloc'd). */
static char *screen_row(int y)
{
    wchar_t wide[512];
    int n = mvinnwstr(y, 0, wide, (int)GL_ARRAY_LEN(wide) - 1);
    cr_assert_geq(n, 0);
    wide[n] = 0;
    char *out = malloc(4 * (size_t)n + 1);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)gl_utf8_encode((uint32_t)wide[i], out + len);
    out[len] = '\0';
    return out;
}

/* The whole screen as one string, rows joined by '\n' (malloc'd). */
static char *screen_text(void)
{
    size_t len = 0;
    char *all = NULL;
    for (int y = 0; y < LINES; y++) {
        char *row = screen_row(y);
        size_t n = strlen(row);
        all = realloc(all, len + n + 2);
        memcpy(all + len, row, n);
        len += n;
        all[len++] = '\n';
        all[len] = '\0';
        free(row);
    }
    return all;
}

static void open_model(gl_ui *ui, gl_model *m, const char *passes)
{
    gl_pass_step *plan = NULL;
    size_t n_plan = 0;
    cr_assert_eq(gl_pass_list_parse(passes, &plan, &n_plan), GL_OK, "%s", gl_error_message());
    gl_pipeline *p = NULL;
    cr_assert_eq(gl_pipeline_run(m, plan, n_plan, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &p), GL_OK,
                 "%s", gl_error_message());
    free(plan);
    gl_ui_init(ui, "model.onnx");
    ui->sync_jobs = true;
    ui->utf8 = true;
    gl_ui_set_pipeline(ui, p, NULL);
}

static void draw_graph(gl_ui *ui)
{
    erase();
    gl_view *v = gl_ui_view(ui);
    cr_assert_str_eq(v->ops->name, "graph");
    v->ops->draw(ui, v, 0, 0, LINES, COLS);
}

static const gl_node *selected_node(const gl_ui *ui)
{
    return gl_graph_index_node(&ui->index, ui->sel.node_id);
}

/* The rows of the screen holding the heavy (cursor) box: its text must name `n`. */
static void expect_cursor_on(const char *screen, const gl_node *n)
{
    const char *top = strstr(screen, "┏");
    cr_assert_not_null(top, "no cursor box on screen:\n%s", screen);
    const char *op = strstr(top, n->op_type), *name = strstr(top, n->name);
    const char *bottom = strstr(top, "┗");
    cr_expect(op && bottom && op < bottom, "the cursor box is not a %s:\n%s", n->op_type, screen);
    cr_expect(name && bottom && name < bottom, "the cursor box is not '%s':\n%s", n->name,
              screen);
}

Test(view, shows_the_step_and_moves_the_selection_box_to_box)
{
    gl_model *m = NULL;
    cr_assert_eq(gl_model_load(tu_src("examples/conv_nhwc/model.onnx"), NULL, &m), GL_OK);
    gl_ui ui;
    open_model(&ui, m, "all");
    test_screen scr;
    screen_open(&scr, 40, 120);
    gl_ui_request(&ui, GL_REQ_VIEW_GRAPH);
    draw_graph(&ui);
    char *text = screen_text();
    cr_expect(strstr(text, "graph 00-input: "), "header:\n%s", text);
    cr_expect(strstr(text, "▼"), "arrowheads:\n%s", text);
    expect_cursor_on(text, selected_node(&ui));
    free(text);

    const gl_node *first = selected_node(&ui);
    gl_ui_request(&ui, GL_REQ_BOX_NEXT);
    const gl_node *second = selected_node(&ui);
    cr_assert(second && second != first, "J moves the selection");
    draw_graph(&ui);
    text = screen_text();
    expect_cursor_on(text, second);
    free(text);
    gl_ui_request(&ui, GL_REQ_BOX_PREV);
    cr_expect_eq(selected_node(&ui), first, "K comes back");
    gl_ui_request(&ui, GL_REQ_BOTTOM);
    cr_expect_str_eq(selected_node(&ui)->name, "output_to_nhwc", "G: the last box");
    gl_ui_request(&ui, GL_REQ_TOP);
    cr_expect_eq(selected_node(&ui), first, "g: the first box");

    /* n: the next node matching the search, in graph order */
    snprintf(ui.search, sizeof(ui.search), "maxpool");
    cr_assert(gl_ui_view(&ui)->ops->find(&ui, gl_ui_view(&ui), 1, false));
    cr_expect_str_eq(selected_node(&ui)->op_type, "MaxPool");

    /* a step with changes: the marks of the SVG, as text */
    gl_ui_request(&ui, GL_REQ_STEP_NEXT);
    while (ui.step + 1 < ui.pipeline->n_steps && !ui.pipeline->steps[ui.step].changed)
        gl_ui_request(&ui, GL_REQ_STEP_NEXT);
    cr_assert(ui.pipeline->steps[ui.step].changed);
    draw_graph(&ui);
    text = screen_text();
    char label[96];
    gl_snapshot_label(ui.pipeline, ui.step, label, sizeof(label));
    cr_expect(strstr(text, label), "the header names step %s:\n%s", label, text);
    free(text);

    /* Enter opens the node under the cursor */
    gl_ui_request(&ui, GL_REQ_VIEW_GRAPH);
    const gl_node *cursor = selected_node(&ui);
    gl_ui_request(&ui, GL_REQ_ENTER);
    cr_expect_str_eq(gl_ui_view(&ui)->ops->name, "detail");
    cr_expect_eq(selected_node(&ui), cursor);
    gl_ui_request(&ui, GL_REQ_BACK);
    cr_expect_str_eq(gl_ui_view(&ui)->ops->name, "graph");
    screen_close(&scr);
    gl_ui_free(&ui);
}

/* A chain of 600 nodes: past the box limit, so the view lays out the selection's
 * neighbourhood; a selection made elsewhere gets its own, and the radius grows it. */
static void open_chain(gl_ui *ui, int n_nodes);

Test(view, big_graphs_show_the_neighbourhood_of_the_selection)
{
    gl_ui ui;
    open_chain(&ui, 600);
    test_screen scr;
    screen_open(&scr, 40, 120);
    gl_ui_request(&ui, GL_REQ_VIEW_GRAPH);
    draw_graph(&ui);
    char *text = screen_text();
    cr_expect(strstr(text, "hops of 'relu_0'") && strstr(text, "(fits"),
              "a neighbourhood, its radius chosen:\n%s", text);
    free(text);
    /* < and > leave the automatic radius: down to 1, then up to 2 */
    for (int i = 0; i < 12 && !strstr(ui.status, "1-9"); i++)
        gl_ui_request(&ui, GL_REQ_RADIUS_LESS);
    gl_ui_request(&ui, GL_REQ_RADIUS_MORE);
    cr_expect(strstr(ui.status, "neighbourhood radius 2"), "%s", ui.status);

    gl_node *far = gl_find_node(ui.pipeline->steps[0].model->graph, "relu_300");
    cr_assert_not_null(far);
    gl_ui_select_node(&ui, far->id); /* as the node list would */
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "within 2 hops of 'relu_300'"), "follows the selection:\n%s", text);
    cr_expect(strstr(text, "relu_298") && strstr(text, "relu_302"), "two hops each way:\n%s",
              text);
    cr_expect_not(strstr(text, "relu_297"), "not three:\n%s", text);
    expect_cursor_on(text, far);
    free(text);

    gl_ui_request(&ui, GL_REQ_BOX_NEXT); /* inside the drawing: no new layout */
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "within 2 hops of 'relu_300'"), "same layout:\n%s", text);
    expect_cursor_on(text, selected_node(&ui));
    free(text);

    gl_ui_request(&ui, GL_REQ_RADIUS_MORE);
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "within 3 hops of 'relu_301'"), "radius 3:\n%s", text);
    free(text);
    for (int i = 0; i < 5; i++)
        gl_ui_request(&ui, GL_REQ_RADIUS_LESS);
    cr_expect(strstr(ui.status, "1-9"), "the radius stays within bounds: %s", ui.status);

    snprintf(ui.search, sizeof(ui.search), "relu_550");
    cr_assert(gl_ui_view(&ui)->ops->find(&ui, gl_ui_view(&ui), 1, false));
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "within 1 hop of 'relu_550'"), "search jumps there:\n%s", text);
    free(text);
    screen_close(&scr);
    gl_ui_free(&ui);
}

/* A chain of `n` Relus relu_0 .. relu_{n-1} from input x, in a workbench on step 0. */
static void open_chain(gl_ui *ui, int n_nodes)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *n = NULL;
    for (int i = 0; i < n_nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "relu_%d", i);
        n = tu_node(m->graph, "Relu", name, 1, n ? n->outputs[0] : x);
    }
    tu_output(m->graph, n->outputs[0]);
    open_model(ui, m, "none");
}

static void select_named(gl_ui *ui, const char *name)
{
    gl_node *n = gl_find_node(ui->pipeline->steps[0].model->graph, name);
    cr_assert_not_null(n, "%s", name);
    gl_ui_select_node(ui, n->id);
}

/* Issue 12: on a 140x45 terminal the default neighbourhood fits the screen and shows
 * more than 3 nodes (the radius is chosen, the ranks drawn compactly); every box is a
 * stop for J/K; Enter on "... N more" widens that side; { and } move to the producer
 * and the consumer. */
Test(view, default_neighbourhood_fits_the_screen_and_boxes_are_stops)
{
    gl_ui ui;
    open_chain(&ui, 600);
    test_screen scr;
    screen_open(&scr, 45, 140);
    select_named(&ui, "relu_300");
    gl_ui_request(&ui, GL_REQ_VIEW_GRAPH);
    draw_graph(&ui);
    char *text = screen_text();
    cr_expect(strstr(text, "fits the screen"), "an automatic radius:\n%s", text);
    static const char *const near[] = {"relu_298", "relu_299", "relu_300", "relu_301",
                                       "relu_302"};
    for (size_t i = 0; i < GL_ARRAY_LEN(near); i++)
        cr_expect(strstr(text, near[i]), "%s on the screen:\n%s", near[i], text);
    expect_cursor_on(text, selected_node(&ui));
    free(text);

    /* } and { : consumer and producer, one key each */
    gl_ui_request(&ui, GL_REQ_CONSUMER);
    cr_expect_str_eq(selected_node(&ui)->name, "relu_301");
    gl_ui_request(&ui, GL_REQ_PRODUCER);
    gl_ui_request(&ui, GL_REQ_PRODUCER);
    cr_expect_str_eq(selected_node(&ui)->name, "relu_299");
    draw_graph(&ui);
    text = screen_text();
    expect_cursor_on(text, selected_node(&ui));
    free(text);

    /* J past the last node reaches the "... N more" box below; Enter draws what it hid */
    gl_ui_request(&ui, GL_REQ_BOTTOM);
    const char *last = selected_node(&ui)->name;
    char last_name[32];
    snprintf(last_name, sizeof(last_name), "%s", last);
    gl_ui_request(&ui, GL_REQ_BOX_NEXT);
    draw_graph(&ui);
    text = screen_text();
    const char *cursor = strstr(text, "┏");
    cr_assert_not_null(cursor, "%s", text);
    cr_expect(strstr(cursor, "more") && strstr(cursor, "more") < strstr(cursor, "┗"),
              "the cursor is on the \"... N more\" box:\n%s", text);
    cr_expect_str_eq(selected_node(&ui)->name, last_name, "the selection stays a node");
    free(text);
    gl_ui_request(&ui, GL_REQ_ENTER);
    cr_expect(strstr(ui.status, "consumers of"), "%s", ui.status);
    int k = atoi(last_name + 5);
    char next[32];
    snprintf(next, sizeof(next), "relu_%d", k + 1);
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, next), "widened: %s drawn:\n%s", next, text);
    free(text);

    /* the input box is a stop too, and Enter there says what it is */
    select_named(&ui, "relu_0");
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "input: x"), "the input drawn:\n%s", text);
    free(text);
    gl_ui_request(&ui, GL_REQ_BOX_PREV);
    gl_ui_request(&ui, GL_REQ_ENTER);
    cr_expect(strstr(ui.status, "input: x"), "%s", ui.status);
    gl_ui_request(&ui, GL_REQ_PRODUCER);
    cr_expect(strstr(ui.status, "no node produces"), "%s", ui.status);
    screen_close(&scr);
    gl_ui_free(&ui);
}

/* Opened on a decision's nodes (ui->marks, as Enter on a decision leaves them), the
 * neighbourhood holds all of them and the viewport shows them together. */
Test(view, a_decisions_nodes_are_drawn_and_centred_together)
{
    gl_ui ui;
    open_chain(&ui, 600);
    test_screen scr;
    screen_open(&scr, 45, 140);
    const gl_graph *g = ui.pipeline->steps[0].model->graph;
    ui.marks = malloc(2 * sizeof(*ui.marks));
    ui.marks[0] = gl_find_node(g, "relu_400")->id;
    ui.marks[1] = gl_find_node(g, "relu_402")->id;
    ui.n_marks = 2;
    gl_ui_select_node(&ui, ui.marks[0]);
    gl_ui_request(&ui, GL_REQ_VIEW_GRAPH);
    draw_graph(&ui);
    char *text = screen_text();
    cr_expect(strstr(text, "relu_400") && strstr(text, "relu_402"), "both on screen:\n%s",
              text);
    expect_cursor_on(text, selected_node(&ui));
    free(text);
    gl_ui_request(&ui, GL_REQ_CONSUMER); /* off the marks, inside the drawing */
    draw_graph(&ui);
    text = screen_text();
    cr_expect(strstr(text, "relu_400") && strstr(text, "relu_402"), "still both:\n%s", text);
    cr_expect(strstr(text, "hop of 'relu_400'"), "no new layout for a move:\n%s", text);
    free(text);
    screen_close(&scr);
    gl_ui_free(&ui);
}

static size_t boxes_of_kind(const gl_layout *l, gl_render_box_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        n += l->nodes[i].kind == kind;
    return n;
}

/* A constant read by two nodes: a copy beside each reader by default (SVGs of whole
 * graphs), one box wired to both with shared_once (the terminal view). */
Test(real, a_shared_constant_is_drawn_once_in_the_view)
{
    gl_model *m = tu_model(13);
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_value *c = tu_const_f32(m->graph, "c", 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
    gl_node *a = tu_node(m->graph, "Add", "a", 2, x, c);
    gl_node *b = tu_node(m->graph, "Add", "b", 2, a->outputs[0], c);
    tu_output(m->graph, b->outputs[0]);
    for (int once = 0; once < 2; once++) {
        gl_render_opts o = {.fold_constants = true, .shared_once = once};
        gl_layout *l = NULL;
        cr_assert_eq(gl_render_layout(m->graph, &o, &l, NULL), GL_OK, "%s", gl_error_message());
        cr_expect_eq(boxes_of_kind(l, GL_BOX_CONSTANT), once ? 1 : 2, "shared_once %d", once);
        size_t from_constant = 0;
        for (size_t i = 0; i < l->n_edges; i++)
            from_constant += l->nodes[l->edges[i].from].kind == GL_BOX_CONSTANT;
        cr_expect_eq(from_constant, 2, "an edge to each reader (shared_once %d)", once);
        gl_layout_free(l);
    }
    gl_model_free(m);
}
