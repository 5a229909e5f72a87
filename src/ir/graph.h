/* graph.h — the IR: model, graph, node, value, attribute, and the edit API.
 *
 * Ownership: a gl_model owns its root gl_graph and functions; a gl_graph owns its nodes,
 * values (all of them: inputs, initializers, node outputs, subgraph captures) and the
 * subgraphs hanging off its nodes' attributes. Pointers between these objects (producer,
 * uses, inputs) are non-owning.
 *
 * Invariants kept by the edit API (and checked by gl_graph_verify):
 *  - every value has at most one producer (a node output slot), and is otherwise a graph
 *    input, an initializer, a subgraph capture, or unused;
 *  - value->uses lists exactly the (node, slot) pairs that read it; a node reading the
 *    same value twice (Mul(x, x)) appears twice, once per slot;
 *  - a node's subgraphs read outer values through captures; the node lists those outer
 *    values as implicit inputs and each has a use with slot GL_USE_IMPLICIT, so ordering
 *    and deletion see them as edges;
 *  - names of live values are unique within a graph.
 *
 * Passes never poke at the arrays: they call the functions below. g->nodes may contain
 * NULL holes after gl_remove_node (so `for i < n_nodes` loops survive deletion of any
 * node); gl_graph_compact() squeezes them out between passes.
 */
#ifndef GL_GRAPH_H
#define GL_GRAPH_H

#include "ir/dtype.h"
#include "util/status.h"
#include "ir/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gl_model gl_model;
typedef struct gl_graph gl_graph;
typedef struct gl_node gl_node;
typedef struct gl_value gl_value;

/* ---- shapes and types ---------------------------------------------------------- */

#define GL_DIM_UNKNOWN (-1)
#define GL_RANK_UNKNOWN (-1)

typedef struct gl_dim {
    int64_t value; /* >= 0 known; GL_DIM_UNKNOWN otherwise */
    char *sym;     /* owned; symbolic name ("N", "seq") when value is unknown, else NULL */
} gl_dim;

typedef struct gl_shape {
    int rank;     /* GL_RANK_UNKNOWN when not even the rank is known */
    gl_dim *dims; /* owned, rank entries */
} gl_shape;

typedef enum gl_type_kind {
    GL_TYPE_NONE = 0, /* nothing known */
    GL_TYPE_TENSOR,   /* dtype (may be UNDEFINED) and shape */
    GL_TYPE_OPAQUE,   /* sequence/map/optional/sparse: kept as a packed TypeProto */
} gl_type_kind;

typedef struct gl_type {
    gl_type_kind kind;
    gl_dtype dtype;
    gl_shape shape;  /* rank GL_RANK_UNKNOWN when the shape is absent */
    gl_bytes opaque; /* GL_TYPE_OPAQUE: the serialized onnx.TypeProto, owned */
} gl_type;

void gl_shape_init_unknown(gl_shape *s);
void gl_shape_set_rank(gl_shape *s, int rank);   /* frees old dims; new dims unknown */
void gl_shape_free(gl_shape *s);                 /* back to unknown */
void gl_shape_copy(gl_shape *dst, const gl_shape *src);
bool gl_shape_equal(const gl_shape *a, const gl_shape *b);
void gl_dim_set_sym(gl_dim *d, const char *sym); /* value = unknown, sym = copy */
void gl_type_copy(gl_type *dst, const gl_type *src);
void gl_type_free(gl_type *t);
/* "float[N,3,224,224]", "float[?]" (unknown rank), "?" (nothing known). */
int gl_type_format(const gl_type *t, char *buf, size_t len);

/* ---- attributes ---------------------------------------------------------------- */

