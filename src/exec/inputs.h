/* inputs.h — inputs for a run when no test data set is given: seeded random tensors,
 * sized from the graph's declared input shapes, so that two runs, two backends and two
 * commands (run, profile, the workbench) see the same numbers.
 */
#ifndef GL_INPUTS_H
#define GL_INPUTS_H

#include "exec/compare.h"

/* A size for a symbolic dimension ("--dim seq=16"). */
typedef struct gl_dim_value {
    char *name; /* owned by whoever holds the array */
    int64_t value;
} gl_dim_value;

/* Random data for every graph input without a default (inputs with a default stay
 * NULL: the executor uses the default). Floats are standard normal, integers small and
 * non-negative (they are often indices or counts), bools 0/1; the generator's seed is
 * fixed. A symbolic dim takes its size from `dims` (the last entry naming it wins).
 * GL_ERR_INPUT naming the input and the dim when a size is unknown, or the type cannot
 * be drawn (strings, sequences): then give a data set. On failure *d is empty. */
gl_status gl_dataset_random(const gl_model *m, const gl_dim_value *dims, size_t n_dims,
                            gl_dataset *d);

#endif
