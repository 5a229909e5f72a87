/* stale_temps.h — temporaries that a killed process left behind, told apart by name and
 * removed by the next writer.
 *
 * A signal that can be caught removes a write's temporaries (safe_write.h). SIGKILL, the
 * OOM killer or a power cut cannot be caught: the temporary folder of a save stays, with
 * the megabytes written into it, and so does the temporary file of an atomic write (a
 * --trace written for hours), and nothing would ever remove them. Their names carry the
 * process id of their maker: a save's folder ".graphlab-save.<pid>.tmp.XXXXXX" (what
 * gl_temp_dir_open makes of the destination "DIR/graphlab-save.<pid>"), an atomic file's
 * "<path>.tmp.<pid>.XXXXXX" (gl_atomic_open). Once that process is gone nobody will
 * finish them, and the next writer of the same destination may remove them.
 *
 * Never taken for stale: a name not exactly of the form; a temporary whose process
 * exists (kill(pid, 0) succeeds, or fails with EPERM: another user's); a folder where a
 * file is looked for, or the other way round. A process in another PID namespace looks
 * gone from this one: two containers must not write one shared folder at the same time.
 */
#ifndef GL_STALE_TEMPS_H
#define GL_STALE_TEMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Length of mkdtemp's random part (the XXXXXX). */
#define GL_TEMP_RANDOM_LEN 6

/* The process id in `name` when it is BEFORE<pid>AFTER<XXXXXX> exactly (pid in decimal,
 * no leading zero; XXXXXX six of [A-Za-z0-9], as mkstemp and mkdtemp make them), else 0:
 * a save's folder is ".graphlab-save." <pid> ".tmp." XXXXXX, an atomic file's
 * "<name>.tmp." <pid> "." XXXXXX. */
pid_t gl_temp_name_pid(const char *name, const char *before, const char *after);

/* Whether process `pid` no longer exists. */
bool gl_process_gone(pid_t pid);

/* The entries of `dir` named as temporaries (BEFORE<pid>AFTER<XXXXXX>) whose process is
 * gone, folders or regular files as `folders` says: their paths (DIR/NAME), malloc'd, in
 * a malloc'd array (*paths; NULL when none). Returns how many. */
size_t gl_stale_temps_find(const char *dir, const char *before, const char *after,
                           bool folders, char ***paths);

/* Removes the temporary files that gone processes left beside `path`: its own earlier
 * writes, killed (gl_atomic_open's "<path>.tmp.<pid>.XXXXXX"). */
void gl_stale_file_temps_remove(const char *path);

/* Removes folder `path` and the entries in it, without following links (a folder inside
 * it stays, and so then does `path`). */
void gl_stale_temp_remove(const char *path);

#endif
