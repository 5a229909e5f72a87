/* app.c — the runtime of the workbench: curses setup and teardown, the input loop,
 * painting the frame (bar, view, status line) with draw.c's helpers, jobs on worker
 * threads, exports and the browser, and restoring the terminal on every way out (normal
 * exit, failed load, fatal signal, allocation failure).
 *
 * Threads: all curses calls and all ui state stay on the main thread. A job's run()
 * gets only its own argument; the main thread learns it is done through a pipe it
 * polls together with the keyboard. A cancelled job keeps running (the pipeline has no
 * cancellation hook) and frees its own result when it ends; objects it may still read
 * (a replayed model the ui has dropped) wait in a graveyard until no job is alive. */
#include "ui/ui.h"

#include "driver/export.h"
#include "passes/passes.h"
#include "util/escape.h"
#include "util/plural.h"
#include "util/safe_write.h"
#include "util/signals.h"
#include "util/clock.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- runtime: jobs and the graveyard ------------------------------------------------ */

typedef struct app_runtime {
    pthread_mutex_t mu;     /* guards every gl_job's done/abandoned/progress */
    int wake[2];            /* a worker writes a byte when a job ends */
    atomic_int jobs_alive;  /* running threads, cancelled ones included */
    gl_model **dead_models; /* dropped while a job was alive */
    size_t n_dead_models, cap_dead_models;
    gl_diff **dead_diffs;
    size_t n_dead_diffs, cap_dead_diffs;
    gl_pipeline **dead_pipelines;
    size_t n_dead_pipelines, cap_dead_pipelines;
    int held[64];           /* keys typed while the passes run that need them (hold_key) */
    size_t n_held;
} app_runtime;

struct gl_job {
    const gl_job_spec *spec;
    void *arg;
    app_runtime *rt;        /* NULL for a job run inline */
    char progress[160];     /* under rt->mu */
    bool done, abandoned;   /* under rt->mu */
    atomic_bool cancelled;
    double started_ms;
};

