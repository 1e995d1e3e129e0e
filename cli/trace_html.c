/* trace_html.c: `./train trace --html FILE`: the whole walk as one
 * self-contained page: the numbers as one JSON object, then a script that
 * draws them (tokens, embeddings and PE, every head's attention, where
 * pointing at a query shows its weights over the keys, the FFN, pooling,
 * probabilities, and with --backward the gradient walk and the saliency).
 * Inline CSS and script only: no network, no fonts, no libraries.
 *
 * Size: attention weights are written as trace prints them (%.4f, so the
 * page holds the same numbers), the (T, d) matrices as 16-bit steps between
 * their least and largest value, base64: 2.7 bytes a value. A 64-token text
 * through the default model (d 64, 4 heads, 2 layers) makes about 0.6 MB.
 *
 * For the browser test the page writes what it rendered into the DOM:
 * body[data-status] becomes "rendered" when the script finished, #errors
 * holds any error, and with #probe=L,H,Q in the address the attention view
 * of layer L, head H is pointed at query Q and #probe receives the weights
 * the view shows. */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "cli/trace.h"
#include "cli/trace_page.h"
#include "formats/json.h"



/* ------------------------------------------------------------ writing */

typedef struct {
    JsonBuf b;
    int failed;
} Out;

static void put(Out *o, const char *s) {
    if (!o->failed && jsonbuf_puts(&o->b, s) != 0) o->failed = 1;
}

static void putf(Out *o, const char *fmt, double v) {
    if (o->failed) return;
    if (!isfinite(v)) {
        put(o, "null");
        return;
    }
    if (jsonbuf_printf(&o->b, fmt, v) != 0) o->failed = 1;
}

static void put_int(Out *o, long long v) {
    if (!o->failed && jsonbuf_printf(&o->b, "%lld", v) != 0) o->failed = 1;
}

/* A JSON string that is also safe inside <script>: < > & as \u escapes. */
static void put_string(Out *o, const char *s) {
    JsonBuf tmp = {0};
    if (o->failed || jsonbuf_string(&tmp, s) != 0) {
        o->failed = 1;
        jsonbuf_free(&tmp);
        return;
    }
    for (size_t i = 0; i < tmp.len && !o->failed; i++) {
        char c = tmp.data[i];
        const char *esc = c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : c == '&' ? "\\u0026" : NULL;
        if (esc) put(o, esc);
        else if (jsonbuf_append(&o->b, &c, 1) != 0) o->failed = 1;
    }
    jsonbuf_free(&tmp);
}

/* Text for HTML: & < > " escaped. */
static void put_html(Out *o, const char *s) {
    for (const char *p = s; *p && !o->failed; p++) {
        const char *esc = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;" : NULL;
        if (esc) put(o, esc);
        else if (jsonbuf_append(&o->b, p, 1) != 0) o->failed = 1;
    }
}

static void put_floats(Out *o, const float *x, size_t n, const char *fmt) {
    put(o, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) put(o, ",");
        putf(o, fmt, x[i]);
    }
    put(o, "]");
}

static const char BASE64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A (rows, cols) matrix: {"r","c","lo","hi","q"}, q the values as 16-bit
 * steps of (hi - lo) / 65535, little-endian, base64. Non-finite values
 * become lo. */
static void put_matrix(Out *o, const float *x, int rows, int cols) {
    size_t n = (size_t)rows * cols;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) {
            lo = fmin(lo, x[i]);
            hi = fmax(hi, x[i]);
        }
    if (!(lo <= hi)) lo = hi = 0.0;
    double step = hi > lo ? (hi - lo) / 65535.0 : 1.0;
    put(o, "{\"r\":");
    put_int(o, rows);
    put(o, ",\"c\":");
    put_int(o, cols);
    put(o, ",\"lo\":");
    putf(o, "%.9g", lo);
    put(o, ",\"hi\":");
    putf(o, "%.9g", hi);
    put(o, ",\"q\":\"");
    unsigned char group[3];
    int filled = 0;
    char quad[5] = {0};
    for (size_t i = 0; i < n && !o->failed; i++) {
        double v = isfinite(x[i]) ? x[i] : lo;
        long q = lround((v - lo) / step);
        if (q < 0) q = 0;
        if (q > 65535) q = 65535;
        unsigned char bytes[2] = {(unsigned char)(q & 0xFF), (unsigned char)(q >> 8)};
        for (int k = 0; k < 2; k++) {
            group[filled++] = bytes[k];
            if (filled == 3) {
                quad[0] = BASE64[group[0] >> 2];
                quad[1] = BASE64[((group[0] & 3) << 4) | (group[1] >> 4)];
                quad[2] = BASE64[((group[1] & 15) << 2) | (group[2] >> 6)];
                quad[3] = BASE64[group[2] & 63];
                put(o, quad);
                filled = 0;
            }
        }
    }
    if (filled) {
        if (filled == 1) group[1] = 0;
        quad[0] = BASE64[group[0] >> 2];
        quad[1] = BASE64[((group[0] & 3) << 4) | (group[1] >> 4)];
        quad[2] = filled == 2 ? BASE64[(group[1] & 15) << 2] : '=';
        quad[3] = '=';
        put(o, quad);
    }
    put(o, "\"}");
}

