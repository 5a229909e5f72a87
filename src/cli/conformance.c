/* conformance.c — `graphlab conformance DIR [--filter REGEX] [--verbose] [--no-fork]`:
 * run ONNX node test cases (DIR/CASE/model.onnx + test_data_set_N/{input,output}_K.pb)
 * on the reference backend and compare with onnx's backend-test tolerances.
 *
 * Each case runs in a child process with a time limit, so a kernel that crashes or
 * hangs fails its case ("crashed (signal 11)") instead of ending the suite. Cases that
 * cannot be checked by value are skipped with the reason: non-tensor graph I/O
 * (sequence/optional/map), training ops, and ops whose output depends on an RNG. */
#include "cli/cli.h"
#include "passes/passes.h"

#include "exec/compare.h"
#include "exec/exec.h"
#include "ops/ops.h"
#include "util/escape.h"
#include "util/folder.h"

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* onnx's backend test runner: numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7). */
#define CONF_RTOL 1e-3
#define CONF_ATOL 1e-7
/* Seconds one case may take (a single small op; the whole suite takes seconds). */
#define CASE_TIMEOUT 60

typedef enum verdict { VERDICT_PASS, VERDICT_FAIL, VERDICT_SKIP } verdict;

typedef struct case_result {
    int verdict;
    char reason[1024];
} case_result;

typedef struct conf_args {
    const char *dir, *filter;
    bool verbose, no_fork;
} conf_args;

/* ---- listing ------------------------------------------------------------------------------ */

/* "a/b" into buf; false when it does not fit (never a truncated path). */
static bool join_path(char *buf, size_t len, const char *a, const char *b)
{
    int n = snprintf(buf, len, "%s/%s", a, b);
    return n >= 0 && (size_t)n < len;
}

static bool is_dir(const char *parent, const char *name)
{
    char path[4096];
    struct stat st;
    return join_path(path, sizeof(path), parent, name) && stat(path, &st) == 0 &&
           S_ISDIR(st.st_mode);
}

/* Sub-folders of dir whose name starts with `prefix` (any when NULL), sorted; hidden
 * ones left out. */
static gl_status list_folders(const char *dir, const char *prefix, gl_names *folders)
{
    gl_names all = {0};
    gl_status st = gl_folder_list(dir, &all);
    for (size_t i = 0; i < all.n; i++) {
        const char *name = all.items[i];
        if (name[0] != '.' && (!prefix || strncmp(name, prefix, strlen(prefix)) == 0) &&
            is_dir(dir, name))
            gl_names_add(folders, name);
    }
    gl_names_free(&all);
    return st;
}

/* ---- what cannot be checked by value ------------------------------------------------------ */

static bool find_unverifiable(const gl_graph *g, char *why, size_t len);

static bool node_unverifiable(const gl_node *n, char *why, size_t len)
{
    if (strcmp(n->domain, "ai.onnx.preview.training") == 0) {
        snprintf(why, len, "training op '%s'", n->op_type);
        return true;
    }
    /* Random by the registry's flag, or random in this use (training-mode Dropout). */
    if (gl_node_effects(n) == GL_EFFECT_RANDOM) {
        snprintf(why, len, "random op '%s'", n->op_type);
        return true;
    }
    for (size_t i = 0; i < n->n_attrs; i++) {
        const gl_attr *a = &n->attrs[i];
        if (a->type == GL_ATTR_GRAPH && a->g && find_unverifiable(a->g, why, len))
            return true;
        for (size_t j = 0; a->type == GL_ATTR_GRAPHS && j < a->n; j++)
            if (a->graphs[j] && find_unverifiable(a->graphs[j], why, len))
                return true;
    }
    return false;
}

static bool find_unverifiable(const gl_graph *g, char *why, size_t len)
{
    const gl_node *n;
    gl_foreach_node(g, i, n) {
        if (node_unverifiable(n, why, len))
            return true;
    }
    return false;
}

/* Why the case is skipped, or false to run it. */
static bool skip_reason(const gl_model *m, char *why, size_t len)
{
    const gl_graph *g = m->graph;
    for (size_t i = 0; i < g->n_inputs + g->n_outputs; i++) {
        bool in = i < g->n_inputs;
        const gl_value *v = in ? g->inputs[i] : g->outputs[i - g->n_inputs];
        if (v->type.kind == GL_TYPE_OPAQUE) {
            snprintf(why, len, "non-tensor graph %s '%s' (sequence, optional or map)",
                     in ? "input" : "output", v->name);
            return true;
        }
    }
    if (find_unverifiable(g, why, len))
        return true;
    for (size_t i = 0; i < m->n_functions; i++)
        if (m->functions[i].body && find_unverifiable(m->functions[i].body, why, len))
            return true;
    return false;
}

/* ---- one case --------------------------------------------------------------------------------- */