void gl_job_progress(gl_job *job, const char *fmt, ...)
{
    if (!job) /* work done outside a job (bench_ui_keys) */
        return;
    char buf[sizeof(job->progress)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (job->rt)
        pthread_mutex_lock(&job->rt->mu);
    memcpy(job->progress, buf, sizeof(buf));
    if (job->rt)
        pthread_mutex_unlock(&job->rt->mu);
}

bool gl_job_cancelled(const gl_job *job) { return job && atomic_load(&job->cancelled); }

const gl_job_spec *gl_ui_job_spec(const gl_ui *ui) { return ui->job ? ui->job->spec : NULL; }

/* fn(arg) on a detached thread (pthread_create's result). Threads block the
 * asynchronous signals (SIGINT, SIGWINCH, ...): those must wake the main thread's poll,
 * not a worker. Faults stay unblocked (util/signals.h). */
static int start_detached(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t old;
    gl_block_async_signals(&old);
    int rc = pthread_create(&t, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc;
}

static void *worker_main(void *p)
{
    gl_job *job = p;
    app_runtime *rt = job->rt;
    job->spec->run(job->arg, job);
    pthread_mutex_lock(&rt->mu);
    bool abandoned = job->abandoned;
    job->done = true;
    pthread_mutex_unlock(&rt->mu);
    if (abandoned) { /* nobody waits for it any more: it cleans up after itself */
        job->spec->discard(job->arg);
        free(job);
    }
    atomic_fetch_sub(&rt->jobs_alive, 1);
    char byte = 1;
    ssize_t w = write(rt->wake[1], &byte, 1);
    (void)w; /* a full pipe already holds a wake-up */
    return NULL;
}

static bool run_inline(gl_ui *ui, const gl_job_spec *spec, void *arg)
{
    gl_job job = {.spec = spec, .arg = arg};
    spec->run(arg, &job);
    spec->finish(ui, arg);
    return true;
}

bool gl_ui_start_job(gl_ui *ui, const gl_job_spec *spec, void *arg)
{
    app_runtime *rt = ui->runtime;
    if (ui->sync_jobs || !rt)
        return run_inline(ui, spec, arg);
    if (ui->job) {
        gl_ui_set_error(ui, "busy %s (C-c stops waiting)", ui->job->spec->what);
        return false;
    }
    gl_job *job = gl_xcalloc(1, sizeof(*job));
    job->spec = spec;
    job->arg = arg;
    job->rt = rt;
    job->started_ms = gl_now_ms();
    snprintf(job->progress, sizeof(job->progress), "%s", spec->what);
    atomic_fetch_add(&rt->jobs_alive, 1);
    if (start_detached(worker_main, job) != 0) { /* no thread: do it here, the screen waits */
        atomic_fetch_sub(&rt->jobs_alive, 1);
        free(job);
        return run_inline(ui, spec, arg);
    }
    ui->job = job;
    return true;
}

/* ---- keys typed while the passes run ---------------------------------------------------- */

/* A key typed before the first screen, or one that needs the passes while they run
 * (gl_ui_key_waits), is kept and handled when they end. */
static bool hold_key(gl_ui *ui, int key)
{
    app_runtime *rt = ui->runtime;
    if (!rt || !gl_ui_key_waits(ui, key, rt->n_held))
        return false;
    if (rt->n_held < GL_ARRAY_LEN(rt->held))
        rt->held[rt->n_held++] = key;
    else
        beep(); /* typed far ahead of the passes: this one is lost, as the bell says */
    return true;
}

/* After a job: the held keys that can act now do, in order, until one must still wait
 * (step 0 shown: a move typed while loading; the passes done: all of them). */
static unsigned replay_held_keys(gl_ui *ui)
{
    app_runtime *rt = ui->runtime;
    unsigned flags = GL_REDRAW_NONE;
    size_t kept = 0;
    for (size_t i = 0; rt && i < rt->n_held && !ui->quit; i++) {
        int key = rt->held[i];
        if (gl_ui_key_waits(ui, key, kept))
            rt->held[kept++] = key;
        else
            flags |= gl_ui_key(ui, key);
    }
    if (rt)
        rt->n_held = kept;
    return flags;
}

/* The job the ui waits for has ended: hand its result over. */
static unsigned collect_job(gl_ui *ui)
{
    app_runtime *rt = ui->runtime;
    char drain[64];
    while (read(rt->wake[0], drain, sizeof(drain)) > 0) {
    }
    gl_job *job = ui->job;
    if (!job)
        return GL_REDRAW_NONE;
    pthread_mutex_lock(&rt->mu);
    bool done = job->done;
    pthread_mutex_unlock(&rt->mu);
    if (!done)
        return GL_REDRAW_NONE;
    ui->job = NULL; /* before finish: it may start the next job */
    ui->status[0] = '\0';
    unsigned flags = job->spec->finish(ui, job->arg);
    free(job);
    flags |= gl_ui_resume(ui) | GL_REDRAW_STATUS;
    return flags | replay_held_keys(ui);
}

unsigned gl_ui_cancel_job(gl_ui *ui)
{
    app_runtime *rt = ui->runtime;
    gl_job *job = ui->job;
    if (!job || !rt) {
        gl_ui_set_status(ui, "nothing is running (q quits)");
        return GL_REDRAW_STATUS;
    }
    pthread_mutex_lock(&rt->mu);
    bool done = job->done;
    job->abandoned = !done;
    atomic_store(&job->cancelled, true);
    pthread_mutex_unlock(&rt->mu);
    ui->job = NULL;
    gl_ui_set_status(ui, "stopped waiting for %s: it ends in the background, its result is "
                         "dropped%s", job->spec->what,
                     rt->n_held ? ", and so are the keys that waited for it" : "");
    ui->passes_pending = false; /* step 0 stays, alone */
    rt->n_held = 0;
    if (done) { /* ended just now: its result is ours to drop */
        job->spec->discard(job->arg);
        free(job);
    }
    ui->want_budget = ui->budget;
    return GL_REDRAW_STATUS | GL_REDRAW_BAR;
}

static void *free_model_main(void *m)
{
    gl_model_free(m);
    return NULL;
}

/* A model nothing reads any more, freed on a thread of its own: a 100k-node graph takes
 * tens of ms to free, which a key would wait for (+/- drop a replay; issue 23). Shared
 * weights and origins are reference counted atomically, as the jobs need already. */
static void free_model_behind(gl_model *m)
{
    if (start_detached(free_model_main, m) != 0)
        gl_model_free(m);
}

void gl_ui_defer_free_model(gl_ui *ui, gl_model *m)
{
    app_runtime *rt = ui->runtime;
    if (!rt) {
        gl_model_free(m);
        return;
    }
    if (atomic_load(&rt->jobs_alive) == 0) {
        free_model_behind(m);
        return;
    }
    GL_GROW(rt->dead_models, rt->cap_dead_models, rt->n_dead_models + 1);
    rt->dead_models[rt->n_dead_models++] = m;
}

void gl_ui_defer_free_diff(gl_ui *ui, gl_diff *d)
{
    app_runtime *rt = ui->runtime;
    if (!rt || atomic_load(&rt->jobs_alive) == 0) {
        gl_diff_free(d);
        return;
    }
    GL_GROW(rt->dead_diffs, rt->cap_dead_diffs, rt->n_dead_diffs + 1);
    rt->dead_diffs[rt->n_dead_diffs++] = d;
}

void gl_ui_defer_free_pipeline(gl_ui *ui, gl_pipeline *p)
{
    app_runtime *rt = ui->runtime;
    if (!rt || atomic_load(&rt->jobs_alive) == 0) {
        gl_pipeline_free(p);
        return;
    }
    GL_GROW(rt->dead_pipelines, rt->cap_dead_pipelines, rt->n_dead_pipelines + 1);
    rt->dead_pipelines[rt->n_dead_pipelines++] = p;
}

static void bury_if_idle(app_runtime *rt)
{
    if (atomic_load(&rt->jobs_alive) != 0)
        return;
    for (size_t i = 0; i < rt->n_dead_pipelines; i++)
        gl_pipeline_free(rt->dead_pipelines[i]);
    rt->n_dead_pipelines = 0;
    for (size_t i = 0; i < rt->n_dead_models; i++)
        free_model_behind(rt->dead_models[i]);
    for (size_t i = 0; i < rt->n_dead_diffs; i++)
        gl_diff_free(rt->dead_diffs[i]);
    rt->n_dead_models = rt->n_dead_diffs = 0;
}

/* ---- the first jobs: step 0 on screen, then the passes behind it ------------------------
 *
 * The first screen needs only the model as loaded: the first job loads it and the ui
 * shows it as a pipeline of one step. The second job then runs the passes and diffs
 * every step, as `graphlab optimize` and `export` do (driver/driver.h), while the node
 * list of step 0 already answers its keys. On a 100k-node model the passes take seconds;
 * before, nothing was on the screen until they ended. */

typedef struct step0_job {
    const char *path;
    const gl_ui_args *args; /* its --set (static in gl_ui_main: outlives a cancelled job) */
    gl_pipeline *p;         /* step 0 alone */
    gl_status st;
    char error[512];
} step0_job;

typedef struct passes_job {
    const char *path;
    const gl_ui_args *args;
    gl_job *job;            /* for the progress line */
    gl_pass_step *plan;     /* the passes "all" names, to say which one runs */
    size_t n_plan;
    gl_pipeline *p;
    gl_diff **diffs;
    gl_graph_index *indexes; /* of steps 1.., built here so that ] finds them ready */
    gl_status st;
    char error[512];
} passes_job;

static void load_progress(void *ctx, const char *what) { gl_job_progress(ctx, "%s", what); }

/* The workbench's --set options: $GRAPHLAB_SET first (space-separated "PASS.OPT=V ...",
 * read whole: how scripts and the tmux tests give `b` a corrupted rewrite to find), then
 * the command line's --set, so that the flag wins. */
static gl_status apply_settings(gl_session_opts *o, const gl_ui_args *a)
{
    const char *env = getenv("GRAPHLAB_SET");
    char *buf = gl_xstrdup(env ? env : ""); /* whole, whatever its length */
    gl_status st = GL_OK;
    char *save = NULL;
    for (char *w = strtok_r(buf, " ", &save); w && st == GL_OK; w = strtok_r(NULL, " ", &save))
        st = gl_session_option_set(o, "set", w);
    free(buf);
    if (st != GL_OK) { /* say which: the variable or the flag */
        char why[1024];
        snprintf(why, sizeof(why), "%s", gl_error_message());
        return gl_fail(st, "GRAPHLAB_SET: %s", why);
    }
    for (size_t i = 0; i < a->n_settings && st == GL_OK; i++)
        st = gl_session_option_set(o, "set", a->settings[i]);
    return st;
}

int gl_ui_check_args(const gl_ui_args *a)
{
    /* The export folder is kept in a buffer of its own size: a longer one would be cut
     * and the export written somewhere else, so it is refused before anything starts. */
    const char *dir = getenv("GRAPHLAB_EXPORT_DIR");
    size_t most = sizeof(((gl_ui *)0)->export_dir) - 1;
    if (dir && strlen(dir) > most) {
        fprintf(stderr, "graphlab: GRAPHLAB_EXPORT_DIR is %zu bytes long; the workbench "
                "takes a folder of at most %zu bytes\n", strlen(dir), most);
        return GL_EXIT_BAD;
    }
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    gl_status st = apply_settings(&o, a);
    gl_session_opts_free(&o);
    if (st != GL_OK) {
        fprintf(stderr, "graphlab: %s\n", gl_esc(gl_error_message()));
        return GL_EXIT_BAD;
    }
    return GL_EXIT_OK;
}

/* The model as loaded (the load's own --set options: load.freeze-inputs), as a pipeline
 * of no pass. Its settings are left out: a veto names a decision only the passes make. */
static void step0_run(void *arg, gl_job *job)
{
    step0_job *l = arg;
    gl_job_progress(job, "loading %s", l->path);
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    gl_model *m = NULL;
    l->st = apply_settings(&o, l->args);
    if (l->st == GL_OK)
        l->st = gl_session_load(l->path, &o.settings, &m);
    gl_session_opts_free(&o);
    if (l->st != GL_OK) {
        snprintf(l->error, sizeof(l->error), "%s", gl_error_message());
        return;
    }
    gl_pipeline_run(m, NULL, 0, NULL, GL_PIPELINE_KEEP_SNAPSHOTS, &l->p);
}

static void step0_discard(void *arg)
{
    step0_job *l = arg;
    gl_pipeline_free(l->p);
    free(l);
}

static void start_passes(gl_ui *ui, const char *path, const gl_ui_args *args);

static unsigned step0_finish(gl_ui *ui, void *arg)
{
    step0_job *l = arg;
    if (l->st != GL_OK) {
        snprintf(ui->fatal, sizeof(ui->fatal), "%s", l->error);
        ui->quit = true;
        step0_discard(l);
        return GL_REDRAW_QUIT;
    }
    gl_ui_set_pipeline(ui, l->p, NULL);
    start_passes(ui, l->path, l->args);
    free(l);
    return GL_REDRAW_ALL;
}

static const gl_job_spec step0_spec = {
    .what = "the model", .run = step0_run, .finish = step0_finish, .discard = step0_discard};

/* Called after step k: the status line names the pass running next. */
static gl_status passes_step(void *ctx, gl_pipeline *p, size_t k)
{
    passes_job *l = ctx;
    (void)p;
    if (k < l->n_plan)
        gl_job_progress(l->job, "running pass %zu of %zu (%s)", k + 1, l->n_plan,
                        l->plan[k].pass->name);
    return GL_OK;
}

/* The same load and pipeline as `graphlab optimize` and `export` (driver/driver.h); a
 * pass that fails keeps the steps before it, and the bar shows the failure. */
static void passes_run(void *arg, gl_job *job)
{
    passes_job *l = arg;
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    o.pipeline_flags = GL_PIPELINE_KEEP_SNAPSHOTS;
    o.always_pipeline = true;
    o.progress = load_progress;
    o.progress_ctx = job;
    o.on_step = passes_step;
    o.step_ctx = l;
    l->job = job;
    if (gl_pass_list_parse(o.passes, &l->plan, &l->n_plan) != GL_OK)
        l->n_plan = 0; /* only the progress line misses it: the session says what is wrong */
    gl_session s = {0};
    l->st = apply_settings(&o, l->args);
    if (l->st == GL_OK)
        l->st = gl_session_open(l->path, &o, &s);
    gl_session_opts_free(&o);
    if (!s.pipeline) {
        snprintf(l->error, sizeof(l->error), "%s", gl_error_message());
        return;
    }
    l->st = GL_OK;
    l->p = s.pipeline; /* the job owns it now */
    l->diffs = gl_ui_job_step_diffs(l->p, job);
    l->indexes = gl_ui_job_step_indexes(l->p, job);
}

gl_diff **gl_ui_job_step_diffs(const gl_pipeline *p, gl_job *job)
{
    gl_diff **diffs = gl_xcalloc(p->n_steps, sizeof(gl_diff *));
    for (size_t k = 1; k < p->n_steps && !gl_job_cancelled(job); k++) {
        gl_job_progress(job, "diffing step %zu of %zu", k, p->n_steps - 1);
        diffs[k] = gl_diff_graphs(p->steps[k - 1].model->graph, p->steps[k].model->graph,
                                  GL_DIFF_MATCH_IDS);
    }
    return diffs;
}

gl_graph_index *gl_ui_job_step_indexes(const gl_pipeline *p, gl_job *job)
{
    gl_graph_index *indexes = gl_xcalloc(p->n_steps, sizeof(*indexes));
    for (size_t k = 1; k < p->n_steps && !gl_job_cancelled(job); k++) {
        gl_job_progress(job, "indexing step %zu of %zu", k, p->n_steps - 1);
        gl_graph_index_build(&indexes[k], p->steps[k].model->graph);
    }
    return indexes;
}

void gl_ui_free_step_indexes(gl_graph_index *indexes, size_t n)
{
    for (size_t k = 0; indexes && k < n; k++)
        gl_graph_index_free(&indexes[k]);
    free(indexes);
}

void gl_ui_free_step_diffs(gl_pipeline *p, gl_diff **diffs)
{
    for (size_t k = 0; diffs && p && k < p->n_steps; k++)
        gl_diff_free(diffs[k]);
    free(diffs);
    gl_pipeline_free(p);
}

static void passes_discard(void *arg)
{
    passes_job *l = arg;
    gl_ui_free_step_indexes(l->indexes, l->p ? l->p->n_steps : 0);
    gl_ui_free_step_diffs(l->p, l->diffs);
    free(l->plan);
    free(l);
}

static unsigned passes_finish(gl_ui *ui, void *arg)
{
    passes_job *l = arg;
    ui->passes_pending = false;
    if (l->st != GL_OK) { /* step 0 stays: the model loaded once, it is worth reading */
        gl_ui_set_error(ui, "the passes did not run: %s", l->error);
        passes_discard(l);
        return GL_REDRAW_ALL;
    }
    gl_ui_adopt_steps(ui, l->p, l->diffs, l->indexes);
    if (!ui->pipeline->failure)
        gl_ui_set_status(ui, "%zu steps: ] and [ step, + and - one rewrite, ? lists the keys",
                         ui->pipeline->n_steps);
    free(l->plan);
    free(l);
    return GL_REDRAW_ALL;
}

static const gl_job_spec passes_spec = {
    .what = "the passes", .run = passes_run, .finish = passes_finish, .discard = passes_discard};

static void start_passes(gl_ui *ui, const char *path, const gl_ui_args *args)
{
    passes_job *l = gl_xcalloc(1, sizeof(*l));
    l->path = path;
    l->args = args;
    ui->passes_pending = true;
    if (!gl_ui_start_job(ui, &passes_spec, l)) {
        ui->passes_pending = false;
        free(l);
    }
}

/* ---- exports and the browser ------------------------------------------------------------ */

typedef enum export_kind { EXPORT_STEP, EXPORT_ALL, EXPORT_SVG } export_kind;

typedef struct export_job {
    export_kind kind;
    const gl_pipeline *p;
    const gl_model *model, *before; /* kept alive by the graveyard while the job runs */
    const gl_diff *diff;
    const char *model_path;
    char dir[1024], label[128], path[1280];
    gl_export_opts eo;
    gl_export_report report; /* EXPORT_ALL: where the weights went (eo.report) */
    gl_status st;
    char error[512];
    /* EXPORT_SVG: how the opener did (see open_file) */
    char opener[256];
    int open_status;
} export_job;

static void open_file(export_job *e);


static bool export_progress(void *ctx, size_t step, size_t n_steps)
{
    gl_job *job = ctx;
    gl_job_progress(job, "exporting step %zu of %zu", step, n_steps);
    return !gl_job_cancelled(job);
}

static void export_run(void *arg, gl_job *job)
{
    export_job *e = arg;
    switch (e->kind) {
    case EXPORT_STEP:
        e->st = gl_export_snapshot(e->model, e->before, e->dir, e->label, &e->eo);
        break;
    case EXPORT_ALL:
        e->st = gl_export_pipeline(e->p, e->model_path, e->dir, &e->eo, export_progress, job);
        break;
    case EXPORT_SVG: {
        gl_render_opts ro = {.diff = e->diff, .title = e->label};
        e->st = gl_make_dir(e->dir);
        if (e->st == GL_OK)
            e->st = gl_render_svg_file(e->model->graph, &ro, e->path, NULL);
        if (e->st == GL_OK)
            open_file(e);
        break;
    }
    }
    if (e->st != GL_OK)
        snprintf(e->error, sizeof(e->error), "%s", gl_error_message());
}

static void export_discard(void *arg) { free(arg); }

/* The executable `name` on $PATH (or `name` itself when it has a slash), into buf. */
static bool find_program(const char *name, char *buf, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(buf, len, "%s", name);
        return access(buf, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", name);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return true;
        p += n + (end ? 1 : 0);
    }
    return false;
}

enum { MAX_BROWSER_ARGS = 16 };

/* $BROWSER (first of a ':' list, words split at spaces, "%s" replaced by the file or
 * the file appended), else xdg-open. */
static int browser_argv(const char *file, char *words, size_t len, char **argv)
{
    const char *browser = getenv("BROWSER");
    if (browser && *browser) {
        size_t n = strcspn(browser, ":");
        snprintf(words, len, "%.*s", (int)n, browser);
    } else {
        snprintf(words, len, "xdg-open");
    }
    int argc = 0;
    bool placed = false;
    for (char *w = strtok(words, " "); w && argc < MAX_BROWSER_ARGS - 2; w = strtok(NULL, " ")) {
        if (strcmp(w, "%s") == 0) {
            w = (char *)file;
            placed = true;
        }
        argv[argc++] = w;
    }
    if (!placed)
        argv[argc++] = (char *)file;
    argv[argc] = NULL;
    return argc;
}

/* What became of the opener: */
enum {
    OPEN_RUNNING = -1,   /* still running after OPEN_WAIT_MS: a browser itself, say */
    OPEN_NOT_FOUND = -2, /* no such program on $PATH */
    OPEN_NO_FORK = -3,   /* fork or pipe failed (errno lost: said as such) */
    OPEN_SIGNAL = 1000,  /* + the signal that ended it; 0..255: its exit status */
};
enum { OPEN_WAIT_MS = 1500, OPEN_POLL_MS = 20 };

/* Run the opener in its own session, stdio on /dev/null, and wait up to OPEN_WAIT_MS for
 * its exit status: xdg-open and most $BROWSER wrappers hand the file over and exit, so
 * their status says whether that worked. A middle child does the waiting and reports
 * through a pipe, then exits: an opener still running (a browser itself) is reparented
 * to init, and nobody has to reap it later. Between fork and exec only async-signal-safe
 * calls: this runs on a worker thread. */
static int launch_and_wait(char *const *argv, const char *program)
{
    int fds[2];
    if (pipe(fds) != 0)
        return OPEN_NO_FORK;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return OPEN_NO_FORK;
    }
    if (pid == 0) {
        setsid();
        int result = OPEN_NO_FORK;
        pid_t opener = fork();
        if (opener == 0) {
            int fd = open("/dev/null", O_RDWR);
            if (fd >= 0) {
                dup2(fd, 0);
                dup2(fd, 1);
                dup2(fd, 2);
                if (fd > 2)
                    close(fd);
            }
            execv(program, argv);
            _exit(127);
        }
        if (opener > 0) {
            result = OPEN_RUNNING;
            struct timespec tick = {0, OPEN_POLL_MS * 1000000L};
            for (int waited = 0; waited < OPEN_WAIT_MS; waited += OPEN_POLL_MS) {
                int status;
                if (waitpid(opener, &status, WNOHANG) == opener) {
                    result = WIFEXITED(status) ? WEXITSTATUS(status)
                                               : OPEN_SIGNAL + WTERMSIG(status);
                    break;
                }
                nanosleep(&tick, NULL);
            }
        }
        ssize_t w = write(fds[1], &result, sizeof(result));
        _exit(w == (ssize_t)sizeof(result) ? 0 : 1);
    }
    close(fds[1]);
    int result = OPEN_NO_FORK;
    ssize_t got;
    while ((got = read(fds[0], &result, sizeof(result))) < 0 && errno == EINTR) {
    }
    if (got != (ssize_t)sizeof(result))
        result = OPEN_NO_FORK;
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return result;
}

/* On the worker: the SVG handed to $BROWSER or xdg-open, the outcome in e. */
static void open_file(export_job *e)
{
    char words[1024], program[4096];
    char *argv[MAX_BROWSER_ARGS];
    browser_argv(e->path, words, sizeof(words), argv);
    snprintf(e->opener, sizeof(e->opener), "%s", argv[0]);
    if (!find_program(argv[0], program, sizeof(program))) {
        e->open_status = OPEN_NOT_FOUND;
        return;
    }
    e->open_status = launch_and_wait(argv, program);
}

/* The status line after `o`: the opener's failure when it failed, with where the SVG is. */
static unsigned report_open(gl_ui *ui, const export_job *e)
{
    const char *browser = getenv("BROWSER");
    int st = e->open_status;
    if (st == OPEN_NOT_FOUND)
        gl_ui_set_error(ui, "%s not found (set $BROWSER): the SVG is %s",
                        browser && *browser ? e->opener : "no $BROWSER and no xdg-open;", e->path);
    else if (st == OPEN_NO_FORK)
        gl_ui_set_error(ui, "cannot start %s (fork failed): the SVG is %s", e->opener, e->path);
    else if (st >= OPEN_SIGNAL)
        gl_ui_set_error(ui, "%s was killed by signal %d: the SVG is %s", e->opener,
                        st - OPEN_SIGNAL, e->path);
    else if (st == 127)
        gl_ui_set_error(ui, "%s could not be run (exit status 127): the SVG is %s", e->opener,
                        e->path);
    else if (st > 0)
        gl_ui_set_error(ui, "%s failed (exit status %d): the SVG is %s", e->opener, st, e->path);
    else
        gl_ui_set_status(ui, "opened %s with %s%s", e->path, e->opener,
                         st == OPEN_RUNNING ? " (still running)" : "");
    return GL_REDRAW_STATUS;
}

static unsigned export_finish(gl_ui *ui, void *arg)
{
    export_job *e = arg;
    unsigned flags = GL_REDRAW_STATUS;
    if (e->st != GL_OK)
        gl_ui_set_error(ui, "export failed: %s", e->error);
    else if (e->kind == EXPORT_STEP)
        gl_ui_set_status(ui, "exported %s to %s/ (.dot .svg .onnx .diff.txt)", e->label, e->dir);
    else if (e->kind == EXPORT_ALL) {
        char weights[256];
        gl_export_report_line(&e->eo, weights, sizeof(weights));
        gl_ui_set_status(ui, "exported %zu steps to %s/ (index.html, decisions.json; %s)",
                         e->p->n_steps, e->dir, weights);
    }
    else
        flags = report_open(ui, e);
    free(e);
    return flags;
}

static const gl_job_spec export_spec = {
    .what = "the export", .run = export_run, .finish = export_finish, .discard = export_discard};

/* The shown step's label: "03-constant-folding", "-K12" after it while replayed. */
static void shown_label(const gl_ui *ui, char *buf, size_t len)
{
    char base[96];
    gl_snapshot_label(ui->pipeline, ui->step, base, sizeof(base));
    if (ui->budget >= 0)
        snprintf(buf, len, "%s-K%lld", base, (long long)ui->budget);
    else
        snprintf(buf, len, "%s", base);
}

static export_job *new_export(gl_ui *ui, export_kind kind)
{
    export_job *e = gl_xcalloc(1, sizeof(*e));
    e->kind = kind;
    e->p = ui->pipeline;
    e->model = ui->replay.model ? ui->replay.model : ui->pipeline->steps[ui->step].model;
    e->before = ui->step > 0 ? ui->pipeline->steps[ui->step - 1].model : NULL;
    e->diff = ui->diff;
    e->model_path = ui->model_path;
    snprintf(e->dir, sizeof(e->dir), "%s", ui->export_dir);
    shown_label(ui, e->label, sizeof(e->label));
    snprintf(e->path, sizeof(e->path), "%s/%s.svg", e->dir, e->label);
    return e;
}

unsigned gl_ui_export_into(gl_ui *ui, bool all, const char *dir, const gl_export_opts *eo)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    if (dir != ui->export_dir) /* `e` and `o` write where the last export went */
        snprintf(ui->export_dir, sizeof(ui->export_dir), "%s", dir);
    export_job *e = new_export(ui, all ? EXPORT_ALL : EXPORT_STEP);
    e->eo = *eo;
    e->eo.report = &e->report;
    if (!gl_ui_start_job(ui, &export_spec, e))
        free(e);
    return GL_REDRAW_STATUS;
}

