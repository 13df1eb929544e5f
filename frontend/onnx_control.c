/* onnx_control.c — ONNX control flow (Scan, Loop, If) unrolled at import.
 *
 * graphc compiles static graphs, so a control-flow node whose iteration
 * count is known when the model is loaded is replaced by plain nodes: its
 * body is instantiated once per iteration and the iterations are chained
 * through their state values. Nothing of the control flow survives into the
 * IR; passes and backends see ordinary Gather / Unsqueeze / Concat /
 * Identity nodes and the body's own ops.
 *
 * Instantiation. A body is a GraphProto whose nodes name their values
 * locally. Each iteration gets a Scope mapping the body's names to names of
 * the outer graph: body inputs → the iteration's operands, node outputs →
 * fresh names "<node>_t<iteration>_<name>" (unique in the model). A name
 * the body does not define is looked up in the enclosing scopes (bodies
 * nested in bodies), and failing those is left as is: a value of the main
 * graph. Body nodes are converted once (imp_from_onnx), then copied per
 * iteration with renamed inputs and outputs, upgraded from the model's
 * opset like any node (onnx_upgrade.c) and appended as pending nodes; a
 * control-flow node inside a body is unrolled recursively. Body
 * initializers become constants once per control-flow node.
 *
 * Scan (opset 9+): inputs are N states then M scan inputs. Iteration t
 * reads element t (or T-1-t for scan_input_directions 1) of each scan input
 * along its scan_input_axes entry with a Gather of a constant scalar index
 * (which drops the axis, as the body expects); the K scan outputs of all
 * iterations are stacked along scan_output_axes (Unsqueeze + Concat, in
 * reverse order for scan_output_directions 1). T comes from the static
 * shape of the scan inputs, so they must be graph inputs or constants.
 * Scan (opset 8): the same per batch element b (axis 0 of every state and
 * scan input; the scan axis is 1), after which the final states and the
 * scan outputs are stacked along axis 0. sequence_lens must be absent or a
 * constant whose every entry is the full length (padding is not modelled).
 *
 * Loop: unrolled when the trip count M is a constant (initializer, Constant
 * output, or a graph input bound with --bind NAME=FILE.npy, read here
 * because binds are applied after loading) and the condition input is
 * absent or a constant (true runs M iterations, false none), and the body's
 * condition output is its condition input (directly or through Identity)
 * or a constant true. The iteration-number input is a constant per
 * iteration; the condition input is constant true; scan outputs are stacked
 * along a new axis 0. If: with a constant condition the chosen branch is
 * instantiated once; with a runtime one, both are and each output selects
 * between them (Where when the branches declare the same static type,
 * IfSelect, which may change the shape, otherwise).
 *
 * Limits: at most CTL_MAX_NODES body nodes are instantiated per
 * control-flow node of the main graph (iterations x body nodes, nested
 * bodies included); zero-iteration loops with scan outputs are refused
 * (their element shape is unknown). Errors name the control-flow node.
 */
#include "../ir/op.h"
#include "npy.h"
#include "onnx_import.h"
#include "onnx_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_MAX_NODES 262144 /* body nodes instantiated per top-level control-flow node */

typedef struct Scope {
    const struct Scope *parent;
    const char **from, **to; /* open addressing on `from` */
    int cap, n;
} Scope;

typedef struct Ctl {
    OnnxImp *im;
    ImpEnv env;
    int opset;
    int64_t budget; /* body nodes left to instantiate */
} Ctl;

/* ---- scopes ---- */

static void scope_init(Ctl *c, Scope *sc, const Scope *parent, int n_names)
{
    int cap = 16;
    while (cap < 2 * n_names + 2) cap *= 2;
    sc->parent = parent;
    sc->cap = cap;
    sc->n = 0;
    sc->from = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)cap);
    sc->to = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)cap);
}

/* Maps body name `from` to outer name `to` (a later definition wins). */
static void scope_put(Ctl *c, Scope *sc, const char *from, const char *to)
{
    if (2 * (sc->n + 1) > sc->cap) {
        Scope big;
        scope_init(c, &big, sc->parent, sc->cap);
        for (int i = 0; i < sc->cap; i++)
            if (sc->from[i]) scope_put(c, &big, sc->from[i], sc->to[i]);
        *sc = big;
    }
    uint64_t m = (uint64_t)sc->cap - 1, i = ir_hash_str(from) & m;
    while (sc->from[i] && strcmp(sc->from[i], from) != 0) i = (i + 1) & m;
    if (!sc->from[i]) sc->n++;
    sc->from[i] = from;
    sc->to[i] = to;
}

