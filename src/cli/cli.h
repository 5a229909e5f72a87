/* cli.h — the command line: one table of subcommands, shared helpers.
 *
 * Exit status (DESIGN.md contract): 0 success; 1 a comparison or a test case failed;
 * 2 bad usage or bad input, with one line on stderr naming the file, node and value.
 */
#ifndef GL_CLI_H
#define GL_CLI_H

#include "driver/driver.h"
#include "driver/model_summary.h"
#include "util/bytes.h" /* gl_bytes_text */
#include "ir/graph.h"

#include <stdbool.h>
#include <stdio.h>

/* ---- commands and their options -----------------------------------------------------
 * A command is data: its operands, summary and options, one row in its own file; the
 * parser, COMMAND --help, graphlab --help and the man page (graphlab --man) all read
 * the same rows, so what the help says is what the parser takes. */
typedef struct gl_cli_option {
    const char *name; /* long name: "output" */
    char short_name;  /* 'o', or 0 for a long option only */
    bool has_value;
    const char *arg;  /* the value's name in help: "OUT.onnx" */
    const char *help; /* one line */
} gl_cli_option;

typedef struct gl_command {
    const char *name;
    const char *operands; /* "MODEL", "DIR" */
    const char *summary;  /* one line */
    const char *details;  /* paragraphs for COMMAND --help and the man page (may be NULL) */
    unsigned shared;      /* GL_SOPT_* the command takes */
    const gl_cli_option *own; /* the command's own options */
    size_t n_own;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} gl_command;

extern const gl_command gl_command_info, gl_command_optimize, gl_command_export,
    gl_command_run, gl_command_profile, gl_command_bisect, gl_command_conformance;

/* Every command, in the order help lists them. */
const gl_command *const *gl_command_table(size_t *count);
const gl_command *gl_command_find(const char *name);

int gl_cmd_info(int argc, char **argv);
int gl_cmd_optimize(int argc, char **argv);
int gl_cmd_export(int argc, char **argv);
int gl_cmd_run(int argc, char **argv);
int gl_cmd_profile(int argc, char **argv);
int gl_cmd_conformance(int argc, char **argv);
int gl_cmd_bisect(int argc, char **argv);

/* Print the pending error message as one stderr line; return the exit code for `st`. */
int gl_cli_fail(gl_status st);
/* Print "graphlab CMD: message" and the command's usage; return GL_EXIT_BAD. */
int gl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- help (help.c) ---------------------------------------------------------------------- */

/* The whole help: the commands with their synopses, the passes and their options;
 * `example` is the model `graphlab` opens without one. */
void gl_cli_print_help(FILE *f, const char *example);
/* One command's help: synopsis, what it does, every option with its line. */
void gl_cli_print_command_help(const gl_command *c, FILE *f);
/* A tagged paragraph of the manual page: the workbench's keys and their help, which the
 * ui layer owns and main.c hands over (cli and ui do not include each other). */
typedef struct gl_man_entry {
    const char *tag, *text;
} gl_man_entry;
/* The manual page graphlab.1, in roff (man(7)), from the same tables; `example` as for
 * gl_cli_print_help, where it is installed; KEYS lists `keys`, then `notes` (lines of
 * text, filled as one paragraph). */
void gl_cli_print_man(FILE *f, const char *example, const gl_man_entry *keys, size_t n_keys,
                      const char *const *notes, size_t n_notes);
/* "graphlab 0.1.0" and a newline. */
void gl_cli_print_version(FILE *f);

/* ---- arguments ----------------------------------------------------------------------
 * A command's options are its table (own, with on_option) and the shared ones it takes
 * (GL_SOPT_* bits, parsed by the driver into a gl_session_opts); gl_cli_parse runs
 * getopt_long over both, --help and --version, and turns every refusal into a usage
 * error. */
typedef struct gl_cli_spec {
    const gl_command *cmd;
    /* cmd->own[which] was given with `value` (NULL without one): GL_EXIT_OK, or an exit
     * code after saying why (gl_cli_usage_error). */
    int (*on_option)(void *ctx, size_t which, const char *value);
    void *ctx;
    /* Where the one operand, MODEL, goes (then another count is a usage error); NULL:
     * the command reads its operands from argv + *first. */
    const char **model;
} gl_cli_spec;

/* Parse argv (argv[0] is the command) into *o and through spec->on_option, then the
 * operands: GL_EXIT_OK with *first their index in argv, -1 after --help or --version
 * (done), else the exit code. */
int gl_cli_parse(const gl_cli_spec *spec, int argc, char **argv, gl_session_opts *o,
                 int *first);


#endif
