/* testutil.h — helpers shared by the criterion tests (tests/libtu.a, linked into each).
 *
 * A new kernel case is a row in its op family's table (tests/test_ops_FAMILY.c), a
 * tu_kcase (below); the file defines TU_CASE_SHORTHANDS before including this header:
 *   {"relu_neg", "Relu", 14, {{0}}, 1, {T(F, 1, D(2), -1, 2)}, 1, {T(F, 1, D(2), 0, 2)}},
 *   {"gather_oob", "Gather", 13, {AI("axis", 0)}, 2, {T(F, 1, D(2), 1, 2),
 *    T(I64, 1, D(1), 5)}, 1, {{0}}, GL_ERR_INPUT, "out of range"},
 * that is name (the node's, named in every message), op ("domain.Op" for another
 * domain), opset, attributes (AI, AF, AS, AINTS/AFLOATS/ASTRINGS with their count,
 * ATENSOR, ASPARSE; {{0}}: none), the inputs' count and tensors, the outputs' count and
 * what they must be, then for an error its status and a part of its message. A tensor is
 * T(dtype, rank, D(dims), values...) with values as C expressions (M_PI / 2, NAN),
 * ZEROS(...) or EMPTY(...) without values, TX("int64[2]:0,-1") as text (strings, 64-bit
 * integers), OMIT for an omitted input. Values come from the ONNX definition worked by
 * hand, never from the code under test. A new table (static, at file scope: its values
 * are compound literals) is run by one Test:
 *   Test(nn, pool) { tu_run_kernel_cases(pool_cases, GL_ARRAY_LEN(pool_cases)); }
 * (or tu_run_kernel_cases_within with the table's tolerance).
 *
 * A new test file tests/test_x.c is one word in Makefile.am: tests/test_x in
 * GL_TEST_PROGS. It is built from that file alone and linked with tests/libtu.a; a helper
 * that several test files share belongs in tests_libtu_a_SOURCES, not in each program. */
#ifndef GL_TESTUTIL_H
#define GL_TESTUTIL_H

#include "driver/driver.h"
#include "ir/graph.h"

#include <glob.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Absolute path of a file in the source tree (GL_TEST_SRCDIR); static buffer per call
 * slot (up to 8 live results). */
const char *tu_src(const char *rel);
/* The ../shared folder beside the source tree ($GL_SHARED overrides), or NULL when it
 * has no models/ (a fresh clone). */
const char *tu_shared(void);
/* The model corpora, folders of NAME/model.onnx with NAME/test_data_set_0/ and
 * NAME/info.json: the in-tree tests/data/models (small models shaped like the shared
 * ones, always there), then ../shared/models when present. Sets dirs[] and returns how
 * many (1 or 2). */
size_t tu_model_corpora(const char *dirs[2]);
/* Append to g (glob(3), zeroed or filled by an earlier call) the paths that match the
 * pattern `rel` (every model: a star, then "/model.onnx") in every corpus; returns
 * g->gl_pathc. globfree it. */
size_t tu_glob_corpora(const char *rel, glob_t *g);
/* The ONNX node conformance cases (CASE/model.onnx, CASE/test_data_set_0/):
 * ../shared/conformance/node when present, else those `make check` made from the
 * installed onnx's own generators in the build folder (tests/data/make_conformance.py);
 * NULL when neither is there (no python with onnx): tests that need them skip, saying
 * TU_NO_CONFORMANCE. */
const char *tu_conformance(void);
#define TU_NO_CONFORMANCE                                                                  \
    "no conformance cases: none in ../shared, none made by the build (no python with onnx)"
/* A fresh temporary folder (mkdtemp under $TMPDIR or /tmp); removed by tu_rmtree. */
char *tu_tmpdir(void);
void tu_rmtree(const char *dir);
/* Write bytes to a file; true on success. */
bool tu_write_file(const char *path, const void *data, size_t len);
/* Read a whole file (malloc'd), NULL on failure. */
void *tu_read_file(const char *path, size_t *len);
/* Entries of a folder other than "." and ".." (0 when it cannot be read). */
size_t tu_dir_entries(const char *dir);

