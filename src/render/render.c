/* render.c — graph snapshots as Graphviz documents, SVG and layout coordinates.
 *
 * Three stages, each a small set of functions:
 *   1. choose what to draw: the whole graph, the whole graph with constants folded, the
 *      neighbourhood of a focus node, or groups (name prefixes / chunks) — so that the
 *      drawing never needs more than max_nodes boxes;
 *   2. build a `view`: boxes with display text and merged edges, independent of Graphviz;
 *      a constant source read by several nodes becomes one copy per reader, placed just
 *      before it ("shared by N"), so no edge spans the graph from one shared source;
 *   3. print the view as DOT text; for SVG and layouts, hand that text to Graphviz
 *      (agmemread, gvLayout "dot", gvRenderData "svg" / the laid-out coordinates) in a
 *      forked child with a deadline (run_with_deadline): the SVG bytes or the encoded
 *      layout come back through a pipe, and a layout that runs too long is killed.
 * The DOT file a user sees is therefore exactly what we lay out.
 */
#include "render/render.h"
#include "util/escape.h"

#include <graphviz/gvc.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define DEFAULT_MAX_NODES 1500
#define MIN_MAX_NODES 16
#define DEFAULT_RADIUS 3
#define NAME_DISPLAY_MAX 60   /* characters of a name shown before cutting the middle */
#define MAX_OUTPUT_LINES 4    /* output shapes listed in a node box */
#define MAX_FOLDED_LINES 6    /* folded constants listed in a node box */
#define MAX_REPLACED_NAMES 4  /* names on a "replaces:" line */
#define MAX_DETAILS 3         /* details on a "changed:" line */
#define MAX_REMOVED_NAMES 10  /* removed nodes named in the graph label */
#define MAX_SMALL_VALUES 4    /* constants this small show their values */
#define HISTOGRAM_OPS 3       /* op counts shown in a group box */
/* Past this many boxes edge labels become xlabels: dot turns a `label` into a virtual node
 * in an extra rank and lays out about 3x slower (1,500 boxes: ~1.5 s vs ~0.5 s); xlabels
 * are placed after the layout. */
#define XLABEL_ABOVE 400
#define NO_BOX UINT32_MAX

/* ==== growable text =================================================================== */

/* Render buffers are proportional to the graph already in memory, so they use the
 * aborting allocators (status.h) like other bookkeeping. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    GL_GROW(b->s, b->cap, b->len + n + 1);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    GL_GROW(b->s, b->cap, b->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The text so far as a malloc'd string ("" when empty); the buffer is reset. */
static char *sb_take(sbuf *b)
{
    char *s = b->s ? b->s : gl_xstrdup("");
    *b = (sbuf){0};
    return s;
}

/* "20,000": counts in notes are read by people. */
static const char *fmt_count(char buf[32], size_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof(digits), "%zu", n);
    size_t o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* ==== display text ===================================================================== */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes are not one:
 * overlong forms, surrogates, code points past U+10FFFF and the XML-forbidden
 * U+FFFE/U+FFFF are all rejected, so what passes is safe in DOT and in SVG. */
static size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                            : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || n > avail)
        return 0;
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

/* "&amp;", "&#1;": Graphviz decodes these in plain labels and copies them raw into SVG,
 * where an undefined entity or "&#1;" is not XML. */
static bool looks_like_entity(const char *s)
{
    size_t i = 1;
    while (i < 12 && (s[i] == '#' || (s[i] >= '0' && s[i] <= '9') ||
                      (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
        i++;
    return i > 1 && s[i] == ';';
}

static void put_escaped_byte(sbuf *b, unsigned char c)
{
    static const struct {
        unsigned char c;
        const char *text;
    } named[] = {{'\n', "\\n"}, {'\t', "\\t"}, {'\r', "\\r"}};
    for (size_t i = 0; i < GL_ARRAY_LEN(named); i++)
        if (named[i].c == c) {
            sb_puts(b, named[i].text);
            return;
        }
    sb_printf(b, "\\x%02X", c);
}

/* Display form of a name: valid UTF-8 without control characters (those and invalid
 * bytes are spelled \xNN; C1 and bidi controls, util/escape.h's list, too). */
static void put_sanitized(sbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t avail = strlen(s);
    while (avail) {
        size_t n = utf8_seq_len(p, avail);
        uint32_t cp = 0;
        bool control = n && gl_utf8_decode((const char *)p, &cp) == n && gl_codepoint_unsafe(cp);
        if (n == 0 || control) {
            for (size_t i = 0; i < (n ? n : 1); i++)
                put_escaped_byte(b, p[i]);
            n = n ? n : 1;
        } else if (p[0] == '&' && looks_like_entity((const char *)p)) {
            put_escaped_byte(b, '&');
        } else {
            sb_putn(b, (const char *)p, n);
        }
        p += n;
        avail -= n;
    }
}

static size_t utf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Byte offset of code point `k` of valid UTF-8 text. */
static size_t utf8_offset(const char *s, size_t len, size_t k)
{
    size_t i = 0;
    for (size_t seen = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && seen++ == k)
            break;
    }
    return i;
}

/* Sanitized display text, cut in the middle ("abc…xyz") past `max_chars` characters:
 * the start and end of a long ONNX name are the informative parts. */
static void put_display(sbuf *b, const char *s, size_t max_chars)
{
    sbuf t = {0};
    put_sanitized(&t, s ? s : "");
    size_t chars = utf8_count(t.s ? t.s : "", t.len);
    if (chars <= max_chars) {
        if (t.len)
            sb_putn(b, t.s, t.len);
    } else {
        size_t keep = (max_chars - 1) / 2;
        size_t head = utf8_offset(t.s, t.len, keep);
        size_t tail = utf8_offset(t.s, t.len, chars - keep);
        sb_putn(b, t.s, head);
        sb_puts(b, "\xE2\x80\xA6"); /* … */
        sb_putn(b, t.s + tail, t.len - tail);
    }
    free(t.s);
}

static void put_name(sbuf *b, const char *s) { put_display(b, s, NAME_DISPLAY_MAX); }

/* A DOT double-quoted string for display text whose lines are separated by '\n'.
 * Graphviz reads "\\" as a backslash and "\n" as a line break in labels. */
static void put_dot_string(sbuf *b, const char *text)
{
    sb_putc(b, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '\n')
            sb_puts(b, "\\n");
        else if (*p == '\\' || *p == '"') {
            sb_putc(b, '\\');
            sb_putc(b, *p);
        } else
            sb_putc(b, *p);
    }
    sb_putc(b, '"');
}

/* Locale-proof %g: a TUI that called setlocale(LC_ALL, "") must not get "0,5" here. */
static void put_number(sbuf *b, double v)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%.4g", v);
    for (char *p = buf; *p; p++)
        if (*p == ',')
            *p = '.';
    sb_puts(b, buf);
}

/* ==== a small open-addressing index =================================================== */

/* Maps a hashed key to an index into the caller's array; the caller compares keys
 * (eq callback), so one structure serves edges and name-prefix groups. */
typedef struct index_map {
    uint64_t *hashes;
    uint32_t *slots; /* index + 1; 0 = empty */
    size_t cap, count;
} index_map;

typedef bool (*map_eq_fn)(const void *ctx, uint32_t idx);

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return mix64(h);
}

static void map_insert_slot(index_map *m, uint64_t h, uint32_t slot)
{
    size_t i = h & (m->cap - 1);
    while (m->slots[i])
        i = (i + 1) & (m->cap - 1);
    m->slots[i] = slot;
    m->hashes[i] = h;
}

static void map_grow(index_map *m)
{
    index_map old = *m;
    m->cap = old.cap ? old.cap * 2 : 64;
    m->slots = gl_xcalloc(m->cap, sizeof(*m->slots));
    m->hashes = gl_xcalloc(m->cap, sizeof(*m->hashes));
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i])
            map_insert_slot(m, old.hashes[i], old.slots[i]);
    free(old.slots);
    free(old.hashes);
}

/* The index of the entry equal to the key, or `fresh` after recording it. */
static uint32_t map_intern(index_map *m, uint64_t h, map_eq_fn eq, const void *ctx,
                           uint32_t fresh)
{
    if ((m->count + 1) * 2 > m->cap)
        map_grow(m);
    size_t i = h & (m->cap - 1);
    for (; m->slots[i]; i = (i + 1) & (m->cap - 1))
        if (m->hashes[i] == h && eq(ctx, m->slots[i] - 1))
            return m->slots[i] - 1;
    m->slots[i] = fresh + 1;
    m->hashes[i] = h;
    m->count++;
    return fresh;
}

static void map_free(index_map *m)
{
    free(m->slots);
    free(m->hashes);
    *m = (index_map){0};
}

/* ==== styles ============================================================================ */

typedef struct box_style {
    const char *shape, *style, *fill, *fontsize;
} box_style;

static const box_style BOX_STYLES[] = {
    [GL_BOX_NODE] = {"box", "rounded,filled", "#ffffff", "10"},
    [GL_BOX_INPUT] = {"ellipse", "filled", "#d3edd1", "10"},
    [GL_BOX_OUTPUT] = {"ellipse", "filled", "#e2dbf3", "10"},
    [GL_BOX_CONSTANT] = {"box", "filled", "#eeeeee", "8"},
    [GL_BOX_GROUP] = {"box3d", "filled", "#eaf0f8", "10"},
    [GL_BOX_STUB] = {"box", "dashed", "#ffffff", "9"},
};

/* Text prefix and colours of the diff marks: the prefix carries the meaning, the colour
 * only helps. */
typedef struct mark_style {
    const char *prefix, *fill, *pen, *legend;
} mark_style;

static const mark_style MARK_STYLES[] = {
    [GL_MARK_NONE] = {"", NULL, NULL, NULL},
    [GL_MARK_ADDED] = {"+ ", "#c8efc4", "#2e7d32", "+ added"},
    [GL_MARK_MODIFIED] = {"~ ", "#ffe2a6", "#b26a00", "~ modified"},
    [GL_MARK_REPLACED] = {"> ", "#cdddfc", "#1f4fa0", "> replaces removed nodes"},
};

static const gl_render_mark CHANGE_MARKS[] = {
    [GL_CHANGE_ADDED] = GL_MARK_ADDED,
    [GL_CHANGE_REMOVED] = GL_MARK_NONE,
    [GL_CHANGE_REPLACED] = GL_MARK_REPLACED,
    [GL_CHANGE_MODIFIED] = GL_MARK_MODIFIED,
};

/* How a "changed:" line names each kind of detail. */
static const char *const DETAIL_WORDS[] = {
    [GL_DETAIL_RENAMED] = "renamed",     [GL_DETAIL_OP] = "op",
    [GL_DETAIL_ATTR_ADDED] = "attr +",   [GL_DETAIL_ATTR_REMOVED] = "attr -",
    [GL_DETAIL_ATTR_CHANGED] = "attr",   [GL_DETAIL_INPUT] = "",
    [GL_DETAIL_OUTPUT] = "output",       [GL_DETAIL_OUTPUT_TYPE] = "type of",
};

/* ==== the view: boxes and edges, before any Graphviz ================================== */

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
    index_map edge_index;
    char note[256];
    bool reduced;
} view;

static void view_free(view *v)
{
    for (size_t i = 0; i < v->n_boxes; i++)
        free(v->boxes[i].text);
    free(v->boxes);
    free(v->edges);
    map_free(&v->edge_index);
    *v = (view){0};
}

