/* test_render.c — DOT/SVG/layout renders of graph snapshots. */
#include "render/render.h"
#include "render/stages.h"
#include "onnx/onnx_io.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <graphviz/cgraph.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif

/* ---- helpers ------------------------------------------------------------------------ */

static void set_type(gl_value *v, gl_dtype dt, int rank, const int64_t *dims)
{
    v->type.kind = GL_TYPE_TENSOR;
    v->type.dtype = dt;
    gl_shape_set_rank(&v->type.shape, rank);
    for (int i = 0; i < rank; i++)
        v->type.shape.dims[i].value = dims[i];
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static char *dot_of(const gl_graph *g, const gl_render_opts *o, gl_render_info *info)
{
    char *dot = NULL;
    size_t len = 0;
    gl_status st = gl_render_dot(g, o, &dot, &len, info);
    cr_assert_eq(st, GL_OK, "render: %s", gl_error_message());
    cr_assert_not_null(dot);
    cr_assert_eq(strlen(dot), len);
    return dot;
}

static gl_layout *layout_of(const gl_graph *g, const gl_render_opts *o, gl_render_info *info)
{
    gl_layout *l = NULL;
    gl_status st = gl_render_layout(g, o, &l, info);
    cr_assert_eq(st, GL_OK, "layout: %s", gl_error_message());
    cr_assert_not_null(l);
    return l;
}

/* Graphviz itself must accept the DOT; returns the number of boxes of the drawing it saw
 * (nodes "b<N>": not the legend's samples nor the ghosts of removed nodes). */
static int graphviz_node_count(const char *dot)
{
    Agraph_t *g = agmemread(dot);
    cr_assert_not_null(g, "Graphviz rejected:\n%s", dot);
    int n = 0;
    for (Agnode_t *v = agfstnode(g); v; v = agnxtnode(g, v))
        n += agnameof(v)[0] == 'b';
    agclose(g);
    return n;
}

/* The SVG is XML: cheap checks always, a real parser when GL_PYTHON names one. */
static void assert_svg_valid(const char *svg, size_t len)
{
    cr_assert(strncmp(svg, "<?xml", 5) == 0 || strncmp(svg, "<svg", 4) == 0);
    cr_assert_not_null(strstr(svg, "</svg>"));
    const char *py = getenv("GL_PYTHON");
    if (!py || !*py)
        return;
    char *dir = tu_tmpdir();
    char path[4200], cmd[8600];
    snprintf(path, sizeof(path), "%s/t.svg", dir);
    cr_assert(tu_write_file(path, svg, len));
    snprintf(cmd, sizeof(cmd),
             "'%s' -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s'", py,
             path);
    int rc = system(cmd);
    tu_rmtree(dir);
    free(dir);
    cr_assert_eq(rc, 0, "python's XML parser rejected the SVG");
}

static char *svg_of(const gl_graph *g, const gl_render_opts *o, gl_render_info *info)
{
    char *svg = NULL;
    size_t len = 0;
    gl_status st = gl_render_svg(g, o, &svg, &len, info);
    cr_assert_eq(st, GL_OK, "svg: %s", gl_error_message());
    assert_svg_valid(svg, len);
    return svg;
}

static const gl_layout_node *box_with_id(const gl_layout *l, uint32_t id)
{
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].id == id)
            return &l->nodes[i];
    return NULL;
}

static size_t boxes_of_kind(const gl_layout *l, gl_render_box_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        n += l->nodes[i].kind == kind;
    return n;
}

static size_t edges_between(const gl_layout *l, const gl_layout_node *a,
                            const gl_layout_node *b)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_edges; i++)
        n += &l->nodes[l->edges[i].from] == a && &l->nodes[l->edges[i].to] == b;
    return n;
}

static const gl_layout_edge *edge_between(const gl_layout *l, const gl_layout_node *a,
                                          const gl_layout_node *b)
{
    for (size_t i = 0; i < l->n_edges; i++)
        if (&l->nodes[l->edges[i].from] == a && &l->nodes[l->edges[i].to] == b)
            return &l->edges[i];
    return NULL;
}

/* x[1,3,8,8] -> Conv(W, B) -> Relu -> Mul(r, r) -> Add(S) -> Add(S) -> y
 * W and B are read by the Conv only; S (a scalar 2.0) by both Adds. */
typedef struct small {
    gl_model *m;
    gl_node *conv, *relu, *sq, *add1, *add2;
} small;

static small small_graph(void)
{
    small s = {.m = tu_model(13)};
    gl_graph *g = s.m->graph;
    const int64_t xd[] = {1, 3, 8, 8}, wd[] = {4, 3, 3, 3}, bd[] = {4}, yd[] = {1, 4, 8, 8};
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, xd);
    float w[108] = {0}, b[4] = {0.5f, 1.5f, -2.0f, 3.0f}, two = 2.0f;
    gl_value *W = tu_const_f32(g, "W", 4, wd, w);
    gl_value *B = tu_const_f32(g, "B", 1, bd, b);
    gl_value *S = tu_const_f32(g, "S", 0, NULL, &two);
    s.conv = tu_node(g, "Conv", "conv1", 3, x, W, B);
    s.relu = tu_node(g, "Relu", "relu1", 1, s.conv->outputs[0]);
    s.sq = tu_node(g, "Mul", "sq", 2, s.relu->outputs[0], s.relu->outputs[0]);
    s.add1 = tu_node(g, "Add", "add1", 2, s.sq->outputs[0], S);
    s.add2 = tu_node(g, "Add", "add2", 2, s.add1->outputs[0], S);
    gl_node *all[] = {s.conv, s.relu, s.sq, s.add1, s.add2};
    for (size_t i = 0; i < 5; i++)
        set_type(all[i]->outputs[0], GL_DT_FLOAT, 4, yd);
    tu_output(g, s.add2->outputs[0]);
    return s;
}

/* ---- contents --------------------------------------------------------------------- */

Test(render, dot_names_ops_and_shapes)
{
    small s = small_graph();
    gl_render_info info;
    char *dot = dot_of(s.m->graph, NULL, &info);
    const char *must[] = {"Conv", "conv1", "Relu", "relu1", "Mul", "sq", "Add", "add1",
                          "add2", "input: x", "output: add2_out0", "float[1,3,8,8]",
                          "float[1,4,8,8]", "float[4,3,3,3]", "digraph"};
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
        cr_expect_not_null(strstr(dot, must[i]), "'%s' missing from:\n%s", must[i], dot);
    /* 5 nodes + input + output + W + B + a copy of S beside each Add */
    cr_expect_eq(info.nodes_drawn, 11);
    cr_expect_not(info.reduced);
    cr_expect_str_empty(info.note);
    cr_expect_eq(graphviz_node_count(dot), 11);
    free(dot);
    gl_model_free(s.m);
}

Test(render, edges_merge_repeated_reads_and_carry_shapes)
{
    small s = small_graph();
    gl_render_info info;
    gl_layout *l = layout_of(s.m->graph, NULL, &info);
    const gl_layout_node *relu = box_with_id(l, s.relu->id), *sq = box_with_id(l, s.sq->id);
    const gl_layout_node *conv = box_with_id(l, s.conv->id);
    cr_assert(relu && sq && conv);
    cr_expect_eq(edges_between(l, relu, sq), 1, "Mul(r, r) is one edge");
    const gl_layout_edge *e = edge_between(l, relu, sq);
    cr_assert_not_null(e);
    cr_expect_str_eq(e->label, "float[1,4,8,8] x2");
    e = edge_between(l, conv, relu);
    cr_assert_not_null(e);
    cr_expect_str_eq(e->label, "float[1,4,8,8]");
    /* x->conv, W->conv, B->conv, conv->relu, relu->sq, sq->add1, S->add1, add1->add2,
     * S->add2, add2->output */
    cr_expect_eq(l->n_edges, 10);
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, constants_are_boxes_or_folded_when_read_by_one_node)
{
    small s = small_graph();
    gl_render_info info;
    gl_layout *l = layout_of(s.m->graph, NULL, &info);
    cr_expect_eq(boxes_of_kind(l, GL_BOX_CONSTANT), 4, "W, B and S twice");
    gl_layout_free(l);

    gl_render_opts o = {.fold_constants = true};
    l = layout_of(s.m->graph, &o, &info);
    /* W and B fold into the Conv; S is shared by two Adds: a box beside each */
    cr_expect_eq(boxes_of_kind(l, GL_BOX_CONSTANT), 2);
    const gl_layout_node *conv = box_with_id(l, s.conv->id);
    cr_assert_not_null(conv);
    cr_expect_not_null(strstr(conv->label, "\nW float[4,3,3,3]"), "%s", conv->label);
    cr_expect_not_null(strstr(conv->label, "\nB float[4] = [0.5, 1.5, -2, 3]"), "%s",
                       conv->label);
    const gl_layout_node *add1 = box_with_id(l, s.add1->id), *add2 = box_with_id(l, s.add2->id);
    cr_assert(add1 && add2);
    size_t into_add1 = 0, into_add2 = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].kind == GL_BOX_CONSTANT) {
            cr_expect_str_eq(l->nodes[i].label, "S\nfloat[] = 2\nshared by 2");
            into_add1 += edges_between(l, &l->nodes[i], add1);
            into_add2 += edges_between(l, &l->nodes[i], add2);
        }
    cr_expect(into_add1 == 1 && into_add2 == 1, "one copy feeds each Add");
    cr_expect_eq(info.nodes_drawn, 9);
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, inputs_and_outputs_are_distinct_boxes)
{
    small s = small_graph();
    gl_layout *l = layout_of(s.m->graph, NULL, NULL);
    cr_expect_eq(boxes_of_kind(l, GL_BOX_INPUT), 1);
    cr_expect_eq(boxes_of_kind(l, GL_BOX_OUTPUT), 1);
    for (size_t i = 0; i < l->n_nodes; i++) {
        if (l->nodes[i].kind == GL_BOX_INPUT)
            cr_expect_str_eq(l->nodes[i].label, "input: x\nfloat[1,3,8,8]");
        if (l->nodes[i].kind == GL_BOX_OUTPUT)
            cr_expect_str_eq(l->nodes[i].label, "output: add2_out0\nfloat[1,4,8,8]");
        if (l->nodes[i].kind != GL_BOX_NODE)
            cr_expect_eq(l->nodes[i].id, UINT32_MAX);
    }
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, focus_is_highlighted_in_a_full_drawing)
{
    small s = small_graph();
    gl_render_info info;
    char *dot = dot_of(s.m->graph, &(gl_render_opts){.focus = "relu1"}, &info);
    cr_expect_not(info.reduced, "a graph that fits is drawn whole");
    cr_expect_eq(count_of(dot, "penwidth=3"), 1);
    const char *line = strstr(dot, "penwidth=3");
    const char *start = line;
    while (start > dot && start[-1] != '\n')
        start--;
    cr_expect_not_null(strstr(start, "relu1"), "the thick border is on relu1's box");
    free(dot);
    gl_model_free(s.m);
}