/* The outer name of `name` seen from sc: its nearest definition, else the
 * name itself (a value of the main graph). */
static const char *scope_get(const Scope *sc, const char *name)
{
    for (; sc; sc = sc->parent) {
        uint64_t m = (uint64_t)sc->cap - 1;
        for (uint64_t i = ir_hash_str(name) & m; sc->from[i]; i = (i + 1) & m)
            if (strcmp(sc->from[i], name) == 0) return sc->to[i];
    }
    return name;
}

/* ---- small node builders (pending nodes in the IR's opset-17 form) ---- */

/* fmt formatted with (a, t, b): its conversions are %s, %lld, %s in order;
 * b may be NULL (""). */
static char *ctl_fmt(Ctl *c, const char *fmt, const char *a, long long t, const char *b)
{
    size_t n = strlen(a) + (b ? strlen(b) : 0) + 48;
    char *s = arena_alloc(c->env.tmp, n);
    snprintf(s, n, fmt, a, t, b ? b : "");
    return s;
}

/* a followed by b, in the import's arena. */
static char *ctl_cat(Ctl *c, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = arena_alloc(c->env.tmp, la + lb + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

static void set_int_attr(Ctl *c, ImpNode *n, const char *name, int64_t v)
{
    ImpAttr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = ONNX_ATTR_INT;
    a.i = v;
    imp_set_attr(c->im, n, &a);
}

/* out = Gather(data, constant index idx, axis); returns out's name. */
static const char *mk_gather(Ctl *c, const ImpNode *owner, const char *data, int64_t idx, int64_t axis,
                             const char *base)
{
    const char *ic = imp_const_i64(c->im, ctl_fmt(c, "%s_idx%lld%s", owner->name, idx, NULL), &idx, 1, 0);
    const char *out = imp_fresh_name(c->im, base);
    ImpNode *g = imp_new_node(c->im, "Gather", ctl_cat(c, out, "_gather"), 2, 1);
    g->in[0] = data;
    g->in[1] = ic;
    g->out[0] = out;
    set_int_attr(c, g, "axis", axis);
    return out;
}

static void mk_identity(Ctl *c, const char *in, const char *out)
{
    ImpNode *n = imp_new_node(c->im, "Identity", ctl_cat(c, out, "_identity"), 1, 1);
    n->in[0] = in;
    n->out[0] = out;
}

/* out = Concat(Unsqueeze(in[k], axis) for k in order (reversed when rev),
 * axis): the k values stacked along a new axis. */
static void mk_stack(Ctl *c, const ImpNode *owner, const char *const *in, int64_t count, int64_t axis, int rev,
                     const char *out)
{
    const char *ax = imp_const_i64(c->im, ctl_fmt(c, "%s_axis%lld%s", owner->name, axis, NULL), &axis, 1, 1);
    ImpNode *cat = imp_new_node(c->im, "Concat", ctl_cat(c, out, "_concat"), (int)count, 1);
    cat->out[0] = out;
    set_int_attr(c, cat, "axis", axis);
    for (int64_t k = 0; k < count; k++) {
        const char *src = in[rev ? count - 1 - k : k];
        const char *u = imp_fresh_name(c->im, ctl_fmt(c, "%s_unsq%lld%s", out, k, NULL));
        ImpNode *un = imp_new_node(c->im, "Unsqueeze", ctl_cat(c, u, "_node"), 2, 1);
        un->in[0] = src;
        un->in[1] = ax;
        un->out[0] = u;
        cat->in[k] = u;
    }
}

/* ---- bodies ---- */

typedef struct Body {
    const OnnxGraph *g;
    ImpNode *nodes; /* converted once */
    Scope consts;   /* body initializers → constants; parent: the outer scope */
} Body;

static int expand(Ctl *c, ImpNode *n, const Scope *outer);

static int body_open(Ctl *c, ImpNode *owner, const char *attr, const Scope *outer, Body *b)
{
    ImpAttr *a = imp_attr(owner, attr);
    if (!a || a->type != ONNX_ATTR_GRAPH || !a->graph)
        return imp_node_error(c->im, owner, "attribute '%s' (a graph) is required", attr);
    b->g = a->graph;
    b->nodes = arena_alloc(c->env.tmp, sizeof(ImpNode) * (size_t)(b->g->n_nodes + 1));
    for (int i = 0; i < b->g->n_nodes; i++) {
        const OnnxNode *on = &b->g->nodes[i];
        if (on->domain[0] && strcmp(on->domain, "ai.onnx") != 0)
            return imp_node_error(c->im, owner, "body node '%s' (%s): domain '%s' is not supported", on->name,
                                  on->op_type, on->domain);
        if (imp_from_onnx(c->im, on, i, &b->nodes[i])) return -1;
    }
    scope_init(c, &b->consts, outer, b->g->n_inits);
    for (int i = 0; i < b->g->n_inits; i++) {
        const OnnxTensor *t = &b->g->inits[i];
        TensorData td;
        if (!t->name[0]) return imp_node_error(c->im, owner, "body initializer %d has no name", i);
        if (imp_tensor(c->im, t, &td)) return -1;
        const char *nm = imp_fresh_name(c->im, ctl_cat(c, ctl_cat(c, owner->name, "_"), t->name));
        ir_add_const(c->env.g, nm, td.dtype, &td.shape, td.data, 0);
        scope_put(c, &b->consts, t->name, nm);
    }
    return 0;
}

/* Instantiates body b once: sc (whose parent is b->consts) already maps
 * the body inputs; node outputs get fresh names prefixed `prefix`. outs[k]
 * receives the outer name of body output k. */
static int body_inst(Ctl *c, const ImpNode *owner, Body *b, Scope *sc, const char *prefix, const char **outs)
{
    const OnnxGraph *g = b->g;
    c->budget -= g->n_nodes;
    if (c->budget < 0)
        return imp_node_error(c->im, owner, "unrolling needs more than %d body nodes (the limit)", CTL_MAX_NODES);
    for (int i = 0; i < g->n_nodes; i++) {
        const ImpNode *bn = &b->nodes[i];
        ImpNode tmp = *bn, *n = &tmp;
        int ctl = !strcmp(bn->op_type, "Scan") || !strcmp(bn->op_type, "Loop") || !strcmp(bn->op_type, "If");
        if (!ctl) n = imp_new_node(c->im, bn->op_type, "", bn->n_in, bn->n_out);
        n->name = ctl_cat(c, prefix, bn->name);
        n->in = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(bn->n_in + 1));
        n->out = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(bn->n_out + 1));
        n->n_in = bn->n_in;
        n->n_out = bn->n_out;
        for (int k = 0; k < bn->n_in; k++) n->in[k] = bn->in[k][0] ? scope_get(sc, bn->in[k]) : "";
        for (int k = 0; k < bn->n_out; k++) {
            n->out[k] = "";
            if (!bn->out[k][0]) continue;
            n->out[k] = imp_fresh_name(c->im, ctl_cat(c, prefix, bn->out[k]));
            scope_put(c, sc, bn->out[k], n->out[k]);
        }
        n->attrs = arena_alloc(c->env.tmp, sizeof(ImpAttr) * (size_t)(bn->n_attrs + 1));
        if (bn->n_attrs) memcpy(n->attrs, bn->attrs, sizeof(ImpAttr) * (size_t)bn->n_attrs);
        n->n_attrs = bn->n_attrs;
        if (ctl ? expand(c, n, sc) : onnx_upgrade_node(c->im, n, c->opset)) return -1;
    }
    for (int k = 0; k < g->n_outputs; k++) outs[k] = scope_get(sc, g->outputs[k].name);
    return 0;
}

