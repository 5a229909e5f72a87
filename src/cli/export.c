/* export.c — `graphlab export MODEL -d DIR [--no-onnx|--self-contained] [--passes LIST]
 * [--set PASS.OPT=V]`: every
 * step of the pipeline as files, decisions.json and index.html (driver/export.h, the
 * calls the workbench's e / E keys make too). */
#include "cli/cli.h"

#include "driver/export.h"
#include "util/escape.h"

#include <stdio.h>

typedef struct export_args {
    const char *model, *dir;
    gl_export_opts eo;
} export_args;

enum { OPT_DIR, OPT_NO_ONNX, OPT_SELF_CONTAINED };
static const gl_cli_option own_options[] = {
    [OPT_DIR] = {"dir", 'd', true, "DIR", "the folder to write (created with its parents; "
                 "an existing one gets the files it owns replaced); required"},
    [OPT_NO_ONNX] = {"no-onnx", 0, false, NULL, "without the per-step .onnx files"},
    [OPT_SELF_CONTAINED] = {"self-contained", 0, false, NULL,
                            "each step's .onnx with its own copy of every weight (by default "
                            "they share DIR/" GL_EXPORT_WEIGHTS ")"},
};

const gl_command gl_command_export = {
    "export", "MODEL", "every step as .dot/.svg/.onnx/.diff.txt, decisions.json and index.html",
    "DIR/NN-PASS.{dot,svg,onnx,diff.txt} per step, 00-input first; DIR/decisions.json; "
    "DIR/index.html, one page that loads nothing from the network. The steps' .onnx keep "
    "their weights of 1 KB and more in one file they share, "
    "DIR/" GL_EXPORT_WEIGHTS " (ONNX external data; a tensor several steps hold is there "
    "once), so the folder is about one copy of the model, not one per step; each .onnx "
    "loads from DIR in graphlab and ONNX Runtime. --self-contained writes whole copies "
    "instead, --no-onnx none; stdout says which. --passes defaults to all. "
    "A failed or interrupted export leaves no half folder. DIR/" GL_EXPORT_MANIFEST " lists "
    "the files exports wrote there: an export into the folder again removes those it does "
    "not write again (another model's, the .onnx left out by --no-onnx) and never removes "
    "files it does not list. One export at a time writes into a folder: another one finds "
    "DIR/.graphlab.lock held and is refused (exit 2), naming the process that writes.",
    GL_SOPT_PIPELINE, own_options, GL_ARRAY_LEN(own_options), gl_cmd_export};

static int own_option(void *ctx, size_t which, const char *value)
{
    export_args *a = ctx;
    if (which == OPT_DIR)
        a->dir = value;
    else if (which == OPT_NO_ONNX)
        a->eo.no_onnx = true;
    else
        a->eo.self_contained = true;
    return GL_EXIT_OK;
}

/* GL_EXIT_OK to go on, -1 for --help (done), else the exit code. */
static int parse_args(int argc, char **argv, export_args *a, gl_session_opts *o)
{
    const gl_cli_spec spec = {&gl_command_export, own_option, a, &a->model};
    int first, rc = gl_cli_parse(&spec, argc, argv, o, &first);
    if (rc != GL_EXIT_OK)
        return rc;
    if (!a->dir)
        return gl_cli_usage_error("export", "missing -d DIR");
    if (a->eo.no_onnx && a->eo.self_contained)
        return gl_cli_usage_error("export", "--no-onnx writes no .onnx: --self-contained "
                                  "has nothing to change");
    return GL_EXIT_OK;
}

int gl_cmd_export(int argc, char **argv)
{
    export_args a = {0};
    gl_export_report report = {0};
    a.eo.report = &report;
    gl_session_opts o;
    gl_session_opts_init(&o, "all");
    gl_session s = {0};
    int rc = parse_args(argc, argv, &a, &o);
    if (rc == GL_EXIT_OK) {
        gl_status run, st = gl_export_model(a.model, &o, a.dir, &a.eo, &s, &run);
        if (st == GL_OK) {
            char weights[256];
            gl_export_report_line(&a.eo, weights, sizeof(weights));
            printf("exported %zu steps to %s/ (index.html, decisions.json); %s\n",
                   s.pipeline->n_steps, gl_esc(a.dir), weights);
            st = run; /* a pass that failed, after the steps before it */
        }
        rc = st == GL_OK ? GL_EXIT_OK : gl_cli_fail(st);
    }
    gl_session_end(&s);
    gl_session_opts_free(&o);
    return rc < 0 ? GL_EXIT_OK : rc;
}
