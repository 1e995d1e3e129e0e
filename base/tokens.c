/* tokens.c: the special tokens' names (see tokens.h). */
#include "base/tokens.h"

const char *const TOKEN_NAMES[N_SPECIAL_TOKENS] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
