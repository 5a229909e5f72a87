/* stages.h — what the stages of a render share, inside src/render (render.h is the API).
 *
 *   1. choose.c   what to draw: the whole graph, constants folded, a neighbourhood of the
 *                 focus, or groups, so that the drawing needs at most max_nodes boxes;
 *   2. view.c     the view: boxes with display text and merged edges, no Graphviz yet;
 *   3. dot.c      the view as DOT text (gl_rv_make_dot runs 1-3);
 *   4. graphviz.c the DOT laid out and drawn as SVG in a forked child under a deadline;
 *      layout.c   the same layout as coordinates for the terminal view.
 *   text.c holds the display text every stage uses; cost.c predicts what a layout costs,
 *   which stage 1 uses to keep every drawing quick to lay out.
 */
#ifndef GL_RENDER_STAGES_H
#define GL_RENDER_STAGES_H

#include "render/render.h"
#include "util/deadline.h"
#include "util/hash.h"
#include "util/strbuf.h"

#include <graphviz/gvc.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NAME_DISPLAY_MAX 60   /* characters of a name shown before cutting the middle */
#define NO_BOX UINT32_MAX

/* ---- display text (text.c) ---- */

/* "20,000": counts in notes are read by people. */
const char *gl_rv_count(char buf[32], size_t n);
/* Sanitized display text, cut in the middle ("abc…xyz") past `max_chars` characters. */
void gl_rv_put_display(gl_strbuf *b, const char *s, size_t max_chars);
void gl_rv_put_name(gl_strbuf *b, const char *s); /* NAME_DISPLAY_MAX characters */
void gl_rv_put_type(gl_strbuf *t, const gl_type *type);
/* A DOT double-quoted string for display text whose lines are separated by '\n'. */
void gl_rv_put_dot_string(gl_strbuf *b, const char *text);
void gl_rv_put_number(gl_strbuf *b, double v); /* %.4g whatever the locale */

/* ---- a node's key attributes (attrs.c) ---- */

/* " perm=[0,2,3,1]", " k=3x3 s=2 g=32", " shape=[1,16,256]": what a box shows after the
 * op, from one table of ops and attributes (or constant inputs); defaults left out,
 * nothing for ops without a row. */
void gl_rv_put_key_attrs(gl_strbuf *b, const gl_node *n);

/* ---- what the caller asked for (choose.c) ---- */

typedef struct settings {
    size_t max_boxes;
    int radius;
    bool fold_constants;
    const char *focus;
    const char *const *also;
    size_t n_also;
    const gl_render_widen *widen;
    size_t n_widen;
    bool shared_once;
    bool xlabels;
    bool one_line;
    bool legend;           /* the colour legend and the ghosts of removed nodes */
    const char *title;
    const gl_diff *diff;
    const char *emergency; /* why the drawing must be small: a layout ran out of time;
                            * NULL normally */
} settings;

settings gl_rv_resolve_opts(const gl_render_opts *o);

/* ---- the view: boxes and edges, before any Graphviz (view.c) ---- */

typedef struct vbox {
    gl_render_box_kind kind;
    gl_render_mark mark;
    uint32_t node_id; /* UINT32_MAX unless kind == GL_BOX_NODE */
    bool focus;
    char *text;       /* display lines separated by '\n' (owned) */
} vbox;

typedef struct vedge {
    uint32_t from, to;
    uint32_t key;            /* value id + 1 when edges are per value, else 0 */
    bool implicit;           /* a subgraph of the consumer reads the value */
    bool dashed;             /* implicit, or a stub edge */
    const gl_value *first;   /* labels the edge; NULL: unlabelled */
    uint32_t last_value;     /* for counting distinct values */
    uint32_t n_values, n_slots;
} vedge;

typedef struct view {
    vbox *boxes;
    size_t n_boxes, cap_boxes;
    vedge *edges;
    size_t n_edges, cap_edges;
    gl_index_map edge_index;
    char note[256];
    bool reduced;
    size_t left_out;     /* input, constant, output and stub boxes not drawn: the box limit */
    bool xlabels;        /* edge labels as xlabels (placed after the layout) */
    bool always_xlabels; /* settings.xlabels: whatever the size */
    bool bounded_effort; /* dot's iterations limited (nslimit, nslimit1, mclimit) */
} view;

void gl_rv_view_free(view *v);
/* settings.one_line: every box keeps only its first line. */
void gl_rv_view_one_line(view *v);
/* The label of an edge: the value's type, "x2" for repeated reads, "N values" between
 * groups; nothing for unlabelled edges. */
void gl_rv_edge_label(const vedge *e, gl_strbuf *b);
/* The "+ ", "~ ", "> " that starts the text of a changed box (dot.c, with the styles). */
const char *gl_rv_mark_prefix(gl_render_mark m);