/* The python that runs the cross-checks with onnx: $GL_PYTHON, else /usr/bin/python3. */
const char *tu_python(void);
/* The CPU has int8 dot products (VNNI), as oneDNN sees it (ONEDNN_MAX_CPU_ISA lowers it):
 * the int8 kernels are refused without them. */
bool tu_cpu_has_vnni(void);
/* oneDNN runs its AVX-512 kernels (avx512_core, as ONEDNN_MAX_CPU_ISA leaves it). oneDNN 2.6
 * then blocks channels by 16 (by 8 on AVX2), has Winograd, and its f32 matmul is brgemm,
 * which packs the weights (one constant reorder); on AVX2 its gemm:jit reads them plain,
 * where they are, with no copy. Tests whose expectations differ by ISA ask this. */
bool tu_cpu_has_avx512(void);
/* Plans made after this run on n OpenMP threads (libgomp's, which oneDNN and graphlab's
 * own kernels share), whatever the machine has: for tests of what splits work. */
void tu_omp_threads(int n);
/* Run the python script tests/`script` with what `write` prints on its stdin: the test
 * is skipped without python or without its onnx module (the script exits 77), and fails
 * naming `what` when the script exits non-zero (its lines on stderr say where). */
void tu_onnx_cross_check(const char *script, void (*write)(FILE *f), const char *what);
/* `what` ended in st: GL_OK when error is NULL, else GL_ERR_INPUT with a one-line message
 * that contains error. */
void tu_expect_error(gl_status st, const char *what, const char *error);

/* Build small graphs in C for pass tests:
 *   gl_model *m = tu_model(13);                     // ai.onnx opset 13, IR 8
 *   gl_value *x = tu_input(m->graph, "x", GL_DT_FLOAT, 2, (int64_t[]){2, 3});
 *   gl_node *n = tu_node(m->graph, "Relu", "r", 1, x);  // n_inputs, then the inputs
 *   tu_output(m->graph, n->outputs[0]);
 * Shapes with symbolic dims: pass dims < 0 as -1 (unknown). */
/* A dtype by its ONNX name as gl_dtype_name spells it ("float", "int64"); anything else
 * fails the test. */
gl_dtype tu_dtype_named(const char *name, size_t len);
/* A type from text, as the op and shape tests write them: "float[N,3,?]" (numbers,
 * symbols, '?' for an unknown dim), "float[]" (a scalar), "float[?]" or "float" (rank
 * unknown), "?" (nothing known). *t is overwritten, not freed first. */
void tu_parse_type(const char *text, gl_type *t);
gl_model *tu_model(int64_t opset);
gl_value *tu_input(gl_graph *g, const char *name, gl_dtype dt, int rank, const int64_t *dims);
gl_value *tu_const_f32(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const float *data);
gl_value *tu_const_i64(gl_graph *g, const char *name, int rank, const int64_t *dims,
                       const int64_t *data);
/* An initializer holding t (the graph takes it), typed as t is. */
gl_value *tu_const_tensor(gl_graph *g, const char *name, gl_tensor *t);
gl_node *tu_node(gl_graph *g, const char *op, const char *name, size_t n_inputs, ...);
void tu_output(gl_graph *g, gl_value *v);

/* a and b are the same graph as a clone would be (samegraph.c): node slots and holes,
 * ids and next ids, names (and what the name index finds), use lists in order, types,
 * initializers (bytes, header), attributes, provenance, interface lists, bodies alike.
 * False with the first difference in `why`. What a fingerprint leaves out is what a
 * rollback most easily gets wrong. */
bool tu_same_graph(const gl_graph *a, const gl_graph *b, char *why, size_t len);
/* Pass `pass` (by name) on copies of m under an undo journal (ir/journal.h): rolled back,
 * the copy is m again (tu_same_graph and the fingerprint); committed, it is what the pass
 * leaves without a journal, record for record. m must meet the pass's needs (sorted,
 * typed). A pass that begins a journal of its own (transpose-push's first trial) finds
 * this one running and takes its other way (a trial on a clone). */
void tu_expect_journal_exact(const char *what, const gl_model *m, const char *pass);

