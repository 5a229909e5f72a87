/* reduce.c — reductions, ArgMax/ArgMin, CumSum, the softmax family, TopK and the two
 * losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss).
 *
 * The ten Reduce* ops are one kernel driven by a table of what each does (start value,
 * per-element map, combine, finish); which version reads axes from an input is a matter
 * of the registry entry. Ops that work along one axis see the tensor as
 * [outer, n, inner] (the axis in the middle), so no kernel re-derives index arithmetic.
 * Float sums accumulate in double; integer sums, products and extrema stay exact in
 * int64.
 */
#include "ops/families.h"
#include "ops/opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small shared helpers ----------------------------------------------------------- */

/* Whether an empty tensor is empty only along `axis` (every other dim non-zero). */
static bool empty_only_along(const gl_tensor *t, int axis)
{
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] == 0 && d != axis)
            return false;
    return true;
}

/* Normalize and validate a list of axes into a mask; false (message set) when one is
 * out of range or repeated. */
static bool axes_mask(const int64_t *axes, size_t n, int rank, const char *where,
                      bool *mask)
{
    memset(mask, 0, (size_t)(rank > 0 ? rank : 1) * sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        int a;
        if (!gl_axis_normalize(axes[i], rank, false, where, "axis", &a))
            return false;
        if (mask[a]) {
            gl_fail(GL_ERR_INPUT, "%s: axis %lld is repeated in axes", where,
                    (long long)axes[i]);
            return false;
        }
        mask[a] = true;
    }
    return true;
}

/* ---- Reduce* ------------------------------------------------------------------------ */

typedef enum red_kind {
    RED_L1, RED_L2, RED_LOG_SUM, RED_LOG_SUM_EXP, RED_MAX, RED_MEAN, RED_MIN, RED_PROD,
    RED_SUM, RED_SUM_SQUARE,
} red_kind;

typedef enum red_map { MAP_NONE, MAP_ABS, MAP_SQUARE, MAP_EXP_SHIFTED } red_map;
typedef enum red_combine { COMB_ADD, COMB_MUL, COMB_MAX, COMB_MIN } red_combine;
typedef enum red_finish { FIN_NONE, FIN_SQRT, FIN_LOG, FIN_LOG_SHIFTED, FIN_MEAN } red_finish;

/* What each Reduce* op computes: finish(combine over the set of map(x)). */
typedef struct red_def {
    const char *op;
    red_kind kind;
    red_map map;
    red_combine combine;
    red_finish finish;
    bool exact_ints;   /* integer inputs stay in int64 (the result is an integer op) */
} red_def;

static const red_def red_defs[] = {
    {"ReduceL1", RED_L1, MAP_ABS, COMB_ADD, FIN_NONE, true},
    {"ReduceL2", RED_L2, MAP_SQUARE, COMB_ADD, FIN_SQRT, false},
    {"ReduceLogSum", RED_LOG_SUM, MAP_NONE, COMB_ADD, FIN_LOG, false},
    {"ReduceLogSumExp", RED_LOG_SUM_EXP, MAP_EXP_SHIFTED, COMB_ADD, FIN_LOG_SHIFTED, false},
    {"ReduceMax", RED_MAX, MAP_NONE, COMB_MAX, FIN_NONE, true},
    {"ReduceMean", RED_MEAN, MAP_NONE, COMB_ADD, FIN_MEAN, false},
    {"ReduceMin", RED_MIN, MAP_NONE, COMB_MIN, FIN_NONE, true},
    {"ReduceProd", RED_PROD, MAP_NONE, COMB_MUL, FIN_NONE, true},
    {"ReduceSum", RED_SUM, MAP_NONE, COMB_ADD, FIN_NONE, true},
    {"ReduceSumSquare", RED_SUM_SQUARE, MAP_SQUARE, COMB_ADD, FIN_NONE, true},
};

static const red_def *red_def_of(const gl_node *n)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(red_defs); i++)
        if (!strcmp(red_defs[i].op, n->op_type))
            return &red_defs[i];
    return NULL;
}

static double red_start(red_combine c)
{
    return c == COMB_MUL ? 1 : c == COMB_MAX ? -INFINITY : c == COMB_MIN ? INFINITY : 0;
}

static int64_t red_start_i64(red_combine c)
{
    return c == COMB_MUL ? 1 : c == COMB_MAX ? INT64_MIN : c == COMB_MIN ? INT64_MAX : 0;
}

/* The reduction's axes: from the attribute (`from_input` false) or input 1. *noop when
 * they are empty and noop_with_empty_axes is set; an empty list otherwise means all. */
typedef struct red_axes {
    bool noop;
    bool mask[GL_MAX_RANK];
} red_axes;

static gl_status red_axes_get(const gl_node *node, const int64_t *axes, size_t n, int rank,
                              bool from_input, const char *where, red_axes *ra)
{
    ra->noop = false;
    if (n == 0) {
        ra->noop = from_input && gl_node_attr_int(node, "noop_with_empty_axes", 0) != 0;
        for (int d = 0; d < rank; d++)
            ra->mask[d] = !ra->noop;
        return GL_OK;
    }
    return axes_mask(axes, n, rank, where, ra->mask) ? GL_OK : GL_ERR_INPUT;
}

