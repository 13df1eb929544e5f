/* cgen_shapes.c — runtime shapes in the C backend (issue 15, stage 1).
 *
 * A graph with symbolic dims (Graph.syms) compiles to one program for every
 * size within the bounds. Memory is planned at the maximum, so arena offsets
 * stay constants; what varies is the extent of each loop and the size
 * passed to each kernel. Emitters compute sizes as CgenProd values, a
 * constant times runtime dims, and print them with cgen_prod_str: `dim[0] *
 * 128` reads the schedule's shape table, and a product without symbols
 * prints as the literal it always did, so a static model generates exactly
 * the code it did before runtime shapes existed.
 *
 * The shape table `dim[]` is a local array of NAME_schedule, each entry
 * clamped to its bounds (the C compiler then knows every loop's range, and a
 * wrong caller cannot overflow a buffer). NAME_run_shapes fills it from the
 * caller's input shapes, checking fixed dims, bounds and agreement between
 * inputs, evaluates the derived symbols in table order and reports the
 * output shapes; NAME_run and NAME_run_v pass the table of maxima. NAME.h
 * documents the symbols and bounds.
 */
#include "cgen_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- runtime shapes: products of dims (cgen.h) ---------------------------- */

CgenProd cgen_prod(int64_t c)
{
    CgenProd p;
    memset(&p, 0, sizeof p);
    p.c = c;
    return p;
}

static void prod_add_sym(CgenProd *p, int32_t s)
{
    GC_ASSERT(p->n < CGEN_PROD_MAX_SYMS);
    int i = p->n++;
    for (; i > 0 && p->s[i - 1] > s; i--) p->s[i] = p->s[i - 1];
    p->s[i] = s;
}

void cgen_prod_mul_dim(CgenProd *p, const Shape *s, int k)
{
    if (p->c == 0) return;
    if (s->sym[k]) prod_add_sym(p, s->sym[k]);
    else p->c *= s->dims[k];
}

CgenProd cgen_dims_prod(const Shape *s, int from, int to)
{
    CgenProd p = cgen_prod(1);
    for (int k = from; k < to; k++) cgen_prod_mul_dim(&p, s, k);
    return p;
}

CgenProd cgen_prod_mul(const CgenProd *a, const CgenProd *b)
{
    CgenProd r = *a;
    r.c *= b->c;
    if (r.c == 0) return cgen_prod(0);
    for (int i = 0; i < b->n; i++) prod_add_sym(&r, b->s[i]);
    return r;
}

