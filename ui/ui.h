/* ui.h — the ncurses workbench: state, views, keys.
 *
 * One model, one pipeline (every step kept), a current step and a current view. Views
 * share one vtable shape (tig's view_ops): open, draw, request, close (plus optional
 * find and click). Actions return what to redraw; no view paints outside its draw
 * function. Keys, their names and help text come from one table (keys.def), so `?` is
 * generated from it.
 *
 * The driver (app.c) handles the global requests itself — stepping, rewrites, view
 * switches, search prompt, Esc (a back stack), export, open, jump, help, quit, cancel —
 * and offers the others (moves, pages, top/bottom, Enter, f, n/N when the view has no
 * find) to the current view's `request`.
 *
 * Long work (loading, running the pipeline, replaying a step with a rewrite budget,
 * exports, Graphviz layouts) runs off the input loop as a job on a worker thread with a
 * progress line, and Ctrl-C stops waiting for it without quitting: the pipeline has no
 * cancellation hook, so a cancelled job runs to its end in the background and its
 * result is discarded. Curses calls stay on the main thread.
 *
 * Everything but drawing works without a terminal (tests/test_ui.c drives requests on
 * a gl_ui made by gl_ui_init + gl_ui_set_pipeline; jobs then run synchronously).
 */
#ifndef GL_UI_H
#define GL_UI_H

#include "diff/diff.h"
#include "exec/intermediates.h"
#include "exec/profile.h"
#include "exec/qerror.h"
#include "passes/pipeline.h"
#include "render/render.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gl_ui gl_ui;
typedef struct gl_view gl_view;
typedef struct gl_job gl_job;

/* What an action asks the driver to repaint. */
enum gl_redraw {
    GL_REDRAW_NONE = 0,
    GL_REDRAW_VIEW = 1u << 0,   /* the current view's body */
    GL_REDRAW_BAR = 1u << 1,    /* the pipeline bar */
    GL_REDRAW_STATUS = 1u << 2, /* the status line */
    GL_REDRAW_ALL = 0xff,
    GL_REDRAW_QUIT = 1u << 8,   /* leave the program */
};

/* Requests: what a key means, independent of which key it is (tig's requests). */
typedef enum gl_request {
#define GL_REQ(id, key_names, help) GL_REQ_##id,
#include "ui/keys.def"
#undef GL_REQ
    GL_REQ_COUNT
} gl_request;

typedef struct gl_view_ops {
    const char *name;                       /* "nodes", "diff", "decisions", "graph" */
    void (*open)(gl_ui *ui, gl_view *v);    /* (re)build its model for the current step;
                                             * may be NULL */
    void (*draw)(gl_ui *ui, gl_view *v, int top, int left, int height, int width);
    unsigned (*request)(gl_ui *ui, gl_view *v, gl_request r); /* gl_redraw flags */
    void (*close)(gl_ui *ui, gl_view *v);   /* free v->state; may be NULL */
    /* Optional. Move the selection to the next row matching ui->search in direction
     * dir (+1 / -1), starting at the selection itself when `inclusive` (incremental
     * search while typing) or after it (n/N); wraps around. False when nothing
     * matches (selection unchanged). Views without it: the driver searches the nodes. */
    bool (*find)(gl_ui *ui, gl_view *v, int dir, bool inclusive);
    /* Optional. A mouse click at (row, col) relative to the view's area. */
    unsigned (*click)(gl_ui *ui, gl_view *v, int row, int col);
} gl_view_ops;

struct gl_view {
    const gl_view_ops *ops;
    void *state;        /* owned by the view */
    int selected;       /* selected row */
    int scroll;         /* first visible row */
    int height;         /* rows of the list at the last draw (for paging) */
    int hscroll;        /* columns of each row scrolled out on the left (h/L) */
    int match_at, match_count; /* the last find: the selected match is match_at of
                                * match_count (1-based; 0 of 0 when it set none) */
    unsigned generation; /* ui->generation it was opened for */
};

typedef enum gl_view_kind {
#define GL_VIEW(kind, ops, tab, key_names, help) GL_VIEW_##kind,
#define GL_VIEW_INNER(kind, ops) GL_VIEW_##kind,
#include "ui/views.def"
#undef GL_VIEW
#undef GL_VIEW_INNER
    GL_VIEW_COUNT
} gl_view_kind;

/* gl_view_<ops>_ops, one per row of views.def, each in its view_<ops>.c (help: keys.c). */
#define GL_VIEW(kind, ops, tab, key_names, help) extern const gl_view_ops gl_view_##ops##_ops;
#define GL_VIEW_INNER(kind, ops) extern const gl_view_ops gl_view_##ops##_ops;
#include "ui/views.def"
#undef GL_VIEW
#undef GL_VIEW_INNER

/* The selection follows the same node across steps: the loaded node (origin) it stands
 * for, mapped through provenance in each step (gl_ui_follow). */
typedef struct gl_selection {
    uint32_t origin;  /* UINT32_MAX: nothing selected / a node without provenance */
    uint32_t node_id; /* in the current step's graph; UINT32_MAX: none */
    bool followed;    /* node_id stands for origin through provenance (a fused group the
                       * origin is a member of), not chosen as itself */
} gl_selection;

