/* train.c — turning a loaded model into a training problem (see compile.h,
 * api_setup_training): what --grad, --train, --wrt, --loss and --optimizer
 * mean, shared by `graphc compile`, `graphc run`, `graphc gradcheck` and the
 * C API.
 *
 * Parameters are chosen before any pass runs, so that nothing folds them
 * away: every floating-point constant of rank >= 1 that a node reads (rank-0
 * float constants are exponents, epsilons and scales, not weights), or
 * exactly the values --wrt names, in that order. They become training state
 * (VK_STATE) and keep their model names. Then shape inference runs, the loss
 * is appended when --loss asks for one, and g->train tells the autodiff pass
 * what to build.
 */
#include "compile.h"

#include "../ir/op.h"
#include "../passes/passes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether some node reads v. */
static int is_read(const Graph *g, const Value *v)
{
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j] == v) return 1;
    return 0;
}

/* Whether some node reads v at an input its op takes as a compile-time
 * constant (OpDesc.const_inputs: Resize's scales, ...). */
static int is_shape_operand(const Graph *g, const Value *v)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in && j < 32; j++)
            if (n->in[j] == v && (ir_op(n->op)->const_inputs >> j & 1u)) return 1;
    }
    return 0;
}

/* Whether some node reads v as running statistics (OpDesc.stat_updates). */
static int is_statistic(const Graph *g, const Value *v)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        for (int k = 0; k < od->n_stat_updates; k++)
            if (od->stat_updates[k].in < n->n_in && n->in[od->stat_updates[k].in] == v) return 1;
    }
    return 0;
}

/* --train: running statistics that a node updates become state. */
static void stats_to_state(Graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        for (int k = 0; k < od->n_stat_updates; k++) {
            const InplacePair *p = &od->stat_updates[k];
            Value *v = p->in < n->n_in ? n->in[p->in] : NULL;
            if (v && v->kind == VK_CONST && p->out < n->n_out && n->out[p->out]) ir_make_state(v);
        }
    }
}

/* Adds v to the parameter list (no duplicates). */
static void add_param(Graph *g, TrainSpec *t, Value *v)
{
    for (int k = 0; k < t->n_wrt; k++)
        if (t->wrt[k] == v) return;
    Value **w = ir_alloc(g, sizeof *w * (size_t)(t->n_wrt + 1));
    if (t->n_wrt) memcpy(w, t->wrt, sizeof *w * (size_t)t->n_wrt);
    w[t->n_wrt++] = v;
    t->wrt = w;
}

static int select_params(Graph *g, const TrainRequest *tr, TrainSpec *t, Diag *d)
{
    if (!tr->wrt) {
        /* gradient checks (wrt_inputs) take f32 and f64 values only: f16 and bf16 round a perturbation away */
#define PARAM_TYPE(v) (tr->wrt_inputs ? ((v)->dtype == DT_F32 || (v)->dtype == DT_F64) : ir_dtype_is_float((v)->dtype))
        for (int i = 0; tr->wrt_inputs && i < g->n_inputs; i++)
            if (PARAM_TYPE(g->inputs[i])) add_param(g, t, g->inputs[i]);
        for (int i = 0; i < g->n_values; i++) {
            Value *v = g->values[i];
            if (v->kind == VK_CONST && PARAM_TYPE(v) && v->shape.rank >= 1 && is_read(g, v) && !is_shape_operand(g, v) &&
                !is_statistic(g, v))
                add_param(g, t, v);
        }
#undef PARAM_TYPE
        if (!t->n_wrt) return diag_error(d, "the model has no trainable parameters (float constants of rank >= 1)");
        if (tr->wrt_inputs && tr->mode != TRAIN_REQ_GRAD) return diag_error(d, "graph inputs are parameters only with --grad");
    } else {
        const char *p = tr->wrt;
        while (*p) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            char name[512];
            if (n == 0 || n >= sizeof name) return diag_error(d, "--wrt: empty or too long name in '%s'", tr->wrt);
            memcpy(name, p, n);
            name[n] = 0;
            Value *v = ir_find_value(g, name);
            if (!v) return diag_error(d, "--wrt: the model has no value '%s'", name);
            int ok = ir_dtype_is_float(v->dtype) &&
                     (v->kind == VK_CONST || (v->kind == VK_INPUT && tr->mode == TRAIN_REQ_GRAD));
            if (!ok)
                return diag_error(d, "--wrt: '%s' is not a float constant%s", name,
                                  tr->mode == TRAIN_REQ_GRAD ? " or graph input" : "");
            add_param(g, t, v);
            p += n;
            if (*p == ',') p++;
        }
        if (!t->n_wrt) return diag_error(d, "--wrt: no names given");
    }
    for (int k = 0; k < t->n_wrt; k++)
        if (t->wrt[k]->kind == VK_CONST) ir_make_state(t->wrt[k]);
    return 0;
}

