/* autodiff.c — reverse-mode differentiation from the operator descriptions,
 * and the optimizer update (pass "autodiff").
 *
 * Nothing happens unless g->train is set (graphc compile --grad/--train,
 * GcCompileOptions.grad/train). Then the first graph output is the loss, a
 * one-element float tensor, and g->train->wrt lists the parameters (state
 * values, or graph inputs for gradient checks). The pass:
 *
 *  1. marks every value that depends on a parameter (a forward sweep);
 *  2. seeds d(loss)/d(loss) = 1 and walks the forward nodes in reverse
 *     schedule order. A node whose outputs received gradient contributions
 *     and that has an input depending on a parameter is differentiated by
 *     its op's gradient facet (OpDesc.gradient, ir/grad.h). Integer and bool
 *     values never carry gradients; an op without a gradient facet is an
 *     error naming the node, the op and the parameter it stands between;
 *  3. sums the contributions to a value read more than once as they arrive,
 *     Add(acc, new), so the running sum is one buffer that the memory
 *     planner updates in place (MXNet's kAddTo, written as an in-place Add);
 *  4. checks that each facet's nodes read only the forward values its
 *     backward_reads facet declares (everything else dies after its last
 *     forward use: the memory plan covers forward and backward together);
 *  5. finishes with either one output per parameter, grad_<name>, in the
 *     order of g->train->wrt (a parameter the loss does not depend on gets
 *     zeros), or the optimizer: one Momentum (SGD) or Adam node, of the ONNX
 *     training domain, over every parameter with a gradient, whose outputs
 *     update the parameters and the optimizer slots in place (Graph.updates),
 *     and the step counter T.
 *
 * The backward nodes are appended after the forward ones in the order they
 * are built, which is a valid schedule: a facet reads forward values and the
 * gradients of later nodes, which were complete before it ran.
 */
#include "passes.h"
#include "../ir/grad.h"
#include "../ir/op.h"
#include "../ir/ops/optim_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Autodiff {
    Graph *g;
    Diag *d;
    int n_fwd;        /* forward nodes: g->nodes[0 .. n_fwd) */
    int *dep;         /* per value id: 1 + index in wrt of a parameter it depends on; 0: none */
    Value **acc;      /* per value id: its gradient so far */
    int cap;          /* length of dep and acc */
} Autodiff;

static int is_float(const Value *v) { return v && ir_dtype_is_float(v->dtype); }

/* Grows the per-value tables to the graph's current value count. */
static void ad_grow(Autodiff *a)
{
    if (a->g->n_values <= a->cap) return;
    int cap = a->g->n_values * 2 + 16;
    a->dep = realloc(a->dep, sizeof(int) * (size_t)cap);
    a->acc = realloc(a->acc, sizeof(Value *) * (size_t)cap);
    GC_ASSERT(a->dep && a->acc);
    memset(a->dep + a->cap, 0, sizeof(int) * (size_t)(cap - a->cap));
    memset(a->acc + a->cap, 0, sizeof(Value *) * (size_t)(cap - a->cap));
    a->cap = cap;
}

/* Appends node op(in) named `name` and infers it (the types are known). */
static Value *ad_node(Autodiff *a, OpKind op, const char *name, Value **in, int n_in)
{
    Node *m = ir_add_node(a->g, op, NULL, in, n_in, 1, &name);
    m->backward = 1;
    if (ir_op(op)->infer(m, a->d)) return NULL;
    return m->out[0];
}

/* Adds contribution c to the gradient of v. */
static int ad_accumulate(Autodiff *a, Value *v, Value *c)
{
    ad_grow(a);
    if (!a->acc[v->id]) {
        a->acc[v->id] = c;
        return 0;
    }
    char name[256];
    snprintf(name, sizeof name, "%s_gradsum", v->name);
    Value *in[2] = {a->acc[v->id], c};
    Value *s = ad_node(a, OP_Add, name, in, 2);
    if (!s) return -1;
    ad_grow(a);
    a->acc[v->id] = s;
    return 0;
}

/* Whether backward node input v is one that node n's gradient may read. */
static int read_allowed(const Autodiff *a, const Node *n, const Value *v)
{
    if (v->kind == VK_CONST) return 1;
    if (v->producer && v->producer->id >= a->n_fwd) return 1; /* built by the backward part */
    const OpDesc *od = ir_op(n->op);
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] == v && od->backward_reads(n, 0, i)) return 1;
    for (int j = 0; j < n->n_out; j++)
        if (n->out[j] == v && od->backward_reads(n, 1, j)) return 1;
    return 0;
}

/* The name of a parameter n depends on (for error messages). */
static const char *some_param(const Autodiff *a, const Node *n)
{
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] && a->dep[n->in[i]->id]) return a->g->train->wrt[a->dep[n->in[i]->id] - 1]->name;
    return "?";
}

