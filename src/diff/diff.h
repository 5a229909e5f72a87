/* diff.h — what changed between two snapshots of a graph.
 *
 * Matching uses provenance first, names second: a node keeps its id across snapshot
 * clones, so the same id on both sides is the same node (possibly renamed, rewired or
 * with changed attributes). Nodes that exist on one side only are grouped by shared
 * origins (the loaded nodes they stand for): a group with nodes on both sides is a
 * replacement (N -> M, e.g. three nodes fused into one, or one Transpose split into two),
 * one with only new nodes is an addition, only old nodes a removal. With
 * GL_DIFF_MATCH_NAMES (two files loaded separately: ids mean nothing) nodes are matched
 * by name instead (first node of each name; no origin grouping there, since origin ids
 * of two separate loads mean nothing to each other: unmatched nodes are added/removed).
 *
 * Each fact is reported once:
 *  - an input slot is "rewired" when the value name it reads differs (a renamed value
 *    therefore shows on its producer as an output rename and on each reader as a rewire:
 *    the text of both nodes changed);
 *  - a type change of a matched node's output is an OUTPUT_TYPE detail on that node;
 *    GL_VALUE_TYPE_CHANGED covers the other values present by name on both sides (graph
 *    inputs, outputs of added/replaced nodes, bare values), and not initializers whose
 *    tensor changed (that is GL_INIT_CHANGED);
 *  - GL_GRAPH_INPUT/OUTPUT_CHANGED compare the lists of names (order and membership),
 *    not types: the type of an interface value is reported as above.
 * Not changes here: node order alone (a toposort step diffs as "no changes" although
 * gl_graph_fingerprint sees the new order), provenance alone, doc strings.
 */
#ifndef GL_DIFF_H
#define GL_DIFF_H

#include "ir/graph.h"
#include "util/strbuf.h"

#include <stdbool.h>
#include <stdio.h>

typedef enum gl_change_kind {
    GL_CHANGE_ADDED,    /* new nodes only */
    GL_CHANGE_REMOVED,  /* old nodes only */
    GL_CHANGE_REPLACED, /* old nodes -> new nodes (shared provenance) */
    GL_CHANGE_MODIFIED, /* the same node, something about it differs */
} gl_change_kind;

typedef enum gl_detail_kind {
    GL_DETAIL_RENAMED,      /* what: "name"; old/new: node names */
    GL_DETAIL_OP,           /* what: "op"; old/new: "Conv", "com.microsoft:FusedConv" */
    GL_DETAIL_ATTR_ADDED,   /* what: attribute name; old_text NULL */
    GL_DETAIL_ATTR_REMOVED, /* new_text NULL */
    GL_DETAIL_ATTR_CHANGED, /* values as text: "[1,1]", "0.5", "\"same\"", "float[3] {1, 2, 3}" */
    GL_DETAIL_INPUT,        /* what: "input 1"; old/new: value names ("" for none) */
    GL_DETAIL_OUTPUT,       /* what: "output 0"; an output value renamed/dropped ("") */
    GL_DETAIL_OUTPUT_TYPE,  /* what: output value name; old/new: "float[1,3]" */
} gl_detail_kind;

typedef struct gl_change_detail {
    gl_detail_kind kind;
    char *what;          /* owned */
    char *old_text;      /* owned; attribute/value/type rendered as text */
    char *new_text;      /* owned */
} gl_change_detail;

typedef struct gl_node_change {
    gl_change_kind kind;
    uint32_t *old_ids;   /* node ids in `before` */
    char **old_names;    /* parallel to old_ids, owned */
    char **old_ops;      /* parallel: op_type, "domain:op_type" outside ai.onnx; owned */
    size_t n_old;        /* old nodes in `before` order, new ones in `after` order */
    uint32_t *new_ids;   /* node ids in `after` */
    char **new_names;
    char **new_ops;
    size_t n_new;
    int64_t decision;    /* decision that made the new node(s): the first >= 0 among
                          * them; for MODIFIED only when it differs from before's;
                          * -1 if none/unknown (always for REMOVED) */
    gl_change_detail *details; /* GL_CHANGE_MODIFIED */
    size_t n_details;
} gl_node_change;