/* A graph as the views read it: live nodes in order, id -> row, op histogram. */
typedef struct ui_op_tally {
    const char *op; /* op_type of some node of the graph (not owned) */
    int op_len;     /* the kind's part of it (gl_group_kind_len): groups count together */
    size_t count;
} ui_op_tally;

typedef struct gl_graph_index {
    const gl_graph *graph;
    gl_node **rows;        /* live nodes in graph order */
    size_t n_rows;
    uint32_t *row_of_id;   /* n_ids entries; UINT32_MAX: no live node with that id */
    size_t n_ids;
    ui_op_tally *ops;      /* most frequent first, ties by name */
    size_t n_ops;
    int op_cols;           /* the widest op (gl_ui_op_text) in columns, for the node list */
    int name_cols;         /* the longest node name in columns */
} gl_graph_index;

/* Safe on a worker thread: it only reads g (the passes job indexes every step). */
void gl_graph_index_build(gl_graph_index *ix, const gl_graph *g);
void gl_graph_index_free(gl_graph_index *ix);
/* A node's op as the node list shows it: "Conv", "com.microsoft:Gelu". */
void gl_ui_op_text(const gl_node *n, char *buf, size_t len);
/* The node with that id, or NULL. */
gl_node *gl_graph_index_node(const gl_graph_index *ix, uint32_t id);
/* Where `sel` went in the indexed graph: the node with the same id if it is still
 * there, else the first node (in order) whose provenance lists sel.origin, else
 * UINT32_MAX. */
uint32_t gl_ui_follow(const gl_graph_index *ix, gl_selection sel);

/* Back stack entry (Esc): the view, and for the detail view the node it showed. */
typedef struct gl_back_entry {
    gl_view_kind kind;
    uint32_t node_id;
    int64_t ghost_step;
} gl_back_entry;

/* A run of one step (`r`, run.c): the step's model on the reference kernels, on oneDNN,
 * and when the step has fused groups oneDNN on the model before fusion ("unfused"), as
 * `graphlab profile --backends ref,unfused,fused` runs them (gl_profile_run); then the
 * reference and the oneDNN run of the step's model once more with every tensor kept
 * (intermediates.h), compared, for the tensor view and the first divergence. */
/* `r` with a what-if's other branch: its step's model run beside the shown one's, on the
 * same inputs. "Here" is the shown branch, "there" the other. */
typedef struct gl_run_branch {
    gl_profile *prof;          /* there's model on oneDNN alone (backend 0) */
    char here[96], there[96];  /* the branches' labels (gl_ui_branch_label) */
    size_t nodes_here, nodes_there;
    /* Per graph output (gl_run.prof->output_names): here's oneDNN against there's, and
     * each against here's reference run (the shown step's model on the reference). */
    gl_compare *between, *here_ref, *there_ref;
    size_t n_outputs;
    bool outputs_ok;           /* every `between` within tolerance */
    size_t *match;             /* per row of gl_run.prof: there's row of that name and op,
                                * a node of its graph; SIZE_MAX: none */
    size_t *only_there;        /* there's own rows no row here matches, in its plan order */
    size_t n_only_there;
} gl_run_branch;

typedef struct gl_run {
    size_t step;               /* the step it ran (its model, not a replay) */
    unsigned here, there;      /* gl_ui.branch_id of the pipeline it ran and of the other
                                * branch then (0: none): after X or x it is not shown */
    gl_profile *prof;
    size_t ref, fused, unfused; /* backends of prof; fused: oneDNN on the step's model (the
                                * only oneDNN run when the step has no groups); unfused:
                                * SIZE_MAX when not run */
    gl_inter_rec *rec_ref, *rec_run; /* every tensor of the reference and the fused run */
    gl_inter_report report;    /* rec_run against rec_ref */
    char rec_error[256];       /* why a recording is incomplete ("": it is not) */
    double rtol, atol, steps;  /* the comparisons' tolerances (gl_compare_value) */
    gl_run_branch *branch;     /* the other branch's run beside it (NULL: no branch) */
    char inputs[1100];         /* "inputs of DIR", "seeded random inputs" */
    char expected_label[256];  /* --data: the data set's folder name (test_data_set_0), for
                                * the header's line of expected outputs; "" without */
    bool stable;               /* $GRAPHLAB_STABLE_TIMES set: times, shares and numbers drawn
                                * as '~' (the tmux goldens) */
    /* A quantized (QDQ) model: the reference run of the step against the float model (the
     * loaded model with its Q -> DQ pairs removed, on the reference), as `run --compare
     * float --intermediates` compares them (exec/qerror.h). has_float false otherwise. */
    bool has_float;
    gl_qdq_pairs pairs;        /* the loaded model's pairs */
    gl_inter_rec *rec_float;   /* every tensor of the float run */
    gl_qerror_report qerror;   /* rec_ref's pairs against rec_float */
    double *float_nmse;        /* per row of prof: its first output against the float run
                                * (a pair's Q: the pair's error); NAN when not compared */
} gl_run;

/* The run view's orders (a key cycles them). */
/* GL_RUN_BY_FLOAT (the error against the float run, worst first) only on a QDQ model. */
typedef enum gl_run_sort {
    GL_RUN_BY_TIME, GL_RUN_BY_NAME, GL_RUN_BY_TOPO, GL_RUN_BY_FLOAT, GL_RUN_SORTS
} gl_run_sort;

