/* test_autodiff.c — unit tests of the training machinery: state values and
 * updates in the IR and the text IR, the verifier's rule for updates, pass
 * prerequisites, the autodiff pass's errors (a loss that is not a scalar, an
 * op without a gradient), the gradient of a small graph against values
 * computed by hand, the optimizer update it builds, and the C API's
 * training options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/compile.h"
#include "graphc/graphc.h"
#include "ir/interp.h"
#include "ir/ir.h"
#include "ir/op.h"
#include "ir/text.h"
#include "passes/passes.h"

static Graph *parse(const char *text, Diag *d)
{
    memset(d, 0, sizeof *d);
    return ir_parse(text, strlen(text), "t.gir", d);
}

static char *print_graph(const Graph *g)
{
    Writer w;
    w_init(&w);
    ir_print(g, &w, 0);
    char *s = strdup(w.buf ? w.buf : "");
    w_free(&w);
    return s;
}

static const char *train_text =
    "graph t {\n"
    "  input %g: f32[2]\n"
    "  state %w: f32[2] = [1, 2]\n"
    "  const %r: f32[] = [0.5]\n"
    "  state %n: i64[] = [0]\n"
    "  const %one: i64[] = [1]\n"
    "  %s: f32[2] = Mul(%g, %r)\n"
    "  %w_new: f32[2] = Sub(%w, %s)\n"
    "  %n_new: i64[] = Add(%n, %one)\n"
    "  update %w <- %w_new\n"
    "  update %n <- %n_new\n"
    "  output %s\n"
    "}\n";

/* State and update lines round-trip and survive the pipeline. */
static void test_state_round_trip(void **st)
{
    (void)st;
    Diag d;
    Graph *g = parse(train_text, &d);
    assert_non_null(g);
    assert_int_equal(g->n_updates, 2);
    assert_int_equal(ir_find_value(g, "w")->kind, VK_STATE);
    char *a = print_graph(g);
    assert_string_equal(a, train_text);
    Graph *h = parse(a, &d);
    assert_non_null(h);
    char *b = print_graph(h);
    assert_string_equal(a, b);
    /* no pass folds state: Sub(w, s) and the counter stay, with their updates */
    h->opt_level = 2;
    assert_int_equal(pass_run_pipeline(h, NULL, &d), 0);
    assert_int_equal(h->n_updates, 2);
    assert_true(ir_find_value(h, "w_new")->producer != NULL);
    free(a);
    free(b);
    ir_graph_free(g);
    ir_graph_free(h);
}

/* A node that reads a state after its update is refused by the verifier. */
static void test_update_order(void **st)
{
    (void)st;
    Diag d;
    Graph *g = parse("graph t {\n  state %w: f32[2] = [1, 2]\n  input %x: f32[2]\n"
                     "  %w_new: f32[2] = Neg(%w)\n  %y: f32[2] = Add(%w, %x)\n  update %w <- %w_new\n  output %y\n}\n",
                     &d);
    assert_non_null(g);
    assert_int_equal(ir_verify(g, &d), -1);
    assert_non_null(strstr(d.msg, "reads state 'w' after its update by 'w_new'"));
    ir_graph_free(g);
    /* the parser refuses an update of a non-state value */
    assert_null(parse("graph t {\n  input %x: f32[2]\n  %y: f32[2] = Neg(%x)\n  update %x <- %y\n  output %y\n}\n", &d));
    assert_non_null(strstr(d.msg, "'update' needs a state value"));
}

/* A pipeline in which fusion precedes autodiff is refused. */
static void test_pass_order(void **st)
{
    (void)st;
    static const char *const after_ad[] = {"autodiff", NULL};
    const Pass bad[] = {
        {"fuse-elementwise", pass_fuse_elementwise, 2, after_ad, NULL},
        {"autodiff", pass_autodiff, 0, NULL, NULL},
        {NULL, NULL, 0, NULL, NULL},
    };
    Diag d = {0};
    assert_int_equal(pass_check_order(bad, &d), -1);
    assert_string_equal(d.msg, "pipeline: pass 'fuse-elementwise' must run after 'autodiff'");
    Diag d2 = {0};
    assert_int_equal(pass_check_order(pass_pipeline, &d2), 0);
}

