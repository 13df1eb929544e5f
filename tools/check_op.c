/* check_op.c — graphc check-op FILE.c: every operator FILE.c declares runs
 * on random inputs of a few shapes, and its gradient function agrees with
 * central finite differences of the function itself (as PyTorch's gradcheck
 * does for an autograd.Function).
 *
 * The op runs through the interpreter (the file compiled and loaded as for
 * graphc run --ops), which puts a guard after every buffer the user's code
 * gets: a write past the size a general op's shape rule or workspace
 * request gave is an error, so the shape rule is checked against what the
 * function writes. */
#include "tools/cli.h"

#include "api/compile.h"
#include "ir/custom_op.h"
#include "ir/interp.h"
#include "ir/op.h"
#include "ir/writer.h"
#include "passes/passes.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char check_op_help[] =
    "usage: graphc check-op FILE.c [options]\n"
    "\n"
    "Checks every operator FILE.c declares (GRAPHC_OP, see graphc/custom_op.h) on\n"
    "random inputs (uniform in [-1.5, 1.5)) of shapes [7] and [3,5] (--shape\n"
    "changes that): the op's function runs (compiled from FILE.c, as for graphc\n"
    "run --ops) and writes nothing past the outputs its shape rule gave nor past\n"
    "its workspace, and, when it has a GRAPHC_GRAD function, its gradient is\n"
    "compared with central finite differences of the function itself, as graphc\n"
    "gradcheck does. The functions compute in float, so the differences are\n"
    "taken in float precision: the step is 1e-3 and an element passes when\n"
    "|analytic - numeric| <= 1e-3 + 1e-2 * |numeric| (--eps, --atol, --rtol change\n"
    "that). Inputs are float (an elementwise op on double: double). Attributes\n"
    "take the values of --attr, else 0.75 (float, double), 2 (int64_t) or \"\"\n"
    "(const char *). Prints one line per op and exits with status 0, or prints\n"
    "the failing op, input and largest error and exits with status 1.\n"
    "\n"
    "options:\n"
    "  --attr NAME=VALUE    the value of attribute NAME for every op that has it;\n"
    "                       may be repeated\n"
    "  --shape NAME=D0,D1,...  check ops with an input NAME on this one shape for\n"
    "                       that input instead of [7] and [3,5]; may be repeated\n"
    "  --eps=E --atol=A --rtol=R  the finite-difference step and tolerance\n"
    "  --seed=N             the random inputs' seed (default 1)\n"
    "  -h, --help           this help\n";

typedef struct CheckOpts {
    const char **attrs;
    int n_attrs;
    InputShape *shapes;
    int n_shapes;
    GradcheckOptions go;
    double seed;
} CheckOpts;

/* The shape of input `name` in round si: its --shape, else [7] or [3,5].
 * *fixed: a --shape applies (one round only). */
static Shape input_shape(const CheckOpts *o, const char *name, int si, int *fixed)
{
    static const int64_t dims[2][2] = {{7, 0}, {3, 5}};
    for (int q = 0; q < o->n_shapes; q++)
        if (!strcmp(o->shapes[q].name, name)) {
            *fixed = 1;
            return o->shapes[q].shape;
        }
    return ir_shape(si + 1, dims[si]);
}

/* Builds a graph of one node of user op k on random inputs (in bufs[i]);
 * NULL with a diagnostic. desc: the input shapes, for messages. */
