/* emit_elementwise.c — the one C emitter of the elementwise family.
 *
 * Every op with a scalar expression is emitted by this function (the emitter
 * table falls back to it, see emit_table.c): it writes a loop
 * nest over the output and, per element, loads each input into a local of
 * its compute type (cgen_load converts f16/bf16 to float), builds the op's
 * scalar expression tree (scalar_expr, ir/sexpr.h) over those locals,
 * prints it with the C-family printer (backend/cfamily/) and stores through
 * cgen_store (which converts to the output dtype). The op description is
 * the only source of the arithmetic, so the emitter never looks at which op
 * it is. The trees of one kernel live in an arena freed after it.
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
 *
 * Fused nodes and the epilogues of Conv/Gemm/MatMul (ir/fused.h) use the same
 * loop nest: each leaf is loaded once; each member of the expression builds
 * its own tree in its own compute type (chosen as above from its operands)
 * over the locals of the leaves and earlier members, and computes into a
 * `const` local of its output dtype (interiors are never f16/bf16, so the
 * local holds exactly what a stored and reloaded tensor would); the root is
 * stored once. An epilogue loop runs right after the op's kernel in the same
 * node block, reading the op's result `y` and writing it back in place.
 */
#include "cgen.h"
#include "../../ir/fused.h"
#include "../cfamily/cfam_expr.h"

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
 * dims), in the output's dim order; products of runtime dims where s has
 * symbolic dims (a symbolic dim is never broadcast). */
static void broadcast_strides(const Shape *s, const Shape *os, CgenProd *st)
{
    CgenProd acc = cgen_prod(1);
    for (int k = os->rank - 1; k >= 0; k--) {
        int ks = s->rank - os->rank + k;
        if (ks < 0 || (s->dims[ks] == 1 && !s->sym[ks])) {
            st[k] = cgen_prod(0);
        } else {
            st[k] = acc;
            cgen_prod_mul_dim(&acc, s, ks);
        }
    }
}

/* Writes "i0 * 12 + i1 * 4 + i2"-style offsets; "0" when every stride is 0. */
static void write_offset(Writer *w, int rank, char **idx, const CgenProd *st)
{
    int any = 0;
    for (int k = 0; k < rank; k++) {
        if (cgen_prod_is(&st[k], 0)) continue;
        if (any) w_puts(w, " + ");
        if (cgen_prod_is(&st[k], 1)) {
            w_puts(w, idx[k]);
        } else {
            char b[160];
            w_printf(w, "%s * %s", idx[k], cgen_prod_str(&st[k], b, sizeof b));
        }
        any = 1;
    }
    if (!any) w_puts(w, "0");
}

#define EW_MAX_OPERANDS 64

/* The loop nest of one elementwise kernel over output shape os: size-1
 * dims dropped, mergeable dims merged; st[0] are the output's strides,
 * st[1+j] operand j's (0 where broadcast). */
typedef struct EwLoop {
    int rank, nops;
    CgenProd dims[IR_MAX_RANK];
    CgenProd (*st)[IR_MAX_RANK];
    char *idx[IR_MAX_RANK];
} EwLoop;

/* Plans the loops for output `out` and operands ops[0..nops) (NULL ones
 * ignored) and names the loop indices. */
static void loop_plan(Cgen *c, EwLoop *L, const Value *out, const Value *const *ops, int nops)
{
    const Shape *os = &out->shape;
    int nrows = nops + 1;
    L->nops = nops;
    L->st = calloc((size_t)nrows, sizeof *L->st);
    CgenProd (*fs)[IR_MAX_RANK] = calloc((size_t)nrows, sizeof *fs);
    GC_ASSERT(L->st && fs);
    L->rank = 0;
    broadcast_strides(os, os, fs[0]);
    for (int j = 0; j < nops; j++)
        if (ops[j]) broadcast_strides(&ops[j]->shape, os, fs[j + 1]);
    for (int k = 0; k < os->rank; k++) {
        if (os->dims[k] == 1 && !os->sym[k]) continue;
        CgenProd dk = cgen_dims_prod(os, k, k + 1);
        int r = L->rank, merge = r > 0;
        for (int o = 0; o < nrows && merge; o++) {
            CgenProd want = cgen_prod_mul(&fs[o][k], &dk);
            if (!cgen_prod_eq(&L->st[o][r - 1], &want)) merge = 0;
        }
        if (merge) {
            L->dims[r - 1] = cgen_prod_mul(&L->dims[r - 1], &dk);
            for (int o = 0; o < nrows; o++) L->st[o][r - 1] = fs[o][k];
        } else {
            L->dims[r] = dk;
            for (int o = 0; o < nrows; o++) L->st[o][r] = fs[o][k];
            L->rank++;
        }
    }
    free(fs);
    for (int k = 0; k < L->rank; k++) L->idx[k] = xstrdup(cgen_tmp(c, "i"));
}