Test(render, constants_fold_to_fit_the_box_limit)
{
    /* 10 Adds, each with its own constant: 10 + 10 + input + output = 22 boxes > 16 */
    gl_model *m = tu_model(13);
    const int64_t d[] = {2};
    const float c[2] = {1, 2};
    gl_value *prev = tu_input(m->graph, "x", GL_DT_FLOAT, 1, d);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        gl_value *k = tu_const_f32(m->graph, name, 1, d, c);
        prev = tu_node(m->graph, "Add", NULL, 2, prev, k)->outputs[0];
    }
    tu_output(m->graph, prev);
    gl_render_info info;
    char *dot = dot_of(m->graph, &(gl_render_opts){.max_nodes = 16}, &info);
    cr_expect_eq(info.nodes_drawn, 12);
    cr_expect_not(info.reduced);
    cr_expect_not_null(strstr(info.note, "constants folded"), "%s", info.note);
    cr_expect_not_null(strstr(dot, "c9 float[2] = [1, 2]"), "%s", dot);
    free(dot);
    /* max_nodes below the floor counts as 16, so the same drawing */
    dot = dot_of(m->graph, &(gl_render_opts){.max_nodes = 3}, &info);
    cr_expect_eq(info.nodes_drawn, 12);
    free(dot);
    gl_model_free(m);
}

/* ---- diff marks ------------------------------------------------------------------- */

typedef struct hand_diff {
    gl_diff d;
    gl_node_change ch[4];
    gl_change_detail detail;
    uint32_t ids[3];
    char *replaced[2];
    char *removed[12];
    char names[12][16];
} hand_diff;

static void make_diff(hand_diff *h, const small *s)
{
    memset(h, 0, sizeof(*h));
    h->ids[0] = s->relu->id;
    h->ids[1] = s->conv->id;
    h->ids[2] = s->sq->id;
    h->ch[0] = (gl_node_change){.kind = GL_CHANGE_ADDED, .new_ids = &h->ids[0], .n_new = 1};
    h->detail = (gl_change_detail){GL_DETAIL_ATTR_CHANGED, "pads", "[0,0,0,0]", "[1,1,1,1]"};
    h->ch[1] = (gl_node_change){.kind = GL_CHANGE_MODIFIED, .new_ids = &h->ids[1], .n_new = 1,
                                .details = &h->detail, .n_details = 1};
    h->replaced[0] = "old_a";
    h->replaced[1] = "old_b";
    h->ch[2] = (gl_node_change){.kind = GL_CHANGE_REPLACED, .old_names = h->replaced,
                                .n_old = 2, .new_ids = &h->ids[2], .n_new = 1};
    for (int i = 0; i < 12; i++) {
        snprintf(h->names[i], sizeof(h->names[i]), "gone%d", i);
        h->removed[i] = h->names[i];
    }
    h->ch[3] = (gl_node_change){.kind = GL_CHANGE_REMOVED, .old_names = h->removed, .n_old = 12};
    h->d = (gl_diff){.nodes = h->ch, .n_nodes = 4, .n_added = 1, .n_removed = 12,
                     .n_replaced = 1, .n_modified = 1};
}

Test(render, diff_marks_are_textual)
{
    small s = small_graph();
    hand_diff h;
    make_diff(&h, &s);
    gl_render_opts o = {.diff = &h.d, .title = "03-fusion"};
    gl_layout *l = layout_of(s.m->graph, &o, NULL);
    const gl_layout_node *relu = box_with_id(l, s.relu->id);
    const gl_layout_node *conv = box_with_id(l, s.conv->id);
    const gl_layout_node *sq = box_with_id(l, s.sq->id);
    const gl_layout_node *add1 = box_with_id(l, s.add1->id);
    cr_assert(relu && conv && sq && add1);
    cr_expect_eq(strncmp(relu->label, "+ Relu\n", 7), 0, "%s", relu->label);
    cr_expect_eq(relu->mark, GL_MARK_ADDED);
    cr_expect_eq(strncmp(conv->label, "~ Conv\n", 7), 0, "%s", conv->label);
    cr_expect_not_null(strstr(conv->label, "changed: attr pads"), "%s", conv->label);
    cr_expect_eq(conv->mark, GL_MARK_MODIFIED);
    cr_expect_eq(strncmp(sq->label, "> Mul\n", 6), 0, "%s", sq->label);
    cr_expect_not_null(strstr(sq->label, "replaces: 'old_a', 'old_b'"), "%s", sq->label);
    cr_expect_eq(sq->mark, GL_MARK_REPLACED);
    cr_expect_eq(strncmp(add1->label, "Add\n", 4), 0, "unchanged nodes have no mark");
    cr_expect_eq(add1->mark, GL_MARK_NONE);
    gl_layout_free(l);

    char *dot = dot_of(s.m->graph, &o, NULL);
    cr_expect_not_null(strstr(dot, "03-fusion"));
    cr_expect_not_null(strstr(dot, "removed: 'gone0', 'gone1'"), "%s", dot);
    cr_expect_not_null(strstr(dot, "'gone9' +2 more"), "%s", dot);
    cr_expect_null(strstr(dot, "'gone10'"), "only the first 10 removed names");
    cr_expect_not_null(strstr(dot, "+ added"), "a legend explains the marks");
    /* the colour differs from unmarked nodes too (the other one: the legend's sample) */
    cr_expect_eq(count_of(dot, "fillcolor=\"#c8efc4\""), 2);
    graphviz_node_count(dot);
    free(dot);
    gl_model_free(s.m);
}

/* ---- hostile names ------------------------------------------------------------------ */

static const char *const HOSTILE[] = {
    "a\"b",          "{x|y}",           "<tag>",        "back\\slash",  "trail\\",
    "new\nline",     "tab\tcr\r",       "\\N \\G \\E \\L", "&lt;&amp;&#1;&#x41;", "a&b",
    "ünï 日本 😀",    "\xff\xfe bad",    "\xc0\xaf over", "\xed\xa0\x80 surr", "\xef\xbf\xbf",
    "\x7f\x01\x1b",  "/a/b:c.d",        "]];}digraph{", "",             "\xc2\x85 nel",
    "'quote' `tick`", "-- ->",
};

static gl_model *hostile_graph(void)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    const int64_t d[] = {2};
    gl_value *prev = tu_input(g, HOSTILE[0], GL_DT_FLOAT, 1, d);
    char longname[400];
    memset(longname, 'L', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    longname[200] = '"';
    for (size_t i = 0; i < sizeof(HOSTILE) / sizeof(HOSTILE[0]); i++) {
        gl_node *n = tu_node(g, "Relu", HOSTILE[i], 1, prev);
        set_type(n->outputs[0], GL_DT_FLOAT, 1, d);
        prev = n->outputs[0];
    }
    gl_node *n = tu_node(g, HOSTILE[1], longname, 1, prev);
    tu_output(g, n->outputs[0]);
    return m;
}