static uint32_t view_add_box(view *v, gl_render_box_kind kind, gl_render_mark mark,
                             uint32_t node_id, sbuf *text)
{
    GL_GROW(v->boxes, v->cap_boxes, v->n_boxes + 1);
    v->boxes[v->n_boxes] = (vbox){kind, mark, node_id, false, sb_take(text)};
    return (uint32_t)v->n_boxes++;
}

typedef struct edge_key {
    const view *v;
    uint32_t from, to, key;
    bool implicit;
} edge_key;

static bool edge_eq(const void *ctx, uint32_t idx)
{
    const edge_key *k = ctx;
    const vedge *e = &k->v->edges[idx];
    return e->from == k->from && e->to == k->to && e->key == k->key && e->implicit == k->implicit;
}

/* Add one (value, consumer slot) connection, merging it into an existing edge with the
 * same ends and key: Mul(x, x) is one edge "x2"; a group pair is one edge "3 values". */
static void view_connect(view *v, uint32_t from, uint32_t to, const gl_value *val,
                         bool per_value, bool implicit)
{
    edge_key k = {v, from, to, per_value && val ? val->id + 1 : 0, implicit};
    uint64_t h = mix64(((uint64_t)from << 32 | to) ^ mix64((uint64_t)k.key << 1 | implicit));
    uint32_t i = map_intern(&v->edge_index, h, edge_eq, &k, (uint32_t)v->n_edges);
    if (i == v->n_edges) {
        GL_GROW(v->edges, v->cap_edges, v->n_edges + 1);
        v->edges[v->n_edges++] = (vedge){.from = from, .to = to, .key = k.key,
                                         .implicit = implicit, .dashed = implicit,
                                         .first = val, .last_value = UINT32_MAX};
    }
    vedge *e = &v->edges[i];
    if (val && e->last_value != val->id) {
        e->last_value = val->id;
        e->n_values++;
    }
    e->n_slots++;
}

static void edge_label(const vedge *e, sbuf *b)
{
    if (!e->first)
        return;
    if (e->n_values > 1) {
        char n[32];
        sb_printf(b, "%s values", fmt_count(n, e->n_values));
        return;
    }
    char type[256];
    gl_type_format(&e->first->type, type, sizeof(type));
    put_display(b, type, 80);
    if (e->n_slots > 1)
        sb_printf(b, " x%u", e->n_slots);
    if (e->implicit)
        sb_puts(b, " (subgraph)");
}

/* ==== what the caller asked for ======================================================== */

typedef struct settings {
    size_t max_boxes;
    int radius;
    bool fold_constants;
    const char *focus;
    const char *title;
    const gl_diff *diff;
} settings;

static settings resolve_opts(const gl_render_opts *o)
{
    settings s = {DEFAULT_MAX_NODES, DEFAULT_RADIUS, false, NULL, NULL, NULL};
    if (!o)
        return s;
    if (o->max_nodes)
        s.max_boxes = o->max_nodes < MIN_MAX_NODES ? MIN_MAX_NODES : o->max_nodes;
    if (o->radius > 0)
        s.radius = o->radius;
    s.fold_constants = o->fold_constants;
    s.focus = o->focus && *o->focus ? o->focus : NULL;
    s.title = o->title;
    s.diff = o->diff;
    return s;
}

/* ==== building a view ================================================================== */

/* One drawing of a shared constant source next to one reader: the copies of a source
 * read by node n are made just before n's box, so they are contiguous in the list. */
typedef struct source_copy {
    const void *source; /* the Constant node or the initializer value it stands for */
    size_t reader;      /* node index */
    uint32_t box;
} source_copy;

typedef struct builder {
    const gl_graph *g;
    const settings *set;
    view *v;
    const bool *keep;          /* by node index; NULL: every node */
    bool fold_all;             /* every constant goes into its consumers' labels */
    bool draw_io;              /* boxes for graph inputs/outputs */
    bool per_value_edges;      /* node views: an edge per value; group views: per pair */
    uint32_t *box_of_node;     /* by node index */
    uint32_t *box_of_value;    /* by value index: input/constant boxes */
    uint32_t *seen;            /* by value index: stamps for "once per node" loops */
    bool *connected;           /* by value index: its edges are made */
    uint32_t stamp;
    const gl_node_change **change_of; /* by node index; NULL entries: unchanged */
    bool copy_sources;         /* node views: a shared constant is drawn once per reader */
    uint32_t *node_sharers;    /* by node index: distinct readers of a constant node */
    uint32_t *value_sharers;   /* by value index: distinct readers of an initializer */
    source_copy *copies;       /* copies in the order they were made */
    size_t n_copies, cap_copies;
    uint32_t *first_copy;      /* by node index: its first entry in copies, or NO_BOX */
} builder;

static bool is_kept(const builder *b, const gl_node *n)
{
    return !b->keep || b->keep[n->index];
}

/* A value of this graph we can index arrays with (callers may pass odd graphs). */
static bool value_of(const gl_graph *g, const gl_value *v)
{
    return v && v->graph == g && v->index < g->n_values && g->values[v->index] == v;
}

static bool node_of(const gl_graph *g, const gl_node *n)
{
    return n && n->graph == g && n->index < g->n_nodes && g->nodes[n->index] == n;
}

static bool own_value(const builder *b, const gl_value *v) { return value_of(b->g, v); }
static bool own_node(const builder *b, const gl_node *n) { return node_of(b->g, n); }

static bool is_input_like(const gl_value *v)
{
    return v->is_input || v->outer || !v->init;
}

/* ---- constant sources: drawn once per reader when shared ---- */

/* One shared source wired to readers all over the graph makes dot's network simplex run
 * for many minutes (a cse'd torch export: one Constant feeding 65 Reshapes) and draws
 * edges across the whole picture; a copy next to each reader does neither. */

/* An initializer that is a constant and no graph input or output. */
static bool is_constant_value(const gl_value *v)
{
    return !v->producer && !is_input_like(v) && gl_value_is_constant(v) && v->n_output_refs == 0;
}

/* A Constant node with no inputs whose outputs only feed this graph's nodes directly:
 * copies of it can stand in for it wherever it is read. */
static bool is_constant_node(const gl_node *n)
{
    if (!n->op_type || !gl_node_is(n, "Constant") || n->n_inputs || n->n_implicit)
        return false;
    for (size_t k = 0; k < n->n_outputs; k++) {
        const gl_value *v = n->outputs[k];
        if (!v)
            continue;
        if (v->n_output_refs > 0)
            return false;
        for (size_t i = 0; i < v->n_uses; i++)
            if (v->uses[i].slot == GL_USE_IMPLICIT)
                return false;
    }
    return true;
}

/* Distinct nodes of g reading any of `vals`; node_stamp (by node index) holds `stamp`
 * for those seen. */
static uint32_t count_readers(const gl_graph *g, gl_value *const *vals, size_t n_vals,
                              uint32_t *node_stamp, uint32_t stamp)
{
    uint32_t readers = 0;
    for (size_t k = 0; k < n_vals; k++)
        for (size_t i = 0; vals[k] && i < vals[k]->n_uses; i++) {
            const gl_node *r = vals[k]->uses[i].node;
            if (node_of(g, r) && node_stamp[r->index] != stamp) {
                node_stamp[r->index] = stamp;
                readers++;
            }
        }
    return readers;
}

/* By node index: the distinct readers of each constant node (0 for other nodes). */
static uint32_t *count_node_sharers(const gl_graph *g)
{
    uint32_t *sharers = gl_xcalloc(g->n_nodes + 1, sizeof(*sharers));
    uint32_t *stamp = gl_xcalloc(g->n_nodes + 1, sizeof(*stamp));
    uint32_t next = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        if (is_constant_node(n))
            sharers[i] = count_readers(g, n->outputs, n->n_outputs, stamp, ++next);
    }
    free(stamp);
    return sharers;
}

/* By value index: the distinct readers of each constant initializer (0 for others). */
static uint32_t *count_value_sharers(const gl_graph *g)
{
    uint32_t *sharers = gl_xcalloc(g->n_values + 1, sizeof(*sharers));
    uint32_t *stamp = gl_xcalloc(g->n_nodes + 1, sizeof(*stamp));
    uint32_t next = 0;
    for (size_t i = 0; i < g->n_values; i++) {
        gl_value *v = g->values[i];
        if (v && v->index == i && is_constant_value(v))
            sharers[i] = count_readers(g, &g->values[i], 1, stamp, ++next);
    }
    free(stamp);
    return sharers;
}

/* Folding: forced in reduced views; by option only for constants read by one node, so a
 * shared constant stays boxes (one beside each reader) and the sharing stays visible.
 * Graph outputs never fold. */
static bool folds(const builder *b, const gl_value *v)
{
    if (!is_constant_value(v))
        return false;
    if (b->fold_all)
        return true;
    if (!b->set->fold_constants || v->n_uses == 0)
        return false;
    for (size_t i = 1; i < v->n_uses; i++)
        if (v->uses[i].node != v->uses[0].node)
            return false;
    return true;
}

static void put_tensor_summary(sbuf *t, const gl_tensor *ten)
{
    sb_printf(t, "%s[", gl_dtype_name(ten->dtype));
    for (int i = 0; i < ten->rank; i++)
        sb_printf(t, "%s%lld", i ? "," : "", (long long)ten->dims[i]);
    sb_putc(t, ']');
    bool numeric = ten->dtype != GL_DT_STRING && ten->dtype != GL_DT_COMPLEX64 &&
                   ten->dtype != GL_DT_COMPLEX128 && gl_dtype_size(ten->dtype) > 0;
    if (!numeric || ten->count < 1 || ten->count > MAX_SMALL_VALUES || !gl_tensor_data(ten))
        return;
    sb_puts(t, ten->count == 1 && ten->rank == 0 ? " = " : " = [");
    for (int64_t i = 0; i < ten->count; i++) {
        if (i)
            sb_puts(t, ", ");
        put_number(t, gl_tensor_get_f64(ten, i));
    }
    if (!(ten->count == 1 && ten->rank == 0))
        sb_putc(t, ']');
}

static void put_constant_line(sbuf *t, const gl_value *v)
{
    put_name(t, v->name);
    sb_putc(t, ' ');
    put_tensor_summary(t, v->init);
}

static void put_type(sbuf *t, const gl_type *type)
{
    char buf[512];
    gl_type_format(type, buf, sizeof(buf));
    put_display(t, buf, 80);
}

static uint32_t add_input_like_box(builder *b, const gl_value *v)
{
    sbuf t = {0};
    const char *what = v->is_input ? "input: " : v->outer ? "outer: " : "unresolved: ";
    sb_puts(&t, what);
    put_name(&t, v->name);
    sb_putc(&t, '\n');
    put_type(&t, &v->type);
    if (v->is_input && v->init)
        sb_puts(&t, "\nhas a default");
    return view_add_box(b->v, GL_BOX_INPUT, GL_MARK_NONE, UINT32_MAX, &t);
}

static void put_shared_line(sbuf *t, uint32_t sharers)
{
    char num[32];
    if (sharers > 1)
        sb_printf(t, "\nshared by %s", fmt_count(num, sharers));
}

