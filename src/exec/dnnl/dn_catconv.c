/* dn_catconv.c — a fused group [Concat along the channels, 1x1 Conv, activations]
 * (fusion rule concat-conv1x1) as one 1x1 convolution per Concat input, all writing one
 * destination: W·concat(x0, x1, ...) = W0·x0 + W1·x1 + ..., where Wj are the weights'
 * input-channel columns of xj. Part 0 adds the bias and writes the destination; each
 * later part adds itself with oneDNN's sum post-op; the last one applies the group's
 * activations as eltwise post-ops. The Concat's copy of its inputs (squeezenet's Fire
 * modules: 0.4 ms of 3.4) is gone; each further part re-reads the destination, which the
 * rule keeps narrower than the Concat (fusion.c, check_split).
 *
 * Each part is a dn_node built by dn_conv.c's Conv on a stand-in node reading [xj, Wj,
 * bias for part 0]: the column slices Wj are made at build from the constant weights and
 * reordered once, as any constant; the shape guard and input conversions are dn_node.c's.
 * Parts after the first write into the tensor part 0 made (dn_out.into). A unit whose
 * parts oneDNN would not run alike (a refusal, another destination layout) is left to
 * the executor at claim time, or runs its members at run time (dn_fused_run_members).
 */
#include "exec/dnnl/dn_opkit.h"
#include "ir/calls.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX
#define CAT_MAX_PARTS DN_CAT_MAX_PARTS
#define CAT_MAX_ACTS 4
#define CAT_MAX_POSTS (2 * CAT_MAX_ACTS)
/* The call's inputs: the parts, weights, bias, activation parameters. */
#define CAT_MAX_INPUTS (CAT_MAX_PARTS + 2 + 2 * CAT_MAX_ACTS)

typedef struct cat_unit cat_unit;

typedef struct cat_part {
    dn_node node;             /* first: part 0's is what the backend reads as the state */
    cat_unit *unit;
    size_t index;
    size_t input;             /* the call's input this part convolves */
    gl_node synth;            /* the Conv reading vals[] */
    gl_value *vals[3];        /* xj, the weights slice, the bias (part 0) */
    gl_value wval;            /* the slice as a constant value (init: the slice) */
    char wname[48]; /* "weights of part N", any size_t N */
    dn_tail tail;
} cat_part;

struct cat_unit {
    cat_part part[CAT_MAX_PARTS]; /* first: part[0].node */
    size_t n_parts;
    const gl_node *call, *concat, *conv;
    const dn_op *conv_op;
    int64_t opset;
    size_t w_input, b_input;  /* the call's inputs of the weights and the bias (NONE) */
    const gl_node *acts[CAT_MAX_ACTS];
    size_t n_acts;
    dn_post posts[CAT_MAX_POSTS];
    size_t n_posts;
    /* A post-op turns a NaN or an infinity into a number (dn_special.c): a run whose
     * inputs hold one runs the members instead. An activation may make one out of finite
     * values: the unit vouches for nothing. */
    bool drops_specials, makes_specials;
    dn_special_check call_specials; /* the call's constants */
};

static gl_status part_build(dn_build *b, dnnl_primitive_desc_t *pd);
static const dn_op unit_op = {"", "(concat-conv group)", 1, NULL, part_build, NULL};
static const dn_op part_op = {"", "(concat-conv part)", 1, NULL, part_build, NULL};

bool dn_catconv_state(const void *state)
{
    return state && ((const dn_node *)state)->op == &unit_op;
}

static void unit_free(cat_unit *u)
{
    if (!u)
        return;
    for (size_t j = 0; j < u->n_parts; j++) {
        dn_node_clear(&u->part[j].node);
        gl_tensor_free(u->part[j].wval.init);
    }
    free(u);
}

void dn_catconv_release(void *state)
{
    unit_free(state);
}

/* ---- the body --------------------------------------------------------------------------- */

/* The call's input in the place of body value v (NONE: not a body input). */
static size_t call_input(const gl_function *fn, const gl_node *call, const gl_value *v)
{
    for (size_t i = 0; v && i < fn->body->n_inputs && i < call->n_inputs; i++)
        if (fn->body->inputs[i] == v)
            return call->inputs[i] ? i : NONE;
    return NONE;
}