/* Opens the loop nest (a plain block for a one-element output). */
static void loop_begin(Writer *w, const EwLoop *L)
{
    if (L->rank == 0) w_line(w, "{");
    for (int k = 0; k < L->rank; k++) {
        char b[160];
        w_line(w, "for (int64_t %s = 0; %s < %s; %s++) {", L->idx[k], L->idx[k], cgen_prod_str(&L->dims[k], b, sizeof b),
               L->idx[k]);
        w->indent++;
    }
    if (L->rank == 0) w->indent++;
}

static void loop_end(Writer *w, EwLoop *L)
{
    for (int k = 0; k < (L->rank ? L->rank : 1); k++) {
        w->indent--;
        w_line(w, "}");
    }
    for (int k = 0; k < L->rank; k++) free(L->idx[k]);
    free(L->st);
}

/* Writes the offset of row `row` (0 output, 1+j operand j) into a fresh writer. */
static void loop_offset(Writer *off, const EwLoop *L, int row)
{
    w_init(off);
    write_offset(off, L->rank, (char **)L->idx, L->st[row]);
}

/* Compute type of an elementwise node with inputs in[0..n): the first
 * non-bool input's, else bool. */
static DType compute_type(Value *const *in, int n)
{
    for (int j = 0; j < n; j++)
        if (in[j] && in[j]->dtype != DT_BOOL) return cgen_compute_type(in[j]->dtype);
    return cgen_compute_type(n && in[0] ? in[0]->dtype : DT_BOOL);
}

/* Writes n's scalar expression into ex: its tree, built in `trees` over
 * arguments named names[j] (locals of their compute types; NULL for an
 * absent input), printed as C. */
static void write_expr(Writer *ex, Arena *trees, const Node *n, const char *const *names)
{
    SxBuild b;
    sx_build_init(&b, trees);
    const Sx **args = arena_alloc(trees, sizeof *args * (size_t)(n->n_in ? n->n_in : 1));
    for (int j = 0; j < n->n_in; j++)
        if (names[j]) args[j] = sx_arg(&b, j, cgen_compute_type(n->in[j]->dtype));
    const Sx *e = ir_op(n->op)->scalar_expr(n, &b, args, compute_type(n->in, n->n_in));
    cfam_expr(ex, &cfam_c99, e, names);
}

/* One kernel: a loop nest over out's elements that loads every operand
 * ops[j] (NULL: unused) into a local of its compute type and stores what
 * `fx` computes from them; without fx, node n's own scalar expression of
 * operands n->in. */