/* `sharers` > 1: one of the copies of a shared constant, and its label says so. */
static uint32_t add_constant_box(builder *b, const gl_value *v, uint32_t sharers)
{
    sbuf t = {0};
    put_name(&t, v->name);
    sb_putc(&t, '\n');
    put_tensor_summary(&t, v->init);
    put_shared_line(&t, sharers);
    return view_add_box(b->v, GL_BOX_CONSTANT, GL_MARK_NONE, UINT32_MAX, &t);
}

/* The box a producer-less value is drawn as, made on first use; NO_BOX when it is
 * folded or io boxes are off. */
static uint32_t source_box(builder *b, const gl_value *v)
{
    if (!own_value(b, v))
        return NO_BOX;
    uint32_t *slot = &b->box_of_value[v->index];
    if (*slot != NO_BOX || folds(b, v))
        return *slot;
    if (is_input_like(v))
        *slot = b->draw_io ? add_input_like_box(b, v) : NO_BOX;
    else
        *slot = add_constant_box(b, v, 0);
    return *slot;
}

/* Where the value comes from in the drawing: its producer's box or its own box, if
 * drawn already. */
static uint32_t origin_box(const builder *b, const gl_value *v)
{
    if (v->producer)
        return own_node(b, v->producer) ? b->box_of_node[v->producer->index] : NO_BOX;
    return own_value(b, v) ? b->box_of_value[v->index] : NO_BOX;
}

static bool used_by_kept_node(const builder *b, const gl_value *v)
{
    for (size_t i = 0; i < v->n_uses; i++)
        if (own_node(b, v->uses[i].node) && is_kept(b, v->uses[i].node))
            return true;
    return false;
}

static void place_inputs(builder *b)
{
    for (size_t i = 0; i < b->g->n_inputs; i++) {
        const gl_value *v = b->g->inputs[i];
        if (v && (!b->keep || used_by_kept_node(b, v)))
            source_box(b, v);
    }
}

/* Each input (explicit, then implicit) of n, calling fn once per distinct value. */
typedef void (*value_fn)(builder *b, const gl_node *n, const gl_value *v, void *ctx);

static void for_each_distinct_input(builder *b, const gl_node *n, value_fn fn, void *ctx)
{
    b->stamp++;
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++) {
            const gl_value *v = vals[i];
            if (!own_value(b, v) || b->seen[v->index] == b->stamp)
                continue;
            b->seen[v->index] = b->stamp;
            fn(b, n, v, ctx);
        }
    }
}

typedef struct fold_lines {
    sbuf *text;
    size_t shown, hidden;
} fold_lines;

static void add_fold_line(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)n;
    fold_lines *f = ctx;
    if (!folds(b, v))
        return;
    if (f->shown == MAX_FOLDED_LINES) {
        f->hidden++;
        return;
    }
    sb_putc(f->text, '\n');
    put_constant_line(f->text, v);
    f->shown++;
}

static void put_output_lines(sbuf *t, const gl_node *n)
{
    size_t shown = 0, present = 0;
    for (size_t i = 0; i < n->n_outputs; i++) {
        if (!n->outputs[i])
            continue;
        if (present++ < MAX_OUTPUT_LINES) {
            sb_putc(t, '\n');
            put_type(t, &n->outputs[i]->type);
            shown++;
        }
    }
    if (present > shown)
        sb_printf(t, "\n+%zu more outputs", present - shown);
}

static void put_subgraph_line(sbuf *t, const gl_node *n)
{
    bool any = false;
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        if (a->type != GL_ATTR_GRAPH && a->type != GL_ATTR_GRAPHS)
            continue;
        sb_puts(t, any ? ", " : "\nsubgraphs: ");
        put_name(t, a->name);
        any = true;
    }
}

static void put_replaces_line(sbuf *t, const gl_node_change *c)
{
    sb_puts(t, "\nreplaces: ");
    for (size_t i = 0; i < c->n_old && i < MAX_REPLACED_NAMES; i++) {
        sb_puts(t, i ? ", '" : "'");
        put_name(t, c->old_names[i]);
        sb_putc(t, '\'');
    }
    if (c->n_old > MAX_REPLACED_NAMES)
        sb_printf(t, " +%zu more", c->n_old - MAX_REPLACED_NAMES);
}

static void put_changed_line(sbuf *t, const gl_node_change *c)
{
    if (c->n_details == 0)
        return;
    sb_puts(t, "\nchanged: ");
    for (size_t i = 0; i < c->n_details && i < MAX_DETAILS; i++) {
        const gl_change_detail *d = &c->details[i];
        const char *word =
            (size_t)d->kind < GL_ARRAY_LEN(DETAIL_WORDS) ? DETAIL_WORDS[d->kind] : "";
        if (i)
            sb_puts(t, ", ");
        sb_printf(t, "%s%s", word ? word : "", word && *word ? " " : "");
        if (d->kind == GL_DETAIL_RENAMED) {
            sb_puts(t, "from '");
            put_display(t, d->old_text ? d->old_text : "", 24);
            sb_putc(t, '\'');
        } else {
            put_display(t, d->what ? d->what : "", 24);
        }
    }
    if (c->n_details > MAX_DETAILS)
        sb_printf(t, " +%zu more", c->n_details - MAX_DETAILS);
}

static gl_render_mark mark_of(const builder *b, const gl_node *n)
{
    const gl_node_change *c = b->change_of ? b->change_of[n->index] : NULL;
    return c && (size_t)c->kind < GL_ARRAY_LEN(CHANGE_MARKS) ? CHANGE_MARKS[c->kind] : GL_MARK_NONE;
}

static void put_op(sbuf *t, const gl_node *n)
{
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx") != 0) {
        put_display(t, n->domain, 30);
        sb_putc(t, '.');
    }
    put_display(t, n->op_type ? n->op_type : "?", 40);
}

/* `sharers` > 1: one of the copies of a shared Constant node, and its label says so. */
static uint32_t add_node_box(builder *b, const gl_node *n, uint32_t sharers)
{
    sbuf t = {0};
    gl_render_mark mark = mark_of(b, n);
    sb_puts(&t, MARK_STYLES[mark].prefix);
    put_op(&t, n);
    sb_putc(&t, '\n');
    put_name(&t, n->name);
    put_output_lines(&t, n);
    fold_lines f = {&t, 0, 0};
    for_each_distinct_input(b, n, add_fold_line, &f);
    if (f.hidden)
        sb_printf(&t, "\n+%zu more constants", f.hidden);
    put_subgraph_line(&t, n);
    const gl_node_change *c = b->change_of ? b->change_of[n->index] : NULL;
    if (c && c->kind == GL_CHANGE_REPLACED)
        put_replaces_line(&t, c);
    if (c && c->kind == GL_CHANGE_MODIFIED)
        put_changed_line(&t, c);
    put_shared_line(&t, sharers);
    return view_add_box(b->v, GL_BOX_NODE, mark, n->id, &t);
}

/* ---- copies of shared constants ---- */

/* What a copy beside each reader of v stands for: the shared Constant node producing v,
 * or v itself when it is a shared initializer drawn as a box; NULL when v's source is
 * drawn once. `sharers` gets the number of distinct readers. */
static const void *copied_source(const builder *b, const gl_value *v, uint32_t *sharers)
{
    *sharers = 0;
    if (!b->copy_sources)
        return NULL;
    if (v->producer) {
        const gl_node *p = v->producer;
        if (!own_node(b, p) || b->node_sharers[p->index] < 2)
            return NULL;
        *sharers = b->node_sharers[p->index];
        return p;
    }
    if (!own_value(b, v) || b->value_sharers[v->index] < 2 || folds(b, v))
        return NULL;
    *sharers = b->value_sharers[v->index];
    return v;
}

static uint32_t find_copy(const builder *b, size_t reader, const void *source)
{
    if (b->first_copy[reader] == NO_BOX)
        return NO_BOX;
    for (size_t k = b->first_copy[reader]; k < b->n_copies && b->copies[k].reader == reader; k++)
        if (b->copies[k].source == source)
            return b->copies[k].box;
    return NO_BOX;
}

static void add_copy(builder *b, const gl_node *reader, const gl_value *v, const void *source,
                     uint32_t sharers)
{
    const gl_node *p = v->producer;
    uint32_t box = p ? add_node_box(b, p, sharers) : add_constant_box(b, v, sharers);
    if (p && b->box_of_node[p->index] == NO_BOX)
        b->box_of_node[p->index] = box; /* the first copy stands for the node (stubs) */
    if (b->first_copy[reader->index] == NO_BOX)
        b->first_copy[reader->index] = (uint32_t)b->n_copies;
    GL_GROW(b->copies, b->cap_copies, b->n_copies + 1);
    b->copies[b->n_copies++] = (source_copy){source, reader->index, box};
}

/* Edges from n's copy of v's source to n, one per slot reading v (merged as usual). */
static void connect_copy(builder *b, const gl_node *n, const gl_value *v, uint32_t copy)
{
    uint32_t to = b->box_of_node[n->index];
    for (size_t i = 0; copy != NO_BOX && to != NO_BOX && i < v->n_uses; i++)
        if (v->uses[i].node == n)
            view_connect(b->v, copy, to, v, b->per_value_edges,
                         v->uses[i].slot == GL_USE_IMPLICIT);
}

static bool has_kept_reader(const builder *b, const gl_node *n)
{
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && used_by_kept_node(b, n->outputs[k]))
            return true;
    return false;
}

static void place_source(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)ctx;
    uint32_t sharers;
    const void *source = copied_source(b, v, &sharers);
    if (source && find_copy(b, n->index, source) == NO_BOX)
        add_copy(b, n, v, source, sharers);
    else if (!source && !v->producer)
        source_box(b, v);
}

/* Node views: constant/outer boxes and copies of shared constants just before their
 * consumer, then the node. A shared Constant node has no box of its own unless none of
 * its readers is drawn (a focus on it whose readers were all cut). */
static void place_nodes(builder *b)
{
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (!is_kept(b, n) || (b->node_sharers[i] > 1 && has_kept_reader(b, n)))
            continue;
        for_each_distinct_input(b, n, place_source, NULL);
        b->box_of_node[i] = add_node_box(b, n, b->node_sharers[i]);
    }
}

static void place_outputs(builder *b)
{
    b->stamp++;
    for (size_t i = 0; i < b->g->n_outputs; i++) {
        const gl_value *v = b->g->outputs[i];
        if (!own_value(b, v) || b->seen[v->index] == b->stamp || !b->draw_io)
            continue;
        b->seen[v->index] = b->stamp;
        uint32_t from = origin_box(b, v);
        if (from == NO_BOX && !v->producer && !b->keep) /* read by no node: boxed here */
            from = source_box(b, v);
        if (from == NO_BOX)
            continue;
        sbuf t = {0};
        sb_puts(&t, "output: ");
        put_name(&t, v->name);
        sb_putc(&t, '\n');
        put_type(&t, &v->type);
        uint32_t out = view_add_box(b->v, GL_BOX_OUTPUT, GL_MARK_NONE, UINT32_MAX, &t);
        view_connect(b->v, from, out, NULL, true, false);
    }
}

/* Edges from one drawn source of `v` to every drawn consumer. */
static void connect_value(builder *b, const gl_value *v, uint32_t from)
{
    if (from == NO_BOX)
        return;
    for (size_t i = 0; i < v->n_uses; i++) {
        const gl_node *c = v->uses[i].node;
        uint32_t to = own_node(b, c) ? b->box_of_node[c->index] : NO_BOX;
        if (to == NO_BOX || to == from)
            continue;
        view_connect(b->v, from, to, v, b->per_value_edges, v->uses[i].slot == GL_USE_IMPLICIT);
    }
}

