/* pass_table.c — the list of passes, the default pipeline and `--passes` lists
 * (pass_table.h). */
#include "passes/pass_table.h"

#include "passes/passes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pass table ------------------------------------------------------------------ */

/* Each row: the name --passes takes, the name the workbench's bar shows, one line for
 * --help, the function, what the pass needs from the graph before it runs (checked by
 * gl_pass_run, not by each pass), and the options --set takes. */
#define OPTIONS(...) .options = (const gl_pass_option[]){__VA_ARGS__}, \
                     .n_options = sizeof((const gl_pass_option[]){__VA_ARGS__}) / sizeof(gl_pass_option)

static const gl_pass pass_table[] = {
    {.name = "toposort", .shown = "toposort", .run = gl_pass_toposort,
     .summary = "order nodes topologically, keeping the file's order where valid"},
    {.name = "shape-inference", .shown = "shapes", .run = gl_pass_shape_inference,
     .needs = GL_PASS_NEEDS_SORTED,
     .summary = "infer every value's dtype and shape (symbolic dims kept)"},
    {.name = "constant-folding", .shown = "fold", .run = gl_pass_constant_folding,
     .needs = GL_PASS_NEEDS_SORTED,
     .summary = "evaluate nodes whose inputs are constants into initializers",
     OPTIONS({"max-bytes", 1 << 24, "fold only outputs up to this size", false})},
    {.name = "cse", .shown = "cse", .run = gl_pass_cse, .needs = GL_PASS_NEEDS_SORTED,
     .summary = "merge nodes that compute the same thing from the same inputs",
     OPTIONS({"max-bytes", 4096, "merge equal constants up to this size", false})},
    {.name = "dce", .shown = "dce", .run = gl_pass_dce, .needs = GL_PASS_NEEDS_SORTED,
     .summary = "remove nodes and initializers that no graph output depends on"},
    {.name = "transpose-push", .shown = "tpush", .run = gl_pass_transpose_push,
     .needs = GL_PASS_NEEDS_SORTED,
     .summary = "push Transposes down through the ops that allow it until they cancel",
     OPTIONS({"ort-only", 0, "1: only ONNX Runtime's rules (no size-1 Reshapes, dead "
              "Transposes, compositions into Reshapes, and no net-transposes guard)", false})},
    {.name = "layout", .shown = "layout", .run = gl_pass_layout,
     .needs = GL_PASS_NEEDS_SORTED | GL_PASS_NEEDS_TYPES,
     .summary = "layout-sensitive nodes to NHWC where transpose-push then leaves fewer "
                "Transposes",
     OPTIONS({"ignore-cost", 0, "1: convert every candidate region without the cost check, as "
              "ONNX Runtime does for NHWC kernels", false})},
    {.name = "patterns", .shown = "patterns", .run = gl_pass_patterns,
     .needs = GL_PASS_NEEDS_TYPES,
     .summary = "recognize decomposed ops: Gelu, LayerNorm, SiLU, HardSwish; fold BatchNorm "
                "and per-channel Mul/Add into Conv"},
    {.name = "fold-transpose", .shown = "fold-transpose", .run = gl_pass_fold_transpose,
     .needs = GL_PASS_NEEDS_TYPES,
     .summary = "fold Transposes that swap the last two dims of a MatMul/Gemm operand into "
                "the product (Gemm transA/transB, graphlab FusedMatMul)"},
    {.name = "qdq", .shown = "qdq", .run = gl_pass_qdq,
     .needs = GL_PASS_NEEDS_SORTED | GL_PASS_NEEDS_TYPES,
     .summary = "QDQ units (DequantizeLinear -> Conv/MatMul/Gemm -> QuantizeLinear) become "
                "groups run as one int8 kernel; redundant Relu/Clip before a "
                "QuantizeLinear go",
     OPTIONS({"probe", 1, "1: refuse a unit oneDNN would run on reference kernels (each "
              "built alone for its shapes); 0: group every unit that passes the checks",
              false})},
    {.name = "fusion", .shown = "fusion", .run = gl_pass_fusion, .needs = GL_PASS_NEEDS_TYPES,
     .summary = "chains the target runs as one kernel become one node calling a "
                "graphlab.fused function",
     OPTIONS({"exact-shapes", 0, "1: refuse every implicit broadcast, the per-channel or [N] "
              "operand and the scalar too", false},
             {"units", 1, "0: leave apart the units the oneDNN backend runs as several "
              "primitives (FFN, attention, 1x1+depthwise, ...)", false},
             {"probe", 1, "1: refuse a group oneDNN would run on a reference kernel (each "
              "group built alone for its shapes) or whose head runs post-ops slowly; 0: "
              "trust the rule table", false},
             {"measure", 0, "1: time each group fused against its members on the "
              "model's shapes (oneDNN, interleaved repeats) and refuse one slower beyond "
              "noise; the decision carries measured_ms", false})},
    {.name = "memory-plan", .shown = "mem", .run = gl_pass_memory_plan,
     .summary = "every intermediate's lifetime and offset in one arena, outputs in place of "
                "dying inputs (the reference executor allocates from it)",
     .plans_one = "output in place",
     .plans_many = "outputs in place"},
};
#undef OPTIONS

