/* final_report.c: the end of a run (see final_report.h). */
#include "run/final_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "report/curves.h"
#include "run/rundir.h"

/* The same picture under a second name. */
static int copy_picture(const char *from, const char *to, char *err, size_t errlen) {
    size_t len = 0;
    unsigned char *data = read_file(from, &len, err, errlen);
    if (!data) return ERR_RUNTIME;
    int rc = atomic_write(to, data, len, err, errlen) == 0 ? EXIT_OK : ERR_RUNTIME;
    free(data);
    return rc;
}

/* Which weights the run ends with; returns the epoch they stand at. */
static int weights_line(FILE *out, const char *what, const char *dir, const FinalReportOptions *opt, int n_history,
                        const char *restored) {
    int shown = opt->restored_best ? opt->best_epoch : n_history;
    if (opt->note && *opt->note) fprintf(out, "\n%s", opt->note);
    if (opt->averaged_from > 0) {
        fprintf(out, "\n%s %s: the mean of the weights at the ends of epochs %d-%d (--swa: a lower validation loss "
                "than epoch %d's weights)\n", what, dir, opt->averaged_from, opt->averaged_to, shown);
        return opt->averaged_to;
    }
    fprintf(out, "\n%s %s: weights of epoch %d (%s)\n", what, dir, shown,
            opt->restored_best ? restored : "last epoch");
    return shown;
}

int final_report(Model *m, const DistContext *dist, const Corpus *c, const char *dir, const EpochRecord *history,
                 int n_history, const FinalReportOptions *opt, double *val_acc, double *test_acc, char *err,
                 size_t errlen) {
    int writer = dist->rank == 0;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    if (n_history > 0) curves_text_chart(out, history, n_history, c->has_val);
    weights_line(out, "run", dir, opt, n_history, "best validation loss, restored");
    /* confusion.png: validation (or, without it, the test set or the training
     * data); confusion_test.png: the test set, whenever there is one */
    char png[4096], test_png[4096];
    rundir_path(png, sizeof png, dir, "confusion.png");
    rundir_path(test_png, sizeof test_png, dir, "confusion_test.png");
    *val_acc = *test_acc = 0;
    int rc = EXIT_OK;
    /* MPI: every rank evaluates its share of each set; rank 0 alone writes */
    FILE *shown = writer ? out : NULL;
    if (c->has_val)
        rc = evaluation_report_shared(m, dist, &c->enc_val, c->val.total, &c->labels, "validation", shown, val_acc,
                                      writer ? png : NULL, err, errlen);
    if (rc == EXIT_OK && c->has_test)
        rc = evaluation_report_shared(m, dist, &c->enc_test, c->test.total, &c->labels, "test", shown, test_acc,
                                      writer ? test_png : NULL, err, errlen);
    if (rc == EXIT_OK && c->has_test && !c->has_val && writer)
        rc = copy_picture(test_png, png, err, errlen);
    if (rc == EXIT_OK && !c->has_val && !c->has_test)
        rc = evaluation_report_shared(m, dist, &c->enc_train, c->train.total, &c->labels,
                                      "training data (no validation set)", shown, val_acc, writer ? png : NULL, err,
                                      errlen);
    fclose(out);
    if (rc == EXIT_OK && writer) {
        if (!opt->quiet) fputs(text, stdout);
        char path[4096];
        rundir_path(path, sizeof path, dir, "report.txt");
        if (atomic_write(path, text, text_len, err, errlen) != 0) rc = ERR_RUNTIME;
        if (!opt->quiet) printf("\nwrote %s/{model.safetensors,state.safetensors,metrics.csv,curves.png,confusion.png,"
                                "%sreport.txt,run.json%s}\n", dir, c->has_test ? "confusion_test.png," : "",
                                rundir_holds(dir, "probes.jsonl") ? ",probes.jsonl" : "");
    }
    free(text);
    return rc;
}

int final_report_mlm(const Corpus *c, const char *dir, const EpochRecord *history, int n_history,
                     const FinalReportOptions *opt, double *acc, double *loss, char *err, size_t errlen) {
    *acc = *loss = 0;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    if (n_history > 0) curves_text_chart(out, history, n_history, c->has_val);
    int shown = weights_line(out, "pretrain run", dir, opt, n_history, "best held-out loss, restored");
    if (shown > 0) {
        const EpochRecord *r = &history[shown - 1];
        fprintf(out, "masked tokens, training texts: loss %.4f, accuracy %.4f, perplexity %.2f\n", r->train_loss,
                r->train_acc, exp(r->train_loss));
        if (c->has_val)
            fprintf(out, "masked tokens, held-out texts: loss %.4f, accuracy %.4f, perplexity %.2f\n", r->val_loss,
                    r->val_acc, exp(r->val_loss));
        *acc = c->has_val ? r->val_acc : r->train_acc;
        *loss = c->has_val ? r->val_loss : r->train_loss;
        fputs("(no masked token is [UNK], a word outside the vocabulary: an [UNK] guess never scores)\n", out);
    }
    fprintf(out, "fine-tune a classifier from it: ./train DATA.tsv --init %s\n", dir);
    fclose(out);
    int rc = EXIT_OK;
    if (!opt->quiet) fputs(text, stdout);
    char path[4096];
    rundir_path(path, sizeof path, dir, "report.txt");
    if (atomic_write(path, text, text_len, err, errlen) != 0) rc = ERR_RUNTIME;
    if (rc == EXIT_OK && !opt->quiet)
        printf("\nwrote %s/{model.safetensors,state.safetensors,metrics.csv,curves.png,report.txt,run.json}\n", dir);
    free(text);
    return rc;
}
