/* render.h — a graph snapshot as a Graphviz document (cgraph + gvc in-process).
 *
 * Nodes are boxes "op / name / output shapes" (one line each); edges carry the shape of the
 * value they carry, one edge per (value, consumer) with "x2" when a node reads a value
 * twice; initializers are small boxes, or lines inside the consumer's box when
 * fold_constants is set (only constants read by that one node); graph inputs/outputs are
 * ellipses "input: x" / "output: y".
 *
 * Shared constant sources are drawn once per reader: an initializer constant (not a
 * graph input or output), or a Constant node (default domain, no inputs, outputs neither
 * graph outputs nor read by subgraphs), read by more than one distinct node gets one box
 * beside each reader, with the edge to that reader only and an extra line "shared by N"
 * so the sharing stays visible. One source wired across the whole graph makes dot's
 * layout run for many minutes and is unreadable anyway. Copies of a Constant node are
 * node boxes carrying its id and diff mark; a neighbourhood view does not walk through
 * such a node (its copies come with the readers that are drawn), and a collapsed view
 * drops its edges as it does for folded constants. Against a diff, added nodes are green and labelled "+ ", modified amber
 * "~ " (with "changed: attr pads, ..."), replacements blue "> " with a line
 * "replaces: 'c1', 'r1'" — the marks are textual too, never colour alone; removed nodes
 * are listed in the graph label (first 10, then "+N more") and drawn as ghosts: dashed
 * grey boxes "- Op / name" in a cluster "removed by this step" (the first 40, then one
 * box "+N more"), so a reader of the SVG sees what went away. A legend cluster says what
 * each fill colour of the drawing means (only the colours used). Neither is in
 * gl_render_layout's layout (the terminal view), nor with no_legend.
 *
 * A node box's first line is its op and its key attributes (attrs.c: one table of ops
 * and attributes, defaults left out): "Transpose perm=[0,2,3,1]", "Conv k=3x3 s=2 g=32",
 * "Reshape shape=[1,16,256]" (a constant input), "Cast to=float16".
 *
 * Labels are plain quoted strings, not HTML-like or record labels: Graphviz 2.42 leaks
 * every HTML text span and every record field at layout time, plain labels do not.
 * Names are shown as valid UTF-8 with control characters and invalid bytes spelled
 * "\xNN" (and '&' before an entity-like "&name;" too, which Graphviz would otherwise
 * decode or pass raw into the SVG); names longer than 60 characters are cut in the middle.
 * Output is deterministic: the same graph and options give byte-identical DOT.
 *
 * Drawings of more than 400 boxes, or whose labelled edges would make the layout slow,
 * carry edge labels as xlabels (placed after layout): dot lays them out about 3x faster.
 *
 * Big graphs: max_nodes bounds every kind of box (nodes, groups, inputs, outputs,
 * constants, stubs). When the full drawing would need more boxes, constants are folded
 * first; if that is not enough the render shows the neighbourhood of `focus` (`radius`
 * hops over producer/consumer edges, "... N more" stubs at the cut), or collapses nodes
 * into groups by name prefix ("/layer1/conv/Conv" -> "layer1") at the deepest prefix
 * depth that fits, or — when names carry no usable prefix — into chunks of consecutive
 * nodes in graph order (a group of one is drawn as the node itself). Reduced views fold
 * every constant. Where even they have more inputs, constants or outputs than fit, the
 * rest are left out ("... N more inputs" above a node) and counted in the note.
 *
 * Renders degrade instead of failing: the work of dot's layout is estimated from the
 * drawing before running it (boxes, and the virtual nodes of edges that span many ranks:
 * a DenseNet's dense blocks make ~50 per box). Past a first threshold dot's effort is
 * bounded (nslimit=1, nslimit1=1, mclimit=0.1 in the DOT itself); past a second one the
 * drawing gets fewer boxes: constants folded, then the collapsed view with fewer and
 * fewer groups. Each step is said in info->note and in the graph label (the SVG's title
 * line). The choice depends on the graph only, never on the machine's load.
 *
 * Time bound: the layout (SVG and gl_render_layout) runs in a forked child process that
 * sends its result back through a pipe; the chosen drawing gets two thirds of timeout_ms,
 * and if it runs out the child is killed and a collapsed drawing of at most 60 boxes gets
 * the rest (its note says why). When that too runs out the call fails with
 * GL_ERR_UNSUPPORTED, "graph 'g': Graphviz layout took longer than 15 s (N boxes); use a
 * focus or a smaller max_nodes". A crashing layout is an error naming the signal, not a
 * crash of ours. No child outlives the call. If no process can be forked the layout runs
 * in-process, unbounded. gl_render_dot does not call Graphviz at all.
 *
 * Thread safety: Graphviz keeps global state (parser, error hooks, dot internals), so
 * every call into it holds one process-wide mutex (in the child; the parent holds it
 * only across fork); each call makes its own small context (gvContextPlugins with only
 * the dot layout and core plugins: ~0.1 ms, no fontconfig). The forking thread waits
 * for its child, and the child dies with it (Linux: PR_SET_PDEATHSIG).
 */
#ifndef GL_RENDER_H
#define GL_RENDER_H

#include "diff/diff.h"
#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A neighbourhood widened at one node: its producers and/or consumers left out are drawn
 * (they bring their own "... N more" boxes). */
typedef struct gl_render_widen {
    const char *node;
    bool producers, consumers;
} gl_render_widen;