/* Output dims of a reduction: reduced dims become 1 (keepdims) or go. */
static int red_out_dims(const int64_t *dims, int rank, const bool *mask, bool keep,
                        int64_t *out)
{
    int r = 0;
    for (int d = 0; d < rank; d++)
        if (!mask[d])
            out[r++] = dims[d];
        else if (keep)
            out[r++] = 1;
    return r;
}

/* acc[out(i)] = combine(acc[out(i)], map(x[i])) over every input element, where out(i) is
 * i's output offset: a broadcast of the keepdims-shaped output against x gives it. */
static void red_accumulate_f64(const red_def *def, const gl_tensor *x, const gl_bcast *b,
                               const double *shift, double *acc)
{
    const float *xf = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL;
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, b);
    for (int64_t i = 0; i < b->count; i++, gl_bcast_iter_next(&it)) {
        double v = xf ? xf[i] : gl_elem_f64(x, i);
        double *a = &acc[it.off[1]];
        switch (def->map) {
        case MAP_NONE: break;
        case MAP_ABS: v = fabs(v); break;
        case MAP_SQUARE: v = v * v; break;
        case MAP_EXP_SHIFTED: v = exp(v - shift[it.off[1]]); break;
        }
        switch (def->combine) {
        case COMB_ADD: *a += v; break;
        case COMB_MUL: *a *= v; break;
        case COMB_MAX: *a = v > *a || isnan(v) ? v : *a; break;
        case COMB_MIN: *a = v < *a || isnan(v) ? v : *a; break;
        }
    }
}

static void red_accumulate_i64(const red_def *def, const gl_tensor *x, const gl_bcast *b,
                               int64_t *acc)
{
    gl_bcast_iter it;
    gl_bcast_iter_start(&it, b);
    for (int64_t i = 0; i < b->count; i++, gl_bcast_iter_next(&it)) {
        int64_t v = gl_elem_i64(x, i), *a = &acc[it.off[1]];
        /* Wrapping arithmetic (as the integer types do), without signed overflow. */
        uint64_t u = (uint64_t)v;
        switch (def->map) {
        case MAP_ABS: u = v < 0 ? 0 - u : u; break;
        case MAP_SQUARE: u = u * u; break;
        default: break;
        }
        switch (def->combine) {
        case COMB_ADD: *a = (int64_t)((uint64_t)*a + u); break;
        case COMB_MUL: *a = (int64_t)((uint64_t)*a * u); break;
        case COMB_MAX: *a = v > *a ? v : *a; break;
        case COMB_MIN: *a = v < *a ? v : *a; break;
        }
    }
}

static double red_finish_value(red_finish f, double acc, double shift, double n)
{
    switch (f) {
    case FIN_SQRT: return sqrt(acc);
    case FIN_LOG: return log(acc);
    case FIN_LOG_SHIFTED: return isfinite(shift) ? shift + log(acc) : shift;
    case FIN_MEAN: return acc / n;
    default: return acc;
    }
}

static gl_status reduce_run(gl_kernel_ctx *k, const int64_t *axes, size_t n_axes,
                            bool from_input)
{
    const red_def *def = red_def_of(k->node);
    const gl_tensor *x = k->in[0];
    if (!def)
        return gl_fail(GL_ERR_INTERNAL, "%s: not a Reduce op", k->where);
    gl_status st = gl_need_number(k, x, def->exact_ints, "input 'data'");
    if (st)
        return st;
    red_axes ra;
    st = red_axes_get(k->node, axes, n_axes, x->rank, from_input, k->where, &ra);
    if (st)
        return st;
    if (ra.noop)
        return gl_out_share(k, 0, x) ? GL_OK : GL_ERR_NOMEM;
    bool keep = gl_node_attr_int(k->node, "keepdims", 1) != 0;
    /* keepdims-shaped output header: broadcast against x it yields output offsets. */
    gl_tensor_frame fk;
    gl_tensor *kept = gl_tensor_frame_init(&fk, NULL);
    kept->rank = red_out_dims(x->dims, x->rank, ra.mask, true, kept->dims);
    int64_t odims[GL_MAX_RANK];
    double group = 1; /* elements per output (double: an empty x may have huge dims) */
    int orank = red_out_dims(x->dims, x->rank, ra.mask, keep, odims);
    for (int d = 0; d < x->rank; d++)
        group *= ra.mask[d] ? (double)x->dims[d] : 1;
    gl_bcast b = {.count = 0}; /* an empty x reduces to start values: nothing to iterate */
    const gl_tensor *ts[2] = {x, kept};
    if (x->count && (st = gl_bcast_init(&b, ts, 2, k->where)))
        return st;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, orank, odims);
    if (!y)
        return GL_ERR_NOMEM;
    int64_t n_out = y->count ? y->count : 1;
    if (def->exact_ints && (gl_dtype_is_int(x->dtype) || x->dtype == GL_DT_BOOL)) {
        int64_t *acc = malloc((size_t)n_out * sizeof(int64_t));
        if (!acc)
            return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
        for (int64_t i = 0; i < n_out; i++)
            acc[i] = red_start_i64(def->combine);
        red_accumulate_i64(def, x, &b, acc);
        for (int64_t i = 0; i < y->count; i++)
            gl_elem_set_i64(y, i, acc[i]);
        free(acc);
        return GL_OK;
    }
    double *acc = malloc((size_t)n_out * sizeof(double));
    double *shift = def->map == MAP_EXP_SHIFTED ? malloc((size_t)n_out * sizeof(double)) : NULL;
    if (!acc || (def->map == MAP_EXP_SHIFTED && !shift)) {
        free(acc), free(shift);
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    }
    if (shift) { /* log-sum-exp subtracts the maximum first: no overflow in exp */
        static const red_def max_def = {"", RED_MAX, MAP_NONE, COMB_MAX, FIN_NONE, false};
        for (int64_t i = 0; i < n_out; i++)
            shift[i] = -INFINITY;
        red_accumulate_f64(&max_def, x, &b, NULL, shift);
    }
    for (int64_t i = 0; i < n_out; i++)
        acc[i] = red_start(def->combine);
    red_accumulate_f64(def, x, &b, shift, acc);
    float *yf = x->dtype == GL_DT_FLOAT && y->count ? gl_tensor_make_writable(y) : NULL;
    for (int64_t i = 0; i < y->count; i++) {
        double v = red_finish_value(def->finish, acc[i], shift ? shift[i] : 0, group);
        if (yf)
            yf[i] = (float)v;
        else
            gl_elem_set_f64(y, i, v);
    }
    free(acc), free(shift);
    return GL_OK;
}