static void put_strings(Out *o, char *const *items, int n) {
    put(o, "[");
    for (int i = 0; i < n; i++) {
        if (i) put(o, ",");
        put_string(o, items[i]);
    }
    put(o, "]");
}

/* ------------------------------------------------------------ the data */

static void put_config(Out *o, const Trace *tr) {
    const ModelConfig *c = &tr->run.model->cfg;
    put(o, "\"cfg\":{\"d\":");
    put_int(o, c->d_model);
    put(o, ",\"heads\":");
    put_int(o, c->n_heads);
    put(o, ",\"layers\":");
    put_int(o, c->n_layers);
    put(o, ",\"dff\":");
    put_int(o, c->d_ff);
    put(o, ",\"max_len\":");
    put_int(o, c->max_len);
    put(o, ",\"emb_scale\":");
    putf(o, "%.9g", c->emb_scale);
    put(o, ",\"act\":");
    put_string(o, activation_name(c->activation));
    put(o, ",\"norm\":");
    put_string(o, norm_name(c->norm));
    put(o, ",\"pool\":");
    put_string(o, pool_name(c->pool));
    put(o, ",\"pe\":");
    put_string(o, pe_name(c->pe));
    put(o, ",\"tokenizer\":");
    put_string(o, tokenizer_name(tr->run.tokenizer));
    put(o, "}");
}

/* Each layer's attention (heads of T x T, as trace prints them), FFN output
 * and layer output. */
static void put_layers(Out *o, const Trace *tr) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, d = c->d_model;
    put(o, "\"layers\":[");
    for (int l = 0; l < c->n_layers; l++) {
        const float *probs = model_attention_probs(m, l);
        put(o, l ? ",{\"attn\":[" : "{\"attn\":[");
        for (int h = 0; h < c->n_heads; h++) {
            if (h) put(o, ",");
            put(o, "[");
            for (int q = 0; q < T; q++)
                for (int k = 0; k < T; k++) {
                    if (q || k) put(o, ",");
                    float w = tr->in.ids[k] == TOKEN_PAD ? 0.0f : probs[((size_t)h * T + q) * T + k];
                    putf(o, "%.4f", w);
                }
            put(o, "]");
        }
        put(o, "],\"ffn\":");
        put_matrix(o, model_ffn_output(m, l), T, d);
        put(o, ",\"out\":");
        put_matrix(o, model_layer_output(m, l), T, d);
        put(o, "}");
    }
    put(o, "]");
}

