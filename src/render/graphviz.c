/* graphviz.c — stage 4: the DOT text laid out by Graphviz (cgraph + gvc in-process) in a
 * forked child under a deadline (util/deadline.h), and the SVG it draws (stages.h).
 */
#include "render/stages.h"

#include "util/deadline.h"
#include "util/safe_write.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Graphviz =========================================================================== */

extern gvplugin_library_t gvplugin_dot_layout_LTX_library;
extern gvplugin_library_t gvplugin_core_LTX_library;

static const lt_symlist_t GV_BUILTINS[] = {
    {"gvplugin_dot_layout_LTX_library", &gvplugin_dot_layout_LTX_library},
    {"gvplugin_core_LTX_library", &gvplugin_core_LTX_library},
    {NULL, NULL},
};

/* Graphviz is not reentrant (global parser, error hooks, layout statics): every session
 * holds this lock. Its messages go to gv_messages instead of stderr (the TUI owns the
 * terminal); they become part of our error message when something fails. */
static pthread_mutex_t gv_lock = PTHREAD_MUTEX_INITIALIZER;
static char gv_messages[512];

static int collect_gv_message(char *msg)
{
    size_t used = strlen(gv_messages);
    snprintf(gv_messages + used, sizeof(gv_messages) - used, "%s", msg ? msg : "");
    return 0;
}

