/* test_cse_dce.c — common-subexpression and dead-code elimination.
 *
 * Every case builds a graph, runs one pass and checks the nodes and constants left, the
 * decisions, and that the graph still computes the same: each graph output's expression
 * (op, attributes and inputs, recursively, down to graph inputs and constant bytes; node
 * and value names left out) is equal before and after. That check is written here,
 * independently of the passes: a string for small graphs, a hash for real models.
 */
#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "testutil.h"
#include "util/hash.h"
#include "util/strbuf.h"

#include <criterion/criterion.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expressions as strings ------------------------------------------------------------ */

static void expr_value(gl_strbuf *b, const gl_value *v);

static void expr_graph_outputs(gl_strbuf *b, const gl_graph *g)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        gl_sb_printf(b, i ? "," : "");
        expr_value(b, g->outputs[i]);
    }
}

static void expr_attr(gl_strbuf *b, const gl_attr *a)
{
    gl_sb_printf(b, "%s=", a->name);
    switch (a->type) {
    case GL_ATTR_INT: gl_sb_printf(b, "%lld", (long long)a->i); break;
    case GL_ATTR_FLOAT: gl_sb_printf(b, "%g", (double)a->f); break;
    case GL_ATTR_STRING: gl_sb_printf(b, "'%s'", (const char *)a->s.data); break;
    case GL_ATTR_TENSOR: gl_sb_printf(b, "t%016llx", (unsigned long long)gl_tensor_hash(a->t)); break;
    case GL_ATTR_INTS:
        for (size_t i = 0; i < a->n; i++)
            gl_sb_printf(b, "%s%lld", i ? "/" : "", (long long)a->ints[i]);
        break;
    case GL_ATTR_GRAPH:
        gl_sb_printf(b, "{");
        expr_graph_outputs(b, a->g);
        gl_sb_printf(b, "}");
        break;
    default: gl_sb_printf(b, "?"); break;
    }
}

static int attr_by_name(const void *x, const void *y)
{
    return strcmp((*(const gl_attr *const *)x)->name, (*(const gl_attr *const *)y)->name);
}

static void expr_node(gl_strbuf *b, const gl_node *n, int slot)
{
    if (n->domain && *n->domain)
        gl_sb_printf(b, "%s.", n->domain);
    gl_sb_printf(b, "%s", n->op_type);
    if (n->n_attrs) {
        /* Attributes are a set: print them sorted so their order does not matter. */
        const gl_attr *sorted[16];
        size_t k = n->n_attrs < 16 ? n->n_attrs : 16;
        for (size_t i = 0; i < k; i++)
            sorted[i] = &n->attrs[i];
        qsort(sorted, k, sizeof(sorted[0]), attr_by_name);
        gl_sb_printf(b, "[");
        for (size_t i = 0; i < k; i++) {
            gl_sb_printf(b, i ? "," : "");
            expr_attr(b, sorted[i]);
        }
        gl_sb_printf(b, "]");
    }
    gl_sb_printf(b, "(");
    for (size_t i = 0; i < n->n_inputs; i++) {
        gl_sb_printf(b, i ? "," : "");
        expr_value(b, n->inputs[i]);
    }
    gl_sb_printf(b, ")");
    if (n->n_outputs > 1)
        gl_sb_printf(b, ":%d", slot);
}

static void expr_value(gl_strbuf *b, const gl_value *v)
{
    if (!v)
        return;
    if (v->outer)
        expr_value(b, v->outer);
    else if (v->producer)
        expr_node(b, v->producer, v->producer_slot);
    else if (v->init && !v->is_input)
        gl_sb_printf(b, "c%08llx", (unsigned long long)(gl_tensor_hash(v->init) & 0xffffffff));
    else
        gl_sb_printf(b, "%s", v->name);
}

/* "out1=...;out2=..." for the graph's outputs (output names included: they must stay). */
static char *output_exprs(const gl_graph *g)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < g->n_outputs; i++) {
        gl_sb_printf(&b, "%s%s=", i ? ";" : "", g->outputs[i]->name);
        expr_value(&b, g->outputs[i]);
    }
    return gl_sb_take(&b);
}

/* ---- expressions as hashes (for real models: strings would grow exponentially) --------- */

static uint64_t mix(uint64_t h, const void *p, size_t n) { return gl_fnv1a(h, p, n); }

static uint64_t mix64(uint64_t h, uint64_t x) { return mix(h, &x, sizeof(x)); }
static uint64_t mixstr(uint64_t h, const char *s)
{
    s = s ? s : "";
    return mix(h, s, strlen(s) + 1);
}

/* Hashes of one graph's node outputs by value id; `up` is the enclosing graph's frame. */
typedef struct frame {
    const gl_graph *g;
    uint64_t *h;
    const struct frame *up;
} frame;

static uint64_t hash_graph_outputs(const gl_graph *g, const frame *up);

static uint64_t hash_value(const frame *f, const gl_value *v)
{
    if (!v)
        return 77;
    if (v->outer) {
        const frame *o = f->up;
        while (o && o->g != v->outer->graph)
            o = o->up;
        cr_assert_not_null(o, "capture '%s' of an unknown graph", v->name);
        return hash_value(o, v->outer);
    }
    if (v->producer)
        return f->h[v->id];
    if (v->init && !v->is_input)
        return mix64(mixstr(1, "const"), gl_tensor_hash(v->init));
    return mixstr(mixstr(1, "input"), v->name);
}

static uint64_t hash_attr(const gl_attr *a, const frame *f)
{
    uint64_t h = mix64(mixstr(2, a->name), (uint64_t)a->type);
    switch (a->type) {
    case GL_ATTR_FLOAT: return mix(h, &a->f, sizeof(a->f));
    case GL_ATTR_INT: return mix64(h, (uint64_t)a->i);
    case GL_ATTR_STRING: return mix(h, a->s.data, a->s.len);
    case GL_ATTR_TENSOR: return mix64(h, gl_tensor_hash(a->t));
    case GL_ATTR_FLOATS: return mix(h, a->floats, a->n * sizeof(float));
    case GL_ATTR_INTS: return mix(h, a->ints, a->n * sizeof(int64_t));
    case GL_ATTR_GRAPH: return mix64(h, hash_graph_outputs(a->g, f));
    case GL_ATTR_GRAPHS:
        for (size_t i = 0; i < a->n; i++)
            h = mix64(h, hash_graph_outputs(a->graphs[i], f));
        return h;
    default:
        for (size_t i = 0; i < a->n; i++)
            h = mix(h, a->opaque ? a->opaque[i].data : NULL, a->opaque ? a->opaque[i].len : 0);
        return h;
    }
}