/* Tensors for kernel tests (gl_tensor_free them). */
gl_tensor *tu_tensor_f32(int rank, const int64_t *dims, const float *data);
gl_tensor *tu_tensor_i64(int rank, const int64_t *dims, const int64_t *data);
gl_tensor *tu_tensor_of(gl_dtype dt, int rank, const int64_t *dims, const void *data);
/* The same numbers on every run and machine: a small LCG, values in [-1, 1). */
float tu_uniform(uint32_t *seed);
gl_tensor *tu_random_f32(int rank, const int64_t *dims, uint32_t *seed);
/* A copy of float tensor t with -0, NaN, +Inf and -Inf planted at fixed positions (the
 * first two elements, then a third and two thirds of the way in); a tensor of fewer than
 * 4 elements, or of another dtype, is shared as it is. */
gl_tensor *tu_with_specials(const gl_tensor *t);

/* Run the registry's kernel for node `n` of model `m` directly on `in` (n->n_inputs
 * entries, NULL = omitted), without an executor; out[] receives n->n_outputs tensors.
 * Subgraph ops cannot run this way (no run_body). */
gl_status tu_run_kernel(const gl_model *m, const gl_node *n, const gl_tensor *const *in,
                        gl_tensor **out);
/* Run the registry's shape function for `n` on the current types of its inputs (and the
 * values of constant inputs); out_types[] receives n->n_outputs types (gl_type_free). */
gl_status tu_infer(const gl_model *m, const gl_node *n, gl_type *out_types);

/* ---- kernel cases as tables ------------------------------------------------------------
 * One node per row, run through the registry's kernel on the row's inputs (held as
 * constants). Then either its outputs match the row's, and the op's shape function, run
 * on the same constant inputs, infers types that fit them; or the kernel fails with the
 * row's status and a one-line message that starts "<model>: node 'NAME' (Op)" and
 * contains the row's `error`. A runner loops over a whole table inside one Test
 * (criterion's parameters cannot hold pointers) and names the case in every message;
 * TU_TRACE=1 in the environment prints each case's name first (to find one that
 * crashes). How to write a row: the note at the top of this file. */

#define TU_MAX_IN 9
#define TU_MAX_OUT 4
#define TU_ZEROS (-1) /* tu_tval.n: every element is 0 (ZEROS) */

typedef struct tu_attr {
    const char *name; /* NULL ends the list */
    char kind;        /* 'i' int, 'f' float, 's' string, 'I' ints, 'F' floats, 'S' strings,
                         't' tensor (s is its text, as tu_parse_tensor reads it), 'p' a
                         sparse tensor (no value: for the ops that refuse one) */
    int64_t i;
    float f;
    const char *s;
    int n;
    int64_t ints[8];
    float fl[8];
    const char *const *strs;
} tu_attr;

/* A tensor of a row: dtype, dims and n values (row-major doubles, stored converted to the
 * dtype; an integer or bool value must be one the dtype holds exactly), or the same as
 * text. dt GL_DT_UNDEFINED and no text: an omitted input. */
typedef struct tu_tval {
    gl_dtype dt;
    int rank;
    int64_t dims[6];
    int n; /* TU_ZEROS: all zeros */
    const double *v;
    const char *text; /* "float[2,3]:1,2,3,4,5,6": see tu_parse_tensor */
} tu_tval;

/* A kernel case. `op` is "Op" (ai.onnx at `opset`) or "domain.Op" (that domain imported
 * at version 1); the node is named `name`. Trailing fields may be left out (GL_OK, no
 * error text). */
typedef struct tu_kcase {
    const char *name, *op;
    int opset;
    tu_attr attrs[6];
    int n_in;
    tu_tval in[TU_MAX_IN];
    int n_out;
    tu_tval out[TU_MAX_OUT]; /* with expect GL_OK: every output, as it must come out */
    gl_status expect;        /* else the kernel's status */
    const char *error;       /* and a part of its message (NULL: the node's name suffices) */
} tu_kcase;