/* A value of this graph we can index arrays with (callers may pass odd graphs). */
static inline bool gl_rv_value_of(const gl_graph *g, const gl_value *v)
{
    return v && v->graph == g && v->index < g->n_values && g->values[v->index] == v;
}

static inline bool gl_rv_node_of(const gl_graph *g, const gl_node *n)
{
    return n && n->graph == g && n->index < g->n_nodes && g->nodes[n->index] == n;
}

/* By node index: the distinct readers of each constant node (0 for other nodes). */
uint32_t *gl_rv_count_node_sharers(const gl_graph *g);
/* Every kept node (keep: by node index, NULL: all) as its own box; fold_all folds every
 * constant; stubs adds "... N more" where edges are cut. */
void gl_rv_build_node_view(const gl_graph *g, const settings *set,
                           const gl_node_change **change_of, const bool *keep, bool fold_all,
                           bool stubs, view *v);

typedef struct grouping {
    uint32_t *gid;         /* by node index; NO_BOX for holes */
    size_t n_groups;
    const char **key;      /* prefix groups: key text (not NUL-terminated) */
    size_t *key_len;
    size_t cap;
    size_t chunk;          /* chunk groups: nodes per chunk (0 for prefix groups) */
} grouping;

void gl_rv_build_group_view(const gl_graph *g, const settings *set,
                            const gl_node_change **change_of, const grouping *gr, bool draw_io,
                            view *v);

/* ---- what dot's layout costs (cost.c) ---- */

typedef struct layout_cost {
    size_t boxes, edges;
    uint64_t ranks;         /* estimated */
    uint64_t virtual_nodes; /* estimated: edge lengths in ranks, less one each */
    uint64_t work;          /* boxes x (boxes + virtual) + a weight x virtual */
} layout_cost;

/* The estimate for laying out v; `labelled_edges`: edges carry labels (not xlabels). */
layout_cost gl_rv_layout_cost(const view *v, bool labelled_edges);

/* ---- choosing (choose.c) ---- */

/* By node index: the diff's change of each node (NULL entries: unchanged); NULL when the
 * diff has no node changes. */
const gl_node_change **gl_rv_index_changes(const gl_graph *g, const gl_diff *d);
/* The whole graph if it fits in boxes and in layout work, else folded constants, else a
 * neighbourhood, else groups; sets the view's xlabels and bounded_effort. */
void gl_rv_choose_view(const gl_graph *g, const settings *set, const gl_node_change **ch,
                       view *v);
/* Edge labels and dot's effort for laying out v: labels become xlabels past 400 boxes or
 * when labelled edges (a rank each) would make the layout expensive, and the effort is
 * bounded when the work is past a threshold. Returns the work with those choices. */
uint64_t gl_rv_plan_layout(view *v);
/* The focus node gets a thick border wherever it is drawn as itself. */
void gl_rv_mark_focus(view *v, const gl_node *focus);

/* ---- DOT (dot.c) ---- */

/* The DOT text of a view (malloc'd, NUL-terminated, *len bytes). */
char *gl_rv_print_dot(const view *v, const settings *set, size_t *len);

/* Choose, build and print: the one path every public function starts from. *v is the
 * view that was printed (free it with gl_rv_view_free). `emergency` (NULL normally) says
 * why a small collapsed drawing is wanted: a layout of the normal one ran out of time. */
gl_status gl_rv_make_dot(const gl_graph *g, const gl_render_opts *o, const char *emergency,
                         view *v, char **dot, size_t *len, gl_render_info *info);

/* ---- Graphviz (graphviz.c) ---- */

typedef struct gv_session {
    GVC_t *gvc;
    Agraph_t *graph;
    bool laid_out;
    agusererrf old_errf;
} gv_session;

/* Parse our DOT text and run the dot layout, holding the Graphviz lock. On failure the
 * session is closed. */
gl_status gl_rv_gv_open(gv_session *s, const char *dot);
void gl_rv_gv_close(gv_session *s);
/* What a Graphviz job gets: the DOT text and the view it was printed from. */
typedef struct gv_work {
    const char *dot;
    const view *v;
} gv_work;

/* Choose and print the drawing of g (*v, *dot: the caller frees both, also on failure)
 * and run fn (a job on a gv_work) in a forked child: the drawing gets two thirds of the
 * time limit; when that runs out, a small collapsed drawing (gl_rv_make_dot's emergency)
 * gets what is left. A crash or a Graphviz error is not retried. Messages name the
 * graph; running out of time altogether is GL_ERR_UNSUPPORTED "graph 'g': Graphviz
 * layout took longer than 15 s (N boxes); ...". */
gl_status gl_rv_lay_out(const gl_graph *g, const gl_render_opts *o, gl_deadline_fn fn, view *v,
                        char **dot, char **bytes, size_t *len, gl_render_info *info);

#endif