unsigned gl_ui_open_svg(gl_ui *ui)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    export_job *e = new_export(ui, EXPORT_SVG);
    if (!gl_ui_start_job(ui, &export_spec, e))
        free(e);
    return GL_REDRAW_STATUS;
}

/* ---- the frame: bar, view, status ----------------------------------------------------- */

static void draw_status(gl_ui *ui, int y, int width)
{
    static const char *const spin_utf8[] = {"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"};
    static const char *const spin_ascii[] = {"|", "/", "-", "\\"};
    char right[128], left[512];
    gl_view *v = &ui->views[ui->current];
    if (ui->pipeline && ui->passes_pending)
        snprintf(right, sizeof(right), " %s | step 0, passes running | ? help", v->ops->name);
    else if (ui->pipeline)
        snprintf(right, sizeof(right), " %s | step %zu/%zu | ? help", v->ops->name, ui->step,
                 ui->pipeline->n_steps - 1);
    else
        snprintf(right, sizeof(right), " q quits");
    int rw = gl_ui_text_width(right);
    if (rw > width / 2)
        rw = 0; /* too narrow: the message matters more */
    int role = ui->status_error ? GL_ROLE_ERROR : GL_ROLE_STATUS;
    if (ui->prompt) {
        char count[64] = "";
        if (ui->status_error && ui->prompt_text[0])
            snprintf(count, sizeof(count), "  (no match)");
        else if (ui->prompt_text[0] && v->match_count > 0)
            snprintf(count, sizeof(count), "  (%d of %d)", v->match_at, v->match_count);
        snprintf(left, sizeof(left), "/%s_%s", ui->prompt_text, count);
        role = GL_ROLE_NORMAL;
    } else if (ui->export_prompt) {
        gl_ui_export_prompt_line(ui, left, sizeof(left));
        role = GL_ROLE_NORMAL;
    } else if (ui->job) {
        app_runtime *rt = ui->runtime;
        char progress[sizeof(ui->job->progress)];
        pthread_mutex_lock(&rt->mu);
        memcpy(progress, ui->job->progress, sizeof(progress));
        pthread_mutex_unlock(&rt->mu);
        double s = (gl_now_ms() - ui->job->started_ms) / 1000;
        size_t frame = (size_t)(s * 10);
        const char *spin = ui->utf8 ? spin_utf8[frame % GL_ARRAY_LEN(spin_utf8)]
                                    : spin_ascii[frame % GL_ARRAY_LEN(spin_ascii)];
        char held[64] = "";
        if (rt->n_held)
            snprintf(held, sizeof(held), "; %zu %s for it", rt->n_held,
                     gl_noun((long long)rt->n_held, "key waits", "keys wait"));
        snprintf(left, sizeof(left), "%s %s... %.1f s (C-c stops waiting%s)", spin, progress, s,
                 held);
        role = GL_ROLE_STATUS;
    } else {
        snprintf(left, sizeof(left), "%s", ui->status);
    }
    gl_ui_fill(y, 0, width, gl_ui_attr(ui, GL_ROLE_STATUS));
    gl_ui_put(y, 0, width - rw, gl_ui_attr(ui, (gl_ui_role)role), left);
    if (rw)
        gl_ui_put(y, width - rw, rw, gl_ui_attr(ui, GL_ROLE_DIM), right);
}

