/* export_prompt.c — e, E and w ask where their files go: a one-line prompt on the status
 * line holding the folder (the last one used, or ./graphlab-export/<model>), editable;
 * for E also whether the per-step .onnx files come too (Tab). $GRAPHLAB_EXPORT_DIR set
 * and not empty skips the question: the files go there.
 */
#include "ui/ui.h"

#include "driver/export.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env_dir(void)
{
    const char *dir = getenv("GRAPHLAB_EXPORT_DIR");
    return dir && *dir ? dir : NULL;
}

/* Write what the prompt was opened for into `dir`. */
static unsigned write_into(gl_ui *ui, gl_export_target what, const char *dir, bool onnx)
{
    if (what == GL_EXPORT_TO_TENSORS) {
        if (dir != ui->export_dir) /* e, E and o then write there too */
            snprintf(ui->export_dir, sizeof(ui->export_dir), "%s", dir);
        return gl_ui_write_tensors(ui);
    }
    gl_export_opts eo = {.no_onnx = !onnx};
    return gl_ui_export_into(ui, what == GL_EXPORT_TO_ALL, dir, &eo);
}

unsigned gl_ui_export_ask(gl_ui *ui, gl_export_target what)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    const char *dir = env_dir();
    if (dir)
        return write_into(ui, what, dir, true);
    ui->export_prompt = true;
    ui->export_what = what;
    ui->export_onnx = true;
    snprintf(ui->export_text, sizeof(ui->export_text), "%s", ui->export_dir);
    return GL_REDRAW_STATUS;
}

unsigned gl_ui_export_prompt_key(gl_ui *ui, int key)
{
    size_t len = strlen(ui->export_text);
    if (key == 27) {
        ui->export_prompt = false;
        gl_ui_set_status(ui, "%s cancelled",
                         ui->export_what == GL_EXPORT_TO_TENSORS ? "writing" : "export");
        return GL_REDRAW_STATUS;
    }
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        if (!len) {
            gl_ui_set_error(ui, "type a folder (Esc cancels)");
            return GL_REDRAW_STATUS;
        }
        ui->export_prompt = false;
        char dir[sizeof(ui->export_text)];
        memcpy(dir, ui->export_text, sizeof(dir));
        return write_into(ui, (gl_export_target)ui->export_what, dir, ui->export_onnx);
    }
    if (key == '\t' && ui->export_what == GL_EXPORT_TO_ALL)
        ui->export_onnx = !ui->export_onnx;
    else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
        if (len)
            ui->export_text[len - 1] = '\0';
    } else if (key == ('u' & 0x1f))
        ui->export_text[0] = '\0';
    else if (key >= ' ' && key < 256 && key != 127 && len + 1 < sizeof(ui->export_text)) {
        ui->export_text[len] = (char)key;
        ui->export_text[len + 1] = '\0';
    } else
        return GL_REDRAW_NONE;
    ui->status_error = false;
    return GL_REDRAW_STATUS;
}

void gl_ui_export_prompt_line(const gl_ui *ui, char *buf, size_t len)
{
    switch ((gl_export_target)ui->export_what) {
    case GL_EXPORT_TO_ALL:
        snprintf(buf, len, "export every step to: %s_   [.onnx files: %s, Tab toggles] "
                           "Enter exports, Esc cancels",
                 ui->export_text, ui->export_onnx ? "yes" : "no");
        break;
    case GL_EXPORT_TO_STEP:
        snprintf(buf, len, "export this step to: %s_   Enter exports, Esc cancels",
                 ui->export_text);
        break;
    case GL_EXPORT_TO_TENSORS:
        snprintf(buf, len, "write the tensors to: %s_   Enter writes, Esc cancels",
                 ui->export_text);
        break;
    }
}
