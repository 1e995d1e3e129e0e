/* corpus.c: reads and encodes the data of a training run (see corpus.h). */
#include "run/corpus.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "base/strmap.h"
#include "run/saved_model.h"
#include "run/schedule.h"
#include "text/split.h"

#define LEAK_EXAMPLES 3
#define AUTO_COVERAGE 0.99   /* --max-len auto holds this share of the training sequences */
#define AUTO_MULTIPLE 8      /* ... rounded up to a multiple of this */
#define AUTO_MAX_LEN 256     /* ... and at most this */
#define UNK_WARN_SHARE 0.5   /* warn when more of the validation tokens are [UNK] */

/* A text of a validation or test set, for the leakage check over ranks. */
typedef struct {
    uint64_t hash;   /* dataset_text_hash */
    int line;
} TextKey;

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Exact duplicates (by a 64-bit hash of the trimmed text) of training texts
 * in other, both held in shares over the ranks: every rank gets other's
 * keys in order, marks those in its training share, and the marks are summed. */
static int report_leakage(const DistContext *dist, const TextDataset *train, const TextDataset *other,
                          const char *what, FILE *log, char *err, size_t errlen) {
    TextKey *mine = calloc(other->n ? (size_t)other->n : 1, sizeof *mine);
    uint64_t *seen = malloc(sizeof(uint64_t) * (train->n ? train->n : 1));
    if (!mine || !seen) {
        free(mine);
        free(seen);
        return fail(err, errlen, ERR_RUNTIME, "out of memory checking leakage");
    }
    for (int i = 0; i < other->n; i++) {
        mine[i].hash = dataset_text_hash(other->examples[i].text);
        mine[i].line = other->examples[i].line;
    }
    for (int i = 0; i < train->n; i++) seen[i] = dataset_text_hash(train->examples[i].text);
    qsort(seen, (size_t)train->n, sizeof *seen, compare_u64);
    char *bytes = NULL;
    long n_bytes = 0;
    int rc = dist_gather_bytes(dist, (const char *)mine, (long)sizeof(TextKey) * other->n, &bytes, &n_bytes, err,
                               errlen);
    free(mine);
    int n = (int)(n_bytes / (long)sizeof(TextKey));
    double *marks = rc == 0 ? calloc((size_t)n + 1, sizeof *marks) : NULL;
    if (!marks) {
        free(seen);
        free(bytes);
        return rc != 0 ? ERR_RUNTIME : fail(err, errlen, ERR_RUNTIME, "out of memory checking leakage");
    }
    const TextKey *keys = (const TextKey *)bytes;
    for (int i = 0; i < n; i++)
        marks[i] = bsearch(&keys[i].hash, seen, (size_t)train->n, sizeof *seen, compare_u64) != NULL;
    free(seen);
    dist_sum_doubles(dist, marks, n);
    int count = 0, lines[LEAK_EXAMPLES];
    for (int i = 0; i < n; i++) {
        if (marks[i] <= 0.0) continue;
        if (count < LEAK_EXAMPLES) lines[count] = keys[i].line;
        count++;
    }
    if (count > 0) {
        fprintf(log, "warning: leakage: %d %s example%s also in the training data (%s lines", count, what,
                count == 1 ? " is" : "s are", other->path);
        for (int i = 0; i < count && i < LEAK_EXAMPLES; i++) fprintf(log, "%s%d", i ? ", " : " ", lines[i]);
        fprintf(log, "%s)\n", count > LEAK_EXAMPLES ? ", ..." : "");
    }
    free(marks);
    free(bytes);
    return EXIT_OK;
}

/* Encodes this rank's share of d; the truncation note counts every rank's. */
static int encode(const DistContext *dist, const TextDataset *d, const Corpus *c, int max_len, EncodedDataset *out,
                  const char *what, FILE *log, char *err, size_t errlen) {
    /* pretraining texts have no classes: no labels to map */
    const LabelSet *labels = c->labels.n > 0 ? &c->labels : NULL;
    int rc = encode_dataset(d, &c->vocab, c->tokenizer, labels, max_len, out, err, errlen);
    if (rc != EXIT_OK) return rc;
    double truncated = out->n_truncated;
    dist_sum_doubles(dist, &truncated, 1);
    int n = d->total;
    if (truncated > 0 && log)
        fprintf(log, "note: %.0f of %d %s example%s %s longer than --max-len %d and %s truncated\n", truncated, n, what,
                n == 1 ? "" : "s", truncated == 1 ? "is" : "are", max_len, truncated == 1 ? "was" : "were");
    return 0;
}

/* --max-len auto: the smallest multiple of 8 that holds 99% of the training
 * sequences ([CLS] and [SEP] included), at most 256. The lengths are
 * counted in a histogram (all longer than 256 in one bin) summed over ranks. */