static double row_norm(const float *x, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

static void put_backward(Out *o, const Trace *tr, const TraceBackward *bw) {
    const Model *m = tr->run.model;
    int T = tr->in.T;
    put(o, ",\"bw\":{\"label\":");
    put_int(o, bw->label);
    put(o, ",\"loss\":");
    putf(o, "%.9g", bw->loss);
    put(o, ",\"loss64\":");
    putf(o, "%.12g", bw->loss_f64);
    put(o, ",\"gnorm\":");
    putf(o, "%.6g", bw->grad_norm);
    put(o, ",\"stages\":[");
    for (int k = 0; k < bw->n_stages; k++) {
        const TraceStage *s = &bw->stages[k];
        put(o, k ? ",{\"title\":" : "{\"title\":");
        put_string(o, s->title);
        put(o, ",\"rule\":[");
        put_string(o, s->rule[0]);
        if (s->rule[1][0]) {
            put(o, ",");
            put_string(o, s->rule[1]);
        }
        put(o, "],\"logits\":");
        put(o, s->stage == GRAD_LOGITS ? "true" : "false");
        put(o, ",\"norm\":");
        putf(o, "%.6g", s->norm);
        put(o, ",\"r\":");
        put_int(o, s->rows);
        put(o, ",\"c\":");
        put_int(o, s->cols);
        if (s->rows == 1) {
            put(o, ",\"v\":");
            put_floats(o, s->grad, (size_t)s->cols, "%.6g");
        } else {
            put(o, ",\"g\":");
            put_matrix(o, s->grad, s->rows, s->cols);
            put(o, ",\"tn\":[");
            for (int t = 0; t < T; t++) {
                if (t) put(o, ",");
                putf(o, "%.6g", row_norm(s->grad + (size_t)t * s->cols, s->cols));
            }
            put(o, "]");
        }
        put(o, "}");
    }
    put(o, "],\"params\":[");
    for (int k = 0; k < m->n_tensors; k++) {
        const ParamTensor *t = &m->tensors[k];
        char shape[40];
        if (t->ndim == 2) snprintf(shape, sizeof shape, "%d x %d", t->shape[0], t->shape[1]);
        else snprintf(shape, sizeof shape, "%d", t->shape[0]);
        put(o, k ? ",[" : "[");
        put_string(o, t->name);
        put(o, ",");
        put_string(o, shape);
        put(o, ",");
        putf(o, "%.6g", bw->param_norms[k]);
        put(o, "]");
    }
    put(o, "],\"checks\":[");
    for (int k = 0; k < bw->n_checks; k++) {
        const TraceCheck *c = &bw->checks[k];
        put(o, k ? ",{\"what\":" : "{\"what\":");
        put_string(o, c->what);
        put(o, ",\"float\":");
        putf(o, "%.7g", c->float_grad / c->scale);
        put(o, ",\"an\":");
        putf(o, "%.10g", c->analytic / c->scale);
        put(o, ",\"fd\":");
        putf(o, "%.10g", c->numeric / c->scale);
        put(o, ",\"rel\":");
        putf(o, "%.3g", c->rel_error);
        put(o, c->passed ? ",\"ok\":true}" : ",\"ok\":false}");
    }
    put(o, "],\"sal\":");
    put_floats(o, bw->saliency, (size_t)T, "%.7g");
    put(o, "}");
}

static void put_data(Out *o, const Trace *tr, const float *emb, const float *pe, const TraceBackward *bw) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, d = c->d_model;
    put(o, "{\"text\":");
    put_string(o, tr->text ? tr->text : "");
    put(o, ",\"source\":");
    put_string(o, tr->source);
    put(o, ",");
    put_config(o, tr);
    put(o, ",\"labels\":");
    put_strings(o, tr->run.labels.names, tr->run.labels.n);
    put(o, ",\"tokens\":");
    put_strings(o, tr->in.labels, T);
    put(o, ",\"ids\":[");
    for (int t = 0; t < T; t++) {
        if (t) put(o, ",");
        put_int(o, tr->in.ids[t]);
    }
    put(o, "],\"n_text_tokens\":");
    put_int(o, tr->in.n_text_tokens);
    put(o, ",\"emb\":");
    put_matrix(o, emb, T, d);
    put(o, ",\"pe\":");
    put_matrix(o, pe, T, d);
    put(o, ",\"x\":");
    put_matrix(o, model_embedding_sum(m), T, d);
    put(o, ",");
    put_layers(o, tr);
    put(o, ",\"enc\":");
    if (c->norm == NORM_PRE) put_matrix(o, model_encoder_output(m), T, d);
    else put(o, "null");
    put(o, ",\"pooled\":");
    put_floats(o, model_pooled(m), (size_t)d, "%.6g");
    put(o, ",\"logits\":");
    put_floats(o, m->logits, (size_t)c->n_classes, "%.6g");
    put(o, ",\"probs\":");
    put_floats(o, m->probs, (size_t)c->n_classes, "%.6g");
    put(o, ",\"pred\":");
    put_int(o, model_predicted_class(m, 0));
    if (bw) put_backward(o, tr, bw);
    put(o, "}");
}

double trace_html_estimate(const Trace *tr, int backward) {
    const ModelConfig *c = &tr->run.model->cfg;
    double T = tr->in.T, L = c->n_layers, pre = c->norm == NORM_PRE;
    double matrix = 4.0 * ceil(2.0 * T * c->d_model / 3.0) + 100;   /* put_matrix: base64 of 2 bytes a value */
    double size = L * c->n_heads * T * T * 7;                         /* "0.1234," a weight */
    size += (3 + 2 * L + pre) * matrix;                               /* emb, pe, x; each layer's ffn, out; enc */
    if (backward) size += (1 + pre + 2 * L) * (matrix + T * 12);      /* the (T, d) stages with their row norms */
    for (int t = 0; t < tr->in.T; t++) size += strlen(tr->in.labels[t]) + 8;   /* tokens and ids */
    size += 2.0 * (tr->text ? strlen(tr->text) : 0) + strlen(TRACE_PAGE_STYLE) + strlen(TRACE_PAGE_SCRIPT) + 4096;
    return size;
}

int trace_html_write(const Trace *tr, const float *emb, const float *pe, const TraceBackward *bw, const char *path,
                     char *err, size_t errlen) {
    Out o = {{0}, 0};
    put(&o, TRACE_PAGE_START " &quot;");
    put_html(&o, tr->text ? tr->text : "");
    put(&o, "&quot;</title>\n<style>\n");
    put(&o, TRACE_PAGE_STYLE);
    put(&o, "</style>\n</head>\n<body data-status=\"loading\">\n<div id=\"errors\"></div>\n<div id=\"app\">"
             "<noscript>This page draws the trace with its inline script; it needs JavaScript.</noscript></div>\n"
             "<pre id=\"probe\"></pre>\n<script>\n"
             "window.onerror = function (msg, src, line) {\n"
             "  document.getElementById('errors').textContent += 'script error: ' + msg + ' (line ' + line + ')\\n';\n"
             "};\n</script>\n<script>\nconst D = ");
    put_data(&o, tr, emb, pe, bw);
    put(&o, ";\n</script>\n<script>\n");
    put(&o, TRACE_PAGE_SCRIPT);
    put(&o, "</script>\n</body>\n</html>\n");
    if (o.failed) {
        jsonbuf_free(&o.b);
        set_error(err, errlen, "out of memory");
        return -1;
    }
    int rc = atomic_write(path, o.b.data, o.b.len, err, errlen);
    jsonbuf_free(&o.b);
    return rc == 0 ? 0 : -1;
}
