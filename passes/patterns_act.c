/* patterns_act.c — activations exported as arithmetic: Gelu (erf form and the tanh
 * approximation), SiLU and HardSwish.
 *
 * Both Gelu forms end in x * 0.5 * P with P = 1 + Erf(...) or 1 + Tanh(...), and the
 * exporters associate that product every way: torch writes (x * P) * 0.5, Hugging
 * Face's NewGELU (0.5 * x) * P, others (P * 0.5) * x. times_half_x reads all three.
 */
#include "passes/patterns.h"

#include <stdio.h>
#include <string.h>

#define SQRT2 1.41421356237309504880
#define SQRT1_2 0.70710678118654752440
#define SQRT_2_PI 0.79788456080286535588
#define GELU_KAPPA 0.044715

/* The constant operand of a two-input node and the other one; false when neither (or
 * both) is a constant. */
static bool split_const(const gl_node *n, gl_value **c, gl_value **other)
{
    if (!n || n->n_inputs != 2)
        return false;
    bool c0 = gl_pt_const(n->inputs[0]) != NULL, c1 = gl_pt_const(n->inputs[1]) != NULL;
    if (c0 == c1)
        return false;
    *c = n->inputs[c0 ? 0 : 1];
    *other = n->inputs[c0 ? 1 : 0];
    return true;
}

static void append_variant(gl_pt_match *m, const char *text)
{
    size_t at = strlen(m->variant);
    snprintf(m->variant + at, sizeof(m->variant) - at, "%s", text);
}

/* P (output of `plus`, the 1 + ... node) times x times 0.5, in any association. */
static gl_pt_verdict times_half_x(gl_pt_match *m, const gl_node *plus, gl_value *x)
{
    gl_value *p = plus->outputs[0];
    gl_node *m1 = gl_pt_reader(p, "Mul");
    if (!m1)
        return gl_pt_refuse(m, "'%s' (1 + ...) is not multiplied by anything", p->name);
    gl_pt_add(m, m1);
    gl_value *o = gl_pt_other(m1, p), *half = NULL;
    gl_node *h = gl_pt_producer(o, "Mul"), *m2 = NULL;
    if (o == x) {
        m2 = gl_pt_reader(m1->outputs[0], "Mul");
        half = m2 ? gl_pt_other(m2, m1->outputs[0]) : NULL;
        append_variant(m, "; x * (1 + ...) first, * 0.5 last");
        if (!m2)
            return gl_pt_refuse(m, "'%s' = x * (1 + ...) is not multiplied by 0.5",
                                m1->outputs[0]->name);
        m->last = m2;
        gl_pt_add(m, m2);
        return gl_pt_expect_const(m, m2, half, x, "the factor", "half", 0.5);
    }
    if (h && gl_pt_other(h, x)) {
        half = gl_pt_other(h, x);
        append_variant(m, "; x * 0.5 first");
        m->last = m1;
        gl_pt_add(m, h);
        return gl_pt_expect_const(m, h, half, x, "the factor", "half", 0.5);
    }
    if (gl_pt_const(o)) {
        append_variant(m, "; (1 + ...) * 0.5 first, * x last");
        m2 = gl_pt_reader(m1->outputs[0], "Mul");
        if (!m2 || gl_pt_other(m2, m1->outputs[0]) != x)
            return gl_pt_refuse(m, "'%s' = (1 + ...) * 0.5 is not multiplied by '%s'",
                                m1->outputs[0]->name, x->name);
        m->last = m2;
        gl_pt_add(m, m2);
        return gl_pt_expect_const(m, m1, o, x, "the factor", "half", 0.5);
    }
    return gl_pt_refuse(m, "Mul '%s' multiplies '%s' (1 + ...) by '%s', which is neither "
                        "'%s', 0.5 nor '%s' * 0.5", m1->name, p->name, o ? o->name : "",
                        x->name, x->name);
}

