/* eval.c: `./train eval --model RUN DATA`: the classification report of a
 * saved model on labelled data. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "run/corpus.h"
#include "run/evaluate.h"
#include "run/rundir.h"
#include "run/saved_model.h"

int command_eval(const Options *o, int argc, char **argv) {
    if (!o->model_dir || !*o->model_dir) return cli_missing_model(o, "eval", "", "DATA.tsv", argc, argv);
    if (o->n_args != 1) return cli_usage_error("eval needs exactly one data file");
    char err[1024], run[4096];
    /* a run still training replaces its model each epoch: the report would be of no one model the run keeps */
    saved_model_file(o->model_dir, run, sizeof run);
    char *slash = strrchr(run, '/');
    if (slash) *slash = '\0';
    if (rundir_check_idle(slash ? run : ".", "evaluate it", err, sizeof err) != EXIT_OK) return cli_report(EXIT_USAGE, err);
    SavedModel saved;
    int rc = cli_set_precision(o, &saved, saved_model_load(o->model_dir, CLI_BATCH, &saved, err, sizeof err));
    if (rc != EXIT_OK) return cli_report(rc, err);
    if (model_is_mlm(&saved.model->cfg)) {
        fprintf(stderr, "error: %s is a pretraining run (a masked-language model): it has no classes to evaluate; "
                        "train a classifier from it with ./train DATA --init %s\n", o->model_dir, o->model_dir);
        saved_model_free(&saved);
        return EXIT_USAGE;
    }
    TextDataset data;
    EncodedDataset enc;
    memset(&data, 0, sizeof data);
    memset(&enc, 0, sizeof enc);
    DatasetColumns columns = {o->label_column, o->text_column};
    rc = dataset_read_columns(o->args[0], &columns, &data, err, sizeof err);
    if (rc == EXIT_OK) corpus_warn_header(&data, &saved.labels, stderr);
    if (rc == EXIT_OK)
        rc = encode_dataset(&data, &saved.vocab, saved.tokenizer, &saved.labels, saved.model->cfg.max_len, &enc, err,
                            sizeof err);
    if (rc == EXIT_OK && enc.n_truncated && o->strict)
        rc = fail(err, sizeof err, ERR_INPUT, "%s: %d of %d examples are longer than the model's max_len %d "
                  "(--strict refuses them; without --strict they would be truncated)", o->args[0], enc.n_truncated,
                  enc.n, saved.model->cfg.max_len);
    else if (rc == EXIT_OK && enc.n_truncated)
        fprintf(stderr, "note: %d of %d example%s longer than the model's max_len %d and %s truncated\n",
                enc.n_truncated, enc.n, enc.n == 1 ? " is" : "s are", saved.model->cfg.max_len,
                enc.n_truncated == 1 ? "was" : "were");
    if (rc == EXIT_OK) {
        double accuracy = 0;
        rc = evaluation_report(saved.model, &enc, &saved.labels, o->args[0], stdout, &accuracy, NULL, err, sizeof err);
        if (rc == EXIT_OK) printf("\naccuracy %.6f\n", accuracy);
    }
    encoded_free(&enc);
    dataset_free(&data);
    saved_model_free(&saved);
    return cli_report(rc, err);
}
