/* attrs.c — the attributes a box shows after its op: "Transpose perm=[0,2,3,1]",
 * "Conv k=3x3 s=2 p=1 g=32", "Reshape shape=[1,16,256]", "Cast to=float16" (issue 24).
 *
 * One table says, per op, which attributes (or constant inputs) are worth a glance and
 * which value of each goes without saying (the default): a reader learns what a box does
 * without opening it, and the line stays short because defaults are left out. Values are
 * model text, so they go through the display sanitizer (text.c) like names do.
 */
#include "passes/patterns.h" /* gl_pt_const: an initializer or a Constant node's value */
#include "render/stages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST_VALUES 8     /* list elements shown before "…" */
#define MAX_STRING_CHARS 16   /* a string attribute's characters before its middle is cut */
#define MAX_INPUT_VALUES 8    /* a constant input longer than this is not shown */

typedef enum attr_form {
    FORM_PLAIN,   /* an int, a float, a string; a list as [a,b] */
    FORM_UNIFORM, /* a list whose elements are all equal as that one value: [2,2] -> 2 */
    FORM_DIMS,    /* a list as 3x3 */
    FORM_DTYPE,   /* an element type number as its name: 10 -> float16 */
} attr_form;

typedef struct shown_attr {
    const char *ops;    /* the op types it applies to, separated by spaces (any domain) */
    const char *attr;   /* attribute name; NULL: the constant input `input` */
    int input;
    const char *label;  /* as shown before '=' */
    attr_form form;
    const char *hidden; /* the value, as shown, that is left out (the default); NULL: none */
} shown_attr;

#define CONV_LIKE "Conv ConvTranspose ConvInteger QLinearConv FusedConv FusedConvAddRelu"
#define POOLS "MaxPool AveragePool LpPool"
#define REDUCES                                                                             \
    "ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum " \
    "ReduceLogSumExp ReduceSumSquare"
#define AXIS_OPS                                                                            \
    "Softmax LogSoftmax Hardmax Concat Gather GatherElements Flatten Split ArgMax ArgMin " \
    "TopK CumSum"

/* In the order shown. */
static const shown_attr SHOWN[] = {
    {CONV_LIKE " " POOLS, "kernel_shape", 0, "k", FORM_DIMS, NULL},
    {CONV_LIKE " " POOLS, "strides", 0, "s", FORM_UNIFORM, "1"},
    {CONV_LIKE " " POOLS, "pads", 0, "p", FORM_UNIFORM, "0"},
    {CONV_LIKE " " POOLS, "dilations", 0, "d", FORM_UNIFORM, "1"},
    {CONV_LIKE, "group", 0, "g", FORM_PLAIN, "1"},
    {CONV_LIKE " " POOLS, "auto_pad", 0, "pad", FORM_PLAIN, "NOTSET"},
    {"ConvTranspose", "output_padding", 0, "op", FORM_UNIFORM, "0"},
    {POOLS, "ceil_mode", 0, "ceil", FORM_PLAIN, "0"},
    {"FusedConv FusedGemm", "activation", 0, "act", FORM_PLAIN, NULL},
    {"Transpose", "perm", 0, "perm", FORM_PLAIN, NULL},
    {"Gemm FusedGemm", "transA", 0, "transA", FORM_PLAIN, "0"},
    {"Gemm FusedGemm", "transB", 0, "transB", FORM_PLAIN, "0"},
    {"Gemm FusedGemm", "alpha", 0, "alpha", FORM_PLAIN, "1"},
    {"Gemm FusedGemm", "beta", 0, "beta", FORM_PLAIN, "1"},
    {"Cast", "to", 0, "to", FORM_DTYPE, NULL},
    {AXIS_OPS " LayerNormalization", "axis", 0, "axis", FORM_PLAIN, NULL},
    {"Reshape Expand", NULL, 1, "shape", FORM_PLAIN, NULL},
    {"Tile", NULL, 1, "repeats", FORM_PLAIN, NULL},
    {"TopK", NULL, 1, "k", FORM_PLAIN, NULL},
    {"Squeeze Unsqueeze " REDUCES, "axes", 0, "axes", FORM_PLAIN, NULL},
    {"Squeeze Unsqueeze " REDUCES, NULL, 1, "axes", FORM_PLAIN, NULL},
    {REDUCES, "keepdims", 0, "keepdims", FORM_PLAIN, "1"},
    {"Slice", NULL, 1, "starts", FORM_PLAIN, NULL},
    {"Slice", NULL, 2, "ends", FORM_PLAIN, NULL},
    {"Slice", NULL, 3, "axes", FORM_PLAIN, NULL},
    {"Slice", NULL, 4, "steps", FORM_UNIFORM, "1"},
    {"Pad", "mode", 0, "mode", FORM_PLAIN, "constant"},
    {"Pad", NULL, 1, "pads", FORM_PLAIN, NULL},
    {"Clip", NULL, 1, "min", FORM_PLAIN, NULL},
    {"Clip", NULL, 2, "max", FORM_PLAIN, NULL},
    {"Resize Upsample", "mode", 0, "mode", FORM_PLAIN, "nearest"},
    {"DepthToSpace SpaceToDepth", "blocksize", 0, "block", FORM_PLAIN, NULL},
    {"DepthToSpace", "mode", 0, "mode", FORM_PLAIN, "DCR"},
    {"Gelu FastGelu", "approximate", 0, "approx", FORM_PLAIN, "none"},
    {"LeakyRelu", "alpha", 0, "alpha", FORM_PLAIN, "0.01"},
    {"Elu Celu", "alpha", 0, "alpha", FORM_PLAIN, "1"},
    {"HardSigmoid", "alpha", 0, "alpha", FORM_PLAIN, "0.2"},
    {"Trilu", "upper", 0, "upper", FORM_PLAIN, "1"},
    {"Einsum", "equation", 0, "eq", FORM_PLAIN, NULL},
};