/* Parses "KEY=NUM,KEY=NUM" of --optimizer into t; NULL or why not. */
static const char *parse_opt_params(const char *s, TrainSpec *t)
{
    static char why[256];
    while (s && *s) {
        const char *eq = strchr(s, '='), *e = strchr(s, ',');
        if (!eq || (e && e < eq)) return "expected KEY=VALUE";
        size_t kl = (size_t)(eq - s);
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || (*end && *end != ',') || errno == ERANGE || !isfinite(v)) return "a value is not a number";
#define KEY(k) (kl == strlen(k) && strncmp(s, k, kl) == 0)
        int adam = t->optimizer == TRAIN_ADAM;
        if (KEY("lr")) t->lr = v;
        else if (KEY("weight_decay")) t->weight_decay = v;
        else if (!adam && KEY("momentum")) t->momentum = v;
        else if (!adam && KEY("nesterov")) t->nesterov = v != 0;
        else if (adam && KEY("beta1")) t->beta1 = v;
        else if (adam && KEY("beta2")) t->beta2 = v;
        else if (adam && KEY("eps")) t->eps = v;
        else {
            snprintf(why, sizeof why, "unknown key '%.*s' (%s)", (int)kl, s,
                     adam ? "adam takes lr, beta1, beta2, eps, weight_decay" : "sgd takes lr, momentum, nesterov, weight_decay");
            return why;
        }
#undef KEY
        s = *end ? end + 1 : end;
    }
    if (!(t->lr > 0)) return "lr must be positive";
    if (t->momentum < 0 || t->weight_decay < 0) return "momentum and weight_decay must be non-negative";
    if (t->nesterov && t->momentum <= 0) return "nesterov needs momentum > 0";
    if (t->optimizer == TRAIN_ADAM && !(t->beta1 >= 0 && t->beta1 < 1 && t->beta2 >= 0 && t->beta2 < 1 && t->eps > 0))
        return "adam needs 0 <= beta1, beta2 < 1 and eps > 0";
    return NULL;
}

int api_parse_optimizer(const char *text, TrainSpec *t, Diag *d)
{
    const char *spec = text ? text : "sgd";
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n == 3 && strncmp(spec, "sgd", 3) == 0) {
        t->optimizer = TRAIN_SGD;
        t->lr = 0.01;
    } else if (n == 4 && strncmp(spec, "adam", 4) == 0) {
        t->optimizer = TRAIN_ADAM;
        t->lr = 1e-3;
        t->beta1 = 0.9;
        t->beta2 = 0.999;
        t->eps = 1e-8;
    } else {
        return diag_error(d, "--optimizer: unknown optimizer '%.*s' (expected sgd or adam)", (int)n, spec);
    }
    const char *why = parse_opt_params(colon ? colon + 1 : NULL, t);
    if (why) return diag_error(d, "--optimizer '%s': %s", spec, why);
    return 0;
}

/* Makes loss, a new graph output, the first one (the model's follow). */
static void output_first(Graph *g, Value *loss)
{
    ir_add_output(g, loss);
    memmove(g->outputs + 1, g->outputs, sizeof *g->outputs * (size_t)(g->n_outputs - 1));
    g->outputs[0] = loss;
}

/* The probe loss, for gradient checks: sum over every float output k of
 * sum(out_k * R_k), R_k the fixed tensor random(seed=k+1, lo=-1, hi=1) of
 * the text IR, so that every output element gets a different weight. */
static Value *probe_loss(Graph *g, Diag *d)
{
    Value *loss = NULL;
    int n_out = g->n_outputs;
    for (int k = 0; k < n_out; k++) {
        Value *y = g->outputs[k];
        if (!ir_dtype_is_float(y->dtype) || (loss && y->dtype != loss->dtype)) continue; /* the first float dtype */
        int64_t ne = ir_numel(&y->shape);
        unsigned char *raw = malloc(ir_dtype_size(y->dtype) * (size_t)(ne ? ne : 1));
        GC_ASSERT(raw);
        ir_fill_random(y->dtype, raw, ne, (uint64_t)k + 1, -1, 1);
        char name[256];
        snprintf(name, sizeof name, "probe_%d", k);
        Value *rv = ir_add_const(g, name, y->dtype, &y->shape, raw, 1);
        free(raw);
        Value *in[2] = {y, rv};
        Node *m = ir_add_node(g, OP_Mul, NULL, in, 2, 1, NULL);
        Node *s = ir_add_node(g, OP_ReduceSum, NULL, m->out, 1, 1, NULL);
        if (ir_set_attrs(g, s, "keepdims=0", d) || ir_op(OP_Mul)->infer(m, d) || ir_op(OP_ReduceSum)->infer(s, d))
            return NULL;
        Value *t = s->out[0];
        if (loss) {
            Value *ab[2] = {loss, t};
            Node *a = ir_add_node(g, OP_Add, NULL, ab, 2, 1, NULL);
            if (ir_op(OP_Add)->infer(a, d)) return NULL;
            t = a->out[0];
        }
        loss = t;
    }
    if (!loss) diag_error(d, "--loss=probe: the model has no float output");
    return loss;
}