/* Colour roles; gl_ui_attr maps them to colour pairs, or to bold/reverse/underline
 * without colours (NO_COLOR, monochrome terminals). Pairs 1..GL_ROLE_COUNT are ours. */
typedef enum gl_ui_role {
    GL_ROLE_NORMAL,
    GL_ROLE_BAR,         /* the pipeline bar */
    GL_ROLE_BAR_CURRENT, /* the current step in it */
    GL_ROLE_SELECTED,    /* the selected row */
    GL_ROLE_HEADER,      /* a view's header lines */
    GL_ROLE_ADDED,
    GL_ROLE_REMOVED,
    GL_ROLE_CHANGED,
    GL_ROLE_DIM,
    GL_ROLE_STATUS,
    GL_ROLE_ERROR,
    GL_ROLE_LINK,        /* something Enter opens */
    GL_ROLE_COUNT
} gl_ui_role;

#define GL_UI_BACK_MAX 32

/* What-if's other branch: the pipeline the last `x` replaced, kept (owned, with its step
 * diffs) so that the bar, the diff and the run view can compare the two; X swaps it with
 * the shown one. A later `x` drops it for the one shown then: two branches at most. */
typedef struct gl_branch {
    gl_pipeline *pipeline; /* NULL: there is no other branch */
    gl_diff **step_diffs;  /* [k]: step k against k-1, as gl_ui.step_diffs */
    unsigned id;           /* gl_ui.branch_id it had while shown */
} gl_branch;

/* The shown step replayed to `budget` of its rewrites (+/-), with what the views show of
 * it. The pipeline and step say where it belongs: a kept one is used only there. */
typedef struct gl_replay {
    const gl_pipeline *p;
    size_t step;
    int64_t budget;
    gl_model *model;          /* NULL: none */
    gl_decision_log log;
    gl_diff *diff;            /* against step - 1; NULL until made */
    gl_diff *rewrite_diff;    /* against the replay one rewrite before: what rewrite
                               * `budget` alone did; NULL until made (and at budget 0) */
    int64_t rewrite_decision; /* the record of rewrite `budget` in log (its last applied
                               * one); -1: none (a pass without records) */
    gl_graph_index index;     /* of model's graph while it is not shown (made by the job,
                               * or kept from a visit); .graph NULL: none */
} gl_replay;

struct gl_ui {
    const char *model_path;
    gl_pipeline *pipeline;    /* every step kept; NULL while loading */
    gl_diff **step_diffs;     /* step_diffs[k]: step k against k-1 ([0] NULL); owned */
    gl_graph_index *step_index; /* [k]: step k's index while another graph is shown (built
                                 * by the passes job, or kept from a visit); .graph NULL:
                                 * none. As many as the shown pipeline's steps; owned */
    size_t n_step_index;
    size_t step;              /* current step */
    int64_t budget;           /* rewrites shown inside the current step (+/-); -1: all */
    gl_replay replay;         /* the step replayed to `budget` (replay.model NULL: the
                               * step itself is shown); owned */
    gl_replay kept[2];        /* replays of the shown step one rewrite before and after
                               * the shown one, kept so that +/- back and forth replays
                               * nothing (empty: model NULL); owned */
    unsigned replays_run;     /* gl_pipeline_replay calls made for +/- (tests count them) */
    gl_diff *diff;            /* what is shown against the previous step: step_diffs[step]
                               * or replay.diff (not owned) */
    bool diff_whole_step;     /* D: inside a pass the diff view shows `diff`, not
                               * rewrite_diff */
    bool diff_branch;         /* D: the diff view shows branch_diff, the shown graph against
                               * the other branch's at this step */
    gl_diff *branch_diff;     /* that diff (owned; NULL unless diff_branch and a branch) */
    int64_t land_decision;    /* after the replay running now (bisect's landing): select
                               * this record, show the diff and land_status; -1: none */
    char land_status[256];
    int64_t want_budget;      /* +/- pressed while a replay runs: the budget to reach */
    gl_graph_index index;     /* of gl_ui_graph(ui) */
    unsigned generation;      /* bumped whenever the shown graph changes */

    gl_view *views;           /* GL_VIEW_COUNT, indexed by gl_view_kind */
    size_t n_views, current;
    gl_back_entry back[GL_UI_BACK_MAX];
    size_t n_back;

    gl_selection sel;
    int64_t ghost_step;       /* detail of a node of step `ghost_step` (a removed node
                               * seen from the diff); -1: the node is in the shown graph */
    uint32_t ghost_id;        /* that node */
    uint32_t *marks;          /* node ids marked by Enter on a decision (n/N cycle) */
    size_t n_marks;

    gl_branch other;          /* what-if's other branch (other.pipeline NULL: none) */
    unsigned branch_id;       /* names the shown pipeline: a run is of one pair of them */
    unsigned next_branch_id;

    const char *data_dir;     /* --data: the inputs of runs (NULL: seeded random) */
    gl_run *run;              /* the last run (owned; NULL: none yet) */
    gl_run_sort run_sort;
    size_t tensor_row;        /* the profile row the tensor view shows */

