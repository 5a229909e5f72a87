/* help.c — graphlab --help, COMMAND --help and the manual page, all written from the
 * tables the parser reads: the commands (each in its own file), the shared options
 * (driver.c), the passes and their --set options (pipeline.c), the workbench's keys
 * (ui/keys.def and ui/views.def, handed over by main.c); the environment the program
 * reads is the table below (tests/manual.sh fails on a getenv it does not list). */
#include "cli/cli.h"

#include "passes/pipeline.h"

#include <stdio.h>
#include <string.h>

enum { WIDTH = 90, OPT_COL = 28 };

/* Every variable the program reads, and what graphlab does with it; the OpenMP and
 * oneDNN ones are read by those libraries, listed because users set them. */
typedef struct env_row {
    const char *name, *text;
} env_row;

static const env_row environment[] = {
    {"GRAPHLAB_SET", "--set options for the workbench's pipeline, space-separated "
                     "(\"fusion.measure=1 fusion.veto=3\"), read whole: for scripts and "
                     "tests. A bad one is refused when the workbench starts (exit 2)."},
    {"GRAPHLAB_EXPORT_DIR", "the folder the workbench's exports go to: E (every step) writes "
                            "there without asking, e (this step) and w (a run's tensors) "
                            "there too. At most 1023 bytes: a longer one is refused when the "
                            "workbench starts (exit 2)."},
    {"GRAPHLAB_PROGRESS", "1: bisect reports each model run on stderr even when stderr is not "
                          "a terminal; 0: never. Unset: only on a terminal."},
    {"GRAPHLAB_STABLE_TIMES", "set: the workbench draws times and other numbers that depend "
                              "on the CPU as ~ (for the golden-screen tests)."},
    {"GRAPHLAB_TEST_SAVE_SIGNAL", "test-only: SIG:PHASE:N (KILL or STOP, write or move) makes a "
                                  "save of several files signal itself after its Nth file "
                                  "(tests/saves.sh). Leave it unset."},
    {"NO_COLOR", "set and not empty: the workbench draws without colours (bold, dim, "
                 "underline and reverse video only)."},
    {"BROWSER", "what o opens the SVG with: the first entry of a colon-separated list, split "
                "into words at spaces, %s replaced by the file (else the file appended). "
                "Unset or empty: xdg-open."},
    {"PATH", "where the BROWSER program and xdg-open are looked for."},
    {"TERM", "the terminal the workbench draws on (curses); one it cannot use ends graphlab "
             "with a message naming it (exit 2)."},
    {"LC_ALL, LC_CTYPE, LANG", "a UTF-8 locale draws arrows, box-drawing characters and "
                               "an ellipsis where text is cut; otherwise ASCII (...)."},
    {"OMP_NUM_THREADS", "read by OpenMP, which runs oneDNN's threads here: the thread count "
                        "of the oneDNN runs when --threads is not given."},
    {"OMP_WAIT_POLICY", "read by OpenMP: passive makes idle threads sleep instead of spin. "
                        "Unset, and GOMP_SPINCOUNT unset, a command that runs graphs on a "
                        "machine whose load average is at or above its processors starts "
                        "again with passive (spinning threads make runs there many times "
                        "slower) and profile says so; set, graphlab leaves it alone."},
    {"GOMP_SPINCOUNT", "read by libgomp (GNU OpenMP): how long an idle thread spins before "
                       "it sleeps; set, graphlab leaves the wait policy alone too."},
    {"GRAPHLAB_OMP_WAIT", "set by graphlab for itself when it starts again with "
                          "OMP_WAIT_POLICY=passive (the load and the processors, for the "
                          "profile's note); not for users."},
    {"DNNL_VERBOSE", "read by oneDNN: 1 prints every primitive run (2: its creation too) on "
                     "stdout, mixed with graphlab's output."},
    {"DNNL_MAX_CPU_ISA", "read by oneDNN: the newest instruction set it may use (AVX2, "
                         "AVX512_CORE, ...); the layout choices follow the one it reports."},
};

/* ---- plain text ------------------------------------------------------------------------ */

/* A space that does not break a line: an option and its value stay together. */
#define NBSP '\x01'

/* `text` from column `col` (the cursor's), words wrapped at WIDTH onto lines indented by
 * `indent`; ends the line. */
static void wrap(FILE *f, size_t col, size_t indent, const char *text)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (!len)
            break;
        if (!first && col + 1 + len > WIDTH) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        for (size_t i = 0; i < len; i++)
            fputc(p[i] == NBSP ? ' ' : p[i], f);
        col += len;
        p += len;
        first = false;
    }
    fputc('\n', f);
}

/* The options a command takes, own first, then the shared ones, as (name, short, arg,
 * help) rows: one loop for every listing. */