static int auto_max_len(const DistContext *dist, const Corpus *c, int *max_len, char *err, size_t errlen) {
    enum { BINS = AUTO_MAX_LEN + 2 };
    double counts[BINS] = {0};
    for (int i = 0; i < c->train.n; i++) {
        int length = encode_length(c->train.examples[i].text, &c->vocab, c->tokenizer);
        if (length < 0) return fail(err, errlen, ERR_RUNTIME, "out of memory measuring the training sequences");
        counts[length > AUTO_MAX_LEN ? AUTO_MAX_LEN + 1 : length] += 1.0;
    }
    dist_sum_doubles(dist, counts, BINS);
    int held = (int)ceil(AUTO_COVERAGE * c->train.total);
    if (held < 1) held = 1;
    int need = AUTO_MAX_LEN + 1;
    double below = 0.0;
    for (int length = 0; length < BINS; length++) {
        below += counts[length];
        if (below >= held) {
            need = length;
            break;
        }
    }
    int chosen = (need + AUTO_MULTIPLE - 1) / AUTO_MULTIPLE * AUTO_MULTIPLE;
    *max_len = chosen > AUTO_MAX_LEN ? AUTO_MAX_LEN : chosen;
    return EXIT_OK;
}

/* Share of the non-special validation tokens that are [UNK], over every rank's share. */
static double unk_share(const DistContext *dist, const EncodedDataset *d) {
    double sums[2] = {0, 0};   /* [UNK], all */
    for (int i = 0; i < d->n; i++)
        for (int t = 0; t < d->lengths[i]; t++) {
            int id = d->ids[d->offsets[i] + t];
            if (id == TOKEN_CLS || id == TOKEN_SEP) continue;
            sums[1] += 1.0;
            sums[0] += id == TOKEN_UNK;
        }
    dist_sum_doubles(dist, sums, 2);
    return sums[1] > 0 ? sums[0] / sums[1] : 0.0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The label set of d over every rank's share: each rank's distinct labels
 * gathered, sorted in byte order, duplicates dropped: labels_build over the
 * whole. No examples anywhere leaves it empty. */
static int shared_labels(const DistContext *dist, const TextDataset *d, LabelSet *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    LabelSet mine;
    int rc = labels_build(&mine, d);
    if (rc == ERR_INPUT && d->n == 0) memset(&mine, 0, sizeof mine);
    else if (rc != EXIT_OK) return fail(err, errlen, ERR_RUNTIME, "out of memory collecting the labels");
    size_t bytes = 0;
    for (int k = 0; k < mine.n; k++) bytes += strlen(mine.names[k]) + 1;
    char *packed = malloc(bytes + 1), *all = NULL;
    long n_all = 0;
    for (size_t at = 0, k = 0; packed && k < (size_t)mine.n; k++) {
        size_t len = strlen(mine.names[k]) + 1;
        memcpy(packed + at, mine.names[k], len);
        at += len;
    }
    rc = packed ? dist_gather_bytes(dist, packed, (long)bytes, &all, &n_all, err, errlen) : -1;
    free(packed);
    labels_free(&mine);
    if (rc != 0) return fail(err, errlen, ERR_RUNTIME, "out of memory collecting the labels");
    int n = 0;
    for (long i = 0; i < n_all; i++) n += all[i] == '\0';
    char **names = malloc(sizeof(char *) * (n ? n : 1));
    if (!names) {
        free(all);
        return fail(err, errlen, ERR_RUNTIME, "out of memory collecting the labels");
    }
    for (long i = 0, k = 0; i < n_all; i += (long)strlen(all + i) + 1) names[k++] = all + i;
    qsort(names, (size_t)n, sizeof *names, compare_names);
    int unique = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[unique - 1]) != 0) names[unique++] = names[i];
    rc = unique ? labels_from_names(out, names, unique) : EXIT_OK;
    free(names);
    free(all);
    return rc == EXIT_OK ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "out of memory collecting the labels");
}

/* counts = the sum of every rank's mine: each entry packed as its count,
 * then its key and NUL, gathered in rank order. 0, or -1 when out of memory. */
static int sum_counts(const DistContext *dist, const StrMap *mine, StrMap *counts, char *err, size_t errlen) {
    size_t bytes = 0;
    for (int e = 0; e < mine->n; e++) bytes += sizeof(long) + mine->key_lens[e] + 1;
    char *packed = malloc(bytes + 1), *gathered = NULL;
    long n_gathered = 0;
    for (size_t at = 0, e = 0; packed && e < (size_t)mine->n; e++) {
        memcpy(packed + at, &mine->counts[e], sizeof(long));
        memcpy(packed + at + sizeof(long), mine->keys[e], mine->key_lens[e] + 1);
        at += sizeof(long) + mine->key_lens[e] + 1;
    }
    int rc = packed ? dist_gather_bytes(dist, packed, (long)bytes, &gathered, &n_gathered, err, errlen) : -1;
    free(packed);
    for (long at = 0; rc == 0 && at < n_gathered;) {
        long count;
        memcpy(&count, gathered + at, sizeof count);
        const char *key = gathered + at + sizeof(long);
        size_t len = strlen(key);
        int e = strmap_add(counts, key, len);
        if (e < 0) rc = -1;
        else counts->counts[e] += count;
        at += (long)(sizeof(long) + len + 1);
    }
    free(gathered);
    return rc;
}

