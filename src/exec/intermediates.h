/* intermediates.h — every tensor of a run kept, two runs compared tensor by tensor, the
 * first node where they part ways. Writing the kept tensors as TensorProto files is
 * driver/inter_save.h's: exec handles tensors in memory only.
 *
 * A recorder observes a plan's runs (gl_exec_set_observer) and keeps a plain copy (a
 * share when the tensor is plain already) of each output of each node, once: a value
 * read by several nodes is kept where it is made. What is kept:
 *  - the outputs of every node of the model's graph, graph outputs included (graph
 *    inputs and initializers are not intermediates);
 *  - inside a call of a model-local function that runs as its body, the outputs of the
 *    body's nodes, keyed by the call's name: "call::t" is value 't' of the body of call
 *    node 'call' (calls inside calls: "outer::inner::t"). A call a backend runs whole has
 *    only its outputs; when two runs expanded a call differently, its body's tensors are
 *    on one side only and are not compared (gl_inter_report counts them);
 *  - a fused group (a call of a graphlab.fused function) run whole keeps its outputs
 *    only: compared with a run of the model before fusion, whose nodes are the members
 *    under the same names, the tensors compared are those at group boundaries (and of
 *    the nodes no group took), and the first divergence names the group;
 *  - not the nodes inside If/Loop/Scan bodies, which may run many times in one run: the
 *    If/Loop/Scan node's own outputs stand for them.
 *
 * Memory: a recorder keeps every tensor alive until it is freed, so a run holds all of
 * the model's activations at once, and comparing two runs holds them twice. Each
 * recorder has a byte bound; past it, it stops keeping tensors and its status is an
 * error naming the node where it stopped (the run itself goes on).
 */
#ifndef GL_INTERMEDIATES_H
#define GL_INTERMEDIATES_H

#include "exec/compare.h"
#include "exec/exec.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The bound on kept bytes per recorder when the options give none: 1 GiB. */
#define GL_INTER_MAX_BYTES ((size_t)1 << 30)

/* One kept tensor. */
typedef struct gl_inter_tensor {
    char *key;          /* the value's name, with the call path inside function bodies */
    char *node;         /* the producing node's name, with the call path likewise */
    const char *op;     /* its op type (the model's string) */
    size_t output;      /* which output of the node */
    bool graph_output;  /* one of the model's graph outputs */
    bool in_body;       /* made inside a function body */
    bool group;         /* made by a fused group (a call of a graphlab.fused function) of the
                         * model's graph: its outputs are the group's boundary */
    /* How the value is quantized (quant.h's gl_quant_of on the graph it was made in):
     * scale NULL when it is not; scale and zero are shares, owned. Comparisons take it
     * in steps of that scale. */
    gl_quant quant;
    gl_tensor *t;       /* plain; its name is `key` */
} gl_inter_tensor;

typedef struct gl_inter_rec gl_inter_rec;

typedef struct gl_inter_rec_options {
    size_t max_bytes;          /* 0: GL_INTER_MAX_BYTES */
    const char *const *names;  /* keep only tensors with these keys (NULL: every one) */
    size_t n_names;
    const char *label;         /* the run's name in reports ("unfused"; copied); NULL: the
                                * plan's backend */
} gl_inter_rec_options;

/* `o` may be NULL. The names are copied. */
gl_inter_rec *gl_inter_rec_new(const gl_inter_rec_options *o);
void gl_inter_rec_free(gl_inter_rec *r);

/* Observe e's runs from now on (replaces e's observer). Each run starts the recording
 * afresh. The tensors stay valid after e is freed. */
void gl_inter_rec_attach(gl_inter_rec *r, gl_exec *e);
/* The observer attach installs, for a caller that chains it behind its own: forward
 * every callback to it with `ctx`. */
gl_exec_observer gl_inter_rec_observer(gl_inter_rec *r, gl_exec *e);

/* GL_OK, or why the last run's recording is incomplete (over the byte bound, a tensor
 * that could not be made plain), with the message set again. */
gl_status gl_inter_rec_status(const gl_inter_rec *r);
size_t gl_inter_rec_count(const gl_inter_rec *r);
const gl_inter_tensor *gl_inter_rec_at(const gl_inter_rec *r, size_t i);
/* The tensor with this key, or NULL. */
const gl_inter_tensor *gl_inter_rec_find(const gl_inter_rec *r, const char *key);
size_t gl_inter_rec_bytes(const gl_inter_rec *r); /* kept bytes, views counted apart */
/* The label the options gave, else the backend of the plan last attached. */
const char *gl_inter_rec_backend(const gl_inter_rec *r);
/* The path of the model whose run was recorded ("<model>" before any). */
const char *gl_inter_rec_model(const gl_inter_rec *r);
/* Whether `key` is one of `names` (every key is when names is NULL): which tensors a
 * recorder keeps and which a save writes. */
bool gl_inter_listed(const char *const *names, size_t n_names, const char *key);

/* ---- comparing two recordings ----------------------------------------------------------- */

typedef struct gl_inter_row {
    const gl_inter_tensor *a, *b; /* the same key in both recordings */
    gl_compare cmp;               /* b against a (a is "expected": max_rel is relative to a) */
} gl_inter_row;

typedef struct gl_inter_report {
    const gl_inter_rec *a, *b;   /* not owned; must outlive the report */
    double rtol, atol, steps;
    size_t in_steps;             /* rows compared in steps (quantized values) */
    gl_inter_row *rows;          /* in a's order: the order a ran them, topological */
    size_t n_rows;
    size_t first_bad;            /* the first row not ok: where the runs part ways;
                                  * SIZE_MAX when none */
    size_t bad, outputs_bad;     /* rows not ok; of which graph outputs */
    size_t only_a, only_b;       /* tensors of function bodies kept by one run only */
} gl_inter_report;

/* Compare every tensor a and b both kept (b against a): a quantized or dequantized value
 * (a's quant) in steps of its scale, the others with rtol and atol (gl_compare_value's
 * rule). */
void gl_inter_compare(const gl_inter_rec *a, const gl_inter_rec *b, const gl_tolerance *tol,
                      gl_inter_report *r);
void gl_inter_report_free(gl_inter_report *r);

/* Rows shown when not all of them are: the first ones, then the worst of the rest. */
#define GL_INTER_SHOW_FIRST 20
#define GL_INTER_SHOW_WORST 10

/* The report as text: a summary line, the first divergence with its worst element, and
 * the table of rows (every row when `all`, else the first GL_INTER_SHOW_FIRST and the
 * GL_INTER_SHOW_WORST worst of the others). Names are quoted with control characters
 * escaped. */
void gl_inter_report_print(const gl_inter_report *r, bool all, FILE *f);

#endif