static void connect_source(builder *b, const gl_node *n, const gl_value *v, void *ctx)
{
    (void)ctx;
    uint32_t sharers;
    const void *source = copied_source(b, v, &sharers);
    if (source) {
        connect_copy(b, n, v, find_copy(b, n->index, source));
    } else if (!v->producer && !b->connected[v->index]) {
        b->connected[v->index] = true;
        connect_value(b, v, b->box_of_value[v->index]);
    }
}

/* Edges in a fixed order: graph inputs, then per node its producer-less inputs
 * (constants, outer values) and its outputs. Edges into output boxes come last, from
 * place_outputs. */
static void connect_all(builder *b)
{
    for (size_t i = 0; i < b->g->n_inputs; i++) {
        const gl_value *v = b->g->inputs[i];
        if (own_value(b, v) && !v->producer && !b->connected[v->index]) {
            b->connected[v->index] = true;
            connect_value(b, v, b->box_of_value[v->index]);
        }
    }
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (b->box_of_node[i] == NO_BOX)
            continue;
        for_each_distinct_input(b, n, connect_source, NULL);
        /* A shared Constant node: node views wired its copies above, group views fold
         * it like any other constant. */
        if (b->node_sharers[i] > 1)
            continue;
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                connect_value(b, n->outputs[k], b->box_of_node[i]);
    }
}

/* ---- stubs: "... N more" where a neighbourhood view cuts edges ---- */

static uint32_t add_stub(builder *b, size_t count)
{
    sbuf t = {0};
    char num[32];
    sb_printf(&t, "\xE2\x80\xA6 %s more", fmt_count(num, count));
    return view_add_box(b->v, GL_BOX_STUB, GL_MARK_NONE, UINT32_MAX, &t);
}

/* Distinct undrawn nodes feeding n (above) or fed by n (below). */
static size_t count_cut(builder *b, const gl_node *n, bool above, uint32_t *node_stamp,
                        uint32_t stamp)
{
    size_t cut = 0;
    if (above) {
        for (size_t pass = 0; pass < 2; pass++) {
            gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
            size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
            for (size_t i = 0; i < count; i++) {
                const gl_node *p = vals[i] ? vals[i]->producer : NULL;
                if (own_node(b, p) && !is_kept(b, p) && b->node_sharers[p->index] < 2 &&
                    node_stamp[p->index] != stamp) {
                    node_stamp[p->index] = stamp;
                    cut++;
                }
            }
        }
        return cut;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
        const gl_value *v = n->outputs[k];
        for (size_t i = 0; v && i < v->n_uses; i++) {
            const gl_node *c = v->uses[i].node;
            if (own_node(b, c) && !is_kept(b, c) && node_stamp[c->index] != stamp) {
                node_stamp[c->index] = stamp;
                cut++;
            }
        }
    }
    return cut;
}

static void add_stubs(builder *b)
{
    uint32_t *node_stamp = gl_xcalloc(b->g->n_nodes + 1, sizeof(*node_stamp));
    uint32_t stamp = 0;
    const gl_node *n;
    gl_foreach_node(b->g, i, n)
    {
        if (!is_kept(b, n))
            continue;
        for (int above = 1; above >= 0; above--) {
            size_t cut = count_cut(b, n, above, node_stamp, ++stamp);
            if (!cut)
                continue;
            uint32_t stub = add_stub(b, cut);
            uint32_t from = above ? stub : b->box_of_node[i];
            uint32_t to = above ? b->box_of_node[i] : stub;
            view_connect(b->v, from, to, NULL, true, false);
            b->v->edges[b->v->n_edges - 1].dashed = true;
        }
    }
    free(node_stamp);
}

/* ---- builder setup ---- */

static void builder_init(builder *b, const gl_graph *g, const settings *set, view *v,
                         const gl_node_change **change_of)
{
    *b = (builder){.g = g, .set = set, .v = v, .draw_io = true, .per_value_edges = true,
                   .change_of = change_of};
    b->box_of_node = gl_xmalloc((g->n_nodes + 1) * sizeof(*b->box_of_node));
    b->box_of_value = gl_xmalloc((g->n_values + 1) * sizeof(*b->box_of_value));
    b->seen = gl_xcalloc(g->n_values + 1, sizeof(*b->seen));
    b->connected = gl_xcalloc(g->n_values + 1, sizeof(*b->connected));
    b->node_sharers = count_node_sharers(g);
    b->value_sharers = count_value_sharers(g);
    b->first_copy = gl_xmalloc((g->n_nodes + 1) * sizeof(*b->first_copy));
    memset(b->box_of_node, 0xFF, (g->n_nodes + 1) * sizeof(*b->box_of_node));
    memset(b->box_of_value, 0xFF, (g->n_values + 1) * sizeof(*b->box_of_value));
    memset(b->first_copy, 0xFF, (g->n_nodes + 1) * sizeof(*b->first_copy));
}

static void builder_free(builder *b)
{
    free(b->box_of_node);
    free(b->box_of_value);
    free(b->seen);
    free(b->connected);
    free(b->node_sharers);
    free(b->value_sharers);
    free(b->first_copy);
    free(b->copies);
}

/* Every kept node as its own box. */
static void build_node_view(const gl_graph *g, const settings *set,
                            const gl_node_change **change_of, const bool *keep, bool fold_all,
                            bool stubs, view *v)
{
    builder b;
    builder_init(&b, g, set, v, change_of);
    b.keep = keep;
    b.fold_all = fold_all;
    b.copy_sources = true;
    place_inputs(&b);
    place_nodes(&b);
    connect_all(&b);
    place_outputs(&b);
    if (stubs)
        add_stubs(&b);
    builder_free(&b);
}

/* ==== big graphs: neighbourhood ========================================================= */

/* An upper bound of the boxes a node brings into a neighbourhood view: itself, two
 * stubs, its producer-less inputs (a box, plus an output box if one is also an output),
 * its copies of shared Constant nodes and its graph outputs. Summing bounds keeps the
 * real count under the budget. */
static size_t node_cost(const gl_node *n, const uint32_t *node_sharers)
{
    size_t cost = 3;
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++) {
            const gl_node *p = vals[i] ? vals[i]->producer : NULL;
            if (vals[i] && !p)
                cost += 2;
            else if (p && node_of(n->graph, p) && node_sharers[p->index] > 1)
                cost += 1;
        }
    }
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] && n->outputs[k]->n_output_refs > 0)
            cost++;
    return cost;
}

typedef struct bfs {
    const gl_graph *g;
    uint32_t *node_sharers; /* by node index (count_node_sharers), owned */
    bool *keep;
    int *dist;
    size_t *queue, head, tail;
    size_t used, budget, kept;
    bool cut_short;
} bfs;

/* Visit a neighbour; false when the budget is spent (the walk stops there). */
static bool bfs_visit(bfs *w, const gl_node *m, int d)
{
    if (!node_of(w->g, m) || w->keep[m->index])
        return true;
    /* A shared Constant node is drawn as copies beside its readers: no neighbour, and
     * no way into every part of the graph that reads it. */
    if (w->node_sharers[m->index] > 1)
        return true;
    size_t cost = node_cost(m, w->node_sharers);
    if (w->used + cost > w->budget) {
        w->cut_short = true;
        return false;
    }
    w->used += cost;
    w->keep[m->index] = true;
    w->dist[m->index] = d;
    w->queue[w->tail++] = m->index;
    w->kept++;
    return true;
}

static bool bfs_expand(bfs *w, const gl_node *n, int d)
{
    for (size_t pass = 0; pass < 2; pass++) {
        gl_value *const *vals = pass == 0 ? n->inputs : n->implicit;
        size_t count = pass == 0 ? n->n_inputs : n->n_implicit;
        for (size_t i = 0; i < count; i++)
            if (vals[i] && !bfs_visit(w, vals[i]->producer, d))
                return false;
    }
    for (size_t k = 0; k < n->n_outputs; k++) {
        const gl_value *v = n->outputs[k];
        for (size_t i = 0; v && i < v->n_uses; i++)
            if (!bfs_visit(w, v->uses[i].node, d))
                return false;
    }
    return true;
}

/* Nodes within `radius` hops of focus, breadth first, while the box budget lasts. */
static size_t select_neighbourhood(const gl_graph *g, const gl_node *focus, int radius,
                                   size_t budget, bool *keep, bool *cut_short)
{
    bfs w = {g, count_node_sharers(g), keep, gl_xmalloc((g->n_nodes + 1) * sizeof(int)),
             gl_xmalloc((g->n_nodes + 1) * sizeof(size_t)), 0, 0, 0, budget, 0, false};
    /* The focus is drawn whatever it costs (max_nodes >= MIN_MAX_NODES keeps that sane). */
    keep[focus->index] = true;
    w.dist[focus->index] = 0;
    w.queue[w.tail++] = focus->index;
    w.used = node_cost(focus, w.node_sharers);
    w.kept = 1;
    while (w.head < w.tail) {
        size_t idx = w.queue[w.head++];
        if (w.dist[idx] >= radius)
            continue;
        if (!bfs_expand(&w, g->nodes[idx], w.dist[idx] + 1))
            break;
    }
    free(w.dist);
    free(w.queue);
    free(w.node_sharers);
    *cut_short = w.cut_short;
    return w.kept;
}

/* ==== big graphs: groups ================================================================ */

typedef struct grouping {
    uint32_t *gid;         /* by node index; NO_BOX for holes */
    size_t n_groups;
    const char **key;      /* prefix groups: key text (not NUL-terminated) */
    size_t *key_len;
    size_t cap;
    size_t chunk;          /* chunk groups: nodes per chunk (0 for prefix groups) */
} grouping;

static void grouping_free(grouping *gr)
{
    free(gr->gid);
    free(gr->key);
    free(gr->key_len);
    *gr = (grouping){0};
}

/* Non-empty '/'-separated components of a name. */
static size_t component_count(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p != '/' && (p == s || p[-1] == '/');
    return n;
}

/* Length of the first `depth` components, never the whole name: the last component
 * names the node itself ("/layer1/conv/Conv" at depth 5 is still "/layer1/conv"). */
static size_t prefix_len(const char *s, int depth)
{
    size_t comps = component_count(s);
    size_t want = comps == 0 ? 0 : (size_t)depth < comps - 1 ? (size_t)depth : comps - 1;
    if (want == 0)
        return 0;
    size_t seen = 0;
    const char *p = s;
    for (; *p; p++) {
        if (*p != '/' && (p == s || p[-1] == '/'))
            seen++;
        if (seen == want && *p != '/' && (p[1] == '/' || p[1] == '\0'))
            return (size_t)(p - s) + 1;
    }
    return (size_t)(p - s);
}

typedef struct group_key {
    const grouping *gr;
    const char *s;
    size_t len;
} group_key;

static bool group_eq(const void *ctx, uint32_t idx)
{
    const group_key *k = ctx;
    return k->gr->key_len[idx] == k->len && memcmp(k->gr->key[idx], k->s, k->len) == 0;
}