typedef struct opt_row {
    const char *name, *arg, *help;
    char short_name;
} opt_row;

static size_t command_options(const gl_command *c, opt_row *rows, size_t cap)
{
    size_t n = 0, n_shared;
    for (size_t i = 0; i < c->n_own && n < cap; i++)
        rows[n++] = (opt_row){c->own[i].name, c->own[i].has_value ? c->own[i].arg : NULL,
                              c->own[i].help, c->own[i].short_name};
    const gl_session_option *shared = gl_session_option_table(&n_shared);
    for (size_t i = 0; i < n_shared && n < cap; i++)
        if (c->shared & shared[i].bit)
            rows[n++] = (opt_row){shared[i].name, shared[i].has_value ? shared[i].arg : NULL,
                                  shared[i].help, 0};
    return n;
}

/* "-o OUT.onnx" or "--passes LIST" */
static void option_words(const opt_row *r, char *buf, size_t len)
{
    if (r->short_name)
        snprintf(buf, len, "-%c%s%s", r->short_name, r->arg ? " " : "", r->arg ? r->arg : "");
    else
        snprintf(buf, len, "--%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
}

/* "run MODEL [NAME...] [--backend ref|dnnl|fused|unfused] ...", wrapped, from `col`. */
static void print_synopsis(FILE *f, const gl_command *c, size_t col, size_t indent)
{
    char text[4096], word[160];
    opt_row rows[64];
    size_t n = command_options(c, rows, GL_ARRAY_LEN(rows));
    int len = snprintf(text, sizeof(text), "%s %s", c->name, c->operands);
    for (size_t i = 0; i < n && len > 0 && (size_t)len < sizeof(text); i++) {
        option_words(&rows[i], word, sizeof(word));
        for (char *w = word; *w; w++)
            if (*w == ' ')
                *w = NBSP;
        len += snprintf(text + len, sizeof(text) - (size_t)len, " [%s]", word);
    }
    wrap(f, col, indent, text);
}

static void print_option_lines(FILE *f, const opt_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char words[200], dash[8] = "";
        if (rows[i].short_name)
            snprintf(dash, sizeof(dash), "-%c, ", rows[i].short_name);
        snprintf(words, sizeof(words), "%s--%s%s%s", dash, rows[i].name, rows[i].arg ? " " : "",
                 rows[i].arg ? rows[i].arg : "");
        fprintf(f, "  %s", words);
        size_t col = 2 + strlen(words);
        if (col + 2 > OPT_COL) {
            fprintf(f, "\n%*s", OPT_COL, "");
        } else {
            fprintf(f, "%*s", (int)(OPT_COL - col), "");
        }
        wrap(f, OPT_COL, OPT_COL, rows[i].help);
    }
}

static const opt_row always[] = {
    {"help", NULL, "this help", 'h'},
    {"version", NULL, "print graphlab's version", 0},
};

void gl_cli_print_command_help(const gl_command *c, FILE *f)
{
    fprintf(f, "usage: graphlab ");
    print_synopsis(f, c, 16, 16);
    fputc('\n', f);
    wrap(f, 0, 0, c->summary);
    if (c->details) {
        fputc('\n', f);
        wrap(f, 0, 0, c->details);
    }
    opt_row rows[64];
    size_t n = command_options(c, rows, GL_ARRAY_LEN(rows));
    fputs("\noptions:\n", f);
    print_option_lines(f, rows, n);
    print_option_lines(f, always, GL_ARRAY_LEN(always));
    fputs("\nexit status: 0 ok, 1 a comparison failed, 2 bad usage or bad input\n", f);
}

/* What --passes takes: one text for --help and the man page. */
static const char passes_text[] =
    "--passes takes all (the default pipeline), none, or a comma list of NAME or NAME:K, "
    "repeats allowed; NAME:K stops that pass after K applied rewrites. all:K is the "
    "default pipeline stopped after its first K rewrites, counted over all its steps in "
    "order (the numbering bisect uses): the step that makes the K-th rewrite is the last "
    "that runs.";

static void print_pass_options(FILE *f, const char *pass, const gl_pass_option *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char words[160];
        snprintf(words, sizeof(words), "      --set %s.%s=%s", pass, o[i].name,
                 o[i].text ? "NAME" : "V");
        fputs(words, f);
        size_t col = strlen(words);
        if (col + 2 > 42)
            fprintf(f, "\n%*s", 42, "");
        else
            fprintf(f, "%*s", (int)(42 - col), "");
        char help[512];
        if (o[i].dflt >= 0)
            snprintf(help, sizeof(help), "%s (default %lld)", o[i].help, (long long)o[i].dflt);
        else
            snprintf(help, sizeof(help), "%s", o[i].help);
        wrap(f, 42, 42, help);
    }
}

