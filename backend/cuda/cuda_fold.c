/* cuda_fold.c — MatMul operands read through strides: the index ops before
 * a MatMul folded into its cuBLAS call.
 *
 * A transformer's attention splits the heads out of one projection with
 * Slice, Reshape and Transpose and scales the queries with a Div before
 * each batched MatMul; as nodes those are a kernel each, which copies the
 * whole operand. cuBLAS reads any operand whose rows and columns have a
 * stride each (one of them 1, the other the leading dimension), so the
 * MatMul can read the source of the chain in place:
 *
 *   - the chain: walking up from operand v of MatMul n, while the value has
 *     exactly one reader (the next node down) and is no graph output, its
 *     producer is a view op (Reshape, Flatten, Squeeze, Unsqueeze,
 *     Identity), a Transpose, a Slice whose starts, ends, axes and steps are
 *     constants, or a Div or Mul by a constant float scalar; the value
 *     where the walk stops is the root;
 *   - the view: the root's layout (dense, row-major) carried down the chain
 *     as an offset and, per logical dim, a list of (size, stride) sub-dims:
 *     a Slice offsets and strides one dim, a Transpose permutes the dims, a
 *     reshape splits and regroups the sub-dims (a dim whose sub-dims cannot
 *     be merged keeps them all: the 8 heads of a batch of 32 sequences are
 *     8 x 32 rows 768 and 32 apart); a Div or Mul scales the product
 *     (alpha) instead of the operand, which changes the rounding of that
 *     one multiplication;
 *   - the call: the operand's last two dims (rows, columns) must each be one
 *     sub-dim, one of stride 1 (cuBLAS's op N or T, the other stride the
 *     leading dimension). Its batch is Y's batch dims, a broadcast dim of
 *     stride 0. When the batch of each operand is one stride (after merging
 *     sub-dims), the call is strided-batched as before; otherwise cuBLAS's
 *     batched form over pointer arrays, which NAME_init fills once (then
 *     the roots and Y must be arena temporaries, whose addresses are fixed
 *     there).
 *
 * Not folded: a MatMul with one operand shared by the whole batch (a
 * linear layer after a Transpose), which stays one GEMM over all the
 * batch's rows after the copy.
 *
 * The longest chain that works is taken (a shorter one when the longer
 * cannot be said; none when it holds only views, which cost nothing as
 * they are); the chain's nodes are then emitted as nothing, and
 * memory planning keeps the root alive up to the MatMul (Backend
 * extra_reads, cuda_extra_reads below). The decision reads only the graph's
 * structure (ops, shapes, constants, value kinds), so planning and emission
 * see the same folds. Only at -O2 (views exist only there), and not in a
 * graph with runtime dims (cuda_shapes.c), whose strides are not constants.
 */
#include "cuda_emit.h"
#include "../../ir/ops/geometry.h"

#include <stdlib.h>
#include <string.h>

/* ---- views ------------------------------------------------------------------------- */

#define FV_SUBS 16

typedef struct FvSub {
    int64_t size, stride;
} FvSub;
typedef struct FvDim {
    int n; /* 0: a dim of size 1 */
    FvSub s[FV_SUBS];
} FvDim;
typedef struct FvView {
    int rank;
    int64_t off;
    FvDim d[IR_MAX_RANK];
} FvView;

static void fv_dense(FvView *v, const Shape *s)
{
    memset(v, 0, sizeof *v);
    v->rank = s->rank;
    int64_t st = 1;
    for (int k = s->rank - 1; k >= 0; k--) {
        if (s->dims[k] != 1) v->d[k].n = 1, v->d[k].s[0] = (FvSub){s->dims[k], st};
        st *= s->dims[k];
    }
}

/* Appends sub-dim x to d, merged into the last one when they are contiguous. */
static int fv_push(FvDim *d, FvSub x)
{
    if (x.size == 1) return 0;
    if (d->n && d->s[d->n - 1].stride == x.size * x.stride) {
        d->s[d->n - 1].size *= x.size;
        d->s[d->n - 1].stride = x.stride;
        return 0;
    }
    if (d->n == FV_SUBS) return -1;
    d->s[d->n++] = x;
    return 0;
}

/* v reshaped to s (the same element count): 0, or -1 when the sub-dims do
 * not split into s's dims. */
