/* samegraph.c — tu_same_graph: two graphs equal down to what a fingerprint leaves out
 * (ids, node slots and holes, use-list order, next ids, provenance, the name index), for
 * the tests that take a graph back (the undo journal) and compare it with a clone; and
 * tu_expect_journal_exact, a pass run under a journal both ways. */
#include "testutil.h"

#include "ir/journal.h"
#include "passes/pass_table.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct diff {
    char *why;
    size_t len;
    bool found;
} diff;

static bool differ(diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool differ(diff *d, const char *fmt, ...)
{
    if (!d->found) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->why, d->len, fmt, ap);
        va_end(ap);
        d->found = true;
    }
    return false;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static uint32_t value_id(const gl_value *v) { return v ? v->id : UINT32_MAX; }

static bool same_value_list(diff *d, const char *what, gl_value *const *a, size_t na,
                            gl_value *const *b, size_t nb)
{
    if (na != nb)
        return differ(d, "%s: %zu entries against %zu", what, na, nb);
    for (size_t i = 0; i < na; i++)
        if (value_id(a[i]) != value_id(b[i]))
            return differ(d, "%s[%zu]: value id %u against %u", what, i, value_id(a[i]),
                          value_id(b[i]));
    return true;
}

static bool same_tensor(const gl_tensor *a, const gl_tensor *b)
{
    if (!a || !b)
        return a == b;
    return gl_tensor_equal(a, b) && a->external == b->external && same_str(a->name, b->name);
}

static bool same_graph(diff *d, const gl_graph *a, const gl_graph *b);

static bool same_value(diff *d, const gl_value *a, const gl_value *b)
{
    if (a->id != b->id || !same_str(a->name, b->name))
        return differ(d, "value '%s' (id %u) against '%s' (id %u)", a->name, a->id, b->name,
                      b->id);
    if (gl_type_fingerprint(&a->type) != gl_type_fingerprint(&b->type))
        return differ(d, "value '%s': another type", a->name);
    if (!same_tensor(a->init, b->init))
        return differ(d, "value '%s': another initializer", a->name);
    if ((a->producer ? a->producer->id : UINT32_MAX) != (b->producer ? b->producer->id : UINT32_MAX) ||
        a->producer_slot != b->producer_slot)
        return differ(d, "value '%s': another producer", a->name);
    if (a->is_input != b->is_input || a->n_output_refs != b->n_output_refs ||
        value_id(a->outer) != value_id(b->outer) || a->index != b->index)
        return differ(d, "value '%s': another interface flag, capture or index", a->name);
    if (a->n_uses != b->n_uses)
        return differ(d, "value '%s': %zu uses against %zu", a->name, a->n_uses, b->n_uses);
    for (size_t u = 0; u < a->n_uses; u++)
        if (a->uses[u].node->id != b->uses[u].node->id || a->uses[u].slot != b->uses[u].slot)
            return differ(d, "value '%s': use %zu is (node %u, slot %d) against (%u, %d)",
                          a->name, u, a->uses[u].node->id, a->uses[u].slot,
                          b->uses[u].node->id, b->uses[u].slot);
    const gl_value *fa = gl_find_value(a->graph, a->name), *fb = gl_find_value(b->graph, b->name);
    if (value_id(fa) != value_id(fb))
        return differ(d, "value '%s': the name index finds another value", a->name);
    char *ua = gl_unique_value_name(a->graph, a->name), *ub = gl_unique_value_name(b->graph, b->name);
    bool same = !strcmp(ua, ub);
    free(ua);
    free(ub);
    if (!same)
        return differ(d, "value '%s': a new value named after it gets another name", a->name);
    return true;
}