/* Fills f->h for every node output, in order (the graph is sorted). */
static void hash_nodes(frame *f)
{
    const gl_graph *g = f->g;
    gl_node *n;
    gl_foreach_node(g, i, n) {
        const char *dom = n->domain && strcmp(n->domain, "ai.onnx") ? n->domain : "";
        uint64_t h = mixstr(mixstr(3, dom), n->op_type), attrs = 0;
        for (size_t a = 0; a < n->n_attrs; a++)
            attrs += hash_attr(&n->attrs[a], f);
        h = mix64(h, attrs);
        for (size_t k = 0; k < n->n_inputs; k++)
            h = mix64(h, hash_value(f, n->inputs[k]));
        for (size_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k])
                f->h[n->outputs[k]->id] = mix64(h, k);
    }
}

static uint64_t hash_graph_outputs(const gl_graph *g, const frame *up)
{
    frame f = {g, calloc(g->next_value_id + 1, sizeof(uint64_t)), up};
    hash_nodes(&f);
    uint64_t h = 4;
    for (size_t i = 0; i < g->n_outputs; i++)
        h = mix64(mixstr(h, g->outputs[i]->name), hash_value(&f, g->outputs[i]));
    free(f.h);
    return h;
}

/* ---- running a pass --------------------------------------------------------------------- */

static gl_status run_pass(gl_model *m, const char *pass, int64_t budget, gl_decision_log *log,
                          const gl_settings *settings, int64_t *applied)
{
    gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find(pass), .step = 1, .budget = budget,
                       .log = log, .settings = settings};
    cr_assert_not_null(ctx.pass);
    gl_status st = gl_pass_run(m->graph, &ctx);
    gl_decision_clear(&ctx.scratch);
    if (st == GL_OK)
        cr_assert_eq(gl_graph_verify(m->graph, false), GL_OK, "%s left the graph broken: %s",
                     pass, gl_error_message());
    if (applied)
        *applied = ctx.applied;
    return st;
}

/* "a:Relu b:Neg" for the live nodes in order. */
static char *node_list(const gl_graph *g)
{
    gl_strbuf b = {0};
    gl_node *n;
    gl_foreach_node(g, i, n)
        gl_sb_printf(&b, "%s%s:%s", b.len ? " " : "", n->name, n->op_type);
    return gl_sb_take(&b);
}

static char *init_list(const gl_graph *g)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < g->n_inits; i++)
        gl_sb_printf(&b, "%s%s", i ? " " : "", g->inits[i]->name);
    return gl_sb_take(&b);
}

static char *joined_nodes(const gl_decision *d)
{
    gl_strbuf b = {0};
    for (size_t i = 0; i < d->n_nodes; i++)
        gl_sb_printf(&b, "%s%s", i ? "," : "", d->nodes[i]);
    return gl_sb_take(&b);
}

/* Every node starts with itself as its origin, as a loaded node does. */
static void give_origins(gl_graph *g)
{
    gl_node *n;
    gl_foreach_node(g, i, n)
        gl_node_set_provenance(n, &n->id, 1, -1);
}

static bool has_origin(const gl_node *n, uint32_t origin)
{
    for (size_t i = 0; i < n->prov.n_origins; i++)
        if (n->prov.origins[i] == origin)
            return true;
    return false;
}

/* ---- table-driven cases ------------------------------------------------------------------- */

typedef struct want_decision {
    const char *rule;
    gl_verdict verdict;
    const char *nodes;     /* "a,b"; NULL: not checked */
    const char *key;       /* a number (or text) to check, or NULL */
    double value;
    const char *text;      /* when set, `key` is a text equal to this */
    const char *reason_has;
} want_decision;

typedef struct pass_case {
    const char *name;
    gl_model *(*build)(void);
    const char *pass;
    const char *nodes_after;
    const char *inits_after; /* NULL: not checked */
    const char *set;         /* a --set assignment, or NULL */
    size_t n_decisions;
    want_decision decisions[4];
    const char *expr;        /* the output expressions, when the case spells them out */
} pass_case;

/* A merged node `dup` lives on in `keep`: "where did dup go" answers keep. */
static void check_provenance(const gl_graph *g, const gl_decision *d, uint32_t dup_origin)
{
    gl_node *keep = gl_find_node(g, d->nodes[0]);
    cr_assert_not_null(keep, "kept node '%s' is gone", d->nodes[0]);
    cr_assert(has_origin(keep, dup_origin), "'%s' does not stand for '%s'", d->nodes[0],
              d->nodes[1]);
    cr_assert_eq(keep->prov.decision, d->id);
    cr_assert_null(gl_find_node(g, d->nodes[1]), "'%s' was merged but is still there",
                   d->nodes[1]);
}

static void check_decision(const pass_case *c, size_t i, const gl_decision *d)
{
    const want_decision *w = &c->decisions[i];
    cr_assert_str_eq(d->rule, w->rule, "%s: decision %zu", c->name, i);
    cr_assert_eq(d->verdict, w->verdict, "%s: decision %zu is %s: %s", c->name, i,
                 gl_verdict_name(d->verdict), d->reason);
    cr_assert_eq(d->id, (int64_t)i);
    cr_assert(d->reason && *d->reason);
    if (w->nodes) {
        char *nodes = joined_nodes(d);
        cr_assert_str_eq(nodes, w->nodes, "%s: decision %zu", c->name, i);
        free(nodes);
    }
    if (w->text)
        cr_assert_str_eq(gl_decision_number_text(d, w->key), w->text, "%s: %s", c->name, w->key);
    else if (w->key)
        cr_assert_eq(gl_decision_number_value(d, w->key), w->value, "%s: %s = %g", c->name,
                     w->key, gl_decision_number_value(d, w->key));
    if (w->reason_has)
        cr_assert(strstr(d->reason, w->reason_has), "%s: reason '%s' lacks '%s'", c->name,
                  d->reason, w->reason_has);
}