enum { MIN_ROWS = 4, MIN_COLS = 20 };

static void draw_frame(gl_ui *ui, unsigned flags)
{
    int rows = LINES, cols = COLS;
    if (rows < MIN_ROWS || cols < MIN_COLS) {
        erase();
        gl_ui_put(0, 0, cols, A_BOLD, "terminal too small");
        return;
    }
    if (flags & GL_REDRAW_BAR)
        gl_ui_draw_bar(ui, cols);
    if (flags & GL_REDRAW_VIEW) {
        for (int y = 1; y < rows - 1; y++) {
            move(y, 0);
            clrtoeol();
        }
        if (ui->pipeline) {
            gl_view *v = gl_ui_view(ui);
            v->ops->draw(ui, v, 1, 0, rows - 2, cols);
        } else {
            char msg[1200];
            snprintf(msg, sizeof(msg), "loading %s ...", ui->model_path);
            gl_ui_put(2, 2, cols - 2, gl_ui_attr(ui, GL_ROLE_DIM), msg);
        }
    }
    if (flags & (GL_REDRAW_STATUS | GL_REDRAW_VIEW))
        draw_status(ui, rows - 1, cols);
}

/* ---- input ------------------------------------------------------------------------------ */

/* The wheel: ncurses reports it as buttons 4 (up) and 5 (down) where the terminal does. */
#ifdef BUTTON5_PRESSED
#define WHEEL_DOWN BUTTON5_PRESSED
#else
#define WHEEL_DOWN 0
#endif
#define WHEEL_UP BUTTON4_PRESSED
enum { WHEEL_ROWS = 3 };