/* ---- constants known at import ---- */

/* Leaf of a constant scalar: a one-element constant, or a graph input bound
 * with --bind (read from its .npy here: binds are applied after loading).
 * 1 found (*x, *dt set), 0 not a constant, -1 error. */
static int leaf_scalar(Ctl *c, const ImpNode *owner, const Value *v, double *x, DType *dt)
{
    if (v->kind == VK_CONST) {
        if (ir_numel(&v->shape) != 1 || !v->data)
            return imp_node_error(c->im, owner, "'%s' must hold one element", v->name);
        *dt = v->dtype;
        *x = ir_load_f64(v->dtype, v->data, 0);
        return 1;
    }
    const LoadOptions *o = c->env.opts;
    const char *file = NULL;
    size_t nl = strlen(v->name);
    for (int k = 0; o && k < o->n_binds; k++) {
        const char *eq = strrchr(o->binds[k], '=');
        if (eq && (size_t)(eq - o->binds[k]) == nl && !strncmp(o->binds[k], v->name, nl)) file = eq + 1;
    }
    if (!file) return 0;
    NpyArray arr;
    Diag *d = c->env.d;
    const char *saved = d->file;
    d->file = NULL; /* the npy reader names its own file */
    int rc = npy_read(file, &arr, d);
    d->file = saved;
    if (rc) return -1;
    int64_t numel = 1;
    for (int i = 0; i < arr.shape.rank; i++) numel *= arr.shape.dims[i];
    if (numel != 1) {
        npy_free(&arr);
        return imp_node_error(c->im, owner, "--bind %s: a scalar is expected", v->name);
    }
    *dt = arr.dtype;
    *x = ir_load_f64(arr.dtype, arr.data, 0);
    npy_free(&arr);
    return 1;
}

