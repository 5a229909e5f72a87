/* main.c — graphlab's entry point: a subcommand from the table in cli/args.c, or the
 * workbench on a model (the model summary when not on a terminal). */
#include "cli/cli.h"
#include "driver/driver.h"
#include "exec/omp_wait.h"
#include "ui/ui.h"
#include "util/escape.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bundled example: beside the program when it runs from an installed tree, staged
 * (make install DESTDIR=...) or not; then the configured data folder; then the source
 * tree (running from a build). */
static const char *default_model(void)
{
    static char staged[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    size_t bin = strlen(GL_BINDIR);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        size_t dir = slash ? (size_t)(slash - exe) : 0;
        /* exe is ROOT + bindir + "/graphlab": the data is at ROOT + pkgdatadir. */
        if (dir >= bin && strncmp(exe + dir - bin, GL_BINDIR, bin) == 0) {
            int n = snprintf(staged, sizeof(staged), "%.*s%s/%s", (int)(dir - bin), exe,
                             GL_PKGDATADIR, GL_DEFAULT_EXAMPLE);
            if (n > 0 && (size_t)n < sizeof(staged) && access(staged, R_OK) == 0)
                return staged;
        }
    }
    static const char *const candidates[] = {GL_PKGDATADIR "/" GL_DEFAULT_EXAMPLE,
                                             GL_SRCDIR "/" GL_DEFAULT_EXAMPLE};
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
        if (access(candidates[i], R_OK) == 0)
            return candidates[i];
    return candidates[0];
}

/* Is `arg`, which names no command, meant as a model? A file that exists, or a path
 * that looks like one: then "cannot open" says more than "unknown command". */
static bool looks_like_model(const char *arg)
{
    size_t len = strlen(arg);
    return access(arg, F_OK) == 0 || strchr(arg, '/') ||
           (len >= 5 && strcmp(arg + len - 5, ".onnx") == 0);
}

static int unknown_command(const char *arg)
{
    size_t n;
    const gl_command *const *cmds = gl_command_table(&n);
    fprintf(stderr, "graphlab: unknown command '%s' (commands:", gl_esc(arg));
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s%s", cmds[i]->name, i + 1 < n ? "," : "");
    fputs("; or a MODEL file; see graphlab --help)\n", stderr);
    return GL_EXIT_BAD;
}

/* The workbench's options, `[MODEL] [--data DIR] [--set PASS.OPT=V]...` (--data: the
 * inputs of its run view; --set: as every command takes it, applied after $GRAPHLAB_SET
 * so that the flag wins), in any order, as --NAME VALUE or --NAME=VALUE: taken out of
 * argv, which then reads as without them. Nothing is taken when argv[1] names a command
 * (its own parser reads them). Exits 2 when an option has no value. */
static const char *take_value(const char *name, int *argc, char **argv, int at)
{
    size_t len = strlen(name);
    const char *arg = argv[at];
    if (strncmp(arg, name, len) != 0 || (arg[len] != '\0' && arg[len] != '='))
        return NULL;
    int used = arg[len] == '=' ? 1 : 2;
    if (used == 2 && at + 1 >= *argc) {
        fprintf(stderr, "graphlab: %s needs %s (see graphlab --help)\n", name,
                strcmp(name, "--data") == 0 ? "a folder" : "a setting PASS.OPT=V");
        exit(GL_EXIT_BAD);
    }
    const char *value = used == 1 ? arg + len + 1 : argv[at + 1];
    for (int i = at; i + used <= *argc; i++) /* argv[argc] (NULL) moves too */
        argv[i] = argv[i + used];
    *argc -= used;
    return value;
}