/* ONNX's AttributeProto.AttributeType numbering. */
typedef enum gl_attr_type {
    GL_ATTR_UNDEFINED = 0,
    GL_ATTR_FLOAT = 1,
    GL_ATTR_INT = 2,
    GL_ATTR_STRING = 3,
    GL_ATTR_TENSOR = 4,
    GL_ATTR_GRAPH = 5,
    GL_ATTR_FLOATS = 6,
    GL_ATTR_INTS = 7,
    GL_ATTR_STRINGS = 8,
    GL_ATTR_TENSORS = 9,
    GL_ATTR_GRAPHS = 10,
    GL_ATTR_SPARSE_TENSOR = 11,
    GL_ATTR_SPARSE_TENSORS = 12,
    GL_ATTR_TYPE_PROTO = 13,
    GL_ATTR_TYPE_PROTOS = 14,
} gl_attr_type;

typedef struct gl_attr {
    char *name;
    gl_attr_type type;
    char *ref_attr_name; /* inside function bodies: refers to the caller's attribute */
    char *doc_string;
    float f;
    int64_t i;
    gl_bytes s;          /* STRING; data[len] is always 0, so it reads as a C string */
    gl_tensor *t;
    gl_graph *g;         /* owned subgraph */
    size_t n;            /* element count of the list kinds below (and of opaque) */
    float *floats;
    int64_t *ints;
    gl_bytes *strings;
    gl_tensor **tensors;
    gl_graph **graphs;   /* owned subgraphs */
    gl_bytes *opaque;    /* SPARSE_TENSOR(S), TYPE_PROTO(S): packed messages, kept verbatim */
} gl_attr;

void gl_attr_free(gl_attr *a); /* frees the contents, not `a` itself */
/* "int", "floats", "graph", ... (ONNX's AttributeType names in lower case). */
const char *gl_attr_type_name(gl_attr_type t);
/* The subgraphs an attribute holds (GRAPH: one, GRAPHS: a->n, else none); *subs points
 * into the attribute. */
size_t gl_attr_subgraphs(const gl_attr *a, gl_graph *const **subs);

/* ---- values -------------------------------------------------------------------- */

#define GL_USE_IMPLICIT (-1) /* slot of a use made by a subgraph of the node */

typedef struct gl_use {
    gl_node *node;
    int slot; /* input index, or GL_USE_IMPLICIT */
} gl_use;

struct gl_value {
    char *name;        /* owned; unique in its graph */
    gl_graph *graph;
    gl_type type;
    char *doc_string;  /* from value_info / input / output */
    gl_node *producer; /* NULL for inputs, initializers, captures */
    int producer_slot;
    uint32_t id;       /* stable within the graph, never reused (here: no padding) */
    gl_use *uses;
    size_t n_uses, cap_uses;
    gl_tensor *init;   /* initializer bytes (owned): a constant, or a graph input's default */
    bool is_input;     /* listed in graph.input */
    int n_output_refs; /* how many times graph.output lists it (0 = not an output) */
    gl_value *outer;   /* capture in a subgraph: the value of the enclosing graph it reads.
                        * A capture is named after the value it captures; writers use
                        * outer->name. gl_replace_all_uses re-points ->outer and renames
                        * the capture to the new name when that name is free. */
    size_t index;      /* position in graph->values */
};

/* A constant: initializer that is not a graph input (or inputs are frozen). */
bool gl_value_is_constant(const gl_value *v);
/* v's rank as its type says; GL_RANK_UNKNOWN for NULL, a non-tensor or an absent shape. */
int gl_value_rank(const gl_value *v);
/* Whether v is one of g's outputs, inputs. */
bool gl_graph_has_output(const gl_graph *g, const gl_value *v);
bool gl_graph_has_input(const gl_graph *g, const gl_value *v);
/* Whether v's type gives its bytes (a tensor of a fixed-size dtype, every dim known),
 * and then *bytes. */
bool gl_value_static_bytes(const gl_value *v, size_t *bytes);
/* False when something we do not see as a node input may read the value: it is a graph
 * output or a subgraph reads it. Passes that delete or rename must respect this. */
