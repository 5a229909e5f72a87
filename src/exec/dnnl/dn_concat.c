/* dn_concat.c — channel Concats written in place (issue 22).
 *
 * In DenseNet every layer reads Concat(block input, new features of layers 1..k): copying
 * them was a fifth of the run. Here the producers of a Concat's inputs write straight into
 * their channel slice of one buffer, and the Concat's output is that buffer's first
 * channels: no copy. A block's concats share their inputs (the features of layer j are in
 * every later concat of the block), so one block-wide buffer — a family — holds them all,
 * each concat a range of it.
 *
 * When (the check, from the IR alone, at the plan's creation; nothing is decided at a
 * run): a Concat of the default domain along axis 1 of float32 [1,C_i,H,W] of static
 * shapes, every C_i a multiple of the plan's channel block (16 or 8), each input made by
 * a node of the graph (not a graph input, a constant or another Concat) and read once by
 * it. Then in oneDNN's blocked nChw16c a tensor of batch 1 whose channels start and end on
 * a block boundary is a dense tensor of its own at an offset of the buffer: producers and
 * readers keep their jit kernels. (In nhwc a channel slice is strided rows, on which
 * oneDNN 2.6 runs its reference convolution; with batch > 1 the slice is strided too.)
 * A Concat that shares an input with a family joins it when its inputs fall at the same
 * places; the ranges of different values never overlap, so a write never touches a range
 * a concat already read.
 *
 * How (the apply, at each run, trusting the plan only as far as it checks): the family's
 * first producer in the executor's order (the opener) takes the buffer for this run from
 * the family's slot; every producer of a placed value whose primitive writes the planned
 * descriptor gets its slice (dn_place_lend); the Concat finds every input at its place
 * (pointers and layouts compared) and outputs its range, or copies as before when one is
 * not there (a producer on the reference kernel, another layout). The plan says which.
 */
#include "exec/dnnl/dn_opkit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The refusal of a Concat, for the plan's note. */
#define WHY_LEN 112

typedef struct dn_place {
    int family;
    int64_t channel, channels; /* the value's range of the family's channels */
    dnnl_memory_desc_t md;     /* as its producer must write it */
    const gl_tensor_layout *layout; /* md's interned layout (found at the first check) */
} dn_place;

typedef struct dn_family {
    int64_t channels, h, w;    /* the buffer: [1, channels, h, w] in the blocked layout */
    const gl_value *opener;    /* the placed value the executor makes first */
    size_t opener_step;
    gl_buffer_slot slot;       /* the buffer between runs */
    gl_buffer *cur;            /* this run's (one reference), NULL: not open */
} dn_family;

typedef struct dn_cat {
    int family;                /* -1: copies (why) */
    int64_t channel, channels; /* its output's range */
    const gl_tensor_layout *layout; /* its output's (found at the first run in place) */
    char why[WHY_LEN];
} dn_cat;

struct dn_places {
    const gl_graph *graph;
    dn_place *place;           /* per value index; family -1: none */
    dn_cat *cat;               /* per node index (Concats only are filled) */
    dn_family *fam;
    size_t n_fam, cap_fam;
    size_t eligible;           /* Concats the plan writes in place */
};

/* ---- the check ----------------------------------------------------------------------- */

/* v is float32 [1, C, h, w] with static dims (*c its channels). */
static bool batch1_4d(const gl_value *v, int64_t h, int64_t w, int64_t *c)
{
    if (!v || v->type.kind != GL_TYPE_TENSOR || v->type.dtype != GL_DT_FLOAT ||
        v->type.shape.rank != 4)
        return false;
    const gl_dim *d = v->type.shape.dims;
    *c = d[1].value;
    return d[0].value == 1 && d[1].value > 0 && d[2].value == h && d[3].value == w;
}

/* Why Concat n cannot be written in place ("": no channel Concat of rank 4, nothing to
 * say), or NULL (the input channels in ch[]). */