/* How near a floating-point output element must be to the row's value:
 * |got - want| <= abs + rel |want| (rel_half for float16 and bfloat16, rel_double for
 * double); NaN matches NaN, an infinity only itself. Integer, bool and string elements
 * always match exactly; `exact` asks the same of floats, bit for bit (-0 is not 0). */
typedef struct tu_tol {
    double abs, rel, rel_half, rel_double;
    bool exact;
} tu_tol;
extern const tu_tol tu_tol_default; /* 1e-5 + 1e-5 |want| for every float type */
extern const tu_tol tu_tol_exact;

/* Run every row of a table, floats within tu_tol_default, or within `tol`. */
void tu_run_kernel_cases(const tu_kcase *cases, size_t n_cases);
void tu_run_kernel_cases_within(const tu_kcase *cases, size_t n_cases, const tu_tol *tol);
/* Set the attributes of a table row (up to the entry with a NULL name) on node n. */
void tu_apply_attrs(gl_node *n, const tu_attr *a);
/* A tensor from text: "float[2,3]:1,2,3,4,5,6", "int64[]:7" (a scalar), "float[2,3]"
 * (no ':': all zeros), "string[2]:ab,cd" (strings hold no ','), "int64[1]:-9223372036854775808"
 * (64-bit integers are read as such, not through a double). Bad text fails the test. */
gl_tensor *tu_parse_tensor(const char *text);

/* ---- shape cases as tables -------------------------------------------------------------- */

/* A shape-function input or output type: rank -1 unknown rank; dt UNDEFINED with rank
 * -2: no type at all. sym[d] names a symbolic dim. konst: the input is an int64
 * initializer with values cv. */
typedef struct tu_tshape {
    gl_dtype dt;
    int rank;
    int64_t dims[6];
    const char *sym[6];
    bool konst;
    int64_t cv[6];
} tu_tshape;

typedef struct tu_scase {
    const char *name, *op;
    int opset;
    tu_attr attrs[6];
    int n_in;
    tu_tshape in[9];
    int n_out;
    tu_tshape out[3];
    gl_status expect;
} tu_scase;

void tu_run_shape_cases(const tu_scase *cases, size_t n_cases);

/* ---- plans ------------------------------------------------------------------------------ */

/* Both are exec/exec.h's, which comes in through driver/driver.h above (no name of it
 * clashes with the workbench's: test_ui.c includes both); C11 allows the repetition. */
typedef struct gl_exec gl_exec;
typedef struct gl_plan_entry gl_plan_entry;

/* --layout's name for a policy letter: 'p' plain, 'n' nhwc, else blocked. */
const char *tu_layout_name(char p);
/* The --layout policies a dnnl test runs a graph under: auto (NULL), plain, nhwc,
 * blocked; and "NAME (--layout L)" for one of them into buf. */
extern const char *const tu_layouts[4];
void tu_layout_what(char *buf, size_t len, const char *name, const char *layout);
/* A plan of m on `backend` (dnnl: under `layout`, NULL: auto) run once on in[] (n_in
 * graph inputs); out[] receives n_out outputs. Criterion assertions name `what`. */
gl_exec *tu_exec_run(const gl_model *m, const char *backend, const char *layout,
                     gl_tensor *const *in, size_t n_in, gl_tensor **out, size_t n_out,
                     const char *what);
/* Run plan e again on in[]: it must build no primitive and reorder no constant (the
 * weight cache and shape guard at work); out[] receives n_out outputs. */
void tu_exec_rerun_cached(gl_exec *e, const gl_tensor *const *in, size_t n_in, gl_tensor **out,
                          size_t n_out, const char *what);
/* got must equal want within rtol/atol (exec/compare.h's rule); the failure names `what`
 * and the comparison. */
void tu_expect_close(const gl_tensor *got, const gl_tensor *want, double rtol, double atol,
                     const char *what);
/* The first plan entry of a node named `name` at `depth` (-1: any), NULL when none. */
const gl_plan_entry *tu_plan_entry(const gl_exec *e, const char *name, int depth);

/* Short spellings for writing the tables, for the files that define TU_CASE_SHORTHANDS
 * before including this header (elsewhere such names would clash). */