static Graph *check_op_graph(OpKind k, const CheckOpts *o, int si, void **bufs, char *desc, size_t cap, int *fixed,
                             Diag *d)
{
    const OpDesc *od = ir_op(k);
    const IrCustomCall *c = od->custom;
    DType dt = c->general ? DT_F32 : c->dtype;
    Graph *g = ir_graph_new("check_op");
    Value *ins[64];
    size_t len = 0;
    desc[0] = 0;
    for (int i = 0; i < od->min_in && i < 64; i++) {
        Shape s = input_shape(o, od->in_names[i], si, fixed);
        ins[i] = ir_add_input(g, od->in_names[i], dt, &s);
        int64_t ne = ir_numel(&s);
        bufs[i] = malloc((size_t)(ne ? ne : 1) * ir_dtype_size(dt));
        GC_ASSERT(bufs[i]);
        ir_fill_random(dt, bufs[i], ne, (uint64_t)o->seed * 1000 + (uint64_t)si * 100 + (uint64_t)i, -1.5, 1.5);
        char sh[64];
        ir_shape_str(&s, sh, sizeof sh);
        if (len < cap)
            len += (size_t)snprintf(desc + len, cap - len, "%s%s", i ? ", " : "", od->min_in > 1 ? od->in_names[i] : "");
        if (len < cap) len += (size_t)snprintf(desc + len, cap - len, "%s", sh);
    }
    Node *n = ir_add_node(g, k, "op", ins, od->min_in, od->min_out, od->out_names);
    for (int a = 0; a < od->n_attrs; a++) {
        const char *val = od->attrs[a].kind == ATTR_INT ? "2" : od->attrs[a].kind == ATTR_STRING ? "\"\"" : "0.75";
        size_t nl = strlen(od->attrs[a].name);
        for (int q = 0; q < o->n_attrs; q++)
            if (!strncmp(o->attrs[q], od->attrs[a].name, nl) && o->attrs[q][nl] == '=') val = o->attrs[q] + nl + 1;
        if (ir_set_attr(g, n, od->attrs[a].name, val, d)) {
            ir_graph_free(g);
            return NULL;
        }
    }
    for (int j = 0; j < od->min_out; j++) ir_add_output(g, n->out[j]);
    return g;
}

/* Runs the op: it must not fail, and its float outputs must be finite. */
static int check_runs(Graph *g, void **bufs, Diag *d)
{
    void *outs[64] = {0};
    int bad = 0;
    for (int j = 0; j < g->n_outputs && j < 64; j++) {
        outs[j] = malloc((size_t)(ir_numel(&g->outputs[j]->shape) + 1) * 8);
        GC_ASSERT(outs[j]);
    }
    bad = ir_interp_run(g, INTERP_F32, (const void *const *)bufs, outs, d);
    for (int j = 0; j < g->n_outputs && !bad; j++) {
        const Value *v = g->outputs[j];
        if (v->dtype != DT_F32 && v->dtype != DT_F64) continue;
        for (int64_t e = 0; e < ir_numel(&v->shape); e++)
            if (!isfinite(ir_load_f64(v->dtype, outs[j], (size_t)e))) {
                bad = diag_error(d, "output '%s' element %lld is not finite", v->name, (long long)e);
                break;
            }
    }
    for (int j = 0; j < 64; j++) free(outs[j]);
    return bad;
}

/* Checks op k (a forward user op) on each round of shapes; 0, or 1 with the
 * error printed. */