bool gl_value_uses_comprehensive(const gl_value *v);
/* Number of explicit (slot >= 0) uses. */
size_t gl_value_explicit_uses(const gl_value *v);
/* The one node that reads v, in one slot or several (Mul(x, x)); NULL when v is NULL,
 * has no reader, several nodes read it or a subgraph reads it. Graph outputs do not
 * count: an output can still have a single reader, so a rule that removes v checks
 * n_output_refs (or gl_value_uses_comprehensive) itself. */
gl_node *gl_value_single_reader(const gl_value *v);

/* ---- nodes --------------------------------------------------------------------- */

typedef struct gl_provenance {
    uint32_t *origins; /* ids of the loaded nodes this node stands for (graph->origin_names).
                        * Read-only: a lone origin (every loaded node has one) points at
                        * `single` below, so change it through gl_node_set_provenance. */
    size_t n_origins;
    int64_t decision;  /* id of the decision that made it; -1: it came from the file */
    uint32_t single;   /* storage of a lone origin: no allocation per node */
} gl_provenance;

struct gl_node {
    char *name;         /* owned; generated ("Conv_12") when the file had none */
    char *op_type;
    char *domain;       /* "" for ai.onnx, never NULL (gl_domain_canonical) */
    char *doc_string;
    uint32_t id;        /* stable within the graph, never reused */
    bool name_generated;
    gl_graph *graph;
    gl_value **inputs;  /* NULL entry: an omitted optional input ("") */
    size_t n_inputs, cap_inputs;
    gl_value **outputs; /* NULL entry: an omitted optional output. A lone output's slot
                         * is `output_single` below (no allocation per node): the array
                         * is the graph's to allocate and free. */
    size_t n_outputs;
    gl_value *output_single;
    gl_attr *attrs;
    size_t n_attrs, cap_attrs;
    gl_value **implicit; /* distinct outer values read by this node's subgraphs */
    size_t n_implicit, cap_implicit;
    gl_provenance prov;
    size_t index;       /* position in graph->nodes */
};

/* Attribute lookup; NULL when absent. Read values through gl_node_attr_typed or the
 * accessors below, which never read an attribute as another type than its own. */
gl_attr *gl_node_attr(const gl_node *n, const char *name);
/* The attribute when it has `type` and holds its value (a list kind: an array for its n
 * elements; TENSOR, GRAPH: the object); NULL when absent, of another type, or a function
 * body's reference to its caller's attribute that has not been bound. Loaded models are
 * checked against the op's schema (ops/attrs.h), so for them "another type" cannot
 * happen; graphs built by passes and tests get a default instead of a misread. */
const gl_attr *gl_node_attr_typed(const gl_node *n, const char *name, gl_attr_type type);
/* The value of an INT / FLOAT / STRING attribute; `dflt` when absent or another type. */
int64_t gl_node_attr_int(const gl_node *n, const char *name, int64_t dflt);
float gl_node_attr_float(const gl_node *n, const char *name, float dflt);
const char *gl_node_attr_string(const gl_node *n, const char *name, const char *dflt);
/* Setters replace an attribute of that name or add one. */
void gl_node_set_attr_int(gl_node *n, const char *name, int64_t v);
void gl_node_set_attr_float(gl_node *n, const char *name, float v);
void gl_node_set_attr_string(gl_node *n, const char *name, const char *v);
void gl_node_set_attr_ints(gl_node *n, const char *name, const int64_t *v, size_t count);
void gl_node_set_attr_floats(gl_node *n, const char *name, const float *v, size_t count);
/* Copies src's int, float, string, ints and floats attributes onto dst (as the setters do);
 * false, copying nothing more, at the first of another kind (a graph, a tensor), which a
 * rewrite making a copy of a node checks for before it edits anything. */
bool gl_node_copy_plain_attrs(gl_node *dst, const gl_node *src);
/* Takes ownership of *a (its contents move into the node; *a is zeroed). Subgraphs in
 * it get parent = n->graph and parent_node = n, and n->implicit is brought in line with
 * their captures (so a loader may build a body before or after attaching it). */