static void run_case(const pass_case *c)
{
    gl_model *m = c->build();
    gl_graph *g = m->graph;
    give_origins(g);
    cr_assert_eq(gl_graph_verify(g, false), GL_OK, "%s: %s", c->name, gl_error_message());
    char *before = output_exprs(g);
    if (c->expr)
        cr_assert_str_eq(before, c->expr, "%s", c->name);
    uint64_t hash_before = hash_graph_outputs(g, NULL);
    size_t n_inputs = g->n_inputs;
    uint32_t *ids = calloc(g->n_nodes + 1, sizeof(uint32_t));
    char **names = calloc(g->n_nodes + 1, sizeof(char *));
    for (size_t i = 0; i < g->n_nodes; i++) {
        names[i] = strdup(g->nodes[i]->name);
        ids[i] = g->nodes[i]->id;
    }

    gl_settings settings = {0};
    if (c->set)
        cr_assert_eq(gl_settings_apply(&settings, c->set), GL_OK, "%s", gl_error_message());
    gl_decision_log log = {0};
    cr_assert_eq(run_pass(m, c->pass, GL_BUDGET_UNLIMITED, &log, &settings, NULL), GL_OK,
                 "%s: %s", c->name, gl_error_message());

    char *after = output_exprs(g), *nodes = node_list(g);
    cr_assert_str_eq(after, before, "%s: the graph computes something else", c->name);
    cr_assert_eq(hash_graph_outputs(g, NULL), hash_before, "%s", c->name);
    cr_assert_eq(g->n_inputs, n_inputs, "%s: graph inputs must stay", c->name);
    cr_assert_str_eq(nodes, c->nodes_after, "%s", c->name);
    if (c->inits_after) {
        char *inits = init_list(g);
        cr_assert_str_eq(inits, c->inits_after, "%s", c->name);
        free(inits);
    }
    cr_assert_eq(log.n, c->n_decisions, "%s: %zu decisions, first: %s", c->name, log.n,
                 log.n ? log.items[0].reason : "-");
    for (size_t i = 0; i < log.n; i++) {
        check_decision(c, i, &log.items[i]);
        const gl_decision *d = &log.items[i];
        if (strcmp(d->rule, "duplicate-node") == 0 && d->verdict == GL_APPLIED &&
            !gl_decision_number_text(d, "inside"))
            for (size_t k = 0; names[k]; k++)
                if (strcmp(names[k], d->nodes[1]) == 0)
                    check_provenance(g, d, ids[k]);
    }
    for (size_t i = 0; names[i]; i++)
        free(names[i]);
    free(names);
    free(ids);
    free(before);
    free(after);
    free(nodes);
    gl_decision_log_free(&log);
    gl_settings_free(&settings);
    gl_model_free(m);
}

/* ---- builders ------------------------------------------------------------------------------ */

#define BEGIN                                                                            \
    gl_model *m = tu_model(13);                                                          \
    gl_graph *g = m->graph;                                                              \
    gl_value *x = tu_input(g, "x", GL_DT_FLOAT, 1, (int64_t[]){2})

static gl_value *out(const gl_node *n) { return n->outputs[0]; }

/* A node of any domain with `n_out` outputs. */
static gl_node *node_ex(gl_graph *g, const char *op, const char *domain, const char *name,
                        size_t n_out, size_t n_in, ...)
{
    gl_value *ins[8] = {0};
    va_list ap;
    va_start(ap, n_in);
    for (size_t i = 0; i < n_in; i++)
        ins[i] = va_arg(ap, gl_value *);
    va_end(ap);
    return gl_add_node(g, op, domain, name, ins, n_in, n_out);
}

static gl_value *const_f32(gl_graph *g, const char *name, float a, float b)
{
    return tu_const_f32(g, name, 1, (int64_t[]){2}, (float[]){a, b});
}

static gl_model *b_relu_pair(void)
{
    BEGIN;
    gl_node *a = tu_node(g, "Relu", "a", 1, x), *b = tu_node(g, "Relu", "b", 1, x);
    tu_output(g, out(tu_node(g, "Add", "s", 2, out(a), out(b))));
    return m;
}

static gl_model *b_commuted(void)
{
    BEGIN;
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *a = tu_node(g, "Add", "a", 2, x, y), *b = tu_node(g, "Add", "b", 2, y, x);
    tu_output(g, out(tu_node(g, "Mul", "s", 2, out(a), out(b))));
    return m;
}