/* Differentiates forward node n (its outputs' gradients are complete). */
static int ad_node_grad(Autodiff *a, Node *n)
{
    int any_dy = 0, any_need = 0;
    for (int j = 0; j < n->n_out; j++) any_dy |= is_float(n->out[j]) && a->acc[n->out[j]->id] != NULL;
    if (!any_dy) return 0;
    unsigned char *need = calloc((size_t)n->n_in + 1, 1);
    Value **dy = calloc((size_t)n->n_out + 1, sizeof *dy), **dx = calloc((size_t)n->n_in + 1, sizeof *dx);
    GC_ASSERT(need && dy && dx);
    for (int i = 0; i < n->n_in; i++) {
        need[i] = is_float(n->in[i]) && a->dep[n->in[i]->id];
        any_need |= need[i];
    }
    for (int j = 0; j < n->n_out; j++) dy[j] = is_float(n->out[j]) ? a->acc[n->out[j]->id] : NULL;
    int rc = 0;
    const OpDesc *od = ir_op(n->op);
    if (!any_need) goto done;
    if (!od->gradient) {
        rc = diag_node_error(a->d, n, "op '%s' has no gradient (needed between the loss '%s' and parameter '%s')",
                             od->name, a->g->outputs[0]->name, some_param(a, n));
        goto done;
    }
    GC_ASSERT(od->backward_reads && "an op with a gradient declares what it reads");
    int first = a->g->n_nodes;
    GradCtx gc = {.g = a->g, .n = n, .dy = dy, .dx = dx, .need = need, .d = a->d};
    rc = od->gradient(&gc);
    if (!rc && gc.err) rc = -1;
    for (int k = first; k < a->g->n_nodes && !rc; k++) {
        Node *m = a->g->nodes[k];
        m->id = k;
        for (int i = 0; i < m->n_in && !rc; i++)
            if (m->in[i] && !read_allowed(a, n, m->in[i]))
                rc = diag_node_error(a->d, n,
                                     "internal error: the gradient of op '%s' reads '%s', which its backward_reads "
                                     "facet does not declare",
                                     od->name, m->in[i]->name);
    }
    for (int i = 0; i < n->n_in && !rc; i++)
        if (dx[i]) rc = ad_accumulate(a, n->in[i], dx[i]);
done:
    free(need);
    free(dy);
    free(dx);
    return rc;
}

/* An Identity named `name` of v (a graph output keeps the name through
 * simplify, which forwards the identity's input under it). */
static Value *ad_named(Autodiff *a, Value *v, const char *name)
{
    Node *m = ir_add_node(a->g, OP_Identity, name, &v, 1, 1, &name);
    m->backward = 1;
    if (ir_op(OP_Identity)->infer(m, a->d)) return NULL;
    return m->out[0];
}

/* The optimizer node over the parameters with a gradient (see file comment). */
static int ad_optimizer(Autodiff *a, Value **grads)
{
    Graph *g = a->g;
    const TrainSpec *t = g->train;
    int adam = t->optimizer == TRAIN_ADAM;
    Value **ps = calloc((size_t)t->n_wrt + 1, sizeof *ps), **gs = calloc((size_t)t->n_wrt + 1, sizeof *gs);
    GC_ASSERT(ps && gs);
    int np = 0;
    for (int k = 0; k < t->n_wrt; k++)
        if (grads[k]) {
            if (t->wrt[k]->kind != VK_STATE) {
                free(ps);
                free(gs);
                return diag_error(a->d, "parameter '%s' is not training state (a graph input cannot be trained)",
                                  t->wrt[k]->name);
            }
            ps[np] = t->wrt[k];
            gs[np++] = grads[k];
        }
    int S = adam ? 2 : 1, rc = 0;
    int n_in = 2 + (2 + S) * np, n_out = (1 + S) * np;
    Value **in = calloc((size_t)n_in, sizeof *in);
    const char **names = calloc((size_t)n_out, sizeof *names);
    GC_ASSERT(in && names);
    Shape s0 = ir_shape(0, NULL);
    float lr = (float)t->lr;
    Value *R = ir_add_const(g, "learning_rate", DT_F32, &s0, &lr, 1);
    Value *T = ir_add_state(g, "train_step_count", DT_I64, &s0, NULL);
    int64_t one = 1;
    Value *one_v = ir_add_const(g, "one", DT_I64, &s0, &one, 1);
    Value *T1 = NULL;
    if (adam) { /* Adam's T counts updates from 1; Momentum's from 0 */
        Value *tin[2] = {T, one_v};
        if (!(T1 = ad_node(a, OP_Add, "train_step_next", tin, 2))) rc = -1;
    }
    in[0] = R;
    in[1] = adam ? T1 : T;
    char buf[512];
    for (int k = 0; k < np && !rc; k++) {
        in[2 + k] = ps[k];
        in[2 + np + k] = gs[k];
        for (int s = 0; s < S; s++) {
            snprintf(buf, sizeof buf, "%s_%s", ps[k]->name, adam ? (s ? "adam_v" : "adam_m") : "momentum");
            in[2 + (2 + s) * np + k] = ir_add_state(g, buf, ps[k]->dtype, &ps[k]->shape, NULL);
        }
        for (int o = 0; o <= S; o++) {
            snprintf(buf, sizeof buf, "%s_new", in[2 + (o ? 1 + o : 0) * np + k]->name);
            names[o * np + k] = ir_strdup(g, buf);
        }
    }
    if (!rc && np) {
        Node *m = ir_add_node(g, adam ? OP_Adam : OP_Momentum, adam ? "adam" : "sgd", in, n_in, n_out, names);
        m->backward = 1;
        char attrs[512];
        if (adam)
            snprintf(attrs, sizeof attrs, "alpha=%.17g beta=%.17g epsilon=%.17g norm_coefficient=%.17g", t->beta1,
                     t->beta2, t->eps, t->weight_decay);
        else
            snprintf(attrs, sizeof attrs, "alpha=%.17g beta=1 mode=%s norm_coefficient=%.17g", t->momentum,
                     t->nesterov ? "nesterov" : "standard", t->weight_decay);
        rc = ir_set_attrs(g, m, attrs, a->d);
        if (!rc) rc = ir_op(m->op)->infer(m, a->d);
        for (int k = 0; k < np && !rc; k++)
            for (int o = 0; o <= S; o++) ir_add_update(g, in[2 + (o ? 1 + o : 0) * np + k], m->out[o * np + k]);
    }
    /* running statistics (training-mode BatchNormalization) written back */
    for (int i = 0; i < a->n_fwd && !rc; i++) {
        Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        for (int k = 0; k < od->n_stat_updates; k++) {
            const InplacePair *p = &od->stat_updates[k];
            Value *v = p->in < n->n_in ? n->in[p->in] : NULL;
            if (v && v->kind == VK_STATE && p->out < n->n_out && n->out[p->out] && !n->out[p->out]->is_output)
                ir_add_update(g, v, n->out[p->out]);
        }
    }
    if (!rc) {
        if (!adam) {
            Value *tin[2] = {T, one_v};
            if (!(T1 = ad_node(a, OP_Add, "train_step_next", tin, 2))) rc = -1;
        }
        if (!rc) ir_add_update(g, T, T1);
    }
    free(in);
    free(names);
    free(ps);
    free(gs);
    return rc;
}