/* The variables by name; what each does is the man page's (ENVIRONMENT). */
static void print_environment_names(FILE *f)
{
    char list[1024];
    size_t len = 0;
    for (size_t i = 0; i < GL_ARRAY_LEN(environment) && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
                                environment[i].name);
    fputs("environment: ", f);
    wrap(f, 13, 13, list);
    fputs("man graphlab: what each does (ENVIRONMENT), the workbench's keys (KEYS)\n", f);
}

void gl_cli_print_help(FILE *f, const char *example)
{
    fputs("usage: graphlab [MODEL] [--data DIR] [--set PASS.OPT=V]\n"
          "                                    the workbench; --data: the inputs of its run\n"
          "                                    view (r); --set: as for every command, after\n"
          "                                    $GRAPHLAB_SET's (the flag wins); when stdin or\n"
          "                                    stdout is not a terminal, the model summary\n"
          "                                    (as info) instead\n",
          f);
    fprintf(f, "                                    no MODEL: %s\n", example);
    fputs("       graphlab COMMAND [OPTIONS]   a command (graphlab COMMAND --help: its options)\n"
          "       graphlab --version\n\ncommands:\n", f);
    size_t n;
    const gl_command *const *cmds = gl_command_table(&n);
    for (size_t i = 0; i < n; i++) {
        fputs("  ", f);
        print_synopsis(f, cmds[i], 2, 6 + strlen(cmds[i]->name));
        fputs("      ", f);
        wrap(f, 6, 6, cmds[i]->summary);
    }
    const gl_pass *passes = gl_pass_table(&n);
    fputs("\npasses:\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %-18s ", passes[i].name);
        wrap(f, 21, 21, passes[i].summary);
        print_pass_options(f, passes[i].name, passes[i].options, passes[i].n_options);
    }
    const gl_pass_option *o = gl_settings_common_options(&n);
    fputs("  every pass:\n", f);
    print_pass_options(f, "PASS", o, n);
    const gl_settings_group *g = gl_settings_groups(&n);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %s:\n", g[i].title);
        print_pass_options(f, g[i].name, g[i].options, g[i].n_options);
    }
    const char *const *all = gl_pass_default_pipeline(&n);
    char list[1024];
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", all[i],
                                i + 1 < n ? ", " : "");
    fputs("  all: ", f);
    wrap(f, 7, 7, list);
    fputc('\n', f);
    wrap(f, 0, 0, passes_text);
    fputs("\nexit status: 0 ok, 1 a comparison failed, 2 bad usage or bad input\n", f);
    print_environment_names(f);
}

void gl_cli_print_version(FILE *f) { fprintf(f, "graphlab %s\n", PACKAGE_VERSION); }

/* ---- roff -------------------------------------------------------------------------------- */

/* Text as man(7) reads it: a backslash and a minus escaped, a line never starting with a
 * control character. */
static void roff(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

static void roff_line(FILE *f, const char *macro, const char *s)
{
    fprintf(f, "%s", macro);
    roff(f, s);
    fputc('\n', f);
}

static void man_options(FILE *f, const opt_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(".TP\n", f);
        if (rows[i].short_name)
            fprintf(f, "\\fB\\-%c\\fR, ", rows[i].short_name);
        fputs("\\fB", f);
        roff(f, "--");
        roff(f, rows[i].name);
        fputs("\\fR", f);
        if (rows[i].arg) {
            fputs(" \\fI", f);
            roff(f, rows[i].arg);
            fputs("\\fR", f);
        }
        fputc('\n', f);
        roff_line(f, "", rows[i].help);
    }
}

static void man_pass_options(FILE *f, const char *pass, const gl_pass_option *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char name[160];
        snprintf(name, sizeof(name), "%s.%s", pass, o[i].name);
        fputs(".TP\n\\fB\\-\\-set\\fR \\fB", f);
        roff(f, name);
        fprintf(f, "\\fR=\\fI%s\\fR\n", o[i].text ? "NAME" : "V");
        roff(f, o[i].help);
        if (o[i].dflt >= 0)
            fprintf(f, " (default %lld)", (long long)o[i].dflt);
        fputc('\n', f);
    }
}

/* KEYS: the workbench's keys, as its `?` screen writes them, and the lines under them. */
static void man_keys(FILE *f, const gl_man_entry *keys, size_t n_keys,
                     const char *const *notes, size_t n_notes)
{
    fputs(".SH KEYS\n", f);
    roff_line(f, "", "The workbench's keys, as its ? screen lists them (both come from "
              "ui/keys.def):");
    for (size_t i = 0; i < n_keys; i++) {
        fputs(".TP\n", f);
        roff_line(f, ".B ", keys[i].tag);
        roff_line(f, "", keys[i].text);
    }
    fputs(".PP\n", f);
    for (size_t i = 0; i < n_notes; i++) {
        const char *text = notes[i] + strspn(notes[i], " "); /* filled by roff */
        if (*text)
            roff_line(f, "", text);
    }
}