/* The vocabulary from the training shares: each rank's token (or bpe piece)
 * counts summed over the ranks, then built as vocab_build builds it. */
static int shared_vocab(const DistContext *dist, Corpus *c, const Options *o, char *err, size_t errlen) {
    StrMap mine, all;
    memset(&mine, 0, sizeof mine);
    memset(&all, 0, sizeof all);
    int rc = vocab_count(&mine, c->tokenizer, &c->train);
    if (rc == 0 && dist->size > 1) rc = sum_counts(dist, &mine, &all, err, errlen);
    if (rc == 0)
        rc = vocab_from_counts(&c->vocab, c->tokenizer, dist->size > 1 ? &all : &mine, o->vocab_size, o->min_freq,
                               err, errlen);
    else
        rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory building the vocabulary", c->train.path);
    /* the five specials alone: no token of the text made it in */
    if (rc == 0 && c->vocab.size <= 5) {
        if (o->min_freq > 1)
            rc = fail(err, errlen, ERR_INPUT, "%s: the vocabulary holds no token of the text: none occurs --min-freq "
                      "%d times; lower --min-freq", c->train.path, o->min_freq);
        else
            rc = fail(err, errlen, ERR_INPUT, "%s: the vocabulary holds no token of the text: the texts hold only "
                      "special tokens ([CLS], [MASK], ...)", c->train.path);
    }
    strmap_free(&mine);
    strmap_free(&all);
    return rc;
}

/* The --val-split of data held in shares: every rank learns every example's
 * class (gathered in order), makes the one-process choice
 * (dataset_split_choose) and keeps both parts of its share. Stratified by
 * classes; with classes NULL (pretraining, whose labels mean nothing) every
 * example is of the one class TEXTS_LABEL: a seeded random split of the whole. */
static int shared_split(const DistContext *dist, const TextDataset *all, const LabelSet *classes, double frac,
                        uint64_t seed, TextDataset *train, TextDataset *val, char *err, size_t errlen) {
    memset(train, 0, sizeof *train);
    memset(val, 0, sizeof *val);
    if (!(frac > 0.0 && frac < 1.0))
        return fail(err, errlen, ERR_INPUT, "--val-split must be between 0 and 1 (exclusive), got %g", frac);
    int n = all->total;
    if (n < 2) return fail(err, errlen, ERR_INPUT, "%s: too few examples to split off validation", all->path);
    int *mine = malloc(sizeof(int) * (all->n ? all->n : 1)), *ids = malloc(sizeof(int) * n);
    const char **labels = malloc(sizeof(char *) * n);
    unsigned char *is_val = malloc((size_t)n);
    int rc = mine && ids && labels && is_val ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "%s: out of memory", all->path);
    if (rc == EXIT_OK) {
        if (classes) {
            for (int i = 0; i < all->n; i++) mine[i] = labels_index(classes, all->examples[i].label);
            dist_gather_ints(dist, mine, all->n, ids);
        }
        for (int i = 0; i < n; i++) labels[i] = classes ? classes->names[ids[i]] : TEXTS_LABEL;
        int n_val = dataset_split_choose(labels, n, frac, seed, is_val);
        if (n_val < 0)
            rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", all->path);
        else if (n_val == 0)
            rc = fail(err, errlen, ERR_INPUT, "%s: " SPLIT_NONE_WHY, all->path);
        else if (dataset_subset(all, is_val + all->first, 0, train) || dataset_subset(all, is_val + all->first, 1, val))
            rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", all->path);
        if (rc == EXIT_OK) {   /* where this rank's shares of the two parts start, and their sizes */
            int val_before = 0;
            for (int i = 0; i < all->first; i++) val_before += is_val[i];
            val->first = val_before;
            val->total = n_val;
            train->first = all->first - val_before;
            train->total = n - n_val;
        }
    }
    if (rc != EXIT_OK) {
        dataset_free(train);
        dataset_free(val);
    }
    free(mine);
    free(ids);
    free(labels);
    free(is_val);
    return rc;
}

/* Labels that look like text: more classes than half the examples (of 10
 * or more: two examples of two classes are a plausible tiny dataset). Said
 * before the validation split, which such data would make fail. */
static void warn_label_column(const LabelSet *labels, const TextDataset *all, FILE *log) {
    if (all->total >= 10 && labels->n > all->total / 2)
        fprintf(log, "warning: the label column holds %d distinct values for %d examples: are the columns swapped? "
                "(each line is label<TAB>text)\n", labels->n, all->total);
    corpus_warn_header(all, labels, log);
}

/* s without one pair of double quotes around it: its start, length in *n. */
static const char *unquoted(const char *s, size_t *n) {
    *n = strlen(s);
    if (*n >= 2 && s[0] == '"' && s[*n - 1] == '"') {
        *n -= 2;
        return s + 1;
    }
    return s;
}

/* A label with one example where another has 10 or more (a typo, or a
 * header row read as an example; at most 3 such labels: a long tail of
 * rare classes is no mistake), and labels that differ only in case or
 * surrounding quotes: each becomes a class of its own, so it is said.
 * Counts are over all ranks (every rank runs the same collectives). */