int pass_autodiff(Graph *g, Diag *d)
{
    TrainSpec *t = g->train;
    if (!t) return 0;
    if (g->n_syms)
        return diag_error(d, "autodiff: training does not support runtime shapes yet (symbolic dim %s); pass --shape",
                          g->syms[0].name);
    char sh[256];
    if (g->n_outputs < 1) return diag_error(d, "autodiff: the model has no outputs (the first output is the loss)");
    Value *loss = g->outputs[0];
    if (!ir_dtype_is_float(loss->dtype) || ir_numel(&loss->shape) != 1)
        return diag_error(d, "the loss (the model's first output '%s') must be a float scalar; it is %s%s", loss->name,
                          ir_dtype_name(loss->dtype), ir_shape_str(&loss->shape, sh, sizeof sh));
    if (t->n_wrt == 0) return diag_error(d, "autodiff: the model has no trainable parameters (float constants)");
    Autodiff a = {.g = g, .d = d, .n_fwd = g->n_nodes};
    ad_grow(&a);
    for (int k = t->n_wrt - 1; k >= 0; k--) a.dep[t->wrt[k]->id] = k + 1;
    for (int i = 0; i < a.n_fwd; i++) {
        Node *n = g->nodes[i];
        n->id = i;
        int dep = 0;
        for (int j = 0; j < n->n_in && !dep; j++) dep = n->in[j] ? a.dep[n->in[j]->id] : 0;
        for (int j = 0; j < n->n_out; j++) a.dep[n->out[j]->id] = dep;
    }
    int rc = 0;
    if (a.dep[loss->id]) {
        unsigned char one[8];
        ir_store_f64(loss->dtype, one, 0, 1.0);
        char name[256];
        snprintf(name, sizeof name, "%s_grad_seed", loss->name);
        a.acc[loss->id] = ir_add_const(g, name, loss->dtype, &loss->shape, one, 1);
        ad_grow(&a);
        for (int i = a.n_fwd - 1; i >= 0 && !rc; i--) rc = ad_node_grad(&a, g->nodes[i]);
    }
    Value **grads = calloc((size_t)t->n_wrt + 1, sizeof *grads);
    GC_ASSERT(grads);
    for (int k = 0; k < t->n_wrt && !rc; k++) {
        Value *p = t->wrt[k];
        ad_grow(&a);
        grads[k] = p->id < a.cap ? a.acc[p->id] : NULL;
    }
    if (!rc && t->optimizer == TRAIN_GRADS) {
        for (int k = 0; k < t->n_wrt && !rc; k++) {
            Value *p = t->wrt[k], *gv = grads[k];
            char name[512];
            snprintf(name, sizeof name, "grad_%s", p->name);
            if (!gv) {
                gv = ir_add_const(g, NULL, p->dtype, &p->shape, NULL, 0);
                gv->data = ir_alloc(g, gv->nbytes);
            }
            Value *o = ad_named(&a, gv, name);
            if (!o) rc = -1;
            else ir_add_output(g, o);
        }
    } else if (!rc) {
        rc = ad_optimizer(&a, grads);
    }
    free(grads);
    free(a.dep);
    free(a.acc);
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    return rc;
}
