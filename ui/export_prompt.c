/* export_prompt.c — E asks where the export goes: a one-line prompt on the status line
 * holding the folder (the last one, or ./graphlab-export/<model>), editable, and whether
 * the per-step .onnx files come too (Tab: they are most of an export's bytes, 213 MB
 * for efficientnet). $GRAPHLAB_EXPORT_DIR set and not empty skips the question.
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

unsigned gl_ui_export_ask(gl_ui *ui)
{
    if (!ui->pipeline)
        return GL_REDRAW_NONE;
    const char *dir = env_dir();
    if (dir) {
        gl_export_opts eo = {0};
        return gl_ui_export_into(ui, true, dir, &eo);
    }
    ui->export_prompt = true;
    ui->export_onnx = true;
    snprintf(ui->export_text, sizeof(ui->export_text), "%s", ui->export_dir);
    return GL_REDRAW_STATUS;
}

unsigned gl_ui_export_prompt_key(gl_ui *ui, int key)
{
    size_t len = strlen(ui->export_text);
    if (key == 27) {
        ui->export_prompt = false;
        gl_ui_set_status(ui, "export cancelled");
        return GL_REDRAW_STATUS;
    }
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        if (!len) {
            gl_ui_set_error(ui, "export: type a folder (Esc cancels)");
            return GL_REDRAW_STATUS;
        }
        ui->export_prompt = false;
        gl_export_opts eo = {.no_onnx = !ui->export_onnx};
        char dir[sizeof(ui->export_text)];
        memcpy(dir, ui->export_text, sizeof(dir));
        return gl_ui_export_into(ui, true, dir, &eo);
    }
    if (key == '\t')
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
    snprintf(buf, len, "export every step to: %s_   [.onnx files: %s, Tab toggles] "
                       "Enter exports, Esc cancels",
             ui->export_text, ui->export_onnx ? "yes" : "no");
}