static const char *concat_refusal(const dn_ctx *c, const gl_graph *g, const gl_node *n,
                                  int64_t *ch, char *why)
{
    const gl_value *out = n->n_outputs ? n->outputs[0] : NULL;
    if (*n->domain || !out || out->type.kind != GL_TYPE_TENSOR || out->type.shape.rank != 4)
        return "";
    if (gl_node_attr_int(n, "axis", 0) != 1 && gl_node_attr_int(n, "axis", 0) != -3)
        return "";
    const gl_dim *od = out->type.shape.dims;
    for (size_t i = 0; i < n->n_inputs; i++) {
        const gl_value *v = n->inputs[i];
        if (!batch1_4d(v, od[2].value, od[3].value, &ch[i]) || od[2].value <= 0 ||
            od[3].value <= 0)
            return "inputs not float32 [1,C,H,W] of static shapes (batch > 1: strided slices)";
        if (ch[i] % c->block) {
            snprintf(why, WHY_LEN, "input %.32s: %lld channels, not a multiple of the "
                     "block (%d)", v->name, (long long)ch[i], c->block);
            return why;
        }
        if (!v->producer || v->producer->graph != g || gl_node_is(v->producer, "Concat")) {
            snprintf(why, WHY_LEN, "input '%.40s' is not made by a node that can write it "
                     "in place", v->name);
            return why;
        }
        for (size_t j = 0; j < i; j++)
            if (n->inputs[j] == v)
                return "an input read twice";
    }
    return NULL;
}

static dn_family *new_family(dn_places *p)
{
    GL_GROW(p->fam, p->cap_fam, p->n_fam + 1);
    dn_family *f = &p->fam[p->n_fam++];
    memset(f, 0, sizeof(*f));
    return f;
}

/* Does [a, a+n) overlap a range of another value of family f? */
static bool overlaps(const dn_places *p, int f, const gl_value *self, int64_t a, int64_t n)
{
    for (size_t i = 0; i < p->graph->n_values; i++) {
        const dn_place *q = &p->place[i];
        if (q->family == f && p->graph->values[i] != self && a < q->channel + q->channels &&
            q->channel < a + n)
            return true;
    }
    return false;
}

/* Join Concat n (inputs of ch[] channels) to the family of an input already placed, or
 * to a new one; false (why) when its inputs cannot all sit at consistent places. */
static bool join(dn_ctx *c, dn_places *p, const gl_node *n, const int64_t *ch, char *why)
{
    int f = -1;
    int64_t base = 0, at = 0;
    for (size_t i = 0; i < n->n_inputs; at += ch[i], i++) {
        const dn_place *q = &p->place[n->inputs[i]->index];
        if (q->family < 0)
            continue;
        if (f >= 0 && (q->family != f || q->channel != base + at)) {
            snprintf(why, WHY_LEN, "input '%.40s' sits elsewhere for another Concat",
                     n->inputs[i]->name);
            return false;
        }
        f = q->family;
        base = q->channel - at;
    }
    if (base < 0) {
        snprintf(why, WHY_LEN, "its inputs' places leave no room before its first");
        return false;
    }
    at = 0;
    for (size_t i = 0; f >= 0 && i < n->n_inputs; at += ch[i], i++)
        if (p->place[n->inputs[i]->index].family < 0 &&
            overlaps(p, f, n->inputs[i], base + at, ch[i])) {
            snprintf(why, WHY_LEN, "input '%.40s' would overlap another's place",
                     n->inputs[i]->name);
            return false;
        }
    if (f < 0) {
        new_family(p);
        f = (int)p->n_fam - 1;
    }
    dn_family *fam = &p->fam[f];
    const gl_dim *od = n->outputs[0]->type.shape.dims;
    fam->h = od[2].value;
    fam->w = od[3].value;
    at = 0;
    for (size_t i = 0; i < n->n_inputs; at += ch[i], i++) {
        dn_place *q = &p->place[n->inputs[i]->index];
        if (q->family >= 0)
            continue;
        int64_t dims[4] = {1, ch[i], fam->h, fam->w};
        q->family = f;
        q->channel = base + at;
        q->channels = ch[i];
        dn_md_tag(&q->md, 4, dims, dn_act_tag(c, 4));
    }
    if (base + at > fam->channels)
        fam->channels = base + at;
    dn_cat *k = &p->cat[n->index];
    k->family = f;
    k->channel = base;
    k->channels = at;
    return true;
}

