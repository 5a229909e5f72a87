/* args.c — the subcommand table and the helpers every subcommand shares. */
#include "cli/cli.h"

#include "util/escape.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const gl_command *const command_table[] = {
    &gl_command_info,   &gl_command_optimize, &gl_command_export,      &gl_command_run,
    &gl_command_profile, &gl_command_bisect,  &gl_command_conformance,
};

const gl_command *const *gl_command_table(size_t *count)
{
    *count = GL_ARRAY_LEN(command_table);
    return command_table;
}

const gl_command *gl_command_find(const char *name)
{
    for (size_t i = 0; i < GL_ARRAY_LEN(command_table); i++)
        if (strcmp(command_table[i]->name, name) == 0)
            return command_table[i];
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
        fprintf(stderr, "\nusage: graphlab %s [OPTIONS] %s (graphlab %s --help: the "
                "options)\n", c->name, c->operands, c->name);
    else
        fputc('\n', stderr);
    return GL_EXIT_BAD;
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
enum { OWN_CODE = 0x1000, SHARED_CODE = 0x2000, VERSION_CODE = 0x3000, MAX_OPTIONS = 64 };

/* One option getopt_long returned; GL_EXIT_OK to go on. */
static int dispatch(const gl_cli_spec *spec, int c, char **argv, gl_session_opts *o)
{
    const gl_command *cmd = spec->cmd;
    size_t n_shared;
    const gl_session_option *shared = gl_session_option_table(&n_shared);
    if (c >= SHARED_CODE && (size_t)(c - SHARED_CODE) < n_shared) {
        if (gl_session_option_set(o, shared[c - SHARED_CODE].name, optarg) != GL_OK)
            return gl_cli_usage_error(cmd->name, "%s", gl_error_message());
        return GL_EXIT_OK;
    }
    for (size_t i = 0; i < cmd->n_own; i++)
        if (c == OWN_CODE + (int)i || (cmd->own[i].short_name && c == cmd->own[i].short_name))
            return spec->on_option(spec->ctx, i, cmd->own[i].has_value ? optarg : NULL);
    if (c == 'h') {
        gl_cli_print_command_help(cmd, stdout);
        return -1;
    }
    if (c == VERSION_CODE) {
        gl_cli_print_version(stdout);
        return -1;
    }
    return bad_option(cmd->name, c, argv);
}

int gl_cli_parse(const gl_cli_spec *spec, int argc, char **argv, gl_session_opts *o,
                 int *first)
{
    const gl_command *cmd = spec->cmd;
    struct option longs[MAX_OPTIONS];
    char shorts[2 * MAX_OPTIONS + 2] = "h";
    size_t n = 0, ns = 1, n_shared;
    const gl_session_option *shared = gl_session_option_table(&n_shared);
    if (cmd->n_own + n_shared + 3 > MAX_OPTIONS)
        return gl_cli_fail(gl_fail(GL_ERR_INTERNAL, "%s: too many options", cmd->name));
    for (size_t i = 0; i < cmd->n_own; i++) {
        const gl_cli_option *x = &cmd->own[i];
        longs[n++] = (struct option){x->name, x->has_value ? required_argument : no_argument,
                                     NULL, x->short_name ? x->short_name : OWN_CODE + (int)i};
        if (x->short_name) {
            shorts[ns++] = x->short_name;
            if (x->has_value)
                shorts[ns++] = ':';
        }
    }
    for (size_t i = 0; i < n_shared; i++)
        if (cmd->shared & shared[i].bit)
            longs[n++] = (struct option){shared[i].name,
                                         shared[i].has_value ? required_argument : no_argument,
                                         NULL, SHARED_CODE + (int)i};
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n++] = (struct option){"version", no_argument, NULL, VERSION_CODE};
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
        return gl_cli_usage_error(cmd->name, "expected one %s", cmd->operands);
    if (spec->model)
        *spec->model = argv[optind];
    return GL_EXIT_OK;
}
