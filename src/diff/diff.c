/* diff.c — what changed between two snapshots of a graph (the rules are in diff.h).
 *
 * One pass over each graph: nodes are matched (by id or by name) through arrays indexed by
 * id or node position and the graphs' O(1) name lookup; unmatched nodes are grouped by a
 * union-find over shared origins (sorting the (origin, node) pairs, so no id-sized table);
 * values are looked up by name. Nothing is quadratic in the graph size: 20k-node
 * snapshots diff in milliseconds.
 */
#include "diff/diff.h"

#include "util/bytes.h"
#include "util/escape.h"
#include "util/hash.h"
#include "util/strbuf.h"

#include "util/unionfind.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== text building ================================================================== */

/* `len` bytes with `quote` (0: none) around them; the quote, backslash and control bytes
 * are escaped so a change never spans lines it does not own. UTF-8 passes through. At
 * most `limit` bytes are shown, then "...". */
/* A non-ASCII character (`avail` bytes there): kept when it is valid UTF-8 and no bidi
 * or C1 control, else its escape (util/escape.h). Returns the bytes it took. */
static size_t sb_escaped_char(gl_strbuf *b, const uint8_t *p, size_t avail)
{
    char one[5] = {0}, esc[GL_ESCAPE_CHAR_MAX];
    size_t n;
    memcpy(one, p, avail < 4 ? avail : 4);
    if (gl_escape_char(one, esc, &n))
        gl_sb_printf(b, "%s", esc);
    else
        gl_sb_printf(b, "%.*s", (int)n, one);
    return n;
}