/* Group ids by name prefix at `depth`, numbered by first appearance. */
static void group_by_prefix(const gl_graph *g, int depth, grouping *gr)
{
    *gr = (grouping){0};
    gr->gid = gl_xmalloc((g->n_nodes + 1) * sizeof(*gr->gid));
    index_map m = {0};
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        gr->gid[i] = NO_BOX;
        if (!n)
            continue;
        const char *name = n->name ? n->name : "";
        group_key k = {gr, name, prefix_len(name, depth)};
        uint32_t id = map_intern(&m, hash_bytes(k.s, k.len), group_eq, &k, (uint32_t)gr->n_groups);
        if (id == gr->n_groups) {
            if (gr->n_groups == gr->cap) {
                GL_GROW(gr->key, gr->cap, gr->n_groups + 1);
                gr->key_len = gl_xrealloc(gr->key_len, gr->cap * sizeof(*gr->key_len));
            }
            gr->key[id] = k.s;
            gr->key_len[id] = k.len;
            gr->n_groups++;
        }
        gr->gid[i] = id;
    }
    map_free(&m);
}

static int max_prefix_depth(const gl_graph *g)
{
    size_t deepest = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        size_t c = component_count(n->name ? n->name : "");
        if (c > 1 && c - 1 > deepest)
            deepest = c - 1;
    }
    return deepest > 32 ? 32 : (int)deepest;
}

/* Prefixes are useful when they split the graph at all and most nodes have one. */
static bool prefixes_useful(const gl_graph *g, const grouping *gr)
{
    if (gr->n_groups < 2)
        return false;
    size_t bare = 0;
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        bare += gr->key_len[gr->gid[i]] == 0;
    }
    return bare * 2 < g->live_nodes;
}

/* The deepest prefix grouping with at most `room` groups; false when none is useful. */
static bool choose_prefix_grouping(const gl_graph *g, size_t room, grouping *best, int *depth)
{
    *best = (grouping){0};
    int deepest = max_prefix_depth(g);
    for (int d = 1; d <= deepest; d++) {
        grouping gr;
        group_by_prefix(g, d, &gr);
        if (gr.n_groups > room) {
            grouping_free(&gr);
            break;
        }
        grouping_free(best);
        *best = gr;
        *depth = d;
    }
    if (best->gid && prefixes_useful(g, best))
        return true;
    grouping_free(best);
    return false;
}

static void group_by_chunks(const gl_graph *g, size_t room, grouping *gr)
{
    *gr = (grouping){0};
    size_t live = g->live_nodes ? g->live_nodes : 1;
    room = room ? room : 1;
    gr->chunk = (live + room - 1) / room;
    gr->gid = gl_xmalloc((g->n_nodes + 1) * sizeof(*gr->gid));
    size_t pos = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        gr->gid[i] = g->nodes[i] ? (uint32_t)(pos++ / gr->chunk) : NO_BOX;
    gr->n_groups = (pos + gr->chunk - 1) / gr->chunk;
}

/* ---- group boxes ---- */

typedef struct op_count {
    const char *op;
    size_t count;
} op_count;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_op_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

/* "37 nodes: Conv 12, Relu 12, Add 13, …" — the most frequent ops first. */
static void put_histogram(sbuf *t, const gl_graph *g, const size_t *members, size_t n)
{
    const char **ops = gl_xmalloc((n + 1) * sizeof(*ops));
    for (size_t i = 0; i < n; i++)
        ops[i] = g->nodes[members[i]]->op_type ? g->nodes[members[i]]->op_type : "?";
    qsort(ops, n, sizeof(*ops), cmp_str);
    op_count *runs = gl_xmalloc((n + 1) * sizeof(*runs));
    size_t n_runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (n_runs && strcmp(runs[n_runs - 1].op, ops[i]) == 0)
            runs[n_runs - 1].count++;
        else
            runs[n_runs++] = (op_count){ops[i], 1};
    }
    qsort(runs, n_runs, sizeof(*runs), cmp_op_count);
    char num[32];
    sb_printf(t, "%s nodes:", fmt_count(num, n));
    for (size_t i = 0; i < n_runs && i < HISTOGRAM_OPS; i++) {
        sb_puts(t, i ? ", " : " ");
        put_display(t, runs[i].op, 24);
        sb_printf(t, " %zu", runs[i].count);
    }
    if (n_runs > HISTOGRAM_OPS)
        sb_puts(t, ", \xE2\x80\xA6");
    free(ops);
    free(runs);
}

static gl_render_mark put_group_changes(sbuf *t, const builder *b, const size_t *members,
                                        size_t n)
{
    size_t counts[4] = {0};
    for (size_t i = 0; i < n; i++)
        counts[mark_of(b, b->g->nodes[members[i]])]++;
    if (!counts[GL_MARK_ADDED] && !counts[GL_MARK_MODIFIED] && !counts[GL_MARK_REPLACED])
        return GL_MARK_NONE;
    sb_printf(t, "\nchanged: %zu added, %zu modified, %zu replacing", counts[GL_MARK_ADDED],
              counts[GL_MARK_MODIFIED], counts[GL_MARK_REPLACED]);
    return GL_MARK_MODIFIED;
}

static void put_group_title(sbuf *t, const gl_graph *g, const grouping *gr, uint32_t id,
                            const size_t *members, size_t n)
{
    if (gr->chunk) {
        char a[32], z[32];
        sb_printf(t, "nodes %s-%s\n", fmt_count(a, id * gr->chunk + 1),
                  fmt_count(z, id * gr->chunk + n));
        put_display(t, g->nodes[members[0]]->name, 28);
        sb_puts(t, " \xE2\x80\xA6 ");
        put_display(t, g->nodes[members[n - 1]]->name, 28);
        return;
    }
    const char *key = gr->key[id];
    size_t len = gr->key_len[id];
    while (len && *key == '/') {
        key++;
        len--;
    }
    if (len == 0) {
        sb_puts(t, "(no prefix)");
        return;
    }
    char *s = gl_xstrndup(key, len);
    put_name(t, s);
    free(s);
}

static uint32_t add_group_box(builder *b, const grouping *gr, uint32_t id, const size_t *members,
                              size_t n)
{
    if (n == 1) /* a group of one is drawn as the node itself */
        return add_node_box(b, b->g->nodes[members[0]], 0);
    sbuf t = {0};
    sbuf tail = {0};
    gl_render_mark mark = put_group_changes(&tail, b, members, n);
    sb_puts(&t, MARK_STYLES[mark].prefix);
    put_group_title(&t, b->g, gr, id, members, n);
    sb_putc(&t, '\n');
    put_histogram(&t, b->g, members, n);
    if (tail.len)
        sb_putn(&t, tail.s, tail.len);
    free(tail.s);
    return view_add_box(b->v, GL_BOX_GROUP, mark, UINT32_MAX, &t);
}

/* Group members as one array (counting sort by group id, node order kept). */
static size_t *group_members(const gl_graph *g, const grouping *gr, size_t *start)
{
    memset(start, 0, (gr->n_groups + 1) * sizeof(*start));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (gr->gid[i] != NO_BOX)
            start[gr->gid[i] + 1]++;
    for (size_t k = 0; k < gr->n_groups; k++)
        start[k + 1] += start[k];
    size_t *fill = gl_xmalloc((gr->n_groups + 1) * sizeof(*fill));
    memcpy(fill, start, (gr->n_groups + 1) * sizeof(*fill));
    size_t *members = gl_xmalloc((start[gr->n_groups] + 1) * sizeof(*members));
    for (size_t i = 0; i < g->n_nodes; i++)
        if (gr->gid[i] != NO_BOX)
            members[fill[gr->gid[i]]++] = i;
    free(fill);
    return members;
}

static void place_groups(builder *b, const grouping *gr)
{
    size_t *start = gl_xmalloc((gr->n_groups + 1) * sizeof(*start));
    size_t *members = group_members(b->g, gr, start);
    uint32_t *group_box = gl_xmalloc((gr->n_groups + 1) * sizeof(*group_box));
    memset(group_box, 0xFF, (gr->n_groups + 1) * sizeof(*group_box));
    for (size_t i = 0; i < b->g->n_nodes; i++) {
        uint32_t id = gr->gid[i];
        if (id == NO_BOX)
            continue;
        for_each_distinct_input(b, b->g->nodes[i], place_source, NULL); /* outer values */
        if (group_box[id] == NO_BOX)
            group_box[id] =
                add_group_box(b, gr, id, members + start[id], start[id + 1] - start[id]);
        b->box_of_node[i] = group_box[id];
    }
    free(group_box);
    free(members);
    free(start);
}

static void build_group_view(const gl_graph *g, const settings *set,
                             const gl_node_change **change_of, const grouping *gr, bool draw_io,
                             view *v)
{
    builder b;
    builder_init(&b, g, set, v, change_of);
    b.fold_all = true;
    b.draw_io = draw_io;
    b.per_value_edges = false;
    place_inputs(&b);
    place_groups(&b, gr);
    connect_all(&b);
    place_outputs(&b);
    builder_free(&b);
}

/* ==== choosing the view ================================================================= */

/* Boxes that graph inputs, outputs and outer values would need (an upper bound). */
static size_t io_box_count(const gl_graph *g)
{
    return g->n_inputs + g->n_outputs + g->n_captures;
}

static const gl_node_change **index_changes(const gl_graph *g, const gl_diff *d)
{
    if (!d || !d->n_nodes)
        return NULL;
    /* Node ids are below next_node_id; map them to positions first. */
    size_t n_ids = g->next_node_id;
    uint32_t *pos_of_id = gl_xmalloc((n_ids + 1) * sizeof(*pos_of_id));
    memset(pos_of_id, 0xFF, (n_ids + 1) * sizeof(*pos_of_id));
    const gl_node *n;
    gl_foreach_node(g, i, n)
    {
        if (n->id < n_ids)
            pos_of_id[n->id] = (uint32_t)i;
    }
    const gl_node_change **change_of = gl_xcalloc(g->n_nodes + 1, sizeof(*change_of));
    for (size_t c = 0; c < d->n_nodes; c++) {
        const gl_node_change *ch = &d->nodes[c];
        if (ch->kind == GL_CHANGE_REMOVED)
            continue;
        for (size_t k = 0; k < ch->n_new; k++) {
            uint32_t id = ch->new_ids[k];
            if (id < n_ids && pos_of_id[id] != NO_BOX && !change_of[pos_of_id[id]])
                change_of[pos_of_id[id]] = ch; /* first wins, as gl_diff_find_new */
        }
    }
    free(pos_of_id);
    return change_of;
}

