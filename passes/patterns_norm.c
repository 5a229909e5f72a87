/* patterns_norm.c — LayerNormalization exported as arithmetic (torch below opset 17):
 *
 *     m = ReduceMean(x) over the trailing axes, keepdims
 *     d = x - m
 *     v = ReduceMean(Pow(d, 2) or d * d), the same axes
 *     s = Sqrt(v + eps)
 *     y = (d / s, or d * Reciprocal(s)) * gamma + beta
 *
 * becomes LayerNormalization(x, gamma, beta) axis=-k epsilon=eps. gamma and beta must
 * cover exactly the normalized dims (ONNX Runtime's kernel checks their size), so those
 * dims must be known; the reductions' axes come from the attribute before opset 18 and
 * from the constant input after.
 */
#include "passes/patterns.h"

#include "ops/opkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The axes of a ReduceMean (of a value of known rank) are the last *k; refusals say why
 * not. */
static gl_pt_verdict trailing_axes(gl_pt_match *m, const gl_pt_ctx *c, const gl_node *r,
                                   int rank, int *k)
{
    int64_t buf[GL_MAX_RANK];
    const int64_t *axes = NULL;
    size_t n = 0;
    if (c->opset < 18) {
        axes = gl_attr_ints(r, "axes", &n);
    } else if (r->n_inputs > 1 && r->inputs[1]) {
        const gl_tensor *t = gl_pt_const(r->inputs[1]);
        if (!t || !gl_dtype_is_int(t->dtype))
            return gl_pt_refuse(m, "ReduceMean '%s': its axes are not a constant", r->name);
        for (int64_t i = 0; i < t->count && i < GL_MAX_RANK; i++)
            buf[i] = (int64_t)gl_tensor_get_f64(t, i);
        axes = buf;
        n = (size_t)(t->count < GL_MAX_RANK ? t->count : GL_MAX_RANK);
    }
    if (!axes || n == 0 || n > GL_MAX_RANK)
        return gl_pt_refuse(m, "ReduceMean '%s' reduces over every axis, not the trailing ones",
                            r->name);
    if (gl_node_attr_int(r, "keepdims", 1) != 1)
        return gl_pt_refuse(m, "ReduceMean '%s' has keepdims=0; the pattern keeps the dims",
                            r->name);
    bool seen[GL_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i];
        int64_t from_end = a < 0 ? -a : rank - a; /* 1 = the last axis */
        if (from_end < 1 || from_end > (int64_t)n || from_end > rank || seen[from_end - 1]) {
            gl_pt_number(m, "axis", (double)a);
            gl_pt_number(m, "rank", rank);
            return gl_pt_refuse(m, "ReduceMean '%s': axis %lld is not one of the last %zu "
                                "(rank %d)", r->name, (long long)a, n, rank);
        }
        seen[from_end - 1] = true;
    }
    *k = (int)n;
    return GL_PT_MATCH;
}

/* gamma or beta: float, covering exactly x's last k dims (leading 1s allowed). */
static gl_pt_verdict affine_operand(gl_pt_match *m, const gl_value *x, int k,
                                    const gl_value *p, const char *what)
{
    if (!p)
        return gl_pt_refuse(m, "%s is missing", what);
    const gl_type *t = &p->type;
    if (t->kind != GL_TYPE_TENSOR || t->dtype != GL_DT_FLOAT)
        return gl_pt_refuse(m, "%s '%s' is not known to be float", what, p->name);
    const gl_shape *xs = &x->type.shape, *ps = &t->shape;
    if (ps->rank == GL_RANK_UNKNOWN || ps->rank > xs->rank)
        return gl_pt_refuse(m, "%s '%s' has rank %d; expected at most %d", what, p->name,
                            ps->rank, xs->rank);
    for (int j = 0; j < ps->rank; j++) {
        int xd = xs->rank - ps->rank + j;
        int64_t want = xd < xs->rank - k ? 1 : xs->dims[xd].value, got = ps->dims[j].value;
        if (want < 0)
            return gl_pt_refuse(m, "dim %d of '%s' is not known: %s '%s' cannot be checked "
                                "against it", xd, x->name, what, p->name);
        if (got < 0 || got != want) {
            gl_pt_number(m, "dim", j);
            gl_pt_number(m, "found", (double)got);
            gl_pt_number(m, "expected", (double)want);
            return gl_pt_refuse(m, "%s '%s': dim %d is %lld, expected %lld (the normalized "
                                "dims of '%s', or 1 before them)", what, p->name, j,
                                (long long)got, (long long)want, x->name);
        }
    }
    return GL_PT_MATCH;
}

