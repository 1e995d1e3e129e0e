#!/usr/bin/env python3
"""bpe_ref.py: a plain reference of the BPE tokenizer, written from the spec text
alone, to check text/bpe.c and bpe_learn.c against (tests/test_bpe_twin.sh).

Deliberately simple and slow: pairs are recounted from scratch before every
merge. Use it on small corpora only.

  bpe_ref.py FILE VOCAB_SIZE MIN_FREQ
      learns from FILE (one example a line; a line with a TAB holds its text
      after the first TAB) and prints what tests/tool_bpe prints:
          vocab N        then N lines, one symbol each, by id
          merges M       then M lines "left right"
          ids L          then L lines, the ids of each line, space-separated

  bpe_ref.py FILE VOCAB_SIZE MIN_FREQ P SEED MAX_LEN
      also BPE-dropout (--bpe-dropout, text/bpe_dropout.h) on the lines as
      [CLS] ids [SEP] rows of at most MAX_LEN, in batches of 7 lines (batch j
      at step j, row i at place 2i + 1), printed after "dropout L".

  The module's functions: learn(texts, vocab_size, min_freq) -> (vocab, merges),
  encode(vocab, merges, text) -> ids, dropout_tables and dropout_row below;
  and the ngram tokenizer's (docs/DESIGN.md §3), from its description alone:
  ngram_tokens(text), ngram_learn(texts, vocab_size, min_freq) -> vocab,
  ngram_encode(vocab, text) -> ids.
"""
import sys

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LITERALS = {"[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
UNK = 1
MARK = "\u2581"
SPACE = " \t\n\v\f\r"
PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def lower_ascii(s):
    """A-Z to a-z, nothing else."""
    return "".join(chr(ord(ch) + 32) if "A" <= ch <= "Z" else ch for ch in s)


def split(text):
    """The word tokenizer: a list of ("special", id) and ("piece", string)."""
    out = []
    i = 0
    while i < len(text):
        literal = next((s for s in LITERALS if text.startswith(s, i)), None)
        if literal:
            out.append(("special", LITERALS[literal]))
            i += len(literal)
        elif text[i] in SPACE:
            i += 1
        elif text[i] in PUNCT:
            out.append(("piece", lower_ascii(text[i])))
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in SPACE and text[j] not in PUNCT:
                j += 1
            out.append(("piece", lower_ascii(text[i:j])))
            i = j
    return out


def marked(piece):
    """The piece's code points, the first with the marker."""
    return [MARK + ch if k == 0 else ch for k, ch in enumerate(piece)]


def byte_key(symbol):
    return symbol.encode("utf-8")


def learn(texts, vocab_size, min_freq):
    piece_count = {}
    for text in texts:
        for kind, value in split(text):
            if kind == "piece":
                piece_count[value] = piece_count.get(value, 0) + 1

    base_count = {}
    for piece, n in piece_count.items():
        for sym in marked(piece):
            base_count[sym] = base_count.get(sym, 0) + n
    frequent = [s for s in base_count if base_count[s] >= min_freq]
    frequent.sort(key=lambda s: (-base_count[s], byte_key(s)))
    vocab = SPECIALS + frequent[: max(0, vocab_size - len(SPECIALS))]
    known = set(vocab)

    # Each distinct piece as a list of symbols, None standing for [UNK].
    words = [([s if s in known else None for s in marked(p)], n) for p, n in piece_count.items()]
    merges = []
    floor = max(2, min_freq)
    while len(vocab) < vocab_size:
        pair_count = {}
        for syms, n in words:
            for a, b in zip(syms, syms[1:]):
                if a is not None and b is not None:
                    pair_count[(a, b)] = pair_count.get((a, b), 0) + n
        if not pair_count:
            break
        best = min(pair_count, key=lambda p: (-pair_count[p], byte_key(p[0]), byte_key(p[1])))
        if pair_count[best] < floor:
            break
        merges.append(best)
        joined = best[0] + best[1]
        if joined not in known:
            vocab.append(joined)
            known.add(joined)
        for syms, _ in words:
            replace_pair(syms, best)
    return vocab, merges


def replace_pair(syms, pair):
    """Merges the pair's occurrences in place, left to right, without overlap."""
    out = []
    i = 0
    while i < len(syms):
        if i + 1 < len(syms) and syms[i] is not None and (syms[i], syms[i + 1]) == pair:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(syms[i])
            i += 1
    syms[:] = out


def encode(vocab, merges, text):
    index = {s: i for i, s in enumerate(vocab)}
    rank = {}
    for r, pair in enumerate(merges):
        rank.setdefault(tuple(pair), r)
    ids = []
    for kind, value in split(text):
        if kind == "special":
            ids.append(value)
            continue
        syms = [s if s in index and index[s] >= len(SPECIALS) else None for s in marked(value)]
        while True:
            ranks = [rank[(a, b)] for a, b in zip(syms, syms[1:]) if a is not None and b is not None and (a, b) in rank]
            if not ranks:
                break
            replace_pair(syms, merges[min(ranks)])
        ids.extend(UNK if s is None else index[s] for s in syms)
    return ids


MASK64 = (1 << 64) - 1
DROPOUT_SITE = 900003


def mix64(z):
    """SplitMix64: add the golden-ratio increment, then its finaliser."""
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def uniform(seed, step, site, index):
    """The keyed generator: mix the seed, then fold in the step, the site
    (times 0xD1B54A32D192ED03) and the index, mixing after each; the top 24
    of the 64 bits over 2^24."""
    h = mix64(seed & MASK64)
    h = mix64(h ^ step)
    h = mix64(h ^ ((site * 0xD1B54A32D192ED03) & MASK64))
    h = mix64(h ^ index)
    return (h >> 40) / 16777216.0


def dropout_tables(vocab, merges):
    """What dropout_row needs: ids by symbol, and each merged symbol's parts
    (the two symbols of the first merge whose concatenation it is)."""
    parts = {}
    for left, right in merges:
        parts.setdefault(left + right, (left, right))
    return {sym: i for i, sym in enumerate(vocab)}, parts


def dropout_row(vocab, tables, row, p, seed, step, place, max_len):
    """One row of ids ([CLS] ... [SEP], no padding) after BPE-dropout: each
    merged symbol is split, with probability p, into the two symbols of the
    first merge that made it, and those in turn, left before right; the
    token at position k draws its d-th time at index place*2^40 + k*2^20 + d;
    a split is kept only if its pieces fit in max_len with one place left for
    every later token. tables: dropout_tables(vocab, merges)."""
    index, parts = tables
    out = []
    for k, tok in enumerate(row):
        draws = [0]

        def pieces(sym):
            if sym in parts and index[sym] >= len(SPECIALS):
                d = draws[0]
                draws[0] += 1
                if uniform(seed, step, DROPOUT_SITE, (place << 40) + (k << 20) + d) < p:
                    return pieces(parts[sym][0]) + pieces(parts[sym][1])
            return [sym]

        split = pieces(vocab[tok])
        room = max_len - len(out) - (len(row) - k - 1)
        out.extend([index[sym] for sym in split] if len(split) <= room else [tok])
    return out


def ngram_tokens(text):
    """Each word token as "<token>", then its 2- to 5-grams of code points,
    shortest first, left to right, without "<token>" again; specials as ids."""
    out = []
    for kind, value in split(text):
        if kind == "special":
            out.append(value)
            continue
        bounded = "<" + value + ">"
        out.append(bounded)
        for n in range(2, 6):
            if n < len(bounded):
                out += [bounded[i:i + n] for i in range(len(bounded) - n + 1)]
    return out


def ngram_learn(texts, vocab_size, min_freq):
    count = {}
    for text in texts:
        for tok in ngram_tokens(text):
            if isinstance(tok, str):
                count[tok] = count.get(tok, 0) + 1
    kept = sorted((t for t in count if count[t] >= min_freq), key=lambda t: (-count[t], byte_key(t)))
    return SPECIALS + (kept[: vocab_size - len(SPECIALS)] if vocab_size > 0 else kept)


def ngram_encode(vocab, text):
    ids = {tok: i for i, tok in enumerate(vocab)}
    return [t if isinstance(t, int) else ids.get(t, UNK) for t in ngram_tokens(text)]


def read_examples(path):
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.split("\t", 1)[1] if "\t" in line else line for line in lines]


def main(argv):
    if len(argv) not in (4, 7):
        sys.stderr.write("usage: bpe_ref.py FILE VOCAB_SIZE MIN_FREQ [P SEED MAX_LEN]\n")
        return 2
    texts = read_examples(argv[1])
    vocab, merges = learn(texts, int(argv[2]), int(argv[3]))
    out = ["vocab %d" % len(vocab)] + vocab
    out.append("merges %d" % len(merges))
    out += ["%s %s" % pair for pair in merges]
    out.append("ids %d" % len(texts))
    out += [" ".join(str(i) for i in encode(vocab, merges, t)) for t in texts]
    if len(argv) == 7 and int(argv[6]) >= 3:
        p, seed, max_len = float(argv[4]), int(argv[5]), int(argv[6])
        out.append("dropout %d" % len(texts))
        tables = dropout_tables(vocab, merges)
        for i, t in enumerate(texts):
            row = [2] + encode(vocab, merges, t)[:max_len - 2] + [3]
            split = dropout_row(vocab, tables, row, p, seed, i // 7, 2 * (i % 7) + 1, max_len)
            out.append(" ".join(str(x) for x in split))
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