static void note_set(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_set(view *v, const char *fmt, ...)
{
    size_t used = strlen(v->note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->note + used, sizeof(v->note) - used, fmt, ap);
    va_end(ap);
}

static bool try_full(const gl_graph *g, const settings *set, const gl_node_change **ch,
                     bool fold_all, view *v)
{
    build_node_view(g, set, ch, NULL, fold_all, false, v);
    if (v->n_boxes <= set->max_boxes)
        return true;
    view_free(v);
    return false;
}

/* The focus node gets a thick border wherever it is drawn as itself. */
static void mark_focus(view *v, const gl_node *focus)
{
    for (size_t i = 0; focus && i < v->n_boxes; i++)
        v->boxes[i].focus = v->boxes[i].kind == GL_BOX_NODE && v->boxes[i].node_id == focus->id;
}

static bool try_focus(const gl_graph *g, const settings *set, const gl_node_change **ch, view *v)
{
    const gl_node *focus = gl_find_node(g, set->focus);
    if (!focus)
        return false;
    bool *keep = gl_xcalloc(g->n_nodes + 1, sizeof(*keep));
    bool cut_short = false;
    size_t kept = select_neighbourhood(g, focus, set->radius, set->max_boxes, keep, &cut_short);
    build_node_view(g, set, ch, keep, true, true, v);
    free(keep);
    char a[32], b[32];
    note_set(v, "showing %s of %s nodes within %d hops of '", fmt_count(a, kept),
             fmt_count(b, g->live_nodes), set->radius);
    sbuf name = {0};
    put_display(&name, focus->name, 40);
    note_set(v, "%s'%s", name.s ? name.s : "", cut_short ? " (cut at the box limit)" : "");
    free(name.s);
    v->reduced = true;
    return true;
}

static void collapse(const gl_graph *g, const settings *set, const gl_node_change **ch, view *v)
{
    size_t io = io_box_count(g);
    bool draw_io = io <= set->max_boxes / 2;
    size_t room = set->max_boxes - (draw_io ? io : 0);
    grouping gr;
    int depth = 0;
    bool by_prefix = choose_prefix_grouping(g, room, &gr, &depth);
    if (!by_prefix)
        group_by_chunks(g, room, &gr);
    build_group_view(g, set, ch, &gr, draw_io, v);
    if (v->n_boxes > set->max_boxes && draw_io) { /* unresolved values of a broken graph */
        view_free(v);
        draw_io = false;
        build_group_view(g, set, ch, &gr, draw_io, v);
    }
    char a[32], b[32];
    if (by_prefix)
        note_set(v, "%s nodes collapsed into %s groups by name prefix (depth %d)",
                 fmt_count(a, g->live_nodes), fmt_count(b, gr.n_groups), depth);
    else
        note_set(v, "%s nodes collapsed into %s chunks of %zu in graph order (names have no "
                    "usable prefix)",
                 fmt_count(a, g->live_nodes), fmt_count(b, gr.n_groups), gr.chunk);
    if (!draw_io)
        note_set(v, "; graph inputs/outputs not drawn");
    v->reduced = true;
    grouping_free(&gr);
}

/* The whole graph if it fits, else folded constants, else a neighbourhood, else groups. */
static void choose_view(const gl_graph *g, const settings *set, const gl_node_change **ch,
                        view *v)
{
    bool may_fit = g->live_nodes <= set->max_boxes; /* else no need to build and count */
    if (may_fit && try_full(g, set, ch, false, v))
        return;
    char limit[32];
    fmt_count(limit, set->max_boxes);
    if (may_fit && try_full(g, set, ch, true, v)) {
        note_set(v, "constants folded into their consumers to stay within %s boxes", limit);
        return;
    }
    if (set->focus && try_focus(g, set, ch, v))
        return;
    if (set->focus) {
        sbuf name = {0};
        put_display(&name, set->focus, 40);
        note_set(v, "no node named '%s'; ", name.s ? name.s : "");
        free(name.s);
    }
    collapse(g, set, ch, v);
}

/* ==== DOT text =========================================================================== */

static void put_removed_line(sbuf *t, const gl_diff *d)
{
    size_t total = 0;
    for (size_t c = 0; c < d->n_nodes; c++)
        if (d->nodes[c].kind == GL_CHANGE_REMOVED)
            total += d->nodes[c].n_old;
    if (!total)
        return;
    sb_puts(t, "\nremoved: ");
    size_t shown = 0;
    for (size_t c = 0; c < d->n_nodes && shown < MAX_REMOVED_NAMES; c++) {
        const gl_node_change *ch = &d->nodes[c];
        for (size_t k = 0; ch->kind == GL_CHANGE_REMOVED && k < ch->n_old &&
                           shown < MAX_REMOVED_NAMES; k++, shown++) {
            sb_puts(t, shown ? ", '" : "'");
            put_display(t, ch->old_names[k] ? ch->old_names[k] : "", 40);
            sb_putc(t, '\'');
        }
    }
    if (total > shown)
        sb_printf(t, " +%zu more", total - shown);
}

static void put_legend_line(sbuf *t, const view *v)
{
    bool used[GL_ARRAY_LEN(MARK_STYLES)] = {false};
    for (size_t i = 0; i < v->n_boxes; i++)
        used[v->boxes[i].mark] = true;
    bool any = false;
    for (size_t m = GL_MARK_ADDED; m < GL_ARRAY_LEN(MARK_STYLES); m++) {
        if (!used[m])
            continue;
        sb_puts(t, any ? "   " : "\nmarks: ");
        sb_puts(t, MARK_STYLES[m].legend);
        any = true;
    }
}

/* Title, what was drawn, what was removed, what the marks mean: one line each. */
static char *graph_label(const view *v, const settings *set)
{
    sbuf t = {0};
    if (set->title && *set->title)
        put_display(&t, set->title, 120);
    if (v->note[0]) {
        if (t.len)
            sb_putc(&t, '\n');
        sb_puts(&t, v->note);
    }
    if (set->diff)
        put_removed_line(&t, set->diff);
    put_legend_line(&t, v);
    char *s = sb_take(&t);
    if (s[0] == '\n')
        memmove(s, s + 1, strlen(s));
    return s;
}

static void put_box(sbuf *out, const vbox *bx, size_t idx)
{
    const box_style *st = &BOX_STYLES[bx->kind];
    const mark_style *mk = &MARK_STYLES[bx->mark];
    sb_printf(out, "  b%zu [shape=%s, style=\"%s\", fillcolor=\"%s\", fontsize=%s", idx,
              st->shape, st->style, mk->fill ? mk->fill : st->fill, st->fontsize);
    if (mk->pen)
        sb_printf(out, ", color=\"%s\", penwidth=2", mk->pen);
    if (bx->focus)
        sb_puts(out, ", penwidth=3");
    sb_puts(out, ", label=");
    put_dot_string(out, bx->text);
    sb_puts(out, "];\n");
}

static void put_edge(sbuf *out, const vedge *e, size_t idx, const char *label_attr)
{
    sb_printf(out, "  b%u -> b%u [id=\"e%zu\"", e->from, e->to, idx);
    if (e->dashed)
        sb_puts(out, ", style=dashed");
    sbuf label = {0};
    edge_label(e, &label);
    if (label.len) {
        sb_printf(out, ", %s=", label_attr);
        put_dot_string(out, label.s);
    }
    free(label.s);
    sb_puts(out, "];\n");
}

static char *view_to_dot(const view *v, const settings *set, size_t *len)
{
    sbuf out = {0};
    sb_puts(&out, "digraph graphlab {\n"
                  "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, "
                  "nodesep=0.25, ranksep=0.35");
    char *label = graph_label(v, set);
    if (*label) {
        sb_puts(&out, ", label=");
        put_dot_string(&out, label);
    }
    free(label);
    sb_puts(&out, "];\n"
                  "  node [fontname=\"Helvetica\", margin=\"0.08,0.03\"];\n"
                  "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\", "
                  "fontcolor=\"#333333\", arrowsize=0.6];\n");
    for (size_t i = 0; i < v->n_boxes; i++)
        put_box(&out, &v->boxes[i], i);
    const char *label_attr = v->n_boxes > XLABEL_ABOVE ? "xlabel" : "label";
    for (size_t i = 0; i < v->n_edges; i++)
        put_edge(&out, &v->edges[i], i, label_attr);
    sb_puts(&out, "}\n");
    *len = out.len;
    return sb_take(&out);
}

static void fill_info(gl_render_info *info, const view *v)
{
    if (!info)
        return;
    *info = (gl_render_info){0};
    info->nodes_drawn = v->n_boxes;
    info->reduced = v->reduced;
    snprintf(info->note, sizeof(info->note), "%s", v->note);
}

/* Choose, build and print: the one path every public function starts from. */
static gl_status make_dot(const gl_graph *g, const gl_render_opts *o, view *v, char **dot,
                          size_t *len, gl_render_info *info)
{
    if (!g)
        return gl_fail(GL_ERR_INTERNAL, "render: no graph");
    settings set = resolve_opts(o);
    const gl_node_change **change_of = index_changes(g, set.diff);
    *v = (view){0};
    choose_view(g, &set, change_of, v);
    if (set.focus)
        mark_focus(v, gl_find_node(g, set.focus));
    free(change_of);
    size_t n = 0;
    *dot = view_to_dot(v, &set, &n);
    if (len)
        *len = n;
    fill_info(info, v);
    return GL_OK;
}

gl_status gl_render_dot(const gl_graph *g, const gl_render_opts *o, char **dot, size_t *len,
                        gl_render_info *info)
{
    view v;
    gl_status st = make_dot(g, o, &v, dot, len, info);
    view_free(&v);
    return st;
}

/* ==== Graphviz =========================================================================== */

extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;

static const lt_symlist_t GV_BUILTINS[] = {
    {"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
    {"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
    {NULL, NULL},
};

/* Graphviz is not reentrant (global parser, error hooks, layout statics): every session
 * holds this lock. Its messages go to gv_messages instead of stderr (the TUI owns the
 * terminal); they become part of our error message when something fails. */
static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static char gv_messages[512];

static int collect_gv_message(char *msg)
{
    size_t used = strlen(gv_messages);
    snprintf(gv_messages + used, sizeof(gv_messages) - used, "%s", msg ? msg : "");
    return 0;
}

/* The collected messages as one line. */
static const char *gv_message_line(void)
{
    for (char *p = gv_messages; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return gv_messages[0] ? gv_messages : "no message";
}

typedef struct gv_session {
    GVC_t *gvc;
    Agraph_t *graph;
    bool laid_out;
    agusererrf old_errf;
} gv_session;

static void gv_close(gv_session *s)
{
    if (s->laid_out)
        gvFreeLayout(s->gvc, s->graph);
    if (s->graph)
        agclose(s->graph);
    if (s->gvc)
        gvFreeContext(s->gvc);
    agseterrf(s->old_errf);
    pthread_mutex_unlock(&gv_lock);
}

/* Parse our DOT text and run the dot layout. On failure the session is closed. */
static gl_status gv_open(gv_session *s, const char *dot)
{
    *s = (gv_session){0};
    pthread_mutex_lock(&gv_lock);
    gv_messages[0] = '\0';
    s->old_errf = agseterrf(collect_gv_message);
    agreseterrors();
    gl_status st = GL_OK;
    s->gvc = gvContextPlugins(GV_BUILTINS, 0);
    if (!s->gvc)
        st = gl_fail(GL_ERR_NOMEM, "render: cannot create a Graphviz context");
    if (st == GL_OK && !(s->graph = agmemread(dot)))
        st = gl_fail(GL_ERR_INTERNAL, "render: Graphviz could not parse our DOT: %s",
                     gv_message_line());
    if (st == GL_OK && gvLayout(s->gvc, s->graph, "dot") != 0)
        st = gl_fail(GL_ERR_INTERNAL, "render: dot layout failed: %s", gv_message_line());
    s->laid_out = st == GL_OK;
    if (st != GL_OK)
        gv_close(s);
    return st;
}

/* ==== bounded jobs: a child process, a pipe and a deadline ============================= */

/* dot's network simplex runs for many minutes on some graphs, nothing in Graphviz bounds
 * it (nslimit, mclimit and searchsize do not) and a thread inside Graphviz cannot be
 * stopped. So Graphviz work runs in a forked child that sends its result through a
 * pipe; the parent reads while it waits (a full pipe never stalls the child) and kills
 * and reaps the child when the deadline passes. The TUI cancels a layout the same way. */

#define DEFAULT_TIMEOUT_MS 15000
#define MAX_JOB_OUTPUT ((size_t)1 << 31) /* 2 GiB: far beyond any drawing we make */
#define JOB_HEADER 12                    /* u32 status, u64 payload length */
#define READ_CHUNK 65536

/* The work of a job: the result bytes into `out`, or a failure with a message. */
typedef gl_status (*job_fn)(void *ctx, sbuf *out);

static bool write_fully(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Signals the child takes with their default action, unblocked: a handler of the
 * parent's (the TUI's SIGINT or SIGWINCH) has no business running in a layout worker. */
static const int CHILD_DEFAULT_SIGNALS[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,  SIGPIPE,
                                            SIGALRM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCHLD};

static void reset_child_signals(void)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(CHILD_DEFAULT_SIGNALS); i++)
        signal(CHILD_DEFAULT_SIGNALS[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL);
}

/* The child: run the job, send one frame (status, length, then the result or the
 * message) and leave with _exit: no atexit handlers, no second flush of the parent's
 * stdio buffers, no leak report about the heap it inherited. */
static _Noreturn void child_main(int fd, job_fn fn, void *ctx, pid_t parent)
{
#ifdef __linux__
    /* Die with the waiting parent: an interrupted export must not leave a layout
     * running for hours. (The forking thread waits for us, so it outlives us.) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
#else
    (void)parent;
#endif
    reset_child_signals();
    sbuf out = {0};
    gl_status st = fn(ctx, &out);
    const char *payload = st == GL_OK ? (out.s ? out.s : "") : gl_error_message();
    uint32_t status = (uint32_t)st;
    uint64_t len = st == GL_OK ? out.len : strlen(payload);
    unsigned char head[JOB_HEADER];
    memcpy(head, &status, 4);
    memcpy(head + 4, &len, 8);
    bool sent = write_fully(fd, head, sizeof(head)) && write_fully(fd, payload, (size_t)len);
    _exit(sent ? 0 : 1);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Append what the child writes until it closes the pipe (GL_OK) or the deadline passes
 * (*timed_out). */
static gl_status read_until(int fd, int64_t deadline, sbuf *in, bool *timed_out)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            *timed_out = true;
            return GL_ERR_UNSUPPORTED;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (ready < 0 && errno != EINTR)
            return gl_fail(GL_ERR_IO, "render: waiting for the Graphviz process: %s",
                           strerror(errno));
        if (ready <= 0)
            continue;
        GL_GROW(in->s, in->cap, in->len + READ_CHUNK);
        ssize_t n = read(fd, in->s + in->len, READ_CHUNK);
        if (n == 0)
            return GL_OK;
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return gl_fail(GL_ERR_IO, "render: reading from the Graphviz process: %s",
                           strerror(errno));
        in->len += (size_t)n;
        if (in->len > MAX_JOB_OUTPUT)
            return gl_fail(GL_ERR_INTERNAL, "render: the Graphviz process sent more than %zu "
                                            "bytes", MAX_JOB_OUTPUT);
    }
}

/* Wait for the child to end (killing it first when asked) and return its wait status;
 * -1 when there is none to be had (SIGCHLD ignored: the kernel reaped it already). */
static int reap(pid_t pid, bool kill_first)
{
    if (kill_first)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

/* The child's frame as the job's result: *bytes is the payload, NUL-terminated. */
static gl_status job_result(int status, sbuf *in, char **bytes, size_t *len)
{
    if (status != -1 && WIFSIGNALED(status))
        return gl_fail(GL_ERR_INTERNAL, "render: the Graphviz process died of signal %d (%s)",
                       WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return gl_fail(GL_ERR_INTERNAL, "render: the Graphviz process exited with status %d",
                       WEXITSTATUS(status));
    uint32_t st = 0;
    uint64_t n = 0;
    if (in->len >= JOB_HEADER) {
        memcpy(&st, in->s, 4);
        memcpy(&n, in->s + 4, 8);
    }
    if (in->len < JOB_HEADER || n != in->len - JOB_HEADER)
        return gl_fail(GL_ERR_INTERNAL, "render: the Graphviz process ended after %zu bytes "
                                        "without a whole result", in->len);
    memmove(in->s, in->s + JOB_HEADER, (size_t)n);
    in->s[n] = '\0'; /* room: the buffer held the header too */
    if (st != GL_OK)
        return gl_fail(st <= GL_ERR_UNSUPPORTED ? (gl_status)st : GL_ERR_INTERNAL, "%s", in->s);
    *len = (size_t)n;
    *bytes = in->s;
    *in = (sbuf){0};
    return GL_OK;
}

/* No child to be had: run the job here, without a bound. */
static gl_status run_here(job_fn fn, void *ctx, char **bytes, size_t *len)
{
    sbuf out = {0};
    gl_status st = fn(ctx, &out);
    if (st != GL_OK) {
        free(out.s);
        return st;
    }
    *len = out.len;
    *bytes = sb_take(&out);
    return GL_OK;
}

/* Run fn in a child process and give it at most timeout_ms to deliver its result
 * (*bytes: malloc'd, NUL-terminated, *len bytes). Past the deadline the child is killed
 * and reaped, *timed_out is set and GL_ERR_UNSUPPORTED returned: the caller words the
 * message. A crash of the child is an error naming the signal. When fork or pipe fail,
 * fn runs in this process. `guard` (may be NULL) protects library state fn uses: it is
 * held across fork so that the child's copy of that state is whole, and the child gets
 * it unlocked. Leaves no child and no descriptor behind. */
static gl_status run_with_deadline(job_fn fn, void *ctx, pthread_mutex_t *guard,
                                   unsigned timeout_ms, char **bytes, size_t *len,
                                   bool *timed_out)
{
    *bytes = NULL;
    *len = 0;
    *timed_out = false;
    int fds[2];
    if (pipe(fds) != 0)
        return run_here(fn, ctx, bytes, len);
    for (int i = 0; i < 2; i++) /* another thread's fork+exec must not keep our pipe open */
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    int64_t deadline = now_ms() + timeout_ms;
    pid_t parent = getpid();
    if (guard)
        pthread_mutex_lock(guard);
    pid_t pid = fork();
    if (pid == 0) {
        if (guard)
            pthread_mutex_init(guard, NULL);
        close(fds[0]);
        child_main(fds[1], fn, ctx, parent);
    }
    if (guard)
        pthread_mutex_unlock(guard);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return run_here(fn, ctx, bytes, len);
    }
    sbuf in = {0};
    gl_status st = read_until(fds[0], deadline, &in, timed_out);
    int status = reap(pid, st != GL_OK);
    close(fds[0]);
    if (st == GL_OK)
        st = job_result(status, &in, bytes, len);
    free(in.s);
    return st;
}

/* A Graphviz job under the caller's time limit, with messages that name the graph. */
static gl_status run_graphviz(const gl_graph *g, size_t boxes, const gl_render_opts *o,
                              job_fn fn, void *ctx, char **bytes, size_t *len)
{
    unsigned timeout_ms = o && o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    bool timed_out = false;
    gl_status st = run_with_deadline(fn, ctx, &gv_lock, timeout_ms, bytes, len, &timed_out);
    if (st == GL_OK)
        return st;
    sbuf name = {0};
    put_display(&name, g->name ? g->name : "", NAME_DISPLAY_MAX);
    const char *shown = name.s ? name.s : "";
    if (timed_out) {
        char limit[32], count[32];
        if (timeout_ms % 1000 == 0)
            snprintf(limit, sizeof(limit), "%u s", timeout_ms / 1000);
        else
            snprintf(limit, sizeof(limit), "%u ms", timeout_ms);
        st = gl_fail(GL_ERR_UNSUPPORTED, "graph '%s': Graphviz layout took longer than %s (%s "
                                         "boxes); use a focus or a smaller max_nodes",
                     shown, limit, fmt_count(count, boxes));
    } else {
        gl_error_prefix("graph '%s'", shown);
    }
    free(name.s);
    return st;
}

/* ==== SVG ================================================================================ */

/* Job: the DOT text (ctx) laid out and drawn as SVG. */
static gl_status svg_job(void *ctx, sbuf *out)
{
    gv_session s;
    gl_status st = gv_open(&s, ctx);
    if (st != GL_OK)
        return st;
    char *data = NULL;
    unsigned int n = 0;
    if (gvRenderData(s.gvc, s.graph, "svg", &data, &n) != 0 || !data)
        st = gl_fail(GL_ERR_INTERNAL, "render: SVG output failed: %s", gv_message_line());
    else
        sb_putn(out, data, n);
    if (data)
        gvFreeRenderData(data);
    gv_close(&s);
    return st;
}

static gl_status render_svg(const gl_graph *g, const gl_render_opts *o, char **svg, size_t *len,
                            gl_render_info *info)
{
    *svg = NULL;
    view v;
    char *dot = NULL;
    gl_status st = make_dot(g, o, &v, &dot, NULL, info);
    size_t boxes = v.n_boxes, n = 0;
    view_free(&v);
    if (st == GL_OK)
        st = run_graphviz(g, boxes, o, svg_job, dot, svg, &n);
    if (st == GL_OK && len)
        *len = n;
    free(dot);
    return st;
}

gl_status gl_render_svg(const gl_graph *g, const gl_render_opts *o, char **svg, size_t *len,
                        gl_render_info *info)
{
    return render_svg(g, o, svg, len, info);
}

/* ---- atomic file write ---- */

static gl_status write_all(int fd, const char *data, size_t len, const char *path)
{
    if (!write_fully(fd, data, len))
        return gl_fail(GL_ERR_IO, "%s: write failed: %s", path, errno ? strerror(errno) : "?");
    return GL_OK;
}

/* Write to "<path>.XXXXXX" in the same folder, then rename over path: readers see the
 * old file or the new one, never half of one. */
static gl_status write_file_atomic(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path);
    char *tmp = gl_xmalloc(n + 8);
    snprintf(tmp, n + 8, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        gl_status st = gl_fail(GL_ERR_IO, "%s: cannot create a temporary file: %s", path,
                               strerror(errno));
        free(tmp);
        return st;
    }
    mode_t mask = umask(0); /* mkstemp makes 0600; give the file the usual mode */
    umask(mask);
    gl_status st = write_all(fd, data, len, path);
    if (st == GL_OK && fchmod(fd, 0666 & ~mask) != 0)
        st = gl_fail(GL_ERR_IO, "%s: chmod failed: %s", path, strerror(errno));
    if (close(fd) != 0 && st == GL_OK)
        st = gl_fail(GL_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    if (st == GL_OK && rename(tmp, path) != 0)
        st = gl_fail(GL_ERR_IO, "%s: rename failed: %s", path, strerror(errno));
    if (st != GL_OK)
        unlink(tmp);
    free(tmp);
    return st;
}

gl_status gl_render_svg_file(const gl_graph *g, const gl_render_opts *o, const char *path,
                             gl_render_info *info)
{
    if (!path || !*path)
        return gl_fail(GL_ERR_INPUT, "render: no output path");
    char *svg = NULL;
    size_t len = 0;
    gl_status st = render_svg(g, o, &svg, &len, info);
    if (st == GL_OK)
        st = write_file_atomic(path, svg, len);
    free(svg);
    return st;
}

/* ---- layout coordinates ---- */

static bool parse_index(const char *s, char prefix, size_t limit, size_t *out)
{
    if (!s || s[0] != prefix || !s[1])
        return false;
    char *end = NULL;
    unsigned long long v = strtoull(s + 1, &end, 10);
    if (*end || v >= limit)
        return false;
    *out = (size_t)v;
    return true;
}

static void copy_box(gl_layout_node *dst, const vbox *bx, Agnode_t *n)
{
    dst->id = bx->kind == GL_BOX_NODE ? bx->node_id : UINT32_MAX;
    dst->kind = bx->kind;
    dst->mark = bx->mark;
    dst->label = gl_xstrdup(bx->text);
    dst->x = ND_coord(n).x;
    dst->y = ND_coord(n).y;
    dst->w = ND_width(n) * 72.0;
    dst->h = ND_height(n) * 72.0;
}

/* Bezier control points; the two box centres when Graphviz drew no spline. */
static void copy_spline(gl_layout_edge *dst, Agedge_t *e, const gl_layout_node *nodes)
{
    const splines *spl = ED_spl(e);
    size_t count = 0;
    for (int i = 0; spl && i < spl->size; i++)
        count += spl->list[i].size > 0 ? (size_t)spl->list[i].size : 0;
    if (count < 2) {
        const gl_layout_node *a = &nodes[dst->from], *b = &nodes[dst->to];
        dst->pts = gl_xmalloc(4 * sizeof(double));
        const double pts[4] = {a->x, a->y, b->x, b->y};
        memcpy(dst->pts, pts, sizeof(pts));
        dst->n_pts = 2;
        return;
    }
    dst->pts = gl_xmalloc(2 * count * sizeof(double));
    for (int i = 0; i < spl->size; i++)
        for (int k = 0; k < spl->list[i].size; k++) {
            dst->pts[2 * dst->n_pts] = spl->list[i].list[k].x;
            dst->pts[2 * dst->n_pts + 1] = spl->list[i].list[k].y;
            dst->n_pts++;
        }
}

static void copy_edge(gl_layout_edge *dst, const vedge *ve, Agedge_t *e,
                      const gl_layout_node *nodes)
{
    dst->from = ve->from;
    dst->to = ve->to;
    dst->dashed = ve->dashed;
    sbuf label = {0};
    edge_label(ve, &label);
    dst->label = sb_take(&label);
    const textlabel_t *tl = ED_label(e) ? ED_label(e) : ED_xlabel(e);
    dst->label_x = tl ? tl->pos.x : 0;
    dst->label_y = tl ? tl->pos.y : 0;
    copy_spline(dst, e, nodes);
}

static void extract_layout(Agraph_t *graph, const view *v, gl_layout *l)
{
    l->nodes = gl_xcalloc(v->n_boxes + 1, sizeof(*l->nodes));
    l->edges = gl_xcalloc(v->n_edges + 1, sizeof(*l->edges));
    l->n_nodes = v->n_boxes;
    for (Agnode_t *n = agfstnode(graph); n; n = agnxtnode(graph, n)) {
        size_t i;
        if (parse_index(agnameof(n), 'b', v->n_boxes, &i))
            copy_box(&l->nodes[i], &v->boxes[i], n);
    }
    for (Agnode_t *n = agfstnode(graph); n; n = agnxtnode(graph, n))
        for (Agedge_t *e = agfstout(graph, n); e; e = agnxtout(graph, e)) {
            size_t i;
            if (parse_index(agget(e, "id"), 'e', v->n_edges, &i))
                copy_edge(&l->edges[l->n_edges++], &v->edges[i], e, l->nodes);
        }
    boxf bb = GD_bb(graph);
    l->width = bb.UR.x - bb.LL.x;
    l->height = bb.UR.y - bb.LL.y;
}

/* ---- the layout on the wire, child to parent ----
 * Native byte order and sizes (the same binary writes and reads it); every string and
 * array is preceded by its length:
 *   u64 n_nodes, u64 n_edges, f64 width, f64 height,
 *   n_nodes x { u32 id, u32 kind, u32 mark, f64 x, y, w, h, str label },
 *   n_edges x { u64 from, u64 to, u32 dashed, f64 label_x, label_y, str label,
 *               u64 n_pts, f64 pts[2 * n_pts] },
 *   str = u64 length, bytes (no NUL). */

#define WIRE_NODE_MIN (3 * 4 + 4 * 8 + 8)
#define WIRE_EDGE_MIN (2 * 8 + 4 + 2 * 8 + 8 + 8 + 2 * 2 * 8)

static void put_u32(sbuf *b, uint32_t v) { sb_putn(b, (const char *)&v, sizeof(v)); }
static void put_u64(sbuf *b, uint64_t v) { sb_putn(b, (const char *)&v, sizeof(v)); }
static void put_f64(sbuf *b, double v) { sb_putn(b, (const char *)&v, sizeof(v)); }

static void put_str(sbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    if (n)
        sb_putn(b, s, n);
}

static void encode_layout(const gl_layout *l, sbuf *out)
{
    put_u64(out, l->n_nodes);
    put_u64(out, l->n_edges);
    put_f64(out, l->width);
    put_f64(out, l->height);
    for (size_t i = 0; i < l->n_nodes; i++) {
        const gl_layout_node *n = &l->nodes[i];
        put_u32(out, n->id);
        put_u32(out, (uint32_t)n->kind);
        put_u32(out, (uint32_t)n->mark);
        const double geometry[4] = {n->x, n->y, n->w, n->h};
        for (size_t k = 0; k < 4; k++)
            put_f64(out, geometry[k]);
        put_str(out, n->label);
    }
    for (size_t i = 0; i < l->n_edges; i++) {
        const gl_layout_edge *e = &l->edges[i];
        put_u64(out, e->from);
        put_u64(out, e->to);
        put_u32(out, e->dashed);
        put_f64(out, e->label_x);
        put_f64(out, e->label_y);
        put_str(out, e->label);
        put_u64(out, e->n_pts);
        for (size_t k = 0; k < 2 * e->n_pts; k++)
            put_f64(out, e->pts[k]);
    }
}

/* A reader that turns every short read into `bad` (and zeros) instead of reading past
 * the end; the caller checks `bad` once. */
typedef struct wire {
    const char *p;
    size_t left;
    bool bad;
} wire;

static void take(wire *w, void *dst, size_t n)
{
    if (w->bad || n > w->left) {
        w->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, w->p, n);
    w->p += n;
    w->left -= n;
}

static uint32_t take_u32(wire *w)
{
    uint32_t v;
    take(w, &v, sizeof(v));
    return v;
}

static uint64_t take_u64(wire *w)
{
    uint64_t v;
    take(w, &v, sizeof(v));
    return v;
}

static double take_f64(wire *w)
{
    double v;
    take(w, &v, sizeof(v));
    return v;
}

static char *take_str(wire *w)
{
    uint64_t n = take_u64(w);
    if (w->bad || n > w->left) {
        w->bad = true;
        return gl_xstrdup("");
    }
    char *s = gl_xstrndup(w->p, (size_t)n);
    w->p += n;
    w->left -= (size_t)n;
    return s;
}

static void decode_node(wire *w, gl_layout_node *n)
{
    n->id = take_u32(w);
    uint32_t kind = take_u32(w), mark = take_u32(w);
    w->bad |= kind > GL_BOX_STUB || mark > GL_MARK_REPLACED;
    n->kind = w->bad ? GL_BOX_NODE : (gl_render_box_kind)kind;
    n->mark = w->bad ? GL_MARK_NONE : (gl_render_mark)mark;
    n->x = take_f64(w);
    n->y = take_f64(w);
    n->w = take_f64(w);
    n->h = take_f64(w);
    n->label = take_str(w);
}

static void decode_edge(wire *w, gl_layout_edge *e, size_t n_nodes)
{
    uint64_t from = take_u64(w), to = take_u64(w);
    w->bad |= from >= n_nodes || to >= n_nodes;
    e->from = (size_t)from;
    e->to = (size_t)to;
    e->dashed = take_u32(w) != 0;
    e->label_x = take_f64(w);
    e->label_y = take_f64(w);
    e->label = take_str(w);
    uint64_t n_pts = take_u64(w);
    if (w->bad || n_pts < 2 || n_pts > w->left / (2 * sizeof(double))) {
        w->bad = true;
        return;
    }
    e->pts = gl_xmalloc((size_t)n_pts * 2 * sizeof(double));
    e->n_pts = (size_t)n_pts;
    for (size_t k = 0; k < 2 * e->n_pts; k++)
        e->pts[k] = take_f64(w);
}

/* Counts are checked against the bytes present before anything is allocated. */
static gl_status decode_layout(const char *bytes, size_t len, gl_layout **out)
{
    wire w = {bytes, len, false};
    gl_layout *l = gl_xcalloc(1, sizeof(*l));
    uint64_t n_nodes = take_u64(&w), n_edges = take_u64(&w);
    l->width = take_f64(&w);
    l->height = take_f64(&w);
    w.bad |= n_nodes > w.left / WIRE_NODE_MIN || n_edges > w.left / WIRE_EDGE_MIN ||
             n_nodes * WIRE_NODE_MIN + n_edges * WIRE_EDGE_MIN > w.left;
    if (!w.bad) {
        l->nodes = gl_xcalloc((size_t)n_nodes + 1, sizeof(*l->nodes));
        l->edges = gl_xcalloc((size_t)n_edges + 1, sizeof(*l->edges));
    }
    while (!w.bad && l->n_nodes < n_nodes)
        decode_node(&w, &l->nodes[l->n_nodes++]);
    while (!w.bad && l->n_edges < n_edges)
        decode_edge(&w, &l->edges[l->n_edges++], l->n_nodes);
    if (w.bad || w.left) {
        gl_layout_free(l);
        return gl_fail(GL_ERR_INTERNAL, "render: the layout from the Graphviz process is "
                                        "malformed (%zu bytes)", len);
    }
    *out = l;
    return GL_OK;
}

typedef struct layout_ctx {
    const char *dot;
    const view *v;
} layout_ctx;

/* Job: the DOT text laid out; the coordinates of every box and edge, encoded. */
static gl_status layout_job(void *ctx, sbuf *out)
{
    const layout_ctx *c = ctx;
    gv_session s;
    gl_status st = gv_open(&s, c->dot);
    if (st != GL_OK)
        return st;
    gl_layout *l = gl_xcalloc(1, sizeof(*l));
    extract_layout(s.graph, c->v, l);
    gv_close(&s);
    encode_layout(l, out);
    gl_layout_free(l);
    return GL_OK;
}

gl_status gl_render_layout(const gl_graph *g, const gl_render_opts *o, gl_layout **out,
                           gl_render_info *info)
{
    *out = NULL;
    view v;
    char *dot = NULL, *bytes = NULL;
    size_t len = 0;
    gl_status st = make_dot(g, o, &v, &dot, NULL, info);
    if (st == GL_OK) {
        layout_ctx c = {dot, &v};
        st = run_graphviz(g, v.n_boxes, o, layout_job, &c, &bytes, &len);
    }
    if (st == GL_OK)
        st = decode_layout(bytes, len, out);
    free(bytes);
    free(dot);
    view_free(&v);
    return st;
}

void gl_layout_free(gl_layout *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_nodes; i++)
        free(l->nodes[i].label);
    for (size_t i = 0; i < l->n_edges; i++) {
        free(l->edges[i].pts);
        free(l->edges[i].label);
    }
    free(l->nodes);
    free(l->edges);
    free(l);
}