/* The default pipeline of DESIGN.md: the second transpose-push cancels the Transposes
 * that layout puts around the nodes it converts; fold-transpose takes the ones it leaves
 * above matrix products (it has no MatMul handler), before fusion meets those products;
 * fusion comes after them, so it groups the nodes every other pass has left; the memory
 * plan is last, over the graph the executor will run. */
static const char *const default_pipeline[] = {
    "toposort", "shape-inference", "constant-folding", "cse", "dce",
    "transpose-push", "constant-folding", "cse", "dce", "patterns", "layout",
    "transpose-push", "fold-transpose", "qdq", "fusion", "memory-plan"};

const char *const *gl_pass_default_pipeline(size_t *count)
{
    *count = GL_ARRAY_LEN(default_pipeline);
    return default_pipeline;
}

const gl_pass *gl_pass_table(size_t *count)
{
    *count = GL_ARRAY_LEN(pass_table);
    return pass_table;
}

const gl_pass *gl_pass_find(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(pass_table); i++)
        if (strcmp(pass_table[i].name, name) == 0)
            return &pass_table[i];
    return NULL;
}

/* ---- --passes ------------------------------------------------------------------------ */

void gl_pass_names(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < GL_ARRAY_LEN(pass_table) && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", pass_table[i].name);
}

/* K of "NAME:K" (item names the whole item for the message). */
static gl_status parse_budget(const char *item, const char *k_text, int64_t *budget)
{
    char *end;
    errno = 0;
    long long k = strtoll(k_text, &end, 10);
    if (errno || end == k_text || *end || k < 0)
        return gl_fail(GL_ERR_INPUT, "--passes: '%s': the rewrite budget after ':' must be "
                       "a whole number >= 0", item);
    *budget = k;
    return GL_OK;
}

/* One list item: "NAME" or "NAME:K". */
static gl_status parse_step(const char *item, gl_pass_step *step)
{
    char name[64];
    const char *colon = strchr(item, ':');
    size_t len = colon ? (size_t)(colon - item) : strlen(item);
    if (len == 0 || len >= sizeof(name))
        return gl_fail(GL_ERR_INPUT, "--passes: empty or overlong pass name in '%s'", item);
    memcpy(name, item, len);
    name[len] = '\0';
    step->pass = gl_pass_find(name);
    if (!step->pass) {
        char names[512];
        gl_pass_names(names, sizeof(names));
        return gl_fail(GL_ERR_INPUT, "--passes: unknown pass '%s' (passes: %s; alone: all, "
                       "all:K or none)", name, names);
    }
    step->budget = GL_BUDGET_UNLIMITED;
    step->shared = false;
    return colon ? parse_budget(item, colon + 1, &step->budget) : GL_OK;
}

gl_status gl_pass_list_parse(const char *spec, gl_pass_step **steps, size_t *n_steps)
{
    *steps = NULL;
    *n_steps = 0;
    if (strcmp(spec, "none") == 0)
        return GL_OK;
    if (strcmp(spec, "all") == 0 || strncmp(spec, "all:", 4) == 0) {
        int64_t k = GL_BUDGET_UNLIMITED;
        if (spec[3] && parse_budget(spec, spec + 4, &k) != GL_OK)
            return GL_ERR_INPUT;
        size_t n = GL_ARRAY_LEN(default_pipeline);
        *steps = gl_xcalloc(n, sizeof(gl_pass_step));
        for (size_t i = 0; i < n; i++)
            (*steps)[i] = (gl_pass_step){gl_pass_find(default_pipeline[i]), k,
                                         k != GL_BUDGET_UNLIMITED};
        *n_steps = n;
        return GL_OK;
    }
    char *copy = gl_xstrdup(spec);
    size_t cap = 0;
    gl_status st = GL_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        GL_GROW(*steps, cap, *n_steps + 1);
        if ((st = parse_step(item, &(*steps)[*n_steps])) != GL_OK)
            break;
        (*n_steps)++;
    }
    if (st == GL_OK && *n_steps == 0)
        st = gl_fail(GL_ERR_INPUT, "--passes: empty list (use 'none' for no passes)");
    free(copy);
    if (st != GL_OK) {
        free(*steps);
        *steps = NULL;
        *n_steps = 0;
    }
    return st;
}