/* The collected messages as one line. */
static const char *gv_message_line(void)
{
    for (char *p = gv_messages; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return gv_messages[0] ? gv_messages : "no message";
}

void gl_rv_gv_close(gv_session *s)
{
    if (s->laid_out)
        gvFreeLayout(s->gvc, s->graph);
    if (s->graph)
        agclose(s->graph);
    if (s->gvc)
        gvFreeContext(s->gvc);
    agseterrf(s->old_errf);
    pthread_mutex_unlock(&gv_lock);
}

/* Parse our DOT text and run the dot layout. On failure the session is closed. */
gl_status gl_rv_gv_open(gv_session *s, const char *dot)
{
    *s = (gv_session){0};
    pthread_mutex_lock(&gv_lock);
    gv_messages[0] = '\0';
    s->old_errf = agseterrf(collect_gv_message);
    agreseterrors();
    gl_status st = GL_OK;
    s->gvc = gvContextPlugins(GV_BUILTINS, 0);
    if (!s->gvc)
        st = gl_fail(GL_ERR_NOMEM, "render: cannot create a Graphviz context");
    if (st == GL_OK && !(s->graph = agmemread(dot)))
        st = gl_fail(GL_ERR_INTERNAL, "render: Graphviz could not parse our DOT: %s",
                     gv_message_line());
    if (st == GL_OK && gvLayout(s->gvc, s->graph, "dot") != 0)
        st = gl_fail(GL_ERR_INTERNAL, "render: dot layout failed: %s", gv_message_line());
    s->laid_out = st == GL_OK;
    if (st != GL_OK)
        gl_rv_gv_close(s);
    return st;
}

#define DEFAULT_TIMEOUT_MS 15000

static void format_limit(char buf[32], unsigned ms)
{
    if (ms % 1000 == 0)
        snprintf(buf, 32, "%u s", ms / 1000);
    else
        snprintf(buf, 32, "%u ms", ms);
}

static gl_status run_job(gl_deadline_fn fn, const gv_work *w, unsigned timeout_ms, char **bytes,
                         size_t *len, bool *timed_out)
{
    gl_deadline_job job = {fn, (void *)w, "the Graphviz process", &gv_lock, timeout_ms};
    return gl_run_with_deadline(&job, bytes, len, timed_out);
}

gl_status gl_rv_lay_out(const gl_graph *g, const gl_render_opts *o, gl_deadline_fn fn, view *v,
                        char **dot, char **bytes, size_t *len, gl_render_info *info)
{
    *v = (view){0};
    *dot = *bytes = NULL;
    *len = 0;
    unsigned timeout_ms = o && o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    int64_t start = (int64_t)gl_now_ms();
    gl_status st = gl_rv_make_dot(g, o, NULL, v, dot, NULL, info);
    if (st != GL_OK)
        return st;
    size_t first_boxes = v->n_boxes;
    unsigned first_ms = timeout_ms - timeout_ms / 3;
    bool timed_out = false;
    st = run_job(fn, &(gv_work){*dot, v}, first_ms, bytes, len, &timed_out);
    int64_t left = (int64_t)timeout_ms - ((int64_t)gl_now_ms() - start);
    if (st != GL_OK && timed_out && left > 0) {
        /* The drawing chosen from the estimate took too long on this machine: the rest
         * of the time goes to a small collapsed one. */
        char why[160], limit[32], count[32];
        format_limit(limit, first_ms);
        snprintf(why, sizeof(why), "the layout of %s boxes did not finish within %s",
                 gl_rv_count(count, first_boxes), limit);
        gl_rv_view_free(v);
        free(*dot);
        st = gl_rv_make_dot(g, o, why, v, dot, NULL, info);
        if (st == GL_OK)
            st = run_job(fn, &(gv_work){*dot, v}, (unsigned)left, bytes, len, &timed_out);
    }
    if (st == GL_OK)
        return st;
    gl_strbuf name = {0};
    gl_rv_put_display(&name, g->name ? g->name : "", NAME_DISPLAY_MAX);
    const char *shown = name.s ? name.s : "";
    if (timed_out) {
        char limit[32], count[32];
        format_limit(limit, timeout_ms);
        st = gl_fail(GL_ERR_UNSUPPORTED, "graph '%s': Graphviz layout took longer than %s (%s "
                                         "boxes); use a focus or a smaller max_nodes",
                     shown, limit, gl_rv_count(count, first_boxes));
    } else {
        gl_error_prefix("graph '%s'", shown);
    }
    free(name.s);
    return st;
}

/* ==== SVG ================================================================================ */

/* Job: the DOT text laid out and drawn as SVG. */
static gl_status svg_job(void *ctx, gl_strbuf *out)
{
    const gv_work *w = ctx;
    gv_session s;
    gl_status st = gl_rv_gv_open(&s, w->dot);
    if (st != GL_OK)
        return st;
    char *data = NULL;
    unsigned int n = 0;
    if (gvRenderData(s.gvc, s.graph, "svg", &data, &n) != 0 || !data)
        st = gl_fail(GL_ERR_INTERNAL, "render: SVG output failed: %s", gv_message_line());
    else
        gl_sb_putn(out, data, n);
    if (data)
        gvFreeRenderData(data);
    gl_rv_gv_close(&s);
    return st;
}

gl_status gl_render_svg_dot(const gl_graph *g, const gl_render_opts *o, char **svg,
                            size_t *svg_len, char **dot, size_t *dot_len, gl_render_info *info)
{
    *svg = NULL;
    if (dot)
        *dot = NULL;
    view v;
    char *text = NULL;
    size_t n = 0;
    gl_status st = gl_rv_lay_out(g, o, svg_job, &v, &text, svg, &n, info);
    gl_rv_view_free(&v);
    if (st == GL_OK && svg_len)
        *svg_len = n;
    if (st == GL_OK && dot_len)
        *dot_len = strlen(text);
    if (st == GL_OK && dot)
        *dot = text;
    else
        free(text);
    return st;
}

gl_status gl_render_svg(const gl_graph *g, const gl_render_opts *o, char **svg, size_t *len,
                        gl_render_info *info)
{
    return gl_render_svg_dot(g, o, svg, len, NULL, NULL, info);
}

gl_status gl_render_svg_file(const gl_graph *g, const gl_render_opts *o, const char *path,
                             gl_render_info *info)
{
    if (!path || !*path)
        return gl_fail(GL_ERR_INPUT, "render: no output path");
    char *svg = NULL;
    size_t len = 0;
    gl_status st = gl_render_svg(g, o, &svg, &len, info);
    if (st == GL_OK)
        st = gl_write_file(path, svg, len);
    free(svg);
    return st;
}
