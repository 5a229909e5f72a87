/* rng.h — a small seeded random generator: splitmix64.
 *
 * The same seed gives the same numbers on every machine and libc (rand() does not), so
 * seeded inputs, random ops and randomized tests are reproducible. Not for secrets. */
#ifndef GL_RNG_H
#define GL_RNG_H

#include <stdint.h>

typedef struct gl_rng {
    uint64_t state;
} gl_rng;

/* The next 64 random bits. */
static inline uint64_t gl_rng_next(gl_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits, as many as a double holds. */
static inline double gl_rng_unit(gl_rng *r)
{
    return (double)(gl_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif
