/* gradcheck.c — the autodiff gradient against central finite differences,
 * in the reference interpreter in double precision (see compile.h).
 *
 * The model gets the probe loss (api/train.c: every float output weighted
 * by a fixed random tensor and summed) unless the request names another,
 * its parameters become graph inputs (so the interpreter can take them in
 * double precision and a perturbation of 1e-6 is not rounded away in f32),
 * and autodiff adds the gradients. One interpreter run gives the analytic
 * gradients; then each checked element of each parameter is moved by +eps
 * and -eps and the loss re-evaluated: numeric = (L+ - L-) / (2 eps). An
 * element fails when |analytic - numeric| > atol + rtol * |numeric|.
 * Parameters with more than max_elems elements are checked on max_elems
 * evenly spaced elements (the first and the last included).
 */
#include "compile.h"

#include "../ir/interp.h"
#include "../passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int api_gradcheck(Graph *g, const TrainRequest *req, const void *const *inputs, const GradcheckOptions *o,
                  Writer *report, int *n_failed, Diag *d)
{
    TrainRequest tr = *req;
    tr.mode = TRAIN_REQ_GRAD;
    if (!tr.loss) tr.loss = "probe";
    if (!tr.wrt) tr.wrt_inputs = 1;
    int n_in0 = g->n_inputs;
    double **ins = calloc((size_t)n_in0 + 1, sizeof *ins);
    GC_ASSERT(ins);
    for (int i = 0; i < n_in0; i++) { /* the caller's inputs, before anything renumbers them */
        const Value *v = g->inputs[i];
        int64_t ne = ir_numel(&v->shape);
        ins[i] = malloc(sizeof(double) * (size_t)(ne ? ne : 1));
        GC_ASSERT(ins[i]);
        for (int64_t e = 0; e < ne; e++) ins[i][e] = ir_load_f64(v->dtype, inputs[i], (size_t)e);
    }
    int rc = api_setup_training(g, &tr, d);
    if (rc) {
        for (int i = 0; i < n_in0; i++) free(ins[i]);
        free(ins);
        return -1;
    }
    TrainSpec *t = g->train;
    int n_wrt = rc ? 0 : t->n_wrt; /* setup may fail before g->train exists */
    int n_model_out = g->n_outputs;
    for (int k = 0; k < n_wrt; k++)
        if (t->wrt[k]->kind == VK_STATE) ir_make_input(g, t->wrt[k]); /* keeps its data: the initial value */
    if (!rc) rc = pass_autodiff(g, d);
    if (!rc) rc = ir_verify(g, d);
    int n_in = g->n_inputs;
    double **all = calloc((size_t)n_in + 1, sizeof *all), **outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    GC_ASSERT(all && outs);
    for (int i = 0; i < n_in && !rc; i++) {
        const Value *v = g->inputs[i];
        int64_t ne = ir_numel(&v->shape);
        if (i < n_in0) {
            all[i] = ins[i];
            ins[i] = NULL;
            continue;
        }
        all[i] = malloc(sizeof(double) * (size_t)(ne ? ne : 1));
        GC_ASSERT(all[i]);
        for (int64_t e = 0; e < ne; e++) all[i][e] = ir_load_f64(v->dtype, v->data, (size_t)e);
    }
    for (int i = 0; i < g->n_outputs && !rc; i++) {
        int64_t ne = ir_numel(&g->outputs[i]->shape);
        outs[i] = malloc(sizeof(double) * (size_t)(ne ? ne : 1));
        GC_ASSERT(outs[i]);
    }
    if (!rc) rc = ir_interp_run_f64(g, INTERP_F64, (const double *const *)all, outs, d);
    double **ana_all = calloc((size_t)n_wrt + 1, sizeof *ana_all);
    GC_ASSERT(ana_all);
    for (int k = 0; k < (rc ? 0 : n_wrt); k++) { /* the perturbed runs overwrite outs */
        size_t nb = sizeof(double) * (size_t)ir_numel(&t->wrt[k]->shape);
        ana_all[k] = malloc(nb ? nb : 1);
        GC_ASSERT(ana_all[k]);
        if (nb) memcpy(ana_all[k], outs[n_model_out + k], nb);
    }
    int failed = 0;
    for (int k = 0; k < (rc ? 0 : n_wrt); k++) {
        Value *p = t->wrt[k];
        int slot = -1;
        for (int i = 0; i < n_in; i++)
            if (g->inputs[i] == p) slot = i;
        GC_ASSERT(slot >= 0);
        const double *ana = ana_all[k];
        int64_t ne = ir_numel(&p->shape), checked = 0, bad = 0;
        int64_t step = ne <= o->max_elems ? 1 : (ne - 1) / (o->max_elems - 1);
        double max_err = 0, worst = -1, worst_num = 0, worst_ana = 0;
        int64_t worst_e = -1;
        for (int64_t e = 0; e < ne && !rc; e = (e + step < ne || e == ne - 1) ? e + step : ne - 1) {
            double x0 = all[slot][e], lp, lm;
            all[slot][e] = x0 + o->eps;
            rc = ir_interp_run_f64(g, INTERP_F64, (const double *const *)all, outs, d);
            lp = outs[0][0];
            all[slot][e] = x0 - o->eps;
            if (!rc) rc = ir_interp_run_f64(g, INTERP_F64, (const double *const *)all, outs, d);
            lm = outs[0][0];
            all[slot][e] = x0;
            if (rc) break;
            double num = (lp - lm) / (2 * o->eps);
            checked++;
            double a = ana[e];
            double err = fabs(a - num);
            if (err > max_err || err != err) max_err = err;
            if (!(err <= o->atol + o->rtol * fabs(num))) {
                bad++;
                if (!(err <= worst)) { /* the largest error, NaN first */
                    worst = err;
                    worst_e = e;
                    worst_num = num;
                    worst_ana = a;
                }
            }
            if (e == ne - 1) break;
        }
        if (rc) break;
        char sh[256];
        if (report) {
            if (bad)
                w_line(report, "%s %s%s: %lld of %lld checked elements FAIL; worst at element %lld: analytic %.10g, numeric %.10g",
                       p->name, ir_dtype_name(p->dtype), ir_shape_str(&p->shape, sh, sizeof sh), (long long)bad,
                       (long long)checked, (long long)worst_e, worst_ana, worst_num);
            else
                w_line(report, "%s %s%s: %lld elements ok (max |analytic - numeric| %.3g)", p->name,
                       ir_dtype_name(p->dtype), ir_shape_str(&p->shape, sh, sizeof sh), (long long)checked, max_err);
        }
        failed += bad > 0;
    }
    for (int k = 0; k < n_wrt; k++) free(ana_all[k]);
    free(ana_all);
    for (int i = 0; i < n_in0; i++) free(ins[i]);
    for (int i = 0; i < n_in; i++) free(all[i]);
    for (int i = 0; i < g->n_outputs; i++) free(outs[i]);
    free(ins);
    free(all);
    free(outs);
    if (n_failed) *n_failed = failed;
    return rc;
}