/* Until ReduceSum-13 / Reduce*-18: axes is an attribute. */
static gl_status reduce_kernel_attr(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    size_t n;
    const int64_t *axes = gl_attr_ints(k->node, "axes", &n);
    return reduce_run(k, axes, n, false);
}

/* From ReduceSum-13 / Reduce*-18: axes is the optional input 1. */
static gl_status reduce_kernel_input(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    int64_t *axes = NULL;
    size_t n = 0;
    const gl_tensor *at = gl_opt_input(k, 1);
    if (at && !gl_tensor_ints(at, k->where, "input 'axes'", &axes, &n))
        return GL_ERR_INPUT;
    st = reduce_run(k, axes, n, true);
    free(axes);
    return st;
}

static gl_status reduce_infer_common(gl_infer_ctx *c, bool from_input)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    bool keep = gl_node_attr_int(c->node, "keepdims", 1) != 0;
    int rank = x->shape.rank;
    int64_t *owned = NULL;
    const int64_t *axes = NULL;
    size_t n = 0;
    if (!from_input) {
        axes = gl_attr_ints(c->node, "axes", &n);
    } else if (c->n_inputs > 1 && c->in_types[1]) {
        if (!gl_infer_const_ints(c, 1, &owned, &n)) {
            /* Axes known only at run time: with keepdims the rank survives. */
            gl_infer_set_rank(c, 0, x->dtype, keep ? rank : GL_RANK_UNKNOWN);
            return GL_OK;
        }
        axes = owned;
    }
    if (rank == GL_RANK_UNKNOWN) {
        free(owned);
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    red_axes ra;
    gl_status st = red_axes_get(c->node, axes, n, rank, from_input, c->where, &ra);
    free(owned);
    if (st)
        return st;
    if (ra.noop)
        return gl_infer_like_input(c, 0, 0);
    gl_shape s;
    gl_shape_init_unknown(&s);
    int r = 0;
    for (int d = 0; d < rank; d++)
        r += !ra.mask[d] || keep;
    gl_shape_set_rank(&s, r);
    r = 0;
    for (int d = 0; d < rank; d++) {
        if (!ra.mask[d])
            gl_dim_copy(&s.dims[r++], &x->shape.dims[d]);
        else if (keep)
            s.dims[r++].value = 1;
    }
    gl_infer_set(c, 0, x->dtype, &s);
    gl_shape_free(&s);
    return GL_OK;
}

static gl_status reduce_infer_attr(gl_infer_ctx *c) { return reduce_infer_common(c, false); }
static gl_status reduce_infer_input(gl_infer_ctx *c) { return reduce_infer_common(c, true); }

/* ---- ArgMax / ArgMin ---------------------------------------------------------------- */