static void warn_odd_labels(const DistContext *dist, const LabelSet *labels, const TextDataset *all, FILE *log) {
    int C = labels->n, shown = 0, single = 0;
    double *counts = calloc((size_t)C, sizeof *counts), most = 0;
    if (!counts) return;
    for (int i = 0; i < all->n; i++) counts[labels_index(labels, all->examples[i].label)] += 1;
    dist_sum_doubles(dist, counts, C);
    for (int k = 0; k < C; k++) {
        most = counts[k] > most ? counts[k] : most;
        single += counts[k] == 1;
    }
    for (int k = 0; k < C && most >= 10 && single <= 3; k++) {
        if (counts[k] != 1) continue;
        const Example *e = NULL;
        for (int i = 0; i < all->n && !e; i++)
            if (strcmp(all->examples[i].label, labels->names[k]) == 0) e = &all->examples[i];
        int line = dist_max_int(dist, e ? e->line : 0);
        if (!log) continue;
        fprintf(log, "warning: %s:%d: label '%s' has this one example, where another has %.0f: a typo", all->path, line,
                labels->names[k], most);
        if (e && all->first == 0 && e == &all->examples[0])   /* the first line: the header's fields, maybe */
            fprintf(log, ", or a header row (then give --label-column '%s' --text-column '%s')", e->label, e->text);
        fprintf(log, "? It is a class of its own\n");
    }
    free(counts);
    for (int a = 0; a < C && C <= 1000 && log; a++)
        for (int b = a + 1; b < C; b++) {
            size_t nx, ny;
            const char *x = unquoted(labels->names[a], &nx), *y = unquoted(labels->names[b], &ny);
            if (nx == ny && strncasecmp(x, y, nx) == 0 && shown++ < 6)
                fprintf(log, "warning: %s: labels '%s' and '%s' differ only in case or quotes; they are two classes\n",
                        all->path, labels->names[a], labels->names[b]);
        }
}

/* Lines whose text held a tab: another column glued to the text? Counted
 * over the ranks, the first line the smallest of theirs. */
static void warn_tabbed(const DistContext *dist, const TextDataset *all, FILE *log) {
    double tabbed = all->tabbed;
    dist_sum_doubles(dist, &tabbed, 1);
    int first = -dist_max_int(dist, all->tabbed ? -all->first_tabbed : -INT_MAX);   /* the smallest line */
    if (tabbed > 0 && log)
        fprintf(log, "warning: %s: %.0f line%s more than one tab (first: line %d); the text is all after the first "
                "tab, later tabs read as spaces. If the file has more columns, give it a header row naming them "
                "(with 'label' and 'text', or --label-column and --text-column)\n", all->path, tabbed,
                tabbed == 1 ? " holds" : "s hold", first);
}

void corpus_warn_header(const TextDataset *data, const LabelSet *labels, FILE *log) {
    if (data->header_label && labels_index(labels, data->header_label) >= 0)
        fprintf(log, "warning: %s: the header row names the label column '%s', which is also a label of the data: "
                "has the file no header row? Its first line was read as one, not as an example (without a header "
                "row, give no --label-column or --text-column: each line is label<TAB>text)\n", data->path,
                data->header_label);
    else if (data->header_by_number)
        fprintf(log, "note: %s: line %d was read as the header row, not as an example (columns chosen by number; "
                "its label field is '%s'). If the file has no header row, give no --label-column or --text-column: "
                "each line is then label<TAB>text\n", data->path, data->header_line,
                data->header_label ? data->header_label : "");
}

/* A setup that defaults or options cannot serve, said once before training
 * with the option that fixes it. */
