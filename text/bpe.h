/* bpe.h: the byte-pair-encoding tokenizer (the `bpe` tokenizer of the spec).
 *
 * Pieces are the word tokenizer's tokens: literal [CLS]/[SEP]/[MASK] are cut
 * out as specials, the rest is split on ASCII whitespace with A-Z lower-cased
 * and each ASCII punctuation character a token of its own. A piece is a
 * sequence of units (UTF-8 code points), its first one marked with a leading
 * U+2581 "▁": `good` starts as "▁g" "o" "o" "d". A symbol is the
 * concatenation of its units' bytes, marker included.
 *
 * Units: a well-formed UTF-8 sequence is one unit (lead byte C2-F4 and its
 * continuation bytes); any other byte is a unit of its own. Training text is
 * validated by the caller, so that case only keeps hostile input from
 * crashing or looping. Pieces must not hold NUL bytes (bpe_counter_add
 * refuses them; bpe_encode_piece maps a unit holding one to [UNK]).
 *
 * "Byte order" is memcmp order on the symbols' bytes, a prefix first.
 *
 * Ids: 0..4 the specials [PAD] [UNK] [CLS] [SEP] [MASK], then the base
 * symbols by descending count (ties in byte order), then the merged symbols
 * in learned order. A Bpe is read-only once built: any number of threads may
 * encode with one Bpe at the same time. No function keeps global state.
 */
#ifndef TEXT_BPE_H
#define TEXT_BPE_H

#include <stddef.h>

#include "base/tokens.h"

/* The specials' fixed ids (base/tokens.h), under this module's names. */
#define BPE_PAD TOKEN_PAD
#define BPE_UNK TOKEN_UNK
#define BPE_CLS TOKEN_CLS
#define BPE_SEP TOKEN_SEP
#define BPE_MASK TOKEN_MASK
#define BPE_N_SPECIAL N_SPECIAL_TOKENS

typedef struct Bpe Bpe;               /* a vocabulary and its merges (opaque) */
typedef struct BpeCounter BpeCounter; /* distinct pieces with their counts (opaque) */

/* ---- Counting the training pieces ---- */

/* A new empty counter, or NULL when out of memory. */
BpeCounter *bpe_counter_new(void);
void bpe_counter_free(BpeCounter *c);

/* Counts one occurrence of piece (len bytes of plain UTF-8, no marker, as the
 * word tokenizer gives it). An empty piece is ignored. Returns 0, or -1 when
 * out of memory or the piece holds a NUL byte. */
int bpe_counter_add(BpeCounter *c, const char *piece, size_t len);
/* Same, count occurrences at once (counts summed over MPI ranks). */
int bpe_counter_add_count(BpeCounter *c, const char *piece, size_t len, long long count);

/* Splits NUL-terminated text with the word rule (literal specials skipped)
 * and counts every piece. Returns 0, or -1 when out of memory. */
int bpe_counter_add_text(BpeCounter *c, const char *text);

/* ---- Building ---- */

/* Learns merges from the counted pieces until the vocabulary has vocab_size
 * symbols (the 5 specials included) or the best pair count is below
 * max(2, min_freq); base symbols seen fewer than min_freq times are [UNK].
 * vocab_size must be at least 5, min_freq at least 0 (0 acts as 1).
 * Returns 0 with *out set, or -1 with a message in err and *out NULL. */
int bpe_learn(const BpeCounter *c, int vocab_size, int min_freq, Bpe **out, char *err, size_t errlen);

/* Rebuilds a Bpe from stored lists: vocab[id] the symbol strings (the first
 * five the specials' names, no duplicates, none empty), merges[i] = {left,
 * right} in learned order. Each merge's left and right must be non-special
 * symbols that exist by then (a single marked or unmarked unit, or the result
 * of an earlier merge), and their concatenation must be a non-special symbol;
 * every other symbol must be a single unit or made by some merge. A pair
 * listed twice is allowed (learning can record a pair again when a merge
 * whose result already existed recreates it); its first rank counts.
 * Returns 0 with *out set, or -1 with a message in err and *out NULL. */
int bpe_from_lists(const char *const *vocab, int n_vocab, const char *const (*merges)[2], int n_merges, Bpe **out,
                   char *err, size_t errlen);

void bpe_free(Bpe *b);

/* ---- Reading ---- */

int bpe_vocab_size(const Bpe *b);                 /* symbols, specials included */
const char *bpe_symbol(const Bpe *b, int id);     /* NUL-terminated; NULL when id is out of range */
int bpe_n_merges(const Bpe *b);
/* Merge i's left and right symbols (learned order); 0, or -1 when i is out of range. */
int bpe_merge(const Bpe *b, int i, const char **left, const char **right);
/* The id of the symbol of len bytes at s, or BPE_UNK when there is none. */
int bpe_lookup(const Bpe *b, const char *s, size_t len);

/* ---- Encoding ---- */

/* Encodes one piece (len bytes, used as given: no lower-casing, no special
 * cutting): its marked units, each not in the vocabulary [UNK] (which never
 * merges), then every non-overlapping occurrence, left to right, of the
 * adjacent pair learned first is merged, until no adjacent pair has a merge.
 * Writes at most cap ids and returns how many the piece has in all (as
 * snprintf does: more than cap means ids holds the first cap of them);
 * -1 on bad arguments or out of memory. An empty piece has 0 ids. */
int bpe_encode_piece(const Bpe *b, const char *piece, size_t len, int *ids, int cap);

/* Splits NUL-terminated text with the word rule and encodes every piece;
 * a literal [CLS], [SEP] or [MASK] is its special id. No [CLS]/[SEP] is
 * added around the text. Returns the total as bpe_encode_piece does. */
int bpe_encode_text(const Bpe *b, const char *text, int *ids, int cap);

#endif