static gl_status arg_extreme_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    if ((st = gl_need_number(k, x, true, "input 'data'")))
        return st;
    bool want_max = !strcmp(k->node->op_type, "ArgMax");
    bool last = gl_node_attr_int(k->node, "select_last_index", 0) != 0;
    bool keep = gl_node_attr_int(k->node, "keepdims", 1) != 0;
    int axis;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", 0), x->rank, false, k->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    if (x->count == 0 && x->dims[axis] == 0 && empty_only_along(x, axis))
        return gl_fail(GL_ERR_INPUT, "%s: axis %d of input 'data' is empty", k->where, axis);
    bool mask[GL_MAX_RANK] = {false};
    mask[axis] = true;
    int64_t odims[GL_MAX_RANK];
    int orank = red_out_dims(x->dims, x->rank, mask, keep, odims);
    gl_tensor *y = gl_out_new(k, 0, GL_DT_INT64, orank, odims);
    if (!y)
        return GL_ERR_NOMEM;
    if (x->count == 0)
        return GL_OK;
    gl_axis_view v = gl_axis_view_of(x->dims, x->rank, axis);
    int64_t *yd = gl_tensor_make_writable(y);
    const float *xf = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL;
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t in = 0; in < v.inner; in++) {
            int64_t base = o * v.n * v.inner + in, best = 0;
            for (int64_t j = 1; j < v.n; j++) {
                int64_t cand = base + j * v.inner, cur = base + best * v.inner;
                int c = xf && !isnan(xf[cand]) && !isnan(xf[cur])
                            ? (xf[cand] > xf[cur]) - (xf[cand] < xf[cur])
                            : gl_elem_cmp(x, cand, cur);
                if (!want_max)
                    c = -c;
                if (c > 0 || (c == 0 && last))
                    best = j;
            }
            yd[o * v.inner + in] = best;
        }
    return GL_OK;
}

static gl_status arg_extreme_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    bool keep = gl_node_attr_int(c->node, "keepdims", 1) != 0;
    int rank = x->shape.rank, axis;
    if (rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, GL_DT_INT64, GL_RANK_UNKNOWN);
        return GL_OK;
    }
    if (!gl_axis_normalize(gl_node_attr_int(c->node, "axis", 0), rank, false, c->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_set_rank(&s, keep ? rank : rank - 1);
    for (int d = 0, r = 0; d < rank; d++) {
        if (d != axis)
            gl_dim_copy(&s.dims[r++], &x->shape.dims[d]);
        else if (keep)
            s.dims[r++].value = 1;
    }
    gl_infer_set(c, 0, GL_DT_INT64, &s);
    gl_shape_free(&s);
    return GL_OK;
}

/* ---- CumSum ------------------------------------------------------------------------ */

/* The axis input: a scalar (or one-element) integer tensor. */
static gl_status scalar_axis_input(const gl_tensor *t, int rank, const char *where, int *axis)
{
    if (!gl_dtype_is_int(t->dtype) || t->count != 1 || t->rank > 1)
        return gl_fail(GL_ERR_INPUT, "%s: input 'axis' must be an integer scalar", where);
    return gl_axis_normalize(gl_elem_i64(t, 0), rank, false, where, "axis", axis)
               ? GL_OK
               : GL_ERR_INPUT;
}

static gl_status cumsum_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    int axis;
    if ((st = gl_need_number(k, x, false, "input 'x'")) ||
        (st = scalar_axis_input(k->in[1], x->rank, k->where, &axis)))
        return st;
    bool exclusive = gl_node_attr_int(k->node, "exclusive", 0) != 0;
    bool reverse = gl_node_attr_int(k->node, "reverse", 0) != 0;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (x->count == 0)
        return GL_OK;
    gl_axis_view v = gl_axis_view_of(x->dims, x->rank, axis);
    bool ints = gl_dtype_is_int(x->dtype);
    /* One running sum per inner lane, so rows are read in memory order. */
    double *accf = ints ? NULL : malloc((size_t)(v.inner ? v.inner : 1) * sizeof(double));
    int64_t *acci = ints ? malloc((size_t)(v.inner ? v.inner : 1) * sizeof(int64_t)) : NULL;
    if (!accf && !acci)
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    for (int64_t o = 0; o < v.outer; o++) {
        for (int64_t in = 0; in < v.inner; in++) {
            if (ints)
                acci[in] = 0;
            else
                accf[in] = 0;
        }
        for (int64_t j = 0; j < v.n; j++) {
            int64_t row = (o * v.n + (reverse ? v.n - 1 - j : j)) * v.inner;
            for (int64_t in = 0; in < v.inner; in++) {
                int64_t i = row + in;
                if (ints) {
                    int64_t xv = gl_elem_i64(x, i);
                    if (exclusive)
                        gl_elem_set_i64(y, i, acci[in]);
                    acci[in] = (int64_t)((uint64_t)acci[in] + (uint64_t)xv);
                    if (!exclusive)
                        gl_elem_set_i64(y, i, acci[in]);
                } else {
                    double xv = gl_elem_f64(x, i);
                    if (exclusive)
                        gl_elem_set_f64(y, i, accf[in]);
                    accf[in] += xv;
                    if (!exclusive)
                        gl_elem_set_f64(y, i, accf[in]);
                }
            }
        }
    }
    free(accf), free(acci);
    return GL_OK;
}

static gl_status like_input_infer(gl_infer_ctx *c)
{
    return gl_infer_like_input(c, 0, 0);
}

/* ---- Softmax / LogSoftmax / Hardmax ---------------------------------------------------- */