/* Each family's opener: its value whose producer comes first in the executor's order. */
static void find_openers(dn_places *p)
{
    const gl_node **order = NULL;
    size_t count = 0;
    if (gl_exec_order(p->graph, &order, &count) != GL_OK) {
        gl_error_clear();
        p->n_fam = 0; /* no order: no family (the run will say why) */
        return;
    }
    for (size_t f = 0; f < p->n_fam; f++)
        p->fam[f].opener_step = SIZE_MAX;
    for (size_t s = 0; s < count; s++)
        for (size_t o = 0; o < order[s]->n_outputs; o++) {
            const gl_value *v = order[s]->outputs[o];
            int f = v ? p->place[v->index].family : -1;
            if (f >= 0 && p->fam[f].opener_step == SIZE_MAX) {
                p->fam[f].opener = v;
                p->fam[f].opener_step = s;
            }
        }
    free(order);
}

static bool has_concat(const gl_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] && gl_node_is(g->nodes[i], "Concat"))
            return true;
    return false;
}

size_t dn_places_plan(dn_ctx *c, const gl_model *m)
{
    const gl_graph *g = m->graph;
    /* No Concat, no places: the tables below cost ~870 bytes per value and node (a
     * descriptor each), 87 MB for a 100k-node chain (issue 23). */
    if (!has_concat(g))
        return 0;
    dn_places *p = gl_xcalloc(1, sizeof(*p));
    p->graph = g;
    p->place = gl_xcalloc(g->n_values ? g->n_values : 1, sizeof(*p->place));
    p->cat = gl_xcalloc(g->n_nodes ? g->n_nodes : 1, sizeof(*p->cat));
    for (size_t i = 0; i < g->n_values; i++)
        p->place[i].family = -1;
    for (size_t i = 0; i < g->n_nodes; i++)
        p->cat[i].family = -1;
    c->places = p;
    int64_t *ch = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gl_node *n = g->nodes[i];
        if (!n || !gl_node_is(n, "Concat"))
            continue;
        GL_GROW(ch, cap, n->n_inputs + 1);
        char *why = p->cat[i].why;
        const char *refusal = concat_refusal(c, g, n, ch, why);
        if (refusal) {
            if (refusal != why)
                snprintf(why, WHY_LEN, "%s", refusal);
            continue;
        }
        p->eligible += join(c, p, n, ch, why);
    }
    free(ch);
    find_openers(p);
    return p->eligible;
}

void dn_places_disable(dn_ctx *c, const char *why)
{
    dn_places *p = c->places;
    if (!p)
        return;
    for (size_t i = 0; i < p->graph->n_nodes; i++)
        if (p->cat[i].family >= 0) { /* the others keep their own reason */
            p->cat[i].family = -1;
            snprintf(p->cat[i].why, WHY_LEN, "%s", why);
        }
    for (size_t i = 0; i < p->graph->n_values; i++)
        p->place[i].family = -1;
    p->n_fam = 0;
    p->eligible = 0;
}

void dn_places_free(dn_ctx *c)
{
    dn_places *p = c->places;
    if (!p)
        return;
    for (size_t f = 0; f < p->n_fam; f++) {
        gl_buffer_unref(p->fam[f].cur);
        gl_buffer_slot_clear(&p->fam[f].slot);
    }
    free(p->fam);
    free(p->place);
    free(p->cat);
    free(p);
    c->places = NULL;
}

void dn_places_scratch(const dn_ctx *c, gl_scratch_fn fn, void *arg)
{
    const dn_places *p = c->places;
    for (size_t f = 0; p && f < p->n_fam; f++) {
        const gl_buffer *cur = p->fam[f].cur;
        if (cur && __atomic_load_n(&cur->refs, __ATOMIC_ACQUIRE) == 1)
            fn(arg, cur->data, cur->size);
        gl_scratch_slot(&p->fam[f].slot, fn, arg);
    }
}

/* ---- the apply ------------------------------------------------------------------------- */

static dn_place *place_of(const dn_places *p, const gl_value *v)
{
    if (!p || !v || v->graph != p->graph || v->index >= p->graph->n_values ||
        p->graph->values[v->index] != v)
        return NULL;
    dn_place *q = &p->place[v->index];
    return q->family >= 0 ? q : NULL;
}

