/* matview.h: how the products see an operand (a strided view, so a
 * transpose is free) and the cache blocks they cut it into; shared by
 * matmul.h and the bfloat16 packing (bf16_pack.h). */
#ifndef MATVIEW_H
#define MATVIEW_H

/* Cache blocks: a KC x NC block of B stays in L2 while every row panel of
 * the task's A streams past it; one MR x KC panel of A stays in L1 while it
 * meets each NR-wide panel of that block. */
#define MM_KC 256
#define MM_NC 128
/* A product with K up to this runs as one k block: one pass over C. */
#define MM_KC_MAX 384

/* A strided view of a matrix operand: element (row, col) is
 * data[row * row_stride + col * col_stride]. Transposes are free. */
typedef struct {
    const float *data;
    long row_stride, col_stride;
} MatView;

static inline float mat_at(MatView m, long row, long col) {
    return m.data[row * m.row_stride + col * m.col_stride];
}

#endif