static void warn_setup(const DistContext *dist, const Corpus *c, const Options *o, FILE *log) {
    double unk = c->has_val ? unk_share(dist, &c->enc_val) : 0.0;
    if (unk > UNK_WARN_SHARE) {   /* the fix depends on the tokenizer */
        fprintf(log, "warning: %.0f%% of the validation tokens are [UNK] (unseen in training): ", 100 * unk);
        if (o->init_dir && *o->init_dir)   /* the vocabulary is the pretrain run's, and --init fixes it */
            fprintf(log, "the vocabulary is that of --init %s: pretrain on text closer to this data\n", o->init_dir);
        else if (c->vocab.bpe && c->vocab.size < o->vocab_size)   /* the cap was not reached: it does not bind */
            fprintf(log, "the vocabulary (%d tokens) is all the training text yields below --vocab-size %d; give more "
                    "training text\n", c->vocab.size, o->vocab_size);
        else if (c->vocab.bpe)
            fprintf(log, "raise --vocab-size (now %d), or give more training text\n", o->vocab_size);
        else if (c->vocab.size >= o->vocab_size)   /* word, char or ngram at the cap: it left tokens out */
            fprintf(log, "--vocab-size %d leaves out tokens the training text has; raise it%s\n", o->vocab_size,
                    strcmp(o->tokenizer, "char") == 0 ? "" : ", or try --tokenizer bpe");
        else if (strcmp(o->tokenizer, "char") == 0)
            fprintf(log, "the validation text uses characters the training text lacks; give more training text\n");
        else if (strcmp(o->tokenizer, "ngram") == 0)
            fprintf(log, "the validation words have n-grams the training text lacks; give more training text\n");
        else
            fprintf(log, "try --tokenizer bpe or --tokenizer char\n");
    }
    /* learned positions past every training sequence are never trained */
    int longest = dist_max_int(dist, c->enc_train.longest);
    if (strcmp(o->pe, "learned") == 0 && o->max_len > 0 && longest < o->max_len && !(o->init_dir && *o->init_dir))
        fprintf(log, "warning: --pe learned: no training sequence is longer than %d tokens, so positions %d-%d of "
                "--max-len %d are never trained; longer texts at test or predict time would meet them (give "
                "--max-len %d, or --pe sinusoidal)\n", longest, longest, o->max_len - 1, o->max_len, longest);
    if (o->patience > 0 && !c->has_val)
        fprintf(log, "warning: --patience has no effect without a validation set (give --val FILE or --val-split F)\n");
    if (o->val_path && *o->val_path && options_given(o, "val-split"))
        fprintf(log, "warning: --val-split has no effect with --val (the validation set is that file)\n");
    int n_split = c->train.total + c->val.total;
    if (c->has_val && !(o->val_path && *o->val_path) && c->val.total > 1.5 * o->val_split * n_split + 1)
        fprintf(log, "note: --val-split %g held out %d of %d examples (%.0f%%): every class with 2 or more examples "
                "gives at least one to validation, and many classes here are that small\n", o->val_split,
                c->val.total, n_split, 100.0 * c->val.total / n_split);
    if (o->stop_after > 0 && o->stop_after >= c->epochs)
        fprintf(log, "warning: --stop-after %d has no effect with --epochs %d (the run ends there anyway)\n",
                o->stop_after, c->epochs);
    if (o->lr == 0.0)
        fprintf(log, "warning: --lr 0 leaves the weights as they start: nothing is learned (AdamW's weight decay is "
                "scaled by the learning rate too)\n");
    int cycle = c->cycle < c->epochs ? c->cycle : c->epochs;
    /* a step count of warmup checked against the shortest cycle: the first, or a last one cut short by --epochs */
    int short_first = 1, short_last = c->epochs;
    for (int e = 1, f, l; e <= c->epochs; e = l + 1) {
        schedule_cycle(e, c->cycle, c->epochs, &f, &l);
        if (l - f < short_last - short_first) short_first = f, short_last = l;
    }
    long cycle_steps = (long)(short_last - short_first + 1) * schedule_steps_per_epoch(c->train.total, o->batch_size);
    if (o->warmup >= 1.0 && schedule_warmup_steps(o->warmup, cycle_steps) == cycle_steps) {
        char what[64] = "run";
        if (cycle < c->epochs)
            snprintf(what, sizeof what, "learning-rate cycle of epochs %d-%d", short_first, short_last);
        fprintf(log, "warning: --warmup %.0f steps is the whole %s of %ld: the learning rate climbs the whole time, "
                "reaches --lr %g only at the last step and never decays (give fewer steps, or a fraction such as "
                "0.1)\n", o->warmup, what, cycle_steps, o->lr);
    }
    if (o->accum_steps > 1 && o->accum_steps * dist->size > o->batch_size)
        fprintf(log, "warning: --accum-steps %d splits a batch of %d%s into more parts than it has examples: each "
                "micro-batch holds one example, as with --accum-steps %d\n", o->accum_steps, o->batch_size,
                dist->size > 1 ? " over the ranks" : "", o->batch_size / dist->size > 1 ? o->batch_size / dist->size : 1);
    int bpe_dropout_given = options_given(o, "bpe-dropout") && o->bpe_dropout > 0.0;
    if (bpe_dropout_given && !c->vocab.bpe)
        fprintf(log, "warning: --bpe-dropout has no effect with --tokenizer %s (it splits bpe subwords; give "
                "--tokenizer bpe)\n", o->tokenizer);
    if (bpe_dropout_given && options_pretrain(o))
        fprintf(log, "warning: --bpe-dropout has no effect when pretraining (it acts on classification batches)\n");
    int swa_given = options_given(o, "swa") && o->swa > 0.0;
    if (swa_given && options_pretrain(o))
        fprintf(log, "warning: --swa has no effect when pretraining (it averages a classifier's weights)\n");
    else if (swa_given && o->patience > 0)
        fprintf(log, "warning: --swa has no effect with --patience (early stopping keeps the best epoch's weights; "
                "give one or the other)\n");
    else if (swa_given && !c->has_val)
        fprintf(log, "warning: --swa has no effect without a validation set (the average replaces the weights only "
                "when its validation loss is lower; give --val FILE or --val-split F)\n");
    if (!swa_given || !c->has_val || options_pretrain(o) || o->patience > 0) return;
    int first, last, averaging = 0, first_averages = 0;   /* does each cycle average 2 epochs or more? */
    for (int e = 1; e <= c->epochs; e = last + 1) {
        schedule_cycle(e, c->cycle, c->epochs, &first, &last);
        int averages = schedule_swa_start(o->swa, last - first + 1) > 0;
        averaging += averages;
        if (first == 1) first_averages = averages;
    }
    if (!averaging)
        fprintf(log, "warning: --swa %g of %d epochs averages fewer than 2 of them, so it has no effect (raise --swa "
                "or %s)\n", o->swa, cycle, cycle < c->epochs ? "--cycle" : "--epochs");
    else if (!first_averages)
        fprintf(log, "warning: --swa %g of the first cycle's %d epochs averages fewer than 2 of them: a run that ends "
                "after that cycle is not averaged (raise --swa or --cycle)\n", o->swa, cycle);
}

