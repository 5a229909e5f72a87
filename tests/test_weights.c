/* test_weights.c — a model's weights are held once (issue 23). Weights mapped from a
 * file (as external data is) are either read in place by the oneDNN backend (a product
 * of few rows) or packed into its layout, the mapped pages then given back after the
 * first run; the bytes read the same either way. Each case is one product, its weights
 * in a mapped temporary file (or in memory), run on the oneDNN backend twice (the second
 * run builds and reorders nothing) and compared with the reference. */
#include "exec/exec.h"
#include "exec/compare.h"
#include "onnx/onnx_io.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- weights in a mapped file ------------------------------------------------------------ */

/* A tensor of `dims` whose bytes are a read-only mapping of a file in `dir` holding
 * `from`'s bytes: the kind of buffer the loader makes for external data. */
static gl_tensor *mapped_copy(const gl_tensor *from, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/weights.bin", dir);
    size_t n = gl_tensor_nbytes(from);
    cr_assert(tu_write_file(path, gl_tensor_data(from), n), "cannot write %s", path);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "cannot open %s", path);
    void *base = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    cr_assert_neq(base, MAP_FAILED, "cannot map %s", path);
    gl_buffer *buf = gl_buffer_new_mmap(base, n, base, n);
    return gl_tensor_wrap(from->dtype, from->rank, from->dims, from->count, buf);
}

/* Kilobytes of the mapping that starts at `base` resident in this process (its "Rss" in
 * /proc/self/smaps); -1 when the mapping is not found. */
static long resident_kb(const void *base)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert_not_null(f, "cannot read /proc/self/smaps");
    char line[512];
    bool ours = false;
    long kb = -1;
    while (kb < 0 && fgets(line, sizeof(line), f)) {
        uintptr_t start, end;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2)
            ours = start == (uintptr_t)base;
        else if (ours && strncmp(line, "Rss:", 4) == 0)
            kb = strtol(line + 4, NULL, 10);
    }
    fclose(f);
    return kb;
}

/* ---- the cases ------------------------------------------------------------------------------ */

typedef struct wcase {
    const char *what;
    const char *op;      /* MatMul or Gemm (with transB) */
    int64_t batch, rows; /* A: [batch, rows, K] for MatMul, [rows, K] for Gemm */
    int64_t k, n;        /* B: [K, N] (Gemm with transB: [N, K]) */
    bool in_memory;      /* the weights in memory, not mapped from a file */
    bool packed;         /* with dnnl_weights_in_place (a profile's plans) oneDNN packs
                          * them: one constant reorder; a single run always packs */
} wcase;

static const wcase cases[] = {
    /* few rows: in a profile's plans the mapped weights are read in place, no copy */
    {"MatMul, 16 rows (a decoder's projection)", "MatMul", 1, 16, 256, 512, false, false},
    {"MatMul, 2 x 8 rows", "MatMul", 2, 8, 256, 512, false, false},
    {"Gemm, 1 row", "Gemm", 1, 1, 512, 256, false, false},
    {"MatMul, 16 rows, 4 MB of weights", "MatMul", 1, 16, 1024, 1024, false, false},
    /* many rows: packed, the mapping's pages given back */
    {"MatMul, 256 rows", "MatMul", 1, 256, 256, 512, false, true},
    {"MatMul, 4 x 64 rows", "MatMul", 4, 64, 256, 512, false, true},
    {"Gemm, 128 rows", "Gemm", 1, 128, 512, 256, false, true},
    {"MatMul, 64 rows, 4 MB of weights (huge pages)", "MatMul", 1, 64, 1024, 1024, false,
     true},
    /* weights in memory (inline in the model): packed, as always */
    {"MatMul, 16 rows, in memory", "MatMul", 1, 16, 256, 512, true, true},
};

/* Y = A x W (MatMul) or A x W^T (Gemm, transB) with W the mapped constant `w`. */
static gl_model *product_model(const wcase *c, gl_tensor *w)
{
    gl_model *m = tu_model(13);
    gl_graph *g = m->graph;
    bool gemm = strcmp(c->op, "Gemm") == 0;
    int64_t a_dims[3] = {c->batch, c->rows, c->k};
    gl_value *a = gemm ? tu_input(g, "a", GL_DT_FLOAT, 2, a_dims + 1)
                       : tu_input(g, "a", GL_DT_FLOAT, 3, a_dims);
    gl_node *p = tu_node(g, c->op, "p", 2, a, tu_const_tensor(g, "w", w));
    if (gemm)
        gl_node_set_attr_int(p, "transB", 1);
    tu_output(g, p->outputs[0]);
    return m;
}