/* Appends the loss --loss asks for; the outputs become loss, then the model's. */
static int append_loss(Graph *g, const char *spec, Diag *d)
{
    if (strcmp(spec, "probe") == 0) {
        Value *loss = probe_loss(g, d);
        if (!loss) return -1;
        output_first(g, loss);
        return 0;
    }
    const char *colon = strchr(spec, ':');
    if (!colon || !colon[1]) return diag_error(d, "--loss '%s': expected cross-entropy:OUTPUT, mse:OUTPUT or probe", spec);
    size_t kl = (size_t)(colon - spec);
    int ce = kl == 13 && strncmp(spec, "cross-entropy", 13) == 0, mse = kl == 3 && strncmp(spec, "mse", 3) == 0;
    if (!ce && !mse) return diag_error(d, "--loss: unknown loss '%.*s' (expected cross-entropy or mse)", (int)kl, spec);
    Value *y = NULL;
    for (int i = 0; i < g->n_outputs; i++)
        if (strcmp(g->outputs[i]->name, colon + 1) == 0) y = g->outputs[i];
    if (!y) return diag_error(d, "--loss: the model has no output '%s'", colon + 1);
    char sh[256];
    if (!ir_dtype_is_float(y->dtype) || (ce && y->shape.rank < 2))
        return diag_error(d, "--loss: output '%s' is %s%s; %s", y->name, ir_dtype_name(y->dtype),
                          ir_shape_str(&y->shape, sh, sizeof sh),
                          ce ? "cross-entropy needs float scores [N, C, ...]" : "mse needs a float output");
    Value *label, *loss;
    if (ce) {
        Shape ls = y->shape;
        for (int k = 2; k < ls.rank; k++) ls.dims[k - 1] = ls.dims[k];
        ls.rank--;
        label = ir_add_input(g, "label", DT_I64, &ls);
        Value *in[2] = {y, label};
        Node *n = ir_add_node(g, OP_SoftmaxCrossEntropyLoss, NULL, in, 2, 1, (const char *const[]){"loss"});
        if (ir_op(n->op)->infer(n, d)) return -1;
        loss = n->out[0];
    } else {
        label = ir_add_input(g, "label", y->dtype, &y->shape);
        Value *in[2] = {y, label};
        Node *s = ir_add_node(g, OP_Sub, NULL, in, 2, 1, (const char *const[]){"loss_diff"});
        Value *sq_in[2] = {s->out[0], s->out[0]};
        Node *m = ir_add_node(g, OP_Mul, NULL, sq_in, 2, 1, (const char *const[]){"loss_sq"});
        Value *r_in[1] = {m->out[0]};
        Node *r = ir_add_node(g, OP_ReduceMean, NULL, r_in, 1, 1, (const char *const[]){"loss"});
        if (ir_set_attrs(g, r, "keepdims=0", d)) return -1;
        if (ir_op(OP_Sub)->infer(s, d) || ir_op(OP_Mul)->infer(m, d) || ir_op(OP_ReduceMean)->infer(r, d)) return -1;
        loss = r->out[0];
    }
    output_first(g, loss);
    return 0;
}

int api_setup_training(Graph *g, const TrainRequest *tr, Diag *d)
{
    if (!tr || tr->mode == TRAIN_REQ_NONE) {
        if (tr && (tr->wrt || tr->loss || tr->optimizer))
            return diag_error(d, "--wrt, --loss and --optimizer need --grad or --train");
        return 0;
    }
    if (tr->optimizer && tr->mode != TRAIN_REQ_TRAIN) return diag_error(d, "--optimizer needs --train");
    TrainSpec *t = ir_alloc(g, sizeof *t);
    if (tr->mode == TRAIN_REQ_TRAIN && api_parse_optimizer(tr->optimizer, t, d)) return -1;
    if (select_params(g, tr, t, d)) return -1;
    if (tr->mode == TRAIN_REQ_TRAIN) stats_to_state(g);
    if (pass_infer_shapes(g, d)) return -1;
    if (tr->loss && append_loss(g, tr->loss, d)) return -1;
    g->train = t;
    return 0;
}

int api_setup_inference(Graph *ig, const Graph *g, Diag *d)
{
    GC_ASSERT(g->train);
    for (int k = 0; k < g->train->n_wrt; k++) {
        Value *v = ir_find_value(ig, g->train->wrt[k]->name);
        if (!v || v->kind != VK_CONST)
            return diag_error(d, "the inference pass has no constant '%s' to train", g->train->wrt[k]->name);
        ir_make_state(v);
    }
    /* the running statistics the training step updates, read from the state too */
    for (int i = 0; i < g->n_values; i++) {
        const Value *s = g->values[i];
        Value *v = s->kind == VK_STATE ? ir_find_value(ig, s->name) : NULL;
        if (v && v->kind == VK_CONST && ir_dtype_is_float(v->dtype) && is_statistic(ig, v)) ir_make_state(v);
    }
    /* eval(): training-only behaviour off */
    for (int i = 0; i < ig->n_nodes; i++) {
        const OpDesc *od = ir_op(ig->nodes[i]->op);
        if (od->to_inference) od->to_inference(ig->nodes[i]);
    }
    ir_sweep_values(ig);
    return 0;
}