/* The sum of each rank's value over the ranks before this one, and over all. */
static void rank_prefix(const DistContext *dist, double mine, double *before, double *total) {
    double local[64], *all = dist->size <= 64 ? local : calloc((size_t)dist->size, sizeof *all);
    if (!all) {   /* a job this large with no memory left: the others wait; the job ends */
        *before = *total = -1;
        return;
    }
    for (int k = 0; k < dist->size; k++) all[k] = k == dist->rank ? mine : 0.0;
    dist_sum_doubles(dist, all, dist->size);
    *before = *total = 0.0;
    for (int k = 0; k < dist->size; k++) {
        if (k < dist->rank) *before += all[k];
        *total += all[k];
    }
    if (all != local) free(all);
}

/* This rank's share of a data file (the whole file in one process): read
 * from its first line to its last only (a CSV is streamed whole), its lines
 * numbered and its examples counted over the ranks; the whole file's
 * SHA-256 and line count from rank 0, which streams the file for them. */
static int read_share(const DistContext *dist, const char *path, const DatasetColumns *columns, int texts,
                      TextDataset *out, char *err, size_t errlen) {
    DatasetShard shard = {.part = dist->rank, .parts = dist->size, .lines_before = 0, .seek = 1};
    if (dist->size == 1) return dataset_read_shard(path, columns, texts, shard, out, err, errlen);
    long newlines = dataset_share_newlines(path, shard, err, errlen);
    if (newlines < 0) return ERR_INPUT;
    double before, total;
    rank_prefix(dist, (double)newlines, &before, &total);
    shard.lines_before = (long)before;
    int rc = dataset_read_shard(path, columns, texts, shard, out, err, errlen);
    if (rc != EXIT_OK) return rc;
    rank_prefix(dist, out->n, &before, &total);
    if (total <= 0) {
        dataset_free(out);
        return fail(err, errlen, ERR_INPUT, "%s: no examples", path);
    }
    out->first = (int)before;
    out->total = (int)total;
    /* every rank digests the whole file (streamed) and the digests must
     * agree: ranks on hosts with different files at this path would
     * otherwise train on a mixture; rank 0's goes to run.json */
    if (!out->sha256[0] && (rc = dataset_digest(path, out->sha256, &out->lines, err, errlen))) {
        dataset_free(out);
        return rc;
    }
    enum { DIGEST = sizeof out->sha256 };
    char *all = NULL;
    long n_all = 0;
    if (dist_gather_bytes(dist, out->sha256, DIGEST, &all, &n_all, err, errlen) != 0) {
        dataset_free(out);
        return ERR_RUNTIME;
    }
    for (int r = 1; r < dist->size; r++) {
        const char *theirs = all + (long)r * DIGEST;
        if (memcmp(theirs, all, DIGEST) != 0) {
            rc = fail(err, errlen, ERR_INPUT, "%s: MPI rank %d reads a different file at this path than rank 0 "
                      "(SHA-256 %.12s... against %.12s...); every host must see the same files at the same paths",
                      path, r, theirs, all);
            dataset_free(out);
            break;
        }
    }
    free(all);
    return rc;
}

/* This rank's share of the training file, and with --val-split of the
 * validation set split from it. */
static int read_train(const DistContext *dist, Corpus *c, const Options *o, const char *train_path, FILE *log,
                      char *err, size_t errlen) {
    int pretrain = options_pretrain(o);
    DatasetColumns columns = {o->label_column, o->text_column};
    TextDataset all;
    int rc = read_share(dist, train_path, pretrain ? NULL : &columns, pretrain, &all, err, errlen);
    if (rc != EXIT_OK) return rc;
    LabelSet classes;
    if ((rc = shared_labels(dist, &all, &classes, err, errlen)) != EXIT_OK) {
        dataset_free(&all);
        return rc;
    }
    if (!pretrain) {
        warn_label_column(&classes, &all, log);
        warn_odd_labels(dist, &classes, &all, log);
        warn_tabbed(dist, &all, log);
    }
    if (!(o->val_path && *o->val_path) && o->val_split > 0) {
        rc = shared_split(dist, &all, pretrain ? NULL : &classes, o->val_split, (uint64_t)o->seed, &c->train, &c->val,
                          err, errlen);
        dataset_free(&all);
        c->has_val = rc == EXIT_OK && c->val.total > 0;
    } else {
        c->train = all;
    }
    labels_free(&classes);
    return rc;
}