static gl_model *b_repeated_inputs(void)
{
    BEGIN;
    gl_value *y = tu_input(g, "y", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *a = tu_node(g, "Mul", "a", 2, x, x), *b = tu_node(g, "Mul", "b", 2, x, x);
    gl_node *c = tu_node(g, "Mul", "c", 2, x, y);
    tu_output(g, out(tu_node(g, "Sum", "s", 3, out(a), out(b), out(c))));
    return m;
}

static gl_model *b_chain(void)
{
    BEGIN;
    gl_node *a1 = tu_node(g, "Relu", "a1", 1, x), *a2 = tu_node(g, "Relu", "a2", 1, x);
    gl_node *b1 = tu_node(g, "Neg", "b1", 1, out(a1)), *b2 = tu_node(g, "Neg", "b2", 1, out(a2));
    tu_output(g, out(tu_node(g, "Add", "s", 2, out(b1), out(b2))));
    return m;
}

static gl_model *b_random(void)
{
    BEGIN;
    gl_node *r1 = tu_node(g, "RandomUniformLike", "r1", 1, x);
    gl_node *r2 = tu_node(g, "RandomUniformLike", "r2", 1, x);
    tu_output(g, out(tu_node(g, "Add", "s", 2, out(r1), out(r2))));
    return m;
}

/* Dropout is random only with a training_mode input. */
static gl_model *b_dropout(void)
{
    BEGIN;
    gl_value *ratio = tu_const_f32(g, "ratio", 0, NULL, (float[]){0.5f});
    gl_value *train = tu_input(g, "train", GL_DT_BOOL, 0, NULL);
    gl_node *d1 = tu_node(g, "Dropout", "d1", 1, x), *d2 = tu_node(g, "Dropout", "d2", 1, x);
    gl_node *t1 = tu_node(g, "Dropout", "t1", 3, x, ratio, train);
    gl_node *t2 = tu_node(g, "Dropout", "t2", 3, x, ratio, train);
    tu_output(g, out(tu_node(g, "Sum", "s", 4, out(d1), out(d2), out(t1), out(t2))));
    return m;
}

static gl_model *b_unknown_domain(void)
{
    BEGIN;
    gl_node *c1 = node_ex(g, "Foo", "com.acme", "c1", 1, 1, x);
    gl_node *c2 = node_ex(g, "Foo", "com.acme", "c2", 1, 1, x);
    tu_output(g, out(tu_node(g, "Add", "s", 2, out(c1), out(c2))));
    return m;
}

static gl_model *b_both_outputs(void)
{
    BEGIN;
    tu_output(g, out(tu_node(g, "Relu", "a", 1, x)));
    tu_output(g, out(tu_node(g, "Relu", "b", 1, x)));
    return m;
}

/* The later duplicate produces a graph output, the kept one does not: it takes it over. */
static gl_model *b_handover(void)
{
    BEGIN;
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    tu_output(g, out(tu_node(g, "Neg", "n", 1, out(a))));
    tu_output(g, out(tu_node(g, "Relu", "b", 1, x)));
    return m;
}

static gl_model *b_omitted_inputs(void)
{
    BEGIN;
    gl_value *hi = tu_const_f32(g, "hi", 0, NULL, (float[]){6});
    gl_node *a = tu_node(g, "Clip", "a", 3, x, NULL, hi);
    gl_node *b = tu_node(g, "Clip", "b", 3, x, hi, NULL);
    gl_node *c = tu_node(g, "Clip", "c", 3, x, NULL, hi);
    tu_output(g, out(tu_node(g, "Sum", "s", 3, out(a), out(b), out(c))));
    return m;
}

/* Split with 2 outputs, 3 outputs, 2 with the second omitted, and 2 again. */
static gl_model *b_output_counts(void)
{
    BEGIN;
    gl_node *s1 = node_ex(g, "Split", "", "s1", 2, 1, x);
    gl_node *s2 = node_ex(g, "Split", "", "s2", 3, 1, x);
    gl_node *s3 = node_ex(g, "Split", "", "s3", 2, 1, x);
    gl_drop_output(g, s3, 1);
    gl_node *s4 = node_ex(g, "Split", "", "s4", 2, 1, x);
    gl_value *parts[] = {s1->outputs[0], s1->outputs[1], s2->outputs[0], s2->outputs[1],
                         s2->outputs[2], s3->outputs[0], s4->outputs[0], s4->outputs[1]};
    tu_output(g, out(gl_add_node(g, "Sum", "", "sum", parts, 8, 1)));
    return m;
}

/* An If whose then-branch reads `captured` twice through Relu, else-branch Identity. */
static gl_node *add_if(gl_graph *g, const char *name, gl_value *cond, gl_value *captured,
                       const char *extra_domain)
{
    gl_node *n = gl_add_node(g, "If", "", name, &cond, 1, 1);
    const char *branch_names[] = {"then_branch", "else_branch"};
    for (int k = 0; k < 2; k++) {
        char sub_name[64];
        snprintf(sub_name, sizeof(sub_name), "%s_%s", name, branch_names[k]);
        gl_graph *body = gl_graph_new(g->model, g, sub_name);
        body->parent_node = n;
        gl_value *cap = gl_resolve_value(body, captured->name);
        gl_value *result;
        if (k == 0) {
            char n1[64], n2[64];
            snprintf(n1, sizeof(n1), "%s_t1", name);
            snprintf(n2, sizeof(n2), "%s_t2", name);
            gl_node *t1 = tu_node(body, "Relu", n1, 1, cap);
            gl_node *t2 = tu_node(body, "Relu", n2, 1, cap);
            result = out(tu_node(body, "Add", NULL, 2, out(t1), out(t2)));
            if (extra_domain)
                node_ex(body, "Print", extra_domain, NULL, 1, 1, cap);
        } else {
            result = out(tu_node(body, "Identity", NULL, 1, cap));
        }
        gl_graph_add_output(body, result);
        gl_attr a = {.name = strdup(branch_names[k]), .type = GL_ATTR_GRAPH, .g = body};
        gl_node_take_attr(n, &a);
    }
    return n;
}

static gl_model *b_if_nodes(void)
{
    BEGIN;
    gl_value *c = tu_input(g, "c", GL_DT_BOOL, 0, NULL);
    gl_node *i1 = add_if(g, "i1", c, x, NULL), *i2 = add_if(g, "i2", c, x, NULL);
    tu_output(g, out(tu_node(g, "Add", "s", 2, out(i1), out(i2))));
    return m;
}

static gl_model *b_constants(void)
{
    BEGIN;
    gl_value *c1 = const_f32(g, "c1", 1, 2), *c2 = const_f32(g, "c2", 1, 2);
    gl_value *c3 = const_f32(g, "c3", 1, 3);
    gl_node *a1 = tu_node(g, "Add", "a1", 2, x, c1), *a2 = tu_node(g, "Add", "a2", 2, x, c2);
    gl_node *a3 = tu_node(g, "Add", "a3", 2, x, c3);
    tu_output(g, out(tu_node(g, "Sum", "s", 3, out(a1), out(a2), out(a3))));
    return m;
}

/* Same bytes, different dtype or dims. */
static gl_model *b_constant_types(void)
{
    BEGIN;
    (void)x;
    gl_value *f = tu_const_f32(g, "f", 1, (int64_t[]){1}, (float[]){1.0f});
    gl_tensor *t = gl_tensor_new(GL_DT_INT32, 1, (int64_t[]){1});
    *(int32_t *)gl_tensor_make_writable(t) = 0x3f800000; /* the bits of 1.0f */
    gl_value *i = gl_add_initializer(g, "i", t);
    gl_value *d = tu_const_f32(g, "d", 2, (int64_t[]){1, 1}, (float[]){1.0f});
    gl_node *n1 = tu_node(g, "Identity", "n1", 1, f), *n2 = tu_node(g, "Identity", "n2", 1, i);
    gl_node *n3 = tu_node(g, "Identity", "n3", 1, d);
    tu_output(g, out(tu_node(g, "Sum", "s", 3, out(n1), out(n2), out(n3))));
    return m;
}

/* Two equal constants of 1025 floats (4100 bytes, over the default limit). */
static gl_model *b_big_constants(void)
{
    BEGIN;
    float data[1025];
    for (int i = 0; i < 1025; i++)
        data[i] = (float)i;
    gl_value *b1 = tu_const_f32(g, "b1", 1, (int64_t[]){1025}, data);
    gl_value *b2 = tu_const_f32(g, "b2", 1, (int64_t[]){1025}, data);
    gl_node *a1 = tu_node(g, "Add", "a1", 2, x, b1), *a2 = tu_node(g, "Add", "a2", 2, x, b2);
    tu_output(g, out(tu_node(g, "Sub", "s", 2, out(a1), out(a2))));
    return m;
}

/* c1 == c2, c2 a graph output; c3 == c4, both graph outputs. */
static gl_model *b_constant_outputs(void)
{
    BEGIN;
    (void)x;
    gl_value *c1 = const_f32(g, "c1", 1, 2), *c2 = const_f32(g, "c2", 1, 2);
    gl_value *c3 = const_f32(g, "c3", 5, 6), *c4 = const_f32(g, "c4", 5, 6);
    tu_output(g, out(tu_node(g, "Relu", "r", 1, c1)));
    tu_output(g, c2);
    tu_output(g, c3);
    tu_output(g, c4);
    return m;
}

static gl_model *b_input_default(void)
{
    BEGIN;
    gl_value *d = const_f32(g, "d", 1, 2);
    gl_graph_add_input(g, d); /* an input with a default: not a constant */
    gl_value *c = const_f32(g, "c", 1, 2);
    gl_node *a1 = tu_node(g, "Add", "a1", 2, x, d), *a2 = tu_node(g, "Add", "a2", 2, x, c);
    tu_output(g, out(tu_node(g, "Sub", "s", 2, out(a1), out(a2))));
    return m;
}

static const pass_case cse_cases[] = {
    {"relu pair", b_relu_pair, "cse", "a:Relu s:Add", NULL, NULL, 1,
     {{"duplicate-node", GL_APPLIED, "a,b", "uses", 1, NULL, NULL}},
     "s_out0=Add(Relu(x),Relu(x))"},
    {"Add(x,y) vs Add(y,x)", b_commuted, "cse", "a:Add b:Add s:Mul", NULL, NULL, 0, {{0}},
     "s_out0=Mul(Add(x,y),Add(y,x))"},
    {"repeated inputs", b_repeated_inputs, "cse", "a:Mul c:Mul s:Sum", NULL, NULL, 1,
     {{"duplicate-node", GL_APPLIED, "a,b", NULL, 0, NULL, NULL}}, NULL},
    {"chain collapses", b_chain, "cse", "a1:Relu b1:Neg s:Add", NULL, NULL, 2,
     {{"duplicate-node", GL_APPLIED, "a1,a2", "uses", 1, NULL, NULL},
      {"duplicate-node", GL_APPLIED, "b1,b2", "uses", 1, NULL, NULL}},
     "s_out0=Add(Neg(Relu(x)),Neg(Relu(x)))"},
    {"random ops", b_random, "cse", "r1:RandomUniformLike r2:RandomUniformLike s:Add", NULL,
     NULL, 1, {{"duplicate-node", GL_REFUSED, "r1,r2", NULL, 0, NULL, "random"}}, NULL},
    {"dropout", b_dropout, "cse", "d1:Dropout t1:Dropout t2:Dropout s:Sum", NULL, NULL, 2,
     {{"duplicate-node", GL_APPLIED, "d1,d2", NULL, 0, NULL, NULL},
      {"duplicate-node", GL_REFUSED, "t1,t2", NULL, 0, NULL, "random"}}, NULL},
    {"unknown domain", b_unknown_domain, "cse", "c1:Foo c2:Foo s:Add", NULL, NULL, 1,
     {{"duplicate-node", GL_REFUSED, "c1,c2", NULL, 0, NULL,
       "op in domain 'com.acme': not known to be free of side effects"}}, NULL},
    {"both graph outputs", b_both_outputs, "cse", "a:Relu b:Relu", NULL, NULL, 1,
     {{"duplicate-node", GL_REFUSED, "a,b", NULL, 0, NULL,
       "output 'b_out0' is a graph output"}}, NULL},
    {"graph output handed over", b_handover, "cse", "a:Relu n:Neg", NULL, NULL, 1,
     {{"duplicate-node", GL_APPLIED, "a,b", "outputs_handed_over", 1, NULL, NULL}},
     "n_out0=Neg(Relu(x));b_out0=Relu(x)"},
    {"omitted inputs", b_omitted_inputs, "cse", "a:Clip b:Clip s:Sum", NULL, NULL, 1,
     {{"duplicate-node", GL_APPLIED, "a,c", NULL, 0, NULL, NULL}}, NULL},
    {"output counts", b_output_counts, "cse", "s1:Split s2:Split s3:Split sum:Sum", NULL,
     NULL, 1, {{"duplicate-node", GL_APPLIED, "s1,s4", "uses", 2, NULL, NULL}}, NULL},
    {"If nodes skipped, bodies merged", b_if_nodes, "cse", "i1:If i2:If s:Add", NULL, NULL,
     2, {{"duplicate-node", GL_APPLIED, "i1_t1,i1_t2", "inside", 0, "i1", NULL},
         {"duplicate-node", GL_APPLIED, "i2_t1,i2_t2", "inside", 0, "i2", NULL}}, NULL},
    {"constants", b_constants, "cse", "a1:Add a3:Add s:Sum", "c1 c3", NULL, 2,
     {{"duplicate-constant", GL_APPLIED, "", "bytes", 8, NULL, NULL},
      {"duplicate-node", GL_APPLIED, "a1,a2", NULL, 0, NULL, NULL}}, NULL},
    {"constants over max-bytes", b_constants, "cse", "a1:Add a2:Add a3:Add s:Sum",
     "c1 c2 c3", "cse.max-bytes=7", 0, {{0}}, NULL},
    {"constant dtype and dims", b_constant_types, "cse", "n1:Identity n2:Identity "
     "n3:Identity s:Sum", "f i d", NULL, 0, {{0}}, NULL},
    {"big constants, default limit", b_big_constants, "cse", "a1:Add a2:Add s:Sub", "b1 b2",
     NULL, 0, {{0}}, NULL},
    {"big constants, raised limit", b_big_constants, "cse", "a1:Add s:Sub", "b1",
     "cse.max-bytes=4100", 2,
     {{"duplicate-constant", GL_APPLIED, NULL, "bytes", 4100, NULL, NULL},
      {"duplicate-node", GL_APPLIED, "a1,a2", NULL, 0, NULL, NULL}}, NULL},
    {"constant graph outputs", b_constant_outputs, "cse", "r:Relu", "c2 c3 c4", NULL, 2,
     {{"duplicate-constant", GL_APPLIED, NULL, "kept", 0, "c2", NULL},
      {"duplicate-constant", GL_REFUSED, NULL, "duplicate", 0, "c4",
       "output 'c4' is a graph output"}}, NULL},
    {"input with default", b_input_default, "cse", "a1:Add a2:Add s:Sub", "d c", NULL, 0,
     {{0}}, NULL},
};

Test(cse, cases)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cse_cases); i++)
        run_case(&cse_cases[i]);
}

