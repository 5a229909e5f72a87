/* omp_wait.h — the OpenMP wait policy chosen by the machine's load (omp_wait.c). */
#ifndef GL_EXEC_OMP_WAIT_H
#define GL_EXEC_OMP_WAIT_H

#include <stdbool.h>
#include <stddef.h>

/* On a busy machine, unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT: executes the
 * program again (argv as main got it) with OpenMP's passive wait policy. Returns when it
 * does not. Call it first thing in main, for commands that run graphs. */
void gl_omp_wait_choose(char **argv);

/* true (a sentence in out) when graphlab chose the passive wait policy for this process
 * because the machine was busy: timings then are not those of a quiet machine. */
bool gl_omp_wait_note(char *out, size_t len);

#endif
