/* inputs.h — inputs for a run when no test data set is given: seeded random tensors,
 * sized from the graph's declared input shapes, so that two runs, two backends and two
 * commands (run, profile, the workbench) see the same numbers.
 */
#ifndef GL_INPUTS_H
#define GL_INPUTS_H

#include "onnx/dataset.h"

/* A size for a symbolic dimension ("--dim seq=16"). */
typedef struct gl_dim_value {
    char *name; /* owned by whoever holds the array */
    int64_t value;
} gl_dim_value;

/* The generator's seed ("graph" in ASCII), fixed: every run sees the same inputs; `run`
 * names it when it draws them. */
#define GL_RANDOM_INPUTS_SEED 0x6772617068ull

/* Random data for every graph input without a default (inputs with a default stay
 * NULL: the executor uses the default). Floats are standard normal, integers small and
 * non-negative (they are often indices or counts), bools 0/1; the generator's seed is
 * fixed. A symbolic or unknown dim takes its size from `dims` (the last entry naming it
 * wins), else 1. Every input is refused before it is allocated when it, or all of them
 * together, would take more than max_memory bytes (0: gl_limits_default_bytes()), naming
 * the input: a few bytes of model can declare a [16384, 16384] input. GL_ERR_INPUT when
 * the type cannot be drawn (strings, sequences, no shape): then give a data set. On
 * failure *d is empty. */
gl_status gl_dataset_random(const gl_model *m, const gl_dim_value *dims, size_t n_dims,
                            size_t max_memory, gl_dataset *d);
/* The sizes gl_dataset_random gives the inputs' dims that are not numbers and that `dims`
 * does not size, so that no run takes 1 silently: "N=1, seq=1" (each name once, in
 * input order), an unnamed one by its input and axis ("'x'[0]=1"); "" when none.
 * Returns how many it names (all of them, even when buf is too short for the text). */
size_t gl_dataset_random_defaults(const gl_model *m, const gl_dim_value *dims, size_t n_dims,
                                  char *buf, size_t len);

#endif