typedef enum smax_kind { SMAX_SOFTMAX, SMAX_LOG_SOFTMAX, SMAX_HARDMAX } smax_kind;

static smax_kind smax_kind_of(const gl_node *n)
{
    return !strcmp(n->op_type, "LogSoftmax") ? SMAX_LOG_SOFTMAX
           : !strcmp(n->op_type, "Hardmax")  ? SMAX_HARDMAX
                                             : SMAX_SOFTMAX;
}

/* One row in place, stable: the maximum is subtracted before exp. */
static void smax_row(double *v, int64_t n, smax_kind kind)
{
    int64_t arg = 0;
    for (int64_t j = 1; j < n; j++)
        if (v[j] > v[arg])
            arg = j;
    double mx = n ? v[arg] : 0;
    if (kind == SMAX_HARDMAX) {
        for (int64_t j = 0; j < n; j++)
            v[j] = j == arg;
        return;
    }
    double sum = 0;
    for (int64_t j = 0; j < n; j++)
        sum += exp(v[j] - mx);
    double log_sum = log(sum);
    for (int64_t j = 0; j < n; j++)
        v[j] = kind == SMAX_LOG_SOFTMAX ? v[j] - mx - log_sum : exp(v[j] - mx) / sum;
}

/* Apply the op to every row of the [outer, n, inner] view of x into y. */
static gl_status smax_apply(const gl_tensor *x, gl_tensor *y, gl_axis_view v, smax_kind kind,
                            const char *where)
{
    double *row = malloc((size_t)(v.n ? v.n : 1) * sizeof(double));
    if (!row)
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", where);
    const float *xf = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL;
    float *yf = y->dtype == GL_DT_FLOAT && y->count ? gl_tensor_make_writable(y) : NULL;
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t in = 0; in < v.inner; in++) {
            int64_t base = o * v.n * v.inner + in;
            for (int64_t j = 0; j < v.n; j++)
                row[j] = xf ? xf[base + j * v.inner] : gl_elem_f64(x, base + j * v.inner);
            smax_row(row, v.n, kind);
            for (int64_t j = 0; j < v.n; j++) {
                if (yf)
                    yf[base + j * v.inner] = (float)row[j];
                else
                    gl_elem_set_f64(y, base + j * v.inner, row[j]);
            }
        }
    free(row);
    return GL_OK;
}

/* The softmax axis: before 13 (`flatten`) the default is 1 and axis == rank is allowed
 * too (rows of one element); negative axes count from the end in both. */
static bool smax_axis(const gl_node *n, int rank, bool flatten, const char *where, int *axis)
{
    int64_t a = gl_node_attr_int(n, "axis", flatten ? 1 : -1);
    if (flatten && a == rank) {
        *axis = rank;
        return true;
    }
    return gl_axis_normalize(a, rank, false, where, "axis", axis);
}

/* Before opset 13 the input is coerced to 2-D at `axis` (default 1): each row is the
 * flattened dims from axis on. From 13 the op runs along the one axis (default -1). */
static gl_status smax_kernel(gl_kernel_ctx *k, bool flatten)
{
    gl_status st = gl_need_inputs(k, 1);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    if (!gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: input must be a float tensor, got %s", k->where,
                       gl_dtype_name(x->dtype));
    int axis;
    if (!smax_axis(k->node, x->rank, flatten, k->where, &axis))
        return GL_ERR_INPUT;
    gl_tensor *y = gl_out_new(k, 0, x->dtype, x->rank, x->dims);
    if (!y)
        return GL_ERR_NOMEM;
    if (x->count == 0)
        return GL_OK;
    gl_axis_view v;
    if (flatten) {
        v = (gl_axis_view){1, 1, 1};
        for (int d = 0; d < x->rank; d++)
            *(d < axis ? &v.outer : &v.n) *= x->dims[d];
    } else {
        v = gl_axis_view_of(x->dims, x->rank, axis);
    }
    return smax_apply(x, y, v, smax_kind_of(k->node), k->where);
}

static gl_status smax_kernel_v1(gl_kernel_ctx *k) { return smax_kernel(k, true); }
static gl_status smax_kernel_v13(gl_kernel_ctx *k) { return smax_kernel(k, false); }

static gl_status smax_infer_common(gl_infer_ctx *c, bool flatten)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int axis;
    if (x->shape.rank != GL_RANK_UNKNOWN &&
        !smax_axis(c->node, x->shape.rank, flatten, c->where, &axis))
        return GL_ERR_INPUT;
    return gl_infer_like_input(c, 0, 0);
}

static gl_status smax_infer_v1(gl_infer_ctx *c) { return smax_infer_common(c, true); }
static gl_status smax_infer_v13(gl_infer_ctx *c) { return smax_infer_common(c, false); }

/* ---- TopK ------------------------------------------------------------------------------ */

/* Stable merge sort of candidate indices: with equal values the smaller index stays
 * first, which is the tie rule of TopK. */