int corpus_prepare(Corpus *c, const Options *o, const DistContext *dist, const char *train_path, FILE *log,
                   char *err, size_t errlen) {
    int rc;
    DistContext solo = dist_solo();
    if (!dist) dist = &solo;
    memset(c, 0, sizeof *c);
    if (tokenizer_parse(o->tokenizer, &c->tokenizer) != 0)
        return fail(err, errlen, ERR_INPUT, "--tokenizer must be word, char, bpe or ngram");
    DatasetColumns columns = {o->label_column, o->text_column};
    if ((rc = read_train(dist, c, o, train_path, log, err, errlen)) != EXIT_OK) return rc;
    if (o->val_path && *o->val_path) {   /* pretraining's --val reads as its TEXTS do */
        int texts = options_pretrain(o);
        if ((rc = read_share(dist, o->val_path, texts ? NULL : &columns, texts, &c->val, err, errlen)) != EXIT_OK)
            return rc;
        c->has_val = 1;
    }
    if (o->test_path && *o->test_path) {
        if ((rc = read_share(dist, o->test_path, &columns, 0, &c->test, err, errlen)) != EXIT_OK) return rc;
        c->has_test = 1;
    }
    if ((rc = shared_labels(dist, &c->train, &c->labels, err, errlen)) != EXIT_OK) return rc;
    if (options_pretrain(o)) {   /* the texts' labels mean nothing: the model has none */
        labels_free(&c->labels);
        memset(&c->labels, 0, sizeof c->labels);
    } else if (c->labels.n < 2) {
        return fail(err, errlen, ERR_INPUT, "%s: only one class ('%s') in the training data; a classifier needs at "
                    "least two", train_path, c->labels.n ? c->labels.names[0] : "");
    }
    if (o->init_dir && *o->init_dir) {
        /* --init: the pretrain run's tokenizer and vocabulary, which its embeddings index */
        SavedModel s;
        char why[1024];
        if (saved_model_load(o->init_dir, 1, &s, why, sizeof why) != EXIT_OK)
            return fail(err, errlen, ERR_INPUT, "--init %s: %s", o->init_dir, why);
        c->tokenizer = s.tokenizer;
        c->vocab = s.vocab;
        memset(&s.vocab, 0, sizeof s.vocab);
        saved_model_free(&s);
        /* its hash: --resume reads the vocabulary again and reproduce starts from it, so both need it unchanged */
        char file[4200];
        long newlines;
        saved_model_file(o->init_dir, file, sizeof file);
        if (!(c->init_file = strdup(file))) return fail(err, errlen, ERR_RUNTIME, "out of memory");
        if (record_file_digest(file, c->init_sha256, &newlines, why, sizeof why) != 0)
            return fail(err, errlen, ERR_INPUT, "--init %s: %s", o->init_dir, why);
    } else if ((rc = shared_vocab(dist, c, o, err, errlen)) != EXIT_OK) {
        return rc;
    }
    if (c->has_val && (rc = report_leakage(dist, &c->train, &c->val, "validation", log, err, errlen))) return rc;
    if (c->has_test && (rc = report_leakage(dist, &c->train, &c->test, "test", log, err, errlen))) return rc;
    c->max_len = o->max_len;
    if (c->max_len == 0 && (rc = auto_max_len(dist, c, &c->max_len, err, errlen)) != EXIT_OK) return rc;
    FILE *train_log = o->max_len == 0 ? NULL : log;   /* auto says what it truncates itself */
    if ((rc = encode(dist, &c->train, c, c->max_len, &c->enc_train, "training", train_log, err, errlen))) return rc;
    if (o->max_len == 0) {
        double truncated = c->enc_train.n_truncated;
        dist_sum_doubles(dist, &truncated, 1);   /* every rank takes part, quiet or not */
        int capped = truncated > c->train.total - ceil(AUTO_COVERAGE * c->train.total);   /* 99% not held */
        if (!o->quiet && !capped)
            fprintf(log, "max-len auto: %d, the smallest multiple of %d holding %.0f%% of the training sequences "
                    "(at most %d); it truncates %.0f of %d\n", c->max_len, AUTO_MULTIPLE, 100 * AUTO_COVERAGE,
                    AUTO_MAX_LEN, truncated, c->train.total);
        else if (!o->quiet)
            fprintf(log, "max-len auto: %d, its cap, holds fewer than %.0f%% of the training sequences: it "
                    "truncates %.0f of %d (a larger --max-len N holds more; time and memory grow with N)\n",
                    c->max_len, 100 * AUTO_COVERAGE, truncated, c->train.total);
    }
    if (c->has_val && (rc = encode(dist, &c->val, c, c->max_len, &c->enc_val, "validation", log, err, errlen)))
        return rc;
    if (c->has_test && (rc = encode(dist, &c->test, c, c->max_len, &c->enc_test, "test", log, err, errlen)))
        return rc;
    c->epochs = o->epochs > 0 ? o->epochs : schedule_auto_epochs(c->train.total, o->batch_size);
    if (o->epochs == 0 && !o->quiet)
        fprintf(log, "epochs auto: %d, about %d steps of %d examples over %d training examples (at least %d epochs, "
                "at most %d)\n", c->epochs, SCHEDULE_AUTO_STEPS, o->batch_size, c->train.total, SCHEDULE_AUTO_MIN,
                SCHEDULE_AUTO_MAX);
    /* cycles that end on validation: a classifier's default, not a count of epochs the user asked for */
    int cycles = !options_given(o, "epochs") && c->has_val && !options_pretrain(o) && o->patience == 0;
    c->cycle = o->cycle > 0 ? o->cycle : cycles ? SCHEDULE_CYCLE_AUTO : c->epochs;
    warn_setup(dist, c, o, log);
    return 0;
}