Test(render, hostile_names_give_dot_graphviz_parses_and_valid_svg)
{
    gl_model *m = hostile_graph();
    size_t n_nodes = sizeof(HOSTILE) / sizeof(HOSTILE[0]) + 1;
    for (int title = 0; title < 2; title++) {
        gl_render_opts o = {.title = title ? "t\"i{t}<l>e\\\n&#0;" : NULL};
        gl_render_info info;
        char *dot = dot_of(m->graph, &o, &info);
        cr_expect_eq(graphviz_node_count(dot), (int)(n_nodes + 2)); /* + input, output */
        cr_expect_eq(info.nodes_drawn, n_nodes + 2);
        free(dot);
        char *svg = svg_of(m->graph, &o, NULL);
        cr_expect_not_null(strstr(svg, "ünï 日本 😀"), "valid UTF-8 passes through");
        cr_expect_not_null(strstr(svg, "new\\nline"), "a newline is shown as \\n");
        cr_expect_not_null(strstr(svg, "\\xFF\\xFE bad"), "invalid bytes are spelled out");
        cr_expect_not_null(strstr(svg, "\\x26#1;"), "entity-like text is not decoded");
        cr_expect_not_null(strstr(svg, "\\N \\G \\E \\L"), "no Graphviz escapes expanded");
        cr_expect_not_null(strstr(svg, "trail\\"), "%s", svg);
        cr_expect_not_null(strstr(svg, "\xE2\x80\xA6"), "long names are cut in the middle");
        free(svg);
    }
    gl_model_free(m);
}

Test(render, hostile_names_in_layout_labels)
{
    gl_model *m = hostile_graph();
    gl_layout *l = layout_of(m->graph, NULL, NULL);
    for (size_t i = 0; i < l->n_nodes; i++) {
        const char *s = l->nodes[i].label;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
            cr_expect(*p >= 0x20 || *p == '\n', "control byte %u in label '%s'", *p, s);
    }
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- determinism -------------------------------------------------------------------- */

Test(render, same_graph_same_bytes)
{
    small a = small_graph(), b = small_graph();
    hand_diff h;
    make_diff(&h, &a);
    gl_render_opts o = {.diff = &h.d, .title = "x"};
    char *d1 = dot_of(a.m->graph, &o, NULL), *d2 = dot_of(a.m->graph, &o, NULL);
    char *d3 = dot_of(b.m->graph, &o, NULL);
    cr_expect_str_eq(d1, d2);
    cr_expect_str_eq(d1, d3, "a graph built the same way renders the same");
    char *s1 = svg_of(a.m->graph, &o, NULL), *s2 = svg_of(a.m->graph, &o, NULL);
    cr_expect_str_eq(s1, s2);
    char *all[] = {d1, d2, d3, s1, s2};
    for (size_t i = 0; i < 5; i++)
        free(all[i]);
    gl_model_free(a.m);
    gl_model_free(b.m);
}

/* ---- big graphs --------------------------------------------------------------------- */

/* A chain of n nodes with side branches: every 5th node is Add(prev, Sigmoid(node i-3)).
 * Prefixed names: "/block<i/50>/layer<(i/10)%5>/op<i>" (100 blocks for 5000 nodes). */
static gl_model *big_graph(size_t n, bool prefixed)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    const int64_t d[] = {1, 8};
    gl_value *prev = tu_input(g, "x", GL_DT_FLOAT, 2, d);
    gl_value **outs = calloc(n, sizeof(*outs));
    char name[96];
    for (size_t i = 0; i < n; i++) {
        if (prefixed)
            snprintf(name, sizeof(name), "/block%zu/layer%zu/op_%zu", i / 50, (i / 10) % 5, i);
        else
            snprintf(name, sizeof(name), "op_%zu", i);
        gl_node *node;
        if (i % 5 == 4 && i >= 3) {
            char side[128];
            snprintf(side, sizeof(side), "%s_side", name);
            gl_node *sg = tu_node(g, "Sigmoid", side, 1, outs[i - 3]);
            set_type(sg->outputs[0], GL_DT_FLOAT, 2, d);
            node = tu_node(g, "Add", name, 2, prev, sg->outputs[0]);
        } else {
            node = tu_node(g, i % 2 ? "Relu" : "Tanh", name, 1, prev);
        }
        set_type(node->outputs[0], GL_DT_FLOAT, 2, d);
        outs[i] = prev = node->outputs[0];
    }
    tu_output(g, prev);
    free(outs);
    return m;
}

Test(render, big_graph_collapses_by_prefix, .timeout = 120)
{
    gl_model *m = big_graph(5000, true); /* 6000 nodes with the side branches */
    gl_render_info info;
    char *dot = dot_of(m->graph, NULL, &info);
    cr_expect(info.reduced);
    cr_expect_leq(info.nodes_drawn, 1500);
    /* depth 1 gives 100 blocks; depth 2 gives 500 layers; depth 3 would be every node */
    cr_expect_not_null(strstr(info.note, "500 groups by name prefix (depth 2)"), "%s", info.note);
    cr_expect_not_null(strstr(dot, "500 groups by name prefix"), "the graph label says so");
    cr_expect_not_null(strstr(dot, "block7/layer3"), "%s", info.note);
    cr_expect_eq(graphviz_node_count(dot), (int)info.nodes_drawn);
    free(dot);

    gl_render_opts o = {.max_nodes = 200};
    gl_layout *l = layout_of(m->graph, &o, &info);
    cr_expect_not_null(strstr(info.note, "100 groups by name prefix (depth 1)"), "%s", info.note);
    cr_expect_eq(l->n_nodes, info.nodes_drawn);
    cr_expect_eq(boxes_of_kind(l, GL_BOX_GROUP), 100);
    /* block3 = ops 150..199: 10 Adds (i%5==4) with 10 Sigmoid sides, 20 Relu, 20 Tanh */
    const char *want = "block3\n60 nodes: Relu 20, Tanh 20, Add 10, \xE2\x80\xA6";
    bool found = false;
    for (size_t i = 0; i < l->n_nodes; i++)
        found |= strcmp(l->nodes[i].label, want) == 0;
    cr_expect(found, "a group box reads '%s'", want);
    gl_layout_free(l);
    gl_model_free(m);
}

Test(render, big_graph_without_prefixes_uses_chunks, .timeout = 120)
{
    gl_model *m = big_graph(5000, false);
    gl_render_info info;
    char *dot = dot_of(m->graph, NULL, &info);
    cr_expect(info.reduced);
    cr_expect_leq(info.nodes_drawn, 1500);
    cr_expect_not_null(strstr(info.note, "chunks"), "%s", info.note);
    cr_expect_gt(info.nodes_drawn, 400);
    cr_expect_not_null(strstr(dot, "xlabel=\"float[1,8]\""), "big drawings use xlabels");
    cr_expect_null(strstr(dot, " label=\"float[1,8]\""));
    free(dot);
    gl_render_opts o = {.max_nodes = 50};
    gl_layout *l = layout_of(m->graph, &o, &info);
    cr_expect_leq(info.nodes_drawn, 50);
    cr_expect_eq(l->n_nodes, info.nodes_drawn);
    /* 6000 nodes into 48 boxes (50 minus input and output): chunks of 125 */
    cr_expect_not_null(strstr(info.note, "48 chunks of 125"), "%s", info.note);
    gl_layout_free(l);
    gl_model_free(m);
}

Test(render, big_graph_focus_draws_a_neighbourhood, .timeout = 120)
{
    gl_model *m = big_graph(5000, false);
    gl_render_opts o = {.focus = "op_2500"};
    gl_render_info info;
    gl_layout *l = layout_of(m->graph, &o, &info);
    cr_expect(info.reduced);
    cr_expect_leq(info.nodes_drawn, 1500);
    cr_expect_eq(l->n_nodes, info.nodes_drawn);
    cr_expect_not_null(strstr(info.note, "within 3 hops of 'op_2500'"), "%s", info.note);
    cr_expect_not_null(strstr(info.note, "of 6,000 nodes"), "%s", info.note);
    bool saw[3] = {false};
    size_t stubs = 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        const char *s = l->nodes[i].label;
        saw[0] |= strstr(s, "\nop_2500\n") != NULL;
        saw[1] |= strstr(s, "\nop_2503\n") != NULL; /* 3 hops down the chain */
        saw[2] |= strstr(s, "\nop_2510\n") != NULL; /* far away */
        stubs += l->nodes[i].kind == GL_BOX_STUB;
    }
    cr_expect(saw[0] && saw[1]);
    cr_expect_not(saw[2]);
    cr_expect_geq(stubs, 2, "cut edges end in '... N more' stubs above and below");
    gl_layout_free(l);

    o.focus = "no_such_node";
    char *dot = dot_of(m->graph, &o, &info);
    cr_expect_not_null(strstr(info.note, "no node named 'no_such_node'"), "%s", info.note);
    cr_expect_not_null(strstr(info.note, "chunks"), "%s", info.note);
    free(dot);
    gl_model_free(m);
}