typedef struct gl_render_opts {
    const gl_diff *diff;   /* marks against the previous snapshot; NULL: none */
    size_t max_nodes;      /* most boxes to lay out; 0: default 1500; below 16 counts as 16 */
    const char *focus;     /* node name for the neighbourhood view of big graphs (not
                            * found: the collapsed view, and the note says so); the node
                            * gets a thick border wherever it is drawn */
    int radius;            /* hops around focus (0: default 3) */
    const char *const *also; /* more nodes the neighbourhood is centred on, as the focus
                            * (a decision's nodes); names not found are ignored */
    size_t n_also;
    const struct gl_render_widen *widen; /* drawn neighbourhood nodes whose left-out
                            * neighbours are drawn too, in order (the terminal view's
                            * Enter on a "... N more" box) */
    size_t n_widen;
    bool shared_once;      /* a shared constant source is one box wired to each reader, not
                            * a copy beside each (fine for the few hundred boxes of a
                            * terminal view; whole-graph SVGs keep the copies) */
    bool xlabels;          /* edge labels as xlabels whatever the size: placed after the
                            * layout, they take no rank of their own, so ranks sit evenly
                            * (the terminal view) */
    bool fold_constants;   /* constants read by one node become lines in its box */
    bool one_line;         /* each box is one line: a node's op, key attributes and the
                            * end of its name ("Conv k=3x3 s=2 · conv1/Conv"), an input's
                            * or a group's first line; so a screen holds many more of them
                            * (the terminal view's compact boxes) */
    bool no_legend;        /* neither the colour legend nor the ghosts of removed nodes
                            * (gl_render_layout never draws them: the terminal view has
                            * its own marks) */
    const char *title;     /* graph label, e.g. "03-constant-folding" */
    unsigned timeout_ms;   /* most time for the Graphviz layout of gl_render_svg,
                            * gl_render_svg_file and gl_render_layout, fork and transfer
                            * included; 0: default 15000 (15 s) */
} gl_render_opts;

typedef struct gl_render_info {
    size_t nodes_drawn;    /* boxes in the drawing (nodes, groups, inputs, outputs,
                            * constants, stubs): what gets laid out, <= max_nodes */
    bool reduced;          /* a neighbourhood or collapsed view was drawn */
    char note[256];        /* what was drawn instead of the whole graph ("" if all of it);
                            * also set when constants were folded, boxes left out or the
                            * layout effort bounded */
} gl_render_info;

/* DOT text (malloc'd, NUL-terminated). `o` and `info` may be NULL everywhere. */
gl_status gl_render_dot(const gl_graph *g, const gl_render_opts *o, char **dot,
                        size_t *len, gl_render_info *info);
/* SVG via the dot layout, written to `path` (util/safe_write.h: atomic, guarded). */
gl_status gl_render_svg_file(const gl_graph *g, const gl_render_opts *o, const char *path,
                             gl_render_info *info);
/* SVG in memory (malloc'd). */
gl_status gl_render_svg(const gl_graph *g, const gl_render_opts *o, char **svg, size_t *len,
                        gl_render_info *info);
/* The same, and the DOT text that was laid out (malloc'd; after any degradation, so a
 * .dot written beside the .svg reproduces it). `dot` and the lengths may be NULL. */
gl_status gl_render_svg_dot(const gl_graph *g, const gl_render_opts *o, char **svg,
                            size_t *svg_len, char **dot, size_t *dot_len, gl_render_info *info);

/* Layout coordinates for the terminal graph view (issue 6): one box per drawn node and
 * the spline points of each edge, in points, y up (Graphviz's convention). */
typedef enum gl_render_box_kind {
    GL_BOX_NODE,     /* one IR node */
    GL_BOX_INPUT,    /* a graph input (or a value of an enclosing graph, or an unresolved one) */
    GL_BOX_OUTPUT,   /* a graph output */
    GL_BOX_CONSTANT, /* an initializer */
    GL_BOX_GROUP,    /* several nodes collapsed into one box (big graphs) */
    GL_BOX_STUB,     /* "... N more": neighbours left out of a neighbourhood view */
} gl_render_box_kind;

typedef enum gl_render_mark {
    GL_MARK_NONE,
    GL_MARK_ADDED,    /* "+ " */
    GL_MARK_MODIFIED, /* "~ " (a group: some member changed) */
    GL_MARK_REPLACED, /* "> " */
} gl_render_mark;

typedef struct gl_layout_node {
    uint32_t id;           /* IR node id; UINT32_MAX for non-node boxes (inputs, constants,
                            * groups, stubs). Several boxes may carry one id: the copies
                            * of a shared Constant node, one beside each reader. The
                            * first box with an id (lowest index) is "the" box of that
                            * node, for focus and centring. */
    gl_render_box_kind kind;
    gl_render_mark mark;
    char *label;           /* owned; the box's text lines joined by '\n', marks included */
    double x, y, w, h;     /* centre and size */
} gl_layout_node;

typedef struct gl_layout_edge {
    size_t from, to;       /* indices into nodes */
    double *pts;           /* x0,y0,x1,y1,... owned: the control points of a piecewise
                            * cubic Bezier (3k+1 points), tail to head; the arrowhead sits
                            * between the last point and the head box. Never fewer than 2. */
    size_t n_pts;
    char *label;           /* owned; "" when unlabelled (stubs, edges into outputs) */
    double label_x, label_y; /* centre of the label (meaningless when label is "") */
    bool dashed;           /* a subgraph reads the value, or an edge to a stub */
} gl_layout_edge;

typedef struct gl_layout {
    gl_layout_node *nodes;
    size_t n_nodes;
    gl_layout_edge *edges;
    size_t n_edges;
    double width, height;
} gl_layout;

gl_status gl_render_layout(const gl_graph *g, const gl_render_opts *o, gl_layout **out,
                           gl_render_info *info);
void gl_layout_free(gl_layout *l);

#endif
