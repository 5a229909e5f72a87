/* graphnote.h — small graphs written as one line of text, for the tests of passes: build
 * the model, feed it seeded random inputs, run it before and after a pass on the
 * reference backend and compare.
 *
 * The notation (statements separated by ';'):
 *   in NAME DT[d,...]        graph input; d is a number, or ?N: declared unknown, fed N,
 *                            or S=N: declared as the symbol S, fed N
 *   in NAME DT?[d,...]       graph input declared without any shape, fed with dims d
 *   ... = v,v,...            (after an input) feed these values instead of random ones
 *   const NAME DT[d,...] = v,v,... | rand       an initializer
 *   A, B = Op(X, , Y) k=v    node "n_A"; an empty input is omitted; attribute values:
 *                            [1,2] ints, [0.5,1.5] floats, 3 int, 0.5 float, "s" string
 *   out A, B                 graph outputs
 * DT: f32 (random in [0,1) as ORT's MakeInput), f32s (in [-1,1)), f32w (in [-4,4)), f64
 * (in [-1,1)), i64, i32 (in [-1,5]), i8, u8 (full range), u32 (in [0,5]), bool.
 */
#ifndef GL_GRAPHNOTE_H
#define GL_GRAPHNOTE_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GN_MAX_FEEDS 16
#define GN_MAX_DIMS 8
#define GN_MAX_VALUES 64

typedef struct gn_feed {
    char name[32];
    gl_dtype dt;
    double lo, hi; /* random range */
    int rank;
    int64_t dims[GN_MAX_DIMS]; /* the dims fed at run time */
    double values[GN_MAX_VALUES];
    int n_values;
    bool fixed;    /* values[] given, else random */
} gn_feed;

typedef struct gn_graph {
    gl_model *m;   /* owned by the caller once built (also on failure) */
    gn_feed feeds[GN_MAX_FEEDS];
    int n_feeds;
    char err[256];
} gn_graph;

/* Build `text` as a model of ai.onnx `opset` (IR 8); random constants are seeded from
 * `name`. False with b->err on a notation error. */
bool gn_build(const char *name, int opset, const char *text, gn_graph *b);

/* Inputs for g's graph inputs as b declared them (seeded from `name`), in g's input
 * order; free with gn_free_tensors(t, g->n_inputs). */
gl_tensor **gn_feeds(const gn_graph *b, const gl_graph *g, const char *name);
void gn_free_tensors(gl_tensor **t, size_t n);
/* Run m on the reference backend: m->graph->n_outputs tensors, or NULL with `err`. */
gl_tensor **gn_run(const gl_model *m, gl_tensor **in, char *err, size_t len);

/* Nodes of op "Op" (ai.onnx) or "domain.Op". */
size_t gn_count_op(const gl_graph *g, const char *op);
/* Nodes of any op of `domain` ("graphlab.fused"). */
size_t gn_count_domain(const gl_graph *g, const char *domain);
/* `ops` = "Reshape=0 graphlab.Gelu=1": each count must match (criterion expectations
 * naming `name`). NULL: nothing checked. */
void gn_expect_op_counts(const char *name, const char *ops, const gl_graph *g);
/* Graph inputs and outputs (names, types) kept, and the same outputs from `before` and
 * `after` on the same seeded inputs, within rtol/atol (0, 0: bit-identical). With
 * `no_exec` only the interface is compared. */
void gn_expect_same_outputs(const char *name, const gn_graph *b, const gl_model *before,
                            const gl_model *after, double rtol, double atol, bool no_exec);
/* Build `text` (as gn_build; then `extra`, when given, edits the model) and run the
 * `passes` list on it keeping every snapshot: the pipeline, or NULL after a criterion
 * failure naming `name` (the case does not build, or a pass fails). b->m is the
 * pipeline's input model, owned by the pipeline (or freed, on NULL). */
struct gl_pipeline;
struct gl_pipeline *gn_run_passes(const char *name, int opset, const char *text,
                                  void (*extra)(gl_model *m), const char *passes,
                                  gn_graph *b);
/* The same with one pass option applied ("PASS.OPT=V"; NULL: none). */
struct gl_pipeline *gn_run_passes_set(const char *name, int opset, const char *text,
                                      void (*extra)(gl_model *m), const char *passes,
                                      const char *set, gn_graph *b);
/* m saved as DIR/NAME.onnx and loaded again computes what m computes, bit for bit. */
void gn_expect_saved_same(const char *name, const gn_graph *b, const gl_model *m,
                          const char *dir);
/* onnx.checker (full_check) accepts every .onnx file of `dir`: one Python process, run
 * only when GL_PYTHON names one that has onnx. */
void gn_expect_onnx_checker(const char *dir);
/* A copy of m whose graphlab ops have no kernel: their functions and nodes move to the
 * domain test.body, so the executor runs the functions' bodies instead. */
gl_model *gn_bodies_only(const gl_model *m);
/* One line per node: op, name, perm when it has one, inputs and outputs with types. */
void gn_print_graph(const gl_graph *g, FILE *f);

/* Split s in place at `sep` (empty parts kept, each trimmed); returns the count (at
 * most max parts are stored). */
int gn_split(char *s, char sep, char **parts, int max);

#endif