int cgen_prod_eq(const CgenProd *a, const CgenProd *b)
{
    if (a->c != b->c || a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (a->s[i] != b->s[i]) return 0;
    return 1;
}

int cgen_prod_is(const CgenProd *p, int64_t v) { return p->n == 0 && p->c == v; }

const char *cgen_prod_str(const CgenProd *p, char *buf, size_t cap)
{
    if (p->n == 0 || p->c == 0) {
        snprintf(buf, cap, "%lld", (long long)p->c);
        return buf;
    }
    size_t k = 0;
    for (int i = 0; i < p->n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%sdim[%d]", i ? " * " : "", p->s[i] - 1);
    if (p->c != 1 && k < cap) snprintf(buf + k, cap - k, " * %lld", (long long)p->c);
    return buf;
}

int cgen_node_has_sym(const Node *n)
{
    for (int j = 0; j < n->n_in; j++)
        if (n->in[j] && ir_shape_has_sym(&n->in[j]->shape)) return 1;
    for (int j = 0; j < n->n_out; j++)
        if (ir_shape_has_sym(&n->out[j]->shape)) return 1;
    return 0;
}

static void write_derived(const Graph *g, Writer *w, int k);

int cgen_own_dim(const Graph *g, const Value *v, int k)
{
    int32_t y = v->shape.sym[k];
    if (!y || ir_sym(g, y)->kind != SYM_DATA) return 0;
    /* its own (ir_sym_data names it after the output, "NAME:k"), not one passed through */
    const char *nm = ir_sym(g, y)->name;
    size_t l = strlen(v->name);
    return strncmp(nm, v->name, l) == 0 && nm[l] == ':';
}

int cgen_sets_dims(const Graph *g, const Node *n)
{
    for (int i = 0; i < n->n_out; i++)
        for (int k = 0; k < n->out[i]->shape.rank; k++)
            if (cgen_own_dim(g, n->out[i], k)) return 1;
    return 0;
}

const char *cgen_dim_str(const Shape *s, int k, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(s, k, k + 1);
    return cgen_prod_str(&p, buf, cap);
}

void cgen_dims_table(Writer *w, const char *name, const Shape *s)
{
    Writer row;
    w_init(&row);
    char b[160];
    for (int k = 0; k < s->rank; k++) w_printf(&row, "%s%s", k ? ", " : "", cgen_dim_str(s, k, b, sizeof b));
    w_line(w, "const int64_t %s[%d] = {%s};", name, s->rank > 0 ? s->rank : 1, s->rank > 0 ? row.buf : "0");
    w_free(&row);
}

void cgen_check_group(const Graph *g, int32_t y, Writer *w, const char *err)
{
    const IrSym *sy = ir_sym(g, y);
    int32_t lead = sy->group, last = 0;
    for (int k = 0; k < g->n_syms; k++)
        if (g->syms[k].group == lead) last = k + 1;
    if (y != last) return; /* the node sets its group in table order: check once, after the last */
    /* a * b * ... <= cap  <=>  b <= cap / a, ... (floor divisions, every factor >= 0) */
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t room = INT64_C(%lld); /* --max-dim: the product of the dims nothing bounds */",
           (long long)ir_sym(g, lead)->group_cap);
    for (int k = 0; k < g->n_syms; k++) {
        if (g->syms[k].group != lead) continue;
        w_line(w, "if (dim[%d] > room) return %s;", k, err);
        w_line(w, "if (dim[%d] > 0) room /= dim[%d];", k, k);
    }
    w->indent--;
    w_line(w, "}");
}

void cgen_derive_data_dims(const Graph *g, Writer *w)
{
    for (int k = 0; k < g->n_syms; k++) {
        const IrSym *sy = &g->syms[k];
        if (sy->kind == SYM_VAR || sy->kind == SYM_DATA || !ir_sym_is_data(g, k + 1)) continue;
        Writer t;
        w_init(&t);
        write_derived(g, &t, k);
        w_line(w, "%s", t.buf);
        w_free(&t);
    }
}

/* Runtime shapes: the table of maxima (what NAME_run_v runs at) and
 * NAME_run_shapes, which binds the shape table from the actual input
 * shapes (checking fixed dims, bounds and agreement between inputs),
 * evaluates the derived symbols in order and reports the output shapes. */
void cgen_write_max_dims(const Graph *g, const char *N, Writer *w)
{
    w_printf(w, "/* the runtime dims (the shape table dim[] of %s_schedule) */\n", N);
    for (int k = 0; k < g->n_syms; k++) {
        w_printf(w, "/* dim[%d]: ", k);
        cgen_comment_text(w, g->syms[k].name);
        w_printf(w, ", %lld to %lld */\n", (long long)g->syms[k].lo, (long long)g->syms[k].hi);
    }
    w_printf(w, "static const int64_t %s_max_dims[%d] = {", N, g->n_syms);
    for (int k = 0; k < g->n_syms; k++) w_printf(w, "%s%lld", k ? ", " : "", (long long)g->syms[k].hi);
    w_puts(w, "};\n\n");
}

static void sym_term(Writer *w, IrSymTerm t)
{
    if (t.sym) w_printf(w, "dim[%d]", t.sym - 1);
    else w_printf(w, "INT64_C(%lld)", (long long)t.c);
}

/* The expression of derived symbol k + 1: "dim[k] = dim[0] * INT64_C(4);" */
static void write_derived(const Graph *g, Writer *w, int k)
{
    static const char *const ops[] = {"", "+", "*", "/"};
    const IrSym *sy = &g->syms[k];
    w_printf(w, "dim[%d] = ", k);
    if (sy->kind == SYM_MIN || sy->kind == SYM_MAX) {
        const char *cmp = sy->kind == SYM_MIN ? "<" : ">";
        sym_term(w, sy->a);
        w_printf(w, " %s ", cmp);
        sym_term(w, sy->b);
        w_puts(w, " ? ");
        sym_term(w, sy->a);
        w_puts(w, " : ");
        sym_term(w, sy->b);
    } else {
        sym_term(w, sy->a);
        w_printf(w, " %s ", ops[sy->kind]);
        sym_term(w, sy->b);
    }
    w_puts(w, ";");
}

void cgen_write_derived_dims(const Graph *g, Writer *w)
{
    for (int k = 0; k < g->n_syms; k++) {
        const IrSym *sy = &g->syms[k];
        if (sy->kind == SYM_VAR || sy->kind == SYM_DATA) continue;
        w_puts(w, "    ");
        write_derived(g, w, k);
        w_puts(w, "\n");
    }
}

void cgen_write_shape_table(const Graph *g, Writer *w)
{
    w_printf(w, "    int64_t dim[%d];\n", g->n_syms);
    for (int k = 0; k < g->n_syms; k++) {
        const IrSym *s = &g->syms[k];
        w_printf(w, "    dim[%d] = dims[%d] < %lld ? %lld : dims[%d] > %lld ? %lld : dims[%d]; /* ", k, k, (long long)s->lo,
                 (long long)s->lo, k, (long long)s->hi, (long long)s->hi, k);
        cgen_comment_text(w, s->name);
        w_puts(w, " */\n");
    }
}

void cgen_write_bind_dims(const Graph *g, const char *N, Writer *w)
{
    char *seen = calloc((size_t)g->n_syms + 1, 1);
    GC_ASSERT(seen);
    w_printf(w, "    if (in_dims == NULL) return %s_ERR_SHAPE;\n", N);
    for (int i = 0; i < g->n_inputs; i++) {
        const Shape *s = &g->inputs[i]->shape;
        char sh[256];
        w_printf(w, "    /* input %d: %s */\n", i, ir_shape_str_g(g, s, sh, sizeof sh));
        if (s->rank == 0) continue;
        w_printf(w, "    if (in_dims[%d] == NULL) return %s_ERR_SHAPE;\n", i, N);
        for (int k = 0; k < s->rank; k++) {
            int32_t y = s->sym[k];
            if (!y) {
                w_printf(w, "    if (in_dims[%d][%d] != %lld) return %s_ERR_SHAPE;\n", i, k, (long long)s->dims[k], N);
            } else if (!seen[y - 1]) {
                seen[y - 1] = 1;
                const IrSym *sy = ir_sym(g, y);
                w_printf(w, "    dim[%d] = in_dims[%d][%d];\n", y - 1, i, k);
                w_printf(w, "    if (dim[%d] < %lld || dim[%d] > %lld) return %s_ERR_SHAPE;\n", y - 1, (long long)sy->lo,
                         y - 1, (long long)sy->hi, N);
            } else {
                w_printf(w, "    if (in_dims[%d][%d] != dim[%d]) return %s_ERR_SHAPE;\n", i, k, y - 1, N);
            }
        }
    }
    for (int k = 0; k < g->n_syms; k++) {
        const IrSym *sy = &g->syms[k];
        if (sy->kind == SYM_VAR && !seen[k]) w_printf(w, "    dim[%d] = %lld; /* in no input */\n", k, (long long)sy->hi);
        if (sy->kind == SYM_DATA) w_printf(w, "    dim[%d] = %lld; /* set while the model runs */\n", k, (long long)sy->hi);
    }
    cgen_write_derived_dims(g, w);
    free(seen);
}

void cgen_write_out_dims(const Graph *g, Writer *w)
{
    for (int i = 0; i < g->n_outputs; i++) {
        const Shape *s = &g->outputs[i]->shape;
        if (s->rank == 0) continue;
        w_printf(w, "    if (out_dims[%d] != NULL) {\n", i);
        for (int k = 0; k < s->rank; k++) {
            if (s->sym[k]) w_printf(w, "        out_dims[%d][%d] = dim[%d];\n", i, k, s->sym[k] - 1);
            else w_printf(w, "        out_dims[%d][%d] = %lld;\n", i, k, (long long)s->dims[k]);
        }
        w_puts(w, "    }\n");
    }
}

void cgen_write_run_shapes(const CgenModel *m, Writer *w)
{
    const Graph *g = m->g;
    const char *N = m->name;
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    w_printf(w, "int %s_run_shapes(const void *weights, void *arena, const void *const *inputs, const int64_t *const *in_dims,\n"
                "    void *const *outputs, int64_t *const *out_dims)\n{\n", N);
    w_printf(w, "    int64_t dim[%d];\n    int rc;\n", g->n_syms);
    if (file) {
        cgen_blob_prologue(m, w);
    } else {
        w_printf(w, "    const unsigned char *blob = (const unsigned char *)(weights != NULL ? weights : %s_weights);\n", N);
        w_printf(w, "    if (((uintptr_t)blob & 7u) != 0) return -1;\n");
    }
    if (g->arena_bytes > 0) w_printf(w, "    if (arena == NULL || ((uintptr_t)arena & 63u) != 0) return -1;\n");
    cgen_write_bind_dims(g, N, w);
    w_printf(w, "    rc = %s_schedule(blob, (unsigned char *)arena, inputs, outputs, NULL, dim, dim);\n", N);
    w_puts(w, "    if (rc != 0) return rc;\n");
    w_puts(w, "    if (out_dims != NULL) {\n");
    w->indent++;
    cgen_write_out_dims(g, w);
    w->indent--;
    w_puts(w, "    }\n");
    w_puts(w, "    return 0;\n}\n\n");
}

/* Runtime shapes: the runtime dims with their names and bounds. */
void cgen_write_dims_defs(const Graph *g, const char *N, Writer *w)
{
    w_printf(w, "/* Runtime shapes: the model runs at any extent of its %d runtime dim%s\n"
                " * within their bounds (%s_run_shapes); memory is planned at the maximum. */\n"
                "#define %s_NUM_DIMS %d\n", g->n_syms, g->n_syms == 1 ? "" : "s", N, N, g->n_syms);
    for (int k = 0; k < g->n_syms; k++) {
        w_printf(w, "#define %s_DIM_%d_NAME \"", N, k);
        cgen_str_lit(w, g->syms[k].name);
        w_printf(w, "\"\n#define %s_DIM_%d_MIN %lld\n#define %s_DIM_%d_MAX %lld\n", N, k, (long long)g->syms[k].lo, N, k,
                 (long long)g->syms[k].hi);
    }
    w_puts(w, "\n");
}