/* v is read once, by n alone, as its input 0, and is no output of the body. */
static bool read_once_by(const gl_value *v, const gl_node *n)
{
    if (!v || v->n_uses != 1 || v->n_output_refs || !n->n_inputs || n->inputs[0] != v)
        return false;
    for (size_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] == v)
            return false;
    return true;
}

/* Is the body a Concat along the channels, a 1x1 Conv of it, activations? (no message:
 * dn_fused.c's own parse speaks for bodies that are not) */
bool dn_catconv_is(const gl_function *fn)
{
    const gl_graph *b = fn ? fn->body : NULL;
    return b && b->n_nodes >= 2 && b->nodes[0] && b->nodes[1] &&
           gl_node_is(b->nodes[0], "Concat") &&
           gl_node_is(b->nodes[1], "Conv");
}

static cat_unit *unit_new(const gl_model *m, const gl_node *call, const gl_function *fn,
                          char *why, size_t len)
{
    const gl_graph *body = fn->body;
    const gl_node *cat = body->nodes[0], *conv = body->nodes[1];
    int64_t axis = gl_node_attr_int(cat, "axis", 0);
    if (axis != 1 && axis != -3) {
        snprintf(why, len, "Concat '%s' joins axis %lld, not the channels", cat->name,
                 (long long)axis);
        return NULL;
    }
    if (cat->n_inputs < 2 || cat->n_inputs > CAT_MAX_PARTS || call->n_outputs != 1 ||
        body->n_outputs != 1 || !cat->n_outputs || !read_once_by(cat->outputs[0], conv)) {
        snprintf(why, len, "Concat '%s' of %zu inputs is not read by Conv '%s' alone (at most "
                 "%d inputs)", cat->name, cat->n_inputs, conv->name, CAT_MAX_PARTS);
        return NULL;
    }
    cat_unit *u = gl_xcalloc(1, sizeof(*u));
    u->call = call;
    u->concat = cat;
    u->conv = conv;
    u->opset = gl_scope_opset(m, fn, "");
    u->conv_op = dn_op_find("", "Conv", u->opset);
    u->n_parts = cat->n_inputs;
    u->w_input = conv->n_inputs > 1 ? call_input(fn, call, conv->inputs[1]) : NONE;
    u->b_input = conv->n_inputs > 2 ? call_input(fn, call, conv->inputs[2]) : NONE;
    const gl_value *w = u->w_input != NONE ? call->inputs[u->w_input] : NULL;
    bool ok = u->conv_op && w && w->init && gl_value_is_constant(w) && w->init->rank == 4 &&
              w->init->dtype == GL_DT_FLOAT && w->init->dims[2] == 1 && w->init->dims[3] == 1 &&
              gl_node_attr_int(conv, "group", 1) == 1 && conv->n_outputs == 1 &&
              (conv->n_inputs < 3 || !conv->inputs[2] || u->b_input != NONE);
    if (!ok)
        snprintf(why, len, "Conv '%s' is not a 1x1 convolution of group 1 with constant "
                 "float32 weights", conv->name);
    for (size_t j = 0; j < u->n_parts && ok; j++) {
        cat_part *p = &u->part[j];
        p->unit = u;
        p->index = j;
        dn_node_init(&p->node, j ? &part_op : &unit_op);
        p->input = call_input(fn, call, cat->inputs[j]);
        if (p->input == NONE) {
            snprintf(why, len, "Concat '%s' reads a value the group makes itself", cat->name);
            ok = false;
            break;
        }
        snprintf(p->wname, sizeof(p->wname), "weights of part %zu", j);
        p->wval.name = p->wname;
        p->vals[0] = call->inputs[p->input];
        p->vals[1] = &p->wval;
        p->vals[2] = j == 0 && u->b_input != NONE ? call->inputs[u->b_input] : NULL;
        p->synth = *conv;
        p->synth.inputs = p->vals;
        p->synth.n_inputs = p->synth.cap_inputs = 3;
        p->synth.outputs = call->outputs;
        p->synth.n_outputs = 1;
    }
    /* The activations: each reads the previous member once; parameters constant. */
    const gl_value *prev = conv->outputs[0];
    for (size_t i = 2; i < body->n_nodes && ok; i++) {
        const gl_node *n = body->nodes[i];
        const gl_tensor *args[3] = {NULL, NULL, NULL};
        bool fixed[3] = {true, true, true};
        const char *w_why = NULL;
        size_t n_post = 0;
        ok = n && u->n_acts < CAT_MAX_ACTS && n->n_inputs <= 3 && n->n_outputs >= 1 &&
             read_once_by(prev, n);
        for (size_t a = 1; ok && a < n->n_inputs; a++) {
            size_t ci = n->inputs[a] ? call_input(fn, call, n->inputs[a]) : NONE;
            const gl_value *v = ci != NONE ? call->inputs[ci] : NULL;
            ok = !n->inputs[a] || (v && v->init && gl_value_is_constant(v));
            args[a] = v ? v->init : NULL;
        }
        ok = ok && u->n_posts + 2 <= CAT_MAX_POSTS &&
             dn_eltwise_posts(n, u->opset, args, fixed, n->n_inputs, u->posts + u->n_posts,
                              &n_post, &w_why);
        if (!ok) {
            snprintf(why, len, "member '%s' (%s) is no eltwise post-op with constant "
                     "parameters%s%s", n ? n->name : "?", n ? n->op_type : "?",
                     w_why ? ": " : "", w_why ? w_why : "");
            break;
        }
        u->n_posts += n_post;
        u->acts[u->n_acts++] = n;
        prev = n->outputs[0];
    }
    if (ok && body->outputs[0] != prev) {
        snprintf(why, len, "the group's output is not its last member's");
        ok = false;
    }
    for (size_t i = 0; i < u->n_posts; i++)
        u->drops_specials = u->drops_specials || dn_post_drops_specials(&u->posts[i]);
    for (size_t i = 0; i < u->n_acts; i++)
        u->makes_specials = u->makes_specials || dn_node_makes_specials(u->acts[i]);
    if (ok && u->drops_specials && u->makes_specials) {
        /* (Log, then Relu...): the activation's NaN would be dropped unseen */
        snprintf(why, len, "an activation may make a NaN out of finite values, and one "
                 "would turn it into a number");
        ok = false;
    }
    if (!ok) {
        unit_free(u);
        return NULL;
    }
    return u;
}