typedef struct topk_ctx {
    const gl_tensor *x;
    const float *xf;    /* fast path for float32 without NaN checks */
    int64_t base, stride;
    bool largest;
} topk_ctx;

static bool topk_before(const topk_ctx *c, int64_t a, int64_t b)
{
    int64_t ia = c->base + a * c->stride, ib = c->base + b * c->stride;
    int cmp;
    if (c->xf && !isnan(c->xf[ia]) && !isnan(c->xf[ib]))
        cmp = (c->xf[ia] > c->xf[ib]) - (c->xf[ia] < c->xf[ib]);
    else
        cmp = gl_elem_cmp(c->x, ia, ib);
    return c->largest ? cmp > 0 : cmp < 0;
}

static void topk_sort(const topk_ctx *c, int64_t *idx, int64_t *tmp, int64_t n)
{
    for (int64_t width = 1; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                tmp[o++] = topk_before(c, idx[j], idx[i]) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[o++] = idx[i++];
            while (j < hi)
                tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
    }
}

static gl_status topk_run(gl_kernel_ctx *k, int64_t kk)
{
    const gl_tensor *x = k->in[0];
    int axis;
    gl_status st = gl_need_number(k, x, false, "input 'X'");
    if (st)
        return st;
    if (!gl_axis_normalize(gl_node_attr_int(k->node, "axis", -1), x->rank, false, k->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    if (kk < 0 || kk > x->dims[axis])
        return gl_fail(GL_ERR_INPUT, "%s: K = %lld is outside [0, %lld] for axis %d", k->where,
                       (long long)kk, (long long)x->dims[axis], axis);
    int64_t dims[GL_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof(int64_t));
    dims[axis] = kk;
    gl_tensor *vals = gl_out_new(k, 0, x->dtype, x->rank, dims);
    gl_tensor *inds = vals ? gl_out_new(k, 1, GL_DT_INT64, x->rank, dims) : NULL;
    if (!inds)
        return GL_ERR_NOMEM;
    if (vals->count == 0)
        return GL_OK;
    gl_axis_view v = gl_axis_view_of(x->dims, x->rank, axis);
    int64_t *idx = malloc((size_t)(v.n ? v.n : 1) * sizeof(int64_t));
    int64_t *tmp = malloc((size_t)(v.n ? v.n : 1) * sizeof(int64_t));
    if (!idx || !tmp) {
        free(idx), free(tmp);
        return gl_fail(GL_ERR_NOMEM, "%s: out of memory", k->where);
    }
    topk_ctx c = {.x = x, .xf = x->dtype == GL_DT_FLOAT ? gl_tensor_data(x) : NULL,
                  .stride = v.inner,
                  .largest = gl_node_attr_int(k->node, "largest", 1) != 0};
    size_t esz = gl_dtype_size(x->dtype);
    const uint8_t *src = gl_tensor_data(x);
    uint8_t *vd = gl_tensor_make_writable(vals);
    int64_t *id = gl_tensor_make_writable(inds);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t in = 0; in < v.inner; in++) {
            c.base = o * v.n * v.inner + in;
            for (int64_t j = 0; j < v.n; j++)
                idx[j] = j;
            topk_sort(&c, idx, tmp, v.n);
            for (int64_t j = 0; j < kk; j++) {
                int64_t out = (o * kk + j) * v.inner + in;
                memcpy(vd + out * esz, src + (c.base + idx[j] * v.inner) * esz, esz);
                id[out] = idx[j];
            }
        }
    free(idx), free(tmp);
    return GL_OK;
}

/* TopK-1: k is an attribute. */
static gl_status topk_kernel_v1(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 1);
    return st ? st : topk_run(k, gl_node_attr_int(k->node, "k", -1));
}

/* From TopK-10: K is a one-element int64 input. */
static gl_status topk_kernel_v10(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *kt = k->in[1];
    if (!gl_dtype_is_int(kt->dtype) || kt->count != 1)
        return gl_fail(GL_ERR_INPUT, "%s: input 'K' must hold one integer", k->where);
    return topk_run(k, gl_elem_i64(kt, 0));
}

static gl_status topk_infer_k(gl_infer_ctx *c, bool known, int64_t kk)
{
    const gl_type *x = gl_infer_input(c, 0);
    if (!x)
        return GL_OK;
    int rank = x->shape.rank, axis;
    if (rank == GL_RANK_UNKNOWN) {
        gl_infer_set_rank(c, 0, x->dtype, rank);
        gl_infer_set_rank(c, 1, GL_DT_INT64, rank);
        return GL_OK;
    }
    if (!gl_axis_normalize(gl_node_attr_int(c->node, "axis", -1), rank, false, c->where,
                           "axis", &axis))
        return GL_ERR_INPUT;
    int64_t n = x->shape.dims[axis].value;
    if (known && (kk < 0 || (n >= 0 && kk > n)))
        return gl_fail(GL_ERR_INPUT, "%s: K = %lld is outside [0, %lld] for axis %d", c->where,
                       (long long)kk, (long long)n, axis);
    gl_shape s;
    gl_shape_init_unknown(&s);
    gl_shape_copy(&s, &x->shape);
    gl_dim_set(&s.dims[axis], known ? kk : GL_DIM_UNKNOWN);
    gl_infer_set(c, 0, x->dtype, &s);
    gl_infer_set(c, 1, GL_DT_INT64, &s);
    gl_shape_free(&s);
    return GL_OK;
}