static unsigned mouse_click(gl_ui *ui)
{
    MEVENT ev;
    if (getmouse(&ev) != OK || !ui->pipeline || ui->prompt)
        return GL_REDRAW_NONE;
    if (ev.bstate & (WHEEL_UP | WHEEL_DOWN)) {
        unsigned flags = GL_REDRAW_NONE;
        gl_request r = ev.bstate & WHEEL_UP ? GL_REQ_MOVE_UP : GL_REQ_MOVE_DOWN;
        for (int i = 0; i < WHEEL_ROWS; i++)
            flags |= gl_ui_request(ui, r);
        return flags;
    }
    if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
        return GL_REDRAW_NONE;
    if (ev.y == 0) {
        gl_bar_item *items;
        size_t n = gl_bar_items(ui, &items);
        char branch[256];
        int x0 = gl_ui_bar_branch_cols(ui, COLS, branch, sizeof(branch));
        if (x0 && ev.x < x0) {
            free(items);
            return gl_ui_swap_branch(ui);
        }
        int hit = gl_bar_item_at(items, n, COLS - x0, ui->utf8, ev.x - x0);
        free(items);
        return hit >= 0 ? gl_ui_goto_step(ui, (size_t)hit) : GL_REDRAW_NONE;
    }
    gl_view *v = gl_ui_view(ui);
    if (ev.y >= LINES - 1 || !v->ops->click)
        return GL_REDRAW_NONE;
    return v->ops->click(ui, v, ev.y - 1, ev.x);
}