static void man_environment(FILE *f)
{
    fputs(".SH ENVIRONMENT\n", f);
    for (size_t i = 0; i < GL_ARRAY_LEN(environment); i++) {
        fputs(".TP\n", f);
        roff_line(f, ".B ", environment[i].name);
        roff_line(f, "", environment[i].text);
    }
}

void gl_cli_print_man(FILE *f, const char *example, const gl_man_entry *keys, size_t n_keys,
                      const char *const *notes, size_t n_notes)
{
    fprintf(f, ".\\\" graphlab.1, written by `graphlab --man` from the tables that --help "
               "reads.\n.TH GRAPHLAB 1 \"\" \"graphlab %s\" \"User Commands\"\n", PACKAGE_VERSION);
    fputs(".SH NAME\ngraphlab \\- see what a graph optimizer does to an ONNX model, and why\n"
          ".SH SYNOPSIS\n.B graphlab\n.RI [ MODEL ]\n.br\n.B graphlab\n.I COMMAND\n"
          ".RI [ OPTIONS ]\n.I OPERANDS\n.br\n.B graphlab\n.I COMMAND\n.B \\-\\-help\n"
          ".br\n.B graphlab \\-\\-version\n", f);
    fputs(".SH DESCRIPTION\n", f);
    roff_line(f, "", "graphlab MODEL opens a terminal workbench that loads the ONNX model, "
              "steps through the optimizer pipeline one pass (and one rewrite) at a time "
              "and shows at each step the diff, every decision the optimizer took or refused "
              "with the numbers behind it, the graph, and what the graph computes and how "
              "fast on CPU. When stdin or stdout is not a terminal it prints the model "
              "summary instead, as the info command does. Without MODEL it opens the "
              "bundled example:");
    fputs(".IP\n", f);
    roff_line(f, "", example);
    fputs(".PP\nEverything the workbench shows is also available from the commands below.\n",
          f);
    fprintf(f, "This page describes graphlab %s.\n", PACKAGE_VERSION);
    fputs(".SH COMMANDS\n", f);
    size_t n;
    const gl_command *const *cmds = gl_command_table(&n);
    for (size_t i = 0; i < n; i++) {
        const gl_command *c = cmds[i];
        fprintf(f, ".SS \"graphlab %s ", c->name);
        roff(f, c->operands);
        fputs("\"\n", f);
        roff_line(f, "", c->summary);
        if (c->details) {
            fputs(".PP\n", f);
            roff_line(f, "", c->details);
        }
        opt_row rows[64];
        man_options(f, rows, command_options(c, rows, GL_ARRAY_LEN(rows)));
    }
    fputs(".SS \"Every command\"\n", f);
    man_options(f, always, GL_ARRAY_LEN(always));
    fputs(".SH PASSES\n", f);
    roff_line(f, "", passes_text);
    const char *const *all = gl_pass_default_pipeline(&n);
    fputs(".PP\nThe default pipeline (all):", f);
    for (size_t i = 0; i < n; i++) {
        fputc(' ', f);
        roff(f, all[i]);
        fputc(i + 1 < n ? ',' : '.', f);
    }
    fputc('\n', f);
    const gl_pass *passes = gl_pass_table(&n);
    for (size_t i = 0; i < n; i++) {
        fputs(".TP\n.B ", f);
        roff(f, passes[i].name);
        fputc('\n', f);
        roff_line(f, "", passes[i].summary);
    }
    fputs(".SS \"Pass options (\\-\\-set)\"\n", f);
    for (size_t i = 0; i < n; i++)
        man_pass_options(f, passes[i].name, passes[i].options, passes[i].n_options);
    const gl_pass_option *o = gl_settings_common_options(&n);
    man_pass_options(f, "PASS", o, n);
    const gl_settings_group *g = gl_settings_groups(&n);
    for (size_t i = 0; i < n; i++)
        man_pass_options(f, g[i].name, g[i].options, g[i].n_options);
    man_keys(f, keys, n_keys, notes, n_notes);
    man_environment(f);
    fputs(".SH \"EXIT STATUS\"\n.TP\n0\nsuccess\n.TP\n1\na comparison or a test case "
          "failed\n.TP\n2\nbad usage or bad input, with one line on stderr naming the file, "
          "node and value\n", f);
    fputs(".SH FILES\n.TP\n", f);
    roff_line(f, "", example);
    fputs("the bundled example (the other examples beside it)\n", f);
}
