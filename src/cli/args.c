/* args.c — the subcommand table and the helpers every subcommand shares. */
#include "cli/cli.h"

#include "passes/pipeline.h"
#include "util/escape.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const gl_command command_table[] = {
    {"info", "[--json] MODEL",
     "IR version, opsets, producer, inputs/outputs, node count, op histogram, weights",
     gl_cmd_info},
    {"optimize", "MODEL -o OUT.onnx [--passes LIST] [--explain] [--json] [--set PASS.OPT=V]",
     "run passes and save the result (the input is never written)", gl_cmd_optimize},
    {"export", "MODEL -d DIR [--no-onnx] [--passes LIST] [--set PASS.OPT=V]",
     "every step as .dot/.svg/.onnx/.diff.txt (--no-onnx: without the .onnx), "
     "decisions.json and index.html", gl_cmd_export},
    {"run",
     "MODEL [--data DIR] [--passes LIST] [--backend ref|dnnl|fused|unfused] [--compare BACKEND "
     "[--intermediates [--all-tensors]]] [--save-tensors DIR [NAME...]] [--rtol X] [--atol Y] "
     "[--dim NAME=V] [--threads N] [--max-memory BYTES] [--max-iterations N] "
     "[--save-outputs DIR] [--set PASS.OPT=V] [--plan] [--unfused]",
     "execute; with --data compare with DIR/output_*.pb (exit 1 on a mismatch).\n"
     "              --intermediates compares every tensor of the two runs and names the first\n"
     "              node where they part ways; --save-tensors writes the NAMEd (or all)\n"
     "              tensors of the --backend run to DIR (the NAMEs: the arguments after\n"
     "              MODEL, which comes first). Both keep every tensor they need\n"
     "              until the end: all activations at once, for each run (so twice with\n"
     "              --intermediates), at most 1 GiB per run. fused, unfused (--passes with\n"
     "              fusion): dnnl on the model as optimized and on the model the same passes\n"
     "              make without fusion; compared, at the fused groups' boundaries, naming\n"
     "              the first group that parts ways. --unfused: every run on the model\n"
     "              the passes make without their fusion steps",
     gl_cmd_run},
    {"profile",
     "MODEL [--data DIR] [--passes LIST] [--backends ref,dnnl,fused,unfused] [--reps N] "
     "[--warmup N] [--threads N] [--layout auto|plain|nhwc|blocked] [--trace FILE.json] "
     "[--json] [--rtol X] [--atol Y] [--dim NAME=V] [--max-memory BYTES] [--set PASS.OPT=V]",
     "per-node times on each backend side by side, compared with the reference\n"
     "              (exit 1 when outputs differ); --trace in ONNX Runtime's profile\n"
     "              format. fused: dnnl on the model\n"
     "              --passes makes; unfused: dnnl on the model the same passes make without\n"
     "              fusion (a fused group's row: its members under it, their unfused sum\n"
     "              beside its fused time); the default with a fusion step in --passes:\n"
     "              ref,unfused,fused, else ref,dnnl", gl_cmd_profile},
    {"bisect",
     "MODEL [--data DIR] [--passes LIST] [--rtol X] [--atol Y] [--dim NAME=V] "
     "[--max-memory BYTES] [--set PASS.OPT=V]",
     "the first rewrite after which the outputs differ from the input model's (reference\n"
     "              backend, same inputs; binary search over PASS:K replays): its decision,\n"
     "              or \"no rewrite changes the outputs\"; exit 0 none, 1 found, 2 error",
     gl_cmd_bisect},
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
    const char *const *all = gl_pass_default_pipeline(&n);
    fputs("  all:", f);
    for (size_t i = 0, col = 6; i < n; i++) {
        size_t w = strlen(all[i]) + 2;
        if (col + w > 90) {
            fputs("\n      ", f);
            col = 6;
        }
        fprintf(f, " %s%s", all[i], i + 1 < n ? "," : "\n");
        col += w;
    }
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

/* getopt_long's codes: own options from OWN_CODE (or their short name), shared ones from
 * SHARED_CODE, both past any character. */
enum { OWN_CODE = 0x1000, SHARED_CODE = 0x2000, MAX_OPTIONS = 64 };

/* One option getopt_long returned; GL_EXIT_OK to go on. */
static int dispatch(const gl_cli_spec *spec, int c, char **argv, gl_session_opts *o)
{
    size_t n_shared;
    const gl_session_option *shared = gl_session_option_table(&n_shared);
    if (c >= SHARED_CODE && (size_t)(c - SHARED_CODE) < n_shared) {
        if (gl_session_option_set(o, shared[c - SHARED_CODE].name, optarg) != GL_OK)
            return gl_cli_usage_error(spec->cmd, "%s", gl_error_message());
        return GL_EXIT_OK;
    }
    for (size_t i = 0; i < spec->n_own; i++)
        if (c == OWN_CODE + (int)i || (spec->own[i].short_name && c == spec->own[i].short_name))
            return spec->on_option(spec->ctx, i, spec->own[i].has_value ? optarg : NULL);
    if (c == 'h') {
        gl_cli_print_help(stdout);
        return -1;
    }
    return bad_option(spec->cmd, c, argv);
}

int gl_cli_parse(const gl_cli_spec *spec, int argc, char **argv, gl_session_opts *o,
                 int *first)
{
    struct option longs[MAX_OPTIONS];
    char shorts[2 * MAX_OPTIONS + 2] = "h";
    size_t n = 0, ns = 1, n_shared;
    const gl_session_option *shared = gl_session_option_table(&n_shared);
    if (spec->n_own + n_shared + 2 > MAX_OPTIONS)
        return gl_cli_fail(gl_fail(GL_ERR_INTERNAL, "%s: too many options", spec->cmd));
    for (size_t i = 0; i < spec->n_own; i++) {
        const gl_cli_option *x = &spec->own[i];
        longs[n++] = (struct option){x->name, x->has_value ? required_argument : no_argument,
                                     NULL, x->short_name ? x->short_name : OWN_CODE + (int)i};
        if (x->short_name) {
            shorts[ns++] = x->short_name;
            if (x->has_value)
                shorts[ns++] = ':';
        }
    }
    for (size_t i = 0; i < n_shared; i++)
        if (spec->shared & shared[i].bit)
            longs[n++] = (struct option){shared[i].name,
                                         shared[i].has_value ? required_argument : no_argument,
                                         NULL, SHARED_CODE + (int)i};
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        int rc = dispatch(spec, c, argv, o);
        if (rc != GL_EXIT_OK)
            return rc;
    }
    *first = optind;
    if (spec->model && argc - optind != 1)
        return gl_cli_usage_error(spec->cmd, "expected one MODEL");
    if (spec->model)
        *spec->model = argv[optind];
    return GL_EXIT_OK;
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
