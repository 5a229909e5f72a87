/* limits.h — what one run may take: memory, loop iterations, and a way to stop it.
 *
 * A run (gl_exec_run, gl_eval_node) makes its gl_limits the current ones of its thread
 * while it runs (gl_limits_push ... gl_limits_pop). Meanwhile:
 *  - every tensor allocated on that thread (gl_tensor_new, whoever calls it: the executor,
 *    a kernel, the oneDNN backend) is checked before its bytes are allocated, alone and
 *    together with the tensor bytes the run holds alive, and counts as alive until freed;
 *  - Loop and Scan kernels count their iterations against a cap for the whole run;
 *  - the executor polls the cancellation flag between nodes, the loop kernels between
 *    iterations.
 * A refusal says which node, and for memory which value, its shape and its bytes. Memory
 * refused is GL_ERR_NOMEM, as when the allocation itself fails (every caller handles that
 * already); too many iterations GL_ERR_INPUT; a cancelled run GL_ERR_CANCELLED.
 *
 * Thread-local rather than passed along, because gl_tensor_new has no context to pass it
 * through; an arena the executor plans would charge its block through gl_limits_charge
 * the same way. Kernel scratch memory (malloc'd, not tensors) is not counted: it is
 * proportional to the tensors the kernel reads and writes, which are.
 */
#ifndef GL_LIMITS_H
#define GL_LIMITS_H

#include "ir/dtype.h"
#include "util/status.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gl_limits {
    /* Set by whoever runs. */
    size_t max_bytes;          /* one tensor, and all alive together; 0: no limit */
    uint64_t max_iterations;   /* Loop/Scan iterations in the whole run; 0: no cap */
    const atomic_bool *cancel; /* true: stop at the next node or iteration; may be NULL */
    /* How a user sets the two limits ("--max-memory"), for messages; NULL: not said. */
    const char *max_bytes_option, *max_iterations_option;
    /* Kept during the run. */
    size_t live_bytes, peak_bytes; /* tensor bytes allocated under these limits, alive */
    uint64_t iterations;
    const char *where;         /* the node running ("m.onnx: node 'c' (Conv)"), or NULL */
    gl_status refused;         /* GL_ERR_NOMEM once a check refused: a kernel may pass the
                                  failure on under another status; the executor restores it */
    /* Private. */
    struct gl_limits *prev;
    unsigned id;
} gl_limits;

/* Make l (its first five fields set, the rest zero) current on this thread until
 * gl_limits_pop(l); pushes nest. */
void gl_limits_push(gl_limits *l);
void gl_limits_pop(gl_limits *l);
gl_limits *gl_limits_current(void); /* NULL: no limits */

/* Half the physical memory, or of the address-space limit (ulimit -v) when that is
 * lower, at most 1 TiB: the default memory limit of a run. */
size_t gl_limits_default_bytes(void);

/* Before allocating a tensor of dt and dims: GL_OK when it fits in the current limits (or
 * there are none), else GL_ERR_NOMEM with "WHERE: WHAT float[2,3] (24 bytes) ..." (NULL
 * where: the running node; NULL what: "a tensor"). Dims that are not a valid shape pass:
 * allocating them fails with its own message. */
gl_status gl_limits_check_tensor(const char *where, const char *what, gl_dtype dt, int rank,
                                 const int64_t *dims);
/* The same for a node's output named `value` ("output 'y'" in the message, formatted
 * only on refusal: this runs for every output of every node). */
gl_status gl_limits_check_output(const char *where, const char *value, gl_dtype dt, int rank,
                                 const int64_t *dims);
/* One more Loop/Scan iteration of the node at `where`: GL_ERR_INPUT past the cap,
 * GL_ERR_CANCELLED when cancelled. */
gl_status gl_limits_iteration(const char *where);
/* GL_ERR_CANCELLED ("WHERE: cancelled") when the current run was cancelled. */
gl_status gl_limits_poll(const char *where);

/* For tensor storage (tensor.c): count `bytes` as alive under the current limits; the
 * returned id (0: none) goes back with the same bytes to gl_limits_uncharge when they are
 * freed, which counts only while those limits are pushed on the freeing thread. */
unsigned gl_limits_charge(size_t bytes);
void gl_limits_uncharge(unsigned id, size_t bytes);

#endif