/* ---- building ------------------------------------------------------------------------- */

/* Part j's weights: the columns of W its input's channels take (c of them from `off`). */
static gl_status make_slice(cat_part *p, const gl_tensor *w, int64_t off, int64_t c,
                            const char *where)
{
    gl_tensor *s = p->wval.init;
    int64_t oc = w->dims[0], ic = w->dims[1];
    if (s && s->dims[1] == c && s->dims[0] == oc)
        return GL_OK; /* made by an earlier build of these shapes */
    gl_tensor_free(s);
    int64_t dims[4] = {oc, c, 1, 1};
    p->wval.init = s = gl_tensor_new(GL_DT_FLOAT, 4, dims);
    if (!s)
        return gl_error_prefix("%s: the weights of Concat input %zu", where, p->index),
               GL_ERR_NOMEM;
    const float *src = gl_tensor_data(w);
    float *dst = (float *)s->buf->data;
    for (int64_t o = 0; o < oc; o++)
        memcpy(dst + o * c, src + o * ic + off, (size_t)c * sizeof(float));
    return GL_OK;
}

/* The inputs of every part for this run's tensors (in: the call's inputs), the slices
 * made to fit; false (why set) when the inputs do not add up to the weights' columns. */
static bool part_inputs(cat_unit *u, const gl_tensor *const *in, size_t n_in,
                        const gl_tensor *pin[][3], const char *where, char *why, size_t len)
{
    const gl_tensor *w = u->w_input < n_in ? in[u->w_input] : NULL;
    int64_t off = 0;
    for (size_t j = 0; j < u->n_parts; j++) {
        cat_part *p = &u->part[j];
        const gl_tensor *x = p->input < n_in ? in[p->input] : NULL;
        if (!w || !x || x->dtype != GL_DT_FLOAT || x->rank != 4 || off + x->dims[1] > w->dims[1]) {
            snprintf(why, len, "Concat input %zu is not float32 of rank 4 within the %lld "
                     "input channels of the weights", j, w ? (long long)w->dims[1] : -1LL);
            return false;
        }
        if (x->dims[1] == 0) {
            /* W0·x0 over no channels: no convolution (and no weights) to make of it; the
             * members run as they are (issue 26). */
            snprintf(why, len, "Concat input %zu has no channels", j);
            return false;
        }
        if (make_slice(p, w, off, x->dims[1], where) != GL_OK) {
            snprintf(why, len, "%s", gl_error_message());
            gl_error_clear();
            return false;
        }
        off += x->dims[1];
        pin[j][0] = x;
        pin[j][1] = p->wval.init;
        pin[j][2] = j == 0 && u->b_input < n_in ? in[u->b_input] : NULL;
    }
    if (off != w->dims[1]) {
        snprintf(why, len, "the Concat's %lld channels are not the weights' %lld",
                 (long long)off, (long long)w->dims[1]);
        return false;
    }
    return true;
}