enum { KEYS_PER_FRAME = 64 };

static unsigned read_keys(gl_ui *ui)
{
    unsigned flags = GL_REDRAW_NONE;
    int ch;
    for (int i = 0; i < KEYS_PER_FRAME && !ui->quit && (ch = getch()) != ERR; i++) {
        if (ch == KEY_RESIZE) {
            clear();
            flags |= GL_REDRAW_ALL;
        } else if (ch == KEY_MOUSE) {
            flags |= mouse_click(ui);
        } else if (hold_key(ui, ch)) {
            flags |= GL_REDRAW_STATUS; /* the status line counts the waiting keys */
        } else {
            flags |= gl_ui_key(ui, ch);
        }
    }
    return flags;
}

/* ---- terminal lifetime and signals ------------------------------------------------------- */

static volatile sig_atomic_t curses_active;
static volatile sig_atomic_t interrupted;

static void restore_terminal(void)
{
    if (curses_active) {
        curses_active = 0;
        endwin();
    }
}

/* Drop the half-written files of an export, put the terminal back, then die of the same
 * signal as we would have. */
static void on_fatal_signal(int sig)
{
    gl_temp_files_remove();
    restore_terminal();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void install_signals(void)
{
    static const int fatal[] = {SIGSEGV, SIGABRT, SIGTERM, SIGBUS, SIGFPE, SIGILL, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < GL_ARRAY_LEN(fatal); i++)
        sigaction(fatal[i], &sa, NULL);
    sa.sa_handler = on_interrupt; /* kill -INT: like C-c, never a quit mid-job */
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static bool start_curses(gl_ui *ui)
{
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr)
        return false;
    set_term(scr);
    curses_active = 1;
    gl_set_fatal_hook(restore_terminal);
    install_signals();
    raw(); /* C-c arrives as a key: it cancels work, it does not kill us */
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_CLICKED | WHEEL_UP | WHEEL_DOWN, NULL); /* 0: no mouse, nothing to do */
    gl_ui_draw_setup(ui);
    return true;
}

