/* fuzz_load.c — libFuzzer target: bytes → gl_model (as every command loads a model),
 * then freed. Finds what the loader does with a hostile file: memory errors, leaks,
 * unbounded allocation, failures without a message or not naming the file. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gl_model_free(fuzz_load(data, size));
    return 0;
}
