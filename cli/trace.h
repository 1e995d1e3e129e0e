/* trace.h: what the parts of `./train trace` share: the traced input, the
 * backward walk's results (trace_backward.c) and the page (trace_html.c).
 * trace.c walks forward and prints; the others read the model's views of
 * the same forward. */
#ifndef CLI_TRACE_H
#define CLI_TRACE_H

/* How every page of trace --html begins (and how --html recognises one it
 * may replace). */
#define TRACE_PAGE_START "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>trace of"

#include <stdint.h>
#include <stdio.h>

#include "run/saved_model.h"

/* Token labels are cut to this many terminal columns. */
#define LABEL_CHARS 10

/* The traced text: per position its display label and token id. */
typedef struct {
    char **labels;       /* (T) what the position holds, printable (UTF-8: the page and the pictures) */
    char **shown;        /* (T) the labels as this terminal shows them (trace_text.c) */
    int replaced[2];     /* characters shown otherwise in a non-UTF-8 locale: word-start marks, others */
    int *ids;            /* (T) */
    int T;
    int n_text_tokens;   /* tokens the text has, before truncation */
    int truncated;
} TraceInput;

/* Everything a trace reads. */
typedef struct {
    SavedModel run;
    const char *source;  /* the checkpoint, or "untrained" */
    const char *text;
    TraceInput in;
    const char *png_dir; /* NULL: no pictures */
    int utf8;            /* 1: the locale is UTF-8, so the terminal shows any character */
} Trace;

/* ------------------------------------------------------------ terminal text (trace_text.c) */

/* 1 when LC_ALL, else LC_CTYPE, else LANG names a UTF-8 locale. */
int trace_locale_utf8(void);
/* s as the terminal shows it, malloc'd (NULL: out of memory): as it is when
 * utf8; else ASCII, U+2581 as '_' and other characters as '?', counted in
 * replaced[0] and replaced[1] (replaced may be NULL). */
char *trace_shown(const char *s, int utf8, int replaced[2]);
/* in->shown from in->labels; EXIT_OK, or EXIT_RUNTIME when out of memory. */
int trace_input_show(TraceInput *in, int utf8);
/* Prints s cut to width terminal columns and padded with spaces to width. */
void trace_print_padded(FILE *out, const char *s, int width);

/* ------------------------------------------------------------ backward */

enum { TRACE_CHECKS = 4 };  /* three weights and one input */

/* One stage of the backward walk: the gradient of the loss at a boundary. */
typedef struct {
    GradStage stage;     /* where model_backward_walk showed it */
    int layer;           /* 0-based, -1 outside the layers */
    char title[160];     /* what the gradient is of */
    char rule[2][320];   /* the backward rule that produced it, one or two lines */
    int rows, cols;      /* (T, d), or (1, d) for pooled, (1, C) for the logits */
    float *grad;         /* rows x cols */
    double norm;         /* Frobenius norm, in double */
} TraceStage;

/* One weight of the live check: the trace's float backward, the double
 * build's backward and its central difference. */
typedef struct {
    char what[160];      /* e.g. "encoder.layers.0.linear1.weight[17, 3]" */
    size_t index;        /* into the parameters */
    double scale;        /* printed values are divided by this (the input probe: emb_scale) */
    double float_grad, analytic, numeric;
    double rel_error;    /* |numeric - analytic| / max(|numeric|, |analytic|, the floor below) */
    int floored;         /* both under the floor: noise around 0, judged against the floor */
    int passed;
    double kink_error;   /* > 0: the rel. error at the usual step, where the difference straddled a kink of
                            the loss; numeric and rel_error are then those of a step 100 times smaller */
} TraceCheck;

typedef struct {
    int label;           /* the class whose loss is differentiated */
    double loss;         /* -log p_label, float model */
    double loss_f64;     /* the same from the double build */
    double grad_floor;   /* the smallest gradient the check can judge at that loss */
    TraceStage *stages;  /* in backward order: logits first, the embedding sum last */
    int n_stages;
    double *param_norms; /* (n_tensors) */
    double grad_norm;    /* all parameters */
    TraceCheck checks[TRACE_CHECKS];
    int n_checks;
    int checks_failed;
    float *saliency;     /* (T): -sum_j x[t,j] dloss/dx[t,j], positive = toward the label */
} TraceBackward;

/* The loss for label, its gradient walked back through every stage, every
 * parameter's gradient norm, the live check of weights chosen by seed, and
 * the saliency, printed to out and kept in bw. Runs a forward of its own.
 * Returns EXIT_OK, EXIT_RUNTIME (out of memory: message printed), or
 * EXIT_RUNTIME with bw->checks_failed set when the gradient check fails. */
int trace_backward(const Trace *tr, int label, uint64_t seed, TraceBackward *bw, FILE *out);
void trace_backward_free(TraceBackward *bw);

/* ------------------------------------------------------------ the page */

/* The size in bytes of the page of tr's text (with the backward when
 * backward is set), estimated from the shapes before anything is computed:
 * the attention weights, 7 bytes each, L x H x T^2 of them, dominate. */
double trace_html_estimate(const Trace *tr, int backward);
/* One self-contained HTML file of the whole walk (inline CSS and script, no
 * network): the model's views of the last forward, and the backward when bw
 * is not NULL. emb and pe are (T, d). 0, or -1 with a message. */
int trace_html_write(const Trace *tr, const float *emb, const float *pe, const TraceBackward *bw, const char *path,
                     char *err, size_t errlen);

#endif