void gl_node_take_attr(gl_node *n, gl_attr *a);
/* Copies of every attribute of src (subgraphs cloned into dst's graph, tensors shared)
 * onto dst, replacing those of the same names. */
void gl_node_copy_attrs(gl_node *dst, const gl_node *src);
bool gl_node_remove_attr(gl_node *n, const char *name);
/* "Is n an X": the node is in the default domain and its op_type equals `op` (false for
 * NULL). The one way to ask it. */
bool gl_node_is(const gl_node *n, const char *op);

/* ONNX spells the default domain "" or "ai.onnx" (and an absent domain means it too). The
 * IR stores "" for it: every constructor of a node, a function or an opset import
 * normalises its domain with this, so code past them compares with "" (or asks
 * gl_node_is) and never meets "ai.onnx" or NULL; gl_graph_verify checks it. */
const char *gl_domain_canonical(const char *domain);
/* The domain as messages name it: "ai.onnx" for the default one. */
const char *gl_domain_display(const char *domain);
/* "Is n an X" for an op of another domain (`domain` "" or "ai.onnx": gl_node_is). */
bool gl_node_is_in(const gl_node *n, const char *domain, const char *op);


/* ---- graphs and models --------------------------------------------------------- */

struct gl_name_index; /* private to graph.c */

struct gl_graph {
    char *name;
    char *doc_string;
    gl_model *model;       /* the model this graph belongs to (not owned) */
    gl_graph *parent;      /* enclosing graph of a subgraph, else NULL */
    gl_node *parent_node;  /* node whose attribute holds this subgraph */

    gl_node **nodes;       /* execution order; NULL holes after removal */
    size_t n_nodes, cap_nodes;
    gl_value **values;     /* every value of this graph (owned); NULL holes */
    size_t n_values, cap_values;
    gl_value **inputs;     /* graph.input, in order */
    size_t n_inputs, cap_inputs;
    gl_value **outputs;    /* graph.output, in order (a value may repeat) */
    size_t n_outputs, cap_outputs;
    gl_value **inits;      /* values with initializer data, in file order */
    size_t n_inits, cap_inits;
    gl_value **captures;   /* subgraph only: values standing for outer values */
    size_t n_captures, cap_captures;

    gl_bytes *sparse_inits; /* packed SparseTensorProto, kept verbatim */
    size_t n_sparse_inits;
    gl_bytes *quant_annotations; /* packed TensorAnnotation, kept verbatim */
    size_t n_quant_annotations;

    char **origin_names;   /* name of the loaded node with id i (provenance); read-only:
                            * made by gl_graph_record_origins, shared with clones */
    size_t n_origin_names;
    struct gl_origin_block *origin_block; /* owns origin_names and their text */

    uint32_t next_node_id, next_value_id;
    size_t live_nodes;     /* nodes that are not holes */
    struct gl_name_index *index;
    /* Root graph only: the undo journal of a trial running on it (ir/journal.h), else
     * NULL. Not owned; every mutator below records into it before it writes. */
    struct gl_journal *journal;
};

typedef struct gl_opset {
    char *domain; /* "" for ai.onnx */
    int64_t version;
} gl_opset;

typedef struct gl_kv {
    char *key, *value;
} gl_kv;

typedef struct gl_function {
    char *name, *domain, *doc_string;
    char **attributes; /* attribute parameter names */
    size_t n_attributes;
    gl_opset *opsets;
    size_t n_opsets;
    gl_graph *body;    /* inputs/outputs are the formal parameters (untyped) */
} gl_function;