static gl_status topk_infer_v1(gl_infer_ctx *c)
{
    return topk_infer_k(c, true, gl_node_attr_int(c->node, "k", -1));
}

static gl_status topk_infer_v10(gl_infer_ctx *c)
{
    int64_t kk = 0;
    bool known = gl_infer_const_int(c, 1, &kk);
    return topk_infer_k(c, known, kk);
}

/* ---- NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss -------------------------------- */

typedef enum loss_reduction { LOSS_NONE, LOSS_SUM, LOSS_MEAN } loss_reduction;

static gl_status loss_reduction_of(const gl_node *n, const char *where, loss_reduction *r)
{
    const char *s = gl_node_attr_string(n, "reduction", "mean");
    if (!strcmp(s, "none"))
        *r = LOSS_NONE;
    else if (!strcmp(s, "sum"))
        *r = LOSS_SUM;
    else if (!strcmp(s, "mean"))
        *r = LOSS_MEAN;
    else
        return gl_fail(GL_ERR_INPUT, "%s: reduction '%s' is not none, sum or mean", where, s);
    return GL_OK;
}

/* input [N, C, d1..dk], target [N, d1..dk] integer, weight [C]. */
static gl_status loss_check(const gl_tensor *x, const gl_tensor *target,
                            const gl_tensor *weight, const char *where)
{
    if (!gl_dtype_is_float(x->dtype) || (weight && !gl_dtype_is_float(weight->dtype)))
        return gl_fail(GL_ERR_INPUT, "%s: input and weight must be float tensors", where);
    if (x->rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input must have rank >= 2 ([N, C, ...]), got %d",
                       where, x->rank);
    bool shape_ok = target->rank == x->rank - 1 && target->dims[0] == x->dims[0];
    for (int d = 1; shape_ok && d < target->rank; d++)
        shape_ok = target->dims[d] == x->dims[d + 1];
    if (!shape_ok)
        return gl_fail(GL_ERR_INPUT, "%s: target's shape must be input's without dim 1", where);
    if (!gl_dtype_is_int(target->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: target must be an integer tensor", where);
    if (weight && (weight->rank != 1 || weight->dims[0] != x->dims[1]))
        return gl_fail(GL_ERR_INPUT, "%s: weight must be a vector of C = %lld values", where,
                       (long long)x->dims[1]);
    return GL_OK;
}

/* loss[n, d] = -logp[n, t, d] * w[t] for t = target[n, d] (0 where t is ignore_index);
 * reduced by sum, or by mean = sum / (sum of the weights used). Output 0 of k. */
static gl_status nll_run(gl_kernel_ctx *k, const gl_tensor *logp, const gl_tensor *target,
                         const gl_tensor *weight)
{
    loss_reduction red;
    gl_status st = loss_reduction_of(k->node, k->where, &red);
    if (st || (st = loss_check(logp, target, weight, k->where)))
        return st;
    const gl_attr *ii = gl_node_attr_typed(k->node, "ignore_index", GL_ATTR_INT);
    bool has_ignore = ii != NULL;
    int64_t ignore = has_ignore ? ii->i : 0;
    int64_t nn = logp->dims[0], cc = logp->dims[1], dd = nn ? target->count / nn : 0;
    gl_tensor *y = red == LOSS_NONE ? gl_out_new(k, 0, logp->dtype, target->rank, target->dims)
                                    : gl_out_new(k, 0, logp->dtype, 0, NULL);
    if (!y)
        return GL_ERR_NOMEM;
    const float *lf = logp->dtype == GL_DT_FLOAT ? gl_tensor_data(logp) : NULL;
    double sum = 0, wsum = 0;
    for (int64_t n = 0; n < nn && dd > 0; n++)
        for (int64_t d = 0; d < dd; d++) {
            int64_t ti = n * dd + d, t = gl_elem_i64(target, ti);
            double loss = 0, w = 0;
            if (!has_ignore || t != ignore) {
                if (t < 0 || t >= cc)
                    return gl_fail(GL_ERR_INPUT, "%s: target %lld at position %lld is outside "
                                   "[0, %lld)", k->where, (long long)t, (long long)ti,
                                   (long long)cc);
                int64_t xi = (n * cc + t) * dd + d;
                w = weight ? gl_elem_f64(weight, t) : 1;
                loss = -(lf ? lf[xi] : gl_elem_f64(logp, xi)) * w;
            }
            if (red == LOSS_NONE)
                gl_elem_set_f64(y, ti, loss);
            sum += loss;
            wsum += w;
        }
    if (red != LOSS_NONE)
        gl_elem_set_f64(y, 0, red == LOSS_SUM ? sum : sum / wsum);
    return GL_OK;
}

static gl_status nll_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    return st ? st : nll_run(k, k->in[0], k->in[1], gl_opt_input(k, 2));
}

/* log_prob = LogSoftmax over dim 1, then the NLL loss of it; log_prob is output 1 when
 * asked for. */
static gl_status sce_kernel(gl_kernel_ctx *k)
{
    gl_status st = gl_need_inputs(k, 2);
    if (st)
        return st;
    const gl_tensor *x = k->in[0];
    if (x->rank < 2 || !gl_dtype_is_float(x->dtype))
        return gl_fail(GL_ERR_INPUT, "%s: scores must be a float tensor of rank >= 2",
                       k->where);
    gl_tensor *logp;
    if (gl_out_wanted(k, 1)) {
        logp = gl_out_new(k, 1, x->dtype, x->rank, x->dims);
    } else {
        logp = gl_tensor_new(x->dtype, x->rank, x->dims);
        if (!logp)
            gl_error_prefix("%s: log_prob", k->where);
    }
    if (!logp)
        return GL_ERR_NOMEM;
    if (x->count)
        st = smax_apply(x, logp, gl_axis_view_of(x->dims, x->rank, 1), SMAX_LOG_SOFTMAX,
                        k->where);
    if (!st)
        st = nll_run(k, logp, k->in[1], gl_opt_input(k, 2));
    if (!gl_out_wanted(k, 1))
        gl_tensor_free(logp);
    return st;
}

static gl_status loss_infer(gl_infer_ctx *c)
{
    const gl_type *x = gl_infer_input(c, 0), *t = gl_infer_input(c, 1);
    if (!x)
        return GL_OK;
    loss_reduction red;
    gl_status st = loss_reduction_of(c->node, c->where, &red);
    if (st)
        return st;
    if (x->shape.rank != GL_RANK_UNKNOWN && x->shape.rank < 2)
        return gl_fail(GL_ERR_INPUT, "%s: input must have rank >= 2 ([N, C, ...]), got %d",
                       c->where, x->shape.rank);
    if (red != LOSS_NONE) {
        gl_infer_set_rank(c, 0, x->dtype, 0);
    } else if (x->shape.rank != GL_RANK_UNKNOWN) {
        gl_shape s;
        gl_shape_init_unknown(&s);
        gl_shape_set_rank(&s, x->shape.rank - 1);
        gl_dim_copy(&s.dims[0], &x->shape.dims[0]);
        for (int d = 1; d < s.rank; d++)
            gl_dim_copy(&s.dims[d], &x->shape.dims[d + 1]);
        gl_infer_set(c, 0, x->dtype, &s);
        gl_shape_free(&s);
    } else if (t) {
        gl_infer_set(c, 0, x->dtype, &t->shape);
    } else {
        gl_infer_set_rank(c, 0, x->dtype, GL_RANK_UNKNOWN);
    }
    if (c->n_outputs > 1)
        gl_infer_set(c, 1, x->dtype, &x->shape);
    return GL_OK;
}

/* ---- the table ---------------------------------------------------------------------- */

static const gl_op_def reduce_ops[] = {
    {"", "ArgMax", 1, arg_extreme_infer, arg_extreme_kernel, 0},
    {"", "ArgMin", 1, arg_extreme_infer, arg_extreme_kernel, 0},
    {"", "CumSum", 11, like_input_infer, cumsum_kernel, 0},
    {"", "Hardmax", 1, smax_infer_v1, smax_kernel_v1, 0},
    {"", "Hardmax", 13, smax_infer_v13, smax_kernel_v13, 0},
    {"", "LogSoftmax", 1, smax_infer_v1, smax_kernel_v1, 0},
    {"", "LogSoftmax", 13, smax_infer_v13, smax_kernel_v13, 0},
    {"", "NegativeLogLikelihoodLoss", 12, loss_infer, nll_kernel, 0},
    {"", "ReduceL1", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceL1", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceL2", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceL2", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceLogSum", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceLogSum", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceLogSumExp", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceLogSumExp", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceMax", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceMax", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceMean", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceMean", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceMin", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceMin", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceProd", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceProd", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceSum", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceSum", 13, reduce_infer_input, reduce_kernel_input, 0},
    {"", "ReduceSumSquare", 1, reduce_infer_attr, reduce_kernel_attr, 0},
    {"", "ReduceSumSquare", 18, reduce_infer_input, reduce_kernel_input, 0},
    {"", "Softmax", 1, smax_infer_v1, smax_kernel_v1, 0},
    {"", "Softmax", 13, smax_infer_v13, smax_kernel_v13, 0},
    {"", "SoftmaxCrossEntropyLoss", 12, loss_infer, sce_kernel, 0},
    {"", "TopK", 1, topk_infer_v1, topk_kernel_v1, 0},
    {"", "TopK", 10, topk_infer_v10, topk_kernel_v10, 0},
};

const gl_op_family gl_ops_reduce = {"reduce", reduce_ops, GL_ARRAY_LEN(reduce_ops)};