/* The checks every activation rule ends with. */
static gl_pt_verdict finish(gl_pt_match *m, gl_value *x)
{
    gl_pt_verdict v = gl_pt_expect_float(m, x);
    if (v != GL_PT_MATCH)
        return v;
    m->in[0] = x;
    m->n_in = 1;
    return gl_pt_expect_private(m);
}

/* Both Gelu forms after their Erf or Tanh `fn`: x * 0.5 * (1 + fn(...)). */
static gl_pt_verdict gelu_tail(const gl_pt_ctx *c, gl_pt_match *m, const gl_node *fn,
                               gl_value *x, bool tanh_form)
{
    gl_node *plus = gl_pt_reader(fn->outputs[0], "Add");
    if (!plus)
        return gl_pt_refuse(m, "the output of %s '%s' is not added to 1", fn->op_type,
                            fn->name);
    gl_pt_add(m, plus);
    GL_PT_CHECK(gl_pt_expect_const(m, plus, gl_pt_other(plus, fn->outputs[0]), x, "the addend",
                                   "one", 1.0));
    GL_PT_CHECK(times_half_x(m, plus, x));
    /* ONNX's Gelu from opset 20, else graphlab's. */
    if (c->opset >= 20) {
        m->op = "Gelu";
        m->approximate = tanh_form ? "tanh" : NULL;
    } else {
        m->op = tanh_form ? "GeluTanh" : "Gelu";
        m->domain = "graphlab";
    }
    return finish(m, x);
}

gl_pt_verdict gl_pt_check_gelu_erf(const gl_pt_ctx *c, gl_node *erf, gl_pt_match *m)
{
    gl_node *scale = erf->n_inputs == 1 && erf->inputs[0] ? erf->inputs[0]->producer : NULL;
    gl_value *k, *x;
    bool div = gl_node_is(scale, "Div");
    if (div && scale->n_inputs != 2)
        return GL_PT_NONE;
    if (div) {
        k = scale->inputs[1];
        x = scale->inputs[0];
        if (!gl_pt_const(k) || gl_pt_const(x))
            return GL_PT_NONE;
    } else if (!gl_node_is(scale, "Mul") || !split_const(scale, &k, &x)) {
        return GL_PT_NONE;
    }
    snprintf(m->variant, sizeof(m->variant), "%s", div ? "Div by sqrt(2)" : "Mul by 1/sqrt(2)");
    gl_pt_add(m, erf);
    gl_pt_add(m, scale);
    GL_PT_CHECK(gl_pt_expect_float(m, x));
    GL_PT_CHECK(gl_pt_expect_const(m, scale, k, x, div ? "the divisor" : "the factor",
                                   div ? "sqrt2" : "inv_sqrt2", div ? SQRT2 : SQRT1_2));
    return gelu_tail(c, m, erf, x, false);
}

/* x^3 as Pow(x, 3), x * (x * x) or (x * x) * x: the nodes go into m, x into *x. */
static gl_pt_verdict cube_of(gl_pt_match *m, const gl_value *cube, gl_value **x)
{
    gl_node *p = cube->producer;
    if (gl_node_is(p, "Pow") && p->n_inputs == 2) {
        *x = p->inputs[0];
        gl_pt_add(m, p);
        return gl_pt_expect_const(m, p, p->inputs[1], *x, "the exponent", "exponent", 3.0);
    }
    for (int s = 0; gl_node_is(p, "Mul") && p->n_inputs == 2 && s < 2; s++) {
        gl_node *sq = gl_pt_producer(p->inputs[s], "Mul");
        gl_value *v = p->inputs[1 - s];
        if (sq && sq->n_inputs == 2 && sq->inputs[0] == v && sq->inputs[1] == v) {
            *x = v;
            gl_pt_add(m, p);
            gl_pt_add(m, sq);
            return GL_PT_MATCH;
        }
    }
    return gl_pt_refuse(m, "'%s' is not x^3 (Pow(x, 3), x * (x * x) or (x * x) * x)",
                        cube->name);
}