struct gl_model {
    int64_t ir_version;
    gl_opset *opsets;
    size_t n_opsets;
    char *producer_name, *producer_version, *domain, *doc_string;
    int64_t model_version;
    bool has_model_version;
    gl_kv *metadata;
    size_t n_metadata;
    gl_graph *graph;
    gl_function *functions;
    size_t n_functions;
    gl_bytes *training_info; /* packed TrainingInfoProto, kept verbatim */
    size_t n_training_info;
    char *path;              /* file it came from, for messages ("<memory>" if none) */
    char *dir;               /* folder of path: the base of external data */
    bool freeze_inputs;      /* treat inputs with defaults as constants */
    /* Owned, NULL until the memory-plan pass made one (ir/memplan.h); copied by clone. */
    struct gl_memory_plan *memory_plan;
    /* The fingerprint of the root graph as a whole type inference left it (the
     * shape-inference pass, not stopped by a budget); 0: none. Inferring a graph that
     * still has this fingerprint changes nothing, so a pass about to do so may skip it
     * (constant folding). Written by the pipeline, which fingerprints every step anyway;
     * any edit changes the fingerprint, so a stale value is never mistaken for a current
     * one. Copied by clone (a clone has the same fingerprint). */
    uint64_t types_fingerprint;
};

gl_model *gl_model_new(void);
void gl_model_free(gl_model *m);
/* Deep copy; tensor bytes are shared copy-on-write. */
gl_model *gl_model_clone(const gl_model *m);
/* An opset import of `domain` (copied, canonical). */
gl_opset gl_opset_make(const char *domain, int64_t version);
/* Version of `domain` ("" = ai.onnx) imported by the model, or 0 when not imported. */
int64_t gl_model_opset(const gl_model *m, const char *domain);
/* The opset of `domain` for nodes in the body of `f` (NULL: the main graph): the
 * function's own import, else the model's; the default domain counts as version 1 when
 * nothing imports it. */
int64_t gl_scope_opset(const gl_model *m, const gl_function *f, const char *domain);
void gl_model_set_opset(gl_model *m, const char *domain, int64_t version);
/* The model-local function `name` of `domain` ("" = ai.onnx), or NULL. */
gl_function *gl_model_function(const gl_model *m, const char *domain, const char *name);
/* A new, empty function (no attributes, opsets or body nodes; its body graph exists);
 * NULL when the model has one of that domain and name already. The pointer is valid
 * until the next function is added. */
gl_function *gl_model_add_function(gl_model *m, const char *domain, const char *name);

/* A subgraph is gl_graph_new(m, parent, name); set its parent_node to the node that
 * will hold it before resolving names in it, or attach it with gl_node_take_attr. */
gl_graph *gl_graph_new(gl_model *m, gl_graph *parent, const char *name);
void gl_graph_free(gl_graph *g);

/* Make room for that many more nodes and values (arrays and name index) so that adding
 * them never regrows or rehashes: for loaders, which know the counts up front. */
void gl_graph_reserve(gl_graph *g, size_t more_nodes, size_t more_values);

/* origin_names := the name of every live node, by id (what a loader calls once its nodes
 * are made). The names go in one block that clones share instead of copying. */
void gl_graph_record_origins(gl_graph *g);

/* Lookup by name (O(1)); NULL when absent. gl_find_node finds the first node so named. */
gl_value *gl_find_value(const gl_graph *g, const char *name);
gl_node *gl_find_node(const gl_graph *g, const char *name);
/* The node with this id (a scan: for the workbench's lookups, not for passes' loops);
 * NULL when absent or g is NULL. */
gl_node *gl_find_node_by_id(const gl_graph *g, uint32_t id);
/* Resolve a name as a subgraph sees it: this graph first, then enclosing graphs; a value
 * found outside becomes a capture of this graph (and of every graph in between), and the
 * node holding each subgraph gets it as an implicit input. NULL when nowhere. */
gl_value *gl_resolve_value(gl_graph *g, const char *name);

