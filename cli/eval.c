/* eval.c: `./train eval --model RUN DATA`: the classification report of a
 * saved model on labelled data. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "run/evaluate.h"
#include "run/saved_model.h"

int command_eval(const Options *o) {
    if (!o->model_dir || !*o->model_dir) return cli_usage_error("eval needs --model RUN");
    if (o->n_args != 1) return cli_usage_error("eval needs exactly one data file");
    char err[1024];
    SavedModel saved;
    int rc = saved_model_load(o->model_dir, CLI_BATCH, &saved, err, sizeof err);
    if (rc != EXIT_OK) return cli_report(rc, err);
    TextDataset data;
    EncodedDataset enc;
    memset(&data, 0, sizeof data);
    memset(&enc, 0, sizeof enc);
    rc = dataset_read(o->args[0], &data, err, sizeof err);
    if (rc == EXIT_OK)
        rc = encode_dataset(&data, &saved.vocab, saved.tokenizer, &saved.labels, saved.model->cfg.max_len, &enc, err,
                            sizeof err);
    if (rc == EXIT_OK) {
        if (enc.n_truncated) printf("note: %d of %d examples truncated to max_len %d\n", enc.n_truncated, enc.n,
                                    saved.model->cfg.max_len);
        double accuracy = 0;
        rc = evaluation_report(saved.model, &enc, &saved.labels, o->args[0], stdout, &accuracy, NULL, err, sizeof err);
        if (rc == EXIT_OK) printf("\naccuracy %.6f\n", accuracy);
    }
    encoded_free(&enc);
    dataset_free(&data);
    saved_model_free(&saved);
    return cli_report(rc, err);
}