/* ---- the loop ---------------------------------------------------------------------------- */

enum { SPINNER_MS = 100 };

static void run_loop(gl_ui *ui)
{
    app_runtime *rt = ui->runtime;
    unsigned flags = GL_REDRAW_ALL;
    while (!ui->quit) {
        if (flags) {
            draw_frame(ui, flags);
            refresh();
            flags = GL_REDRAW_NONE;
        }
        struct pollfd fds[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                                {.fd = rt->wake[0], .events = POLLIN}};
        int n = poll(fds, 2, ui->job ? SPINNER_MS : -1);
        if (interrupted) {
            interrupted = 0;
            flags |= gl_ui_request(ui, GL_REQ_CANCEL);
        }
        if (n > 0 && (fds[1].revents & POLLIN))
            flags |= collect_job(ui);
        if (n > 0 && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) &&
            !(fds[0].revents & POLLIN)) {
            ui->quit = true; /* the terminal went away */
            break;
        }
        if (n != 0) /* keys, or a signal (SIGWINCH: getch gives KEY_RESIZE) */
            flags |= read_keys(ui);
        if (n == 0 && ui->job)
            flags |= GL_REDRAW_STATUS; /* the spinner and the time */
        bury_if_idle(rt);
    }
}

int gl_ui_main(const gl_ui_args *a)
{
    /* static: the load job reads the settings, and a cancelled job may outlive us */
    static gl_ui_args args;
    args = *a;
    const char *model_path = args.model, *data_dir = args.data_dir;
    setlocale(LC_ALL, "");
    if (access(model_path, R_OK) != 0) { /* the common failure, before touching the tty */
        fprintf(stderr, "graphlab: %s: cannot open: %s\n", gl_esc(model_path), strerror(errno));
        return GL_EXIT_BAD;
    }
    struct stat data_st;
    if (data_dir && (stat(data_dir, &data_st) != 0 || !S_ISDIR(data_st.st_mode))) {
        fprintf(stderr, "graphlab: --data %s: not a folder\n", gl_esc(data_dir));
        return GL_EXIT_BAD;
    }
    /* static: a cancelled job may outlive this function (it reads the pipeline), and
     * what it reads stays reachable for leak checkers */
    static gl_ui ui;
    gl_ui_init(&ui, model_path);
    ui.data_dir = data_dir;
    ui.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    /* static: a cancelled job may still touch it after we return, until exit() */
    static app_runtime rt = {.wake = {-1, -1}};
    pthread_mutex_init(&rt.mu, NULL);
    atomic_init(&rt.jobs_alive, 0);
    if (pipe(rt.wake) != 0 || fcntl(rt.wake[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(rt.wake[1], F_SETFL, O_NONBLOCK) != 0 || fcntl(rt.wake[0], F_SETFD, FD_CLOEXEC) ||
        fcntl(rt.wake[1], F_SETFD, FD_CLOEXEC)) {
        fprintf(stderr, "graphlab: cannot make a pipe: %s\n", strerror(errno));
        gl_ui_free(&ui);
        return GL_EXIT_BAD;
    }
    ui.runtime = &rt;
    if (!start_curses(&ui)) {
        fprintf(stderr, "graphlab: cannot use the terminal (TERM=%s)\n",
                gl_esc(getenv("TERM")));
        gl_ui_free(&ui);
        return GL_EXIT_BAD;
    }
    step0_job *l = gl_xcalloc(1, sizeof(*l));
    l->path = model_path;
    l->args = &args;
    gl_ui_start_job(&ui, &step0_spec, l);
    run_loop(&ui);
    restore_terminal();
    gl_set_fatal_hook(NULL);
    int rc = GL_EXIT_OK;
    if (ui.fatal[0]) {
        fprintf(stderr, "graphlab: %s\n", gl_esc(ui.fatal));
        rc = GL_EXIT_BAD;
    }
    if (ui.job)
        gl_ui_cancel_job(&ui);
    if (atomic_load(&rt.jobs_alive) == 0) {
        /* nothing reads our state any more: free it (leak checkers stay quiet) */
        bury_if_idle(&rt);
        free(rt.dead_models);
        free(rt.dead_diffs);
        free(rt.dead_pipelines);
        ui.runtime = NULL;
        gl_ui_free(&ui);
        close(rt.wake[0]);
        close(rt.wake[1]);
    }
    else { /* a cancelled job still runs and reads the pipeline: what it was writing (an
            * export's temporary folder) goes now, and _exit ends it with us. Not exit():
            * the libraries' destructors (oneDNN's, libgomp's) would run while the job is
            * inside their kernels, and a job caught mid-run crashed the exit (tui_run.sh,
            * "q exits 0 with the run still going", under load). */
        gl_temp_files_remove();
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
