/* test_ui_search.c — the workbench's search query (ui/search.c), one row per case: a
 * query, a node, whether it matches. The nodes are the ones the issue names: a Transpose
 * with its perm, a grouped Conv, a Gelu with symbolic dims, a LeakyRelu's float alpha, a
 * Pad's string mode. Then "3 of 17": the count the status line shows after `/`, n, N. */
#include "testutil.h"

#include "ui/ui.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    const char *key;
    const char *domain, *op, *name;
    const char *out_type; /* its output's type, as tu_parse_type reads it */
    tu_attr attrs[4];
} fixture;

static const char *const pad_modes[] = {"constant", "reflect"};

static const fixture fixtures[] = {
    {"transpose", "", "Transpose", "/encoder/layers.0/Transpose_1", "float[1,56,56,64]",
     {{"perm", 'I', .n = 4, .ints = {0, 2, 3, 1}}}},
    {"conv", "", "Conv", "conv1", "float[1,64,56,56]",
     {{"kernel_shape", 'I', .n = 2, .ints = {3, 3}},
      {"strides", 'I', .n = 2, .ints = {2, 2}},
      {"group", 'i', .i = 32}}},
    {"gelu", "com.microsoft", "Gelu", "/h.0/mlp/act/Gelu", "float[N,seq,768]", {{0}}},
    {"leaky", "", "LeakyRelu", "leaky", "float[]", {{"alpha", 'f', .f = 0.2f}}},
    {"pad", "", "Pad", "pad", "float[?]", {{"mode", 's', .s = "Constant"},
                                          {"modes", 'S', .n = 2, .strs = pad_modes}}},
};

typedef struct search_case {
    const char *query;
    const char *node; /* a fixture's key */
    bool match;
} search_case;

static const search_case cases[] = {
    /* op, domain, name: a part of one, any case (as before) */
    {"Transpose", "transpose", true},
    {"transp", "transpose", true},
    {"/encoder/", "transpose", true},
    {"microsoft", "gelu", true},
    {"Conv", "transpose", false},
    {"", "conv", false},
    {"   ", "conv", false},
    /* attributes: ints, brackets and blanks allowed, the whole list */
    {"perm=0,2,3,1", "transpose", true},
    {"perm=[0, 2, 3, 1]", "transpose", true},
    {"PERM=0,2,3,1", "transpose", true},
    {"perm=0,3,1,2", "transpose", false},
    {"perm=0,2,3", "transpose", false},
    {"perm=0,2,3,1,0", "transpose", false},
    {"perm=", "transpose", true},
    {"perm=", "conv", false},
    {"perm=0,,2,3", "transpose", false},
    {"perm=a,b,c,d", "transpose", false},
    {"group=32", "conv", true},
    {"group=3", "conv", false},
    {"group=32,1", "conv", false},
    {"kernel_shape=3,3", "conv", true},
    {"kernel_shape=3", "conv", false},
    {"strides=2,2", "conv", true},
    {"group=32", "transpose", false},
    /* floats compare as float, strings in any case, a string whole */
    {"alpha=0.2", "leaky", true},
    {"alpha=.2", "leaky", true},
    {"alpha=0.21", "leaky", false},
    {"mode=constant", "pad", true},
    {"mode=const", "pad", false},
    {"modes=constant,REFLECT", "pad", true},
    {"modes=constant", "pad", false},
    /* an output's exact shape: numbers, '?' for any dim, names for symbolic dims */
    {"[1,64,56,56]", "conv", true},
    {"[1, 64, 56, 56]", "conv", true},
    {"[1,64,56]", "conv", false},
    {"[1,64,56,56,1]", "conv", false},
    {"[?,64,?,56]", "conv", true},
    {"[1,64,56,56]", "transpose", false},
    {"[N,seq,768]", "gelu", true},
    {"[n,SEQ,768]", "gelu", true},
    {"[1,seq,768]", "gelu", false},
    {"[]", "leaky", true},
    {"[]", "conv", false},
    {"[1]", "pad", false}, /* rank unknown: no shape matches */
    /* a run of dims side by side */
    {"64x56", "conv", true},
    {"1x64", "conv", true},
    {"56x56", "conv", true},
    {"56x56", "transpose", true},
    {"64x56", "transpose", false},
    {"1x64x56x56", "conv", true},
    {"1x64x56x56x1", "conv", false},
    {"?x768", "gelu", true},
    {"768x1", "gelu", false},
    /* "x" alone or in a name stays a name */
    {"x", "transpose", false},
    {"box", "conv", false},
    /* words: all must hold */
    {"Conv group=32", "conv", true},
    {"Conv group=32 [1,64,56,56]", "conv", true},
    {"Conv group=1", "conv", false},
    {"Transpose perm=0,2,3,1 56x64", "transpose", true},
    {"Transpose  perm=0,2,3,1   ", "transpose", true},
    {"=3", "conv", false},
};

static const fixture *fixture_named(const char *key)
{
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
        if (strcmp(fixtures[i].key, key) == 0)
            return &fixtures[i];
    cr_assert_fail("no fixture '%s'", key);
    return NULL;
}

static gl_node *make_node(gl_model *m, const fixture *f)
{
    gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 1, (int64_t[]){4});
    gl_node *n = gl_add_node(m->graph, f->op, f->domain, f->name, &x, 1, 1);
    cr_assert(n, "%s: node", f->key);
    gl_type_free(&n->outputs[0]->type);
    tu_parse_type(f->out_type, &n->outputs[0]->type);
    tu_apply_attrs(n, f->attrs);
    return n;
}

Test(search, queries_match_the_nodes_they_name)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const search_case *c = &cases[i];
        gl_model *m = tu_model(17);
        gl_node *n = make_node(m, fixture_named(c->node));
        cr_expect_eq(gl_ui_node_matches(n, c->query), c->match, "'%s' on %s: %s expected",
                     c->query, c->node, c->match ? "a match" : "no match");
        gl_model_free(m);
    }
}

/* ---- "3 of 17" ------------------------------------------------------------------------ */

static bool even(int row, void *ctx)
{
    (void)ctx;
    return row % 2 == 0;
}

/* n/N walk the matches; each find says which match it selected of how many. */
Test(search, a_find_counts_its_matches)
{
    gl_view v = {.selected = 0};
    cr_assert(gl_ui_list_find(&v, 9, 1, true, even, NULL));
    cr_expect_eq(v.selected, 0);
    cr_expect_eq(v.match_at, 1);
    cr_expect_eq(v.match_count, 5);
    cr_assert(gl_ui_list_find(&v, 9, 1, false, even, NULL));
    cr_expect_eq(v.selected, 2);
    cr_expect_eq(v.match_at, 2);
    cr_assert(gl_ui_list_find(&v, 9, -1, false, even, NULL));
    cr_assert(gl_ui_list_find(&v, 9, -1, false, even, NULL));
    cr_expect_eq(v.selected, 8, "N wraps to the last match");
    cr_expect_eq(v.match_at, 5);
    cr_expect_eq(v.match_count, 5);
}