static size_t channel_bytes(const dn_family *f)
{
    return (size_t)(f->h * f->w) * sizeof(float);
}

gl_buffer *dn_place_lend(dn_ctx *c, const gl_value *v, const dnnl_memory_desc_t *md,
                         size_t bytes)
{
    const dn_place *q = place_of(c->places, v);
    if (!q)
        return NULL;
    dn_family *f = &c->places->fam[q->family];
    bool fits = dnnl_memory_desc_equal(md, &q->md) && bytes == (size_t)q->channels *
                                                                   channel_bytes(f);
    if (v == f->opener) { /* a new run: the buffer no tensor of the last one holds */
        gl_buffer_unref(f->cur);
        f->cur = fits ? gl_buffer_from_slot(&f->slot, (size_t)f->channels * channel_bytes(f),
                                            false)
                      : NULL;
        if (!f->cur)
            gl_error_clear();
    }
    if (!fits || !f->cur)
        return NULL;
    return gl_buffer_new_view(f->cur, (char *)f->cur->data + q->channel * channel_bytes(f),
                              bytes);
}

/* Is input t of a Concat at its place in the family's buffer of this run? */
static bool at_place(dn_ctx *c, const dn_family *f, dn_place *q, const gl_tensor *t)
{
    if (!q->layout) /* interned once: a search of the plan's layouts per input costs */
        q->layout = dn_layout_of(c, &q->md);
    return t && t->buf && f->cur &&
           t->buf->data == (char *)f->cur->data + q->channel * channel_bytes(f) &&
           t->layout == q->layout;
}

static void set_note(dn_ctx *c, dn_node *s, const char *impl, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_note(dn_ctx *c, dn_node *s, const char *impl, const char *fmt, ...)
{
    const char *note = s->note;
    va_list ap;
    va_start(ap, fmt);
    dn_set_notev(c, s, fmt, ap);
    va_end(ap);
    if (strcmp(s->note, note) == 0 && (!impl || strcmp(impl, s->impl) == 0))
        return;
    if (impl)
        dn_set_impl(c, s, "%s", impl);
    s->generation++; /* describe's cue */
}

bool dn_concat_in_place(dn_ctx *c, gl_kernel_ctx *k, dn_node *s)
{
    dn_places *p = c->places;
    const gl_node *n = k->node;
    if (!p || n->graph != p->graph || n->index >= p->graph->n_nodes ||
        p->graph->nodes[n->index] != n)
        return false;
    dn_cat *cat = &p->cat[n->index];
    if (cat->family < 0) {
        if (cat->why[0] && !strstr(s->note, "not in place")) /* after the build's note */
            set_note(c, s, NULL, "%.80s%snot in place: %.100s", s->note, s->note[0] ? "; " : "",
                     cat->why);
        return false;
    }
    const dn_family *f = &p->fam[cat->family];
    for (size_t i = 0; i < k->n_inputs; i++) {
        dn_place *q = place_of(p, n->inputs[i]);
        if (!q || !at_place(c, f, q, k->in[i])) {
            set_note(c, s, NULL, "not in place: input %zu was not written at its place (its "
                     "producer runs another way)", i);
            return false;
        }
    }
    int64_t dims[4] = {1, cat->channels, f->h, f->w};
    dnnl_memory_desc_t md;
    if (!cat->layout && dn_md_tag(&md, 4, dims, dn_act_tag(c, 4)) == dnnl_success)
        cat->layout = dn_layout_of(c, &md);
    if (!cat->layout)
        return false;
    size_t bytes = (size_t)cat->channels * channel_bytes(f);
    gl_buffer *view = gl_buffer_new_view(
        f->cur, (char *)f->cur->data + cat->channel * channel_bytes(f), bytes);
    gl_tensor *t = gl_tensor_wrap(GL_DT_FLOAT, 4, dims, cat->channels * f->h * f->w, view);
    t->layout = cat->layout;
    gl_tensor_free(k->out[0]);
    k->out[0] = t;
    set_note(c, s, "in place", "no copy: its inputs' producers wrote channels %lld..%lld of "
             "one buffer of %lld (batch 1, %s)", (long long)cat->channel,
             (long long)(cat->channel + cat->channels), (long long)f->channels,
             ((const dn_layout *)t->layout)->name);
    return true;
}
