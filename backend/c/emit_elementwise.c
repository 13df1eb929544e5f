/* emit_elementwise.c — the one C emitter of the elementwise family.
 *
 * Every op with a scalar expression is emitted by this function (the emitter
 * table falls back to it, see emit_table.c): it writes a loop
 * nest over the output and, per element, loads each input into a local of
 * its compute type (cgen_load converts f16/bf16 to float), evaluates the op's
 * scalar_expr on those locals and stores through cgen_store (which converts
 * to the output dtype). The op description is the only source of the
 * arithmetic, so the emitter never looks at which op it is.
 *
 * Broadcasting: each input gets a stride per output dim (0 where it is
 * broadcast). Size-1 output dims are dropped and adjacent dims are merged
 * when every operand is laid out the same across them (the two strides chain
 * up), so "all shapes equal" and "tensor op scalar" become one flat loop and
 * [2,3,4] + [3,1] becomes a small nest with plain index arithmetic.
 *
 * The compute type is that of the first input that is not bool (for Where,
 * X), or bool when every input is (Not, Equal on bools). Cast computes in its
 * input's type and lets the store convert; comparisons compute in their
 * inputs' type and yield 0/1.
 */
#include "cgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A writer's text, "" when it is still empty. */
static const char *wtext(const Writer *w) { return w->buf ? w->buf : ""; }

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    GC_ASSERT(p);
    memcpy(p, s, n);
    return p;
}

/* Strides of operand shape s read along output shape os (0 on broadcast
 * dims), in the output's dim order. */
static void broadcast_strides(const Shape *s, const Shape *os, int64_t *st)
{
    int64_t acc = 1;
    for (int k = os->rank - 1; k >= 0; k--) {
        int ks = s->rank - os->rank + k;
        if (ks < 0 || s->dims[ks] == 1) {
            st[k] = 0;
        } else {
            st[k] = acc;
            acc *= s->dims[ks];
        }
    }
}

/* Writes "i0 * 12 + i1 * 4 + i2"-style offsets; "0" when every stride is 0. */
static void write_offset(Writer *w, int rank, char **idx, const int64_t *st)
{
    int any = 0;
    for (int k = 0; k < rank; k++) {
        if (st[k] == 0) continue;
        if (any) w_puts(w, " + ");
        if (st[k] == 1) w_puts(w, idx[k]);
        else w_printf(w, "%s * %lld", idx[k], (long long)st[k]);
        any = 1;
    }
    if (!any) w_puts(w, "0");
}

#define EW_MAX_OPERANDS 64

int cgen_emit_elementwise(Cgen *c, const Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    Writer *w = cgen_w(c);
    if (!od->scalar_expr)
        return diag_node_error(d, n, "op '%s' has no scalar expression for the C backend", od->name);
    if (n->n_in > EW_MAX_OPERANDS)
        return diag_node_error(d, n, "the C backend supports at most %d inputs here, got %d", EW_MAX_OPERANDS,
                               n->n_in);
    const Value *out = n->out[0];
    const Shape *os = &out->shape;
    if (ir_numel(os) == 0) { /* touch the operands so no pointer goes unused */
        w_line(w, "/* zero-size output: nothing to compute */");
        w_line(w, "(void)%s;", cgen_ptr(c, out));
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) w_line(w, "(void)%s;", cgen_ptr(c, n->in[j]));
        return 0;
    }

    /* compute type: the first non-bool input's */
    DType ct = DT_UNDEF;
    for (int j = 0; j < n->n_in && ct == DT_UNDEF; j++)
        if (n->in[j] && n->in[j]->dtype != DT_BOOL) ct = cgen_compute_type(n->in[j]->dtype);
    if (ct == DT_UNDEF) ct = cgen_compute_type(n->in[0] ? n->in[0]->dtype : DT_BOOL);

    /* Strides per kept output dim: row 0 is the output, row 1+j input j. */
    int nops = n->n_in + 1;
    int64_t (*st)[IR_MAX_RANK] = calloc((size_t)nops, sizeof *st);
    int64_t dims[IR_MAX_RANK];
    GC_ASSERT(st);
    int rank = 0;
    {
        int64_t (*fs)[IR_MAX_RANK] = calloc((size_t)nops, sizeof *fs);
        GC_ASSERT(fs);
        broadcast_strides(os, os, fs[0]);
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) broadcast_strides(&n->in[j]->shape, os, fs[j + 1]);
        for (int k = 0; k < os->rank; k++) {
            if (os->dims[k] == 1) continue;
            int merge = rank > 0;
            for (int o = 0; o < nops && merge; o++)
                if (st[o][rank - 1] != fs[o][k] * os->dims[k]) merge = 0;
            if (merge) {
                dims[rank - 1] *= os->dims[k];
                for (int o = 0; o < nops; o++) st[o][rank - 1] = fs[o][k];
            } else {
                dims[rank] = os->dims[k];
                for (int o = 0; o < nops; o++) st[o][rank] = fs[o][k];
                rank++;
            }
        }
        free(fs);
    }

    /* names: loop indices, input locals, pointers */
    char *idx[IR_MAX_RANK];
    for (int k = 0; k < rank; k++) idx[k] = xstrdup(cgen_tmp(c, "i"));
    char **loc = calloc((size_t)nops, sizeof *loc);
    char **ptr = calloc((size_t)nops, sizeof *ptr);
    GC_ASSERT(loc && ptr);
    ptr[0] = xstrdup(cgen_ptr(c, out));
    for (int j = 0; j < n->n_in; j++) {
        if (!n->in[j]) continue;
        ptr[j + 1] = xstrdup(cgen_ptr(c, n->in[j]));
        loc[j + 1] = xstrdup(cgen_tmp(c, "x"));
    }

    /* loop nest (a plain block for a one-element output) */
    if (rank == 0) w_line(w, "{");
    for (int k = 0; k < rank; k++) {
        w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", idx[k], idx[k], (long long)dims[k], idx[k]);
        w->indent++;
    }
    if (rank == 0) w->indent++;

    const char **args = calloc((size_t)(n->n_in ? n->n_in : 1), sizeof *args);
    GC_ASSERT(args);
    for (int j = 0; j < n->n_in; j++) {
        if (!n->in[j]) continue;
        Writer off, ld;
        w_init(&off);
        w_init(&ld);
        write_offset(&off, rank, idx, st[j + 1]);
        cgen_load(&ld, n->in[j]->dtype, ptr[j + 1], wtext(&off));
        w_line(w, "const %s %s = %s;", cgen_ctype(cgen_compute_type(n->in[j]->dtype)), loc[j + 1], wtext(&ld));
        args[j] = loc[j + 1];
        w_free(&off);
        w_free(&ld);
    }
    {
        Writer off, ex;
        w_init(&off);
        w_init(&ex);
        write_offset(&off, rank, idx, st[0]);
        od->scalar_expr(n, &ex, args, ct);
        cgen_store(w, out->dtype, ptr[0], wtext(&off), wtext(&ex));
        w_free(&off);
        w_free(&ex);
    }

    for (int k = 0; k < (rank ? rank : 1); k++) {
        w->indent--;
        w_line(w, "}");
    }

    free(args);
    for (int k = 0; k < rank; k++) free(idx[k]);
    for (int o = 0; o < nops; o++) {
        free(loc[o]);
        free(ptr[o]);
    }
    free(loc);
    free(ptr);
    free(st);
    return 0;
}

/* No entries: every op whose description has a scalar expression gets
 * cgen_emit_elementwise by default (see emit_table.c). */
const CgenEntry cgen_elementwise_entries[] = {
    {-1, NULL},
};
