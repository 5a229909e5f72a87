/* history.c — what the pipeline did to one node: for each step, whether it created,
 * changed, replaced or removed the node, read from the step diffs (matched by node id,
 * which survives snapshot clones) and, where the diff does not know the decision, from
 * the step's applied decisions that name the node. */
#include "ui/ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "Op 'a', Op 'b' +3 more" from parallel name/op arrays. */
static void name_list(char *buf, size_t len, char *const *ops, char *const *names, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 3 && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s '%s'", i ? ", " : "", ops[i], names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (n > 3 && used < len)
        snprintf(buf + used, len - used, " +%zu more", n - 3);
}

/* The applied decision of step k that names `name`, when the diff does not know. */
static const gl_decision *decision_naming(const gl_ui *ui, size_t k, const char *name,
                                          int64_t id)
{
    const gl_pipeline *p = ui->pipeline;
    const gl_snapshot *s = &p->steps[k];
    for (size_t i = 0; i < s->n_decisions; i++) {
        const gl_decision *d = &p->log.items[s->first_decision + i];
        if (id >= 0 && d->id == id)
            return d;
        if (id >= 0 || d->verdict != GL_APPLIED)
            continue;
        for (size_t j = 0; j < d->n_nodes; j++)
            if (name && strcmp(d->nodes[j], name) == 0)
                return d;
    }
    return NULL;
}

/* A change detail in a word or two: "attr pads", "input 1", "output type". */
static void detail_words(const gl_change_detail *x, char *buf, size_t len)
{
    switch (x->kind) {
    case GL_DETAIL_RENAMED: snprintf(buf, len, "name"); break;
    case GL_DETAIL_OP: snprintf(buf, len, "op"); break;
    case GL_DETAIL_ATTR_ADDED:
    case GL_DETAIL_ATTR_REMOVED:
    case GL_DETAIL_ATTR_CHANGED: snprintf(buf, len, "attr %s", x->what); break;
    case GL_DETAIL_OUTPUT_TYPE: snprintf(buf, len, "output type"); break;
    default: snprintf(buf, len, "%s", x->what); break;
    }
}

/* "changed (#2 push-through-Mul): input 0, output type", "replaced (#7 fuse) by
 * FusedConv 'x'": the verb, the decision when known, then what. The step's label,
 * shown beside it, names the pass. */
static void describe_change(const gl_ui *ui, size_t k, const gl_node_change *c, bool gone,
                            const char *name, gl_history_entry *e)
{
    const gl_decision *d = decision_naming(ui, k, name, c->decision);
    e->decision = d ? d->id : c->decision;
    char by[128] = "";
    if (d)
        snprintf(by, sizeof(by), " (#%lld %s)", (long long)d->id, d->rule);
    char what[200] = "";
    size_t used = 0;
    const char *verb = "";
    switch (c->kind) {
    case GL_CHANGE_ADDED: verb = "created"; break;
    case GL_CHANGE_REMOVED: verb = "removed"; break;
    case GL_CHANGE_REPLACED:
        verb = gone ? "replaced" : "created";
        used = (size_t)snprintf(what, sizeof(what), gone ? " by " : ", replacing ");
        if (gone)
            name_list(what + used, sizeof(what) - used, c->new_ops, c->new_names, c->n_new);
        else
            name_list(what + used, sizeof(what) - used, c->old_ops, c->old_names, c->n_old);
        break;
    case GL_CHANGE_MODIFIED: {
        verb = "changed";
        const char *sep = ":";
        for (size_t i = 0; i < c->n_details && used < sizeof(what); i++) {
            char words[96];
            detail_words(&c->details[i], words, sizeof(words));
            if (c->details[i].kind == GL_DETAIL_OUTPUT_TYPE && strstr(what, words))
                continue; /* the types of several outputs: said once */
            int w = snprintf(what + used, sizeof(what) - used, "%s %s", sep, words);
            used += w > 0 ? (size_t)w : 0;
            sep = ",";
        }
        break;
    }
    }
    snprintf(e->text, sizeof(e->text), "%s%s%s", verb, by, what);
}