#define CTL_MAX_EVAL_DEPTH 64

/* Value v as a scalar computed at import: a leaf (leaf_scalar) or the
 * one-element output of an already built node whose inputs are all such
 * scalars (e.g. the trip count ceil((limit - start) / delta) of an expanded
 * Range), evaluated with the op's own infer and reference eval and rounded
 * to the output dtype. 1 found, 0 not a constant, -1 error. */
static int eval_scalar(Ctl *c, const ImpNode *owner, Value *v, double *x, DType *dt, int depth)
{
    if (v->kind != VK_TEMP) return leaf_scalar(c, owner, v, x, dt);
    Node *p = v->producer;
    if (!p || depth > CTL_MAX_EVAL_DEPTH) return 0;
    const OpDesc *od = ir_op(p->op);
    if (!od->infer || !od->eval || p->n_in > 8 || p->n_out > 8) return 0;
    double ins[8], *outs[8];
    const double *in_ptr[8];
    for (int i = 0; i < p->n_in; i++) {
        in_ptr[i] = NULL;
        if (!p->in[i]) continue;
        DType idt;
        int r = eval_scalar(c, owner, p->in[i], &ins[i], &idt, depth + 1);
        if (r <= 0) return r;
        in_ptr[i] = &ins[i];
    }
    Diag scratch = {0};
    if (od->infer(p, &scratch)) return 0;
    for (int k = 0; k < p->n_out; k++) {
        if (ir_numel(&p->out[k]->shape) != 1) return 0;
        outs[k] = arena_alloc(c->env.tmp, sizeof(double));
    }
    if (od->eval(p, in_ptr, outs, &scratch)) return 0;
    *dt = v->dtype;
    *x = ir_round_to(v->dtype, outs[v->producer_out][0]);
    return 1;
}

/* Reads the scalar value `name` as an int64 when it is known at import (see
 * eval_scalar). 1 found, 0 not a constant, -1 error. */
static int const_scalar(Ctl *c, const ImpNode *owner, const char *name, int64_t *out)
{
    Value *v = ir_find_value(c->env.g, name);
    if (!v) return 0;
    double x;
    DType dt;
    int r = eval_scalar(c, owner, v, &x, &dt, 0);
    if (r <= 0) return r;
    if (dt != DT_I64 && dt != DT_I32 && dt != DT_BOOL && dt != DT_U8)
        return imp_node_error(c->im, owner, "'%s' is %s; int64, int32 or bool expected", name, ir_dtype_name(dt));
    if (!(x >= -9.2e18 && x <= 9.2e18)) return imp_node_error(c->im, owner, "'%s' is out of range", name);
    *out = dt == DT_BOOL || dt == DT_U8 ? (int64_t)(x != 0) : (int64_t)x;
    return 1;
}

/* ---- Scan ---- */

typedef struct ScanIO {
    int n_state, n_scan, n_out; /* N, M, K */
    const char **state;  /* N initial states */
    const char **scan;   /* M scan inputs */
    int64_t *in_axis;    /* M, normalized */
    int64_t *in_dir;     /* M */
    int64_t t_count;
} ScanIO;

/* Runs T iterations of body b; final states into fin[N], the K scan
 * outputs of iteration t into per[k * T + t]. */