static int check_one(OpKind k, const CheckOpts *o)
{
    OpKind gk = ir_custom_grad_kind(k);
    const OpDesc *od = ir_op(k);
    char shapes[512] = "";
    int fixed = 0;
    for (int si = 0; si < 2 && !(si && fixed); si++) {
        void *bufs[64] = {0};
        Diag d = {0};
        char sh[200];
        int rc = 0;
        Graph *g = check_op_graph(k, o, si, bufs, sh, sizeof sh, &fixed, &d);
        if (!g) rc = fail("check-op: %s: %s", od->name, d.msg);
        if (!rc && pass_infer_shapes(g, &d))
            rc = fail("check-op: %s on %s: %s%s", od->name, sh, d.msg,
                      fixed ? "" : " (give the inputs shapes the op takes with --shape NAME=D0,D1,...)");
        if (!rc && check_runs(g, bufs, &d)) rc = fail("check-op: %s on %s: %s", od->name, sh, d.msg);
        if (!rc && gk >= 0) {
            Writer rep;
            w_init(&rep);
            int n_failed = 0;
            TrainRequest tr = {0};
            if (api_gradcheck(g, &tr, (const void *const *)bufs, &o->go, &rep, &n_failed, &d)) {
                rc = fail("check-op: %s on %s: %s", od->name, sh, d.msg);
            } else if (n_failed) {
                const char *bad = rep.buf; /* the first failing parameter's report line */
                for (const char *q = rep.buf; q && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL) {
                    const char *e = strchr(q, '\n');
                    if (strstr(q, "FAIL") && (!e || strstr(q, "FAIL") < e)) {
                        bad = q;
                        break;
                    }
                }
                rc = fail("check-op: %s: the gradient of input %.*s", od->name, (int)strcspn(bad, "\n"), bad);
            }
            w_free(&rep);
        }
        for (int j = 0; j < 64; j++) free(bufs[j]);
        ir_graph_free(g);
        if (rc) return rc;
        snprintf(shapes + strlen(shapes), sizeof shapes - strlen(shapes), "%s%s", si ? " and " : "", sh);
    }
    if (gk < 0) printf("%s: runs on %s; no gradient function (nothing to check)\n", od->name, shapes);
    else printf("%s: gradient ok on %s (central differences in float, eps %g, |a - n| <= %g + %g |n|)\n", od->name, shapes,
                o->go.eps, o->go.atol, o->go.rtol);
    return 0;
}

int cmd_check_op(int argc, char **argv)
{
    const char *file = NULL;
    CheckOpts o = {calloc((size_t)argc + 1, sizeof(char *)), 0, calloc((size_t)argc + 1, sizeof(InputShape)), 0,
                   {1e-3, 1e-3, 1e-2, 64}, 1};
    int rc = 0;
    if (!o.attrs || !o.shapes) return fail("out of memory");
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i], *v, *why = NULL;
        if (is_help(a)) {
            fputs(check_op_help, stdout);
            goto out;
        }
        if (opt_value(argc, argv, &i, "--attr", &v)) {
            if (!v || !strchr(v, '=') || *v == '=') why = "--attr needs NAME=VALUE";
            else o.attrs[o.n_attrs++] = v;
        } else if (opt_value(argc, argv, &i, "--shape", &v)) {
            why = v ? parse_shape_opt(v, &o.shapes[o.n_shapes]) : "--shape needs NAME=D0,D1,...";
            if (!why) o.n_shapes++;
        } else if (opt_value(argc, argv, &i, "--eps", &v)) {
            why = parse_pos(v, &o.go.eps);
        } else if (opt_value(argc, argv, &i, "--atol", &v)) {
            why = parse_pos(v, &o.go.atol);
        } else if (opt_value(argc, argv, &i, "--rtol", &v)) {
            why = parse_pos(v, &o.go.rtol);
        } else if (opt_value(argc, argv, &i, "--seed", &v)) {
            why = parse_pos(v, &o.seed);
        } else if (a[0] == '-' && a[1] != 0) {
            rc = fail("check-op: unknown option '%s' (see graphc check-op --help)", a);
        } else if (!file) {
            file = a;
        } else {
            rc = fail("check-op: unexpected argument '%s' (one FILE.c only)", a);
        }
        if (why) rc = fail("check-op: %s: %s", a, why);
    }
    if (!rc && !file) rc = fail("check-op: missing FILE.c (usage: graphc check-op FILE.c)");
    if (!rc) {
        Diag d = {0};
        int first = ir_op_count();
        if (api_load_ops(file, &d)) rc = fail_diag(&d);
        int last = ir_op_count();
        for (int k = first; k < last && !rc; k++)
            if (ir_custom_grad_kind(k) != -2) rc = check_one(k, &o); /* a NAMEGrad op: checked through its forward op */
    }
    if (!rc && fflush(stdout)) rc = fail("cannot write to stdout: %s", strerror(errno));
out:
    for (int q = 0; q < o.n_shapes; q++) free((char *)o.shapes[q].name);
    free(o.shapes);
    free(o.attrs);
    return rc;
}
