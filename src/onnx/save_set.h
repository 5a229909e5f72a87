/* save_set.h — the files of one save put into a folder as a whole: `run --save-tensors
 * DIR` and `run --save-outputs DIR`.
 *
 * Writing the files one by one over the last save's, as graphlab did, left new and old
 * files side by side under the old index whenever the writing stopped half way (a full
 * disk, SIGKILL), and SIGKILL left 100 MB temporary files that nothing removed. Now:
 *
 *  1. Every file of the set is written and synced into a temporary folder inside DIR,
 *     DIR/.graphlab-save.<pid>.tmp.XXXXXX: on DIR's own file system, so that the files
 *     can be renamed out of it even when DIR is a mount point. A failure or a cleanup
 *     signal (SIGINT, SIGTERM, SIGHUP) removes the folder: DIR is as it was.
 *  2. The commit, holding DIR's lock (flock: two saves into one DIR take turns), with the
 *     cleanup signals held back until it is over: every destination is checked by the
 *     write guard (safe_write.h: no link, no input, nothing but a regular file replaced)
 *     before anything moves; then the files are renamed into DIR;
 *  3. the last save's files that the new set does not have are removed, and the
 *     temporary folder goes.
 *
 * Tensors (--save-tensors) come with an index, DIR/index.json, and readers go by it. Their
 * files are named NNNN_KEY.ID.pb, ID the save's own (the temporary folder's random part),
 * so that no file of the last save is touched until the new index.json has been renamed
 * over the old one. That one rename is the commit: at every instant index.json and the
 * files it names are one whole save, the old or the new. Only files an index names are
 * ever removed: the last save's (named by the index replaced) once the new index is in
 * place; never a file the old index does not name.
 *
 * The temporary folder is also the journal of a save that is killed: until the commit
 * it holds the new index, and from just before the first rename a copy of the old one
 * (previous-index.json). The next save into DIR finds the folder of a process that is gone
 * (stale_temps.h) and removes the files that either of these names and DIR/index.json
 * does not (the new set's files a kill left without their index, or the old set's a kill
 * left after the commit), then the folder.
 *
 * Outputs (--save-outputs) keep the names test data sets use, output_K.pb, which `run
 * --data DIR` reads by name: there is no index to switch. All of them are written and
 * synced before the first rename, so a full disk or a failed write leaves the old
 * outputs whole; then the renames follow one another with no data left to write. Only a
 * SIGKILL or power cut between two renames can leave new and old outputs side by side,
 * until the next save. An old output_K.pb beyond the new set's count is removed: test
 * data binds every output_K.pb to a graph output.
 *
 * Test-only: GRAPHLAB_TEST_SAVE_SIGNAL=SIG:PHASE:N (SIG KILL or STOP, PHASE write or move)
 * makes the process send itself SIGSIG right after the Nth file written into the
 * temporary folder, or moved into DIR (for tensors the index is the last move) — a kill
 * at an exact point of a save, which no timing from outside can give (tests/saves.sh).
 */
#ifndef GL_SAVE_SET_H
#define GL_SAVE_SET_H

#include "ir/tensor.h"
#include "util/safe_write.h"
#include "util/stale_temps.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum gl_save_kind {
    GL_SAVE_TENSORS, /* NNNN_KEY.ID.pb files named by DIR/index.json (--save-tensors) */
    GL_SAVE_OUTPUTS, /* output_K.pb, as test data sets name them (--save-outputs) */
} gl_save_kind;

/* A tensor set's index: what readers go by, renamed into DIR last (the commit). */
#define GL_SAVE_INDEX "index.json"

/* File names, malloc'd. */
typedef struct gl_save_names {
    char **v;
    size_t n, cap;
} gl_save_names;

/* Zeroed it is closed. */
typedef struct gl_save_set {
    gl_save_kind kind;
    char *dir;        /* the destination (owned) */
    gl_temp_dir tmp;  /* where the files are until the commit */
    char id[GL_TEMP_RANDOM_LEN + 1]; /* this save's own: the temporary folder's random part */
    gl_save_names names; /* the files written into tmp, in order (the index apart) */
    bool has_index;
} gl_save_set;

/* Creates DIR when absent (with its parents, as export -d), removes what saves killed
 * earlier left in it, and makes the temporary folder. On failure s needs no abort. */
gl_status gl_save_set_open(gl_save_set *s, gl_save_kind kind, const char *dir);

/* Tensor t as file `name` of the set (a plain name; a tensor set's carries s->id and
 * passes gl_save_tensor_file_name). On failure the set stays open: abort it. */
gl_status gl_save_set_tensor(gl_save_set *s, const char *name, const gl_tensor *t);

/* A tensor set's index.json, written after its files. */
gl_status gl_save_set_index(gl_save_set *s, const char *doc, size_t len);

/* Puts the set in place of the last one (see above). The set is closed either way. */
gl_status gl_save_set_commit(gl_save_set *s);

/* Drops the temporary folder and what was written into it; DIR is left as it was (safe
 * on a closed set). */
void gl_save_set_abort(gl_save_set *s);

/* Whether `name` is one a tensor set gives its files: four digits or more, '_', then
 * [A-Za-z0-9._-], ending in ".pb". Only such names are ever removed from DIR. */
bool gl_save_tensor_file_name(const char *name);

#endif
