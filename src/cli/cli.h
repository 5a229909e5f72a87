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

/* Print the pending error message as one stderr line; return the exit code for `st`. */
int gl_cli_fail(gl_status st);
/* Print "graphlab CMD: message" and the command's usage; return GL_EXIT_BAD. */
int gl_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print the whole help (commands and passes) to `f`. */
void gl_cli_print_help(FILE *f);

struct gl_settings;
/* Load a model for a command: `--set load.freeze-inputs=1` applies (settings may be
 * NULL), and a cyclic graph is refused. */
gl_status gl_cli_load(const char *path, const struct gl_settings *settings, gl_model **out);

/* "12.3 KB", "4.0 MB" */
void gl_format_bytes(double bytes, char *buf, size_t len);

#endif
