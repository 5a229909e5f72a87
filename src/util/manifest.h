/* manifest.h — the list of the files a writer owns in a folder, as JSON (the text only:
 * util/safe_write.h reads and writes the file, gl_temp_dir_open_owned).
 *
 *   {
 *     "format": 1,
 *     "about": "the files graphlab wrote here; the next export into this folder removes
 *               those it does not write again, and nothing else",
 *     "written_by": "graphlab 0.1 export",
 *     "source": "model.onnx",
 *     "files": ["00-input.diff.txt", "00-input.dot", …]
 *   }
 *
 * Only "files" is read back; the rest is for people. The reader keeps only plain names
 * of the folder's own entries: a name that is empty, ".", "..", holds a '/' or a NUL, or
 * starts with ".graphlab" (the manifest itself, the lock, temporary folders) is dropped,
 * so that a forged or damaged manifest cannot reach outside the folder or into
 * graphlab's bookkeeping. The writer leaves out a name that would not read back byte for
 * byte (not UTF-8): such a file is not recorded, so never removed later.
 */
#ifndef GL_MANIFEST_H
#define GL_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A set of file names: add, then sort once, then ask. Zeroed it is empty. */
typedef struct gl_names {
    char **items; /* owned, each owned */
    size_t n, cap;
} gl_names;

void gl_names_add(gl_names *s, const char *name);
/* Sorted, each name once: gl_names_has works from here on. */
void gl_names_sort(gl_names *s);
bool gl_names_has(const gl_names *s, const char *name);
void gl_names_free(gl_names *s);

/* Whether `name` may be listed: a plain name of an entry in the folder, none of ours. */
bool gl_manifest_name_ok(const char *name);

/* What the manifest records besides the files. */
typedef struct gl_manifest_about {
    const char *written_by; /* "graphlab 0.1 export" */
    const char *source;     /* what the files were made from (a model's path); may be NULL */
} gl_manifest_about;

/* The manifest listing `files` (sorted) onto f. */
void gl_manifest_write(FILE *f, const gl_manifest_about *about, const gl_names *files);

/* The names of "files" in the manifest text (len bytes) added to *files (valid names
 * only, see above). False when the text is not a JSON object with a "files" array of
 * strings: nothing is added then. */
bool gl_manifest_parse(const char *text, size_t len, gl_names *files);

#endif