typedef enum gl_value_change_kind {
    GL_VALUE_TYPE_CHANGED,   /* same value name, dtype or shape differs */
    GL_INIT_ADDED,           /* initializer present only after */
    GL_INIT_REMOVED,
    GL_INIT_CHANGED,         /* same name, bytes/dtype/dims differ */
    GL_GRAPH_INPUT_CHANGED,  /* graph inputs/outputs list differs */
    GL_GRAPH_OUTPUT_CHANGED,
} gl_value_change_kind;

typedef struct gl_value_change {
    gl_value_change_kind kind;
    char *name;                /* value name; the graph's name for input/output lists */
    char *old_text, *new_text; /* types, "float[64,3,3,3] 6.8 KB" for initializers (more
                                * when that reads the same on both sides), "x, y" for
                                * the input/output lists; NULL on the side without it */
} gl_value_change;

struct gl_diff_index; /* private to diff.c */

typedef struct gl_diff {
    gl_node_change *nodes;   /* in the order of `after` (then removals in `before` order) */
    size_t n_nodes;
    gl_value_change *values;
    size_t n_values;
    size_t n_added, n_removed, n_replaced, n_modified; /* counts of node changes */
    struct gl_diff_index *index; /* id -> change, built by gl_diff_graphs (a diff made by
                                  * hand, index NULL, is searched linearly) */
} gl_diff;

typedef enum gl_diff_mode { GL_DIFF_MATCH_IDS = 0, GL_DIFF_MATCH_NAMES = 1 } gl_diff_mode;

/* Compare the top-level graphs (subgraph changes show as a MODIFIED detail on the node
 * holding them). NULL only on allocation failure. */
gl_diff *gl_diff_graphs(const gl_graph *before, const gl_graph *after, gl_diff_mode mode);
void gl_diff_free(gl_diff *d);
bool gl_diff_empty(const gl_diff *d);

/* Readable like a unified diff:
 *   1 added, 1 removed, 1 replaced, 1 modified, 2 value changes
 *   + Relu 'r2'                       (added; "[decision #3]" when known)
 *   ~ Conv 'c1'                       (modified; details indented below)
 *       name: 'c0' -> 'c1'
 *       op: Conv -> ConvInteger
 *       attr pads: [0,0,0,0] -> [1,1,1,1]
 *       attr + group: 2
 *       attr - dilations: [1,1]
 *       input 1: 'w' -> 'w2'         ((none) for an omitted input)
 *       output 0: 'y' -> 'y2'
 *       type 'y2': float[1,3] -> float[1,4]
 *   > Conv 'c1' + Relu 'r1'  =>  FusedConv 'c1_relu'   [decision #7]
 *   - Transpose 't1'
 *   = value 'x': float[1,3,224,224] -> float[1,224,224,3]
 *   + init 'w': float[3] 12 B = [1, 2, 3]   (its values; "- init" likewise;
 *                                       "= init 'w': a -> b" for a changed one)
 *   = graph inputs: x, y -> x          ("= graph outputs: ...")
 * First line: the summary "N added, N removed, N replaced, N modified, N value changes",
 * or "no changes". Node changes in diff order, then value changes. Names are quoted
 * with control characters and quotes escaped, so each change stays on its lines. */
void gl_diff_write_text(const gl_diff *d, FILE *f);

/* The same text entry by entry, for a view that formats only the rows it shows: entry 0
 * is the summary line (or "no changes"), then each node change (its line and one per
 * detail), then each value change (one line). gl_diff_text_entry_lines says how many
 * lines entry e has without formatting it; gl_diff_text_entry appends its text, every
 * line ending in '\n', to b. */
size_t gl_diff_text_entries(const gl_diff *d);
size_t gl_diff_text_entry_lines(const gl_diff *d, size_t e);
void gl_diff_text_entry(const gl_diff *d, size_t e, gl_strbuf *b);

/* A tensor's values as the diff shows a constant added or removed ("+ init 'k': int64[3]
 * 24 B = [1, 16, 256]"): up to 16 values whole, larger tensors their first 8 then "…"
 * (and min/max for floats); integers exact, floats %g, strings quoted and escaped, a
 * scalar bare. NULL when the bytes are not loaded. Malloc'd. */
char *gl_diff_tensor_values(const gl_tensor *t);

/* For the TUI and renders: how node `id` of `after` changed (NULL if unchanged). */
const gl_node_change *gl_diff_find_new(const gl_diff *d, uint32_t id);
const gl_node_change *gl_diff_find_old(const gl_diff *d, uint32_t id);

#endif
