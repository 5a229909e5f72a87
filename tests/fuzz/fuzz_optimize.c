/* fuzz_optimize.c — libFuzzer target: what loads goes through `--passes all` as the
 * workbench runs it (a snapshot per step, the diffs between steps), and the result is
 * serialized and loaded back, as `optimize` saves it. Finds passes that crash, leak,
 * loop, allocate without bound, break the graph (verified after every pass) or write a
 * model that cannot be read back. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gl_model *m = fuzz_load(data, size);
    if (m)
        gl_pipeline_free(fuzz_optimize(m));
    return 0;
}
