/* args.c — the subcommand table and the helpers every subcommand shares. */
#include "cli/cli.h"

#include "onnx/onnx_io.h"
#include "passes/pipeline.h"
#include "util/escape.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const gl_command command_table[] = {
    {"info", "[--json] MODEL",
     "IR version, opsets, producer, inputs/outputs, node count, op histogram, weights",
     gl_cmd_info},
    {"optimize", "MODEL -o OUT.onnx [--passes LIST] [--explain] [--json] [--set PASS.OPT=V]",
     "run passes and save the result (the input is never written)", gl_cmd_optimize},
    {"export", "MODEL -d DIR [--passes LIST] [--set PASS.OPT=V]",
     "every step as .dot/.svg/.onnx/.diff.txt, decisions.json and index.html", gl_cmd_export},
    {"run",
     "MODEL [--data DIR] [--passes LIST] [--backend ref|dnnl] [--compare BACKEND] [--rtol X] "
     "[--atol Y] [--dim NAME=V] [--threads N] [--max-memory BYTES] [--max-iterations N] "
     "[--save-outputs DIR] [--set PASS.OPT=V] [--plan]",
     "execute; with --data compare with DIR/output_*.pb (exit 1 on a mismatch)", gl_cmd_run},
    {"conformance", "DIR [--filter REGEX] [--verbose]",
     "run ONNX node test cases; last line \"N passed, N failed, N skipped\"",
     gl_cmd_conformance},
};

const gl_command *gl_command_table(size_t *count)
{
    *count = GL_ARRAY_LEN(command_table);
    return command_table;
}

const gl_command *gl_command_find(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(command_table); i++)
        if (strcmp(command_table[i].name, name) == 0)
            return &command_table[i];
    return NULL;
}

/* Messages quote names from the model and the command line: escaped, they cannot drive
 * the terminal or add lines (an escape is at most 4 bytes per byte of the message). */
int gl_cli_fail(gl_status st)
{
    const char *msg = gl_error_message();
    char line[4 * 1024 + 1];
    gl_escape(line, sizeof(line), *msg ? msg : gl_status_name(st));
    fprintf(stderr, "graphlab: %s\n", line);
    return GL_EXIT_BAD;
}

int gl_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "graphlab %s: %s", cmd, gl_esc(msg));
    const gl_command *c = gl_command_find(cmd);
    if (c)
        fprintf(stderr, "\nusage: graphlab %s %s\n", c->name, c->usage);
    else
        fputc('\n', stderr);
    return GL_EXIT_BAD;
}

void gl_cli_print_help(FILE *f)
{
    fputs("usage: graphlab [MODEL]                 the workbench (no MODEL: a bundled example);\n"
          "                                        when stdin or stdout is not a terminal it\n"
          "                                        prints the model summary (as info) instead\n"
          "       graphlab COMMAND [ARGS]\n\ncommands:\n", f);
    for (size_t i = 0; i < GL_ARRAY_LEN(command_table); i++)
        fprintf(f, "  %-9s %s\n  %-9s   %s\n", command_table[i].name, command_table[i].usage,
                "", command_table[i].summary);
    size_t n;
    const gl_pass *passes = gl_pass_table(&n);
    fputs("\npasses (--passes all|none|NAME[:K],...; K = stop after K rewrites):\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-18s %s\n", passes[i].name, passes[i].summary);
    fputs("\nexit status: 0 ok, 1 a comparison failed, 2 bad usage or bad input\n", f);
}

/* What getopt_long returned instead of an option as a usage error naming it. */
static int bad_option(const char *cmd, int c, char **argv)
{
    if (c != '?')
        return gl_cli_usage_error(cmd, "bad arguments");
    /* optopt is the option's short name, or for a long option missing its value the
     * (non-character) code of its table entry: then only argv can name it. */
    if (optopt > 0 && optopt <= UCHAR_MAX)
        return gl_cli_usage_error(cmd, "option '-%c' needs a value or is unknown", optopt);
    if (optopt > UCHAR_MAX)
        return gl_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    return gl_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int gl_cli_common_option(const char *cmd, int c, char **argv, const char **passes,
                         gl_settings *settings)
{
    switch (c) {
    case GL_OPT_PASSES: *passes = optarg; return GL_EXIT_OK;
    case GL_OPT_SET:
        if (gl_settings_apply(settings, optarg) != GL_OK)
            return gl_cli_usage_error(cmd, "%s", gl_error_message());
        return GL_EXIT_OK;
    case 'h': gl_cli_print_help(stdout); return -1;
    default: return bad_option(cmd, c, argv);
    }
}

int gl_cli_pass_list(const char *cmd, const char *list, gl_pass_step **steps, size_t *n_steps)
{
    if (gl_pass_list_parse(list, steps, n_steps) != GL_OK)
        return gl_cli_usage_error(cmd, "%s", gl_error_message());
    return GL_EXIT_OK;
}

gl_status gl_cli_load(const char *path, const gl_settings *settings, gl_model **out)
{
    gl_load_options opts = {
        .freeze_inputs = gl_settings_lookup(settings, "load", "freeze-inputs", 0) != 0};
    gl_status st = gl_model_load(path, &opts, out);
    /* The loader accepts any order so that a bad order can be seen and sorted; a cycle
     * cannot be sorted or run, so every command refuses it here. */
    if (st == GL_OK && (st = gl_check_acyclic((*out)->graph)) != GL_OK) {
        gl_model_free(*out);
        *out = NULL;
    }
    return st;
}

gl_status gl_cli_make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            return GL_OK;
        return gl_fail(GL_ERR_IO, "%s: exists and is not a folder", dir);
    }
    return gl_fail(GL_ERR_IO, "%s: cannot create folder: %s", dir, strerror(errno));
}

void gl_format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    size_t u = 0;
    while (bytes >= 1024 && u + 1 < GL_ARRAY_LEN(units)) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
}
