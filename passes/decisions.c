/* decisions.c — decision records: building them, printing them, JSON. */
#include "passes/decisions.h"

#include "util/status.h"
#include "util/escape.h"
#include "util/text_pool.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *gl_verdict_name(gl_verdict v)
{
    static const char *const names[] = {[GL_APPLIED] = "applied", [GL_REFUSED] = "refused",
                                         [GL_NOTE] = "note"};
    return (size_t)v < GL_ARRAY_LEN(names) ? names[v] : "?";
}

/* Pass names, rules and number keys are a small vocabulary that every record copied, up
 * to five words a record: at the 100k ladder's memory plan, 97036 records, ~12 MB of
 * copies (issue 23). One copy of each word for the process, never freed; records are
 * made on the workbench's worker threads too, hence the lock. */
static const char *word(const char *s)
{
    static gl_text_pool words;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    const char *w = gl_text_intern(&words, s);
    pthread_mutex_unlock(&lock);
    return w;
}

void gl_decision_clear(gl_decision *d)
{
    free(d->reason);
    for (size_t i = 0; i < d->n_nodes; i++)
        free(d->nodes[i]);
    free(d->nodes); /* node_ids with it (add_node) */
    for (size_t i = 0; i < d->n_numbers; i++)
        free(d->numbers[i].text);
    free(d->numbers);
    memset(d, 0, sizeof(*d));
}

gl_decision *gl_decision_log_at(const gl_decision_log *log, int64_t id)
{
    if (!log || log->count_only || id < log->id_base || id - log->id_base >= (int64_t)log->n)
        return NULL;
    return &log->items[id - log->id_base];
}

void gl_decision_log_free(gl_decision_log *log)
{
    for (size_t i = 0; log->items && i < log->n; i++)
        gl_decision_clear(&log->items[i]);
    free(log->items);
    gl_decision_clear(&log->spare);
    memset(log, 0, sizeof(*log));
}

void gl_decision_log_truncate(gl_decision_log *log, size_t n)
{
    while (log->n > n) {
        log->n--;
        if (!log->count_only)
            gl_decision_clear(&log->items[log->n]);
    }
}

gl_decision *gl_decision_log_add(gl_decision_log *log, int step, const char *pass,
                                 const char *rule, gl_verdict v, const char *reason)
{
    gl_decision *d = &log->spare; /* counted, not kept: the spare, its reason left NULL */
    if (log->count_only) {
        gl_decision_clear(d);
    } else {
        GL_GROW(log->items, log->cap, log->n + 1);
        d = &log->items[log->n];
    }
    memset(d, 0, sizeof(*d));
    d->id = log->id_base + (int64_t)log->n++;
    d->step = step;
    d->pass = word(pass);
    d->rule = word(rule);
    d->verdict = v;
    if (!log->count_only)
        d->reason = gl_xstrdup(reason);
    return d;
}

/* Names and ids in one allocation, cap_nodes pointers then cap_nodes ids: two nodes' worth
 * fits malloc's smallest chunk, where names and ids apart took two. */
static void add_node(gl_decision *d, const char *name, uint32_t id)
{
    if (d->n_nodes == d->cap_nodes) {
        size_t cap = d->cap_nodes ? 2 * d->cap_nodes : 2;
        char **names = gl_xmalloc(cap * (sizeof(*d->nodes) + sizeof(*d->node_ids)));
        uint32_t *ids = (uint32_t *)(names + cap);
        if (d->n_nodes) {
            memcpy(names, d->nodes, d->n_nodes * sizeof(*d->nodes));
            memcpy(ids, d->node_ids, d->n_nodes * sizeof(*d->node_ids));
        }
        free(d->nodes);
        d->nodes = names;
        d->node_ids = ids;
        d->cap_nodes = cap;
    }
    d->node_ids[d->n_nodes] = id;
    d->nodes[d->n_nodes++] = gl_xstrdup(name ? name : "");
}

void gl_decision_add_node(gl_decision *d, const char *name)
{
    add_node(d, name, GL_DECISION_NO_ID);
}

void gl_decision_add_node_ref(gl_decision *d, const gl_node *n)
{
    add_node(d, n->name, n->id);
}

static gl_decision_number *add_number(gl_decision *d, const char *key)
{
    if (d->n_numbers == d->cap_numbers) {
        /* From 1, not gl_grow's 4: most records have up to two numbers. */
        d->cap_numbers = d->cap_numbers ? 2 * d->cap_numbers : 1;
        d->numbers = gl_xrealloc(d->numbers, d->cap_numbers * sizeof(*d->numbers));
    }
    gl_decision_number *n = &d->numbers[d->n_numbers++];
    memset(n, 0, sizeof(*n));
    n->key = word(key);
    n->value = NAN;
    return n;
}