/* ---- attributes: which pairs are the same ------------------------------------------------ */

static void set_tensor(gl_node *n, const char *name, gl_dtype dt, int32_t v)
{
    gl_tensor *t = gl_tensor_new(dt, 1, (int64_t[]){1});
    memcpy(gl_tensor_make_writable(t), &v, sizeof(v));
    gl_attr a = {.name = strdup(name), .type = GL_ATTR_TENSOR, .t = t};
    gl_node_take_attr(n, &a);
}

static void axis1(gl_node *n) { gl_node_set_attr_int(n, "axis", 1); }
static void axis2(gl_node *n) { gl_node_set_attr_int(n, "axis", 2); }
static void perm021(gl_node *n) { gl_node_set_attr_ints(n, "perm", (int64_t[]){0, 2, 1}, 3); }
static void perm012(gl_node *n) { gl_node_set_attr_ints(n, "perm", (int64_t[]){0, 1, 2}, 3); }
static void alpha_half(gl_node *n) { gl_node_set_attr_float(n, "alpha", 0.5f); }
static void alpha_quarter(gl_node *n) { gl_node_set_attr_float(n, "alpha", 0.25f); }
static void alpha_zero(gl_node *n) { gl_node_set_attr_float(n, "alpha", 0.0f); }
static void alpha_neg_zero(gl_node *n) { gl_node_set_attr_float(n, "alpha", -0.0f); }
static void pad_same(gl_node *n) { gl_node_set_attr_string(n, "auto_pad", "SAME_UPPER"); }
static void pad_valid(gl_node *n) { gl_node_set_attr_string(n, "auto_pad", "VALID"); }
static void value_f7(gl_node *n) { set_tensor(n, "value", GL_DT_FLOAT, 7); }
static void value_f8(gl_node *n) { set_tensor(n, "value", GL_DT_FLOAT, 8); }
static void value_i7(gl_node *n) { set_tensor(n, "value", GL_DT_INT32, 7); }
static void alpha_then_beta(gl_node *n)
{
    alpha_half(n);
    gl_node_set_attr_float(n, "beta", 2);
}