static int emit_kernel(Cgen *c, const Node *n, const Value *out, const Value *const *ops, int nops,
                       const FusedExpr *fx, Diag *d)
{
    Writer *w = cgen_w(c);
    if (nops > EW_MAX_OPERANDS)
        return diag_node_error(d, n, "the C backend supports at most %d inputs here, got %d", EW_MAX_OPERANDS,
                               nops);
    if (ir_numel(&out->shape) == 0) { /* touch the operands so no pointer goes unused */
        w_line(w, "/* zero-size output: nothing to compute */");
        w_line(w, "(void)%s;", cgen_ptr(c, out));
        for (int j = 0; j < nops; j++)
            if (ops[j]) w_line(w, "(void)%s;", cgen_ptr(c, ops[j]));
        return 0;
    }

    EwLoop L;
    loop_plan(c, &L, out, ops, nops);
    char **loc = calloc((size_t)nops + 1, sizeof *loc);
    char **ptr = calloc((size_t)nops + 1, sizeof *ptr);
    GC_ASSERT(loc && ptr);
    ptr[0] = xstrdup(cgen_ptr(c, out));
    for (int j = 0; j < nops; j++) {
        if (!ops[j]) continue;
        ptr[j + 1] = xstrdup(cgen_ptr(c, ops[j]));
        loc[j + 1] = xstrdup(cgen_tmp(c, "x"));
    }
    /* An operand read at offset 0 on every iteration (a scalar, or broadcast
     * along every loop dim) is loaded once before the loop nest: in the loop
     * the compiler would reload it after every store (the output may alias
     * it as far as it can tell), which keeps -O2 from vectorizing the loop. */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) loop_begin(w, &L);
        for (int j = 0; j < nops; j++) {
            if (!ops[j]) continue;
            int invariant = L.rank > 0;
            for (int k = 0; k < L.rank && invariant; k++)
                if (!cgen_prod_is(&L.st[j + 1][k], 0)) invariant = 0;
            if (invariant != (pass == 0)) continue;
            Writer off, ld;
            loop_offset(&off, &L, j + 1);
            w_init(&ld);
            cgen_load(&ld, ops[j]->dtype, ptr[j + 1], wtext(&off));
            w_line(w, "const %s %s = %s;", cgen_ctype(cgen_compute_type(ops[j]->dtype)), loc[j + 1], wtext(&ld));
            w_free(&off);
            w_free(&ld);
        }
    }
    Writer off, ex;
    loop_offset(&off, &L, 0);
    w_init(&ex);
    Arena trees = {0}; /* every expression tree of this kernel */
    if (!fx) {
        write_expr(&ex, &trees, n, (const char *const *)loc + 1);
    } else {
        /* members in order: interiors into typed locals, the root stored */
        char **mloc = calloc((size_t)fx->n_members, sizeof *mloc);
        GC_ASSERT(mloc);
        for (int m = 0; m < fx->n_members; m++) {
            const Node *mn = fx->members[m];
            const char *names[64];
            GC_ASSERT(mn->n_in <= 64);
            for (int j = 0; j < mn->n_in; j++) {
                const FxSrc *s = &fx->src[m][j];
                names[j] = s->kind == FX_SLOT ? loc[s->idx + 1] : s->kind == FX_MEMBER ? mloc[s->idx] : NULL;
            }
            if (m + 1 == fx->n_members) {
                write_expr(&ex, &trees, mn, names);
                continue;
            }
            Writer e;
            w_init(&e);
            write_expr(&e, &trees, mn, names);
            DType t = mn->out[0]->dtype;
            mloc[m] = xstrdup(cgen_tmp(c, "t"));
            /* an f16/bf16 interior: rounded to its type and held as float,
             * as the unfused nodes would store and reload it */
            if (t == DT_BOOL)
                w_line(w, "const uint8_t %s = (uint8_t)((%s) != 0);", mloc[m], wtext(&e));
            else if (t == DT_F16)
                w_line(w, "const float %s = gcrt_f16_to_f32(gcrt_f32_to_f16((float)(%s)));", mloc[m], wtext(&e));
            else if (t == DT_BF16)
                w_line(w, "const float %s = gcrt_bf16_to_f32(gcrt_f32_to_bf16((float)(%s)));", mloc[m], wtext(&e));
            else w_line(w, "const %s %s = (%s)(%s);", cgen_ctype(t), mloc[m], cgen_ctype(t), wtext(&e));
            w_free(&e);
        }
        for (int m = 0; m < fx->n_members; m++) free(mloc[m]);
        free(mloc);
    }
    arena_free(&trees);
    cgen_store(w, out->dtype, ptr[0], wtext(&off), wtext(&ex));
    w_free(&off);
    w_free(&ex);
    loop_end(w, &L);

    for (int o = 0; o <= nops; o++) {
        free(loc[o]);
        free(ptr[o]);
    }
    free(loc);
    free(ptr);
    return 0;
}

int cgen_emit_elementwise(Cgen *c, const Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    if (!od->scalar_expr)
        return diag_node_error(d, n, "op '%s' has no scalar expression for the C backend", od->name);
    return emit_kernel(c, n, n->out[0], (const Value *const *)n->in, n->n_in, NULL, d);
}

/* Fused: one loop nest computes the whole expression. */
static int emit_fused(Cgen *c, const Node *n, Diag *d)
{
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    int rc = emit_kernel(c, n, n->out[0], (const Value *const *)n->in, n->n_in, &fx, d);
    ir_fused_free(&fx);
    return rc;
}

int cgen_emit_epilogue(Cgen *c, const Node *n, Diag *d)
{
    const char *epi = ir_epilogue(n);
    if (!epi) return 0;
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    /* operands: the node's inputs the expression reads, then y (output 0) */
    const Value **ops = calloc((size_t)n->n_in + 1, sizeof *ops);
    GC_ASSERT(ops);
    for (int j = 0; j < n->n_in; j++) ops[j] = fx.slot_used[j] ? n->in[j] : NULL;
    ops[n->n_in] = fx.slot_used[n->n_in] ? n->out[0] : NULL;
    Writer *w = cgen_w(c);
    w_puts(w, "/* epilogue: ");
    for (const char *p = epi; *p; p++) /* no comment terminator, printable only */
        w_printf(w, "%c", (*p == '*' || *p == '/' || *p < 32 || *p > 126) ? '.' : *p);
    w_puts(w, " */\n");
    int rc = emit_kernel(c, n, n->out[0], ops, n->n_in + 1, &fx, d);
    ir_fused_free(&fx);
    free(ops);
    return rc;
}

/* Fused is registered; every op whose description has a scalar expression
 * gets cgen_emit_elementwise by default (see emit_table.c). */
const CgenEntry cgen_elementwise_entries[] = {
    {OP_Fused, emit_fused, 0, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