void gl_decision_add_number(gl_decision *d, const char *key, double value)
{
    add_number(d, key)->value = value;
}

void gl_decision_add_text(gl_decision *d, const char *key, const char *text)
{
    add_number(d, key)->text = gl_xstrdup(text ? text : "");
}

void gl_decision_set_reason(gl_decision *d, const char *reason)
{
    free(d->reason);
    d->reason = gl_xstrdup(reason ? reason : "");
}

static const gl_decision_number *find_number(const gl_decision *d, const char *key)
{
    for (size_t i = 0; i < d->n_numbers; i++)
        if (strcmp(d->numbers[i].key, key) == 0)
            return &d->numbers[i];
    return NULL;
}

double gl_decision_number_value(const gl_decision *d, const char *key)
{
    const gl_decision_number *n = find_number(d, key);
    return n && !n->text ? n->value : NAN;
}

const char *gl_decision_number_text(const gl_decision *d, const char *key)
{
    const gl_decision_number *n = find_number(d, key);
    return n ? n->text : NULL;
}

/* Integers print without a fraction ("bytes=4096", not "4096.000000"). Reasons, nodes
 * and texts name things of the model: escaped for the terminal. */
static void print_number(const gl_decision_number *n, FILE *f)
{
    if (n->text)
        fprintf(f, "%s=%s", gl_esc(n->key), gl_esc(n->text));
    else if (n->value == floor(n->value) && fabs(n->value) < 1e15)
        fprintf(f, "%s=%.0f", gl_esc(n->key), n->value);
    else
        fprintf(f, "%s=%g", gl_esc(n->key), n->value);
}

void gl_decision_print(const gl_decision *d, FILE *f)
{
    fprintf(f, "  #%-4lld %-8s %s: %s", (long long)d->id,
            d->verdict == GL_APPLIED ? "APPLIED" : gl_verdict_name(d->verdict), gl_esc(d->rule),
            gl_esc(d->reason));
    if (d->n_nodes) {
        fputs("  [", f);
        for (size_t i = 0; i < d->n_nodes; i++) {
            fprintf(f, "%s%s", i ? ", " : "", gl_esc(d->nodes[i]));
            if (d->node_ids[i] != GL_DECISION_NO_ID)
                fprintf(f, " (n%" PRIu32 ")", d->node_ids[i]);
        }
        fputc(']', f);
    }
    if (d->n_numbers) {
        fputs("  (", f);
        for (size_t i = 0; i < d->n_numbers; i++) {
            if (i)
                fputs(", ", f);
            print_number(&d->numbers[i], f);
        }
        fputc(')', f);
    }
    fputc('\n', f);
}

void gl_decision_json(const gl_decision *d, gl_json *j)
{
    gl_json_object_begin(j, NULL);
    gl_json_int(j, "id", d->id);
    gl_json_int(j, "step", d->step);
    gl_json_string(j, "pass", d->pass);
    gl_json_string(j, "rule", d->rule);
    gl_json_string(j, "verdict", gl_verdict_name(d->verdict));
    gl_json_string(j, "reason", d->reason);
    if (d->vetoed)
        gl_json_bool(j, "vetoed", true);
    if (d->forced)
        gl_json_bool(j, "forced", true);
    gl_json_array_begin(j, "nodes");
    for (size_t i = 0; i < d->n_nodes; i++)
        gl_json_string(j, NULL, d->nodes[i]);
    gl_json_array_end(j);
    gl_json_array_begin(j, "node_ids"); /* same order; null where only the name is known */
    for (size_t i = 0; i < d->n_nodes; i++) {
        if (d->node_ids[i] == GL_DECISION_NO_ID)
            gl_json_null(j, NULL);
        else
            gl_json_int(j, NULL, d->node_ids[i]);
    }
    gl_json_array_end(j);
    gl_json_object_begin(j, "numbers");
    for (size_t i = 0; i < d->n_numbers; i++) {
        if (d->numbers[i].text)
            gl_json_string(j, d->numbers[i].key, d->numbers[i].text);
        else
            gl_json_double(j, d->numbers[i].key, d->numbers[i].value);
    }
    gl_json_object_end(j);
    /* fusion.measure's two clocks, as one object a script reads without knowing keys */
    double fused = gl_decision_number_value(d, "measured_fused_ms");
    double members = gl_decision_number_value(d, "measured_members_ms");
    if (!isnan(fused) && !isnan(members)) {
        gl_json_object_begin(j, "measured_ms");
        gl_json_double(j, "fused", fused);
        gl_json_double(j, "members", members);
        gl_json_object_end(j);
    }
    gl_json_object_end(j);
}