static int fv_reshape(FvView *v, const Shape *s)
{
    FvSub flat[IR_MAX_RANK * FV_SUBS];
    int nf = 0, at = 0;
    for (int k = 0; k < v->rank; k++)
        for (int j = 0; j < v->d[k].n; j++) flat[nf++] = v->d[k].s[j];
    FvView w;
    memset(&w, 0, sizeof w);
    w.rank = s->rank, w.off = v->off;
    for (int k = 0; k < s->rank; k++) {
        int64_t need = s->dims[k];
        if (need == 0) return -1;
        while (need > 1) {
            if (at == nf) return -1;
            FvSub *h = &flat[at];
            if (h->size <= need) {
                if (need % h->size) return -1;
                if (fv_push(&w.d[k], *h)) return -1;
                need /= h->size;
                at++;
            } else {
                if (h->size % need) return -1;
                if (fv_push(&w.d[k], (FvSub){need, h->stride * (h->size / need)})) return -1;
                h->size /= need;
                need = 1;
            }
        }
    }
    if (at != nf) return -1;
    *v = w;
    return 0;
}

static int fv_transpose(FvView *v, const Node *t)
{
    int perm[IR_MAX_RANK];
    ir_transpose_perm(t, perm);
    FvView w = *v;
    for (int k = 0; k < v->rank; k++) w.d[k] = v->d[perm[k]];
    *v = w;
    return 0;
}

static int fv_slice(FvView *v, const Node *sl)
{
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    Shape out;
    if (ir_slice_plan(sl, start, step, &out, NULL) || out.rank != v->rank) return -1;
    const Shape *in = &sl->in[0]->shape;
    for (int k = 0; k < v->rank; k++) {
        if (start[k] == 0 && step[k] == 1 && out.dims[k] == in->dims[k]) continue;
        if (out.dims[k] == 0 || v->d[k].n > 1) return -1;
        const int64_t st = v->d[k].n ? v->d[k].s[0].stride : 0;
        v->off += start[k] * st;
        v->d[k].n = 0;
        if (out.dims[k] > 1) v->d[k].n = 1, v->d[k].s[0] = (FvSub){out.dims[k], st * step[k]};
    }
    return v->off >= 0 ? 0 : -1;
}

/* ---- chains ------------------------------------------------------------------------ */

/* The constant float scalar c that node p (Div or Mul) applies to its other
 * operand, with *data that operand's index: 0, or -1 when p is no such
 * scaling. */
static int scale_of(const Node *p, double *c, int *data)
{
    if ((p->op != OP_Div && p->op != OP_Mul) || p->n_in != 2 || !p->in[0] || !p->in[1]) return -1;
    for (int j = 0; j < 2; j++) {
        const Value *k = p->in[j], *x = p->in[1 - j];
        if (p->op == OP_Div && j == 0) continue; /* c / x is no scaling */
        if (k->kind != VK_CONST || !k->data || ir_numel(&k->shape) != 1 || k->dtype != x->dtype) continue;
        if (!ir_shape_eq(&x->shape, &p->out[0]->shape) || x->dtype != p->out[0]->dtype) continue;
        const double s = ir_load_f64(k->dtype, k->data, 0);
        if (!(s == s) || s == 0.0 || s > 1e30 || s < -1e30) continue;
        *c = p->op == OP_Div ? 1.0 / s : s, *data = 1 - j;
        return 0;
    }
    return -1;
}

/* The chain above operand v (nodes from v's producer up, each with the
 * index of its input the chain continues through in din), at most cap; its
 * length. */
static int chain_of(const Value *v, const int *readers, const Node **chain, int *din, int cap)
{
    int n = 0;
    while (n < cap && !v->is_output && readers[v->id] == 1 && v->producer && v->producer->n_out == 1) {
        const Node *p = v->producer;
        double c;
        int data = 0;
        if (ir_op(p->op)->view || p->op == OP_Transpose) {
            data = 0;
        } else if (p->op == OP_Slice) {
            int64_t a[IR_MAX_RANK], b[IR_MAX_RANK];
            Shape o;
            if (ir_slice_plan(p, a, b, &o, NULL)) break;
        } else if (scale_of(p, &c, &data)) {
            break;
        }
        if (!p->in[data] || p->in[data]->dtype != v->dtype) break;
        chain[n] = p, din[n] = data;
        n++;
        v = p->in[data];
    }
    return n;
}

/* The view of the operand at the foot of chain[0..len) over its root:
 * 0, or -1 when some step cannot be said. alpha collects the scalings. */