Test(render, neighbourhood_respects_a_small_budget, .timeout = 60)
{
    gl_model *m = big_graph(2000, false);
    gl_render_opts o = {.focus = "op_1000", .radius = 50, .max_nodes = 40};
    gl_render_info info;
    char *dot = dot_of(m->graph, &o, &info);
    cr_expect_leq(info.nodes_drawn, 40);
    cr_expect_not_null(strstr(info.note, "cut at the box limit"), "%s", info.note);
    cr_expect_eq(graphviz_node_count(dot), (int)info.nodes_drawn);
    free(dot);
    gl_model_free(m);
}

/* One hop is singular in the note (issue 24: "within 1 hops"). */
Test(render, neighbourhood_note_counts_hops_in_words, .timeout = 60)
{
    static const struct {
        int radius;
        const char *says;
    } cases[] = {{1, "within 1 hop of 'op_1000'"}, {2, "within 2 hops of 'op_1000'"}};
    gl_model *m = big_graph(2000, false);
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_render_opts o = {.focus = "op_1000", .radius = cases[c].radius, .max_nodes = 40};
        gl_render_info info;
        char *dot = dot_of(m->graph, &o, &info);
        cr_expect_not_null(strstr(info.note, cases[c].says), "%s", info.note);
        free(dot);
    }
    gl_model_free(m);
}

/* ---- shared constant sources ------------------------------------------------------- */

/* The shape of a cse'd torch export (shufflenet: one Constant feeding 65 Reshapes): the
 * big_graph chain of n nodes, where one Constant node feeds 60 Reshapes and one
 * initializer 64 Muls spread along the whole chain (for n = 400). Drawn as one box per
 * source, dot's layout of this ran for minutes. */
typedef struct shared_net {
    gl_model *m;
    gl_node *constant;
} shared_net;

static shared_net shared_graph(size_t n)
{
    shared_net s = {.m = tu_model(13)};
    gl_graph *g = s.m->graph;
    const int64_t d[] = {1, 8}, one[] = {1}, two[] = {2};
    const float half = 0.5f;
    gl_value *prev = tu_input(g, "x", GL_DT_FLOAT, 2, d);
    s.constant = tu_node(g, "Constant", "shape_const", 0);
    set_type(s.constant->outputs[0], GL_DT_INT64, 1, two);
    gl_value *scale = tu_const_f32(g, "scale", 1, one, &half);
    gl_value **outs = calloc(n, sizeof(*outs));
    char name[64], side[80];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "op_%zu", i);
        gl_node *node;
        if (i % 5 == 4) {
            snprintf(side, sizeof(side), "%s_side", name);
            gl_node *sg = tu_node(g, "Sigmoid", side, 1, outs[i - 3]);
            set_type(sg->outputs[0], GL_DT_FLOAT, 2, d);
            node = tu_node(g, "Add", name, 2, prev, sg->outputs[0]);
        } else if (i % 5 == 1 && (i / 5) % 4 != 3) {
            node = tu_node(g, "Reshape", name, 2, prev, s.constant->outputs[0]);
        } else if (i % 5 == 2 && (i / 5) % 5 != 4) {
            node = tu_node(g, "Mul", name, 2, prev, scale);
        } else {
            node = tu_node(g, i % 2 ? "Relu" : "Tanh", name, 1, prev);
        }
        set_type(node->outputs[0], GL_DT_FLOAT, 2, d);
        outs[i] = prev = node->outputs[0];
    }
    tu_output(g, prev);
    free(outs);
    return s;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every box whose label starts with `copy_label` must be a copy: no edge in, one edge out
 * to a distinct box labelled `reader_op...` that comes right after it and is drawn
 * below it. Returns the number of copies. */
static size_t check_copies(const gl_layout *l, const char *copy_label, const char *reader_op)
{
    bool *fed = calloc(l->n_nodes + 1, sizeof(*fed));
    size_t copies = 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        const gl_layout_node *c = &l->nodes[i];
        if (!starts_with(c->label, copy_label))
            continue;
        copies++;
        size_t out = 0;
        for (size_t k = 0; k < l->n_edges; k++) {
            const gl_layout_edge *e = &l->edges[k];
            cr_expect_neq(e->to, i, "a copy has no inputs");
            if (e->from != i)
                continue;
            out++;
            const gl_layout_node *r = &l->nodes[e->to];
            cr_expect(starts_with(r->label, reader_op), "copy %zu feeds '%s'", i, r->label);
            cr_expect_not(fed[e->to], "one copy per reader");
            fed[e->to] = true;
            cr_expect_eq(e->to, i + 1, "the copy is placed just before its reader");
            cr_expect_gt(c->y, r->y, "and drawn above it");
        }
        cr_expect_eq(out, 1, "copy %zu has one edge", i);
    }
    free(fed);
    return copies;
}

static size_t boxes_with_id(const gl_layout *l, uint32_t id)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        n += l->nodes[i].id == id;
    return n;
}

Test(render, shared_sources_are_drawn_beside_each_reader, .timeout = 120)
{
    shared_net s = shared_graph(400);
    gl_graph *g = s.m->graph;
    gl_render_info info;
    char *dot = dot_of(g, NULL, &info);
    cr_expect_not(info.reduced);
    cr_expect_eq(count_of(dot, "\\nshared by 60\""), 60, "one Constant copy per Reshape");
    cr_expect_eq(count_of(dot, "\\nshared by 64\""), 64, "one initializer copy per Mul");
    /* 400 chain + 80 Sigmoids + input + output + 60 + 64 copies */
    cr_expect_eq(info.nodes_drawn, 606);
    cr_expect_eq(graphviz_node_count(dot), 606);
    char *again = dot_of(g, NULL, NULL);
    cr_expect_str_eq(dot, again, "copies keep the output deterministic");
    free(again);
    free(dot);

    gl_layout *l = layout_of(g, NULL, &info);
    cr_expect_eq(boxes_with_id(l, s.constant->id), 60, "copies carry the Constant's id");
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].id == s.constant->id) {
            cr_expect_eq(l->nodes[i].kind, GL_BOX_NODE);
            cr_expect_str_eq(l->nodes[i].label, "Constant\nshape_const\nint64[2]\nshared by 60");
        }
    cr_expect_eq(check_copies(l, "Constant\nshape_const\n", "Reshape\n"), 60);
    cr_expect_eq(check_copies(l, "scale\nfloat[1] = [0.5]\nshared by 64", "Mul\n"), 64);
    cr_expect_eq(boxes_of_kind(l, GL_BOX_CONSTANT), 64);
    gl_layout_free(l);

    char *svg = svg_of(g, NULL, NULL);
    cr_expect_eq(count_of(svg, "shared by 60"), 60);
    free(svg);
    gl_model_free(s.m);
}

/* When a source is copied and when it stays one box. */
typedef enum source_kind { SRC_CONSTANT_NODE, SRC_INITIALIZER, SRC_INPUT_DEFAULT } source_kind;

typedef struct source_case {
    const char *what;
    source_kind kind;
    const char *domain;  /* of the Constant node */
    int readers;         /* distinct nodes reading the source */
    bool twice;          /* each reads it in two slots */
    bool is_output;      /* the source (or the Constant's output) is a graph output */
    size_t boxes;        /* boxes drawn for it */
    const char *shared;  /* the line on each, NULL: no "shared by" anywhere */
} source_case;

static const source_case SOURCE_CASES[] = {
    {"Constant read by one node", SRC_CONSTANT_NODE, "", 1, false, false, 1, NULL},
    {"Constant read twice by one node", SRC_CONSTANT_NODE, "", 1, true, false, 1, NULL},
    {"Constant read by three nodes", SRC_CONSTANT_NODE, "", 3, false, false, 3, "shared by 3"},
    {"ai.onnx Constant read by three", SRC_CONSTANT_NODE, "ai.onnx", 3, true, false, 3,
     "shared by 3"},
    {"Constant that is a graph output", SRC_CONSTANT_NODE, "", 3, false, true, 1, NULL},
    {"Constant of another domain", SRC_CONSTANT_NODE, "com.example", 3, false, false, 1, NULL},
    {"initializer read twice by one node", SRC_INITIALIZER, "", 1, true, false, 1, NULL},
    {"initializer read by three nodes", SRC_INITIALIZER, "", 3, true, false, 3, "shared by 3"},
    {"initializer that is a graph output", SRC_INITIALIZER, "", 3, false, true, 1, NULL},
    {"graph input with a default", SRC_INPUT_DEFAULT, "", 3, false, false, 1, NULL},
};

/* x -> Sum(prev, src[, src]) x readers -> output; returns the source's node, if any. */
static gl_node *build_source_case(gl_graph *g, const source_case *c)
{
    const int64_t d[] = {2};
    const float k[2] = {1, 2};
    gl_value *prev = tu_input(g, "x", GL_DT_FLOAT, 1, d);
    gl_node *cn = NULL;
    gl_value *src;
    if (c->kind == SRC_CONSTANT_NODE) {
        cn = gl_add_node(g, "Constant", c->domain, "src", NULL, 0, 1); /* "ai.onnx" is "" */
        src = cn->outputs[0];
    } else {
        src = tu_const_f32(g, "src", 1, d, k);
        if (c->kind == SRC_INPUT_DEFAULT)
            gl_graph_add_input(g, src);
    }
    for (int r = 0; r < c->readers; r++) {
        char name[32];
        snprintf(name, sizeof(name), "reader%d", r);
        gl_node *n = c->twice ? tu_node(g, "Sum", name, 3, prev, src, src)
                              : tu_node(g, "Sum", name, 2, prev, src);
        prev = n->outputs[0];
    }
    tu_output(g, prev);
    if (c->is_output)
        tu_output(g, src);
    return cn;
}

