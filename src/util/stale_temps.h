/* stale_temps.h — temporary folders that a killed process left behind, told apart by
 * name and removed by the next writer.
 *
 * A signal that can be caught removes a write's temporaries (safe_write.h). SIGKILL, the
 * OOM killer or a power cut cannot be caught: the temporary folder of a save stays, with
 * the megabytes written into it, and nothing would ever remove it. A temporary folder
 * named ".STEM.<pid>.tmp.XXXXXX" (what gl_temp_dir_open makes of the destination
 * "DIR/STEM.<pid>") says which process made it; once that process is gone nobody will
 * finish it, and the next writer into DIR may remove it.
 *
 * Never taken for stale: a name not exactly of that form; a temporary whose process
 * exists (kill(pid, 0) succeeds, or fails with EPERM: another user's); anything that is
 * not a folder. A process in another PID namespace looks gone from this one: two
 * containers must not write into one shared folder at the same time.
 */
#ifndef GL_STALE_TEMPS_H
#define GL_STALE_TEMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Length of mkdtemp's random part (the XXXXXX). */
#define GL_TEMP_RANDOM_LEN 6

/* The process id in `name` when it is ".STEM.<pid>.tmp.XXXXXX" exactly (pid in decimal,
 * no leading zero; XXXXXX six of [A-Za-z0-9], as mkdtemp makes them), else 0. */
pid_t gl_temp_name_pid(const char *name, const char *stem);

/* Whether process `pid` no longer exists. */
bool gl_process_gone(pid_t pid);

/* The folders in `dir` named as temporaries of `stem` whose process is gone: their paths
 * (DIR/NAME), malloc'd, in a malloc'd array (*paths; NULL when none). Returns how many. */
size_t gl_stale_temps_find(const char *dir, const char *stem, char ***paths);

/* Removes folder `path` and the entries in it, without following links (a folder inside
 * it stays, and so then does `path`). */
void gl_stale_temp_remove(const char *path);

#endif