/* eps: one float, 0 < eps <= GL_PT_MAX_EPS. */
static gl_pt_verdict epsilon_of(gl_pt_match *m, const gl_node *add, const gl_value *e,
                                int rank, double *eps)
{
    const gl_tensor *t = gl_pt_const(e);
    if (!t)
        return gl_pt_refuse(m, "Add '%s': epsilon '%s' is not a constant", add->name,
                            e ? e->name : "");
    if (t->count != 1 || t->rank > rank || !gl_dtype_is_float(t->dtype)) {
        gl_pt_number(m, "elements", (double)t->count);
        return gl_pt_refuse(m, "Add '%s': epsilon '%s' is %lld %s values of rank %d; expected "
                            "one float", add->name, e->name, (long long)t->count,
                            gl_dtype_name(t->dtype), t->rank);
    }
    *eps = gl_tensor_get_f64(t, 0);
    gl_pt_number(m, "epsilon", *eps);
    char found[32];
    gl_pt_format(*eps, found, sizeof(found));
    if (!(*eps > 0 && *eps <= GL_PT_MAX_EPS))
        return gl_pt_refuse(m, "Add '%s': epsilon is %s, expected 0 < eps <= %g", add->name,
                            found, GL_PT_MAX_EPS);
    return GL_PT_MATCH;
}

/* The square of d: Pow(d, 2) or Mul(d, d). */
static gl_node *square_of(gl_pt_match *m, const gl_value *d, gl_pt_verdict *v)
{
    *v = GL_PT_MATCH;
    for (size_t i = 0; i < d->n_uses; i++) {
        gl_node *r = d->uses[i].node;
        if (gl_node_is(r, "Mul") && r->n_inputs == 2 && r->inputs[0] == d && r->inputs[1] == d)
            return r;
        if (gl_node_is(r, "Pow") && r->n_inputs == 2 && r->inputs[0] == d) {
            gl_pt_add(m, r);
            *v = gl_pt_expect_const(m, r, r->inputs[1], d, "the exponent", "exponent", 2.0);
            return r;
        }
    }
    *v = gl_pt_refuse(m, "'%s' = x - mean is not squared (Pow(d, 2) or d * d)", d->name);
    return NULL;
}

/* d / s or d * Reciprocal(s): the node making the normalized value. */
static gl_node *normalized(gl_pt_match *m, const gl_value *d, const gl_node *sqrt_node)
{
    gl_value *s = sqrt_node->outputs[0];
    gl_node *div = gl_pt_reader(s, "Div");
    if (div && div->n_inputs == 2 && div->inputs[0] == d && div->inputs[1] == s) {
        snprintf(m->variant, sizeof(m->variant), "Div by Sqrt");
        return div;
    }
    gl_node *rcp = gl_pt_reader(s, "Reciprocal");
    gl_node *mul = rcp ? gl_pt_reader(rcp->outputs[0], "Mul") : NULL;
    if (mul && gl_pt_other(mul, rcp->outputs[0]) == d) {
        snprintf(m->variant, sizeof(m->variant), "Mul by Reciprocal(Sqrt)");
        gl_pt_add(m, rcp);
        return mul;
    }
    return NULL;
}

