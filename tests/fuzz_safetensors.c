/* fuzz_safetensors.c: libFuzzer target for st_parse and json_parse on arbitrary bytes. */
#include "formats/json.h"
#include "formats/safetensors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];

    /* The whole input as a JSON document (exactly sized copy: no NUL after it). */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    json_free(json_parse(text, size, err, sizeof err));
    free(text);

    /* The whole input as a safetensors file; st_parse owns and frees the copy. */
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    StFile f;
    if (st_parse(buf, size, &f, err, sizeof err) == 0) {
        /* touch every tensor byte and metadata string so overreads show up */
        unsigned sum = 0;
        for (int i = 0; i < f.n_tensors; i++)
            for (size_t j = 0; j < f.tensors[i].n_bytes; j++) sum += f.tensors[i].data[j];
        for (int i = 0; i < f.n_meta; i++) sum += (unsigned)strlen(f.meta_keys[i]) + (unsigned)strlen(f.meta_values[i]);
        if (f.n_tensors > 0 && f.tensors[0].dtype == ST_F32) {
            float *dst = malloc(f.tensors[0].n_bytes + 1);
            if (dst) st_read_f32(&f, f.tensors[0].name, dst, f.tensors[0].ndim, f.tensors[0].shape, err, sizeof err);
            free(dst);
        }
        (void)st_meta(&f, "format");
        (void)sum;
        st_free(&f);
    }
    return 0;
}