static void sb_escaped(gl_strbuf *b, const uint8_t *p, size_t len, char quote, size_t limit)
{
    if (quote)
        gl_sb_putc(b, quote);
    size_t shown = len < limit ? len : limit;
    for (size_t i = 0; i < shown; i++) {
        uint8_t c = p[i];
        if (c == '\n')
            gl_sb_printf(b, "\\n");
        else if (c == '\t')
            gl_sb_printf(b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            gl_sb_printf(b, "\\x%02x", c);
        else if (c == '\\' || (quote && c == (uint8_t)quote))
            gl_sb_printf(b, "\\%c", c);
        else if (c < 0x80)
            gl_sb_putc(b, (char)c);
        else
            i += sb_escaped_char(b, p + i, len - i) - 1;
    }
    if (shown < len)
        gl_sb_printf(b, "...");
    if (quote)
        gl_sb_putc(b, quote);
}

static void sb_str(gl_strbuf *b, const char *s, char quote)
{
    s = s ? s : "";
    sb_escaped(b, (const uint8_t *)s, strlen(s), quote, SIZE_MAX);
}

/* ==== rendering values as text ======================================================= */

/* Rendering has levels of detail: 0 is short (floats %g, 4-digit hashes, a prefix of
 * long lists); higher levels add what tells two values apart when level 0 reads the
 * same on both sides, so a change never shows as "a -> a". */
enum { DETAIL_SHORT = 0, DETAIL_EXACT = 1 };

#define SHORT_STRING 40     /* string attribute bytes shown at level 0 */
#define EXACT_STRING 1024
#define SHORT_LIST 16       /* lists up to this length are shown whole... */
#define LIST_PREFIX 8       /* ...longer ones by their first items */
#define SMALL_TENSOR 8      /* tensors up to this many elements show their values */
#define TENSOR_STRING 16    /* bytes of each string element shown */


static void sb_hash(gl_strbuf *b, uint64_t h, int level)
{
    if (level >= DETAIL_EXACT)
        gl_sb_printf(b, "hash %016" PRIx64, h);
    else
        gl_sb_printf(b, "hash %04x", (unsigned)(h & 0xffff));
}

static void sb_float(gl_strbuf *b, double v, bool is_double, int level)
{
    if (level < DETAIL_EXACT)
        gl_sb_printf(b, "%g", v);
    else
        gl_sb_printf(b, is_double ? "%.17g" : "%.9g", v);
}

static void sb_size(gl_strbuf *b, size_t bytes)
{
    char text[32];
    gl_bytes_text(bytes, text, sizeof(text));
    gl_sb_printf(b, "%s", text);
}

static void sb_tensor_dims(gl_strbuf *b, const gl_tensor *t)
{
    gl_sb_printf(b, "%s[", gl_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        gl_sb_printf(b, "%s%" PRId64, i ? "," : "", t->dims[i]);
    gl_sb_putc(b, ']');
}

static void sb_element(gl_strbuf *b, const gl_tensor *t, int64_t i, int level)
{
    const void *p = gl_tensor_data(t);
    switch (t->dtype) {
    case GL_DT_FLOAT:
    case GL_DT_FLOAT16:
    case GL_DT_BFLOAT16:
        sb_float(b, gl_tensor_get_f64(t, i), false, level);
        break;
    case GL_DT_DOUBLE:
        sb_float(b, gl_tensor_get_f64(t, i), true, level);
        break;
    case GL_DT_INT64:
        gl_sb_printf(b, "%" PRId64, ((const int64_t *)p)[i]);
        break;
    case GL_DT_UINT64:
        gl_sb_printf(b, "%" PRIu64, ((const uint64_t *)p)[i]);
        break;
    case GL_DT_BOOL:
        gl_sb_printf(b, "%s", ((const uint8_t *)p)[i] ? "true" : "false");
        break;
    case GL_DT_STRING: {
        const gl_bytes *s = &((const gl_bytes *)p)[i];
        sb_escaped(b, s->data, s->len, '"', level >= DETAIL_EXACT ? EXACT_STRING : TENSOR_STRING);
        break;
    }
    case GL_DT_COMPLEX64:
        gl_sb_printf(b, "(%g,%g)", ((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
        break;
    case GL_DT_COMPLEX128:
        gl_sb_printf(b, "(%g,%g)", ((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
        break;
    default: /* the narrower integers are exact as doubles */
        gl_sb_printf(b, "%" PRId64, (int64_t)gl_tensor_get_f64(t, i));
        break;
    }
}

/* "float[3] {1, 2, 3}" when small, else "float[64,3,3,3] (6.8 KB, hash 1a2b)". */
static void sb_tensor(gl_strbuf *b, const gl_tensor *t, int level)
{
    if (!t) {
        gl_sb_printf(b, "(no tensor)");
        return;
    }
    sb_tensor_dims(b, t);
    if (t->count <= SMALL_TENSOR && (t->count == 0 || gl_tensor_data(t))) {
        gl_sb_printf(b, " {");
        for (int64_t i = 0; i < t->count; i++) {
            if (i)
                gl_sb_printf(b, ", ");
            sb_element(b, t, i, level);
        }
        gl_sb_putc(b, '}');
        return;
    }
    gl_sb_printf(b, " (");
    sb_size(b, gl_tensor_nbytes(t));
    gl_sb_printf(b, ", ");
    sb_hash(b, gl_tensor_hash(t), level);
    gl_sb_putc(b, ')');
}

static void sb_subgraph(gl_strbuf *b, const gl_graph *g, int level)
{
    if (!g) {
        gl_sb_printf(b, "(no graph)");
        return;
    }
    gl_sb_printf(b, "graph ");
    if (g->name && g->name[0]) {
        sb_str(b, g->name, '\'');
        gl_sb_putc(b, ' ');
    }
    gl_sb_printf(b, "(%zu nodes", g->live_nodes);
    if (level >= DETAIL_EXACT) {
        gl_sb_printf(b, ", ");
        sb_hash(b, gl_graph_fingerprint(g), level);
    }
    gl_sb_putc(b, ')');
}

static const char *opaque_kind(gl_attr_type type)
{
    return type == GL_ATTR_SPARSE_TENSOR || type == GL_ATTR_SPARSE_TENSORS ? "sparse tensor"
                                                                             : "type";
}

/* Item i of a list attribute (or the single value of a scalar kind, i == 0). */
static void sb_attr_item(gl_strbuf *b, const gl_attr *a, size_t i, int level)
{
    switch (a->type) {
    case GL_ATTR_FLOATS: sb_float(b, a->floats[i], false, level); break;
    case GL_ATTR_INTS: gl_sb_printf(b, "%" PRId64, a->ints[i]); break;
    case GL_ATTR_STRINGS:
        sb_escaped(b, a->strings[i].data, a->strings[i].len, '"',
                   level >= DETAIL_EXACT ? EXACT_STRING : SHORT_STRING);
        break;
    case GL_ATTR_TENSORS: sb_tensor(b, a->tensors[i], level); break;
    case GL_ATTR_GRAPHS: sb_subgraph(b, a->graphs[i], level); break;
    default: /* SPARSE_TENSOR(S), TYPE_PROTO(S): packed messages */
        gl_sb_printf(b, "%s (", opaque_kind(a->type));
        sb_size(b, a->opaque[i].len);
        if (level >= DETAIL_EXACT) {
            gl_sb_printf(b, ", ");
            sb_hash(b, gl_fnv1a(GL_FNV_OFFSET, a->opaque[i].data, a->opaque[i].len), level);
        }
        gl_sb_putc(b, ')');
        break;
    }
}

/* A hash of a whole list attribute: tells long lists apart when their prefix agrees. */
static uint64_t attr_list_hash(const gl_attr *a)
{
    uint64_t h = GL_FNV_OFFSET;
    for (size_t i = 0; i < a->n; i++) {
        uint64_t item = 0;
        switch (a->type) {
        case GL_ATTR_FLOATS: item = gl_fnv1a(GL_FNV_OFFSET, &a->floats[i], sizeof(float)); break;
        case GL_ATTR_INTS: item = (uint64_t)a->ints[i]; break;
        case GL_ATTR_STRINGS:
            item = gl_fnv1a(GL_FNV_OFFSET, a->strings[i].data, a->strings[i].len);
            break;
        case GL_ATTR_TENSORS: item = a->tensors[i] ? gl_tensor_hash(a->tensors[i]) : 0; break;
        case GL_ATTR_GRAPHS: item = a->graphs[i] ? gl_graph_fingerprint(a->graphs[i]) : 0; break;
        default:
            item = a->opaque ? gl_fnv1a(GL_FNV_OFFSET, a->opaque[i].data, a->opaque[i].len) : 0;
        }
        h = gl_fnv1a(h, &item, sizeof(item));
    }
    return h;
}

/* "[1,1,1,1]"; long lists: "[1,2,3,4,5,6,7,8,...] (100 values)". */
static void sb_attr_list(gl_strbuf *b, const gl_attr *a, int level)
{
    size_t shown = a->n <= SHORT_LIST ? a->n : LIST_PREFIX;
    bool spaced = a->type != GL_ATTR_INTS && a->type != GL_ATTR_FLOATS;
    gl_sb_putc(b, '[');
    for (size_t i = 0; i < shown; i++) {
        if (i)
            gl_sb_printf(b, spaced ? ", " : ",");
        sb_attr_item(b, a, i, level);
    }
    if (shown < a->n) {
        gl_sb_printf(b, spaced ? ", ...] (%zu values" : ",...] (%zu values", a->n);
        if (level >= DETAIL_EXACT) {
            gl_sb_printf(b, ", ");
            sb_hash(b, attr_list_hash(a), level);
        }
        gl_sb_putc(b, ')');
        return;
    }
    gl_sb_putc(b, ']');
}

static bool attr_has_list(const gl_attr *a)
{
    switch (a->type) {
    case GL_ATTR_FLOATS: return a->floats || !a->n;
    case GL_ATTR_INTS: return a->ints || !a->n;
    case GL_ATTR_STRINGS: return a->strings || !a->n;
    case GL_ATTR_TENSORS: return a->tensors || !a->n;
    case GL_ATTR_GRAPHS: return a->graphs || !a->n;
    default: return a->opaque || !a->n;
    }
}

static void render_attr(gl_strbuf *b, const void *obj, int level)
{
    const gl_attr *a = obj;
    if (a->ref_attr_name) { /* inside a function body: stands for the caller's attribute */
        gl_sb_putc(b, '@');
        sb_str(b, a->ref_attr_name, 0);
        return;
    }
    switch (a->type) {
    case GL_ATTR_FLOAT: sb_float(b, a->f, false, level); break;
    case GL_ATTR_INT: gl_sb_printf(b, "%" PRId64, a->i); break;
    case GL_ATTR_STRING:
        sb_escaped(b, a->s.data, a->s.len, '"',
                   level >= DETAIL_EXACT ? EXACT_STRING : SHORT_STRING);
        if (level >= DETAIL_EXACT && a->s.len > EXACT_STRING) {
            gl_sb_printf(b, " (%zu B, ", a->s.len);
            sb_hash(b, gl_fnv1a(GL_FNV_OFFSET, a->s.data, a->s.len), level);
            gl_sb_putc(b, ')');
        }
        break;
    case GL_ATTR_TENSOR: sb_tensor(b, a->t, level); break;
    case GL_ATTR_GRAPH: sb_subgraph(b, a->g, level); break;
    case GL_ATTR_SPARSE_TENSOR:
    case GL_ATTR_TYPE_PROTO:
        if (a->opaque && a->n == 1)
            sb_attr_item(b, a, 0, level);
        else
            sb_attr_list(b, a, level);
        break;
    case GL_ATTR_FLOATS:
    case GL_ATTR_INTS:
    case GL_ATTR_STRINGS:
    case GL_ATTR_TENSORS:
    case GL_ATTR_GRAPHS:
    case GL_ATTR_SPARSE_TENSORS:
    case GL_ATTR_TYPE_PROTOS:
        if (attr_has_list(a))
            sb_attr_list(b, a, level);
        else
            gl_sb_printf(b, "[?]");
        break;
    default: gl_sb_printf(b, "?"); break;
    }
}

static void render_type(gl_strbuf *b, const void *obj, int level)
{
    const gl_type *t = obj;
    int n = gl_type_format(t, NULL, 0);
    char *text = gl_xmalloc((size_t)n + 1);
    gl_type_format(t, text, (size_t)n + 1);
    /* Dim symbols come from the file: escape them like names. */
    sb_escaped(b, (const uint8_t *)text, (size_t)n, 0, SIZE_MAX);
    free(text);
    if (level >= DETAIL_EXACT && t->kind == GL_TYPE_OPAQUE) {
        gl_sb_printf(b, " (");
        sb_hash(b, gl_fnv1a(GL_FNV_OFFSET, t->opaque.data, t->opaque.len), level);
        gl_sb_putc(b, ')');
    }
}

/* Initializers: "float[8] 32 B", then the values or a hash, then exact values/hash. */
static void render_init(gl_strbuf *b, const void *obj, int level)
{
    const gl_tensor *t = obj;
    if (level == 0) {
        sb_tensor_dims(b, t);
        gl_sb_putc(b, ' ');
        sb_size(b, gl_tensor_nbytes(t));
    } else {
        sb_tensor(b, t, level - 1);
    }
}

/* ==== a constant's values ============================================================== */

#define VALUES_WHOLE 16   /* tensors up to this many elements show every value... */
#define VALUES_FIRST 8    /* ...larger ones their first values, then "…" */
#define VALUES_SCANNED (1 << 20) /* min/max read at most this many values: a 100 MB
                                  * weight leaves the diff instant */

static bool is_float_dtype(gl_dtype dt)
{
    return dt == GL_DT_FLOAT || dt == GL_DT_FLOAT16 || dt == GL_DT_BFLOAT16 ||
           dt == GL_DT_DOUBLE;
}

/* " min -1 max 2" over the first VALUES_SCANNED values, NaNs counted apart. */
static void sb_float_range(gl_strbuf *b, const gl_tensor *t)
{
    int64_t n = t->count < VALUES_SCANNED ? t->count : VALUES_SCANNED, nan = 0;
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = gl_tensor_get_f64(t, i);
        if (isnan(v)) {
            nan++;
        } else if (i == nan) { /* the first number */
            lo = hi = v;
        } else {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    if (n > nan)
        gl_sb_printf(b, " min %g max %g", lo, hi);
    if (nan)
        gl_sb_printf(b, " (%" PRId64 " NaN)", nan);
    if (n < t->count)
        gl_sb_printf(b, " (of the first %" PRId64 ")", n);
}

static void sb_values(gl_strbuf *b, const gl_tensor *t)
{
    if (t->rank == 0 && t->count == 1) {
        sb_element(b, t, 0, DETAIL_SHORT);
        return;
    }
    int64_t shown = t->count <= VALUES_WHOLE ? t->count : VALUES_FIRST;
    gl_sb_putc(b, '[');
    for (int64_t i = 0; i < shown; i++) {
        if (i)
            gl_sb_printf(b, ", ");
        sb_element(b, t, i, DETAIL_SHORT);
    }
    if (shown < t->count) {
        gl_sb_printf(b, ", \u2026]");
        if (is_float_dtype(t->dtype))
            sb_float_range(b, t);
        return;
    }
    gl_sb_putc(b, ']');
}

char *gl_diff_tensor_values(const gl_tensor *t)
{
    if (!t || (t->count && !gl_tensor_data(t)))
        return NULL;
    gl_strbuf b = {0};
    sb_values(&b, t);
    return gl_sb_take(&b);
}

/* An initializer added or removed: "int64[3] 24 B = [1, 16, 256]" (what a folded
 * constant is, said where it appears). */
static void render_init_values(gl_strbuf *b, const void *obj, int level)
{
    const gl_tensor *t = obj;
    render_init(b, t, level);
    if (t->count && !gl_tensor_data(t))
        return; /* the bytes are not loaded (external data): the size says enough */
    gl_sb_printf(b, " = ");
    sb_values(b, t);
}

typedef void (*render_fn)(gl_strbuf *b, const void *obj, int level);

static char *render_one(render_fn fn, const void *obj, int level)
{
    gl_strbuf b = {0};
    fn(&b, obj, level);
    return gl_sb_take(&b);
}

/* Both sides at increasing detail until the texts differ or the detail runs out. */
static void render_pair(render_fn fn, int max_level, const void *old, const void *new,
                        char **old_text, char **new_text)
{
    for (int level = 0;; level++) {
        *old_text = render_one(fn, old, level);
        *new_text = render_one(fn, new, level);
        if (level == max_level || strcmp(*old_text, *new_text) != 0)
            return;
        free(*old_text);
        free(*new_text);
    }
}

/* ==== equality ======================================================================= */

static bool str_eq(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0);
}

static bool bytes_equal(const gl_bytes *a, const gl_bytes *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

static bool tensor_equal(const gl_tensor *a, const gl_tensor *b)
{
    return a && b ? gl_tensor_equal(a, b) : a == b;
}

static bool graph_equal(const gl_graph *a, const gl_graph *b)
{
    if (!a || !b)
        return a == b;
    return gl_graph_fingerprint(a) == gl_graph_fingerprint(b);
}

static bool mem_equal(const void *a, const void *b, size_t n)
{
    return n == 0 || (a && b && memcmp(a, b, n) == 0) || a == b;
}

/* Lists of n items: item i equal on both sides for every i. */
static bool attr_items_equal(const gl_attr *a, const gl_attr *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        bool same;
        switch (a->type) {
        case GL_ATTR_STRINGS: same = bytes_equal(&a->strings[i], &b->strings[i]); break;
        case GL_ATTR_TENSORS: same = tensor_equal(a->tensors[i], b->tensors[i]); break;
        case GL_ATTR_GRAPHS: same = graph_equal(a->graphs[i], b->graphs[i]); break;
        default: same = bytes_equal(&a->opaque[i], &b->opaque[i]); break;
        }
        if (!same)
            return false;
    }
    return true;
}

static bool attr_equal(const gl_attr *a, const gl_attr *b)
{
    if (a->type != b->type || !str_eq(a->ref_attr_name, b->ref_attr_name))
        return false;
    if (a->ref_attr_name)
        return true;
    switch (a->type) {
    case GL_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof(float)) == 0; /* bits: -0, NaN */
    case GL_ATTR_INT: return a->i == b->i;
    case GL_ATTR_STRING: return bytes_equal(&a->s, &b->s);
    case GL_ATTR_TENSOR: return tensor_equal(a->t, b->t);
    case GL_ATTR_GRAPH: return graph_equal(a->g, b->g);
    case GL_ATTR_FLOATS:
        return a->n == b->n && mem_equal(a->floats, b->floats, a->n * sizeof(float));
    case GL_ATTR_INTS:
        return a->n == b->n && mem_equal(a->ints, b->ints, a->n * sizeof(int64_t));
    case GL_ATTR_UNDEFINED: return true;
    default:
        if (!attr_has_list(a) || !attr_has_list(b))
            return attr_has_list(a) == attr_has_list(b) && a->n == b->n;
        return attr_items_equal(a, b);
    }
}

static bool type_equal(const gl_type *a, const gl_type *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case GL_TYPE_TENSOR: return a->dtype == b->dtype && gl_shape_equal(&a->shape, &b->shape);
    case GL_TYPE_OPAQUE: return bytes_equal(&a->opaque, &b->opaque);
    default: return true;
    }
}

/* ==== building the diff ============================================================== */

typedef struct detail_list {
    gl_change_detail *items;
    size_t n, cap;
} detail_list;

typedef struct builder {
    gl_diff *d;
    size_t cap_nodes, cap_values;
    const gl_graph *before, *after;
    gl_diff_mode mode;
    const gl_node **match;   /* by after node index: the before node it is, or NULL */
    bool *old_matched;       /* by before node index */
    bool *type_reported;     /* by after value index: a change already tells its type */
    detail_list details;     /* scratch for the node being compared */
} builder;

static const char *value_name(const gl_value *v)
{
    if (!v)
        return "";
    return v->outer ? v->outer->name : v->name; /* a capture reads the outer value */
}

static char *op_text(const gl_node *n)
{
    gl_strbuf b = {0};
    if (n->domain[0])
        gl_sb_printf(&b, "%s:", n->domain);
    gl_sb_printf(&b, "%s", n->op_type ? n->op_type : "?");
    return gl_sb_take(&b);
}

static void add_detail(detail_list *l, gl_detail_kind kind, char *what, char *old_text,
                       char *new_text)
{
    GL_GROW(l->items, l->cap, l->n + 1);
    l->items[l->n++] = (gl_change_detail){kind, what, old_text, new_text};
}

static gl_node_change *append_change(builder *bd, gl_change_kind kind)
{
    gl_diff *d = bd->d;
    GL_GROW(d->nodes, bd->cap_nodes, d->n_nodes + 1);
    gl_node_change *c = &d->nodes[d->n_nodes++];
    *c = (gl_node_change){.kind = kind, .decision = -1};
    switch (kind) {
    case GL_CHANGE_ADDED: d->n_added++; break;
    case GL_CHANGE_REMOVED: d->n_removed++; break;
    case GL_CHANGE_REPLACED: d->n_replaced++; break;
    case GL_CHANGE_MODIFIED: d->n_modified++; break;
    }
    return c;
}

static void set_side(const gl_node *const *nodes, size_t count, uint32_t **ids, char ***names,
                     char ***ops)
{
    *ids = gl_xmalloc((count ? count : 1) * sizeof(uint32_t));
    *names = gl_xmalloc((count ? count : 1) * sizeof(char *));
    *ops = gl_xmalloc((count ? count : 1) * sizeof(char *));
    for (size_t i = 0; i < count; i++) {
        (*ids)[i] = nodes[i]->id;
        (*names)[i] = gl_xstrdup(nodes[i]->name ? nodes[i]->name : "");
        (*ops)[i] = op_text(nodes[i]);
    }
}

static void append_value_change(builder *bd, gl_value_change_kind kind, const char *name,
                                char *old_text, char *new_text)
{
    gl_diff *d = bd->d;
    GL_GROW(d->values, bd->cap_values, d->n_values + 1);
    d->values[d->n_values++] =
        (gl_value_change){kind, gl_xstrdup(name ? name : ""), old_text, new_text};
}

/* ---- one matched node ---------------------------------------------------------------- */

static const char *attr_name(const gl_attr *a) { return a->name ? a->name : ""; }

static int cmp_attr_ptr(const void *x, const void *y)
{
    const gl_attr *a = *(const gl_attr *const *)x, *b = *(const gl_attr *const *)y;
    int c = strcmp(attr_name(a), attr_name(b));
    if (c)
        return c;
    return (a > b) - (a < b); /* same name twice: keep the node's order */
}

/* The node's attributes sorted by name, in `stack` when they fit. */
static const gl_attr **sorted_attrs(const gl_node *n, const gl_attr **stack, size_t stack_len)
{
    const gl_attr **v = n->n_attrs <= stack_len ? stack : gl_xmalloc(n->n_attrs * sizeof(*v));
    for (size_t i = 0; i < n->n_attrs; i++)
        v[i] = &n->attrs[i];
    if (n->n_attrs > 1)
        qsort(v, n->n_attrs, sizeof(*v), cmp_attr_ptr);
    return v;
}

/* "1 (int) -> 1 (float)": the kind changed but the value reads the same. */
static void name_attr_types(const gl_attr *a, const gl_attr *b, char **ot, char **nt)
{
    gl_strbuf x = {0}, y = {0};
    gl_sb_printf(&x, "%s (%s)", *ot, gl_attr_type_name(a->type));
    gl_sb_printf(&y, "%s (%s)", *nt, gl_attr_type_name(b->type));
    free(*ot);
    free(*nt);
    *ot = gl_sb_take(&x);
    *nt = gl_sb_take(&y);
}

/* Attributes merged by name, so the details come in name order whatever the node order. */
static void diff_attrs(detail_list *l, const gl_node *old, const gl_node *new)
{
    const gl_attr *stack_old[16], *stack_new[16];
    const gl_attr **a = sorted_attrs(old, stack_old, GL_ARRAY_LEN(stack_old));
    const gl_attr **b = sorted_attrs(new, stack_new, GL_ARRAY_LEN(stack_new));
    size_t i = 0, j = 0;
    while (i < old->n_attrs || j < new->n_attrs) {
        int c = i == old->n_attrs   ? 1
                : j == new->n_attrs ? -1
                                    : strcmp(attr_name(a[i]), attr_name(b[j]));
        if (c < 0) {
            add_detail(l, GL_DETAIL_ATTR_REMOVED, gl_xstrdup(attr_name(a[i])),
                       render_one(render_attr, a[i], DETAIL_SHORT), NULL);
            i++;
        } else if (c > 0) {
            add_detail(l, GL_DETAIL_ATTR_ADDED, gl_xstrdup(attr_name(b[j])), NULL,
                       render_one(render_attr, b[j], DETAIL_SHORT));
            j++;
        } else {
            if (!attr_equal(a[i], b[j])) {
                char *ot, *nt;
                render_pair(render_attr, DETAIL_EXACT, a[i], b[j], &ot, &nt);
                if (strcmp(ot, nt) == 0 && a[i]->type != b[j]->type)
                    name_attr_types(a[i], b[j], &ot, &nt);
                add_detail(l, GL_DETAIL_ATTR_CHANGED, gl_xstrdup(attr_name(b[j])), ot, nt);
            }
            i++;
            j++;
        }
    }
    if (a != stack_old)
        free(a);
    if (b != stack_new)
        free(b);
}

static char *slot_text(const char *what, size_t slot)
{
    gl_strbuf b = {0};
    gl_sb_printf(&b, "%s %zu", what, slot);
    return gl_sb_take(&b);
}

static void diff_inputs(detail_list *l, const gl_node *old, const gl_node *new)
{
    size_t n = old->n_inputs > new->n_inputs ? old->n_inputs : new->n_inputs;
    for (size_t i = 0; i < n; i++) {
        const char *a = i < old->n_inputs ? value_name(old->inputs[i]) : "";
        const char *b = i < new->n_inputs ? value_name(new->inputs[i]) : "";
        if (strcmp(a, b) != 0)
            add_detail(l, GL_DETAIL_INPUT, slot_text("input", i), gl_xstrdup(a), gl_xstrdup(b));
    }
}

static void diff_outputs(builder *bd, const gl_node *old, const gl_node *new)
{
    size_t n = old->n_outputs > new->n_outputs ? old->n_outputs : new->n_outputs;
    for (size_t i = 0; i < n; i++) {
        const gl_value *a = i < old->n_outputs ? old->outputs[i] : NULL;
        const gl_value *b = i < new->n_outputs ? new->outputs[i] : NULL;
        if (strcmp(value_name(a), value_name(b)) != 0)
            add_detail(&bd->details, GL_DETAIL_OUTPUT, slot_text("output", i),
                       gl_xstrdup(value_name(a)), gl_xstrdup(value_name(b)));
        if (a && b && !type_equal(&a->type, &b->type)) {
            char *ot, *nt;
            render_pair(render_type, DETAIL_EXACT, &a->type, &b->type, &ot, &nt);
            add_detail(&bd->details, GL_DETAIL_OUTPUT_TYPE, gl_xstrdup(b->name), ot, nt);
            if (b->graph == bd->after)
                bd->type_reported[b->index] = true;
        }
    }
}

static void diff_matched(builder *bd, const gl_node *old, const gl_node *new)
{
    detail_list *l = &bd->details;
    l->n = 0;
    if (!str_eq(old->name, new->name))
        add_detail(l, GL_DETAIL_RENAMED, gl_xstrdup("name"), gl_xstrdup(old->name ? old->name : ""),
                   gl_xstrdup(new->name ? new->name : ""));
    if (!str_eq(old->op_type, new->op_type) || !str_eq(old->domain, new->domain))
        add_detail(l, GL_DETAIL_OP, gl_xstrdup("op"), op_text(old), op_text(new));
    diff_attrs(l, old, new);
    diff_inputs(l, old, new);
    diff_outputs(bd, old, new);
    if (l->n == 0)
        return;
    gl_node_change *c = append_change(bd, GL_CHANGE_MODIFIED);
    set_side(&old, 1, &c->old_ids, &c->old_names, &c->old_ops);
    set_side(&new, 1, &c->new_ids, &c->new_names, &c->new_ops);
    c->n_old = c->n_new = 1;
    if (new->prov.decision != old->prov.decision)
        c->decision = new->prov.decision;
    c->details = gl_xmalloc(l->n * sizeof(*c->details));
    memcpy(c->details, l->items, l->n * sizeof(*c->details));
    c->n_details = l->n;
    l->n = 0;
}

/* ---- matching ------------------------------------------------------------------------ */

static void match_by_ids(builder *bd)
{
    const gl_graph *b = bd->before, *a = bd->after;
    size_t n_ids = b->next_node_id;
    const gl_node **by_id = gl_xcalloc(n_ids ? n_ids : 1, sizeof(*by_id));
    for (size_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i] && b->nodes[i]->id < n_ids)
            by_id[b->nodes[i]->id] = b->nodes[i];
    for (size_t i = 0; i < a->n_nodes; i++) {
        const gl_node *n = a->nodes[i];
        const gl_node *old = n && n->id < n_ids ? by_id[n->id] : NULL;
        if (old) {
            bd->match[i] = old;
            bd->old_matched[old->index] = true;
        }
    }
    free(by_id);
}

/* The first node of each name on both sides are the same node; later namesakes have no
 * reliable partner and come out as added/removed. */
static void match_by_names(builder *bd)
{
    const gl_graph *a = bd->after;
    for (size_t i = 0; i < a->n_nodes; i++) {
        const gl_node *n = a->nodes[i];
        if (!n || !n->name || gl_find_node(a, n->name) != n)
            continue;
        const gl_node *old = gl_find_node(bd->before, n->name);
        if (old) {
            bd->match[i] = old;
            bd->old_matched[old->index] = true;
        }
    }
}

/* ---- grouping the unmatched nodes ---------------------------------------------------- */

/* Elements 0..n_old-1 are the unmatched nodes of `before` in order, then the unmatched
 * nodes of `after` in order. */
typedef struct groups {
    const gl_node **el;
    size_t n_old, n_el;
    size_t *group;      /* by element: group number, in order of first element */
    size_t n_groups;
    size_t *start;      /* by group: first position in `members` (n_groups + 1 entries) */
    size_t *members;    /* elements grouped, each group in element order */
    size_t *el_of_new;  /* by after node index: its element, or SIZE_MAX */
} groups;

typedef struct origin_ref {
    uint32_t origin;
    size_t el;
} origin_ref;

static int cmp_origin_ref(const void *x, const void *y)
{
    const origin_ref *a = x, *b = y;
    if (a->origin != b->origin)
        return (a->origin > b->origin) - (a->origin < b->origin);
    return (a->el > b->el) - (a->el < b->el);
}

/* Link elements that share an origin: sort (origin, element) pairs, join neighbours. */
static void link_by_origins(const groups *gr, size_t *parent)
{
    size_t n_refs = 0;
    for (size_t e = 0; e < gr->n_el; e++)
        n_refs += gr->el[e]->prov.n_origins;
    if (n_refs == 0)
        return;
    origin_ref *refs = gl_xmalloc(n_refs * sizeof(*refs));
    size_t k = 0;
    for (size_t e = 0; e < gr->n_el; e++)
        for (size_t j = 0; j < gr->el[e]->prov.n_origins; j++)
            refs[k++] = (origin_ref){gr->el[e]->prov.origins[j], e};
    qsort(refs, n_refs, sizeof(*refs), cmp_origin_ref);
    for (size_t i = 1; i < n_refs; i++)
        if (refs[i].origin == refs[i - 1].origin)
            gl_uf_union(parent, refs[i].el, refs[i - 1].el);
    free(refs);
}

static void build_groups(const builder *bd, groups *gr)
{
    const gl_graph *b = bd->before, *a = bd->after;
    gr->el = gl_xmalloc((b->n_nodes + a->n_nodes + 1) * sizeof(*gr->el));
    gr->el_of_new = gl_xmalloc((a->n_nodes + 1) * sizeof(size_t));
    for (size_t i = 0; i < b->n_nodes; i++)
        if (b->nodes[i] && !bd->old_matched[i])
            gr->el[gr->n_el++] = b->nodes[i];
    gr->n_old = gr->n_el;
    for (size_t i = 0; i < a->n_nodes; i++) {
        gr->el_of_new[i] = SIZE_MAX;
        if (a->nodes[i] && !bd->match[i]) {
            gr->el_of_new[i] = gr->n_el;
            gr->el[gr->n_el++] = a->nodes[i];
        }
    }
    size_t *parent = gl_xmalloc((gr->n_el + 1) * sizeof(size_t));
    for (size_t e = 0; e < gr->n_el; e++)
        parent[e] = e;
    if (bd->mode == GL_DIFF_MATCH_IDS)
        link_by_origins(gr, parent);

    /* Number the groups by their first element, then bucket the elements. */
    gr->group = gl_xmalloc((gr->n_el + 1) * sizeof(size_t));
    for (size_t e = 0; e < gr->n_el; e++) {
        size_t root = gl_uf_find(parent, e);
        gr->group[e] = root == e ? gr->n_groups++ : gr->group[root];
    }
    free(parent);
    gr->start = gl_xcalloc(gr->n_groups + 1, sizeof(size_t));
    for (size_t e = 0; e < gr->n_el; e++)
        gr->start[gr->group[e] + 1]++;
    for (size_t g = 0; g < gr->n_groups; g++)
        gr->start[g + 1] += gr->start[g];
    size_t *fill = gl_xmalloc((gr->n_groups + 1) * sizeof(size_t));
    memcpy(fill, gr->start, gr->n_groups * sizeof(size_t));
    gr->members = gl_xmalloc((gr->n_el + 1) * sizeof(size_t));
    for (size_t e = 0; e < gr->n_el; e++)
        gr->members[fill[gr->group[e]]++] = e;
    free(fill);
}

static void free_groups(groups *gr)
{
    free(gr->el);
    free(gr->group);
    free(gr->start);
    free(gr->members);
    free(gr->el_of_new);
}

/* One change for group g: its old members are first (elements < n_old). */
static void emit_group(builder *bd, const groups *gr, size_t g)
{
    size_t first = gr->start[g], end = gr->start[g + 1], split = first;
    while (split < end && gr->members[split] < gr->n_old)
        split++;
    size_t n_old = split - first, n_new = end - split;
    gl_change_kind kind = n_old && n_new ? GL_CHANGE_REPLACED
                          : n_new        ? GL_CHANGE_ADDED
                                         : GL_CHANGE_REMOVED;
    const gl_node **nodes = gl_xmalloc((end - first) * sizeof(*nodes));
    for (size_t i = first; i < end; i++)
        nodes[i - first] = gr->el[gr->members[i]];
    gl_node_change *c = append_change(bd, kind);
    set_side(nodes, n_old, &c->old_ids, &c->old_names, &c->old_ops);
    set_side(nodes + n_old, n_new, &c->new_ids, &c->new_names, &c->new_ops);
    c->n_old = n_old;
    c->n_new = n_new;
    for (size_t i = 0; i < n_new && c->decision < 0; i++)
        c->decision = nodes[n_old + i]->prov.decision >= 0 ? nodes[n_old + i]->prov.decision : -1;
    free(nodes);
}

/* after's order for modified/added/replaced (a group at its first new node), then the
 * groups with old nodes only, in before's order. */
static void diff_nodes(builder *bd)
{
    groups gr = {0};
    build_groups(bd, &gr);
    bool *emitted = gl_xcalloc(gr.n_groups + 1, sizeof(bool));
    const gl_graph *a = bd->after;
    for (size_t i = 0; i < a->n_nodes; i++) {
        if (!a->nodes[i])
            continue;
        if (bd->match[i]) {
            diff_matched(bd, bd->match[i], a->nodes[i]);
            continue;
        }
        size_t g = gr.group[gr.el_of_new[i]];
        if (!emitted[g]) {
            emitted[g] = true;
            emit_group(bd, &gr, g);
        }
    }
    for (size_t e = 0; e < gr.n_old; e++) {
        size_t g = gr.group[e];
        if (!emitted[g]) {
            emitted[g] = true;
            emit_group(bd, &gr, g);
        }
    }
    free(emitted);
    free_groups(&gr);
}

/* ---- values -------------------------------------------------------------------------- */

static bool name_lists_equal(gl_value *const *a, size_t n_a, gl_value *const *b, size_t n_b)
{
    if (n_a != n_b)
        return false;
    for (size_t i = 0; i < n_a; i++)
        if (strcmp(value_name(a[i]), value_name(b[i])) != 0)
            return false;
    return true;
}

static char *name_list_text(gl_value *const *v, size_t n)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < n; i++)
        gl_sb_printf(&b, "%s%s", i ? ", " : "", value_name(v[i]));
    return gl_sb_take(&b);
}

static void diff_interface(builder *bd)
{
    const gl_graph *b = bd->before, *a = bd->after;
    if (!name_lists_equal(b->inputs, b->n_inputs, a->inputs, a->n_inputs))
        append_value_change(bd, GL_GRAPH_INPUT_CHANGED, a->name,
                            name_list_text(b->inputs, b->n_inputs),
                            name_list_text(a->inputs, a->n_inputs));
    if (!name_lists_equal(b->outputs, b->n_outputs, a->outputs, a->n_outputs))
        append_value_change(bd, GL_GRAPH_OUTPUT_CHANGED, a->name,
                            name_list_text(b->outputs, b->n_outputs),
                            name_list_text(a->outputs, a->n_outputs));
}

static const gl_tensor *init_named(const gl_graph *g, const char *name)
{
    const gl_value *v = gl_find_value(g, name);
    return v ? v->init : NULL;
}

static void diff_inits(builder *bd)
{
    const gl_graph *b = bd->before, *a = bd->after;
    for (size_t i = 0; i < a->n_inits; i++) {
        const gl_value *v = a->inits[i];
        if (!v || !v->init)
            continue;
        const gl_tensor *old = init_named(b, v->name);
        if (!old) {
            append_value_change(bd, GL_INIT_ADDED, v->name, NULL,
                                render_one(render_init_values, v->init, 0));
        } else if (!gl_tensor_equal(old, v->init)) {
            char *ot, *nt;
            render_pair(render_init, 1 + DETAIL_EXACT, old, v->init, &ot, &nt);
            append_value_change(bd, GL_INIT_CHANGED, v->name, ot, nt);
            bd->type_reported[v->index] = true;
        }
    }
    for (size_t i = 0; i < b->n_inits; i++) {
        const gl_value *v = b->inits[i];
        if (v && v->init && !init_named(a, v->name))
            append_value_change(bd, GL_INIT_REMOVED, v->name,
                                render_one(render_init_values, v->init, 0), NULL);
    }
}

static void diff_types(builder *bd)
{
    const gl_graph *a = bd->after;
    for (size_t i = 0; i < a->n_values; i++) {
        const gl_value *v = a->values[i];
        if (!v || bd->type_reported[i])
            continue;
        const gl_value *old = gl_find_value(bd->before, v->name);
        if (old && !type_equal(&old->type, &v->type)) {
            char *ot, *nt;
            render_pair(render_type, DETAIL_EXACT, &old->type, &v->type, &ot, &nt);
            append_value_change(bd, GL_VALUE_TYPE_CHANGED, v->name, ot, nt);
        }
    }
}

/* ---- the id index for the finds ------------------------------------------------------- */

typedef struct id_entry {
    uint32_t id;
    size_t change;
} id_entry;

struct gl_diff_index {
    id_entry *by_new, *by_old;
    size_t n_new, n_old;
};

static int cmp_id_entry(const void *x, const void *y)
{
    const id_entry *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

static void build_index(gl_diff *d)
{
    struct gl_diff_index *ix = gl_xcalloc(1, sizeof(*ix));
    size_t n_new = 0, n_old = 0;
    for (size_t c = 0; c < d->n_nodes; c++) {
        n_new += d->nodes[c].n_new;
        n_old += d->nodes[c].n_old;
    }
    ix->by_new = gl_xmalloc((n_new + 1) * sizeof(id_entry));
    ix->by_old = gl_xmalloc((n_old + 1) * sizeof(id_entry));
    for (size_t c = 0; c < d->n_nodes; c++) {
        for (size_t i = 0; i < d->nodes[c].n_new; i++)
            ix->by_new[ix->n_new++] = (id_entry){d->nodes[c].new_ids[i], c};
        for (size_t i = 0; i < d->nodes[c].n_old; i++)
            ix->by_old[ix->n_old++] = (id_entry){d->nodes[c].old_ids[i], c};
    }
    qsort(ix->by_new, ix->n_new, sizeof(id_entry), cmp_id_entry);
    qsort(ix->by_old, ix->n_old, sizeof(id_entry), cmp_id_entry);
    d->index = ix;
}

gl_diff *gl_diff_graphs(const gl_graph *before, const gl_graph *after, gl_diff_mode mode)
{
    if (!before || !after)
        return NULL;
    builder bd = {
        .d = gl_xcalloc(1, sizeof(gl_diff)),
        .before = before,
        .after = after,
        .mode = mode,
        .match = gl_xcalloc(after->n_nodes + 1, sizeof(const gl_node *)),
        .old_matched = gl_xcalloc(before->n_nodes + 1, sizeof(bool)),
        .type_reported = gl_xcalloc(after->n_values + 1, sizeof(bool)),
    };
    if (mode == GL_DIFF_MATCH_NAMES)
        match_by_names(&bd);
    else
        match_by_ids(&bd);
    diff_nodes(&bd);
    diff_interface(&bd);
    diff_inits(&bd); /* before diff_types: a changed initializer tells its own type */
    diff_types(&bd);
    build_index(bd.d);
    free(bd.match);
    free(bd.old_matched);
    free(bd.type_reported);
    free(bd.details.items);
    return bd.d;
}

/* ==== queries and freeing ============================================================ */

static void free_side(uint32_t *ids, char **names, char **ops, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(names[i]);
        free(ops[i]);
    }
    free(ids);
    free(names);
    free(ops);
}

void gl_diff_free(gl_diff *d)
{
    if (!d)
        return;
    for (size_t c = 0; c < d->n_nodes; c++) {
        gl_node_change *nc = &d->nodes[c];
        free_side(nc->old_ids, nc->old_names, nc->old_ops, nc->n_old);
        free_side(nc->new_ids, nc->new_names, nc->new_ops, nc->n_new);
        for (size_t i = 0; i < nc->n_details; i++) {
            free(nc->details[i].what);
            free(nc->details[i].old_text);
            free(nc->details[i].new_text);
        }
        free(nc->details);
    }
    free(d->nodes);
    for (size_t v = 0; v < d->n_values; v++) {
        free(d->values[v].name);
        free(d->values[v].old_text);
        free(d->values[v].new_text);
    }
    free(d->values);
    if (d->index) {
        free(d->index->by_new);
        free(d->index->by_old);
        free(d->index);
    }
    free(d);
}

bool gl_diff_empty(const gl_diff *d)
{
    return !d || (d->n_nodes == 0 && d->n_values == 0);
}

static const gl_node_change *find_id(const gl_diff *d, uint32_t id, bool new_side)
{
    if (!d)
        return NULL;
    if (d->index) {
        const id_entry *v = new_side ? d->index->by_new : d->index->by_old;
        size_t n = new_side ? d->index->n_new : d->index->n_old;
        id_entry key = {id, 0};
        const id_entry *hit = n ? bsearch(&key, v, n, sizeof(*v), cmp_id_entry) : NULL;
        return hit ? &d->nodes[hit->change] : NULL;
    }
    for (size_t c = 0; c < d->n_nodes; c++) {
        const gl_node_change *nc = &d->nodes[c];
        const uint32_t *ids = new_side ? nc->new_ids : nc->old_ids;
        size_t n = new_side ? nc->n_new : nc->n_old;
        for (size_t i = 0; i < n; i++)
            if (ids[i] == id)
                return nc;
    }
    return NULL;
}

const gl_node_change *gl_diff_find_new(const gl_diff *d, uint32_t id)
{
    return find_id(d, id, true);
}

const gl_node_change *gl_diff_find_old(const gl_diff *d, uint32_t id)
{
    return find_id(d, id, false);
}

/* ==== text =========================================================================== */

/* "Conv 'c1' + Relu 'r1'" */
static void sb_node_list(gl_strbuf *b, char *const *ops, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            gl_sb_printf(b, " + ");
        sb_str(b, ops && ops[i] ? ops[i] : "?", 0);
        gl_sb_putc(b, ' ');
        sb_str(b, names ? names[i] : "", '\'');
    }
}

/* A value name, or "(none)" for an omitted input/output. */
static void sb_slot_value(gl_strbuf *b, const char *name)
{
    if (name && name[0])
        sb_str(b, name, '\'');
    else
        gl_sb_printf(b, "(none)");
}

/* Texts are never NULL in a diff we built; one made by hand may leave them out. */
static const char *text_or_empty(const char *s) { return s ? s : ""; }

static void sb_detail(gl_strbuf *b, const gl_change_detail *x)
{
    gl_sb_printf(b, "    ");
    switch (x->kind) {
    case GL_DETAIL_RENAMED:
        gl_sb_printf(b, "name: ");
        sb_str(b, x->old_text, '\'');
        gl_sb_printf(b, " -> ");
        sb_str(b, x->new_text, '\'');
        break;
    case GL_DETAIL_OP:
        gl_sb_printf(b, "op: ");
        sb_str(b, x->old_text, 0);
        gl_sb_printf(b, " -> ");
        sb_str(b, x->new_text, 0);
        break;
    case GL_DETAIL_ATTR_ADDED:
    case GL_DETAIL_ATTR_REMOVED:
        gl_sb_printf(b, "attr %c ", x->kind == GL_DETAIL_ATTR_ADDED ? '+' : '-');
        sb_str(b, x->what, 0);
        gl_sb_printf(b, ": %s",
                     text_or_empty(x->kind == GL_DETAIL_ATTR_ADDED ? x->new_text : x->old_text));
        break;
    case GL_DETAIL_ATTR_CHANGED:
        gl_sb_printf(b, "attr ");
        sb_str(b, x->what, 0);
        gl_sb_printf(b, ": %s -> %s", text_or_empty(x->old_text), text_or_empty(x->new_text));
        break;
    case GL_DETAIL_INPUT:
    case GL_DETAIL_OUTPUT:
        gl_sb_printf(b, "%s: ", text_or_empty(x->what));
        sb_slot_value(b, x->old_text);
        gl_sb_printf(b, " -> ");
        sb_slot_value(b, x->new_text);
        break;
    case GL_DETAIL_OUTPUT_TYPE:
        gl_sb_printf(b, "type ");
        sb_str(b, x->what, '\'');
        gl_sb_printf(b, ": %s -> %s", text_or_empty(x->old_text), text_or_empty(x->new_text));
        break;
    }
    gl_sb_putc(b, '\n');
}

static void sb_node_change(gl_strbuf *b, const gl_node_change *c)
{
    switch (c->kind) {
    case GL_CHANGE_ADDED:
        gl_sb_printf(b, "+ ");
        sb_node_list(b, c->new_ops, c->new_names, c->n_new);
        break;
    case GL_CHANGE_REMOVED:
        gl_sb_printf(b, "- ");
        sb_node_list(b, c->old_ops, c->old_names, c->n_old);
        break;
    case GL_CHANGE_REPLACED:
        gl_sb_printf(b, "> ");
        sb_node_list(b, c->old_ops, c->old_names, c->n_old);
        gl_sb_printf(b, "  =>  ");
        sb_node_list(b, c->new_ops, c->new_names, c->n_new);
        break;
    case GL_CHANGE_MODIFIED:
        gl_sb_printf(b, "~ ");
        sb_node_list(b, c->new_ops, c->new_names, c->n_new);
        break;
    }
    if (c->decision >= 0)
        gl_sb_printf(b, "   [decision #%" PRId64 "]", c->decision);
    gl_sb_putc(b, '\n');
    for (size_t i = 0; i < c->n_details; i++)
        sb_detail(b, &c->details[i]);
}

static const char *nonempty(const char *s) { return s && s[0] ? s : "(none)"; }

static void sb_value_change(gl_strbuf *b, const gl_value_change *v)
{
    switch (v->kind) {
    case GL_VALUE_TYPE_CHANGED:
    case GL_INIT_CHANGED:
        gl_sb_printf(b, "= %s ", v->kind == GL_INIT_CHANGED ? "init" : "value");
        sb_str(b, v->name, '\'');
        gl_sb_printf(b, ": %s -> %s", text_or_empty(v->old_text), text_or_empty(v->new_text));
        break;
    case GL_INIT_ADDED:
    case GL_INIT_REMOVED:
        gl_sb_printf(b, "%c init ", v->kind == GL_INIT_ADDED ? '+' : '-');
        sb_str(b, v->name, '\'');
        gl_sb_printf(b, ": %s",
                     text_or_empty(v->kind == GL_INIT_ADDED ? v->new_text : v->old_text));
        break;
    case GL_GRAPH_INPUT_CHANGED:
    case GL_GRAPH_OUTPUT_CHANGED:
        gl_sb_printf(b, "= graph %s: ", v->kind == GL_GRAPH_INPUT_CHANGED ? "inputs" : "outputs");
        sb_str(b, nonempty(v->old_text), 0);
        gl_sb_printf(b, " -> ");
        sb_str(b, nonempty(v->new_text), 0);
        break;
    }
    gl_sb_putc(b, '\n');
}

size_t gl_diff_text_entries(const gl_diff *d)
{
    return gl_diff_empty(d) ? 1 : 1 + d->n_nodes + d->n_values;
}

size_t gl_diff_text_entry_lines(const gl_diff *d, size_t e)
{
    if (e == 0 || gl_diff_empty(d))
        return 1;
    return e <= d->n_nodes ? 1 + d->nodes[e - 1].n_details : 1;
}

void gl_diff_text_entry(const gl_diff *d, size_t e, gl_strbuf *b)
{
    if (gl_diff_empty(d))
        gl_sb_puts(b, "no changes\n");
    else if (e == 0)
        gl_sb_printf(b, "%zu added, %zu removed, %zu replaced, %zu modified, %zu value changes\n",
                     d->n_added, d->n_removed, d->n_replaced, d->n_modified, d->n_values);
    else if (e <= d->n_nodes)
        sb_node_change(b, &d->nodes[e - 1]);
    else if (e - d->n_nodes <= d->n_values)
        sb_value_change(b, &d->values[e - 1 - d->n_nodes]);
}

void gl_diff_write_text(const gl_diff *d, FILE *f)
{
    /* One buffer per entry keeps stdio calls few on 20k-line diffs. */
    gl_strbuf b = {0};
    for (size_t e = 0, n = gl_diff_text_entries(d); e < n; e++) {
        b.len = 0;
        gl_diff_text_entry(d, e, &b);
        fwrite(b.s, 1, b.len, f);
    }
    free(b.s);
}
