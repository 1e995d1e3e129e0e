/* tokens.h: the five special tokens and their fixed ids (docs/DESIGN.md §3),
 * shared by the text layer (which writes them) and the model (which treats
 * [PAD] and the kept-by-dropout specials apart). */
#ifndef BASE_TOKENS_H
#define BASE_TOKENS_H

enum { TOKEN_PAD = 0, TOKEN_UNK = 1, TOKEN_CLS = 2, TOKEN_SEP = 3, TOKEN_MASK = 4, N_SPECIAL_TOKENS = 5 };

/* "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", indexed by id. */
extern const char *const TOKEN_NAMES[N_SPECIAL_TOKENS];

#endif