static void run_case(const wcase *c, bool in_place)
{
    uint32_t seed = 7;
    bool gemm = strcmp(c->op, "Gemm") == 0;
    int64_t w_dims[2] = {gemm ? c->n : c->k, gemm ? c->k : c->n};
    int64_t a_dims[3] = {c->batch, c->rows, c->k};
    gl_tensor *heap_w = tu_random_f32(2, w_dims, &seed);
    char *dir = tu_tmpdir();
    gl_tensor *w = c->in_memory ? gl_tensor_share(heap_w) : mapped_copy(heap_w, dir);
    const void *base = w->buf->map_base;
    gl_model *m = product_model(c, w); /* owns w from here */
    gl_tensor *a = gemm ? tu_random_f32(2, a_dims + 1, &seed) : tu_random_f32(3, a_dims, &seed);

    gl_tensor *got = NULL, *want = NULL;
    gl_exec_options o = {.backend = "dnnl", .dnnl_weights_in_place = in_place};
    gl_exec *dn = NULL;
    cr_assert_eq(gl_exec_create(m, &o, &dn), GL_OK, "%s: %s", c->what, gl_error_message());
    cr_assert_eq(gl_exec_run(dn, (const gl_tensor *const *)&a, 1, &got, 1), GL_OK, "%s: %s",
                 c->what, gl_error_message());
    /* Asked to pack, B is reordered once on every ISA here: on AVX-512 into brgemm's
     * blocks; on AVX2 gemm:jit takes B row-major, but Gemm's transposed [N, K] moves and
     * these MatMuls (more than 8 rows, K of 256 or more) take graphlab's many-rows kernel,
     * B packed in its panels (dn_matmul.c). */
    bool packed = c->packed || !in_place;
    gl_exec_stats st;
    gl_exec_get_stats(dn, &st);
    cr_expect_eq(st.const_reorders, packed ? 1u : 0u, "%s (in place %d): %zu constant reorders",
                 c->what, in_place, st.const_reorders);
    if (packed && !c->in_memory)
        cr_expect_eq(resident_kb(base), 0, "%s: %ld kB of the mapped weights still resident "
                     "next to the packed copy", c->what, resident_kb(base));
    /* the plan runs again, on the packed copy or on the weights in place */
    gl_tensor_free(got);
    tu_exec_rerun_cached(dn, (const gl_tensor *const *)&a, 1, &got, 1, c->what);

    gl_exec *ref = tu_exec_run(m, "ref", NULL, &a, 1, &want, 1, c->what);
    gl_compare r;
    gl_compare_tensors(got, want, 1e-4, 1e-4, &r); /* sums of up to 1024 products */
    char line[256];
    gl_compare_format(&r, line, sizeof(line));
    cr_expect(r.ok, "%s: against the reference: %s", c->what, line);
    cr_expect(gl_tensor_equal(w, heap_w), "%s: the mapped weights still read the same", c->what);

    gl_tensor_free(got);
    gl_tensor_free(want);
    gl_exec_free(dn);
    gl_exec_free(ref);
    gl_model_free(m);
    gl_tensor_free(a);
    gl_tensor_free(heap_w);
    tu_rmtree(dir);
    free(dir);
}

Test(weights, mapped_weights_read_in_place_or_released_once_packed)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        run_case(&cases[i], false); /* a run: packed, the mapping given back */
        run_case(&cases[i], true);  /* a profile's plan: few rows read in place */
    }
}

/* gl_buffer_release_pages: a mapping's pages go, its bytes stay readable; other buffers
 * are left alone. */
Test(weights, released_pages_read_again_from_the_file)
{
    uint32_t seed = 3;
    gl_tensor *heap_w = tu_random_f32(2, (int64_t[]){64, 1024}, &seed);
    char *dir = tu_tmpdir();
    gl_tensor *w = mapped_copy(heap_w, dir);
    cr_assert(gl_tensor_equal(w, heap_w));
    cr_expect_gt(resident_kb(w->buf->map_base), 0, "read: resident");
    gl_buffer_release_pages(w->buf);
    cr_expect_eq(resident_kb(w->buf->map_base), 0, "released: nothing resident");
    cr_expect(gl_tensor_equal(w, heap_w), "released: the same bytes, read from the file");
    gl_buffer_release_pages(heap_w->buf); /* a heap buffer: nothing happens */
    cr_expect(gl_tensor_equal(w, heap_w));
    gl_tensor_free(w);
    gl_tensor_free(heap_w);
    tu_rmtree(dir);
    free(dir);
}

/* Two loads of one model with external data (profile's fused and unfused sessions) share
 * one mapping of each tensor: every mapping's pages count in the resident set. A load
 * after the others are freed maps the file again. */
Test(weights, two_loads_of_one_model_share_its_mappings)
{
    uint32_t seed = 5;
    char *dir = tu_tmpdir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/m.onnx", dir);
    gl_model *m = product_model(&cases[0], tu_random_f32(2, (int64_t[]){256, 512}, &seed));
    gl_save_options so = {.external_threshold = 1024};
    cr_assert_eq(gl_model_save(m, path, &so), GL_OK, "%s", gl_error_message());
    gl_model_free(m);

    gl_model *first = NULL, *second = NULL;
    cr_assert_eq(gl_model_load(path, NULL, &first), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_model_load(path, NULL, &second), GL_OK, "%s", gl_error_message());
    const gl_tensor *w1 = gl_find_value(first->graph, "w")->init;
    const gl_tensor *w2 = gl_find_value(second->graph, "w")->init;
    cr_assert(w1->external && w1->buf->kind == GL_BUF_MMAP, "the weights are mapped");
    cr_expect_eq(w1->buf, w2->buf, "one mapping for both loads");
    cr_expect_eq(w1->buf->refs, 2);
    gl_model_free(first);
    gl_model_free(second);

    gl_model *third = NULL;
    cr_assert_eq(gl_model_load(path, NULL, &third), GL_OK, "%s", gl_error_message());
    const gl_tensor *w3 = gl_find_value(third->graph, "w")->init;
    cr_expect_eq(w3->buf->kind, GL_BUF_MMAP);
    cr_expect_eq(w3->buf->refs, 1, "a new mapping, held once");
    gl_model_free(third);
    tu_rmtree(dir);
    free(dir);
}
