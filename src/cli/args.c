/* args.c — the subcommand table and the helpers every subcommand shares. */
#include "cli/cli.h"

#include "onnx/onnx_io.h"
#include "passes/pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gl_command command_table[] = {
    {"info", "[--json] MODEL",
     "IR version, opsets, producer, inputs/outputs, node count, op histogram, weights",
     gl_cmd_info},
    {"optimize", "MODEL -o OUT.onnx [--passes LIST] [--explain] [--json] [--set PASS.OPT=V]",
     "run passes and save the result (the input is never written)", gl_cmd_optimize},
    {"export", "MODEL -d DIR [--passes LIST] [--set PASS.OPT=V]",
     "every step as .dot/.svg/.onnx/.diff.txt, decisions.json and index.html", gl_cmd_export},
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

int gl_cli_fail(gl_status st)
{
    const char *msg = gl_error_message();
    fprintf(stderr, "graphlab: %s\n", *msg ? msg : gl_status_name(st));
    return GL_EXIT_BAD;
}

int gl_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "graphlab %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const gl_command *c = gl_command_find(cmd);
    if (c)
        fprintf(stderr, "\nusage: graphlab %s %s\n", c->name, c->usage);
    else
        fputc('\n', stderr);
    return GL_EXIT_BAD;
}

void gl_cli_print_help(FILE *f)
{
    fputs("usage: graphlab [MODEL]                 the workbench\n"
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