/* The pending error message without the case folder in front of file names. */
static void set_reason(case_result *r, const char *case_dir, const char *suffix)
{
    const char *msg = gl_error_message();
    size_t dl = strlen(case_dir);
    if (strncmp(msg, case_dir, dl) == 0 && msg[dl] == '/')
        msg += dl + 1;
    snprintf(r->reason, sizeof(r->reason), "%s%s", *msg ? msg : "failed", suffix);
    r->verdict = VERDICT_FAIL;
}

static void describe_type(const gl_tensor *t, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s[", gl_dtype_name(t->dtype));
    for (int d = 0; d < t->rank && n >= 0 && (size_t)n < len; d++)
        n += snprintf(buf + n, len - (size_t)n, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    if (n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "]");
}

/* False (with the reason) when an output is missing or differs. */
static bool check_outputs(const gl_graph *g, gl_tensor *const *got, const gl_dataset *d,
                          const char *suffix, case_result *r)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        const char *name = g->outputs[i]->name;
        const gl_tensor *want = d->expected[i];
        if (!want) {
            snprintf(r->reason, sizeof(r->reason), "output '%s': no expected output_%zu.pb%s",
                     name, i, suffix);
            return false;
        }
        gl_compare c;
        gl_compare_tensors(got[i], want, CONF_RTOL, CONF_ATOL, &c);
        if (c.ok)
            continue;
        if (!c.same_shape) {
            char tg[128], tw[128];
            describe_type(got[i], tg, sizeof(tg));
            describe_type(want, tw, sizeof(tw));
            snprintf(r->reason, sizeof(r->reason), "output '%s': got %s, expected %s%s", name,
                     tg, tw, suffix);
        } else if (c.over_tol) {
            snprintf(r->reason, sizeof(r->reason),
                     "output '%s': max_abs %.3g over tolerance at element %lld (%lld of %lld)%s",
                     name, c.max_abs, (long long)c.first_bad, (long long)c.over_tol,
                     (long long)c.count, suffix);
        } else {
            snprintf(r->reason, sizeof(r->reason),
                     "output '%s': NaN/Inf mismatch at element %lld (%lld of %lld)%s", name,
                     (long long)c.first_bad, (long long)c.nan_mismatch, (long long)c.count,
                     suffix);
        }
        return false;
    }
    return true;
}

static bool run_data_set(gl_exec *e, const gl_model *m, const char *case_dir, const char *set,
                         const char *suffix, case_result *r)
{
    const gl_graph *g = m->graph;
    char dir[4096];
    gl_dataset d;
    gl_status st = join_path(dir, sizeof(dir), case_dir, set)
                       ? gl_dataset_load(g, dir, &d)
                       : gl_fail(GL_ERR_INPUT, "%s/%s: path too long", case_dir, set);
    if (st != GL_OK) {
        set_reason(r, case_dir, suffix);
        return false;
    }
    gl_tensor **got = gl_xcalloc(g->n_outputs ? g->n_outputs : 1, sizeof(*got));
    bool ok = false;
    st = gl_exec_run(e, (const gl_tensor *const *)d.inputs, d.n_inputs, got, g->n_outputs);
    if (st != GL_OK)
        set_reason(r, case_dir, suffix);
    else
        ok = check_outputs(g, got, &d, suffix, r);
    for (size_t i = 0; i < g->n_outputs; i++)
        gl_tensor_free(got[i]);
    free(got);
    gl_dataset_free(&d);
    return ok;
}

static void run_data_sets(const gl_model *m, const char *case_dir, case_result *r)
{
    gl_names sets = {0};
    gl_exec *e = NULL;
    gl_exec_options o = {.backend = "ref", .no_shape_check = true};
    if (list_folders(case_dir, "test_data_set_", &sets) != GL_OK ||
        gl_exec_create(m, &o, &e) != GL_OK) {
        set_reason(r, case_dir, "");
    } else if (sets.n == 0) {
        snprintf(r->reason, sizeof(r->reason), "no test_data_set_* folder");
    } else {
        r->verdict = VERDICT_PASS;
        for (size_t i = 0; i < sets.n && r->verdict == VERDICT_PASS; i++) {
            char suffix[300] = "";
            if (sets.n > 1)
                snprintf(suffix, sizeof(suffix), " (%s)", sets.items[i]);
            if (!run_data_set(e, m, case_dir, sets.items[i], suffix, r))
                r->verdict = VERDICT_FAIL;
        }
    }
    gl_exec_free(e);
    gl_names_free(&sets);
}

static void run_case(const char *dir, const char *name, case_result *r)
{
    char case_dir[4096], model[4096];
    *r = (case_result){.verdict = VERDICT_FAIL};
    if (!join_path(case_dir, sizeof(case_dir), dir, name) ||
        !join_path(model, sizeof(model), case_dir, "model.onnx")) {
        snprintf(r->reason, sizeof(r->reason), "path too long");
        return;
    }
    gl_model *m = NULL;
    if (gl_session_load(model, NULL, &m) != GL_OK) {
        set_reason(r, case_dir, "");
        return;
    }
    if (skip_reason(m, r->reason, sizeof(r->reason)))
        r->verdict = VERDICT_SKIP;
    else
        run_data_sets(m, case_dir, r);
    gl_model_free(m);
}

