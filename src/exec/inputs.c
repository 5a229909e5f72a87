/* inputs.c — seeded random inputs (see inputs.h). */
#include "exec/inputs.h"
#include "ir/limits.h"
#include "util/rng.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Uniform in (0, 1]: never 0, so Box-Muller's log is finite. */
static double rng_uniform(gl_rng *r)
{
    return (double)((gl_rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* Standard normal by Box-Muller. */
static double rng_normal(gl_rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_random(gl_tensor *t, gl_rng *r)
{
    void *p = gl_tensor_make_writable(t);
    int64_t n = t->count * (t->dtype == GL_DT_COMPLEX64 || t->dtype == GL_DT_COMPLEX128 ? 2 : 1);
    size_t esize = gl_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++) {
        double x = rng_normal(r);
        /* Integers stay small and non-negative: they are often indices or counts. */
        uint64_t small = gl_rng_next(r) % 4;
        switch (t->dtype) {
        case GL_DT_FLOAT:
        case GL_DT_COMPLEX64: ((float *)p)[i] = (float)x; break;
        case GL_DT_DOUBLE:
        case GL_DT_COMPLEX128: ((double *)p)[i] = x; break;
        case GL_DT_FLOAT16: ((uint16_t *)p)[i] = gl_f32_to_f16((float)x); break;
        case GL_DT_BFLOAT16: ((uint16_t *)p)[i] = gl_f32_to_bf16((float)x); break;
        case GL_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)(small & 1); break;
        default: /* little-endian integers of esize bytes */
            memset((char *)p + (size_t)i * esize, 0, esize);
            memcpy((char *)p + (size_t)i * esize, &small, 1);
            break;
        }
    }
}

static const gl_dim_value *find_dim(const gl_dim_value *dims, size_t n_dims, const char *sym)
{
    for (size_t i = n_dims; sym && i-- > 0;)
        if (strcmp(dims[i].name, sym) == 0)
            return &dims[i];
    return NULL;
}

static gl_status random_input(const gl_model *m, const gl_dim_value *dim_values,
                              size_t n_dims, const gl_value *v, gl_rng *r, gl_tensor **out)
{
    const gl_type *ty = &v->type;
    if (ty->kind != GL_TYPE_TENSOR || ty->dtype == GL_DT_UNDEFINED || ty->dtype == GL_DT_STRING)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s': cannot make random data for its type; "
                       "give --data DIR", m->path, v->name);
    if (ty->shape.rank == GL_RANK_UNKNOWN)
        return gl_fail(GL_ERR_INPUT, "%s: input '%s' has no declared shape; give --data DIR",
                       m->path, v->name);
    int64_t dims[GL_MAX_RANK];
    for (int d = 0; d < ty->shape.rank && d < GL_MAX_RANK; d++) {
        const gl_dim *dim = &ty->shape.dims[d];
        const gl_dim_value *given = find_dim(dim_values, n_dims, dim->sym);
        dims[d] = dim->value >= 0 ? dim->value : given ? given->value : 1;
    }
    /* Refused before a byte of it exists, naming the input (limits pushed by the caller). */
    char what[300];
    snprintf(what, sizeof(what), "input '%s'", v->name);
    if (gl_limits_check_tensor(m->path, what, ty->dtype, ty->shape.rank, dims) != GL_OK)
        return GL_ERR_INPUT;
    gl_tensor *t = gl_tensor_new(ty->dtype, ty->shape.rank, dims);
    if (!t)
        return GL_ERR_INPUT;
    fill_random(t, r);
    *out = t;
    return GL_OK;
}

/* Whether dim `d` of input `i` repeats a symbolic name an earlier dim already named. */
static bool named_before(const gl_graph *g, size_t i, int d)
{
    const char *sym = g->inputs[i]->type.shape.dims[d].sym;
    for (size_t j = 0; j <= i; j++) {
        const gl_shape *s = &g->inputs[j]->type.shape;
        for (int e = 0; e < (j < i ? s->rank : d) && e < GL_MAX_RANK; e++)
            if (s->dims[e].value < 0 && s->dims[e].sym && strcmp(s->dims[e].sym, sym) == 0)
                return true;
    }
    return false;
}

size_t gl_dataset_random_defaults(const gl_model *m, const gl_dim_value *dims, size_t n_dims,
                                  char *buf, size_t len)
{
    const gl_graph *g = m->graph;
    size_t n = 0, used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gl_type *ty = &g->inputs[i]->type;
        if (g->inputs[i]->init || ty->kind != GL_TYPE_TENSOR || ty->shape.rank == GL_RANK_UNKNOWN)
            continue;
        for (int d = 0; d < ty->shape.rank && d < GL_MAX_RANK; d++) {
            const gl_dim *dim = &ty->shape.dims[d];
            if (dim->value >= 0 || (dim->sym && (find_dim(dims, n_dims, dim->sym) ||
                                                 named_before(g, i, d))))
                continue;
            int w = dim->sym ? snprintf(buf + used, len - used, "%s%s=1", n ? ", " : "", dim->sym)
                             : snprintf(buf + used, len - used, "%s'%s'[%d]=1", n ? ", " : "",
                                        g->inputs[i]->name, d);
            n++;
            if (w > 0 && used + (size_t)w < len)
                used += (size_t)w;
            else if (len)
                used = len - 1; /* full: the rest only counted */
        }
    }
    return n;
}

gl_status gl_dataset_random(const gl_model *m, const gl_dim_value *dims, size_t n_dims,
                            size_t max_memory, gl_dataset *d)
{
    const gl_graph *g = m->graph;
    *d = (gl_dataset){0};
    d->n_inputs = g->n_inputs;
    d->inputs = gl_xcalloc(g->n_inputs ? g->n_inputs : 1, sizeof(*d->inputs));
    gl_rng r = {GL_RANDOM_INPUTS_SEED};
    gl_limits lim = {.max_bytes = max_memory ? max_memory : gl_limits_default_bytes(),
                     .max_bytes_option = "--max-memory"};
    gl_limits_push(&lim);
    gl_status st = GL_OK;
    for (size_t i = 0; i < g->n_inputs && st == GL_OK; i++)
        if (!g->inputs[i]->init)
            st = random_input(m, dims, n_dims, g->inputs[i], &r, &d->inputs[i]);
    gl_limits_pop(&lim);
    if (st != GL_OK)
        gl_dataset_free(d);
    return st;
}
