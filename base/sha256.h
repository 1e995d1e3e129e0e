/* sha256.h: SHA-256 (FIPS 180-4), for recording the data a run depends on. */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 64-character lowercase hex digest of data and a NUL into hex. */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