/* Part j's post-ops: the sum of what the parts before it wrote, then (last part) the
 * group's activations. */
static int part_posts(dn_tail *t, dn_build *b, int rank, const int64_t *dims, dn_post *post,
                      size_t cap)
{
    (void)b, (void)rank, (void)dims;
    cat_part *p = (cat_part *)((char *)t - offsetof(cat_part, tail));
    cat_unit *u = p->unit;
    size_t n = 0;
    if (p->index > 0) {
        if (cap < 1)
            return -1;
        post[n++] = (dn_post){(dnnl_alg_kind_t)0, 0.0f, 0.0f, 1.0f, NULL};
    }
    if (p->index + 1 == u->n_parts) {
        if (n + u->n_posts > cap)
            return -1;
        memcpy(post + n, u->posts, u->n_posts * sizeof(*post));
        n += u->n_posts;
    }
    return (int)n;
}

static gl_status part_build(dn_build *b, dnnl_primitive_desc_t *pd)
{
    cat_part *p = (cat_part *)b->s;
    p->tail.posts = part_posts;
    p->tail.taken = false;
    b->tail = &p->tail;
    gl_status st = p->unit->conv_op->build(b, pd);
    b->tail = NULL;
    if (st != GL_OK || b->s->fallback)
        return st;
    if (!p->tail.taken || b->s->n_out != 1) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dn_refuse(b, "the Conv build takes no post-ops here");
    }
    if (dn_pd_is_ref(*pd))
        return dn_refuse_ref(b, pd, "a part of this group");
    b->s->out[0].into = p->index > 0;
    return GL_OK;
}

/* Every part built alike: the same destination as part 0's. */
static bool parts_agree(const cat_unit *u, char *why, size_t len)
{
    const dn_node *s0 = &u->part[0].node;
    for (size_t j = 0; j < u->n_parts; j++) {
        const dn_node *s = &u->part[j].node;
        if (s->fallback) {
            snprintf(why, len, "part %zu: %s", j, s->note);
            return false;
        }
        if (s->n_out != 1 || !dnnl_memory_desc_equal(&s->out[0].md, &s0->out[0].md)) {
            snprintf(why, len, "part %zu writes another destination layout than part 0", j);
            return false;
        }
    }
    return true;
}

static void describe_unit(dn_ctx *c, cat_unit *u)
{
    dn_node *s = &u->part[0].node;
    char impl[DN_IMPL_LEN];
    size_t k = (size_t)snprintf(impl, sizeof(impl), "%s x%zu + sum", s->impl, u->n_parts);
    for (size_t i = 0; i < u->n_posts && k < sizeof(impl); i++)
        k += (size_t)snprintf(impl + k, sizeof(impl) - k, " + %s",
                              dnnl_alg_kind2str(u->posts[i].alg));
    dn_set_impl(c, s, "%s", impl);
    dn_set_note(c, s, "fused: Concat '%.32s' (%zu inputs), Conv '%.32s'%s: "
                "a 1x1 convolution per input, one destination", u->concat->name, u->n_parts,
                u->conv->name, u->n_acts ? ", activations" : "");
}

/* ---- the backend's entry points --------------------------------------------------------- */