static bool is_source_box(const gl_layout_node *b, const source_case *c, const gl_node *cn)
{
    switch (c->kind) {
    case SRC_CONSTANT_NODE: return b->id == cn->id;
    case SRC_INITIALIZER: return b->kind == GL_BOX_CONSTANT;
    case SRC_INPUT_DEFAULT: return b->kind == GL_BOX_INPUT && starts_with(b->label, "input: src");
    }
    return false;
}

Test(render, sources_are_copied_only_when_shared)
{
    for (size_t t = 0; t < sizeof(SOURCE_CASES) / sizeof(SOURCE_CASES[0]); t++) {
        const source_case *c = &SOURCE_CASES[t];
        gl_model *m = tu_model(13);
        gl_node *cn = build_source_case(m->graph, c);
        gl_layout *l = layout_of(m->graph, NULL, NULL);
        size_t boxes = 0, shared_lines = 0;
        for (size_t i = 0; i < l->n_nodes; i++) {
            shared_lines += strstr(l->nodes[i].label, "shared by") != NULL;
            if (!is_source_box(&l->nodes[i], c, cn))
                continue;
            boxes++;
            if (c->shared)
                cr_expect_not_null(strstr(l->nodes[i].label, c->shared), "%s: '%s'", c->what,
                                   l->nodes[i].label);
        }
        cr_expect_eq(boxes, c->boxes, "%s: %zu boxes", c->what, boxes);
        cr_expect_eq(shared_lines, c->shared ? c->boxes : 0, "%s", c->what);
        if (c->shared && c->kind == SRC_CONSTANT_NODE)
            cr_expect_eq(check_copies(l, "Constant\nsrc\n", "Sum\n"), c->boxes, "%s", c->what);
        gl_layout_free(l);
        gl_model_free(m);
    }
}

Test(render, copies_of_a_constant_keep_its_diff_mark)
{
    gl_model *m = tu_model(13);
    gl_node *cn = build_source_case(m->graph, &SOURCE_CASES[2]); /* read by three */
    uint32_t id = cn->id;
    gl_node_change ch = {.kind = GL_CHANGE_ADDED, .new_ids = &id, .n_new = 1};
    gl_diff d = {.nodes = &ch, .n_nodes = 1, .n_added = 1};
    gl_layout *l = layout_of(m->graph, &(gl_render_opts){.diff = &d}, NULL);
    size_t marked = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].id == id) {
            cr_expect_eq(l->nodes[i].mark, GL_MARK_ADDED);
            cr_expect(starts_with(l->nodes[i].label, "+ Constant\nsrc\n"), "%s",
                      l->nodes[i].label);
            marked++;
        }
    cr_expect_eq(marked, 3);
    gl_layout_free(l);
    gl_model_free(m);
}

Test(render, neighbourhood_does_not_walk_through_a_shared_constant, .timeout = 60)
{
    shared_net s = shared_graph(400);
    /* op_201 is a Reshape; the Constant's other readers are up to 200 nodes away */
    gl_render_opts o = {.focus = "op_201", .max_nodes = 60};
    gl_render_info info;
    gl_layout *l = layout_of(s.m->graph, &o, &info);
    cr_expect(info.reduced);
    cr_expect_leq(info.nodes_drawn, 60);
    cr_expect_not_null(strstr(info.note, "within 3 hops of 'op_201'"), "%s", info.note);
    size_t reshapes = 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        reshapes += starts_with(l->nodes[i].label, "Reshape\n");
        cr_expect_null(strstr(l->nodes[i].label, "\nop_1\n"), "a far reader was drawn");
        cr_expect_null(strstr(l->nodes[i].label, "\nop_396\n"), "a far reader was drawn");
    }
    cr_expect_geq(reshapes, 1);
    cr_expect_eq(check_copies(l, "Constant\nshape_const\n", "Reshape\n"), reshapes,
                 "each drawn Reshape has its copy, and copies get no stubs");
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, collapsed_view_drops_the_edges_of_a_shared_constant, .timeout = 60)
{
    shared_net s = shared_graph(400);
    gl_render_info info;
    gl_layout *l = layout_of(s.m->graph, &(gl_render_opts){.max_nodes = 50}, &info);
    cr_expect_not_null(strstr(info.note, "chunks"), "%s", info.note);
    /* the Constant is node 1, in the first chunk: its only way out is the chain */
    size_t first = l->n_nodes, out = 0;
    for (size_t i = 0; i < l->n_nodes && first == l->n_nodes; i++)
        if (starts_with(l->nodes[i].label, "nodes 1-"))
            first = i;
    cr_assert_lt(first, l->n_nodes);
    for (size_t k = 0; k < l->n_edges; k++)
        out += l->edges[k].from == first;
    cr_expect_eq(out, 1, "the first chunk feeds only the next one");
    gl_layout_free(l);
    gl_model_free(s.m);
}

/* ---- the time bound ------------------------------------------------------------------- */

/* Children of this process (zombies included): /proc/self/task/<tid>/children of every
 * thread. `pids` may be NULL; SIZE_MAX when the kernel does not list them. */
static size_t list_children(pid_t *pids, size_t max)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return SIZE_MAX;
    size_t n = 0;
    bool listed = false;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[320];
        snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        listed = true;
        for (long pid; fscanf(f, "%ld", &pid) == 1; n++)
            if (pids && n < max)
                pids[n] = (pid_t)pid;
        fclose(f);
    }
    closedir(d);
    return listed ? n : SIZE_MAX;
}

static void expect_no_child_left(size_t before)
{
    size_t after = list_children(NULL, 0);
    if (before != SIZE_MAX)
        cr_expect_eq(after, before, "children before %zu, after %zu", before, after);
    int status;
    cr_expect_leq(waitpid(-1, &status, WNOHANG), 0, "a zombie was left behind");
}

Test(render, a_layout_past_its_time_limit_is_killed, .timeout = 60)
{
    gl_model *m = big_graph(400, false); /* 482 boxes: hundreds of ms of dot */
    size_t before = list_children(NULL, 0);
    gl_render_opts o = {.timeout_ms = 1};
    const char *want = "Graphviz layout took longer than 1 ms (482 boxes); use a focus or a "
                       "smaller max_nodes";

    char *svg = (char *)"not touched";
    size_t len = 0;
    cr_expect_eq(gl_render_svg(m->graph, &o, &svg, &len, NULL), GL_ERR_UNSUPPORTED);
    cr_expect_null(svg);
    cr_expect_not_null(strstr(gl_error_message(), want), "%s", gl_error_message());
    cr_expect(starts_with(gl_error_message(), "graph '"), "%s", gl_error_message());

    gl_layout *l = NULL;
    cr_expect_eq(gl_render_layout(m->graph, &o, &l, NULL), GL_ERR_UNSUPPORTED);
    cr_expect_null(l);
    cr_expect_not_null(strstr(gl_error_message(), want), "%s", gl_error_message());

    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/slow.svg", dir);
    cr_expect_eq(gl_render_svg_file(m->graph, &o, path, NULL), GL_ERR_UNSUPPORTED);
    cr_expect_eq(tu_dir_entries(dir), 0, "no file, no temporary file");
    tu_rmtree(dir);
    free(dir);
    expect_no_child_left(before);

    /* the limit was what stopped it: in whole seconds the message says so, and with
     * room the same graph renders */
    o.max_nodes = 0;
    o.timeout_ms = 60000;
    l = layout_of(m->graph, &o, NULL);
    cr_expect_eq(l->n_nodes, 482);
    gl_layout_free(l);
    expect_no_child_left(before);
    gl_model_free(m);
}

/* Kills the first child of ours that was not there before with `sig`. */
typedef struct killer {
    pid_t before[64];
    size_t n_before;
    int sig;
    pid_t victim;
} killer;

static void *kill_new_child(void *arg)
{
    killer *k = arg;
    for (int tries = 0; tries < 20000 && !k->victim; tries++) {
        pid_t now[64];
        size_t n = list_children(now, 64);
        for (size_t i = 0; i < n && i < 64 && !k->victim; i++) {
            bool old = false;
            for (size_t j = 0; j < k->n_before && j < 64; j++)
                old |= now[i] == k->before[j];
            if (!old && kill(now[i], k->sig) == 0)
                k->victim = now[i];
        }
        if (!k->victim)
            usleep(500);
    }
    return NULL;
}