static int chain_view(const Node *const *chain, int len, const Value *root, FvView *v, double *alpha)
{
    fv_dense(v, &root->shape);
    *alpha = 1.0;
    for (int i = len - 1; i >= 0; i--) {
        const Node *p = chain[i];
        double c;
        int data;
        if (p->op == OP_Transpose) {
            if (fv_transpose(v, p)) return -1;
        } else if (p->op == OP_Slice) {
            if (fv_slice(v, p)) return -1;
        } else if (!scale_of(p, &c, &data)) {
            *alpha *= c;
        } else if (fv_reshape(v, &p->out[0]->shape)) {
            return -1;
        }
    }
    return 0;
}

/* Whether the GEMM can read an operand of view v (rank r >= 2, its last two
 * dims rows x cols): fills o's strides, op and leading dimension. */
static int operand_call(const FvView *v, CuOperand *o)
{
    const FvDim *dr = &v->d[v->rank - 2], *dc = &v->d[v->rank - 1];
    if (dr->n > 1 || dc->n > 1) return -1;
    const int64_t rows = dr->n ? dr->s[0].size : 1, cols = dc->n ? dc->s[0].size : 1;
    const int64_t sr = dr->n ? dr->s[0].stride : 0, sc = dc->n ? dc->s[0].stride : 0;
    o->off = v->off;
    if (sc == 1 || cols == 1) { /* row-major rows x cols, leading dimension the row stride */
        o->trans = 0;
        o->ld = rows > 1 ? sr : (cols > 1 ? cols : 1);
        if (o->ld < (cols > 1 ? cols : 1)) return -1;
    } else if (sr == 1 || rows == 1) { /* column-major: the transposed operand */
        o->trans = 1;
        o->ld = cols > 1 ? sc : (rows > 1 ? rows : 1);
        if (o->ld < (rows > 1 ? rows : 1)) return -1;
    } else {
        return -1;
    }
    return o->ld <= INT32_MAX ? 0 : -1;
}

/* The operand's batch over Y's batch dims yb[0..nyb): its sub-dims in
 * row-major order (broadcast dims of stride 0), merged. */
static int operand_batch(const FvView *v, const int64_t *yb, int nyb, CuOperand *o)
{
    FvDim all;
    all.n = 0;
    const int vb = v->rank - 2;
    for (int j = 0; j < nyb; j++) {
        const int i = j - (nyb - vb);
        int64_t size = 1;
        if (i >= 0)
            for (int q = 0; q < v->d[i].n; q++) size *= v->d[i].s[q].size;
        if (i >= 0 && size == yb[j]) {
            for (int q = 0; q < v->d[i].n; q++)
                if (fv_push(&all, v->d[i].s[q])) return -1;
        } else if (size == 1) {
            if (yb[j] > 1 && all.n == FV_SUBS) return -1;
            if (yb[j] > 1) all.s[all.n++] = (FvSub){yb[j], 0};
        } else {
            return -1;
        }
    }
    o->nsub = all.n;
    for (int q = 0; q < all.n; q++) {
        if (all.s[q].stride < 0) return -1; /* a reversed batch (Slice with a negative step): not said */
        o->bsize[q] = all.s[q].size, o->bstride[q] = all.s[q].stride;
    }
    return 0;
}

/* Whether a value has an address NAME_init knows (pointer arrays): an
 * arena temporary that is no view's alias. */
static int fixed_address(const Value *v)
{
    return v->kind == VK_TEMP && !v->is_output && v->producer && !ir_op(v->producer->op)->view;
}

/* The fold of MatMul n (readers: per value id, its reader count), in *f:
 * 1 when some operand is read through a chain, 0 when none is. */