    char search[128];         /* last '/' pattern */
    bool prompt;              /* the '/' prompt is open */
    char prompt_text[128];
    int prompt_saved_row;     /* selection when the prompt opened (Esc restores it) */
    char status[256];         /* status line text */
    bool status_error;
    int pending_digit;        /* first digit of a two-digit jump; -1 none */
    double pending_digit_ms;

    gl_job *job;              /* the job the status line waits for (NULL: idle) */
    bool sync_jobs;           /* run jobs inline (tests) */
    bool passes_pending;      /* step 0 is shown alone while the passes run (app.c) */
    void *runtime;            /* app.c's private part (threads, graveyard); NULL headless */
    char export_dir[1024];    /* ./graphlab-export/<model-name>, or $GRAPHLAB_EXPORT_DIR,
                               * or where the last E exported */
    bool export_prompt;       /* e, E or w's "where to?" prompt is open (export_prompt.c) */
    int export_what;          /* in it: what Enter writes (gl_export_target) */
    bool export_onnx;         /* in it: write the per-step .onnx files too */
    char export_text[1024];
    char fatal[512];          /* the initial load failed: its message */
    bool color;               /* has_colors() && !NO_COLOR */
    bool utf8;                /* the locale's charset is UTF-8 */
    bool quit;
};

/* ---- state (state.c): no terminal needed ---------------------------------------- */

/* A workbench over nothing yet (pipeline NULL): views allocated, status empty. */
void gl_ui_init(gl_ui *ui, const char *model_path);
/* Take the pipeline and its step diffs (NULL: computed here) and show step 0, the
 * model as loaded. */
void gl_ui_set_pipeline(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs);
void gl_ui_free(gl_ui *ui);

/* The graph shown at the current step (the replay when a budget is active). */
const gl_graph *gl_ui_graph(const gl_ui *ui);
/* The decisions of the current step (the replay's when a budget is active). */
const gl_decision *gl_ui_decisions(const gl_ui *ui, size_t *count);
/* The graph of step k (k < n_steps). */
const gl_graph *gl_ui_step_graph(const gl_ui *ui, size_t k);

/* A key from getch: prompt editing when the prompt is open, else its request. */
unsigned gl_ui_key(gl_ui *ui, int key);
unsigned gl_ui_request(gl_ui *ui, gl_request r);
/* Show step k with all its rewrites (the selection follows). */
unsigned gl_ui_goto_step(gl_ui *ui, size_t k);
/* Show the current step after `budget` rewrites (-1: all); replays on a job. */
unsigned gl_ui_set_budget(gl_ui *ui, int64_t budget);
/* Show step `step` replayed to its k-th rewrite (k may be all of them), then, once the
 * replay is shown, record `decision` (-1: none) selected in the decisions view, the diff
 * view on top with rewrite k alone, and `status` as an error on the status line. */
unsigned gl_ui_land_on_rewrite(gl_ui *ui, size_t step, int64_t k, int64_t decision,
                               const char *status);
/* After a job: start the replay still wanted (keys pressed while it ran). */
unsigned gl_ui_resume(gl_ui *ui);
/* Switch to a view; `push` remembers the current one for Esc. */
unsigned gl_ui_show(gl_ui *ui, gl_view_kind kind, bool push);
gl_view *gl_ui_view(gl_ui *ui); /* the current view, rebuilt first if the graph changed */
/* Select node `id` of the shown graph (origin: its first provenance entry). */
unsigned gl_ui_select_node(gl_ui *ui, uint32_t id);
/* The detail view of node `id` of the shown graph, or of step `ghost_step` (>= 0) for
 * a node that is not in it. */
unsigned gl_ui_open_detail(gl_ui *ui, uint32_t id, int64_t ghost_step);
/* Find the nodes named in a decision in the shown graph (or follow them from the step
 * before) and show them in the nodes view, marked for n/N. */