static int scan_run(Ctl *c, ImpNode *n, Body *b, const ScanIO *io, const char *tag, const char **fin,
                    const char **per)
{
    int N = io->n_state, M = io->n_scan, K = io->n_out;
    const char **cur = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + 1));
    const char **outs = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + K + 1));
    for (int i = 0; i < N; i++) cur[i] = io->state[i];
    for (int64_t t = 0; t < io->t_count; t++) {
        const char *prefix = ctl_fmt(c, "%s_t%lld_%s", n->name, t, tag);
        Scope sc;
        scope_init(c, &sc, &b->consts, b->g->n_nodes + b->g->n_inputs);
        for (int i = 0; i < N; i++) scope_put(c, &sc, b->g->inputs[i].name, cur[i]);
        for (int j = 0; j < M; j++) {
            int64_t idx = io->in_dir[j] ? io->t_count - 1 - t : t;
            const char *bin = b->g->inputs[N + j].name;
            scope_put(c, &sc, bin, mk_gather(c, n, io->scan[j], idx, io->in_axis[j], ctl_cat(c, prefix, bin)));
        }
        if (body_inst(c, n, b, &sc, prefix, outs)) return -1;
        for (int i = 0; i < N; i++) cur[i] = outs[i];
        for (int k = 0; k < K; k++) per[(int64_t)k * io->t_count + t] = outs[N + k];
    }
    for (int i = 0; i < N; i++) fin[i] = cur[i];
    return 0;
}

/* Reads an ints attribute of `count` entries (default `dflt` each). */
static int scan_ints(Ctl *c, ImpNode *n, const char *name, int count, int64_t dflt, int64_t **out)
{
    ImpAttr *a = imp_attr(n, name);
    int64_t *v = arena_alloc(c->env.tmp, sizeof(int64_t) * (size_t)(count + 1));
    for (int i = 0; i < count; i++) v[i] = dflt;
    if (a) {
        if (a->type != ONNX_ATTR_INTS || a->n != count)
            return imp_node_error(c->im, n, "attribute '%s' must hold %d ints", name, count);
        memcpy(v, a->ints, sizeof(int64_t) * (size_t)count);
    }
    *out = v;
    return 0;
}