static int matmul_fold(const Node *n, const int *readers, CuFold *f)
{
    memset(f, 0, sizeof *f);
    const Value *Y = n->out[0];
    const DType t = Y->dtype;
    if (n->op != OP_MatMul || n->n_in < 2 || !n->in[0] || !n->in[1] || !cu_gemm_on_cublas(n)) return 0;
    if (!(t == DT_F32 || t == DT_F16 || t == DT_BF16)) return 0;
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] && n->in[i]->dtype != t) return 0;
    if (n->in[0]->shape.rank < 2 || n->in[1]->shape.rank < 2 || Y->shape.rank < 2 || ir_numel(&Y->shape) == 0) return 0;
    const int nyb = Y->shape.rank - 2;
    const int64_t M = Y->shape.dims[nyb], N = Y->shape.dims[nyb + 1], K = n->in[0]->shape.dims[n->in[0]->shape.rank - 1];
    int64_t nb = 1;
    for (int j = 0; j < nyb; j++) nb *= Y->shape.dims[j];
    if (K == 0 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || nb > INT32_MAX) return 0;
    f->M = M, f->N = N, f->K = K, f->nb = nb;
    int any = 0;
    double alpha = 1.0;
    for (int w = 0; w < 2; w++) {
        const Node *chain[16];
        int din[16];
        int len = chain_of(n->in[w], readers, chain, din, 16);
        CuOperand *o = &f->op[w];
        for (; len >= 0; len--) {
            const Value *root = len ? chain[len - 1]->in[din[len - 1]] : n->in[w];
            int copies = 0; /* the chain's nodes that are more than views (views cost nothing) */
            for (int i = 0; i < len; i++) copies += !ir_op(chain[i]->op)->view;
            if (len && !copies) continue;
            FvView v;
            double a;
            if (chain_view(chain, len, root, &v, &a)) continue;
            if (v.rank != n->in[w]->shape.rank || operand_call(&v, o) || operand_batch(&v, Y->shape.dims, nyb, o)) continue;
            o->root = root, o->len = len, alpha *= a;
            for (int i = 0; i < len; i++) o->chain[i] = chain[i];
            break;
        }
        if (len < 0) return 0; /* not even the operand itself (a broadcast this call cannot say) */
        if (len) any = 1;
    }
    if (!any) return 0;
    /* one operand shared by the whole batch (a linear layer's weight): the
     * unfolded call is one GEMM over all the batch's rows, which a batch of
     * small GEMMs would not beat; keep it (and the copy before it) */
    for (int w = 0; w < 2 && nb > 1; w++) {
        int shared = 1;
        for (int q = 0; q < f->op[w].nsub; q++)
            if (f->op[w].bstride[q]) shared = 0;
        if (shared) return 0;
    }
    f->alpha = alpha;
    f->ptrs = f->op[0].nsub > 1 || f->op[1].nsub > 1;
    if (f->ptrs && !(fixed_address(f->op[0].root) && fixed_address(f->op[1].root) && fixed_address(Y))) return 0;
    return 1;
}

/* ---- the graph's folds ----------------------------------------------------------------- */

int cu_folds_build(const Graph *g, CuFolds *fs)
{
    memset(fs, 0, sizeof *fs);
    int maxid = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i]->id > maxid) maxid = g->nodes[i]->id;
    fs->n_ids = maxid + 1;
    fs->at = calloc((size_t)fs->n_ids, sizeof *fs->at);
    fs->skip = calloc((size_t)fs->n_ids, 1);
    int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
    if (!fs->at || !fs->skip || !readers) {
        free(readers);
        cu_folds_free(fs);
        return -1;
    }
    if (g->opt_level < 2 || g->n_syms) { /* runtime shapes: the chains' strides would not be constants */
        free(readers);
        return 0;
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i]->n_in; j++)
            if (g->nodes[i]->in[j]) readers[g->nodes[i]->in[j]->id]++;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (n->op != OP_MatMul) continue;
        CuFold f;
        if (!matmul_fold(n, readers, &f)) continue;
        CuFold *p = malloc(sizeof *p);
        if (!p) {
            free(readers);
            cu_folds_free(fs);
            return -1;
        }
        *p = f;
        fs->at[n->id] = p;
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < f.op[w].len; k++) fs->skip[f.op[w].chain[k]->id] = 1;
    }
    free(readers);
    return 0;
}

void cu_folds_free(CuFolds *fs)
{
    if (fs->at)
        for (int i = 0; i < fs->n_ids; i++) free(fs->at[i]);
    free(fs->at);
    free(fs->skip);
    memset(fs, 0, sizeof *fs);
}

/* Backend.extra_reads: each folded MatMul at step s reads its operands'
 * roots there. */
void cuda_extra_reads(const Graph *g, int *last)
{
    CuFolds fs;
    if (cu_folds_build(g, &fs)) return;
    for (int s = 0; s < g->n_nodes; s++) {
        const CuFold *f = fs.n_ids ? fs.at[g->nodes[s]->id] : NULL;
        if (!f) continue;
        for (int w = 0; w < 2; w++) {
            const Value *r = f->op[w].root->alias ? f->op[w].root->alias : f->op[w].root;
            if (last[r->id] < s) last[r->id] = s;
        }
    }
    cu_folds_free(&fs);
}
