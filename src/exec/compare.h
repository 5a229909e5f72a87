/* compare.h — how close two tensors are. The test data sets they are compared against
 * (ONNX's test_data_set_N folders) are read by onnx/dataset.h. */
#ifndef GL_COMPARE_H
#define GL_COMPARE_H

#include "exec/quant.h"
#include "ir/graph.h"
#include "ir/tensor.h"

#include <stdbool.h>

typedef struct gl_compare {
    bool same_shape;     /* dtype and dims equal */
    int64_t count;       /* elements compared */
    double max_abs;      /* max |a - b| over finite pairs */
    double max_rel;      /* max |a - b| / max(|b|, tiny) over finite pairs */
    double nmse;         /* sum (a-b)^2 / sum b^2 (0 when both are all zero; inf when only
                            b is) */
    int64_t over_tol;    /* elements with |a - b| > atol + rtol * |b| (integers, bools and
                            strings: elements that differ) */
    int64_t nan_mismatch;/* NaN in one and not the other, or an Inf the other does not
                            have (of that sign) */
    int64_t first_bad;   /* first element over tolerance or NaN/Inf mismatch, -1 if none */
    int64_t worst;       /* the element farthest past its tolerance (largest |a-b| - (atol +
                            rtol*|b|), over tolerance or not; the first NaN/Inf mismatch
                            before any), -1 when no element was compared. Complex
                            tensors count components, as first_bad does. */
    int64_t nan_got, inf_got;           /* non-finite elements of each side (floating */
    int64_t nan_expected, inf_expected; /* types; 0 for the others) */
    bool ok;             /* same shape, no NaN mismatch, over_tol == 0 */
    /* Compared in steps of a scale (gl_compare_in_steps): over_tol counts the elements
     * more than `steps` steps apart, max_abs and nmse are of the real values. */
    bool in_steps;
    double steps;        /* the tolerance, in steps */
    double max_steps;    /* the largest |a - b| in steps of its element's scale */
} gl_compare;

/* The tolerances a comparison of graph values takes: --rtol, --atol and, for a
 * quantized or dequantized value, --steps. */
typedef struct gl_tolerance {
    double rtol, atol, steps;
} gl_tolerance;

/* The steps of slack a dequantized value gets for the float arithmetic of (q - zero) *
 * scale on either side: values on the grid are a whole number of steps apart. */
#define GL_STEP_SLACK 1e-3

/* Compare `got` against `expected` with numpy.allclose's rule |a-b| <= atol + rtol*|b|
 * (NaN equals NaN; ±Inf equal only to the same Inf). Integer/bool tensors compare
 * exactly; strings by bytes; float16/bfloat16 through float. */
void gl_compare_tensors(const gl_tensor *got, const gl_tensor *expected, double rtol,
                        double atol, gl_compare *r);
/* got against expected, both of a value quantized as q says: element by element as
 * real numbers (integers dequantized first), over tolerance when more than `steps` steps
 * of its scale (plus GL_STEP_SLACK) apart. Rounding ties that another order of summation
 * flips move an int8 result by one step: a float atol either fails them all or, large
 * enough to pass them, hides real errors. */
void gl_compare_in_steps(const gl_tensor *got, const gl_tensor *expected, const gl_quant *q,
                         double steps, gl_compare *r);
/* got against expected, tensors of graph value v (NULL: a value the graph does not
 * name): in steps of its scale (tol->steps) when v is a QuantizeLinear's or a
 * DequantizeLinear's output (gl_quant_of), else with tol's rtol and atol. The one rule
 * run, profile, bisect and the workbench compare values by. */
void gl_compare_value(const gl_value *v, const gl_tensor *got, const gl_tensor *expected,
                      const gl_tolerance *tol, gl_compare *r);
/* One line: "max_abs 1.2e-06, max_rel 3e-05, nmse 1e-12, 0 over tolerance" (", 2
 * NaN/Inf mismatches" when there are; "dtype or shape differs" when they do); in steps:
 * "max_abs 0.0394, max_steps 1, nmse 2.1e-05, 0 over 1 step". */
void gl_compare_format(const gl_compare *r, char *buf, size_t len);

#endif