/* `op` is one of the space-separated words of `ops`. */
static bool op_listed(const char *ops, const char *op)
{
    size_t len = strlen(op);
    for (const char *p = ops; *p;) {
        const char *end = strchr(p, ' ');
        size_t word = end ? (size_t)(end - p) : strlen(p);
        if (word == len && memcmp(p, op, len) == 0)
            return true;
        p += word + (end != NULL);
    }
    return false;
}

/* The elements of a list as shown by `form` (ints or numbers). */
static void put_list(gl_strbuf *b, const double *vals, size_t n, attr_form form)
{
    bool uniform = n > 0;
    for (size_t i = 1; i < n; i++)
        uniform = uniform && vals[i] == vals[0];
    if (form == FORM_UNIFORM && uniform) {
        gl_rv_put_number(b, vals[0]);
        return;
    }
    const char *sep = form == FORM_DIMS ? "x" : ",";
    if (form != FORM_DIMS)
        gl_sb_putc(b, '[');
    for (size_t i = 0; i < n && i < MAX_LIST_VALUES; i++) {
        if (i)
            gl_sb_puts(b, sep);
        gl_rv_put_number(b, vals[i]);
    }
    if (n > MAX_LIST_VALUES)
        gl_sb_puts(b, ",\xE2\x80\xA6");
    if (form != FORM_DIMS)
        gl_sb_putc(b, ']');
}

/* The attribute's value as shown; false when it is of a kind we do not show. */
static bool put_attr_value(gl_strbuf *b, const gl_attr *a, attr_form form)
{
    double vals[MAX_LIST_VALUES + 1];
    size_t n = a->n < MAX_LIST_VALUES + 1 ? a->n : MAX_LIST_VALUES + 1;
    switch (a->type) {
    case GL_ATTR_INT:
        if (form == FORM_DTYPE)
            gl_sb_puts(b, gl_dtype_name((gl_dtype)a->i));
        else
            gl_rv_put_number(b, (double)a->i);
        return true;
    case GL_ATTR_FLOAT: gl_rv_put_number(b, a->f); return true;
    case GL_ATTR_STRING:
        gl_rv_put_display(b, (const char *)a->s.data, MAX_STRING_CHARS);
        return true;
    case GL_ATTR_INTS:
    case GL_ATTR_FLOATS:
        for (size_t i = 0; i < n; i++)
            vals[i] = a->type == GL_ATTR_INTS ? (double)a->ints[i] : a->floats[i];
        put_list(b, vals, a->n > MAX_LIST_VALUES ? MAX_LIST_VALUES + 1 : a->n, form);
        return true;
    default: return false;
    }
}

/* A small numeric constant input as a list (a scalar as its value); false otherwise. */
static bool put_input_value(gl_strbuf *b, const gl_node *n, int input, attr_form form)
{
    const gl_tensor *t = (size_t)input < n->n_inputs ? gl_pt_const(n->inputs[input]) : NULL;
    if (!t || t->count < 1 || t->count > MAX_INPUT_VALUES || t->dtype == GL_DT_STRING ||
        gl_dtype_size(t->dtype) == 0 || !gl_tensor_data(t))
        return false;
    double vals[MAX_INPUT_VALUES];
    for (int64_t i = 0; i < t->count; i++)
        vals[i] = gl_tensor_get_f64(t, i);
    if (t->rank == 0)
        gl_rv_put_number(b, vals[0]);
    else
        put_list(b, vals, (size_t)t->count, form);
    return true;
}

static bool put_value(gl_strbuf *b, const gl_node *n, const shown_attr *s)
{
    if (!s->attr)
        return put_input_value(b, n, s->input, s->form);
    const gl_attr *a = gl_node_attr(n, s->attr);
    return a && !a->ref_attr_name && put_attr_value(b, a, s->form);
}

void gl_rv_put_key_attrs(gl_strbuf *b, const gl_node *n)
{
    if (!n->op_type)
        return;
    for (size_t i = 0; i < GL_ARRAY_LEN(SHOWN); i++) {
        const shown_attr *s = &SHOWN[i];
        if (!op_listed(s->ops, n->op_type))
            continue;
        gl_strbuf value = {0};
        bool shown = put_value(&value, n, s) && value.len &&
                     !(s->hidden && strcmp(value.s, s->hidden) == 0);
        if (shown)
            gl_sb_printf(b, " %s=%s", s->label, value.s);
        free(value.s);
    }
}