static bool same_node(diff *d, const gl_node *a, const gl_node *b)
{
    if (a->id != b->id || !same_str(a->name, b->name) || !same_str(a->op_type, b->op_type) ||
        !same_str(a->domain, b->domain) || a->name_generated != b->name_generated ||
        a->index != b->index)
        return differ(d, "node '%s' (id %u) against '%s' (id %u)", a->name, a->id, b->name,
                      b->id);
    char what[200];
    snprintf(what, sizeof(what), "node '%s' inputs", a->name);
    if (!same_value_list(d, what, a->inputs, a->n_inputs, b->inputs, b->n_inputs))
        return false;
    snprintf(what, sizeof(what), "node '%s' outputs", a->name);
    if (!same_value_list(d, what, a->outputs, a->n_outputs, b->outputs, b->n_outputs))
        return false;
    snprintf(what, sizeof(what), "node '%s' implicit inputs", a->name);
    if (!same_value_list(d, what, a->implicit, a->n_implicit, b->implicit, b->n_implicit))
        return false;
    if (a->prov.decision != b->prov.decision || a->prov.n_origins != b->prov.n_origins ||
        (a->prov.n_origins && memcmp(a->prov.origins, b->prov.origins,
                                     a->prov.n_origins * sizeof(uint32_t))))
        return differ(d, "node '%s': another provenance", a->name);
    if (a->n_attrs != b->n_attrs || gl_node_attrs_fingerprint(a) != gl_node_attrs_fingerprint(b))
        return differ(d, "node '%s': other attributes", a->name);
    for (size_t i = 0; i < a->n_attrs; i++) {
        if (!same_str(a->attrs[i].name, b->attrs[i].name))
            return differ(d, "node '%s': attribute %zu is '%s' against '%s'", a->name, i,
                          a->attrs[i].name, b->attrs[i].name);
        gl_graph *const *sa, *const *sb;
        size_t ka = gl_attr_subgraphs(&a->attrs[i], &sa), kb = gl_attr_subgraphs(&b->attrs[i], &sb);
        if (ka != kb)
            return differ(d, "node '%s': attribute '%s' holds other subgraphs", a->name,
                          a->attrs[i].name);
        for (size_t k = 0; k < ka; k++)
            if ((!sa[k]) != (!sb[k]) || (sa[k] && !same_graph(d, sa[k], sb[k])))
                return differ(d, "node '%s': body %zu of '%s' differs", a->name, k,
                              a->attrs[i].name);
    }
    const gl_node *fa = gl_find_node(a->graph, a->name), *fb = gl_find_node(b->graph, b->name);
    if ((fa ? fa->id : UINT32_MAX) != (fb ? fb->id : UINT32_MAX))
        return differ(d, "node '%s': the name index finds another node", a->name);
    return true;
}

static bool same_graph(diff *d, const gl_graph *a, const gl_graph *b)
{
    if (a->n_nodes != b->n_nodes || a->live_nodes != b->live_nodes ||
        a->n_values != b->n_values || a->next_node_id != b->next_node_id ||
        a->next_value_id != b->next_value_id)
        return differ(d, "graph '%s': %zu node slots (%zu live), %zu value slots, next ids "
                      "%u/%u against %zu (%zu), %zu, %u/%u", a->name, a->n_nodes,
                      a->live_nodes, a->n_values, a->next_node_id, a->next_value_id,
                      b->n_nodes, b->live_nodes, b->n_values, b->next_node_id,
                      b->next_value_id);
    for (size_t i = 0; i < a->n_values; i++) {
        if ((!a->values[i]) != (!b->values[i]))
            return differ(d, "graph '%s': value slot %zu is a hole in one", a->name, i);
        if (a->values[i] && !same_value(d, a->values[i], b->values[i]))
            return false;
    }
    for (size_t i = 0; i < a->n_nodes; i++) {
        if ((!a->nodes[i]) != (!b->nodes[i]))
            return differ(d, "graph '%s': node slot %zu is a hole in one", a->name, i);
        if (a->nodes[i] && !same_node(d, a->nodes[i], b->nodes[i]))
            return false;
    }
    for (size_t i = 0; i < a->n_nodes; i++) {
        if (!a->nodes[i])
            continue;
        char *ua = gl_unique_node_name(a, a->nodes[i]->name);
        char *ub = gl_unique_node_name(b, b->nodes[i]->name);
        bool same = !strcmp(ua, ub);
        free(ua);
        free(ub);
        if (!same)
            return differ(d, "graph '%s': a new node named after '%s' gets another name",
                          a->name, a->nodes[i]->name);
    }
    return same_value_list(d, "graph inputs", a->inputs, a->n_inputs, b->inputs, b->n_inputs) &&
           same_value_list(d, "graph outputs", a->outputs, a->n_outputs, b->outputs,
                           b->n_outputs) &&
           same_value_list(d, "initializers", a->inits, a->n_inits, b->inits, b->n_inits) &&
           same_value_list(d, "captures", a->captures, a->n_captures, b->captures,
                           b->n_captures);
}