static void beta_then_alpha(gl_node *n)
{
    gl_node_set_attr_float(n, "beta", 2);
    alpha_half(n);
}
static void no_attrs(gl_node *n) { (void)n; }

static const struct {
    const char *what, *op;
    void (*set_a)(gl_node *), (*set_b)(gl_node *);
    bool merged;
} attr_cases[] = {
    {"int equal", "Softmax", axis1, axis1, true},
    {"int differs", "Softmax", axis1, axis2, false},
    {"ints equal", "Transpose", perm021, perm021, true},
    {"ints in another order", "Transpose", perm021, perm012, false},
    {"float equal", "Elu", alpha_half, alpha_half, true},
    {"float differs", "Elu", alpha_half, alpha_quarter, false},
    {"0.0 vs -0.0", "Elu", alpha_zero, alpha_neg_zero, false},
    {"string equal", "AveragePool", pad_same, pad_same, true},
    {"string differs", "AveragePool", pad_same, pad_valid, false},
    {"tensor equal", "ConstantOfShape", value_f7, value_f7, true},
    {"tensor bytes differ", "ConstantOfShape", value_f7, value_f8, false},
    {"tensor dtype differs", "ConstantOfShape", value_f7, value_i7, false},
    {"attribute order", "Selu", alpha_then_beta, beta_then_alpha, true},
    {"attribute missing", "Softmax", axis1, no_attrs, false},
    {"Constant nodes", "Constant", value_f7, value_f7, true},
};

Test(cse, attributes)
{
    for (size_t c = 0; c < GL_ARRAY_LEN(attr_cases); c++) {
        BEGIN;
        bool constant = strcmp(attr_cases[c].op, "Constant") == 0;
        gl_node *a = node_ex(g, attr_cases[c].op, "", "a", 1, constant ? 0 : 1, x);
        gl_node *b = node_ex(g, attr_cases[c].op, "", "b", 1, constant ? 0 : 1, x);
        attr_cases[c].set_a(a);
        attr_cases[c].set_b(b);
        tu_output(g, out(tu_node(g, "Add", "s", 2, out(a), out(b))));
        char *before = output_exprs(g);
        gl_decision_log log = {0};
        cr_assert_eq(run_pass(m, "cse", GL_BUDGET_UNLIMITED, &log, NULL, NULL), GL_OK);
        char *after = output_exprs(g);
        cr_assert_str_eq(after, before, "%s", attr_cases[c].what);
        bool merged = gl_find_node(g, "b") == NULL;
        cr_assert_eq(merged, attr_cases[c].merged, "%s: %s", attr_cases[c].what, before);
        cr_assert_eq(log.n, merged ? 1u : 0u, "%s", attr_cases[c].what);
        free(before);
        free(after);
        gl_decision_log_free(&log);
        gl_model_free(m);
    }
}

/* ---- dce cases ------------------------------------------------------------------------------ */

static gl_model *b_dead_chain(void)
{
    BEGIN;
    tu_input(g, "unused", GL_DT_FLOAT, 1, (int64_t[]){2});
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    tu_node(g, "Neg", "b", 1, out(a));
    tu_output(g, out(tu_node(g, "Sigmoid", "o", 1, x)));
    return m;
}

/* c1 read by a dead node, c2 by nothing, c3 a graph output, w an input with a default,
 * c4 read by a live node. */
static gl_model *b_dead_constants(void)
{
    BEGIN;
    gl_value *c1 = const_f32(g, "c1", 1, 2);
    const_f32(g, "c2", 3, 4);
    gl_value *c3 = const_f32(g, "c3", 5, 6);
    gl_graph_add_input(g, const_f32(g, "w", 7, 8));
    gl_value *c4 = const_f32(g, "c4", 9, 10);
    tu_node(g, "Add", "d", 2, x, c1);
    tu_output(g, out(tu_node(g, "Mul", "o", 2, x, c4)));
    tu_output(g, c3);
    return m;
}

static gl_model *b_partial_outputs(void)
{
    BEGIN;
    tu_output(g, node_ex(g, "Split", "", "s", 2, 1, x)->outputs[0]);
    return m;
}

/* p is read only inside an If's bodies; `live` says whether the If feeds an output. */
static gl_model *captured(bool live)
{
    BEGIN;
    gl_value *c = tu_input(g, "c", GL_DT_BOOL, 0, NULL);
    gl_node *p = tu_node(g, "Relu", "p", 1, x);
    gl_node *i = add_if(g, "i", c, out(p), NULL);
    if (live)
        tu_output(g, out(i));
    else
        tu_output(g, out(tu_node(g, "Sigmoid", "o", 1, x)));
    return m;
}

static gl_model *b_captured_live(void) { return captured(true); }
static gl_model *b_captured_dead(void) { return captured(false); }

static gl_model *b_side_effects(void)
{
    BEGIN;
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    node_ex(g, "Print", "com.acme", "pr", 1, 1, out(a));
    node_ex(g, "Sink", "", "z", 0, 1, x);
    tu_node(g, "RandomNormalLike", "r", 1, x);
    tu_output(g, out(tu_node(g, "Sigmoid", "o", 1, x)));
    return m;
}

/* A dead If whose then-branch holds a com.acme node: kept. */
static gl_model *b_dead_if_with_effects(void)
{
    BEGIN;
    gl_value *c = tu_input(g, "c", GL_DT_BOOL, 0, NULL);
    add_if(g, "i", c, x, "com.acme");
    tu_output(g, out(tu_node(g, "Sigmoid", "o", 1, x)));
    return m;
}