static int expand_scan(Ctl *c, ImpNode *n, const Scope *outer)
{
    ImpAttr *nsi = imp_attr(n, "num_scan_inputs");
    if (!nsi || nsi->type != ONNX_ATTR_INT || nsi->i < 1)
        return imp_node_error(c->im, n, "attribute 'num_scan_inputs' (a positive int) is required");
    int v8 = c->opset < 9, first = v8 ? 1 : 0;
    int M = (int)(nsi->i < n->n_in ? nsi->i : n->n_in);
    int N = n->n_in - first - M;
    if (nsi->i > n->n_in - first || N < 0)
        return imp_node_error(c->im, n, "num_scan_inputs %lld exceeds the %d inputs", (long long)nsi->i, n->n_in - first);
    int K = n->n_out - N;
    if (K < 0) return imp_node_error(c->im, n, "has %d outputs but %d state variables", n->n_out, N);
    Body b;
    if (body_open(c, n, "body", outer, &b)) return -1;
    if (b.g->n_inputs != N + M || b.g->n_outputs != N + K)
        return imp_node_error(c->im, n, "body has %d inputs and %d outputs; %d and %d expected", b.g->n_inputs,
                              b.g->n_outputs, N + M, N + K);
    ScanIO io = {N, M, K, NULL, NULL, NULL, NULL, -1};
    io.state = (const char **)n->in + first;
    io.scan = (const char **)n->in + first + N;
    int64_t *out_axis, *out_dir;
    if (scan_ints(c, n, v8 ? "directions" : "scan_input_directions", M, 0, &io.in_dir) ||
        scan_ints(c, n, "scan_input_axes", M, v8 ? 1 : 0, &io.in_axis) ||
        scan_ints(c, n, "scan_output_axes", K, 0, &out_axis) || scan_ints(c, n, "scan_output_directions", K, 0, &out_dir))
        return -1;
    int64_t batch = 1;
    for (int j = 0; j < M; j++) {
        DType dt;
        Shape s = {0};
        if (!io.scan[j][0]) return imp_node_error(c->im, n, "scan input %d is absent", j);
        if (imp_known(c->im, io.scan[j], &dt, &s))
            return imp_node_error(c->im, n, "the length of scan input '%s' must be known at import (a graph input or constant)",
                                  io.scan[j]);
        int64_t ax = io.in_axis[j] < 0 ? io.in_axis[j] + s.rank : io.in_axis[j];
        if (ax < 0 || ax >= s.rank || (v8 && s.rank < 2))
            return imp_node_error(c->im, n, "scan axis %lld is out of range for scan input '%s' of rank %d",
                                  (long long)io.in_axis[j], io.scan[j], s.rank);
        if (v8 && j > 0 && s.dims[0] != batch)
            return imp_node_error(c->im, n, "scan inputs disagree on the batch size");
        if (v8) batch = s.dims[0];
        if (io.t_count >= 0 && s.dims[ax] != io.t_count)
            return imp_node_error(c->im, n, "scan inputs disagree on the sequence length (%lld vs %lld)",
                                  (long long)io.t_count, (long long)s.dims[ax]);
        io.in_axis[j] = v8 ? 0 : ax; /* opset 8: per batch element, the scan axis becomes 0 */
        io.t_count = s.dims[ax];
    }
    if (io.t_count < 1 || batch < 1) return imp_node_error(c->im, n, "a scan of zero iterations is not supported");
    if (io.t_count * batch > CTL_MAX_NODES)
        return imp_node_error(c->im, n, "unrolling %lld iterations exceeds the limit of %d", (long long)(io.t_count * batch),
                              CTL_MAX_NODES);
    if (v8 && n->n_in > 0 && n->in[0][0]) { /* sequence_lens: only the full length everywhere */
        Value *v = ir_find_value(c->env.g, n->in[0]);
        int ok = v && v->kind == VK_CONST && v->dtype == DT_I32 && v->nbytes == (size_t)batch * 4;
        for (int64_t i = 0; ok && i < batch; i++) {
            int32_t x;
            memcpy(&x, (const char *)v->data + 4 * i, 4);
            ok = x == io.t_count;
        }
        if (!ok)
            return imp_node_error(c->im, n, "sequence_lens must be absent or a constant int32 [%lld] of full lengths (%lld); padded sequences are not supported",
                                  (long long)batch, (long long)io.t_count);
    }
    const char **fin = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + 1));
    const char **per = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(K * io.t_count + 1));
    if (!v8) {
        if (scan_run(c, n, &b, &io, "", fin, per)) return -1;
        for (int i = 0; i < N; i++)
            if (n->out[i][0]) mk_identity(c, fin[i], n->out[i]);
        for (int k = 0; k < K; k++)
            if (n->out[N + k][0])
                mk_stack(c, n, per + (int64_t)k * io.t_count, io.t_count, out_axis[k], out_dir[k] != 0, n->out[N + k]);
        return 0;
    }
    /* opset 8: one scan per batch element, then stack along axis 0 */
    const char **bfin = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N * batch + 1));
    const char **bper = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(K * batch + 1));
    ScanIO one = io;
    one.state = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + 1));
    one.scan = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(M + 1));
    for (int64_t bi = 0; bi < batch; bi++) {
        for (int i = 0; i < N; i++)
            one.state[i] = mk_gather(c, n, io.state[i], bi, 0, ctl_fmt(c, "%s_b%lld_%s", n->name, bi, io.state[i]));
        for (int j = 0; j < M; j++)
            one.scan[j] = mk_gather(c, n, io.scan[j], bi, 0, ctl_fmt(c, "%s_b%lld_%s", n->name, bi, io.scan[j]));
        if (scan_run(c, n, &b, &one, ctl_fmt(c, "%s%lld_%s", "b", bi, NULL), fin, per)) return -1;
        for (int i = 0; i < N; i++) bfin[(int64_t)i * batch + bi] = fin[i];
        for (int k = 0; k < K; k++) {
            const char *o = imp_fresh_name(c->im, ctl_fmt(c, "%s_b%lld_out%s", n->name, bi, n->out[N + k]));
            mk_stack(c, n, per + (int64_t)k * io.t_count, io.t_count, 0, 0, o);
            bper[(int64_t)k * batch + bi] = o;
        }
    }
    for (int i = 0; i < N; i++)
        if (n->out[i][0]) mk_stack(c, n, bfin + (int64_t)i * batch, batch, 0, 0, n->out[i]);
    for (int k = 0; k < K; k++)
        if (n->out[N + k][0]) mk_stack(c, n, bper + (int64_t)k * batch, batch, 0, 0, n->out[N + k]);
    return 0;
}

/* ---- Loop ---- */

/* Whether body output 0 (the condition) is the condition input passed
 * through or a constant true. */
static int loop_cond_passes(const Body *b)
{
    const char *co = b->g->outputs[0].name, *ci = b->g->inputs[1].name;
    if (!strcmp(co, ci)) return 1;
    for (int i = 0; i < b->g->n_nodes; i++) {
        const ImpNode *bn = &b->nodes[i];
        if (bn->n_out < 1 || strcmp(bn->out[0], co) != 0) continue;
        if (!strcmp(bn->op_type, "Identity")) return bn->n_in == 1 && !strcmp(bn->in[0], ci);
        if (!strcmp(bn->op_type, "Constant") && bn->n_attrs == 1 && bn->attrs[0].type == ONNX_ATTR_TENSOR) {
            const TensorData *t = &bn->attrs[0].t;
            return t->dtype == DT_BOOL && t->nbytes == 1 && *(const uint8_t *)t->data;
        }
        return 0;
    }
    return 0;
}