uint64_t corpus_hash(const Corpus *c) {
    uint64_t hash = HASH_START;
    const TextDataset *files[3] = {&c->train, &c->val, &c->test};
    for (int i = 0; i < 3; i++) hash = hash_bytes(hash, files[i]->sha256, sizeof files[i]->sha256);
    for (int i = 0; i < c->vocab.size; i++) hash = hash_bytes(hash, c->vocab.tokens[i], strlen(c->vocab.tokens[i]) + 1);
    for (int i = 0; i < c->labels.n; i++) hash = hash_bytes(hash, c->labels.names[i], strlen(c->labels.names[i]) + 1);
    int sizes[4] = {c->max_len, c->train.total, c->val.total, c->test.total};
    return hash_bytes(hash, sizes, sizeof sizes);
}

void corpus_free(Corpus *c) {
    encoded_free(&c->enc_train);
    encoded_free(&c->enc_val);
    encoded_free(&c->enc_test);
    vocab_free(&c->vocab);
    labels_free(&c->labels);
    dataset_free(&c->train);
    dataset_free(&c->val);
    dataset_free(&c->test);
    free(c->init_file);
    memset(c, 0, sizeof *c);
}

int corpus_data_files(const Corpus *c, const Options *o, DataFileInfo files[RECORD_MAX_FILES]) {
    const TextDataset *all[3] = {&c->train, o->val_path && *o->val_path ? &c->val : NULL,
                                 o->test_path && *o->test_path ? &c->test : NULL};
    static const char *const roles[3] = {"train", "val", "test"};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        if (!all[i]) continue;
        memset(&files[n], 0, sizeof files[n]);
        snprintf(files[n].role, sizeof files[n].role, "%s", roles[i]);
        files[n].path = all[i]->path;
        memcpy(files[n].sha256, all[i]->sha256, sizeof files[n].sha256);
        files[n].lines = all[i]->lines;
        n++;
    }
    if (c->init_file) {   /* a checkpoint's count of newline bytes means nothing: recorded as 0 */
        memset(&files[n], 0, sizeof files[n]);
        snprintf(files[n].role, sizeof files[n].role, "init");
        files[n].path = c->init_file;
        memcpy(files[n].sha256, c->init_sha256, sizeof files[n].sha256);
        n++;
    }
    return n;
}

int corpus_class_counts(const Corpus *c, const DistContext *dist, const EncodedDataset *d, double *counts) {
    int C = c->labels.n;
    int *mine = calloc((size_t)C, sizeof *mine);
    if (!mine) return -1;
    labels_count(d->labels, d->n, C, mine);
    for (int k = 0; k < C; k++) counts[k] = mine[k];
    free(mine);
    dist_sum_doubles(dist, counts, C);
    return 0;
}

int corpus_class_weights(const Corpus *c, const Options *o, const DistContext *dist, float **weights) {
    *weights = NULL;
    if (strcmp(o->class_weights, "balanced") != 0) return 0;
    int C = c->labels.n;
    double *counts = malloc(sizeof(double) * C);
    float *w = malloc(sizeof(float) * C);
    if (!counts || !w || corpus_class_counts(c, dist, &c->enc_train, counts) != 0) {
        free(counts);
        free(w);
        return -1;
    }
    double n = 0;
    for (int k = 0; k < C; k++) n += counts[k];
    for (int k = 0; k < C; k++) w[k] = counts[k] ? (float)(n / ((double)C * counts[k])) : 0.0f;
    free(counts);
    *weights = w;
    return 0;
}

int corpus_observation(const Corpus *c, const DistContext *dist, ObservationContext *o, double **stats) {
    const EncodedDataset *measured = c->has_val ? &c->enc_val : &c->enc_train;
    int n_measured = c->has_val ? c->val.total : c->train.total;
    int C = c->labels.n;
    double *counts = malloc(sizeof(double) * (C ? C : 1));
    *stats = calloc((size_t)3 * C, sizeof **stats);
    if (!counts || !*stats || corpus_class_counts(c, dist, measured, counts) != 0) {
        free(counts);
        return -1;
    }
    o->n_classes = C;
    o->n_measured = n_measured;
    o->class_names = (const char *const *)c->labels.names;
    double *share = *stats + 2 * C;
    for (int k = 0; k < C; k++) {
        share[k] = n_measured ? counts[k] / n_measured : 0.0;
        if (share[k] > o->majority_rate) {
            o->majority_rate = share[k];
            o->majority_name = c->labels.names[k];
        }
    }
    o->share = share;
    free(counts);
    return 0;
}