/* ---- isolation -------------------------------------------------------------------------------- */

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

static size_t read_all(int fd, void *p, size_t n)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static void describe_death(int status, case_result *r)
{
    r->verdict = VERDICT_FAIL;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(r->reason, sizeof(r->reason), "timed out after %d s", CASE_TIMEOUT);
    else if (WIFSIGNALED(status))
        snprintf(r->reason, sizeof(r->reason), "crashed (signal %d, %s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(r->reason, sizeof(r->reason), "exited with status %d without a result",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Run the case in a child process (in this one when forking is off or fails). */
static void run_isolated(const conf_args *a, const char *name, case_result *r)
{
    int fds[2];
    if (a->no_fork || pipe(fds) != 0) {
        run_case(a->dir, name, r);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        run_case(a->dir, name, r);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(CASE_TIMEOUT);
        case_result cr;
        run_case(a->dir, name, &cr);
        bool sent = write_all(fds[1], &cr, sizeof(cr));
        close(fds[1]);
        exit(sent ? 0 : 3); /* exit, not _exit: the leak checker of sanitized builds runs */
    }
    close(fds[1]);
    size_t got = read_all(fds[0], r, sizeof(*r));
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof(*r) || r->verdict < VERDICT_PASS || r->verdict > VERDICT_SKIP)
        describe_death(status, r);
    r->reason[sizeof(r->reason) - 1] = '\0';
}

/* ---- the command ------------------------------------------------------------------------------ */

enum { OPT_FILTER, OPT_VERBOSE, OPT_NO_FORK, N_OPTS };
static const gl_cli_option own_options[N_OPTS] = {
    [OPT_FILTER] = {"filter", 0, true, "REGEX",
                    "only the cases whose folder name matches (POSIX extended)"},
    [OPT_VERBOSE] = {"verbose", 0, false, NULL, "a line for every case, with a skip's reason"},
    [OPT_NO_FORK] = {"no-fork", 0, false, NULL,
                     "run the cases in this process (for a debugger; a crash ends the run)"},
};

const gl_command gl_command_conformance = {
    "conformance", "DIR", "run ONNX node test cases",
    "DIR holds one folder per case (model.onnx, test_data_set_*), as onnx/backend/test/data/"
    "node. Each case runs in a child process; prints FAIL lines and last \"N passed, N "
    "failed, N skipped\"; exit 1 when a case fails.",
    0, own_options, N_OPTS, gl_cmd_conformance};

static int own_option(void *ctx, size_t which, const char *value)
{
    conf_args *a = ctx;
    switch (which) {
    case OPT_FILTER: a->filter = value; break;
    case OPT_VERBOSE: a->verbose = true; break;
    default: a->no_fork = true; break;
    }
    return GL_EXIT_OK;
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, conf_args *a)
{
    gl_session_opts o;
    gl_session_opts_init(&o, "none");
    const gl_cli_spec spec = {&gl_command_conformance, own_option, a, NULL};
    int first, rc = gl_cli_parse(&spec, argc, argv, &o, &first);
    gl_session_opts_free(&o);
    if (rc != GL_EXIT_OK)
        return rc;
    if (argc - first != 1)
        return gl_cli_usage_error("conformance", "expected one DIR");
    a->dir = argv[first];
    return GL_EXIT_OK;
}

int gl_cmd_conformance(int argc, char **argv)
{
    conf_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != GL_EXIT_OK)
        return rc < 0 ? GL_EXIT_OK : rc;
    regex_t re;
    int err = regcomp(&re, a.filter ? a.filter : "", REG_EXTENDED | REG_NOSUB);
    if (err) {
        char msg[256];
        regerror(err, &re, msg, sizeof(msg));
        return gl_cli_usage_error("conformance", "--filter '%s': %s", a.filter, msg);
    }
    gl_names cases = {0};
    gl_status st = list_folders(a.dir, NULL, &cases);
    if (st != GL_OK) {
        regfree(&re);
        return gl_cli_fail(st);
    }
    size_t counts[3] = {0, 0, 0};
    for (size_t i = 0; i < cases.n; i++) {
        const char *name = cases.items[i];
        if (regexec(&re, name, 0, NULL, 0) != 0)
            continue;
        case_result r;
        run_isolated(&a, name, &r);
        counts[r.verdict]++;
        if (r.verdict == VERDICT_FAIL)
            printf("FAIL %s: %s\n", gl_esc(name), gl_esc(r.reason));
        else if (a.verbose && r.verdict == VERDICT_SKIP)
            printf("SKIP %s: %s\n", gl_esc(name), gl_esc(r.reason));
        else if (a.verbose)
            printf("PASS %s\n", gl_esc(name));
    }
    printf("%zu passed, %zu failed, %zu skipped\n", counts[VERDICT_PASS], counts[VERDICT_FAIL],
           counts[VERDICT_SKIP]);
    gl_names_free(&cases);
    regfree(&re);
    return counts[VERDICT_FAIL] ? GL_EXIT_MISMATCH : GL_EXIT_OK;
}