/* A fresh value named `name` if free, else `name` + "_<k>" for the first free k. */
gl_value *gl_add_value(gl_graph *g, const char *name);
/* Rename (keeps uniqueness: returns GL_ERR_INPUT if taken). */
gl_status gl_rename_value(gl_graph *g, gl_value *v, const char *name);
/* Rename a node, keeping the name index right. Node names may repeat (files repeat
 * them), so any name is accepted; a node's name is never written any other way, since
 * the index borrows it (and a clone copies the index as it stands). */
void gl_rename_node(gl_graph *g, gl_node *n, const char *name);
/* A free name derived from `hint` ("hint", "hint_1", ...), returned malloc'd. */
char *gl_unique_value_name(const gl_graph *g, const char *hint);
char *gl_unique_node_name(const gl_graph *g, const char *hint);

/* ---- the edit API ---------------------------------------------------------------- */

/* Append a node. `inputs` may contain NULL (omitted optional). Each of the n_outputs
 * outputs is a fresh value named "<name>_out<i>" (made unique). `name` NULL or "" gets a
 * generated "<op>_<id>". Provenance starts empty (origins = the node itself is NOT
 * implied); callers set prov via gl_node_set_provenance. */
gl_node *gl_add_node(gl_graph *g, const char *op_type, const char *domain, const char *name,
                     gl_value *const *inputs, size_t n_inputs, size_t n_outputs);
/* (A non-empty `name` is kept verbatim, even when another node has it: files may repeat
 * node names. Passes that want a fresh one pass gl_unique_node_name(g, hint). Inputs
 * must be values of `g` (use gl_resolve_value in subgraphs): otherwise NULL and a
 * message.) */
/* Like gl_add_node, but output i is a fresh value named exactly output_names[i]; a NULL
 * or "" name is an omitted optional output (a NULL slot). When a name is already a
 * value of `g` (or repeats among output_names), nothing is added: NULL, GL_ERR_INPUT
 * message "... output <i> '<name>': name taken". The loader builds nodes this way, so
 * no output is created under one name and renamed to another. */
gl_node *gl_add_node_named(gl_graph *g, const char *op_type, const char *domain,
                           const char *name, gl_value *const *inputs, size_t n_inputs,
                           const char *const *output_names, size_t n_outputs);
/* gl_add_node_named for loaders that hold malloc'd strings already (an unpacked
 * protobuf's): *op_type, a non-empty *name and the non-empty output names are taken
 * over instead of copied, and those pointers are set to NULL in the caller's variables
 * and array. On failure nothing is taken. `domain` is copied. */
gl_node *gl_add_node_take(gl_graph *g, char **op_type, const char *domain, char **name,
                          gl_value *const *inputs, size_t n_inputs, char **output_names,
                          size_t n_outputs);
/* Remove a node whose outputs have no uses and are not graph outputs; its output values
 * are freed, its input uses dropped. GL_ERR_INPUT (graph unchanged) otherwise. */
gl_status gl_remove_node(gl_graph *g, gl_node *n);
/* Make output `slot` an omitted optional output (NULL), as the file's "" says: its
 * value must be unused and not a graph output; it is freed. GL_ERR_INPUT otherwise. */
gl_status gl_drop_output(gl_graph *g, gl_node *n, size_t slot);
/* Rewire input `slot` (slot == n->n_inputs appends) to `v` (NULL = omitted). */
gl_status gl_set_input(gl_graph *g, gl_node *n, size_t slot, gl_value *v);
/* Drop trailing inputs so the node has `count` inputs. */
void gl_truncate_inputs(gl_graph *g, gl_node *n, size_t count);
/* Move the value produced at src's output src_slot to dst's output dst_slot (consumers
 * and graph-output status follow the value, so graph output names never change). dst's
 * previous value there must be unused and not an output; it is freed. src gets a fresh
 * value with the same type at src_slot. Like ONNX Runtime's MoveOutput. */
gl_status gl_move_output(gl_graph *g, gl_node *src, size_t src_slot, gl_node *dst,
                         size_t dst_slot);