/* A live If whose then-branch has a node its output does not need. */
static gl_model *b_dead_in_body(void)
{
    BEGIN;
    gl_value *c = tu_input(g, "c", GL_DT_BOOL, 0, NULL);
    tu_output(g, out(add_if(g, "i", c, x, "")));
    return m;
}

static void add_function(gl_model *m, const char *name, const char *body_domain)
{
    m->functions = realloc(m->functions, (m->n_functions + 1) * sizeof(gl_function));
    gl_function *f = &m->functions[m->n_functions++];
    memset(f, 0, sizeof(*f));
    f->name = strdup(name);
    f->domain = strdup("local");
    f->body = gl_graph_new(m, NULL, name);
    gl_value *a = gl_add_value(f->body, "a");
    gl_graph_add_input(f->body, a);
    gl_graph_add_output(f->body, out(node_ex(f->body, "Op", body_domain, NULL, 1, 1, a)));
}

static gl_model *b_function_calls(void)
{
    BEGIN;
    add_function(m, "Pure", "");
    add_function(m, "Effect", "com.acme");
    node_ex(g, "Pure", "local", "f1", 1, 1, x);
    node_ex(g, "Effect", "local", "f2", 1, 1, x);
    tu_output(g, out(tu_node(g, "Sigmoid", "o", 1, x)));
    return m;
}

static const pass_case dce_cases[] = {
    {"dead chain", b_dead_chain, "dce", "o:Sigmoid", NULL, NULL, 2,
     {{"dead-node", GL_APPLIED, "b", "outputs", 1, NULL, NULL},
      {"dead-node", GL_APPLIED, "a", "outputs", 1, NULL, NULL}}, NULL},
    {"dead constants", b_dead_constants, "dce", "o:Mul", "c3 w c4", NULL, 3,
     {{"dead-node", GL_APPLIED, "d", NULL, 0, NULL, NULL},
      {"dead-initializer", GL_APPLIED, NULL, "bytes", 8, NULL, "'c1'"},
      {"dead-initializer", GL_APPLIED, NULL, "value", 0, "c2", NULL}}, NULL},
    {"partly used outputs", b_partial_outputs, "dce", "s:Split", NULL, NULL, 0, {{0}}, NULL},
    {"value read by a live If", b_captured_live, "dce", "p:Relu i:If", NULL, NULL, 0, {{0}},
     NULL},
    {"value read by a dead If", b_captured_dead, "dce", "o:Sigmoid", NULL, NULL, 2,
     {{"dead-node", GL_APPLIED, "i", NULL, 0, NULL, NULL},
      {"dead-node", GL_APPLIED, "p", NULL, 0, NULL, NULL}}, NULL},
    {"side effects", b_side_effects, "dce", "a:Relu pr:Print z:Sink o:Sigmoid", NULL, NULL, 3,
     {{"dead-node", GL_REFUSED, "pr", NULL, 0, NULL, "domain 'com.acme' may have side effects"},
      {"dead-node", GL_REFUSED, "z", NULL, 0, NULL, "no outputs"},
      {"dead-node", GL_APPLIED, "r", NULL, 0, NULL, NULL}}, NULL},
    {"dead If with effects inside", b_dead_if_with_effects, "dce", "i:If o:Sigmoid", NULL,
     NULL, 2, {{"dead-node", GL_REFUSED, "i", NULL, 0, NULL, "subgraphs"},
               {"dead-node", GL_REFUSED, NULL, "inside", 0, "i", "domain 'com.acme'"}}, NULL},
    {"dead node in a body", b_dead_in_body, "dce", "i:If", NULL, NULL, 1,
     {{"dead-node", GL_APPLIED, NULL, "inside", 0, "i", NULL}}, NULL},
    {"function calls", b_function_calls, "dce", "f2:Effect o:Sigmoid", NULL, NULL, 2,
     {{"dead-node", GL_REFUSED, "f2", NULL, 0, NULL, "domain 'local' may have side effects"},
      {"dead-node", GL_APPLIED, "f1", NULL, 0, NULL, NULL}}, NULL},
};

Test(dce, cases)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(dce_cases); i++)
        run_case(&dce_cases[i]);
}

/* ---- rewrite budgets: K rewrites exactly, decisions a prefix of the full run's ------------- */

/* n duplicate Relu/Neg pairs and a duplicate constant (cse), or n dead nodes (dce). */
static gl_model *budget_graph(void)
{
    BEGIN;
    gl_value *c1 = const_f32(g, "c1", 1, 2), *c2 = const_f32(g, "c2", 1, 2);
    gl_value *sum = x;
    for (int i = 0; i < 3; i++) {
        gl_node *a1 = tu_node(g, "Relu", NULL, 1, sum), *a2 = tu_node(g, "Relu", NULL, 1, sum);
        gl_node *b1 = tu_node(g, "Add", NULL, 2, out(a1), c1);
        gl_node *b2 = tu_node(g, "Add", NULL, 2, out(a2), c2);
        tu_node(g, "Neg", NULL, 1, out(a1)); /* dead */
        sum = out(tu_node(g, "Sub", NULL, 2, out(b1), out(b2)));
    }
    tu_output(g, sum);
    return m;
}

static size_t graph_size(const gl_graph *g) { return g->live_nodes + g->n_inits; }

static void check_budgets(const char *pass)
{
    gl_model *m = budget_graph();
    gl_decision_log full = {0};
    int64_t total;
    size_t size0 = graph_size(m->graph);
    cr_assert_eq(run_pass(m, pass, GL_BUDGET_UNLIMITED, &full, NULL, &total), GL_OK);
    cr_assert_gt(total, 2, "%s: the graph should give several rewrites", pass);
    cr_assert_eq(graph_size(m->graph), size0 - (size_t)total);
    gl_model_free(m);
    for (int64_t k = 0; k <= total + 1; k++) {
        m = budget_graph();
        char *before = output_exprs(m->graph);
        gl_decision_log log = {0};
        int64_t applied;
        cr_assert_eq(run_pass(m, pass, k, &log, NULL, &applied), GL_OK);
        int64_t expect = k < total ? k : total;
        cr_assert_eq(applied, expect, "%s:%lld", pass, (long long)k);
        /* Each rewrite removes exactly one node or constant. */
        cr_assert_eq(graph_size(m->graph), size0 - (size_t)expect, "%s:%lld", pass, (long long)k);
        char *after = output_exprs(m->graph);
        cr_assert_str_eq(after, before, "%s:%lld", pass, (long long)k);
        cr_assert_leq(log.n, full.n);
        for (size_t i = 0; i < log.n; i++) {
            char *a = joined_nodes(&log.items[i]), *b = joined_nodes(&full.items[i]);
            cr_assert_eq(log.items[i].id, full.items[i].id);
            cr_assert_str_eq(log.items[i].rule, full.items[i].rule);
            cr_assert_str_eq(log.items[i].reason, full.items[i].reason);
            cr_assert_str_eq(a, b, "%s:%lld decision %zu", pass, (long long)k, i);
            free(a);
            free(b);
        }
        free(before);
        free(after);
        gl_decision_log_free(&log);
        gl_model_free(m);
    }
    gl_decision_log_free(&full);
}

