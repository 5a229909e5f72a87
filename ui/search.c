/* search.c — what `/` finds among nodes: one query syntax for the node list, the graph
 * and every view whose rows are nodes (the `?` screen states it, keys.c).
 *
 * A query is words separated by blanks; a node matches when every word does:
 *   Conv, /encoder/       op type, domain or name containing it (any case)
 *   group=32              an attribute with that value: ints "perm=0,2,3,1" (brackets and
 *   perm=[0,2,3,1]        blanks allowed), floats as float ("alpha=0.2"), strings in any
 *   mode=constant         case; "name=" alone: the node has the attribute
 *   [1,64,56,56]          an output of exactly that shape ('?' any dim, a name a symbolic
 *   [N,?,768]             dim: "[N,3,224,224]"; "[]" a scalar)
 *   64x56                 an output whose shape has these dims side by side (1x64x56x56
 *                         has 64x56, 1x64 and 56x56)
 * Words are parsed here each time: queries are short, graphs a few thousand nodes. */
#include "ui/ui.h"
#include "driver/driver.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_ITEMS = 64, WORD_MAX = 256 };

/* A query's list of values ("0,2,3,1", "[1, 64]", "64x56"), split at `sep` (blanks and
 * brackets dropped): pointers into buf. Returns the count, -1 when there are more than
 * MAX_ITEMS or an item is empty ("1,,2"). An empty list (text "" or "[]") has 0. */
static int split_items(const char *text, char sep, char *buf, size_t len, char **items)
{
    size_t used = 0;
    for (const char *p = text; *p && used + 1 < len; p++)
        if (*p != '[' && *p != ']' && !isspace((unsigned char)*p))
            buf[used++] = *p;
    buf[used] = '\0';
    if (!used)
        return 0;
    int n = 0;
    for (char *item = buf;; n++) {
        char *end = strchr(item, sep);
        if (n == MAX_ITEMS)
            return -1;
        items[n] = item;
        if (end)
            *end = '\0';
        if (!*item)
            return -1;
        if (!end)
            return n + 1;
        item = end + 1;
    }
}

/* A whole decimal number, any int64 (driver.h's parser). */
static bool parse_int(const char *s, int64_t *v)
{
    return gl_parse_int(s, INT64_MIN, INT64_MAX, v);
}

/* A float attribute holds a float: the query's number rounded to float must be it. */
static bool float_is(const char *s, float f)
{
    char *end;
    double x = strtod(s, &end);
    return end != s && !*end && (float)x == f;
}

static bool attr_value_is(const gl_attr *a, const char *value)
{
    char buf[WORD_MAX];
    char *items[MAX_ITEMS];
    if (!*value)
        return true; /* "perm=": has it */
    if (a->type == GL_ATTR_STRING) /* whole: a string may hold commas */
        return a->s.data && strcasecmp((const char *)a->s.data, value) == 0;
    int n = split_items(value, ',', buf, sizeof(buf), items);
    if (n < 0)
        return false;
    int64_t iv;
    switch (a->type) {
    case GL_ATTR_INT: return n == 1 && parse_int(items[0], &iv) && iv == a->i;
    case GL_ATTR_FLOAT: return n == 1 && float_is(items[0], a->f);
    case GL_ATTR_INTS:
    case GL_ATTR_FLOATS:
    case GL_ATTR_STRINGS:
        if ((size_t)n != a->n)
            return false;
        for (int i = 0; i < n; i++) {
            bool same = a->type == GL_ATTR_INTS     ? parse_int(items[i], &iv) && iv == a->ints[i]
                        : a->type == GL_ATTR_FLOATS ? float_is(items[i], a->floats[i])
                                                    : a->strings[i].data &&
                                                      strcasecmp((const char *)a->strings[i].data,
                                                                 items[i]) == 0;
            if (!same)
                return false;
        }
        return true;
    default: return false; /* tensors, graphs: only "name=" finds them */
    }
}