static Graph *setup(const char *text, const char *wrt, const char *loss, Diag *d)
{
    Graph *g = parse(text, d);
    assert_non_null(g);
    TrainRequest tr = {TRAIN_REQ_GRAD, wrt, loss, NULL, 0};
    if (api_setup_training(g, &tr, d) || pass_autodiff(g, d)) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

/* loss = sum(w * x) + sum(w * w): d/dw = x + 2w, by hand. */
static void test_gradient_by_hand(void **st)
{
    (void)st;
    Diag d;
    Graph *g = setup("graph t {\n  input %x: f32[3]\n  const %w: f32[3] = [1, -2, 0.5]\n"
                     "  %a = Mul(%w, %x)\n  %b = Mul(%w, %w)\n  %c = Add(%a, %b)\n"
                     "  %loss = ReduceSum(%c) {keepdims=0}\n  output %loss\n}\n",
                     NULL, NULL, &d);
    assert_non_null(g);
    assert_int_equal(g->n_outputs, 2);
    assert_string_equal(g->outputs[1]->name, "grad_w");
    assert_int_equal(ir_verify(g, &d), 0);
    float x[3] = {3, 4, 5}, loss = 0, gw[3] = {0};
    const void *in[1] = {x};
    void *out[2] = {&loss, gw};
    assert_int_equal(ir_interp_run(g, INTERP_F32, in, out, &d), 0);
    assert_true(fabsf(loss - (3 - 8 + 2.5f + 1 + 4 + 0.25f)) < 1e-5f);
    assert_true(fabsf(gw[0] - (3 + 2)) < 1e-6f && fabsf(gw[1] - (4 - 4)) < 1e-6f && fabsf(gw[2] - (5 + 1)) < 1e-6f);
    ir_graph_free(g);
}

/* The loss must be a float scalar; an op on the path needs a gradient. */
static void test_errors(void **st)
{
    (void)st;
    Diag d;
    assert_null(setup("graph t {\n  input %x: f32[3]\n  const %w: f32[3] = [1, 2, 3]\n  %y = Mul(%x, %w)\n"
                      "  output %y\n}\n", NULL, NULL, &d));
    assert_string_equal(d.msg, "the loss (the model's first output 'y') must be a float scalar; it is f32[3]");
    assert_null(setup("graph t {\n  input %x: f32[1,1,4,4]\n  const %w: f32[1,1,4,4] = random(seed=1)\n"
                      "  %y = Mul(%x, %w)\n  %z = LRN(%y) {size=3}\n  %loss = ReduceSum(%z) {keepdims=0}\n"
                      "  output %loss\n}\n", NULL, NULL, &d));
    if (!strstr(d.msg, "has no gradient")) { /* LRN got a gradient: the message is then about nothing */
        assert_null(strstr(d.msg, "internal error"));
    } else {
        assert_non_null(strstr(d.msg, "node 'z' (LRN): op 'LRN' has no gradient (needed between the loss 'loss' and parameter 'w')"));
    }
    assert_null(setup("graph t {\n  input %x: f32[3]\n  %loss = ReduceSum(%x) {keepdims=0}\n  output %loss\n}\n", "nope",
                      NULL, &d));
    assert_string_equal(d.msg, "--wrt: the model has no value 'nope'");
}

/* --train builds one Momentum node whose outputs update the parameters,
 * their momentum slots and the step counter in place. */
static void test_optimizer(void **st)
{
    (void)st;
    Diag d;
    Graph *g = parse("graph t {\n  input %x: f32[2,3]\n  const %w: f32[3,4] = random(seed=1)\n  %y = MatMul(%x, %w)\n"
                     "  output %y\n}\n", &d);
    assert_non_null(g);
    TrainRequest tr = {TRAIN_REQ_TRAIN, NULL, "mse:y", "sgd:lr=0.1,momentum=0.9,nesterov=1", 0};
    assert_int_equal(api_setup_training(g, &tr, &d), 0);
    assert_int_equal(pass_autodiff(g, &d), 0);
    assert_int_equal(ir_verify(g, &d), 0);
    assert_int_equal(g->n_updates, 3); /* w, its momentum, the step counter */
    assert_string_equal(g->updates[0].state->name, "w");
    assert_string_equal(g->updates[1].state->name, "w_momentum");
    assert_string_equal(g->updates[2].state->name, "train_step_count");
    const Node *m = g->updates[0].value->producer;
    assert_int_equal(m->op, OP_Momentum);
    assert_string_equal(m->attrs[2].s, "nesterov");
    assert_string_equal(g->outputs[0]->name, "loss");
    assert_string_equal(g->inputs[1]->name, "label");
    ir_graph_free(g);
    TrainSpec t = {0};
    Diag d2 = {0};
    assert_int_equal(api_parse_optimizer("adam:lr=0.1,momentum=0.9", &t, &d2), -1);
    assert_non_null(strstr(d2.msg, "unknown key 'momentum'"));
}

/* The C API's grad option gives the same outputs as the command line. */
static void test_c_api(void **st)
{
    (void)st;
    GcDiag d = {0};
    GcGraph *g = gc_graph_new("capi");
    int64_t dx[1] = {3};
    float wv[3] = {1, 2, 3};
    GcValue *x = gc_input(g, "x", "f32", 1, dx, &d);
    GcValue *w = gc_const(g, "w", "f32", 1, dx, wv, &d);
    GcValue *ab[2] = {x, w};
    GcValue *m = gc_op(g, "Mul", NULL, ab, 2, NULL, &d);
    GcValue *loss = gc_op(g, "ReduceSum", "loss", &m, 1, "keepdims=0", &d);
    assert_non_null(loss);
    gc_output(g, loss);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/unit_autodiff_capi", GRAPHC_BINARY_DIR);
    GcCompileOptions o = {0};
    o.grad = 1;
    assert_int_equal(gc_compile(g, dir, &o, &d), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/capi.h", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "#define capi_OUTPUT_1_NAME \"grad_w\""));
    gc_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_round_trip), cmocka_unit_test(test_update_order),
        cmocka_unit_test(test_pass_order),       cmocka_unit_test(test_gradient_by_hand),
        cmocka_unit_test(test_errors),           cmocka_unit_test(test_optimizer),
        cmocka_unit_test(test_c_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
