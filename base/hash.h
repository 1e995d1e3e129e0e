/* hash.h: FNV-1a, 64 bits: a fast checksum for checkpoints and for MPI
 * ranks to compare what they hold. Not cryptographic (sha256.h is). */
#ifndef BASE_HASH_H
#define BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_START 14695981039346656037ull

/* FNV-1a over len bytes, continuing from hash (start with HASH_START). */
static inline uint64_t hash_bytes(uint64_t hash, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

#endif