#ifdef TU_CASE_SHORTHANDS
/* Rows leave their trailing fields at the zero defaults (expect GL_OK, no error text). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#define U GL_DIM_UNKNOWN
#define BIG (1LL << 40) /* empty tensors may have huge other dims: no loop may run on them */
/* cnt, checked at compile time to be the number of the list's items */
#define TU_COUNTED(cnt, type, ...)                                                         \
    ((cnt) + 0 * (int)sizeof(char[(cnt) == sizeof((type[]){__VA_ARGS__}) / sizeof(type)   \
                                      ? 1 : -1]))
#define T(dt_, rank_, dims_, ...)                                                          \
    {                                                                                      \
        .dt = (dt_), .rank = (rank_), .dims = dims_,                                       \
        .n = (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)),                      \
        .v = (const double[]){__VA_ARGS__}                                                 \
    }
#define TX(text_) {.text = (text_)}
#define D(...) {__VA_ARGS__}
#define OMIT {.dt = GL_DT_UNDEFINED}
#define EMPTY(dt_, rank_, dims_) {.dt = (dt_), .rank = (rank_), .dims = dims_, .n = 0}
#define ZEROS(dt_, rank_, dims_) {.dt = (dt_), .rank = (rank_), .dims = dims_, .n = TU_ZEROS}
#define AI(nm, v) {.name = (nm), .kind = 'i', .i = (v)}
#define AF(nm, v) {.name = (nm), .kind = 'f', .f = (v)}
#define AS(nm, v) {.name = (nm), .kind = 's', .s = (v)}
#define AINTS(nm, cnt, ...)                                                                \
    {.name = (nm), .kind = 'I', .n = TU_COUNTED(cnt, int64_t, __VA_ARGS__),               \
     .ints = {__VA_ARGS__}}
#define AFLOATS(nm, cnt, ...)                                                              \
    {.name = (nm), .kind = 'F', .n = TU_COUNTED(cnt, float, __VA_ARGS__), .fl = {__VA_ARGS__}}
#define ASTRINGS(nm, cnt, ...)                                                             \
    {.name = (nm), .kind = 'S', .n = TU_COUNTED(cnt, const char *, __VA_ARGS__),          \
     .strs = (const char *const[]){__VA_ARGS__}}
#define ATENSOR(nm, text_) {.name = (nm), .kind = 't', .s = (text_)}
#define ASPARSE(nm) {.name = (nm), .kind = 'p'}
#define NOTYPE {.dt = GL_DT_UNDEFINED, .rank = -2}
#define S0(dt_, rank_) {.dt = (dt_), .rank = (rank_)}
#define S(dt_, rank_, dims_) {.dt = (dt_), .rank = (rank_), .dims = dims_}
#define SY(dt_, rank_, dims_, ...)                                                         \
    {.dt = (dt_), .rank = (rank_), .dims = dims_, .sym = {__VA_ARGS__}}
#define F GL_DT_FLOAT
#define F64 GL_DT_DOUBLE
#define F16 GL_DT_FLOAT16
#define BF16 GL_DT_BFLOAT16
#define BOOL GL_DT_BOOL
#define U8 GL_DT_UINT8
#define U16 GL_DT_UINT16
#define U32 GL_DT_UINT32
#define U64 GL_DT_UINT64
#define I8 GL_DT_INT8
#define I16 GL_DT_INT16
#define I32 GL_DT_INT32
#define I64 GL_DT_INT64
#endif

/* The passes `list` ("toposort,shape-inference,fusion") run on m, every step kept (the
 * last is the result, the one before it the graph before the last pass); asserts success,
 * naming `what`. Free with gl_pipeline_free. */
gl_pipeline *tu_passes(gl_model *m, const char *list, const char *what);

/* An example opened as `profile` and `run` open it for fused and unfused runs: the
 * default pipeline, the same passes without fusion, and seeded random inputs. */
typedef struct tu_fusion_pair {
    gl_session_opts so;
    gl_session fused, unfused;
    gl_dataset d;
} tu_fusion_pair;
void tu_fusion_open(tu_fusion_pair *p, const char *rel);
void tu_fusion_close(tu_fusion_pair *p);

#endif
