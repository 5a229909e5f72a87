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
    unsigned generation; /* ui->generation it was opened for */
};

typedef enum gl_view_kind {
    GL_VIEW_NODES,
    GL_VIEW_DETAIL,
    GL_VIEW_DIFF,
    GL_VIEW_DECISIONS,
    GL_VIEW_GRAPH,
    GL_VIEW_HELP,
    GL_VIEW_MEMORY,
    GL_VIEW_COUNT
} gl_view_kind;

extern const gl_view_ops gl_view_nodes_ops;
extern const gl_view_ops gl_view_detail_ops;
extern const gl_view_ops gl_view_diff_ops;
extern const gl_view_ops gl_view_decisions_ops;
extern const gl_view_ops gl_view_graph_ops; /* view_graph.c */
extern const gl_view_ops gl_view_help_ops;  /* keys.c */
extern const gl_view_ops gl_view_memory_ops; /* view_memory.c */

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
} gl_graph_index;

void gl_graph_index_build(gl_graph_index *ix, const gl_graph *g);
void gl_graph_index_free(gl_graph_index *ix);
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

struct gl_ui {
    const char *model_path;
    gl_pipeline *pipeline;    /* every step kept; NULL while loading */
    gl_diff **step_diffs;     /* step_diffs[k]: step k against k-1 ([0] NULL); owned */
    size_t step;              /* current step */
    int64_t budget;           /* rewrites shown inside the current step (+/-); -1: all */
    gl_model *replayed;       /* the step replayed with `budget` (NULL: the step itself) */
    gl_decision_log replay_log;
    gl_diff *replay_diff;     /* replayed against step - 1 (owned) */
    gl_diff *diff;            /* what is shown against the previous step: step_diffs[step]
                               * or replay_diff (not owned) */
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
    void *runtime;            /* app.c's private part (threads, graveyard); NULL headless */
    char export_dir[1024];    /* ./graphlab-export/<model-name> */
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

/* Case-insensitive substring test (an empty pattern matches nothing). */
bool gl_ui_match(const char *text, const char *pattern);
/* A node matches a search by op type (with domain) or name. */
bool gl_ui_node_matches(const gl_node *n, const char *pattern);
/* The next row (from `from`, inclusive or not, in direction dir, wrapping) for which
 * match(row, ctx) holds; -1 when none. */
int gl_ui_find_row(int n_rows, int from, int dir, bool inclusive,
                   bool (*match)(int row, void *ctx), void *ctx);
/* Keep v->selected within [0, n_rows) and visible in `height` rows. */
void gl_ui_clamp(gl_view *v, int n_rows, int height);
/* The common list moves (up/down/page/top/bottom) on a list of n_rows rows: redraw
 * flags, or GL_REDRAW_NONE when `r` is not a move. */
unsigned gl_ui_list_move(gl_view *v, gl_request r, int n_rows);
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
/* The help screen, one line per request, generated from the table: *lines malloc'd
 * (each line malloc'd); gl_free_lines frees them. */
size_t gl_keys_help_lines(char ***lines, bool utf8);
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
/* From run(): a progress text for the status line ("diff 3/12"). */
void gl_job_progress(gl_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* From run(): true once the user cancelled (a loop may stop early). */
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
/* Free a pipeline now, or when no job runs any more (what-if replaces the ui's). */
void gl_ui_defer_free_pipeline(gl_ui *ui, gl_pipeline *p);

/* ---- bisect and what-if (whatif.c) ------------------------------------------------- */

/* `b`: bisect the rewrites of steps 1..current on a job (driver/bisect.h, seeded random
 * inputs, the reference backend); it ends on the step of the first one that changes the
 * outputs, its record selected in the decisions view, what differs on the status line. */
unsigned gl_ui_bisect(gl_ui *ui);
/* `x` on decision d: run the pipeline again from the loaded model with d vetoed (d
 * applied) or its veto lifted (d vetoed), on a job; the new pipeline replaces the shown
 * one (gl_ui_replace_pipeline) at d's step, and the status line compares node counts. */
unsigned gl_ui_veto(gl_ui *ui, const gl_decision *d);
/* Show pipeline p (and its step diffs, NULL: computed) instead of the current one at
 * step k; the old one is freed when no job reads it. */
void gl_ui_replace_pipeline(gl_ui *ui, gl_pipeline *p, gl_diff **step_diffs, size_t k);
/* Select the record with id `id` in the decisions view (lifting the refused-only filter
 * when it hides it); false when the shown step has no such record. */
bool gl_ui_decisions_select(gl_ui *ui, int64_t id);

/* Export the shown step / every step into ui->export_dir, open the step's SVG. */
unsigned gl_ui_export(gl_ui *ui, bool all);
unsigned gl_ui_open_svg(gl_ui *ui);

/* ---- drawing helpers (app.c; main thread, inside draw functions only) -------------- */

int gl_ui_attr(const gl_ui *ui, gl_ui_role role);
/* Write `text` at (y, x) in at most `width` columns (UTF-8 aware; control characters
 * shown as '?'); returns the columns written. */
int gl_ui_put(int y, int x, int width, int attr, const char *text);
/* Fill the rest of a row from column x to x + width - 1 with blanks in `attr`. */
void gl_ui_fill(int y, int x, int width, int attr);
/* Columns of a UTF-8 string (one per code point). */
int gl_ui_text_width(const char *s);

/* Run the workbench on a model; returns the process exit code (0, or 2 with the error
 * printed after the terminal is restored). */
int gl_ui_main(const char *model_path);

#endif
