/* sha256.h: SHA-256 (FIPS 180-4), for recording the data a run depends on. */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 64-character lowercase hex digest of data and a NUL into hex. */
void sha256_hex(const void *data, size_t len, char hex[65]);

/* The same digest over data that arrives in pieces (a stream read once). */
typedef struct {
    uint32_t state[8];
    unsigned char block[64];   /* bytes not yet compressed */
    size_t used;               /* of block */
    uint64_t len;              /* bytes so far */
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t len);
/* Ends the digest and writes its hex form; s must be initialised again before reuse. */
void sha256_final_hex(Sha256 *s, char hex[65]);

#endif
