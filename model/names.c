/* names.c: the config's enums (activation, norm placement, pooling,
 * positional encoding, precision) to and from the names the options and the checkpoint
 * metadata use. */
#include "model.h"

#include <string.h>

static const char *const ACTIVATION_NAMES[] = {"relu", "gelu"};
static const char *const NORM_NAMES[] = {"post", "pre"};
static const char *const POOL_NAMES[] = {"mean", "cls"};
static const char *const PE_NAMES[] = {"sinusoidal", "learned", "none"};
static const char *const PRECISION_NAMES[] = {"fp32", "bf16", "amx"};

static int parse_name(const char *s, const char *const *names, int count) {
    for (int i = 0; s && i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

const char *activation_name(Activation v) { return ACTIVATION_NAMES[v]; }
const char *norm_name(NormPlacement v) { return NORM_NAMES[v]; }
const char *pool_name(Pooling v) { return POOL_NAMES[v]; }
const char *pe_name(PosEncoding v) { return PE_NAMES[v]; }
const char *precision_name(Precision v) { return PRECISION_NAMES[v]; }

#define DEFINE_PARSE(fn, type, names) \
    int fn(const char *s, type *out) { \
        int i = parse_name(s, names, (int)(sizeof names / sizeof *names)); \
        if (i < 0) return -1; \
        *out = (type)i; \
        return 0; \
    }
DEFINE_PARSE(activation_parse, Activation, ACTIVATION_NAMES)
DEFINE_PARSE(norm_parse, NormPlacement, NORM_NAMES)
DEFINE_PARSE(pool_parse, Pooling, POOL_NAMES)
DEFINE_PARSE(pe_parse, PosEncoding, PE_NAMES)
DEFINE_PARSE(precision_parse, Precision, PRECISION_NAMES)
