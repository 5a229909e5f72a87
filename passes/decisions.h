/* decisions.h — what a pass decided, as data.
 *
 * Every rewrite a pass applies, and every one it considers and refuses, is one record:
 * {id, pass, rule, nodes, verdict, reason, numbers} — the shape of LLVM's optimization
 * remarks. The decisions view, `optimize --explain`, `decisions.json` and the tests all
 * read the same records.
 *
 * Ids are stable: the position of the record in the pipeline's log, so the same model
 * and options give the same ids, and a replay with a budget (PASS:K) numbers its records
 * as the full run did. A veto (`--set PASS.veto=ID`) keeps its id too: the vetoed
 * rewrite is still recorded at the same position (refused, reason "vetoed ..."), and
 * nothing before it changes, so `--set PASS.veto=ID` replays whatever ran before. What
 * comes after a veto may be numbered differently (the graph differs from there on): with
 * several vetoes each ID is read in the run that has the vetoes of smaller ids, which is
 * what adding them one at a time, smallest first, shows. The pipeline checks afterwards
 * that every vetoed id names a rewrite of that pass, and fails naming the id otherwise.
 */
#ifndef GL_DECISIONS_H
#define GL_DECISIONS_H

#include "ir/graph.h"
#include "util/json.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* APPLIED: a rewrite was made (counts against the PASS:K budget). REFUSED: one was
 * considered and not made, with the reason. NOTE: a fact the pass reports, such as a
 * summary; it changes nothing and costs no budget. */
#define GL_DECISION_NO_ID UINT32_MAX

typedef enum gl_verdict { GL_APPLIED, GL_REFUSED, GL_NOTE } gl_verdict;

typedef struct gl_decision_number {
    const char *key; /* "cost_in", "bytes", "rank": shared, never freed (decisions.c) */
    double value;
    char *text;  /* set instead of value for a textual fact ("perm" = "0,2,3,1"); owned */
} gl_decision_number;

typedef struct gl_decision {
    int64_t id;        /* position in the log */
    int step;          /* pipeline step (1 = first pass) */
    /* Shared by every record that says the same word, never freed (decisions.c). */
    const char *pass;  /* pass name */
    const char *rule;  /* "duplicate-node", "dead-node", "push-through-Relu" */
    gl_verdict verdict;
    /* A veto turned this rewrite into a refusal (--set PASS.veto=ID, or the same rewrite
     * again), or a force made this refusal an applied rewrite (--set PASS.force=ID). The
     * reason says so for a person; code asks these, never the reason's text. */
    bool vetoed, forced;
    char *reason;      /* one sentence a person can read */
    char **nodes;      /* names of the nodes involved, as they were before the rewrite */
    uint32_t *node_ids; /* their ids (gl_node.id), GL_DECISION_NO_ID where only the name is
                         * known: names may repeat in a model, ids do not */
    size_t n_nodes, cap_nodes;
    gl_decision_number *numbers;
    size_t n_numbers, cap_numbers;
} gl_decision;

typedef struct gl_decision_log {
    gl_decision *items;
    size_t n, cap;
    int64_t id_base; /* id of items[0]: a replay numbers its records as the full run did */
    /* Records numbered and counted, not kept (items stays NULL; gl_decision_log_add hands
     * out `spare`, without its reason): `optimize` without --explain or --json prints only
     * each step's count, and on the 100k-node ladder writing and freeing the memory
     * plan's 97k records was a tenth of the run (issue 23). */
    bool count_only;
    gl_decision spare;
} gl_decision_log;

void gl_decision_log_free(gl_decision_log *log);
/* Drop the records after the first n (a pass taking back a sweep it made in trial). */
void gl_decision_log_truncate(gl_decision_log *log, size_t n);
/* The record with this id (items[id - id_base]), or NULL when the log has none. */
gl_decision *gl_decision_log_at(const gl_decision_log *log, int64_t id);
/* Append a record (id = id_base + its position) with this reason (copied). The pointer is
 * valid until the next append. */
gl_decision *gl_decision_log_add(gl_decision_log *log, int step, const char *pass,
                                 const char *rule, gl_verdict v, const char *reason);
/* A node by name only (its id unknown: GL_DECISION_NO_ID). */
void gl_decision_add_node(gl_decision *d, const char *name);
/* A node by name and id: what every pass that holds the node should call. */
void gl_decision_add_node_ref(gl_decision *d, const gl_node *n);
void gl_decision_add_number(gl_decision *d, const char *key, double value);
void gl_decision_add_text(gl_decision *d, const char *key, const char *text);
/* Replace the reason (a forced refusal says what was done: gl_pass_forced_reason). */
void gl_decision_set_reason(gl_decision *d, const char *reason);
/* "  #12 cse duplicate-node APPLIED: Relu 'b' computes the same as 'a' [nodes: a, b]" */
void gl_decision_print(const gl_decision *d, FILE *f);
void gl_decision_json(const gl_decision *d, gl_json *j);
/* The value of number `key` (NAN when absent) / its text (NULL when absent). */
double gl_decision_number_value(const gl_decision *d, const char *key);
const char *gl_decision_number_text(const gl_decision *d, const char *key);
/* Release one record's contents (for scratch records). */
void gl_decision_clear(gl_decision *d);
const char *gl_verdict_name(gl_verdict v); /* "applied" / "refused" / "note" */

#endif
