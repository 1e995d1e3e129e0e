/* rng.h: a counter-based generator. Every random number is a pure function
 * of its key (seed, step, site, index), so results never depend on the order
 * or the thread in which they are drawn. Mixing is SplitMix64's finaliser. */
#ifndef RNG_H
#define RNG_H

#include <stdint.h>

/* rng_mix64 without its last step, z ^ (z >> 31), which leaves the top 31
 * bits as they are: the same top 31 bits, two operations fewer, for draws
 * of which only the top bits are read (the dropout test). */
static inline uint64_t rng_mix64_high(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return (z ^ (z >> 27)) * 0x94D049BB133111EBull;
}

static inline uint64_t rng_mix64(uint64_t z) {
    z = rng_mix64_high(z);
    return z ^ (z >> 31);
}

/* The part of a key that many draws share: (seed, step, site) mixed once.
 * rng_bits_at(rng_stream(seed, step, site), index) == rng_bits(seed, step,
 * site, index), for loops that draw many indices of one stream. */
static inline uint64_t rng_stream(uint64_t seed, uint64_t step, uint64_t site) {
    uint64_t h = rng_mix64(seed);
    h = rng_mix64(h ^ step);
    return rng_mix64(h ^ (site * 0xD1B54A32D192ED03ull));
}

static inline uint64_t rng_bits_at(uint64_t stream, uint64_t index) { return rng_mix64(stream ^ index); }

/* The top 31 bits of rng_bits_at(stream, index); the low 33 are not those. */
static inline uint64_t rng_high_bits_at(uint64_t stream, uint64_t index) { return rng_mix64_high(stream ^ index); }

/* 64 random bits for key (seed, step, site, index). */
static inline uint64_t rng_bits(uint64_t seed, uint64_t step, uint64_t site, uint64_t index) {
    return rng_bits_at(rng_stream(seed, step, site), index);
}

/* Uniform float in [0,1) with 24 random bits. */
static inline float rng_uniform(uint64_t seed, uint64_t step, uint64_t site, uint64_t index) {
    return (float)(rng_bits(seed, step, site, index) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform double in [0,1) with 53 random bits. */
static inline double rng_uniform_double(uint64_t seed, uint64_t step, uint64_t site, uint64_t index) {
    return (double)(rng_bits(seed, step, site, index) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