bool dn_catconv_claims(dn_ctx *c, const gl_model *m, const gl_node *call,
                       const gl_function *fn, char *why, size_t len)
{
    cat_unit *u = unit_new(m, call, fn, why, len);
    if (!u)
        return false;
    bool ok = true;
    for (size_t i = 0; i < call->n_inputs && ok; i++)
        if (call->inputs[i] && !dn_input_fits(call, i, 0, DNNL_MAX_NDIMS)) {
            snprintf(why, len, "input '%s' is not float32", call->inputs[i]->name);
            ok = false;
        }
    /* Every shape known: build the parts' descriptors now, so that a group oneDNN cannot
     * run this way is expanded by the executor (and the plan says why). */
    const gl_tensor *in[CAT_MAX_INPUTS] = {NULL};
    gl_tensor *made[CAT_MAX_INPUTS] = {NULL};
    bool known = ok && call->n_inputs <= CAT_MAX_INPUTS;
    for (size_t i = 0; i < call->n_inputs && known; i++)
        known = !call->inputs[i] || dn_stand_in(call->inputs[i], &in[i], &made[i]);
    if (known) {
        char where[512];
        gl_node_where(m, call, where, sizeof(where));
        const gl_tensor *pin[CAT_MAX_PARTS][3];
        ok = part_inputs(u, in, call->n_inputs, pin, where, why, len);
        for (size_t j = 0; j < u->n_parts && ok; j++) {
            cat_part *p = &u->part[j];
            dnnl_memory_desc_t md[3];
            memset(md, 0, sizeof(md));
            for (size_t i = 0; i < 3 && ok; i++)
                ok = !pin[j][i] || dn_md_of(pin[j][i], &md[i]) == dnnl_success;
            gl_kernel_ctx k = {.node = &p->synth, .model = m, .opset = u->opset,
                               .where = where, .n_inputs = 3, .in = pin[j], .n_outputs = 1,
                               .backend_ctx = c};
            dn_build b = {.c = c, .k = &k, .s = &p->node, .md = md};
            dnnl_primitive_desc_t pd = NULL;
            if (ok && part_build(&b, &pd) != GL_OK) {
                snprintf(why, len, "%s", gl_error_message());
                gl_error_clear();
                ok = false;
            }
            dnnl_primitive_desc_destroy(pd);
        }
        ok = ok && parts_agree(u, why, len);
    }
    for (size_t i = 0; i < CAT_MAX_INPUTS; i++)
        gl_tensor_free(made[i]);
    unit_free(u);
    return ok;
}

gl_status dn_catconv_run(dn_ctx *c, gl_kernel_ctx *k, void **state, bool *finite)
{
    cat_unit *u = *state;
    if (!u) {
        char why[160] = "";
        const gl_function *fn = gl_called_function(k->model, k->node);
        u = fn ? unit_new(k->model, k->node, fn, why, sizeof(why)) : NULL;
        if (!u)
            return gl_fail(GL_ERR_INTERNAL, "%s: claimed as a fused group, yet %s", k->where,
                           why);
        *state = u;
    }
    const gl_tensor *pin[CAT_MAX_PARTS][3];
    gl_kernel_ctx hk[CAT_MAX_PARTS];
    char why[160] = "";
    bool rebuilt = false, head_rebuilt = false, fits = part_inputs(u, k->in, k->n_inputs, pin, k->where, why,
                                             sizeof(why));
    gl_status st = GL_OK;
    for (size_t j = 0; j < u->n_parts && fits && st == GL_OK; j++) {
        bool again = false;
        hk[j] = *k;
        hk[j].node = &u->part[j].synth;
        hk[j].opset = u->opset;
        hk[j].n_inputs = 3;
        hk[j].in = pin[j];
        hk[j].reorder_ns = 0;
        hk[j].reorders = 0;
        st = dn_node_ready(c, &hk[j], &u->part[j].node, &again);
        rebuilt = rebuilt || again;
        head_rebuilt = head_rebuilt || (again && j == 0);
    }
    if (st != GL_OK)
        return st;
    if (fits && rebuilt) {
        fits = parts_agree(u, why, sizeof(why));
        if (fits && head_rebuilt)
            describe_unit(c, u);
    }
    dn_node *s0 = &u->part[0].node;
    if (!fits) {
        if (strncmp(s0->note, "runs its members", 16) != 0) {
            dn_note_runs_members(c, s0, why);
            s0->generation++;
        }
        return dn_fused_run_members(c, k);
    }
    /* Activations that would turn a NaN or an infinity of these inputs into a number: the
     * members, their output where part 0 writes it. */
    dn_inputs in = dn_inputs_look(c, k, &u->call_specials, u->drops_specials);
    if (u->drops_specials && in == DN_INPUTS_SPECIAL) {
        st = dn_fused_run_members(c, k);
        return st == GL_OK ? dn_node_adopt(c, k, s0) : st;
    }
    *finite = in == DN_INPUTS_FINITE && !u->makes_specials;
    for (size_t j = 0; j < u->n_parts && st == GL_OK; j++) {
        st = dn_node_exec(c, &hk[j], &u->part[j].node);
        k->reorder_ns += hk[j].reorder_ns;
        k->reorders += hk[j].reorders;
    }
    return st;
}