gl_pt_verdict gl_pt_check_gelu_tanh(const gl_pt_ctx *c, gl_node *tanh_node, gl_pt_match *m)
{
    gl_node *mb = tanh_node->n_inputs == 1 ? gl_pt_producer(tanh_node->inputs[0], "Mul") : NULL;
    gl_value *beta, *s;
    if (!split_const(mb, &beta, &s) || !gl_pt_producer(s, "Add"))
        return GL_PT_NONE;
    gl_node *sum = s->producer;
    gl_pt_add(m, tanh_node);
    gl_pt_add(m, mb);
    gl_pt_add(m, sum);
    snprintf(m->variant, sizeof(m->variant), "tanh form");
    /* sum = x + kappa * x^3: the operand made by a Mul with a constant is the cubic term. */
    gl_node *km = NULL;
    gl_value *x = NULL, *kappa = NULL, *cube = NULL;
    for (size_t slot = 0; slot < 2 && sum->n_inputs == 2 && !km; slot++) {
        gl_node *p = gl_pt_producer(sum->inputs[slot], "Mul");
        if (p && split_const(p, &kappa, &cube)) {
            km = p;
            x = sum->inputs[1 - slot];
        }
    }
    if (!km)
        return gl_pt_refuse(m, "Add '%s' is not x + 0.044715 * x^3: no operand is a product "
                            "with a constant", sum->name);
    gl_pt_add(m, km);
    gl_value *cube_x = NULL;
    GL_PT_CHECK(cube_of(m, cube, &cube_x));
    if (cube_x != x)
        return gl_pt_refuse(m, "Add '%s' adds '%s' to the cube of '%s', not of itself",
                            sum->name, x->name, cube_x->name);
    GL_PT_CHECK(gl_pt_expect_float(m, x));
    GL_PT_CHECK(gl_pt_expect_const(m, km, kappa, x, "the cubic coefficient", "kappa",
                                   GELU_KAPPA));
    GL_PT_CHECK(gl_pt_expect_const(m, mb, beta, x, "the factor", "sqrt_2_over_pi",
                                   SQRT_2_PI));
    return gelu_tail(c, m, tanh_node, x, true);
}

/* x * f(x) for a unary f: false (NONE) when no reader of f's output multiplies it by
 * f's input; else f and the Mul in m, the Mul last. */
static bool times_input(gl_node *f, gl_pt_match *m)
{
    gl_value *y = f->outputs[0], *x = f->n_inputs == 1 ? f->inputs[0] : NULL;
    for (size_t i = 0; x && y && i < y->n_uses; i++) {
        gl_node *r = y->uses[i].node;
        if (y->uses[i].slot >= 0 && gl_node_is(r, "Mul") && gl_pt_other(r, y) == x) {
            gl_pt_add(m, f);
            gl_pt_add(m, r);
            m->last = r;
            snprintf(m->variant, sizeof(m->variant), "x * %s(x)", f->op_type);
            return true;
        }
    }
    return false;
}

gl_pt_verdict gl_pt_check_silu(const gl_pt_ctx *c, gl_node *sigmoid, gl_pt_match *m)
{
    (void)c;
    if (!times_input(sigmoid, m))
        return GL_PT_NONE;
    m->op = "Silu";
    m->domain = "graphlab";
    return finish(m, sigmoid->inputs[0]);
}

gl_pt_verdict gl_pt_check_hardswish(const gl_pt_ctx *c, gl_node *hsig, gl_pt_match *m)
{
    if (!times_input(hsig, m))
        return GL_PT_NONE;
    /* HardSigmoid's defaults are alpha 0.2, beta 0.5: an exporter must write 1/6. */
    GL_PT_CHECK(gl_pt_expect_near(m, hsig, "alpha", "alpha",
                                  gl_node_attr_float(hsig, "alpha", 0.2f), 1.0 / 6.0));
    GL_PT_CHECK(gl_pt_expect_near(m, hsig, "beta", "beta",
                                  gl_node_attr_float(hsig, "beta", 0.5f), 0.5));
    m->op = "HardSwish";
    m->domain = c->opset >= 14 ? "" : "graphlab";
    return finish(m, hsig->inputs[0]);
}