unsigned gl_ui_goto_decision_nodes(gl_ui *ui, const gl_decision *d);
void gl_ui_set_status(gl_ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gl_ui_set_error(gl_ui *ui, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Show the node list with the first node matching `query` selected, as if typed after
 * `/` there: n/N go on, the status line counts ("/Conv: 1 of 17"). */
unsigned gl_ui_search_nodes(gl_ui *ui, const char *query);
/* Case-insensitive substring test (an empty pattern matches nothing). */
bool gl_ui_match(const char *text, const char *pattern);
/* A node matches search `query` (search.c: words that each name an op, domain or name
 * part, an attribute value "perm=0,2,3,1", an output shape "[1,64,56,56]" or a run of its
 * dims "64x56"; all must hold). */
bool gl_ui_node_matches(const gl_node *n, const char *query);

/* ---- list views (list_view.c): the rows, selection, find and click every list shares */

/* The next row (from `from`, inclusive or not, in direction dir, wrapping) for which
 * match(row, ctx) holds; -1 when none. */
int gl_ui_find_row(int n_rows, int from, int dir, bool inclusive,
                   bool (*match)(int row, void *ctx), void *ctx);
/* Keep v->selected within [0, n_rows) and visible in `height` rows. */
void gl_ui_clamp(gl_view *v, int n_rows, int height);
/* The common list moves (up/down/page/half page/top/bottom, h/L across long rows) on a
 * list of n_rows rows: redraw flags, or GL_REDRAW_NONE when `r` is not a move. */
unsigned gl_ui_list_move(gl_view *v, gl_request r, int n_rows);
/* A view's find: select the next row from v->selected that match(row, ctx) accepts;
 * false (selection unchanged) when none does. */
bool gl_ui_list_find(gl_view *v, int n_rows, int dir, bool inclusive,
                     bool (*match)(int row, void *ctx), void *ctx);
/* After a find selected `row`: which match it is of how many (v->match_at, match_count),
 * counting the rows match(row, ctx) accepts. */
void gl_ui_note_match(gl_view *v, int n_rows, int row, bool (*match)(int row, void *ctx),
                      void *ctx);
/* gl_ui_list_find for rows that are text: a row matches when text(row, ctx) contains
 * `pattern` (gl_ui_match). */
bool gl_ui_list_find_text(gl_view *v, int n_rows, const char *pattern, int dir, bool inclusive,
                          const char *(*text)(int row, void *ctx), void *ctx);
/* The width of a column that widens to its longest text (`longest` columns) as far as
 * `spare` columns allow, and never narrows below `base` (its width at 80 columns, which
 * cuts long texts with "…"). */
int gl_ui_column_width(int longest, int base, int spare);
/* h/L across a table's columns: from skip `at`, the next column start of `stops`
 * (ascending, the columns each column of the scrolled part starts at) in direction dir,
 * never past `most` (the skip that brings the end of the rows into sight; 0 when they
 * fit); to the left the previous start, or 0. The skip to draw with. */
int gl_ui_pan_stop(const int *stops, int n_stops, int at, int dir, int most);
/* A click on screen row `row` of a list whose first header_rows rows are headings:
 * select the row under it (GL_REDRAW_VIEW), or GL_REDRAW_NONE off the rows. */
unsigned gl_ui_list_click(gl_view *v, int n_rows, int header_rows, int row);
/* A list view's footer, its last lines: "7/52 " and the selected row in full (as the
 * run, memory and tensor views end), so that a name cut in its column or scrolled away
 * by h/L is still read; wrapped onto up to 3 lines in a view of 12 lines or more, and
 * "(no rows)" when none is selected or row_text is NULL. Made first (the rows get the
 * height - lines left), drawn last at the bottom of the view. */
typedef struct gl_ui_footer {
    char text[4096]; /* a row's full text holds names of up to 1 KB and more */
    int lines;
} gl_ui_footer;
void gl_ui_footer_make(gl_ui_footer *f, const gl_ui *ui, const gl_view *v, int n_rows,
                       const char *row_text, int height, int width);
void gl_ui_footer_draw(const gl_ui_footer *f, gl_ui *ui, int top, int left, int height,
                       int width);

/* The short name of a pass in the bar ("constant-folding" -> "fold"). */
const char *gl_ui_pass_short(const char *pass);
/* "./graphlab-export/<stem>": the model file's name without ".onnx"; a file named
 * model.onnx takes its folder's name instead ("conv_nhwc"). */
void gl_ui_export_dir(const char *model_path, char *buf, size_t len);

/* ---- node history (history.c) ------------------------------------------------------ */

/* What happened to node `id` along the pipeline: one entry per step that created,
 * changed, replaced or removed it (the first entry "loaded from the file" when no step
 * created it), read from the step diffs and the decision logs. *out malloc'd. */
typedef struct gl_history_entry {
    size_t step;
    gl_change_kind kind;    /* ADDED: created; REPLACED: created replacing others, or
                             * (gone) replaced by others; MODIFIED; REMOVED */
    bool gone;              /* the node stops existing at this step */
    int64_t decision;       /* -1 when unknown */
    char text[256];         /* "created (#5 fold), replacing Add 'a'", "changed: attr
                             * perm, input 0", "removed (#4 cancel)" (the step's
                             * label names the pass) */
} gl_history_entry;
size_t gl_ui_node_history(const gl_ui *ui, uint32_t id, gl_history_entry **out);

/* Which of records d[0..n) involve a node: name one of `names` (as d->nodes lists them)
 * or have one of the ids `ids`. Their indices, in order, into out (room for n); the
 * count. */
size_t gl_decisions_involving(const gl_decision *d, size_t n, const char *const *names,
                              size_t n_names, const int64_t *ids, size_t n_ids, size_t *out);
/* Every record of the pipeline, applied, refused or note, that involved node `id` (ids
 * survive snapshot clones and are never reused): at each step, under the names the node
 * had before and after it, plus the records that made or changed it (its history, its
 * provenance). Indices into the pipeline's log, in order; *out malloc'd. */
size_t gl_ui_node_decisions(const gl_ui *ui, uint32_t id, size_t **out);
/* Show record `id` of the pipeline's log at its step, selected in the decisions view. */
unsigned gl_ui_goto_decision(gl_ui *ui, int64_t id);
/* The diff the diff view shows: inside a pass the rewrite alone (rewrite_diff) unless D
 * asked for the whole step so far; else `diff`. */
const gl_diff *gl_ui_shown_diff(const gl_ui *ui);

/* ---- the pipeline bar (bar.c) ------------------------------------------------------ */

typedef struct gl_bar_item {
    char text[64]; /* "fold 186*" */
    bool current;
} gl_bar_item;

/* Items for the current pipeline: "load 374", "fold 186*" (changed), the current one
 * "fold 12/188 rewrites" while a budget is active. *items malloc'd. */
size_t gl_bar_items(const gl_ui *ui, gl_bar_item **items);
/* The bar text in at most `width` columns: items joined by " → ", elided around the
 * current one with "…" when too wide (ASCII "->" and "..." without UTF-8). The current
 * item's columns are returned in *cur_col / *cur_len. Returns the columns used. */
int gl_bar_format(const gl_bar_item *items, size_t n, int width, bool utf8, char *buf,
                  size_t len, int *cur_col, int *cur_len);
/* Which item is at column `col` of the text gl_bar_format made (-1: none). */
int gl_bar_item_at(const gl_bar_item *items, size_t n, int width, bool utf8, int col);

/* ---- keys (keys.c) ----------------------------------------------------------------- */

/* A key name of keys.def ("Right", "PgDn", "Enter", "Esc", "Tab", "Space", "C-c", "]")
 * as a curses key code; -1 when unknown. */
int gl_key_parse(const char *name);
/* The request bound to key `key` (GL_REQ_COUNT: none). */
gl_request gl_key_request(int key);
/* The key names of a request as written in keys.def. */
const char *gl_request_keys(gl_request r);
const char *gl_request_help(gl_request r);
/* The key names of a request as the help screen and the manual page write them: arrows
 * drawn as such when `utf8`, a run of digits as "0-9". */
void gl_request_key_column(gl_request r, bool utf8, char *out, size_t len);
/* The help screen, one line per request, generated from the table: *lines malloc'd
 * (each line malloc'd); gl_free_lines frees them. */
size_t gl_keys_help_lines(char ***lines, bool utf8);
/* The lines under the keys on the help screen (the prompt, the mouse, background work),
 * as written there: indented, wrapped, the first one empty. */
const char *const *gl_keys_help_notes(size_t *n);
/* The marks the views draw and what they mean, one line each, from marks.def. */
size_t gl_marks_help_lines(char ***lines, bool utf8);
void gl_free_lines(char **lines, size_t n);

/* ---- jobs (app.c) ------------------------------------------------------------------ */

typedef struct gl_job_spec {
    const char *what;                      /* "replaying constant-folding" */
    void (*run)(void *arg, gl_job *job);   /* worker thread: no curses, no ui state */
    /* Main thread, when the job is done and still wanted: take the result, free arg. */
    unsigned (*finish)(gl_ui *ui, void *arg);
    /* Cancelled (Ctrl-C) or unwanted: free arg and its result; any thread. */
    void (*discard)(void *arg);
} gl_job_spec;

/* Start a job (false with a status message when another job is running). Objects the
 * job reads that the ui might replace meanwhile (the replayed model, its diff) are
 * kept alive until no job runs. */
bool gl_ui_start_job(gl_ui *ui, const gl_job_spec *spec, void *arg);
/* From run(): a progress text for the status line ("diff 3/12"); nothing when job is NULL
 * (the same work done outside a job). */
void gl_job_progress(gl_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* From run(): true once the user cancelled (a loop may stop early); false for NULL. */
bool gl_job_cancelled(const gl_job *job);
/* The spec of the job the ui waits for (NULL: none). */
const gl_job_spec *gl_ui_job_spec(const gl_ui *ui);
/* Stop waiting for the current job (Ctrl-C): it finishes in the background and its
 * result is discarded. */
unsigned gl_ui_cancel_job(gl_ui *ui);
/* Free now, or when no job runs any more (a job may still read it). */
void gl_ui_defer_free_model(gl_ui *ui, gl_model *m);
void gl_ui_defer_free_diff(gl_ui *ui, gl_diff *d);

/* From run(): every step of p diffed against the one before ([0] NULL; stops early
 * when cancelled), as the ui keeps them (step_diffs). */
gl_diff **gl_ui_job_step_diffs(const gl_pipeline *p, gl_job *job);
/* Free a job's pipeline and its step diffs (either may be NULL). */
void gl_ui_free_step_diffs(gl_pipeline *p, gl_diff **diffs);
/* The index of every step after 0 (gl_graph_index_build), [0] left empty, for
 * gl_ui_adopt_steps; job may be NULL (not in a job). */
gl_graph_index *gl_ui_job_step_indexes(const gl_pipeline *p, gl_job *job);
void gl_ui_free_step_indexes(gl_graph_index *indexes, size_t n);
/* Free a pipeline now, or when no job runs any more (what-if replaces the ui's). */
void gl_ui_defer_free_pipeline(gl_ui *ui, gl_pipeline *p);

/* ---- bisect and what-if (whatif.c) ------------------------------------------------- */

/* `b`: bisect the rewrites of steps 1..current on a job (driver/bisect.h, seeded random
 * inputs, the reference backend); it ends on the first one that changes the outputs,
 * rewrite K of its step: the step replayed to PASS:K, the diff view showing that rewrite
 * alone, its record selected in the decisions view, what differs on the status line. */
unsigned gl_ui_bisect(gl_ui *ui);
/* `x` on decision d: run the pipeline again from the loaded model with d vetoed (d
 * applied) or its veto lifted (d vetoed), on a job; the new pipeline replaces the shown
 * one (gl_ui_replace_pipeline) at d's step, and the status line compares node counts. */
unsigned gl_ui_veto(gl_ui *ui, const gl_decision *d);
/* Show pipeline p (and its step diffs, NULL: computed) instead of the current one at
 * step k; the old one is freed when no job reads it. */
void gl_ui_replace_pipeline(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs, size_t k);
/* Whether a key typed now must wait (app.c holds it, then hands it to gl_ui_key): before
 * the first screen, every key but q and C-c; while the passes run behind step 0, a key
 * that needs them (], the decisions, a run, an export: anything but moving through and
 * searching the node list, help and q), and every key typed after one that waits
 * (n_waiting of them), so that keys keep their order. C-c never waits: it stops waiting. */
bool gl_ui_key_waits(const gl_ui *ui, int key, size_t n_waiting);
/* The passes ended behind the first screen: pipeline p (with its step diffs and the
 * indexes of its steps after 0, both owned from now, step_index may be NULL) takes the place of the step-0-only one shown, which must be a load of the same
 * file. The shown model stays step 0, so the rows, the selection and the views stay. */
void gl_ui_adopt_steps(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs,
                       gl_graph_index *step_index);
/* X: show the other branch instead (the shown one becomes the other), at the same step
 * and, inside a pass, the same number of rewrites; the selection follows its node. */
unsigned gl_ui_swap_branch(gl_ui *ui);
/* The other branch's graph at step k (NULL: no branch, or it has no step k). */
const gl_graph *gl_ui_branch_graph(const gl_ui *ui, size_t k);
/* What sets a branch apart, from its pipeline's vetoes and forces: "#3 vetoed",
 * "#3 vetoed, #7 forced", or "as run" when it has neither. */
void gl_ui_branch_label(const gl_pipeline *p, char *buf, size_t len);
/* The bar's branch part, "[#3 vetoed | X: as run, 10 nodes] " (the other branch's label
 * and node count at the shown step), "" without another branch; returns its columns. */
int gl_bar_branch(const gl_ui *ui, bool utf8, char *buf, size_t len);
/* Select the record with id `id` in the decisions view (lifting the refused-only filter
 * when it hides it); false when the shown step has no such record. */
bool gl_ui_decisions_select(gl_ui *ui, int64_t id);

/* ---- runs (run.c) ------------------------------------------------------------------- */

/* `r`: run the shown step (not a replay) on a job and show the run view; with a what-if's
 * other branch, its model at the same step too, on the same inputs (gl_run_branch). */
unsigned gl_ui_run(gl_ui *ui);
/* The run of the shown step, or NULL (none yet, another step, a replay shown). */
const gl_run *gl_ui_run_shown(const gl_ui *ui);
void gl_run_free(gl_run *r);
/* A row's median on backend b: a group's on a run where its members ran apart, their
 * sum; < 0 when it did not run there. */
double gl_run_row_ms(const gl_profile *p, size_t row, size_t b);
/* "fusion lost 20.2 ms in 1 group (#16)" for the groups of run r slower fused than their
 * members beyond noise (marked < in the run view); false, buf empty, when none. */
bool gl_run_lost_text(const gl_run *r, char *buf, size_t len);
/* The rows of the run view in order: the model's own rows sorted by `key` (time on
 * backend b, longest first; name; plan order, which is topological; row_error, largest
 * first, NAN last: GL_RUN_BY_FLOAT, with row_error NULL plan order), each followed by
 * the rows under it (a group's members, bodies) in plan order. Ties keep plan order.
 * Returns the count written to order (p->n_rows entries at most). */
size_t gl_run_order(const gl_profile *p, size_t b, gl_run_sort key, const double *row_error,
                    size_t *order);
/* The order `s` goes to after `key`: GL_RUN_BY_FLOAT only when the run has a float run. */
gl_run_sort gl_run_next_sort(const gl_run *r, gl_run_sort key);
/* The run view's header line on a QDQ model: "float (the model without its Q/DQ pairs,
 * ref): 'h2' loses most, adds nmse 0.0209 (SNR 16.8 dB); first jump 'h2'"; "" without. */
void gl_run_float_text(const gl_run *r, char *buf, size_t len);
/* Node n's backend and implementation in the shown step's run ("dnnl brgconv:avx512"),
 * into buf; false when there is no such run or the node is not in it. */
bool gl_ui_run_backend(const gl_ui *ui, const gl_node *n, char *buf, size_t len);
/* A row's time there (the other branch's oneDNN run) when the run has a branch and the
 * row a match there; < 0 otherwise. */
double gl_run_there_ms(const gl_run *r, size_t row);
/* `p` in the run view: select the first node where the fused and reference runs part
 * ways, or say that none does and with what tolerance. */
unsigned gl_ui_run_divergence(gl_ui *ui);

/* What the tensor view says of a tensor's values (numeric dtypes; NaN and Inf counted
 * apart and left out of the others). */
enum { GL_HIST_BINS = 16 };
typedef struct gl_value_stats {
    int64_t count, finite, nan, inf;
    double min, max, mean, std;  /* over the finite values; 0 when none */
    size_t hist[GL_HIST_BINS];   /* finite values in equal bins over [min, max] */
} gl_value_stats;
void gl_value_stats_of(const gl_tensor *t, gl_value_stats *s);
/* One character per bin, its height the bin's count against the largest: ▁▂▃▄▅▆▇█
 * (ASCII "_.-=+*#@" without UTF-8), a blank for an empty bin. Writes a terminated
 * string into buf; returns the characters drawn. */
size_t gl_histogram_draw(const size_t *bins, size_t n, bool utf8, char *buf, size_t len);

/* The tensor view's slices: a tensor of rank > 2 shows one 2-D slice at a time, its
 * leading indices lead[0..rank-3] fixed ("[n, c, :, :]"). How many slices there are (1 for
 * rank <= 2); the flat index of a slice's first value; step lead to the next (dir > 0) or
 * previous slice, the last index fastest (false, lead unchanged, past either end); the
 * slice as text, "[0, 3, :, :]". */
int64_t gl_slice_count(const int64_t *dims, int rank);
int64_t gl_slice_first(const int64_t *dims, int rank, const int64_t *lead);
bool gl_slice_step(const int64_t *dims, int rank, int64_t *lead, int dir);
void gl_slice_text(const int64_t *dims, int rank, const int64_t *lead, char *buf, size_t len);


/* The same into `dir` (remembered as ui->export_dir), `eo` as export.h. */
struct gl_export_opts;
unsigned gl_ui_export_into(gl_ui *ui, bool all, const char *dir,
                           const struct gl_export_opts *eo);

/* ---- the "where to?" prompt of e, E and w (export_prompt.c) ------------------------ */

/* What the prompt writes. */
typedef enum gl_export_target {
    GL_EXPORT_TO_STEP,    /* e: the shown step's files */
    GL_EXPORT_TO_ALL,     /* E: every step, index.html, decisions.json */
    GL_EXPORT_TO_TENSORS, /* w: the tensor view's tensors as .pb */
} gl_export_target;

/* Into $GRAPHLAB_EXPORT_DIR when set, else a prompt for the folder (the last one used,
 * or the default, shown and editable; for E, Tab: with or without the .onnx files; Enter
 * writes, Esc cancels). */
unsigned gl_ui_export_ask(gl_ui *ui, gl_export_target what);
/* w's writing, into ui->export_dir (view_tensor.c). */
unsigned gl_ui_write_tensors(gl_ui *ui);
/* A key while the prompt is open. */
unsigned gl_ui_export_prompt_key(gl_ui *ui, int key);
/* The prompt as the status line shows it. */
void gl_ui_export_prompt_line(const gl_ui *ui, char *buf, size_t len);
unsigned gl_ui_open_svg(gl_ui *ui);

/* ---- drawing helpers (draw.c; main thread, inside draw functions only) ------------- */

/* Colour roles for this terminal (colours unless NO_COLOR) and ui->utf8 for gl_ui_put;
 * once, after curses starts. */
void gl_ui_draw_setup(gl_ui *ui);
/* Paint the pipeline bar (gl_bar_items) on row 0, the current step highlighted. */
void gl_ui_draw_bar(gl_ui *ui, int width);
/* The columns the bar's branch part takes (what-if, gl_bar_branch): at most half of it,
 * the steps keep the rest; its text into buf. */
int gl_ui_bar_branch_cols(const gl_ui *ui, int width, char *buf, size_t len);
int gl_ui_attr(const gl_ui *ui, gl_ui_role role);
/* Write `text` at (y, x) in at most `width` columns (UTF-8 aware; control characters
 * escaped as util/escape.h writes them); text that does not fit ends in "…" ("..."
 * without UTF-8). Returns the columns written. */
int gl_ui_put(int y, int x, int width, int attr, const char *text);
/* gl_ui_put with the first `skip` columns of the text scrolled out (h/L). */
int gl_ui_put_at(int y, int x, int width, int attr, const char *text, int skip);
/* What gl_ui_put_at draws, without a terminal: the columns of `text` from `skip` on, at
 * most `width` of them, escaped, the last cut to "…" (UTF-8) or "..." when more follows
 * (the text as is when the width is too small for the mark). Into buf (NUL-terminated,
 * cut at a character when len is short); returns the columns. */
int gl_ui_clip(const char *text, int skip, int width, bool utf8, char *buf, size_t len);
/* Fill the rest of a row from column x to x + width - 1 with blanks in `attr`. */
void gl_ui_fill(int y, int x, int width, int attr);
/* Columns of a UTF-8 string (one per code point). */
int gl_ui_text_width(const char *s);

/* What the command line gives the workbench: graphlab [MODEL] [--data DIR]
 * [--set PASS.OPT=V]... (the strings point into argv). */
enum { GL_UI_MAX_SETTINGS = 64 };
typedef struct gl_ui_args {
    const char *model;
    const char *data_dir; /* --data: the run view's inputs (NULL: seeded random inputs) */
    /* --set, in order; applied after $GRAPHLAB_SET's (which stays for scripts), so that
     * for the same option the flag wins, as the last --set does on a command's line */
    const char *settings[GL_UI_MAX_SETTINGS];
    size_t n_settings;
} gl_ui_args;

/* $GRAPHLAB_SET read whole, it and every --set valid, $GRAPHLAB_EXPORT_DIR no longer
 * than the workbench keeps: 0, or 2 with one line on stderr naming the variable or the
 * flag. Checked when the workbench starts, with or without a terminal. */
int gl_ui_check_args(const gl_ui_args *a);

/* Run the workbench; returns the process exit code (0, or 2 with the error printed
 * after the terminal is restored). */
int gl_ui_main(const gl_ui_args *a);

#endif