/* A new constant value holding `t` (ownership taken); name from `name` made unique. */
gl_value *gl_add_initializer(gl_graph *g, const char *name, gl_tensor *t);
/* Turn a node's output into a constant holding `t` (constant folding): the producer's
 * output slot becomes omitted (NULL), `v` gets `t` as its initializer (ownership taken
 * on success) and is appended to g->inits, and its type becomes t's. Uses, name and
 * graph-output status stay. v must belong to g and be neither an input, a capture nor
 * already an initializer: GL_ERR_INPUT otherwise, nothing changed, t not taken. Remove
 * the producer (gl_remove_node) once none of its remaining outputs is used. */
gl_status gl_value_make_constant(gl_graph *g, gl_value *v, gl_tensor *t);
/* Drop a value that no node produces, has no uses and is not an input/output: an
 * initializer, a capture (the holder's implicit inputs follow) or a bare value. */
gl_status gl_remove_value(gl_graph *g, gl_value *v);
/* Every explicit and implicit use of `from` now reads `to`. Graph-output status does not
 * move (output names never change): callers deal with outputs themselves. */
gl_status gl_replace_all_uses(gl_graph *g, gl_value *from, gl_value *to);
/* Graph interface. */
void gl_graph_add_input(gl_graph *g, gl_value *v);
void gl_graph_add_output(gl_graph *g, gl_value *v);
/* Replace the i-th graph output by `v` (for passes that must re-point an output);
 * i >= n_outputs appends. */
void gl_graph_set_output(gl_graph *g, size_t i, gl_value *v);

void gl_node_set_provenance(gl_node *n, const uint32_t *origins, size_t n_origins,
                            int64_t decision);
/* Union of the provenance of `srcs` (for a node that replaces them). */
void gl_node_inherit_provenance(gl_node *n, gl_node *const *srcs, size_t n_srcs,
                                int64_t decision);

/* Squeeze NULL holes out of nodes/values, keeping order; updates ->index. */
void gl_graph_compact(gl_graph *g);
/* Put the live nodes in the given order (a permutation of the live nodes; holes go).
 * GL_ERR_INTERNAL, graph unchanged, when `order` is not such a permutation. */
gl_status gl_graph_set_order(gl_graph *g, gl_node *const *order, size_t count);

/* Check every invariant above plus: no dangling input (an input that is neither produced,
 * a graph input, an initializer nor a capture), every graph output produced or an
 * input/initializer, nodes in topological order (counting implicit uses) unless
 * `allow_unsorted`. Recurses into subgraphs. GL_OK, or GL_ERR_INTERNAL with a message
 * naming the node and value. */
gl_status gl_graph_verify(const gl_graph *g, bool allow_unsorted);

/* Iterate live nodes, surviving removals: `gl_foreach_node(g, i, n) { ... }`. */
#define gl_foreach_node(g, i, n)                                                          \
    for (size_t i = 0; i < (g)->n_nodes; i++)                                               \
        if (((n) = (g)->nodes[i]) == NULL) {                                                \
        } else

/* A hash of everything that makes the graph what it is (nodes in order with op, domain,
 * name, inputs, outputs and attributes incl. subgraphs; value names and types;
 * initializer bytes; graph inputs/outputs): equal fingerprints mean a pass changed
 * nothing. Not the ids or provenance. (fingerprint.c) */
uint64_t gl_graph_fingerprint(const gl_graph *g);
/* Hashes of a node's attributes and of a type alone, for signatures that leave names
 * out (the fusion pass's: two groups of the same ops, attributes and shapes run alike). */
uint64_t gl_node_attrs_fingerprint(const gl_node *n);
uint64_t gl_type_fingerprint(const gl_type *t);

/* Op-type histogram helpers and counts used by info/TUI. */
size_t gl_graph_count_nodes(const gl_graph *g, bool recursive);

#endif