static int expand_loop(Ctl *c, ImpNode *n, const Scope *outer)
{
    if (n->n_in < 2) return imp_node_error(c->im, n, "expects at least 2 inputs (M, cond), got %d", n->n_in);
    int N = n->n_in - 2, K = n->n_out - N;
    if (K < 0) return imp_node_error(c->im, n, "has %d outputs but %d loop-carried values", n->n_out, N);
    int64_t trip = -1, cond = 1;
    if (!n->in[0][0])
        return imp_node_error(c->im, n, "Loop: a loop without a trip count is not supported (a data-dependent condition)");
    int r = const_scalar(c, n, n->in[0], &trip);
    if (r < 0) return -1;
    if (r == 0)
        return imp_node_error(c->im, n, "Loop: trip count must be a constant (bind it with --bind %s=FILE.npy)", n->in[0]);
    if (n->in[1][0]) {
        r = const_scalar(c, n, n->in[1], &cond);
        if (r < 0) return -1;
        if (r == 0)
            return imp_node_error(c->im, n, "Loop: the condition must be a constant (bind it with --bind %s=FILE.npy); a data-dependent condition is not supported",
                                  n->in[1]);
    }
    if (trip < 0) trip = 0;
    if (!cond) trip = 0;
    Body b;
    if (body_open(c, n, "body", outer, &b)) return -1;
    if (b.g->n_inputs != N + 2 || b.g->n_outputs != N + K + 1)
        return imp_node_error(c->im, n, "body has %d inputs and %d outputs; %d and %d expected", b.g->n_inputs,
                              b.g->n_outputs, N + 2, N + K + 1);
    if (!loop_cond_passes(&b))
        return imp_node_error(c->im, n, "Loop: a data-dependent condition is not supported (the body's condition output must be its condition input or a constant true)");
    if (trip > CTL_MAX_NODES)
        return imp_node_error(c->im, n, "unrolling %lld iterations exceeds the limit of %d", (long long)trip, CTL_MAX_NODES);
    for (int k = 0; trip == 0 && k < K; k++)
        if (n->out[N + k][0]) return imp_node_error(c->im, n, "a loop of zero iterations with scan outputs is not supported");
    uint8_t one = 1;
    Shape scalar = ir_shape(0, NULL);
    const char *true_name = imp_fresh_name(c->im, ctl_cat(c, n->name, "_true"));
    ir_add_const(c->env.g, true_name, DT_BOOL, &scalar, &one, 1);
    const char **cur = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + 1));
    const char **outs = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(N + K + 2));
    const char **per = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(K * trip + 1));
    for (int i = 0; i < N; i++) cur[i] = n->in[2 + i];
    for (int64_t t = 0; t < trip; t++) {
        const char *prefix = ctl_fmt(c, "%s_t%lld_%s", n->name, t, NULL);
        Scope sc;
        scope_init(c, &sc, &b.consts, b.g->n_nodes + b.g->n_inputs);
        scope_put(c, &sc, b.g->inputs[0].name, imp_const_i64(c->im, ctl_fmt(c, "%s_iter%lld%s", n->name, t, NULL), &t, 1, 0));
        scope_put(c, &sc, b.g->inputs[1].name, true_name);
        for (int i = 0; i < N; i++) {
            if (!cur[i][0]) return imp_node_error(c->im, n, "loop-carried input %d is absent", i);
            scope_put(c, &sc, b.g->inputs[2 + i].name, cur[i]);
        }
        if (body_inst(c, n, &b, &sc, prefix, outs)) return -1;
        for (int i = 0; i < N; i++) cur[i] = outs[1 + i];
        for (int k = 0; k < K; k++) per[(int64_t)k * trip + t] = outs[1 + N + k];
    }
    for (int i = 0; i < N; i++)
        if (n->out[i][0]) mk_identity(c, cur[i], n->out[i]);
    for (int k = 0; k < K; k++)
        if (n->out[N + k][0]) mk_stack(c, n, per + (int64_t)k * trip, trip, 0, 0, n->out[N + k]);
    return 0;
}

/* ---- If ---- */

/* Whether body outputs a and b declare the same static type (element
 * type and every dim a value). */
