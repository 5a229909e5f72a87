/* inter_save.c — kept tensors written into a folder, and two recorded runs finished
 * (inter_save.h). */
#include "driver/inter_save.h"

#include "onnx/save_set.h"
#include "util/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The file name of kept tensor `i` in the save `id`: its place, its key reduced to bytes
 * that are safe in a file name, and the save's id (save_set.h: a new save never writes
 * over the files the old index names). The place keeps names unique within the save,
 * and the digits in front keep "." and ".." out. */
static void safe_file_name(const gl_inter_tensor *t, size_t i, const char *id, char *buf,
                           size_t len)
{
    int n = snprintf(buf, len, "%04zu_", i + 1);
    size_t at = n > 0 ? (size_t)n : 0, max_key = 80;
    for (const char *p = t->key; *p && max_key && at + 1 < len; p++, max_key--) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        buf[at++] = ok ? c : '_';
    }
    snprintf(buf + at, len - at, ".%s.pb", id);
}

static void index_entry(gl_json *j, const gl_inter_tensor *t, const char *file)
{
    gl_json_object_begin(j, NULL);
    gl_json_string(j, "name", t->key);
    gl_json_string(j, "file", file);
    gl_json_string(j, "node", t->node);
    gl_json_string(j, "op", t->op);
    gl_json_int(j, "output", (int64_t)t->output);
    gl_json_string(j, "dtype", gl_dtype_name(t->t->dtype));
    gl_json_array_begin(j, "dims");
    for (int d = 0; d < t->t->rank; d++)
        gl_json_int(j, NULL, t->t->dims[d]);
    gl_json_array_end(j);
    gl_json_bool(j, "graph_output", t->graph_output);
    gl_json_object_end(j);
}

/* The tensor files into the open save `set`, and their entries into the index `j`. */
static gl_status write_tensors(const gl_inter_rec *r, const char *const *names, size_t n_names,
                               gl_save_set *set, gl_json *j)
{
    gl_status st = GL_OK;
    for (size_t i = 0; i < gl_inter_rec_count(r) && st == GL_OK; i++) {
        const gl_inter_tensor *t = gl_inter_rec_at(r, i);
        if (!gl_inter_listed(names, n_names, t->key))
            continue;
        char file[128];
        safe_file_name(t, i, set->id, file, sizeof(file));
        st = gl_save_set_tensor(set, file, t->t);
        if (st == GL_OK)
            index_entry(j, t, file);
    }
    return st;
}

gl_status gl_inter_save(const gl_inter_rec *r, const char *dir, const char *const *names,
                        size_t n_names)
{
    for (size_t i = 0; names && i < n_names; i++)
        if (!gl_inter_rec_find(r, names[i]))
            return gl_fail(GL_ERR_INPUT,
                           "%s: no intermediate tensor named '%s' in the %s run (graph "
                           "inputs, initializers and tensors inside If/Loop/Scan bodies are "
                           "not kept)",
                           gl_inter_rec_model(r), names[i], gl_inter_rec_backend(r));
    gl_save_set set;
    gl_status st = gl_save_set_open(&set, GL_SAVE_TENSORS, dir);
    if (st != GL_OK)
        return st;
    char *doc = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&doc, &len);
    if (!mem)
        st = gl_fail(GL_ERR_NOMEM, "%s: cannot make the index: %s", dir, strerror(errno));
    gl_json j;
    if (mem) {
        gl_json_init(&j, mem, true);
        gl_json_object_begin(&j, NULL);
        gl_json_string(&j, "backend", gl_inter_rec_backend(r));
        gl_json_array_begin(&j, "tensors");
        st = write_tensors(r, names, n_names, &set, &j);
        gl_json_array_end(&j);
        gl_json_object_end(&j);
        gl_json_finish(&j);
        if (fclose(mem) != 0 && st == GL_OK)
            st = gl_fail(GL_ERR_NOMEM, "%s: cannot make the index", dir);
    }
    if (st == GL_OK)
        st = gl_save_set_index(&set, doc, len);
    free(doc);
    if (st != GL_OK) {
        gl_save_set_abort(&set);
        return st;
    }
    return gl_save_set_commit(&set);
}

/* ---- after two runs ----------------------------------------------------------------------- */

gl_status gl_inter_finish(const gl_inter_rec *a, const gl_inter_rec *b,
                          const gl_inter_finish_options *o, FILE *f)
{
    gl_status st = gl_inter_rec_status(a);
    if (st == GL_OK && b)
        st = gl_inter_rec_status(b);
    if (st == GL_OK && b) {
        gl_inter_report r;
        gl_inter_compare(a, b, &o->tol, &r);
        gl_inter_report_print(&r, o->all, f);
        gl_inter_report_free(&r);
    }
    if (st == GL_OK && o->save_dir)
        st = gl_inter_save(a, o->save_dir, o->names, o->n_names);
    return st;
}
