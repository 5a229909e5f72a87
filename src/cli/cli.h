/* cli.h — the command line: one table of subcommands, shared helpers.
 *
 * Exit status (DESIGN.md contract): 0 success; 1 a comparison or a test case failed;
 * 2 bad usage or bad input, with one line on stderr naming the file, node and value.
 */
#ifndef GL_CLI_H
#define GL_CLI_H

#include "ir/graph.h"

#include <stdbool.h>
#include <stdio.h>

enum { GL_EXIT_OK = 0, GL_EXIT_MISMATCH = 1, GL_EXIT_BAD = 2 };

typedef struct gl_command {
    const char *name;
    const char *usage;   /* arguments after the name */
    const char *summary; /* one line */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} gl_command;

const gl_command *gl_command_find(const char *name);
const gl_command *gl_command_table(size_t *count);

int gl_cmd_info(int argc, char **argv);
int gl_cmd_optimize(int argc, char **argv);
int gl_cmd_export(int argc, char **argv);
int gl_cmd_run(int argc, char **argv);
int gl_cmd_profile(int argc, char **argv);
int gl_cmd_conformance(int argc, char **argv);

/* Print the pending error message as one stderr line; return the exit code for `st`. */
int gl_cli_fail(gl_status st);
/* Print "graphlab CMD: message" and the command's usage; return GL_EXIT_BAD. */
int gl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the whole help (commands and passes) to `f`. */
void gl_cli_print_help(FILE *f);

struct gl_settings;
struct gl_pass_step;
/* Load a model for a command: `--set load.freeze-inputs=1` applies (settings may be
 * NULL), and a cyclic graph is refused. */
gl_status gl_cli_load(const char *path, const struct gl_settings *settings, gl_model **out);

/* ---- what every pipeline command (optimize, export, run) takes ----------------------
 * Their getopt_long tables (opterr = 0) end with GL_CLI_COMMON_OPTIONS and number their
 * own long-only options from GL_OPT_OWN; their switch hands every other value of getopt
 * to gl_cli_common_option. */
enum { GL_OPT_PASSES = 256, GL_OPT_SET, GL_OPT_OWN };
#define GL_CLI_COMMON_OPTIONS                                                              \
    {"passes", required_argument, NULL, GL_OPT_PASSES},                                   \
    {"set", required_argument, NULL, GL_OPT_SET}, {"help", no_argument, NULL, 'h'}
/* --passes LIST into *passes, --set PASS.OPT=V into settings, --help printed (-1: the
 * command is done); anything else getopt_long returned (an unknown option, one missing
 * its value) is a usage error of `cmd` naming it. GL_EXIT_OK to go on. */
int gl_cli_common_option(const char *cmd, int c, char **argv, const char **passes,
                         struct gl_settings *settings);
/* The --passes list as a plan (*steps malloc'd): GL_EXIT_OK, or a usage error of `cmd`. */
int gl_cli_pass_list(const char *cmd, const char *list, struct gl_pass_step **steps,
                     size_t *n_steps);

/* What run and profile execute: MODEL loaded (gl_cli_load) and the --passes list run. */
typedef struct gl_cli_model {
    struct gl_pipeline *pipeline; /* when passes ran (owns the model), else NULL */
    gl_model *loaded;             /* when none ran, else NULL */
    const gl_model *model;        /* the one to execute */
} gl_cli_model;
/* GL_EXIT_OK, or the exit code after saying why (a bad list is a usage error of `cmd`). */
int gl_cli_model_open(const char *cmd, const char *path, const char *passes,
                      const struct gl_settings *settings, gl_cli_model *out);
void gl_cli_model_close(gl_cli_model *cm);

/* ---- option values shared by run and profile ---------------------------------------- */
struct gl_dim_value;
/* A finite number >= 0 (--rtol, --atol). */
bool gl_cli_parse_tolerance(const char *s, double *out);
/* A whole decimal number in [lo, hi]. */
bool gl_cli_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* BYTES, or a count of K, M or G (binary: 1K = 1024), at least 1 (--max-memory). */
bool gl_cli_parse_bytes(const char *s, size_t *out);
/* NAME=V with V >= 0, appended to *dims (a GL_GROW array; the name is malloc'd). */
bool gl_cli_parse_dim(const char *s, struct gl_dim_value **dims, size_t *n, size_t *cap);

/* Make sure `dir` exists as a folder (created when absent), for commands that write
 * files into it. */
gl_status gl_cli_make_dir(const char *dir);

/* ---- export (export.c), shared with the workbench's e / E keys ----------------------- */
struct gl_pipeline;
/* DIR/LABEL.{diff.txt,dot,svg,onnx} for model `m`, diffed against and marked against
 * `before` (NULL: no step before, an empty diff). DIR must exist. */
gl_status gl_export_snapshot(const gl_model *m, const gl_model *before, const char *dir,
                             const char *label);
/* What `graphlab export` writes for a pipeline that kept its snapshots: every step,
 * DIR/decisions.json and DIR/index.html (`model` names the model in them). `progress`
 * (may be NULL) is called before each step; returning false stops the export with an
 * error. DIR must exist. */
gl_status gl_export_pipeline(const struct gl_pipeline *p, const char *model, const char *dir,
                             bool (*progress)(void *ctx, size_t step, size_t n_steps),
                             void *ctx);

/* "12.3 KB", "4.0 MB" */
void gl_format_bytes(double bytes, char *buf, size_t len);

#endif
