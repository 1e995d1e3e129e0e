/* metrics_csv.c: metrics.csv, one row per epoch (see metrics_csv.h). */
#include "report/metrics_csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"

static const char *CSV_HEADER_VAL = "epoch,train_loss,train_acc,val_loss,val_acc,val_macro_f1,lr,seconds,tokens_per_s\n";
static const char *CSV_HEADER = "epoch,train_loss,train_acc,lr,seconds,tokens_per_s\n";

char *metrics_csv_format(const EpochRecord *h, int n, int has_val) {
    size_t cap = 128 + (size_t)n * 160;
    char *text = malloc(cap);
    if (!text) return NULL;
    size_t used = (size_t)snprintf(text, cap, "%s", has_val ? CSV_HEADER_VAL : CSV_HEADER);
    for (int i = 0; i < n; i++) {
        const EpochRecord *r = &h[i];
        if (has_val)
            used += (size_t)snprintf(text + used, cap - used, "%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6e,%.2f,%.0f\n", r->epoch,
                                     r->train_loss, r->train_acc, r->val_loss, r->val_acc, r->val_f1, r->lr,
                                     r->seconds, r->tokens_per_s);
        else
            used += (size_t)snprintf(text + used, cap - used, "%d,%.6f,%.6f,%.6e,%.2f,%.0f\n", r->epoch, r->train_loss,
                                     r->train_acc, r->lr, r->seconds, r->tokens_per_s);
    }
    return text;
}

static const char *CSV_HEADER_MLM_VAL =
    "epoch,train_loss,train_acc,train_ppl,val_loss,val_acc,val_ppl,lr,seconds,tokens_per_s\n";
static const char *CSV_HEADER_MLM = "epoch,train_loss,train_acc,train_ppl,lr,seconds,tokens_per_s\n";

char *metrics_csv_format_mlm(const EpochRecord *h, int n, int has_val) {
    size_t cap = 128 + (size_t)n * 200;
    char *text = malloc(cap);
    if (!text) return NULL;
    size_t used = (size_t)snprintf(text, cap, "%s", has_val ? CSV_HEADER_MLM_VAL : CSV_HEADER_MLM);
    for (int i = 0; i < n; i++) {
        const EpochRecord *r = &h[i];
        used += (size_t)snprintf(text + used, cap - used, "%d,%.6f,%.6f,%.4f,", r->epoch, r->train_loss, r->train_acc,
                                 exp(r->train_loss));
        if (has_val)
            used += (size_t)snprintf(text + used, cap - used, "%.6f,%.6f,%.4f,", r->val_loss, r->val_acc,
                                     exp(r->val_loss));
        used += (size_t)snprintf(text + used, cap - used, "%.6e,%.2f,%.0f\n", r->lr, r->seconds, r->tokens_per_s);
    }
    return text;
}

/* Writes formatted text (NULL: the formatter ran out of memory) atomically to
 * path and frees it: the one tail of both layouts' writers. */
static int write_formatted(const char *path, char *text, char *err, size_t errlen) {
    if (!text) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = atomic_write(path, text, strlen(text), err, errlen);
    free(text);
    return rc;
}

int metrics_csv_write_mlm(const char *path, const EpochRecord *h, int n, int has_val, char *err, size_t errlen) {
    return write_formatted(path, metrics_csv_format_mlm(h, n, has_val), err, errlen);
}

int metrics_csv_write(const char *path, const EpochRecord *h, int n, int has_val, char *err, size_t errlen) {
    return write_formatted(path, metrics_csv_format(h, n, has_val), err, errlen);
}

/* Reads the row "epoch,train_loss,train_acc[,train_ppl][,val_loss,val_acc,
 * (val_macro_f1|val_ppl)],lr,seconds,tokens_per_s" of either layout; the
 * perplexities are exp of the losses, so nothing is lost by skipping them. */
static int parse_row(const char *line, EpochRecord *r, int has_val, int mlm) {
    double v[10];
    int want = 6 + (has_val ? 3 : 0) + (mlm ? 1 : 0), got = 0;
    const char *p = line;
    while (got < want) {
        char *end;
        v[got] = strtod(p, &end);
        if (end == p) return 0;
        got++;
        if (got < want && *end != ',') return 0;
        p = end + 1;
    }
    int k = 0;
    r->epoch = (int)v[k++];
    r->train_loss = v[k++];
    r->train_acc = v[k++];
    if (mlm) k++;   /* train_ppl */
    if (has_val) {
        r->val_loss = v[k++];
        r->val_acc = v[k++];
        if (mlm) k++;   /* val_ppl; a pretraining run has no F1 */
        else r->val_f1 = v[k++];
    }
    r->lr = v[k++];
    r->seconds = v[k++];
    r->tokens_per_s = v[k++];
    return r->epoch >= 1;
}

int metrics_csv_read(const char *path, EpochRecord **history, int *has_val, char *err, size_t errlen) {
    size_t len;
    char *text = (char *)read_file(path, &len, err, errlen);
    if (!text) return -1;
    /* the four layouts: classifier or pretraining (docs/DESIGN.md §4b), with or without a validation set */
    const char *headers[4] = {CSV_HEADER, CSV_HEADER_VAL, CSV_HEADER_MLM, CSV_HEADER_MLM_VAL};
    int layout = -1;
    for (int i = 0; i < 4 && layout < 0; i++)
        if (strncmp(text, headers[i], strlen(headers[i])) == 0) layout = i;
    if (layout < 0) {
        set_error(err, errlen, "%s:1: not a metrics.csv header", path);
        free(text);
        return -1;
    }
    int mlm = layout >= 2;
    *has_val = layout % 2 == 1;
    int n = 0, cap = 16;
    EpochRecord *h = malloc(sizeof *h * cap);
    char *line = strchr(text, '\n');
    int line_no = 1;
    while (h && line && line[1]) {
        line++;
        line_no++;
        if (n == cap) {
            EpochRecord *bigger = realloc(h, sizeof *h * (cap *= 2));
            if (!bigger) break;
            h = bigger;
        }
        EpochRecord *r = &h[n];
        memset(r, 0, sizeof *r);
        if (!parse_row(line, r, *has_val, mlm)) {
            set_error(err, errlen, "%s:%d: malformed metrics row", path, line_no);
            free(h);
            free(text);
            return -1;
        }
        n++;
        line = strchr(line, '\n');
    }
    free(text);
    if (!h) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    *history = h;
    return n;
}

/* ------------------------------------------------------------ progress */