Test(cse, budget) { check_budgets("cse"); }
Test(dce, budget) { check_budgets("dce"); }

/* dce marks by position, last node first, which finds a sorted graph's producers in one
 * pass; a producer placed after its reader (the pass called without gl_pass_run's check,
 * or a body's order) must be followed all the same, or live nodes would go. */
Test(dce, producers_after_their_readers_stay)
{
    BEGIN;
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    gl_node *b = tu_node(g, "Neg", "b", 1, out(a));
    gl_node *c = tu_node(g, "Sigmoid", "c", 1, out(b));
    gl_node *d = tu_node(g, "Abs", "d", 1, out(a)); /* dead */
    tu_output(g, out(c));
    gl_graph_set_order(g, (gl_node *[]){c, d, b, a}, 4);
    gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find("dce"),
                       .budget = GL_BUDGET_UNLIMITED};
    cr_assert_eq(gl_pass_dce(g, &ctx), GL_OK, "%s", gl_error_message());
    cr_expect_eq(g->live_nodes, 3);
    cr_expect_not_null(gl_find_node(g, "a"));
    cr_expect_not_null(gl_find_node(g, "b"));
    cr_expect_null(gl_find_node(g, "d"));
    gl_model_free(m);
}

Test(cse, refuses_unsorted_graph)
{
    BEGIN;
    gl_node *a = tu_node(g, "Relu", "a", 1, x);
    gl_node *b = tu_node(g, "Neg", "b", 1, out(a));
    tu_output(g, out(b));
    gl_graph_set_order(g, (gl_node *[]){b, a}, 2);
    uint64_t fp = gl_graph_fingerprint(g);
    /* Every pass whose row says it needs a sorted graph is refused by gl_pass_run, before
     * it edits anything; the five that used to check by hand are all among them. */
    size_t n_passes, refused = 0;
    const gl_pass *table = gl_pass_table(&n_passes);
    for (size_t i = 0; i < n_passes; i++) {
        if (!(table[i].needs & GL_PASS_NEEDS_SORTED))
            continue;
        gl_pass_ctx ctx = {.model = m, .pass = &table[i], .budget = GL_BUDGET_UNLIMITED};
        cr_assert_eq(gl_pass_run(g, &ctx), GL_ERR_INPUT, "%s", table[i].name);
        cr_assert(strstr(gl_error_message(), "topological"), "%s", gl_error_message());
        cr_assert(strncmp(gl_error_message(), table[i].name, strlen(table[i].name)) == 0,
                  "%s", gl_error_message());
        cr_assert_eq(gl_graph_fingerprint(g), fp, "%s", table[i].name);
        refused++;
    }
    static const char *const checked_by_hand_before[] = {"constant-folding", "cse", "dce",
                                                         "layout", "transpose-push"};
    for (size_t i = 0; i < GL_ARRAY_LEN(checked_by_hand_before); i++)
        cr_assert(gl_pass_find(checked_by_hand_before[i])->needs & GL_PASS_NEEDS_SORTED, "%s",
                  checked_by_hand_before[i]);
    cr_assert_geq(refused, GL_ARRAY_LEN(checked_by_hand_before));
    gl_model_free(m);
}

/* ---- real models ----------------------------------------------------------------------- */

static size_t count_rule(const gl_decision_log *log, const char *rule, gl_verdict v)
{
    size_t n = 0;
    for (size_t i = 0; i < log->n; i++)
        n += strcmp(log->items[i].rule, rule) == 0 && log->items[i].verdict == v;
    return n;
}

/* cse then dce, each twice: the result computes the same, and the second runs find
 * nothing left to do. */
static void check_model(const char *path)
{
    gl_model *m;
    cr_assert_eq(gl_model_load(path, NULL, &m), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_toposort(m->graph, NULL), GL_OK, "%s: %s", path, gl_error_message());
    size_t nodes0 = m->graph->live_nodes, inits0 = m->graph->n_inits;
    uint64_t before = hash_graph_outputs(m->graph, NULL);
    gl_decision_log log = {0};
    size_t after_cse = 0;
    for (int round = 0; round < 2; round++) {
        for (int p = 0; p < 2; p++) {
            int64_t applied;
            cr_assert_eq(run_pass(m, p ? "dce" : "cse", GL_BUDGET_UNLIMITED, &log, NULL,
                                  &applied), GL_OK, "%s: %s", path, gl_error_message());
            cr_assert_eq(hash_graph_outputs(m->graph, NULL), before,
                         "%s: the outputs compute something else after %s", path,
                         p ? "dce" : "cse");
            if (round == 1)
                cr_assert_eq(applied, 0, "%s: a second %s still rewrote", path,
                             p ? "dce" : "cse");
            if (round == 0 && p == 0)
                after_cse = m->graph->live_nodes;
        }
    }
    fprintf(stderr, "%s: %zu nodes, %zu constants; cse merged %zu nodes (%zu refused) and "
            "%zu constants; dce removed %zu nodes and %zu constants -> %zu nodes\n", path,
            nodes0, inits0, nodes0 - after_cse, count_rule(&log, "duplicate-node", GL_REFUSED),
            count_rule(&log, "duplicate-constant", GL_APPLIED),
            count_rule(&log, "dead-node", GL_APPLIED),
            count_rule(&log, "dead-initializer", GL_APPLIED), m->graph->live_nodes);
    gl_decision_log_free(&log);
    gl_model_free(m);
}

/* check_model on every path of gb, then globfree; returns how many. */
static size_t check_globbed(glob_t *gb)
{
    for (size_t i = 0; i < gb->gl_pathc; i++)
        check_model(gb->gl_pathv[i]);
    size_t n = gb->gl_pathc;
    globfree(gb);
    return n;
}

Test(models, examples_compute_the_same)
{
    char pattern[4096];
    snprintf(pattern, sizeof(pattern), "%s/*/model.onnx", tu_src("examples"));
    glob_t gb = {0};
    glob(pattern, 0, NULL, &gb);
    cr_assert_gt(check_globbed(&gb), 0, "no example models under %s", pattern);
}

/* The in-tree models, and the shared ones when present. */
Test(models, corpora_compute_the_same, .timeout = 120)
{
    glob_t gb = {0};
    tu_glob_corpora("*/model.onnx", &gb);
    cr_assert_gt(check_globbed(&gb), 0, "no models in the corpora");
}