size_t gl_ui_node_history(const gl_ui *ui, uint32_t id, gl_history_entry **out)
{
    *out = NULL;
    if (!ui->pipeline || !ui->step_diffs)
        return 0;
    size_t n = 0, cap = 0;
    bool created = false;
    for (size_t k = 1; k < ui->pipeline->n_steps; k++) {
        const gl_diff *d = ui->step_diffs[k];
        if (!d)
            continue;
        const gl_node_change *c = gl_diff_find_new(d, id);
        bool gone = false;
        const char *name = NULL;
        for (size_t i = 0; c && i < c->n_new; i++)
            if (c->new_ids[i] == id)
                name = c->new_names[i];
        if (!c) {
            c = gl_diff_find_old(d, id);
            gone = c && (c->kind == GL_CHANGE_REMOVED || c->kind == GL_CHANGE_REPLACED);
            if (!gone)
                continue;
            for (size_t i = 0; i < c->n_old; i++)
                if (c->old_ids[i] == id)
                    name = c->old_names[i];
        }
        GL_GROW(*out, cap, n + 1);
        gl_history_entry *e = &(*out)[n++];
        memset(e, 0, sizeof(*e));
        e->step = k;
        e->kind = c->kind;
        e->gone = gone;
        describe_change(ui, k, c, gone, name, e);
        created |= !gone && (c->kind == GL_CHANGE_ADDED || c->kind == GL_CHANGE_REPLACED);
        if (gone)
            break;
    }
    if (!created) {
        /* no step made it: it came from the file */
        GL_GROW(*out, cap, n + 1);
        memmove(*out + 1, *out, n * sizeof(**out));
        (*out)[0] = (gl_history_entry){.step = 0, .kind = GL_CHANGE_ADDED, .decision = -1};
        snprintf((*out)[0].text, sizeof((*out)[0].text), "loaded from the file");
        n++;
    }
    return n;
}

/* ---- every record that involved a node ---------------------------------------------- */

size_t gl_decisions_involving(const gl_decision *d, size_t n, const char *const *names,
                              size_t n_names, const int64_t *ids, size_t n_ids, size_t *out)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        bool hit = false;
        for (size_t j = 0; j < n_ids && !hit; j++)
            hit = ids[j] >= 0 && d[i].id == ids[j];
        for (size_t a = 0; a < d[i].n_nodes && !hit; a++)
            for (size_t b = 0; b < n_names && !hit; b++)
                hit = names[b] && d[i].nodes[a] && strcmp(d[i].nodes[a], names[b]) == 0;
        if (hit)
            out[count++] = i;
    }
    return count;
}

/* Node `id` in step k's graph: through the index kept for that step (or the shown one)
 * when there is one, else by a walk of the graph. On a 100k-node pipeline a walk per step
 * was most of the cost of opening a node. */
static const gl_node *step_node(const gl_ui *ui, size_t k, uint32_t id)
{
    const gl_graph *g = gl_ui_step_graph(ui, k);
    if (!g)
        return NULL;
    if (ui->index.graph == g)
        return gl_graph_index_node(&ui->index, id);
    for (size_t j = 0; j < ui->n_step_index; j++) /* steps that changed nothing share g */
        if (ui->step_index[j].graph == g)
            return gl_graph_index_node(&ui->step_index[j], id);
    return gl_find_node_by_id(g, id);
}

size_t gl_ui_node_decisions(const gl_ui *ui, uint32_t id, size_t **out)
{
    *out = NULL;
    const gl_pipeline *p = ui->pipeline;
    if (!p)
        return 0;
    gl_history_entry *h;
    size_t n_h = gl_ui_node_history(ui, id, &h);
    size_t n = 0, cap = 0;
    const gl_node *before = step_node(ui, 0, id);
    for (size_t k = 1; k < p->n_steps; k++) {
        const gl_node *after = step_node(ui, k, id);
        const gl_snapshot *s = &p->steps[k];
        const char *names[2] = {before ? before->name : NULL, after ? after->name : NULL};
        int64_t ids[4] = {-1, -1, -1, -1};
        size_t n_ids = 0;
        for (size_t i = 0; i < n_h && n_ids < 3; i++)
            if (h[i].step == k && h[i].decision >= 0)
                ids[n_ids++] = h[i].decision;
        if (after && after->prov.decision >= 0 && (!before || before->prov.decision !=
                                                               after->prov.decision))
            ids[n_ids++] = after->prov.decision;
        if (s->n_decisions && (names[0] || names[1] || n_ids)) {
            GL_GROW(*out, cap, n + s->n_decisions);
            size_t got = gl_decisions_involving(&p->log.items[s->first_decision],
                                                s->n_decisions, names, 2, ids, n_ids, *out + n);
            for (size_t i = 0; i < got; i++)
                (*out)[n + i] += s->first_decision;
            n += got;
        }
        before = after;
    }
    free(h);
    return n;
}