static void take_workbench_options(int *argc, char **argv, gl_ui_args *ua)
{
    if (*argc < 2 || gl_command_find(argv[1]))
        return;
    for (int i = 1; i < *argc;) {
        const char *v;
        if ((v = take_value("--data", argc, argv, i)))
            ua->data_dir = v;
        else if ((v = take_value("--set", argc, argv, i))) {
            if (ua->n_settings == GL_UI_MAX_SETTINGS) {
                fprintf(stderr, "graphlab: --set: at most %d (see graphlab --help)\n",
                        GL_UI_MAX_SETTINGS);
                exit(GL_EXIT_BAD);
            }
            ua->settings[ua->n_settings++] = v;
        } else
            i++;
    }
}

/* Does this command line run graphs on oneDNN's threads? The commands that take --threads,
 * and the workbench (its run view; its options may come first); not help, version or the
 * man page. */
static bool runs_graphs(int argc, char **argv)
{
    if (argc < 2)
        return true;
    const gl_command *cmd = gl_command_find(argv[1]);
    if (cmd)
        return cmd->shared & GL_SOPT_THREADS;
    static const char *const not_runs[] = {"-h", "--help", "help", "--version", "version",
                                           "--man"};
    for (size_t i = 0; i < GL_ARRAY_LEN(not_runs); i++)
        if (!strcmp(argv[1], not_runs[i]))
            return false;
    return true;
}

/* graphlab --man: the page from cli's tables, with the workbench's keys from ui's (the
 * two layers do not include each other: here is where they meet). */
static void print_man(void)
{
    static char tags[GL_REQ_COUNT][64];
    gl_man_entry keys[GL_REQ_COUNT];
    for (size_t r = 0; r < GL_REQ_COUNT; r++) {
        gl_request_key_column((gl_request)r, false, tags[r], sizeof(tags[r]));
        keys[r] = (gl_man_entry){tags[r], gl_request_help((gl_request)r)};
    }
    size_t n_notes;
    const char *const *notes = gl_keys_help_notes(&n_notes);
    gl_cli_print_man(stdout, GL_PKGDATADIR "/" GL_DEFAULT_EXAMPLE, keys, GL_REQ_COUNT, notes,
                     n_notes);
}

int main(int argc, char **argv)
{
    if (runs_graphs(argc, argv))
        gl_omp_wait_choose(argv); /* first: it may start the program again */
    gl_ui_args ua = {0};
    take_workbench_options(&argc, argv, &ua);
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
                      !strcmp(argv[1], "help"))) {
        const gl_command *cmd = argc == 3 ? gl_command_find(argv[2]) : NULL;
        if (cmd)
            gl_cli_print_command_help(cmd, stdout); /* graphlab help run */
        else
            gl_cli_print_help(stdout, default_model());
        return GL_EXIT_OK;
    }
    if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))) {
        gl_cli_print_version(stdout);
        return GL_EXIT_OK;
    }
    /* Not in --help: how the build writes graphlab.1. */
    if (argc == 2 && !strcmp(argv[1], "--man")) {
        print_man();
        return GL_EXIT_OK;
    }
    if (argc >= 2) {
        const gl_command *cmd = gl_command_find(argv[1]);
        if (cmd)
            return cmd->run(argc - 1, argv + 1);
        if (argv[1][0] == '-') {
            fprintf(stderr, "graphlab: unknown option '%s' (see graphlab --help)\n",
                    gl_esc(argv[1]));
            return GL_EXIT_BAD;
        }
        if (!looks_like_model(argv[1]))
            return unknown_command(argv[1]);
    }
    if (argc > 2) {
        fprintf(stderr, "graphlab: unexpected argument '%s' (see graphlab --help)\n",
                gl_esc(argv[2]));
        return GL_EXIT_BAD;
    }
    ua.model = argc >= 2 ? argv[1] : default_model();
    int env_rc = gl_ui_check_args(&ua);
    if (env_rc != GL_EXIT_OK)
        return env_rc;
    /* The workbench needs a terminal on both ends; from scripts and pipes `graphlab
     * MODEL` prints the model summary instead (as `graphlab info MODEL`). */
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return gl_ui_main(&ua);
    char *info_argv[] = {"info", (char *)ua.model, NULL};
    return gl_cmd_info(2, info_argv);
}