gl_pt_verdict gl_pt_check_layernorm(const gl_pt_ctx *c, gl_node *mean, gl_pt_match *m)
{
    gl_value *x = mean->n_inputs >= 1 ? mean->inputs[0] : NULL, *mu = mean->outputs[0];
    gl_node *sub = NULL;
    for (size_t i = 0; x && mu && i < mu->n_uses && !sub; i++) {
        gl_node *r = mu->uses[i].node;
        if (gl_node_is(r, "Sub") && r->n_inputs == 2 && r->inputs[0] == x && r->inputs[1] == mu)
            sub = r;
    }
    if (!sub)
        return GL_PT_NONE;
    gl_pt_add(m, mean);
    gl_pt_add(m, sub);
    GL_PT_CHECK(gl_pt_expect_float(m, x));
    int rank = x->type.shape.rank, k = 0, k2 = 0;
    if (rank == GL_RANK_UNKNOWN)
        return gl_pt_refuse(m, "the rank of '%s' is not known: the rule needs its normalized "
                            "dims (run shape-inference first)", x->name);
    GL_PT_CHECK(trailing_axes(m, c, mean, rank, &k));

    gl_value *d = sub->outputs[0];
    gl_pt_verdict v;
    gl_node *sq = square_of(m, d, &v);
    GL_PT_CHECK(v);
    gl_pt_add(m, sq);
    gl_node *var = gl_pt_reader(sq->outputs[0], "ReduceMean");
    if (!var)
        return gl_pt_refuse(m, "the square '%s' is not averaged by a ReduceMean",
                            sq->outputs[0]->name);
    gl_pt_add(m, var);
    GL_PT_CHECK(trailing_axes(m, c, var, rank, &k2));
    if (k2 != k)
        return gl_pt_refuse(m, "ReduceMean '%s' averages %d trailing axes, '%s' %d", mean->name,
                            k, var->name, k2);
    gl_node *add = gl_pt_reader(var->outputs[0], "Add");
    gl_node *root = add ? gl_pt_reader(add->outputs[0], "Sqrt") : NULL;
    if (!root)
        return gl_pt_refuse(m, "the variance '%s' is not followed by Add(eps) and Sqrt",
                            var->outputs[0]->name);
    gl_pt_add(m, add);
    gl_pt_add(m, root);
    gl_node *norm = normalized(m, d, root);
    if (!norm)
        return gl_pt_refuse(m, "'%s' is not divided by Sqrt '%s' (nor multiplied by its "
                            "Reciprocal)", d->name, root->name);
    gl_pt_add(m, norm);
    gl_node *mg = gl_pt_reader(norm->outputs[0], "Mul");
    gl_node *ab = mg ? gl_pt_reader(mg->outputs[0], "Add") : NULL;
    if (!ab)
        return gl_pt_refuse(m, "the normalized '%s' is not followed by Mul(gamma) and "
                            "Add(beta)", norm->outputs[0]->name);
    gl_pt_add(m, mg);
    gl_pt_add(m, ab);
    m->last = ab;
    gl_value *gamma = gl_pt_other(mg, norm->outputs[0]), *beta = gl_pt_other(ab, mg->outputs[0]);

    double eps = 0;
    GL_PT_CHECK(epsilon_of(m, add, gl_pt_other(add, var->outputs[0]), rank, &eps));
    GL_PT_CHECK(affine_operand(m, x, k, gamma, "gamma"));
    GL_PT_CHECK(affine_operand(m, x, k, beta, "beta"));
    m->op = "LayerNormalization";
    m->domain = c->opset >= 17 ? "" : "graphlab";
    m->layernorm = true;
    m->axis = -k;
    m->epsilon = (float)eps;
    m->in[0] = x;
    m->in[1] = gamma;
    m->in[2] = beta;
    m->n_in = 3;
    return gl_pt_expect_private(m);
}