Test(render, a_crashing_layout_is_an_error_naming_the_signal, .timeout = 60)
{
    gl_model *m = big_graph(400, false);
    killer k = {.sig = SIGTERM};
    k.n_before = list_children(k.before, 64);
    if (k.n_before == SIZE_MAX)
        cr_skip_test("this kernel does not list children in /proc");
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, kill_new_child, &k), 0);
    gl_layout *l = NULL;
    gl_status st = gl_render_layout(m->graph, &(gl_render_opts){.timeout_ms = 60000}, &l, NULL);
    pthread_join(thread, NULL);
    cr_assert_neq(k.victim, 0, "the layout child was not found");
    cr_expect_eq(st, GL_ERR_INTERNAL, "%s", gl_error_message());
    cr_expect_null(l);
    char want[64];
    snprintf(want, sizeof(want), "died of signal %d", SIGTERM);
    cr_expect_not_null(strstr(gl_error_message(), want), "%s", gl_error_message());
    cr_expect(starts_with(gl_error_message(), "graph '"), "%s", gl_error_message());
    expect_no_child_left(k.n_before);
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- layout coordinates ------------------------------------------------------------- */

Test(render, layout_has_one_finite_box_per_drawn_node)
{
    small s = small_graph();
    gl_render_info info;
    gl_layout *l = layout_of(s.m->graph, NULL, &info);
    cr_assert_eq(l->n_nodes, info.nodes_drawn);
    cr_expect_gt(l->width, 0);
    cr_expect_gt(l->height, 0);
    size_t node_boxes = 0;
    for (size_t i = 0; i < l->n_nodes; i++) {
        const gl_layout_node *b = &l->nodes[i];
        cr_expect(isfinite(b->x) && isfinite(b->y) && b->w > 0 && b->h > 0);
        cr_expect(b->x >= 0 && b->x <= l->width && b->y >= 0 && b->y <= l->height,
                  "box %zu at (%g, %g) outside %gx%g", i, b->x, b->y, l->width, l->height);
        cr_expect_not_null(b->label);
        node_boxes += b->kind == GL_BOX_NODE;
    }
    cr_expect_eq(node_boxes, 5);
    gl_node *all[] = {s.conv, s.relu, s.sq, s.add1, s.add2};
    for (size_t i = 0; i < 5; i++)
        cr_expect_not_null(box_with_id(l, all[i]->id));
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_layout_edge *e = &l->edges[i];
        cr_expect_lt(e->from, l->n_nodes);
        cr_expect_lt(e->to, l->n_nodes);
        cr_expect_geq(e->n_pts, 2);
        for (size_t k = 0; k < 2 * e->n_pts; k++)
            cr_expect(isfinite(e->pts[k]));
    }
    /* y up: the input (top of a TB drawing) is above the output */
    const gl_layout_node *in = NULL, *out = NULL;
    for (size_t i = 0; i < l->n_nodes; i++) {
        in = l->nodes[i].kind == GL_BOX_INPUT ? &l->nodes[i] : in;
        out = l->nodes[i].kind == GL_BOX_OUTPUT ? &l->nodes[i] : out;
    }
    cr_assert(in && out);
    cr_expect_gt(in->y, out->y);
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, xlabels_of_big_drawings_have_positions, .timeout = 60)
{
    gl_model *m = big_graph(400, false); /* 480 nodes: 482 boxes, laid out whole */
    gl_render_info info;
    gl_layout *l = layout_of(m->graph, NULL, &info);
    cr_expect_not(info.reduced);
    cr_expect_eq(info.nodes_drawn, 482);
    size_t labelled = 0;
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_layout_edge *e = &l->edges[i];
        if (!e->label[0])
            continue;
        labelled++;
        cr_expect(e->label_x > 0 && e->label_x <= l->width && e->label_y > 0 &&
                      e->label_y <= l->height,
                  "label '%s' at (%g, %g)", e->label, e->label_x, e->label_y);
    }
    cr_expect_eq(labelled, l->n_edges - 1, "every edge but the one into the output");
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- SVG files ---------------------------------------------------------------------- */

Test(render, svg_file_is_written_whole_and_replaces_the_old_one)
{
    small s = small_graph();
    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/g.svg", dir);
    cr_assert(tu_write_file(path, "old", 3));
    gl_render_info info;
    cr_assert_eq(gl_render_svg_file(s.m->graph, NULL, path, &info), GL_OK, "%s",
                 gl_error_message());
    size_t len = 0;
    char *svg = tu_read_file(path, &len);
    cr_assert_not_null(svg);
    svg = realloc(svg, len + 1);
    svg[len] = '\0';
    assert_svg_valid(svg, len);
    cr_expect_not_null(strstr(svg, "relu1"));
    cr_expect_eq(tu_dir_entries(dir), 1, "no temporary file left behind");
    free(svg);

    snprintf(path, sizeof(path), "%s/missing/g.svg", dir);
    cr_expect_eq(gl_render_svg_file(s.m->graph, NULL, path, NULL), GL_ERR_IO);
    cr_expect_not_null(strstr(gl_error_message(), path), "%s", gl_error_message());
    tu_rmtree(dir);
    free(dir);
    gl_model_free(s.m);
}

/* ---- every kind of box counts against max_nodes ------------------------------------- */

/* One node "wide" reading n graph inputs. */
static gl_model *many_inputs(size_t n)
{
    gl_model *m = tu_model(13);
    const int64_t d[] = {1};
    gl_value **ins = malloc(n * sizeof(*ins));
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "in%zu", i);
        ins[i] = tu_input(m->graph, name, GL_DT_FLOAT, 1, d);
    }
    gl_node *wide = gl_add_node(m->graph, "Sum", "", "wide", ins, n, 1);
    tu_output(m->graph, wide->outputs[0]);
    free(ins);
    return m;
}

/* One node "wide" with n outputs, every one a graph output. */
static gl_model *many_outputs(size_t n)
{
    gl_model *m = tu_model(13);
    const int64_t d[] = {1};
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, d);
    gl_node *wide = gl_add_node(m->graph, "Split", "", "wide", &x, 1, n);
    for (size_t i = 0; i < n; i++)
        tu_output(m->graph, wide->outputs[i]);
    return m;
}

/* n initializers that are graph outputs too (constants that never fold), read by one
 * node "wide". */
static gl_model *many_output_constants(size_t n)
{
    gl_model *m = tu_model(13);
    const int64_t d[] = {1};
    const float one = 1;
    gl_value **ins = malloc(n * sizeof(*ins));
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "c%zu", i);
        ins[i] = tu_const_f32(m->graph, name, 1, d, &one);
        tu_output(m->graph, ins[i]);
    }
    gl_node *wide = gl_add_node(m->graph, "Sum", "", "wide", ins, n, 1);
    tu_output(m->graph, wide->outputs[0]);
    free(ins);
    return m;
}

Test(render, max_nodes_bounds_inputs_outputs_and_constants, .timeout = 120)
{
    static const struct {
        const char *what;
        gl_model *(*make)(size_t n);
        size_t n;
        const char *focus;
        size_t max_nodes;
    } cases[] = {
        {"100k graph inputs, focus on their reader", many_inputs, 100000, "wide", 200},
        {"100k graph inputs, the whole graph", many_inputs, 100000, NULL, 200},
        {"20k graph outputs of one node, focus on it", many_outputs, 20000, "wide", 100},
        {"20k graph outputs of one node, the whole graph", many_outputs, 20000, NULL, 1500},
        {"20k constants that are outputs, focus", many_output_constants, 20000, "wide", 64},
        {"20k constants that are outputs, the whole graph", many_output_constants, 20000, NULL,
         1500},
    };
    for (size_t c = 0; c < GL_ARRAY_LEN(cases); c++) {
        gl_model *m = cases[c].make(cases[c].n);
        gl_render_opts o = {.max_nodes = cases[c].max_nodes, .focus = cases[c].focus};
        gl_render_info info;
        char *dot = dot_of(m->graph, &o, &info);
        cr_expect_leq(info.nodes_drawn, cases[c].max_nodes, "%s: %zu boxes", cases[c].what,
                      info.nodes_drawn);
        cr_expect_eq(graphviz_node_count(dot), (int)info.nodes_drawn, "%s", cases[c].what);
        cr_expect(strstr(info.note, "not drawn"), "%s: the note says what was left out: %s",
                  cases[c].what, info.note);
        if (cases[c].focus) /* the node itself is drawn, and tells how many it lost */
            cr_expect(strstr(dot, "\\nwide") && strstr(dot, " more"), "%s: %s", cases[c].what,
                      info.note);
        free(dot);
        gl_model_free(m);
    }
}