static int same_static_type(const OnnxValueInfo *a, const OnnxValueInfo *b)
{
    if (!a->has_tensor_type || !b->has_tensor_type || !a->has_shape || !b->has_shape) return 0;
    if (a->elem_type != b->elem_type || a->rank != b->rank) return 0;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k].kind != 1 || b->dims[k].kind != 1 || a->dims[k].value != b->dims[k].value) return 0;
    return 1;
}

/* If with a condition known only at run time: both branches are
 * instantiated (a branch has no side effects, so computing both is only
 * extra work) and each output is the one the condition picks: Where(cond,
 * then, else) when the two branches declare the same static type, else
 * IfSelect(cond, then, else) (ir/ops/select.c), whose shape is the picked
 * branch's: the one of a condition that shape inference folds to a
 * constant, or data-dependent where the two differ. */
static int expand_if_select(Ctl *c, ImpNode *n, const Scope *outer)
{
    Body bt, be;
    if (body_open(c, n, "then_branch", outer, &bt) || body_open(c, n, "else_branch", outer, &be)) return -1;
    for (int i = 0; i < 2; i++) {
        const Body *b = i ? &be : &bt;
        if (b->g->n_inputs != 0 || b->g->n_outputs != n->n_out)
            return imp_node_error(c->im, n, "branch has %d inputs and %d outputs; 0 and %d expected", b->g->n_inputs,
                                  b->g->n_outputs, n->n_out);
    }
    for (int k = 0; k < n->n_out; k++)
        if (!bt.g->outputs[k].has_tensor_type || !be.g->outputs[k].has_tensor_type)
            return imp_node_error(c->im, n, "If: output %d ('%s') is not a tensor (sequence, map and optional types are not supported)",
                                  k, n->out[k]);
    const char **to = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(n->n_out + 1));
    const char **eo = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(n->n_out + 1));
    Scope st, se;
    scope_init(c, &st, &bt.consts, bt.g->n_nodes);
    scope_init(c, &se, &be.consts, be.g->n_nodes);
    if (body_inst(c, n, &bt, &st, ctl_cat(c, n->name, "_then_"), to) ||
        body_inst(c, n, &be, &se, ctl_cat(c, n->name, "_else_"), eo))
        return -1;
    for (int k = 0; k < n->n_out; k++) {
        if (!n->out[k][0]) continue;
        int same = same_static_type(&bt.g->outputs[k], &be.g->outputs[k]);
        ImpNode *w = imp_new_node(c->im, same ? "Where" : "IfSelect", ctl_cat(c, n->out[k], "_select"), 3, 1);
        w->in[0] = n->in[0];
        w->in[1] = to[k];
        w->in[2] = eo[k];
        w->out[0] = n->out[k];
    }
    return 0;
}

static int expand_if(Ctl *c, ImpNode *n, const Scope *outer)
{
    int64_t cond = 0;
    if (n->n_in != 1 || !n->in[0][0]) return imp_node_error(c->im, n, "expects 1 input (cond), got %d", n->n_in);
    int r = const_scalar(c, n, n->in[0], &cond);
    if (r < 0) return -1;
    if (r == 0) return expand_if_select(c, n, outer);
    Body b;
    if (body_open(c, n, cond ? "then_branch" : "else_branch", outer, &b)) return -1;
    if (b.g->n_inputs != 0 || b.g->n_outputs != n->n_out)
        return imp_node_error(c->im, n, "branch has %d inputs and %d outputs; 0 and %d expected", b.g->n_inputs,
                              b.g->n_outputs, n->n_out);
    const char **outs = arena_alloc(c->env.tmp, sizeof(char *) * (size_t)(n->n_out + 1));
    Scope sc;
    scope_init(c, &sc, &b.consts, b.g->n_nodes);
    if (body_inst(c, n, &b, &sc, ctl_cat(c, n->name, cond ? "_then_" : "_else_"), outs)) return -1;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k][0]) mk_identity(c, outs[k], n->out[k]);
    return 0;
}

static int expand(Ctl *c, ImpNode *n, const Scope *outer)
{
    if (!strcmp(n->op_type, "Scan")) return expand_scan(c, n, outer);
    if (!strcmp(n->op_type, "Loop")) return expand_loop(c, n, outer);
    return expand_if(c, n, outer);
}

int onnx_control_node(OnnxImp *im, ImpNode *n, int opset)
{
    if (strcmp(n->op_type, "Scan") && strcmp(n->op_type, "Loop") && strcmp(n->op_type, "If")) return 0;
    Ctl c = {im, imp_env(im), opset, CTL_MAX_NODES};
    return expand(&c, n, NULL) ? -1 : 1;
}
