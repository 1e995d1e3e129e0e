/* param_blocks.h: whole-parameter passes (the gradient norm) cut into a
 * fixed number of contiguous blocks, so that any sum over them has an order
 * independent of the thread count. Used by model/optimizer.c. */
#ifndef MODEL_PARAM_BLOCKS_H
#define MODEL_PARAM_BLOCKS_H

#include <stddef.h>

#define PARAM_BLOCKS 64

/* Block `block` of n parameters: [*begin, *end). */
static inline void param_block(size_t n, int block, size_t *begin, size_t *end) {
    *begin = n * block / PARAM_BLOCKS;
    *end = n * (block + 1) / PARAM_BLOCKS;
}

#endif