Test(render, the_graph_view_of_a_node_with_100k_inputs_lays_out_its_box_limit, .timeout = 120)
{
    gl_model *m = many_inputs(100000);
    gl_render_info info;
    gl_layout *l = layout_of(m->graph, &(gl_render_opts){.max_nodes = 200, .focus = "wide"},
                             &info);
    cr_expect_leq(l->n_nodes, 200);
    cr_expect_eq(l->n_nodes, info.nodes_drawn);
    const gl_layout_node *wide = NULL;
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].kind == GL_BOX_NODE)
            wide = &l->nodes[i];
    cr_assert_not_null(wide);
    size_t stubs = 0;
    for (size_t i = 0; i < l->n_nodes; i++)
        if (l->nodes[i].kind == GL_BOX_STUB) {
            stubs++;
            cr_expect(strstr(l->nodes[i].label, "more inputs"), "%s", l->nodes[i].label);
            cr_expect_eq(edges_between(l, &l->nodes[i], wide), 1);
        }
    cr_expect_eq(stubs, 1, "one '... N more inputs' above the node");
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- renders degrade instead of failing --------------------------------------------- */

/* Dense blocks as in a DenseNet: in each block, layer j reads the Concat of the block's
 * input and every earlier layer's output (BN-Relu-Conv chain in between, no weights). */
static gl_model *dense_graph(int blocks, int layers)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    const int64_t d[] = {1, 8, 4, 4};
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 4, d);
    char name[96];
    for (int b = 0; b < blocks; b++) {
        gl_value **feats = malloc((size_t)(layers + 1) * sizeof(*feats));
        feats[0] = x;
        for (int j = 1; j <= layers; j++) {
            snprintf(name, sizeof(name), "/block%d/layer%d/Concat", b, j);
            gl_node *cat = gl_add_node(g, "Concat", "", name, feats, (size_t)j, 1);
            gl_value *y = cat->outputs[0];
            static const char *const chain[] = {"BatchNormalization", "Relu", "Conv"};
            for (size_t k = 0; k < GL_ARRAY_LEN(chain); k++) {
                snprintf(name, sizeof(name), "/block%d/layer%d/%s", b, j, chain[k]);
                y = tu_node(g, chain[k], name, 1, y)->outputs[0];
                set_type(y, GL_DT_FLOAT, 4, d);
            }
            feats[j] = y;
        }
        snprintf(name, sizeof(name), "/block%d/Concat", b);
        x = gl_add_node(g, "Concat", "", name, feats, (size_t)layers + 1, 1)->outputs[0];
        free(feats);
    }
    tu_output(g, x);
    return m;
}

Test(render, a_dense_graph_gets_a_drawing_dot_lays_out_quickly)
{
    /* 3 blocks of 24 layers: 219 nodes, fewer than max_nodes, but ~2,000 edges spanning
     * up to a hundred ranks each: the whole drawing would take dot minutes. */
    gl_model *m = dense_graph(3, 24);
    gl_render_info info;
    char *dot = dot_of(m->graph, NULL, &info);
    cr_expect(info.reduced, "%s", info.note);
    cr_expect(strstr(info.note, "collapsed into") && strstr(info.note, "keep the layout fast"),
              "%s", info.note);
    cr_expect(strstr(dot, "keep the layout fast"), "the graph label says so");
    char *again = dot_of(m->graph, NULL, NULL);
    cr_expect_str_eq(dot, again, "the choice depends on the graph only");
    free(again);
    free(dot);
    gl_model_free(m);
}

Test(render, a_graph_of_medium_work_is_drawn_whole_with_bounded_effort)
{
    gl_model *m = big_graph(1100, false); /* 1,320 nodes in a long chain: ~1.8M units */
    gl_render_info info;
    char *dot = dot_of(m->graph, NULL, &info);
    cr_expect_not(info.reduced);
    cr_expect(strstr(info.note, "layout effort bounded"), "%s", info.note);
    cr_expect(strstr(dot, "nslimit=1, nslimit1=1, mclimit=0.1"), "the DOT carries the bound");
    free(dot);
    small s = small_graph(); /* small drawings keep dot's full effort */
    dot = dot_of(s.m->graph, NULL, &info);
    cr_expect_null(strstr(dot, "nslimit"));
    cr_expect_str_empty(info.note);
    free(dot);
    gl_model_free(s.m);
    gl_model_free(m);
}

Test(render, after_a_timeout_a_small_collapsed_drawing_says_why)
{
    gl_model *m = big_graph(1100, true);
    view v;
    char *dot = NULL;
    gl_render_info info;
    cr_assert_eq(gl_rv_make_dot(m->graph, NULL, "the layout of 1,322 boxes did not finish", &v,
                                &dot, NULL, &info),
                 GL_OK);
    cr_expect_leq(info.nodes_drawn, 60);
    cr_expect(info.reduced);
    cr_expect(strncmp(info.note, "the layout of 1,322 boxes did not finish; ", 42) == 0, "%s",
              info.note);
    cr_expect_eq(graphviz_node_count(dot), (int)info.nodes_drawn);
    gl_rv_view_free(&v);
    free(dot);
    gl_model_free(m);
}

/* ---- edge cases and real models ----------------------------------------------------- */

Test(render, empty_graph_renders)
{
    gl_model *m = tu_model(13);
    gl_render_info info;
    char *dot = dot_of(m->graph, NULL, &info);
    cr_expect_eq(info.nodes_drawn, 0);
    cr_expect_eq(graphviz_node_count(dot), 0);
    free(dot);
    free(svg_of(m->graph, &(gl_render_opts){.title = "empty"}, NULL));
    gl_model_free(m);
}

Test(render, bundled_examples_render_to_svg)
{
    const char *names[] = {"conv_nhwc", "transformer_block", "tiny_if", "mlp_external"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char rel[128];
        snprintf(rel, sizeof(rel), "examples/%s/model.onnx", names[i]);
        gl_model *m = NULL;
        cr_assert_eq(gl_model_load(tu_src(rel), NULL, &m), GL_OK, "%s", gl_error_message());
        gl_render_info info;
        char *svg = svg_of(m->graph, &(gl_render_opts){.title = names[i]}, &info);
        cr_expect_gt(info.nodes_drawn, m->graph->live_nodes, "%s", names[i]);
        cr_expect_not_null(strstr(svg, names[i]), "the title is drawn");
        if (strcmp(names[i], "tiny_if") == 0)
            cr_expect_not_null(strstr(svg, "subgraphs: "), "If shows its branches");
        free(svg);
        gl_model_free(m);
    }
}

#ifdef HAVE_LSAN
/* Graphviz 2.42 leaks with HTML/record labels and gvContext(); our path must not. */
Test(render, no_leaks_across_renders)
{
    small s = small_graph();
    for (int i = 0; i < 3; i++) {
        char *svg = svg_of(s.m->graph, NULL, NULL);
        free(svg);
        gl_layout_free(layout_of(s.m->graph, NULL, NULL));
    }
    gl_model_free(s.m);
    cr_expect_eq(__lsan_do_recoverable_leak_check(), 0, "leaks: see stderr");
}
#endif

/* ---- key attributes in boxes (issue 24) ------------------------------------------------ */

/* A node with attributes and, optionally, a constant second input (its text as
 * tu_parse_tensor reads it); the first line of its box must read `first_line`. */
typedef struct attr_case {
    const char *op;
    tu_attr attrs[6];
    const char *const_input; /* NULL: a single (graph) input */
    const char *first_line;  /* the box's first line, exactly */
} attr_case;

static const attr_case ATTR_CASES[] = {
    {"Transpose", {{"perm", 'I', .n = 4, .ints = {0, 2, 3, 1}}}, NULL, "Transpose perm=[0,2,3,1]"},
    {"Conv",
     {{"kernel_shape", 'I', .n = 2, .ints = {3, 3}},
      {"strides", 'I', .n = 2, .ints = {2, 2}},
      {"pads", 'I', .n = 4, .ints = {1, 1, 1, 1}},
      {"group", 'i', .i = 32},
      {"dilations", 'I', .n = 2, .ints = {1, 1}}},
     NULL, "Conv k=3x3 s=2 p=1 g=32"},
    /* defaults left out; lists that differ stay lists */
    {"Conv",
     {{"kernel_shape", 'I', .n = 2, .ints = {1, 7}},
      {"strides", 'I', .n = 2, .ints = {1, 1}},
      {"pads", 'I', .n = 4, .ints = {0, 3, 0, 3}},
      {"group", 'i', .i = 1}},
     NULL, "Conv k=1x7 p=[0,3,0,3]"},
    {"MaxPool", {{"kernel_shape", 'I', .n = 2, .ints = {2, 2}}, {"strides", 'I', .n = 2, .ints = {2, 2}}},
     NULL, "MaxPool k=2x2 s=2"},
    {"Gemm", {{"transB", 'i', .i = 1}, {"transA", 'i', .i = 0}, {"alpha", 'f', .f = 1.0f}},
     NULL, "Gemm transB=1"},
    {"Cast", {{"to", 'i', .i = GL_DT_FLOAT16}}, NULL, "Cast to=float16"},
    {"Softmax", {{"axis", 'i', .i = -1}}, NULL, "Softmax axis=-1"},
    {"Reshape", {{0}}, "int64[3]:1,16,256", "Reshape shape=[1,16,256]"},
    {"Unsqueeze", {{0}}, "int64[1]:0", "Unsqueeze axes=[0]"},
    {"Gelu", {{"approximate", 's', .s = "tanh"}}, NULL, "Gelu approx=tanh"},
    {"Gelu", {{"approximate", 's', .s = "none"}}, NULL, "Gelu"},
    {"Relu", {{0}}, NULL, "Relu"},
    /* model text is sanitized like names: a control byte is spelled, not passed */
    {"Resize", {{"mode", 's', .s = "li\x1bnear\n"}}, NULL, "Resize mode=li\\x1Bnear\\n"},
};

