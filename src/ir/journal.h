/* journal.h — an undo journal for a trial run of edits on a graph.
 *
 * A pass that must try a sweep and may have to take it back (transpose-push's guard)
 * used to clone the whole model aside first: 70 MB and 0.35 s on the 100k-node ladder,
 * whose trial is always kept. With a journal the trial edits the graph itself, and the
 * journal keeps just enough to put back what the trial touched:
 *
 *     gl_journal *j = gl_journal_begin(m->graph);   // NULL: one is running already
 *     ... edits through the graph.h API ...
 *     gl_journal_commit(j);      // keep the edits
 *     gl_journal_rollback(j);    // or: the graph exactly as it was at begin
 *
 * "Exactly" means what a trial on a clone would have left behind: the same nodes in the
 * same slots (holes too), the same ids and next ids, every value's use list in the same
 * order, the same values, initializers (bytes and headers), types, attributes,
 * provenance, interface lists and names. (The name index is made again from the
 * restored lists, without the hints that speed up "name_k" searches, as a clone's is: a
 * hint the trial moved on would skip names that are free again. Model-level lists,
 * opsets and functions, are not journaled: the passes that run under a journal do not
 * edit them.)
 *
 * How: while a journal runs, the root graph carries it (g->journal; subgraphs find it
 * through their parents), and every mutator of graph.c asks for it and records, before
 * it writes, the state it is about to change, once per object (a first-touch snapshot):
 *  - a graph: its node, value, input, output, initializer and capture lists (pointer
 *    arrays, 8 bytes an entry), its next ids and live count. Objects with an id at or past
 *    the next id it had then were made by the trial: they are simply freed on rollback;
 *  - a node that existed: its inputs, outputs, implicit inputs and provenance;
 *  - a value that existed: its uses (in order), type, producer, interface flags, capture
 *    target, and a shared reference to its initializer header (so a write to the bytes
 *    copies them first: tensors are copy-on-write) ;
 *  - attributes and names, the parts kept as a log of changes (replaced, added, removed;
 *    renamed), undone newest first: an attribute may hold a subgraph, which must not be
 *    copied, and the old value is simply kept instead of freed.
 * Objects the trial removes are not freed while the journal runs either: rollback puts
 * them back, commit frees them.
 *
 * Passes that write into a value directly (a shape permuted in place, a constant's
 * header or bytes) call gl_journal_touch_value(g, v) first; outside a journal it costs a
 * pointer test. Nothing changes when no journal runs.
 */
#ifndef GL_JOURNAL_H
#define GL_JOURNAL_H

#include "ir/graph.h"

typedef struct gl_journal gl_journal;

/* Start journaling edits of `root` (a root graph) and of its subgraphs. NULL, nothing
 * started, when root is a subgraph or a journal runs already (journals do not nest). */
gl_journal *gl_journal_begin(gl_graph *root);
/* Keep every edit; frees what the trial removed and the journal. NULL: nothing. */
void gl_journal_commit(gl_journal *j);
/* Undo every edit since gl_journal_begin; frees the journal. NULL: nothing. */
void gl_journal_rollback(gl_journal *j);

/* The journal running for g's root graph, or NULL. */
gl_journal *gl_graph_journal(const gl_graph *g);

/* Before a direct write to v (its type, shape, initializer header or bytes), or to n
 * (fields the edit API does not reach), outside the edit API. Nothing without a journal,
 * or for an object made since the journal began (rollback frees it whole). */
void gl_journal_touch_value(const gl_graph *g, gl_value *v);
void gl_journal_touch_node(const gl_graph *g, gl_node *n);

/* ---- graph.c's side: what the mutators call while a journal runs (not for passes) ---- */

/* Before the graph's own lists, counters or name index change. */
void gl_journal_touch_graph(gl_journal *j, gl_graph *g);
void gl_journal_node(gl_journal *j, gl_node *n);
void gl_journal_value(gl_journal *j, gl_value *v);
/* The object leaves the graph: true when the journal keeps it (it existed at begin), so
 * the caller must not free it; false for an object the trial made (free it as usual). */
bool gl_journal_keeps_node(gl_journal *j, gl_node *n);
bool gl_journal_keeps_value(gl_journal *j, gl_value *v);
/* The object is renamed: true when the journal takes `old` (its old name, and for a
 * node its name_generated flag), to put back on rollback and free at commit; false for
 * an object the trial made (free it as usual). */
bool gl_journal_renames_node(gl_journal *j, gl_node *n, char *old, bool old_generated);
bool gl_journal_renames_value(gl_journal *j, gl_value *v, char *old);
/* n->attrs[i] is about to be replaced (*old: its contents, now the journal's) or removed,
 * or an attribute was appended. Only for nodes that existed at begin. */
void gl_journal_attr_replaced(gl_journal *j, gl_node *n, size_t i, const gl_attr *old);
void gl_journal_attr_removed(gl_journal *j, gl_node *n, size_t i, const gl_attr *old);
void gl_journal_attr_added(gl_journal *j, gl_node *n);
/* A subgraph the trial attaches to a node that existed: nothing in it is recorded, and
 * rollback frees it with the attribute that holds it. */
void gl_journal_graph_attached(gl_journal *j, gl_graph *sub);
/* Whether the journal records n (it existed at begin): attribute changes of a node the
 * trial made are not logged. */
bool gl_journal_has_node(gl_journal *j, const gl_node *n);

/* And what graph.c lends the journal to put things back (graph.c keeps these static
 * otherwise). */
void gl_ir_node_free(gl_node *n);
void gl_ir_value_free(gl_value *v);
/* The name index made again from the live nodes and values (in order), without suffix
 * hints (as a clone's). */
void gl_ir_index_rebuild(gl_graph *g);

#endif
