/* target.c — the questions of exec/target.h that are answered by running: how the
 * backend runs a call (its plan after one run), and which of two models runs faster.
 * Both take small models (a fused group alone, as the fusion pass makes it), on seeded
 * random inputs of the shapes the IR knows.
 */
#include "exec/target.h"

#include "exec/inputs.h"
#include "exec/profile.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One plan of m on oneDNN and its inputs. */
typedef struct trial {
    gl_exec *e;
    gl_dataset d;
    gl_tensor **out;
    size_t n_out;
} trial;

static void trial_free(trial *t)
{
    for (size_t i = 0; t->out && i < t->n_out; i++)
        gl_tensor_free(t->out[i]);
    free(t->out);
    gl_exec_free(t->e);
    gl_dataset_free(&t->d);
    memset(t, 0, sizeof(*t));
}

static gl_status trial_open(const gl_model *m, trial *t)
{
    memset(t, 0, sizeof(*t));
    gl_exec_options o = {.backend = "dnnl"};
    gl_status st = gl_dataset_random(m, NULL, 0, 0, &t->d);
    if (st == GL_OK)
        st = gl_exec_create(m, &o, &t->e);
    t->n_out = m->graph->n_outputs;
    t->out = gl_xcalloc(t->n_out ? t->n_out : 1, sizeof(gl_tensor *));
    if (st != GL_OK)
        trial_free(t);
    return st;
}

static gl_status trial_run(trial *t, uint64_t *ns)
{
    for (size_t i = 0; i < t->n_out; i++) {
        gl_tensor_free(t->out[i]);
        t->out[i] = NULL;
    }
    uint64_t t0 = gl_now_ns();
    gl_status st = gl_exec_run(t->e, (const gl_tensor *const *)t->d.inputs, t->d.n_inputs,
                               t->out, t->n_out);
    if (ns)
        *ns = gl_now_ns() - t0;
    return st;
}

/* A unit's implementation lists its primitives, "A + post-ops | B | ...". One on a
 * reference kernel is slow when it carries post-ops, or is the whole group: a lone op of
 * a unit on its reference kernel runs as it would unfused. One with no implementation
 * at all was never built as a primitive: swin_t's attention ("jit:uni | ref |  | ", its
 * mask a post-op oneDNN broadcasts only in its reference matmul) ran 8 ms a window
 * batch where its members took 1 (issue 22). */
bool gl_target_impl_is_slow(const char *impl)
{
    bool unit = strstr(impl, " | ") != NULL;
    for (const char *seg = impl; seg; seg = strstr(seg, " | ")) {
        if (seg != impl)
            seg += 3;
        char one[sizeof(((gl_backend_info *)0)->impl)];
        snprintf(one, sizeof(one), "%.*s", (int)strcspn(seg, "|"), seg);
        bool ref = strncmp(one, "ref", 3) == 0;
        bool posts = strstr(one, " + ") != NULL;
        bool none = one[strspn(one, " ")] == '\0';
        if ((ref && (!unit || posts)) || (unit && none))
            return true;
    }
    return false;
}

bool gl_target_probe(const gl_model *m, const gl_node *call, char *impl, size_t impl_len,
                     char *why, size_t why_len)
{
    impl[0] = why[0] = '\0';
    trial t;
    gl_status st = trial_open(m, &t);
    if (st == GL_OK)
        st = trial_run(&t, NULL);
    if (st != GL_OK) {
        snprintf(why, why_len, "the group alone does not run on oneDNN: %s",
                 gl_error_message());
        gl_error_clear();
        trial_free(&t);
        return false;
    }
    bool fast = false, seen = false;
    for (size_t i = 0; i < gl_exec_plan_count(t.e) && !seen; i++) {
        const gl_plan_entry *en = gl_exec_plan_at(t.e, i);
        if (en->depth != 0 || en->node->id != call->id)
            continue;
        seen = true;
        snprintf(impl, impl_len, "%s", en->info.impl);
        /* "body": the claim refused (a reference implementation, or no primitive);
         * "ref (members)" or "ref:any": the members on reference kernels. */
        fast = strcmp(en->backend, "dnnl") == 0 && !gl_target_impl_is_slow(en->info.impl);
        if (!fast)
            snprintf(why, why_len, "%s%s%s", strcmp(en->backend, "body") == 0 ? "its body on "
                     "the reference kernels" : en->info.impl, en->info.note[0] ? ": " : "",
                     en->info.note);
    }
    if (!seen)
        snprintf(why, why_len, "the plan has no entry for the call");
    trial_free(&t);
    return fast;
}

/* The median of runs ns[0..n) in ms (ns is sorted), and their noise: the median of
 * |t - median| over the median (dev: n doubles of scratch). */
static double median_ms(double *ns, int n, double *dev, double *noise)
{
    double med = gl_profile_stats(ns, (size_t)n).median * 1e6;
    for (int i = 0; i < n; i++)
        dev[i] = ns[i] > med ? ns[i] - med : med - ns[i];
    *noise = med > 0 ? gl_profile_stats(dev, (size_t)n).median * 1e6 / med : 0;
    return med / 1e6;
}

gl_status gl_target_time(const gl_model *a, const gl_model *b, int warmup, int rounds,
                         gl_target_timing *out)
{
    memset(out, 0, sizeof(*out));
    if (rounds < 1)
        rounds = 1;
    trial ta, tb;
    gl_status st = trial_open(a, &ta);
    if (st != GL_OK)
        return st;
    if ((st = trial_open(b, &tb)) != GL_OK) {
        trial_free(&ta);
        return st;
    }
    double *ns = gl_xcalloc(3 * (size_t)rounds, sizeof(double));
    double *a_ns = ns, *b_ns = ns + rounds, *dev = ns + 2 * rounds;
    for (int i = 0; i < warmup && st == GL_OK; i++)
        if ((st = trial_run(&ta, NULL)) == GL_OK)
            st = trial_run(&tb, NULL);
    for (int i = 0; i < rounds && st == GL_OK; i++) {
        uint64_t na = 0, nb = 0;
        /* Alternate which goes first: a cache warmed by one is not always the other's. */
        trial *first = i % 2 ? &tb : &ta, *second = i % 2 ? &ta : &tb;
        uint64_t *n1 = i % 2 ? &nb : &na, *n2 = i % 2 ? &na : &nb;
        if ((st = trial_run(first, n1)) == GL_OK)
            st = trial_run(second, n2);
        a_ns[i] = (double)na;
        b_ns[i] = (double)nb;
    }
    if (st == GL_OK) {
        double noise_a, noise_b;
        out->rounds = rounds;
        out->a_ms = median_ms(a_ns, rounds, dev, &noise_a);
        out->b_ms = median_ms(b_ns, rounds, dev, &noise_b);
        out->noise = noise_a > noise_b ? noise_a : noise_b;
    }
    free(ns);
    trial_free(&ta);
    trial_free(&tb);
    return st;
}