static char *first_line(const char *label)
{
    const char *nl = strchr(label, '\n');
    return nl ? gl_xstrndup(label, (size_t)(nl - label)) : gl_xstrdup(label);
}

static gl_model *attr_case_model(const attr_case *c, gl_node **node)
{
    gl_model *m = tu_model(18);
    const int64_t d[] = {1, 16, 256};
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 3, d);
    gl_value *k = NULL;
    if (c->const_input)
        k = tu_const_tensor(m->graph, "k", tu_parse_tensor(c->const_input));
    *node = k ? tu_node(m->graph, c->op, "n", 2, x, k) : tu_node(m->graph, c->op, "n", 1, x);
    tu_apply_attrs(*node, c->attrs);
    tu_output(m->graph, (*node)->outputs[0]);
    return m;
}

Test(render, boxes_show_key_attributes_without_defaults)
{
    for (size_t i = 0; i < sizeof(ATTR_CASES) / sizeof(ATTR_CASES[0]); i++) {
        const attr_case *c = &ATTR_CASES[i];
        gl_node *n;
        gl_model *m = attr_case_model(c, &n);
        gl_layout *l = layout_of(m->graph, &(gl_render_opts){.fold_constants = true}, NULL);
        const gl_layout_node *b = box_with_id(l, n->id);
        cr_assert_not_null(b, "case %zu", i);
        char *line = first_line(b->label);
        cr_expect_str_eq(line, c->first_line, "case %zu (%s): the box reads '%s'", i, c->op,
                         b->label);
        free(line);
        gl_layout_free(l);
        /* the DOT (and so the SVG) carries the same line, and Graphviz reads it */
        char *dot = dot_of(m->graph, NULL, NULL);
        gl_strbuf quoted = {0};
        gl_rv_put_dot_string(&quoted, c->first_line);
        quoted.s[quoted.len - 1] = '\0'; /* the line starts the label: no closing quote */
        cr_expect_not_null(strstr(dot, quoted.s), "case %zu: DOT:\n%s", i, dot);
        free(quoted.s);
        graphviz_node_count(dot);
        free(dot);
        gl_model_free(m);
    }
}

Test(render, attributes_reach_the_svg_escaped)
{
    const attr_case *c = &ATTR_CASES[sizeof(ATTR_CASES) / sizeof(ATTR_CASES[0]) - 1];
    gl_node *n;
    gl_model *m = attr_case_model(c, &n);
    gl_node_set_attr_string(n, "mode", "<b>&x;\"\x1b");
    char *svg = svg_of(m->graph, NULL, NULL);
    cr_expect_not_null(strstr(svg, "Resize mode=&lt;b&gt;\\x26x;&quot;\\x1B"), "%s", svg);
    cr_expect_null(strstr(svg, "<b>"), "no raw markup from the model");
    free(svg);
    gl_model_free(m);
}

/* ---- one-line boxes -------------------------------------------------------------------- */

Test(render, one_line_boxes_hold_op_attributes_and_the_end_of_the_name)
{
    gl_model *m = tu_model(18);
    const int64_t d[] = {1, 3, 8, 8};
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 4, d);
    gl_node *t = tu_node(m->graph, "Transpose", "/encoder/layers.0/attn/Transpose_1", 1, x);
    tu_apply_attrs(t, (tu_attr[]){{"perm", 'I', .n = 4, .ints = {0, 2, 3, 1}}, {0}});
    gl_node *r = tu_node(m->graph, "Relu", "relu", 1, t->outputs[0]);
    gl_node *bn = tu_node(m->graph, "Sigmoid", "/features/layer2/norm1/Sigmoid", 1, r->outputs[0]);
    tu_output(m->graph, bn->outputs[0]);
    gl_render_opts o = {.one_line = true, .fold_constants = true};
    gl_layout *l = layout_of(m->graph, &o, NULL);
    cr_expect_str_eq(box_with_id(l, t->id)->label, "Transpose perm=[0,2,3,1] \xC2\xB7 attn/Transpose_1");
    cr_expect_str_eq(box_with_id(l, r->id)->label, "Relu \xC2\xB7 relu");
    cr_expect_str_eq(box_with_id(l, bn->id)->label, "Sigmoid \xC2\xB7 layer2/norm1",
                     "a last part that repeats the op gives way to the one before");
    for (size_t i = 0; i < l->n_nodes; i++)
        cr_expect_null(strchr(l->nodes[i].label, '\n'), "one line: '%s'", l->nodes[i].label);
    gl_layout_free(l);
    gl_model_free(m);
}

/* ---- the legend and the ghosts of removed nodes ---------------------------------------- */

Test(render, svg_has_a_legend_of_the_colours_drawn)
{
    small s = small_graph();
    char *svg = svg_of(s.m->graph, NULL, NULL);
    cr_expect_not_null(strstr(svg, "cluster_legend"), "a legend cluster");
    cr_expect_not_null(strstr(svg, ">graph input<"), "%s", svg);
    cr_expect_not_null(strstr(svg, ">graph output<"), "%s", svg);
    cr_expect_not_null(strstr(svg, ">node<"), "%s", svg);
    cr_expect_null(strstr(svg, "+ added"), "no diff, no diff colours in the legend");
    free(svg);
    hand_diff h;
    make_diff(&h, &s);
    svg = svg_of(s.m->graph, &(gl_render_opts){.diff = &h.d}, NULL);
    const char *legend = strstr(svg, "cluster_legend");
    cr_assert_not_null(legend);
    const char *want[] = {"+ added", "~ modified", "&gt; replaces removed nodes",
                          "&#45; removed (ghost)"}; /* Graphviz spells '-' &#45; */
    for (size_t i = 0; i < 4; i++)
        cr_expect_not_null(strstr(legend, want[i]), "legend has '%s':\n%s", want[i], legend);
    free(svg);
    /* the terminal's layout has neither */
    gl_layout *l = layout_of(s.m->graph, &(gl_render_opts){.diff = &h.d}, NULL);
    for (size_t i = 0; i < l->n_nodes; i++)
        cr_expect_null(strstr(l->nodes[i].label, "legend"), "%s", l->nodes[i].label);
    gl_layout_free(l);
    gl_model_free(s.m);
}

Test(render, removed_nodes_are_drawn_as_ghosts_in_the_diff_render)
{
    small s = small_graph();
    hand_diff h;
    make_diff(&h, &s);
    char *ops[12];
    for (int i = 0; i < 12; i++)
        ops[i] = i == 3 ? "<Tr&ns>" : "Transpose";
    h.ch[3].old_ops = ops;
    gl_render_opts o = {.diff = &h.d, .title = "03-fusion"};
    char *dot = dot_of(s.m->graph, &o, NULL);
    const char *cluster = strstr(dot, "subgraph cluster_removed");
    cr_assert_not_null(cluster, "%s", dot);
    cr_expect_eq(count_of(cluster, "style=\"rounded,dashed,filled\""), 12 + 1,
                 "12 ghosts and the legend's sample:\n%s", dot);
    cr_expect_not_null(strstr(cluster, "\"- Transpose\\ngone0\""), "%s", cluster);
    cr_expect_not_null(strstr(cluster, "\"- Transpose\\ngone11\""), "every one, not 10");
    cr_expect_eq(count_of(dot, "color=\"#9e9e9e\""), 12 + 1 + 1, "grey: ghosts, sample, cluster");
    graphviz_node_count(dot);
    free(dot);
    char *svg = svg_of(s.m->graph, &o, NULL);
    cr_expect_not_null(strstr(svg, "removed by this step"), "%s", svg);
    cr_expect_not_null(strstr(svg, "&#45; &lt;Tr&amp;ns&gt;"), "an op from the diff is escaped");
    cr_expect_not_null(strstr(svg, "stroke-dasharray"), "dashed");
    free(svg);
    /* past 40 ghosts, one box counts the rest */
    char *names[100];
    char buf[100][16];
    for (int i = 0; i < 100; i++) {
        snprintf(buf[i], sizeof(buf[i]), "r%d", i);
        names[i] = buf[i];
    }
    h.ch[3] = (gl_node_change){.kind = GL_CHANGE_REMOVED, .old_names = names, .n_old = 100};
    dot = dot_of(s.m->graph, &o, NULL);
    cr_expect_not_null(strstr(dot, "\"+60 more removed\""), "%s", dot);
    cr_expect_not_null(strstr(dot, "\"- r39\""), "no op known: the name alone");
    cr_expect_null(strstr(dot, "\\nr40\""), "the first 40 only");
    graphviz_node_count(dot);
    free(dot);
    gl_model_free(s.m);
}