bool tu_same_graph(const gl_graph *a, const gl_graph *b, char *why, size_t len)
{
    diff d = {why, len, false};
    if (len)
        why[0] = '\0';
    bool same = same_graph(&d, a, b);
    return same && !d.found;
}

/* Run `pass` on m under a journal; the graph it leaves. */
static gl_status run_journaled(gl_model *m, const char *pass, bool keep, gl_decision_log *log)
{
    gl_journal *j = gl_journal_begin(m->graph);
    cr_assert_not_null(j, "a journal begins on a model's graph");
    gl_pass_ctx ctx = {.model = m, .pass = gl_pass_find(pass), .step = 1,
                       .budget = GL_BUDGET_UNLIMITED, .log = log};
    cr_assert_not_null(ctx.pass, "%s is in the pass table", pass);
    gl_status st = gl_pass_run(m->graph, &ctx);
    if (keep)
        gl_journal_commit(j);
    else
        gl_journal_rollback(j);
    cr_assert_null(m->graph->journal, "the journal is gone");
    return st;
}

void tu_expect_journal_exact(const char *what, const gl_model *m, const char *pass)
{
    char why[400];
    /* Taken back: the graph as it was, in every respect a clone keeps. */
    gl_model *back = gl_model_clone(m), *ref = gl_model_clone(m);
    gl_decision_log log = {0};
    gl_status st = run_journaled(back, pass, false, &log);
    cr_expect_eq(st, GL_OK, "%s: %s under a journal: %s", what, pass, gl_error_message());
    cr_expect_eq(gl_graph_fingerprint(back->graph), gl_graph_fingerprint(ref->graph),
                 "%s: %s taken back: the fingerprint differs", what, pass);
    cr_expect(tu_same_graph(back->graph, ref->graph, why, sizeof(why)), "%s: %s taken back: %s",
              what, pass, why);
    cr_expect_eq(gl_graph_verify(back->graph, true), GL_OK, "%s: %s", what, gl_error_message());
    gl_decision_log_free(&log);
    /* Kept: what the pass leaves without a journal, down to ids and records. */
    gl_model *kept = gl_model_clone(m);
    gl_decision_log logs[2] = {{0}, {0}};
    st = run_journaled(kept, pass, true, &logs[0]);
    gl_pass_ctx ctx = {.model = ref, .pass = gl_pass_find(pass), .step = 1,
                       .budget = GL_BUDGET_UNLIMITED, .log = &logs[1]};
    gl_status st2 = gl_pass_run(ref->graph, &ctx);
    cr_expect_eq(st, st2, "%s: %s kept: another status", what, pass);
    cr_expect(tu_same_graph(kept->graph, ref->graph, why, sizeof(why)), "%s: %s kept: %s",
              what, pass, why);
    cr_expect_eq(logs[0].n, logs[1].n, "%s: %s kept: as many records", what, pass);
    for (size_t i = 0; i < logs[0].n && i < logs[1].n; i++)
        cr_expect_str_eq(logs[0].items[i].reason, logs[1].items[i].reason, "%s: record %zu",
                         what, i);
    gl_decision_log_free(&logs[0]);
    gl_decision_log_free(&logs[1]);
    gl_model_free(kept);
    gl_model_free(back);
    gl_model_free(ref);
}