/* "perm=0,2,3,1": the node has attribute perm with that value. */
static bool attr_word_matches(const gl_node *n, const char *word)
{
    const char *eq = strchr(word, '=');
    size_t name_len = (size_t)(eq - word);
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        if (strlen(a->name) == name_len && strncasecmp(a->name, word, name_len) == 0)
            return attr_value_is(a, eq + 1);
    }
    return false;
}

/* One dim of the query against one of a shape: '?' any, a number that size, a name that
 * symbolic dim. */
static bool dim_is(const gl_dim *d, const char *item)
{
    int64_t v;
    if (strcmp(item, "?") == 0)
        return true;
    if (parse_int(item, &v))
        return d->value == v;
    return d->sym && strcasecmp(d->sym, item) == 0;
}

/* Whether items[0..n) are dims from..from+n of s. */
static bool dims_at(const gl_shape *s, int from, char **items, int n)
{
    for (int i = 0; i < n; i++)
        if (!dim_is(&s->dims[from + i], items[i]))
            return false;
    return true;
}

/* Some output of n has the shape ("[...]": exactly, whole) or the run of dims ("AxB"). */
static bool shape_word_matches(const gl_node *n, const char *word, bool whole)
{
    char buf[WORD_MAX];
    char *items[MAX_ITEMS];
    int k = split_items(word, whole ? ',' : 'x', buf, sizeof(buf), items);
    if (k < 0)
        return false;
    for (size_t o = 0; o < n->n_outputs; o++) {
        const gl_value *v = n->outputs[o];
        if (!v || v->type.kind != GL_TYPE_TENSOR || v->type.shape.rank == GL_RANK_UNKNOWN)
            continue;
        const gl_shape *s = &v->type.shape;
        if (whole && s->rank == k && dims_at(s, 0, items, k))
            return true;
        for (int from = 0; !whole && from + k <= s->rank; from++)
            if (dims_at(s, from, items, k))
                return true;
    }
    return false;
}

/* "64x56", "1x?x768": dims joined by 'x' (at least two), each a number or '?'. A name
 * such as "box" or "x1" stays a name. */
static bool is_dims_run(const char *word)
{
    int dims = 0;
    for (const char *p = word;;) {
        const char *start = p;
        while (isdigit((unsigned char)*p))
            p++;
        if (p == start && *p == '?')
            p++;
        if (p == start)
            return false;
        dims++;
        if (!*p)
            return dims >= 2;
        if (*p++ != 'x')
            return false;
    }
}

static bool word_matches(const gl_node *n, const char *word)
{
    if (strchr(word, '=') && word[0] != '=')
        return attr_word_matches(n, word);
    if (word[0] == '[')
        return shape_word_matches(n, word, true);
    if (is_dims_run(word))
        return shape_word_matches(n, word, false);
    if (gl_ui_match(n->op_type, word) || gl_ui_match(n->name, word))
        return true;
    return *n->domain && gl_ui_match(n->domain, word);
}

/* The length of the word at p: up to a blank outside brackets ("[1, 64]" is one word). */
static size_t word_length(const char *p)
{
    size_t len = 0;
    int depth = 0;
    for (; p[len] && (depth > 0 || !isspace((unsigned char)p[len])); len++)
        depth += p[len] == '[' ? 1 : p[len] == ']' && depth > 0 ? -1 : 0;
    return len;
}

bool gl_ui_node_matches(const gl_node *n, const char *query)
{
    char word[WORD_MAX];
    size_t words = 0;
    for (const char *p = query ? query : ""; *p;) {
        while (isspace((unsigned char)*p))
            p++;
        size_t len = word_length(p);
        if (!len)
            break;
        if (len >= sizeof(word))
            return false;
        memcpy(word, p, len);
        word[len] = '\0';
        if (!word_matches(n, word))
            return false;
        words++;
        p += len;
    }
    return words > 0;
}
