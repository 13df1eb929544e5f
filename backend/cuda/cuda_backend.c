/* cuda_backend.c — the CUDA backend (--target=cuda): the
 * Backend description (its op table, support check, workspace policy and
 * kernel notes) and the output folder. The kernels are in one file per
 * family, the cuBLAS and cuDNN calls in cuda_libs.c (cuda_emit.h lists
 * them).
 *
 * The folder: NAME.h (the API: NAME_init, NAME_run, NAME_run_host,
 * NAME_free; no CUDA header needed to include it), NAME.cu (host code and
 * kernels), the weights (NAME_weights.S + .bin by .incbin, or a C array with
 * --weights=c-array; NAME_init copies them to the device once), gc_cuda.h
 * and gc_cuda_emu.h (runtime/cuda/; gcrt_base.h too when some tensor is
 * f16/bf16: the emulation's conversions), a Makefile (nvcc; `make emu` builds
 * the same sources as C99 on the CPU emulation) and, with --emit-main, the
 * runner NAME_main.c.
 *
 * What it compiles: every op with a CudaEntry in a family array
 * (cuda_emit.h lists the files), every op with a scalar expression and
 * Fused nodes (generated elementwise kernels), views (no code when
 * aliased, else a device-to-device copy). f16/bf16 tensors only where the
 * entry is marked half. Any other op, --weights=file and training graphs
 * are refused at compile time with one line naming the node, the op and
 * the backend.
 *
 * Memory is what the planner decided: one device arena of
 * NAME_DEVICE_ARENA_BYTES (arena offsets and node workspaces as planned),
 * the weights blob on the device, graph inputs and outputs in the caller's
 * device buffers; NAME_run allocates nothing. A model with runtime dims
 * (--max-shape) adds the shape table and NAME_run_shapes (cuda_shapes.c);
 * its nodes compile where their entry is marked dyn.
 */
#include "cuda_emit.h"
#include "cuda_jit.h"
#include "../c/cgen_model.h"
#include "../cfamily/cfam_expr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the op table ------------------------------------------------------------------ */

extern const CudaEntry cuda_elementwise_entry;

static const CudaEntry *const cuda_families[] = {cuda_kernel_entries, cuda_lib_entries, cuda_vision_entries,
                                                 cuda_index_entries, cuda_grad_entries, cuda_quant_entries,
                                                 cuda_optim_entries, cuda_signal_entries, cuda_rnn_entries,
                                                 cuda_text_entries, cuda_select_entries};

/* The entry of op kind k: a family's row, the elementwise emitter for an op
 * with a scalar expression, or NULL (the backend lacks the op). Views and
 * user operators have none. */
static const CudaEntry *cuda_entry(int k)
{
    for (size_t f = 0; f < sizeof cuda_families / sizeof cuda_families[0]; f++)
        for (const CudaEntry *e = cuda_families[f]; e->op != -1; e++)
            if (e->op == k) return e;
    if (k < OP_COUNT && ir_op(k)->scalar_expr) return &cuda_elementwise_entry;
    return NULL;
}

static int is_half(DType t) { return t == DT_F16 || t == DT_BF16; }

/* Views move any dtype; f16/bf16 tensors need an entry marked half. */
static int cuda_supports(const Graph *g, const Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    const CudaEntry *e = od->view ? NULL : cuda_entry(n->op);
    if (cu_check_data_dims(g, n, (e && e->dyn == 2) || cu_view_sets_dims(g, n), d)) return -1;
    for (int i = 0; i < n->n_in + n->n_out; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        if (v && (v->dtype == DT_UNDEF || (is_half(v->dtype) && !od->view && !(e && e->half))))
            return diag_node_error(d, n, "the CUDA backend has no %s kernels yet (op '%s')", ir_dtype_name(v->dtype),
                                   od->name);
        if (v && ir_shape_has_sym(&v->shape) && !od->view && e && !e->dyn) {
            char b[160];
            return diag_node_error(d, n, "op '%s' does not support runtime shapes yet in the CUDA backend (%s '%s' is %s)",
                                   od->name, i < n->n_in ? "input" : "output", v->name, ir_shape_str_g(g, &v->shape, b, sizeof b));
        }
    }
    if (od->view) return 0;
    if (!e) return diag_node_error(d, n, "the CUDA backend has no kernel for op '%s' yet", od->name);
    return e->check ? e->check(n, d) : 0;
}

int cu_node_is_ew(const Node *n)
{
    if (ir_op(n->op)->view) return 0;
    const CudaEntry *e = cuda_entry(n->op);
    return e && (e == &cuda_elementwise_entry || n->op == OP_Fused || n->op == OP_CastLike);
}

static size_t cuda_workspace(const Graph *g, const Node *n)
{
    if (n->op == OP_Conv && n->out[0]->shape_known) return cu_conv_ws_bytes(g, n);
    const CudaEntry *e = cuda_entry(n->op);
    return e && e->workspace && n->out[0]->shape_known ? e->workspace(n) : 0;
}

static int cuda_kernel_note(const Graph *g, const Node *n, char *buf, size_t cap)
{
    const CudaEntry *e = cuda_entry(n->op);
    char base[512];
    snprintf(base, sizeof base, "%s", e && e->note ? e->note : "");
    int fused = 0, z_in = -1;
    if (n->op == OP_Conv && (cu_conv_nhwc_capable(g, n) || ir_epilogue(n))) {
        CuLayout L;
        GC_ASSERT(cu_layout_build(g, &L) == 0);
        if (L.nhwc[n->id]) {
            const char *x = L.cl[n->in[0]->id]             ? "stored NHWC"
                            : cu_layouts_differ(n->in[0])  ? "NCHW, copied to NHWC in the workspace"
                                                           : "NCHW, the same bytes",
                       *y = L.cl[n->out[0]->id]            ? "stored NHWC"
                            : cu_layouts_differ(n->out[0]) ? "NCHW, copied back from the workspace"
                                                           : "NCHW, the same bytes";
            snprintf(base, sizeof base, "cuDNN convolution forward on NHWC tensors, the filter KRSC (x %s, y %s), then "
                                        "generated bias and epilogue kernels", x, y);
        }
        fused = cu_conv_fused(&L, n, &z_in);
        cu_layout_free(&L);
    }
    if (!base[0]) return 0;
    int k = fused ? snprintf(buf, cap, "%s; built with -DGC_CUDNN_FUSED, one cudnnConvolutionBiasActivationForward (bias%s, ReLU)",
                             base, z_in >= 0 ? ", residual" : "")
                  : snprintf(buf, cap, "%s", base);
    return k < 0 ? 0 : k;
}

/* ---- the writer state ------------------------------------------------------------------ */

/* v's bytes at its bounds (a group of data-dependent dims bounded jointly counted as the group's cap). */
static int64_t value_bytes(const Value *v) { return ir_value_bytes(v); }

/* v's bytes at the run's dims as C text: a literal, or "(size_t)(dim[0] * 784) * 4". */
static const char *bytes_text(Cu *c, const Value *v, char *buf, size_t cap)
{
    if (cu_static_dims(&v->shape, 0, v->shape.rank)) snprintf(buf, cap, "%lld", (long long)value_bytes(v));
    else snprintf(buf, cap, "(size_t)(%s) * %d", cu_dims_sz(c, &v->shape, 0, v->shape.rank), (int)ir_dtype_size(v->dtype));
    return buf;
}

static const Value *root_of(const Value *v) { return v->alias ? v->alias : v; }

static void sanitize(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 1 < cap; s++) {
        char ch = *s;
        buf[o++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_';
    }
    buf[o] = 0;
}

/* The bytes of an NHWC Conv's filter W (K, C, R, S) in KRSC order. */
static void *krsc(const Value *W)
{
    const int64_t K = W->shape.dims[0], C = W->shape.dims[1], RS = W->shape.dims[2] * W->shape.dims[3];
    const size_t es = ir_dtype_size(W->dtype);
    unsigned char *p = malloc(W->nbytes ? W->nbytes : 1);
    GC_ASSERT(p && (size_t)(K * C * RS) * es == W->nbytes);
    const unsigned char *src = W->data;
    for (int64_t k = 0; k < K; k++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t q = 0; q < RS; q++)
                memcpy(p + (size_t)((k * RS + q) * C + ch) * es, src + (size_t)((k * C + ch) * RS + q) * es, es);
    return p;
}

static void cu_init(Cu *c, const Graph *g, const char *name)
{
    memset(c, 0, sizeof *c);
    c->g = g;
    c->name = name;
    int nv = g->n_values;
    c->id = calloc((size_t)nv + 1, sizeof *c->id);
    c->out_slot = malloc(sizeof *c->out_slot * ((size_t)nv + 1));
    c->woff = malloc(sizeof *c->woff * ((size_t)nv + 1));
    c->used = calloc((size_t)nv + 1, 1);
    c->hoff = malloc(sizeof *c->hoff * ((size_t)nv + 1));
    c->hws_at = -1;
    GC_ASSERT(c->id && c->out_slot && c->woff && c->used && c->hoff);
    for (int i = 0; i < nv; i++) {
        const Value *v = g->values[i];
        char base[40];
        sanitize(v->name ? v->name : "v", base, sizeof base);
        size_t n = strlen(base) + 32;
        c->id[i] = malloc(n);
        GC_ASSERT(c->id[i]);
        snprintf(c->id[i], n, "t%d_%s", i, base);
        c->out_slot[i] = -1;
        c->woff[i] = -1;
        c->hoff[i] = -1;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        const Value *v = g->outputs[k];
        if (v->kind == VK_TEMP && !v->alias && c->out_slot[v->id] < 0) c->out_slot[v->id] = k;
    }
    w_init(&c->kern);
    w_init(&c->body);
    w_init(&c->init);
    w_init(&c->fini);
    w_init(&c->ptrs);
    c->folds = calloc(1, sizeof *c->folds);
    GC_ASSERT(c->folds && cu_folds_build(g, c->folds) == 0);
    GC_ASSERT(cu_layout_build(g, &c->lay) == 0);
    c->wdata = calloc((size_t)nv + 1, sizeof *c->wdata);
    GC_ASSERT(c->wdata);
    for (int i = 0; i < g->n_nodes; i++)
        if (cu_conv_nhwc(c, g->nodes[i])) c->wdata[g->nodes[i]->in[1]->id] = krsc(g->nodes[i]->in[1]);
}

static void cu_fini(Cu *c)
{
    for (int i = 0; i < c->g->n_values; i++) free(c->id[i]);
    free(c->id);
    free(c->out_slot);
    free(c->woff);
    free(c->used);
    free(c->hoff);
    w_free(&c->kern);
    w_free(&c->body);
    w_free(&c->init);
    w_free(&c->fini);
    w_free(&c->ptrs);
    cu_folds_free(c->folds);
    free(c->folds);
    for (int i = 0; i < c->g->n_values; i++) free(c->wdata[i]);
    free(c->wdata);
    cu_layout_free(&c->lay);
}

/* The bytes the weights hold for constant i: its own, or a permuted copy. */
static const unsigned char *weight_bytes(const Cu *c, int i)
{
    return c->wdata[i] ? (const unsigned char *)c->wdata[i] : (const unsigned char *)c->g->values[i]->data;
}

/* Every node into kernels (c->kern) and host statements (c->body). */
static int gen_nodes(Cu *c, Diag *d)
{
    const Graph *g = c->g;
    Writer *b = &c->body;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (cuda_supports(g, n, d)) return -1;
        w_puts(b, "    ");
        cu_node_comment(c->g, b, n);
        if (c->folds->n_ids && c->folds->skip[n->id]) {
            w_puts(b, "    /* read in place by a MatMul below (its GEMM's strides): no code */\n");
            continue;
        }
        if (ir_op(n->op)->view) {
            const Value *x = n->in[0], *y = n->out[0];
            cu_view_dims(c, n);
            if (y->alias) {
                w_puts(b, "    /* a view of its input: no code */\n");
                continue;
            }
            char nb[256];
            if (value_bytes(y) > 0)
                w_printf(b, "    if (cudaMemcpyAsync(%s, %s, %s, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n",
                         cu_ptr(c, y), cu_ptr(c, x), bytes_text(c, y, nb, sizeof nb));
            continue;
        }
        if (cuda_entry(n->op)->emit(c, n, d)) return -1;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        const Value *v = g->outputs[k];
        if (c->out_slot[v->id] == k || value_bytes(v) == 0) continue;
        w_printf(b, "    /* output %d is %s: copy */\n", k,
                 v->kind == VK_INPUT ? "a graph input" : v->kind != VK_TEMP ? "a constant" : "listed before");
        char nb[256];
        w_printf(b, "    if (cudaMemcpyAsync(outputs[%d], %s, %s, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) return -1;\n",
                 k, cu_ptr(c, v), bytes_text(c, v, nb, sizeof nb));
    }
    return 0;
}

/* Weights offsets of the constants the code reads. */
static void layout_weights(Cu *c)
{
    int64_t off = 0;
    unsigned char *need = calloc((size_t)c->g->n_values + 1, 1);
    GC_ASSERT(need);
    for (int i = 0; i < c->g->n_values; i++)
        if (c->used[i]) need[root_of(c->g->values[i])->id] = 1;
    for (int i = 0; i < c->g->n_values; i++) {
        const Value *v = c->g->values[i];
        if (!need[i] || v->kind != VK_CONST) continue;
        c->woff[i] = off;
        off += ((int64_t)v->nbytes + 63) / 64 * 64;
    }
    free(need);
    c->wbytes = off;
}

static void gen_decls(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    char sh[160];
    for (int i = 0; i < g->n_values; i++) {
        if (!c->used[i]) continue;
        const Value *v = g->values[i], *r = root_of(v);
        const char *ct = cfam_ctype(v->dtype), *id = c->id[i];
        if (r->kind == VK_INPUT) {
            int k = 0;
            while (g->inputs[k] != r) k++;
            w_printf(w, "    const %s *const %s = (const %s *)inputs[%d];", ct, id, ct, k);
        } else if (r->kind == VK_CONST) {
            GC_ASSERT(c->woff[r->id] >= 0);
            w_printf(w, "    const %s *const %s = (const %s *)(const void *)(weights + %lld);", ct, id, ct,
                     (long long)c->woff[r->id]);
        } else if (c->out_slot[r->id] >= 0) {
            w_printf(w, "    %s *const %s = (%s *)outputs[%d];", ct, id, ct, c->out_slot[r->id]);
        } else {
            GC_ASSERT(r->offset >= 0);
            w_printf(w, "    %s *const %s = (%s *)(void *)(arena + %lld);", ct, id, ct, (long long)r->offset);
        }
        w_printf(w, " /* %s%s '", ir_dtype_name(v->dtype), ir_shape_str_g(g, &v->shape, sh, sizeof sh));
        cu_comment_text(w, v->name ? v->name : "");
        w_puts(w, "' */\n");
    }
}

static void port_macros(const Cu *c, Writer *w, const char *kind, int i, const Value *v)
{
    const char *N = c->name;
    char dims[512];
    size_t o = 0;
    dims[o++] = '{';
    for (int k = 0; k < v->shape.rank && o + 24 < sizeof dims; k++)
        o += (size_t)snprintf(dims + o, sizeof dims - o, "%s%lld", k ? ", " : "", (long long)v->shape.dims[k]);
    snprintf(dims + o, sizeof dims - o, "}");
    w_printf(w, "#define %s_%s_%d_NAME \"", N, kind, i);
    cgen_str_lit(w, v->name);
    w_puts(w, "\"\n");
    w_printf(w, "#define %s_%s_%d_DTYPE \"%s\"\n", N, kind, i, ir_dtype_name(v->dtype));
    w_printf(w, "#define %s_%s_%d_NPY_DESCR \"%s\"\n", N, kind, i, cgen_npy_descr(v->dtype));
    w_printf(w, "#define %s_%s_%d_RANK %d\n", N, kind, i, v->shape.rank);
    w_printf(w, "#define %s_%s_%d_DIMS %s\n", N, kind, i, v->shape.rank ? dims : "{0}");
    if (c->g->n_syms) cu_shapes_port_macros(c, w, kind, i, v);
    w_printf(w, "#define %s_%s_%d_NUMEL %lld\n", N, kind, i, (long long)ir_value_max_numel(v));
    w_printf(w, "#define %s_%s_%d_BYTES %lld\n\n", N, kind, i, (long long)value_bytes(v));
}

static void gen_header(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    w_printf(w, "/* %s.h: generated by graphc (--target=cuda%s); do not edit.\n", N, c->jit ? " --cuda-jit" : "");
    w_puts(w, " *\n");
    if (c->jit) {
        w_puts(w, " * The model on an NVIDIA GPU. Build the folder with `make` (the C compiler\n");
        w_puts(w, " * and the headers of CUDA_HOME, default /usr/local/cuda; no nvcc): a program\n");
        w_puts(w, " * links the CUDA runtime and driver, NVRTC and cuBLAS (the Makefile's\n");
        w_puts(w, " * CUDA_LIBS), or `make emu` for the CPU emulation (no GPU, no toolkit).\n");
    } else {
        w_puts(w, " * The model on an NVIDIA GPU. Build the folder with `make` (nvcc from\n");
        w_puts(w, " * CUDA_HOME, default /usr/local/cuda; links cuBLAS and the CUDA runtime),\n");
        w_puts(w, " * or with `make emu` for the CPU emulation (no GPU, no CUDA toolkit).\n");
    }
    w_puts(w, " *\n");
    w_printf(w, " * %s_init allocates the device arena (%s_DEVICE_ARENA_BYTES) and the\n", N, N);
    w_puts(w, " * weights on the device and copies the weights there, once; stream is a\n");
    w_puts(w, " * cudaStream_t (NULL: the default stream). ");
    if (c->jit) w_printf(w, "It compiles the kernels with NVRTC\n * for the current device (%s_kernels.cu; NVRTC's log on stderr when that\n * fails), then ", N);
    else w_puts(w, "It then\n * ");
    if (cu_eager(g) && g->n_syms) {
        w_puts(w, "runs the schedule once on zeroed inputs (the libraries\n");
        w_puts(w, " * load their kernels). It returns 0, or -1 with nothing allocated. The\n");
        w_puts(w, " * model has data-dependent dims, so it has no CUDA graph: the host reads\n");
        w_printf(w, " * operands back in mid-run to size what follows. %s_run runs the\n", N);
        w_puts(w, " * schedule on a stream of its own after the work on the caller's stream,\n");
        w_puts(w, " * inputs and outputs in device memory, and waits for it; it allocates\n");
        w_puts(w, " * nothing. Not thread-safe\n");
    } else {
        w_puts(w, "captures the whole schedule into a CUDA graph (stream capture\n");
        w_puts(w, " * on a stream of its own: nothing runs). It returns 0, or -1 with nothing\n");
        w_printf(w, " * allocated. %s_run launches that graph on the stream, inputs and\n", N);
        w_puts(w, " * outputs in device memory, and returns without waiting; it allocates\n");
        w_puts(w, " * nothing, except that buffers other than the last run's are captured\n");
        w_puts(w, " * anew (the graph updated in place), so keep them fixed. Not thread-safe\n");
    }
    w_printf(w, " * per model. %s_run_host copies host inputs to the device, runs, copies\n", N);
    w_printf(w, " * the outputs back and waits. Both return 0, or -1 on a CUDA error.\n");
    w_printf(w, " * %s_free releases what %s_init allocated (NULL: nothing).\n */\n", N, N);
    w_printf(w, "#ifndef GRAPHC_CUDA_MODEL_%s_H\n#define GRAPHC_CUDA_MODEL_%s_H\n\n", N, N);
    w_puts(w, "#include <stddef.h>\n#include <stdint.h>\n\n");
    w_puts(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    w_printf(w, "#define %s_DEVICE_ARENA_BYTES %lld\n", N, (long long)g->arena_bytes);
    w_printf(w, "#define %s_WEIGHTS_BYTES %lld\n", N, (long long)c->wbytes);
    w_printf(w, "#define %s_NUM_INPUTS %d\n", N, g->n_inputs);
    w_printf(w, "#define %s_NUM_OUTPUTS %d\n\n", N, g->n_outputs);
    if (g->n_syms) cgen_write_dims_defs(g, N, w);
    for (int i = 0; i < g->n_inputs; i++) port_macros(c, w, "INPUT", i, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) port_macros(c, w, "OUTPUT", i, g->outputs[i]);
    w_printf(w, "typedef struct %s_Model %s_Model;\n\n", N, N);
    w_printf(w, "int %s_init(%s_Model **model, void *stream);\n", N, N);
    w_printf(w, "int %s_run(%s_Model *model, const void *const *inputs, void *const *outputs);\n", N, N);
    w_printf(w, "int %s_run_host(%s_Model *model, const void *const *inputs, void *const *outputs);\n", N, N);
    w_printf(w, "void %s_free(%s_Model *model);\n\n", N, N);
    if (g->n_syms) {
        cu_shapes_api_decls(c, w);
        w_puts(w, "\n");
    }
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* The model struct: streams, handles, memory, the captured graph and
 * (launchers) the kernels' functions. */
static void gen_struct(Cu *c, Writer *w, int ni, int no, int nk)
{
    const char *N = c->name;
    w_printf(w, "struct %s_Model {\n", N);
    w_printf(w, "    cudaStream_t stream; /* where %s_run launches: the caller's */\n", N);
    w_puts(w, "    cudaStream_t cap;    /* where the schedule is captured (the library handles' stream) */\n");
    w_puts(w, "    cublasHandle_t blas;\n    void *blas_ws; /* cuBLAS's workspace (GC_CUBLAS_WORKSPACE bytes) */\n");
    w_puts(w, "    unsigned char *arena, *weights;\n");
    w_printf(w, "    void *in[%d], *out[%d];\n", ni, no);
    w_puts(w, "    cudaGraphExec_t exec; /* the schedule captured over gin/gout */\n");
    w_printf(w, "    const void *gin[%d];\n    void *gout[%d];\n", ni, no);
    if (c->g->n_syms)
        w_printf(w, "    int64_t gdim[%d]; /* the dims the graph was captured at */\n"
                    "    int64_t *ddim;    /* the shape table kernels read (device memory) */\n", c->g->n_syms);
    if (c->nconv) {
        w_puts(w, "    cudnnHandle_t dnn;\n");
        w_printf(w, "    cudnnTensorDescriptor_t cx[%d], cy[%d];\n    cudnnFilterDescriptor_t cw[%d];\n", c->nconv, c->nconv, c->nconv);
        w_printf(w, "    cudnnConvolutionDescriptor_t cc[%d];\n    cudnnConvolutionFwdAlgo_t algo[%d];\n", c->nconv, c->nconv);
        w_printf(w, "    /* the algorithms each Conv may run (gc_cudnn_pick), which -DGC_CUDNN_TIME times in\n"
                    "     * the init's warm-up run (probing: that run, which also turns off a fused call\n"
                    "     * cuDNN refuses) */\n"
                    "    cudnnConvolutionFwdAlgo_t cand[%d][GC_CUDNN_CANDIDATES];\n    int ncand[%d];\n    int probing;\n",
                 c->nconv, c->nconv);
    }
    if (c->nfused)
        w_printf(w, "    /* -DGC_CUDNN_FUSED: the Convs that run as one cudnnConvolutionBiasActivationForward, their\n"
                    "     * biases' descriptors, the ReLU */\n"
                    "    unsigned char fused[%d];\n    cudnnTensorDescriptor_t cb[%d];\n"
                    "    cudnnActivationDescriptor_t relu;\n", c->nconv, c->nconv);
    if (c->nptrs) w_puts(w, "    void **gemm_ptrs; /* the batched GEMMs' operand pointers (device memory, filled by the init) */\n");
    if (c->hws_bytes) w_puts(w, "    unsigned char *hws; /* host scratch: Resizes' runtime tap tables, the selections run by the host */\n");
    if (c->jit) w_printf(w, "    CUmodule mod;\n    CUfunction fn[%d];\n", nk ? nk : 1);
    else w_printf(w, "#if GC_LAUNCHERS\n    CUfunction fn[%d];\n#endif\n", nk ? nk : 1);
    w_puts(w, "};\n\n");
}

/* NAME_capture: the schedule recorded into a CUDA graph over the given
 * buffers, instantiated (or an existing one updated in place). */
static void gen_capture(Cu *c, Writer *w, int ni, int no)
{
    const char *N = c->name;
    const int dyn = c->g->n_syms > 0;
    w_printf(w, "/* Captures the schedule over inputs/outputs on m->cap (nothing runs) into m->exec:\n");
    w_printf(w, " * the graph instantiated, or the one there updated when its nodes are the same. 0 or -1%s. */\n",
             dyn ? " (or\n * NAME_ERR_SHAPE from a check of the dims)" : "");
    if (dyn)
        w_printf(w, "static int %s_capture(%s_Model *m, const void *const *inputs, void *const *outputs, const int64_t *dims)\n{\n",
                 N, N);
    else
        w_printf(w, "static int %s_capture(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    w_puts(w, "    cudaGraph_t g = NULL;\n    cudaGraphExecUpdateResultInfo info;\n");
    w_puts(w, "    if (cudaStreamBeginCapture(m->cap, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;\n");
    w_printf(w, "    int rc = %s_schedule(m, inputs, outputs%s);\n", N, dyn ? ", dims" : "");
    w_puts(w, "    if (cudaStreamEndCapture(m->cap, &g) != cudaSuccess || rc) {\n");
    w_puts(w, "        if (g) cudaGraphDestroy(g);\n        cudaGetLastError();\n");
    if (dyn) /* the device's shape table already holds the new dims: the old graph must not run on */
        w_puts(w, "        if (m->exec) cudaGraphExecDestroy(m->exec);\n        m->exec = NULL;\n");
    /* a runtime-shape schedule returns NAME_ERR_SHAPE from a check of the dims (at capture) */
    w_puts(w, dyn ? "        return rc ? rc : -1;\n    }\n" : "        return -1;\n    }\n");
    w_puts(w, "    if (m->exec && cudaGraphExecUpdate(m->exec, g, &info) != cudaSuccess) {\n");
    w_puts(w, "        cudaGraphExecDestroy(m->exec);\n        m->exec = NULL;\n        cudaGetLastError();\n    }\n");
    w_puts(w, "    rc = !m->exec && cudaGraphInstantiate(&m->exec, g, 0) != cudaSuccess ? -1 : 0;\n");
    w_puts(w, "    cudaGraphDestroy(g);\n    if (rc) {\n        m->exec = NULL;\n        return -1;\n    }\n");
    w_printf(w, "    for (int i = 0; i < %d; i++) m->gin[i] = inputs ? inputs[i] : NULL;\n", ni);
    w_printf(w, "    for (int i = 0; i < %d; i++) m->gout[i] = outputs ? outputs[i] : NULL;\n", no);
    if (dyn) w_printf(w, "    for (int k = 0; k < %d; k++) m->gdim[k] = dims[k];\n", c->g->n_syms);
    w_puts(w, "    return 0;\n}\n\n");
}

/* The text of an embedded runtime file. */
static const char *runtime_text(const char *file)
{
    for (size_t f = 0; f < gc_runtime_files_count; f++)
        if (strcmp(gc_runtime_files[f].name, file) == 0) return (const char *)gc_runtime_files[f].data;
    GC_ASSERT(!"runtime file not embedded");
    return "";
}

/* NAME.cu, or with --cuda-jit NAME.c (kernels_text: NAME_kernels.cu, embedded). */
static void gen_source(Cu *c, Writer *w, const char *kernels_text)
{
    const Graph *g = c->g;
    const char *N = c->name;
    const int ni = g->n_inputs ? g->n_inputs : 1, no = g->n_outputs ? g->n_outputs : 1, nk = cu_jit_count(c);
    if (c->jit) {
        w_printf(w, "/* %s.c: generated by graphc (--target=cuda --cuda-jit); do not edit.\n", N);
        w_printf(w, " * Host code, plain C; the kernels (%s_kernels.cu, embedded below) are compiled by\n", N);
        w_printf(w, " * NVRTC at %s_init. -DGC_CUDA_EMULATE: the CPU emulation (gc_cuda.h). */\n", N);
        w_puts(w, "#define GC_CUDA_JIT\n");
    } else {
        w_printf(w, "/* %s.cu: generated by graphc (--target=cuda); do not edit.\n", N);
        w_puts(w, " * CUDA C++ for nvcc, and C99 for the CPU emulation (-DGC_CUDA_EMULATE, gc_cuda.h). */\n");
    }
    if (c->half) w_puts(w, "#define GC_CUDA_HALF /* f16/bf16 tensors: the conversions of gc_cuda.h */\n");
    w_printf(w, "#include \"%s.h\"\n#include \"gc_cuda.h\"\n", N);
    if (c->resize_host) w_puts(w, "#include \"gcrt_resize.c\" /* the host's tap tables of Resizes with runtime scales or sizes */\n");
    w_puts(w, g->n_syms ? "\n#include <math.h>\n#include <stdlib.h>\n\n" : "\n#include <stdlib.h>\n\n");
    w_printf(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\nextern const unsigned char %s_weights[];\n", N);
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n");
    gen_struct(c, w, ni, no, nk);
    if (c->jit) {
        w_printf(w, "#ifdef GC_CUDA_EMULATE\n#include \"%s_kernels.cu\" /* the emulation runs the kernels on the CPU */\n#endif\n\n", N);
        cu_jit_launchers(c, w);
        cu_jit_embed(c, w, kernels_text, runtime_text("gc_cuda_kernel.h"));
    } else {
        w_puts(w, cu_wtext(&c->kern));
        w_puts(w, "#if GC_LAUNCHERS\n");
        cu_jit_launchers(c, w);
        w_puts(w, "#endif\n\n");
    }
    const int dyn = g->n_syms > 0;
    if (dyn) {
        cgen_write_max_dims(g, N, w);
        w_printf(w, "static int %s_schedule(%s_Model *m, const void *const *inputs, void *const *outputs, const int64_t *dims%s)\n{\n",
                 N, N, cu_eager(g) ? ",\n    int64_t *dims_out" : "");
        cu_shapes_prologue(c, w);
    } else {
        w_printf(w, "static int %s_schedule(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    }
    w_puts(w, "    unsigned char *const arena = m->arena;\n");
    w_puts(w, "    const unsigned char *const weights = m->weights;\n");
    w_puts(w, "    const cudaStream_t stream = m->cap;\n");
    w_puts(w, "    const cublasHandle_t blas = m->blas;\n");
    w_puts(w, "    (void)arena, (void)weights, (void)stream, (void)blas, (void)inputs, (void)outputs;\n");
    if (!c->jit) w_puts(w, "#if GC_LAUNCHERS\n");
    w_puts(w, "    const CUfunction *const gc_fn = m->fn;\n    int gc_launch_rc = 0;\n    (void)gc_fn;\n");
    if (!c->jit) w_puts(w, "#endif\n");
    gen_decls(c, w);
    w_puts(w, "\n");
    w_puts(w, cu_wtext(&c->body));
    if (!c->jit) w_puts(w, "#if GC_LAUNCHERS\n");
    w_puts(w, "    if (gc_launch_rc) return -1;\n");
    if (!c->jit) w_puts(w, "#endif\n");
    if (dyn) cu_shapes_epilogue(c, w);
    w_puts(w, "    return cudaGetLastError() == cudaSuccess ? 0 : -1;\n}\n\n");
    const int eager = dyn && cu_eager(g); /* no CUDA graph */
    if (!eager) gen_capture(c, w, ni, no);

    w_printf(w, "void %s_free(%s_Model *m)\n{\n", N, N);
    w_puts(w, "    if (!m) return;\n");
    w_puts(w, "    if (m->exec) cudaGraphExecDestroy(m->exec);\n");
    w_printf(w, "    for (int i = 0; i < %d; i++) cudaFree(m->in[i]);\n", ni);
    w_printf(w, "    for (int i = 0; i < %d; i++) cudaFree(m->out[i]);\n", no);
    w_puts(w, cu_wtext(&c->fini));
    if (c->nfused) w_puts(w, "    if (m->relu) cudnnDestroyActivationDescriptor(m->relu);\n");
    if (c->nconv) w_puts(w, "    if (m->dnn) cudnnDestroy(m->dnn);\n");
    if (c->nptrs) w_puts(w, "    cudaFree(m->gemm_ptrs);\n");
    if (dyn) w_puts(w, "    cudaFree(m->ddim);\n");
    if (c->hws_bytes) w_puts(w, "    free(m->hws);\n");
    w_puts(w, "    cudaFree(m->arena);\n    cudaFree(m->weights);\n");
    if (c->jit) w_puts(w, "    if (m->mod) cuModuleUnload(m->mod);\n");
    w_puts(w, "    if (m->blas) cublasDestroy(m->blas);\n    cudaFree(m->blas_ws);\n");
    w_puts(w, "    if (m->cap) cudaStreamDestroy(m->cap);\n    free(m);\n}\n\n");

    w_printf(w, "int %s_init(%s_Model **model, void *stream)\n{\n", N, N);
    w_printf(w, "    static const size_t in_bytes[%d] = {", ni);
    for (int i = 0; i < ni; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)(g->n_inputs ? value_bytes(g->inputs[i]) : 0));
    w_printf(w, "}, out_bytes[%d] = {", no);
    for (int i = 0; i < no; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)(g->n_outputs ? value_bytes(g->outputs[i]) : 0));
    w_puts(w, "};\n");
    w_printf(w, "    %s_Model *m = (%s_Model *)calloc(1, sizeof *m);\n", N, N);
    w_puts(w, "    *model = NULL;\n    if (!m) return -1;\n");
    w_puts(w, "    m->stream = (cudaStream_t)stream;\n");
    w_printf(w, "    int ok = cudaMalloc((void **)&m->arena, %lld) == cudaSuccess &&\n", (long long)(g->arena_bytes > 0 ? g->arena_bytes : 1));
    w_printf(w, "             cudaMalloc((void **)&m->weights, %lld) == cudaSuccess &&\n", (long long)(c->wbytes > 0 ? c->wbytes : 1));
    w_printf(w, "             cudaMemcpy(m->weights, %s_weights, %lld, cudaMemcpyHostToDevice) == cudaSuccess &&\n", N, (long long)c->wbytes);
    w_puts(w, "             cudaStreamCreateWithFlags(&m->cap, cudaStreamNonBlocking) == cudaSuccess &&\n");
    w_puts(w, "             cublasCreate(&m->blas) == CUBLAS_STATUS_SUCCESS && cublasSetStream(m->blas, m->cap) == CUBLAS_STATUS_SUCCESS &&\n");
    w_puts(w, "             cudaMalloc(&m->blas_ws, GC_CUBLAS_WORKSPACE) == cudaSuccess &&\n");
    w_puts(w, "             cublasSetWorkspace(m->blas, m->blas_ws, GC_CUBLAS_WORKSPACE) == CUBLAS_STATUS_SUCCESS;\n");
    w_printf(w, "    for (int i = 0; ok && i < %d; i++) ok = cudaMalloc(&m->in[i], in_bytes[i] ? in_bytes[i] : 1) == cudaSuccess;\n", ni);
    w_printf(w, "    for (int i = 0; ok && i < %d; i++) ok = cudaMalloc(&m->out[i], out_bytes[i] ? out_bytes[i] : 1) == cudaSuccess;\n", no);
    char maxd[80] = ""; /* the schedule's dims argument at init: the maxima */
    if (dyn) snprintf(maxd, sizeof maxd, ", %s_max_dims%s", N, eager ? ", NULL" : "");
    if (c->hws_bytes) w_printf(w, "    ok = ok && (m->hws = (unsigned char *)calloc(1, %lld)) != NULL;\n", (long long)c->hws_bytes);
    if (dyn) /* the shape table kernels read, at the maxima until a run at other dims */
        w_printf(w, "    ok = ok && cudaMalloc((void **)&m->ddim, sizeof(int64_t) * %d) == cudaSuccess &&\n"
                    "         cudaMemcpy(m->ddim, %s_max_dims, sizeof(int64_t) * %d, cudaMemcpyHostToDevice) == cudaSuccess;\n",
                 g->n_syms, N, g->n_syms);
    if (c->nptrs) {
        w_puts(w, "    if (ok) { /* the batched GEMMs' pointer arrays: fixed addresses in the arena */\n");
        w_printf(w, "        void **hp = (void **)malloc(sizeof(void *) * %lld);\n", (long long)c->nptrs);
        w_puts(w, "        ok = hp != NULL;\n        if (ok) {\n");
        w_puts(w, cu_wtext(&c->ptrs));
        w_printf(w, "            ok = cudaMalloc((void **)&m->gemm_ptrs, sizeof(void *) * %lld) == cudaSuccess &&\n", (long long)c->nptrs);
        w_printf(w, "                 cudaMemcpy(m->gemm_ptrs, hp, sizeof(void *) * %lld, cudaMemcpyHostToDevice) == cudaSuccess;\n",
                 (long long)c->nptrs);
        w_puts(w, "        }\n        free(hp);\n    }\n");
    }
    if (c->nconv) {
        w_puts(w, "    ok = ok && cudnnCreate(&m->dnn) == CUDNN_STATUS_SUCCESS && cudnnSetStream(m->dnn, m->cap) == CUDNN_STATUS_SUCCESS;\n");
        /* -DGC_CUDNN_FIND: the measured algorithm search (gc_cudnn_pick) runs
         * each Conv's candidates on zeroed scratch tensors, freed after */
        w_puts(w, "    unsigned char *find = NULL; /* -DGC_CUDNN_FIND: the algorithm search's scratch x, w and y */\n");
        w_puts(w, "#ifdef GC_CUDNN_FIND\n");
        w_printf(w, "    ok = ok && cudaMalloc((void **)&find, %lld) == cudaSuccess && cudaMemsetAsync(find, 0, %lld, m->cap) == cudaSuccess;\n",
                 (long long)c->find_bytes, (long long)c->find_bytes);
        w_puts(w, "#endif\n");
        w_puts(w, cu_wtext(&c->init));
        w_puts(w, "    cudaFree(find);\n");
    }
    if (c->jit) {
        w_printf(w, "#ifdef GC_CUDA_EMULATE\n    gc_emu_register_kernels(%s_emu_kernels, %d);\n#endif\n", N, nk);
        w_printf(w, "    if (ok) { /* the kernels: NVRTC for this device, then the driver loads them */\n");
        w_printf(w, "        char *src = gc_jit_join(%s_kernels_src, (int)(sizeof %s_kernels_src / sizeof %s_kernels_src[0]));\n", N, N, N);
        w_printf(w, "        char *hdr = gc_jit_join(%s_kernels_hdr, (int)(sizeof %s_kernels_hdr / sizeof %s_kernels_hdr[0]));\n", N, N, N);
        w_printf(w, "        ok = src && hdr && gc_jit_load(\"%s_kernels.cu\", src, hdr, %d, %s_kernel_names, &m->mod, m->fn) == 0;\n",
                 N, nk, N);
        w_puts(w, "        free(src);\n        free(hdr);\n    }\n");
    } else {
        w_printf(w, "#ifdef GC_CUDA_EMULATE\n    for (int i = 0; i < %d; i++) m->fn[i] = &%s_emu_kernels[i];\n#endif\n", nk, N);
    }
    /* One run before the capture: cuBLAS and cuDNN load their kernels and
     * set up what they keep on their first call, which must not happen
     * inside a capture (no allocation, no module load there). On zeroed
     * inputs; the emulation needs no such run (-DGC_EMU_WARMUP runs it
     * there too). It also probes the fused Convs (-DGC_CUDNN_FUSED) and
     * times the Convs' algorithms (-DGC_CUDNN_TIME). */
    w_puts(w, "#if !defined(GC_CUDA_EMULATE) || defined(GC_EMU_WARMUP)\n");
    w_printf(w, "    for (int i = 0; ok && i < %d; i++) ok = cudaMemset(m->in[i], 0, in_bytes[i] ? in_bytes[i] : 1) == cudaSuccess;\n", ni);
    if (c->nconv) w_puts(w, "    m->probing = 1;\n");
    if (eager) /* zeroed inputs may make a data-dependent dim invalid: the run stops there, which is no failure */
        w_printf(w, "    const int wr = ok ? %s_schedule(m, (const void *const *)m->in, m->out%s) : -1;\n"
                    "    ok = ok && (wr == 0 || wr == %s_ERR_SHAPE) && cudaStreamSynchronize(m->cap) == cudaSuccess;\n", N, maxd, N);
    else
        w_printf(w, "    ok = ok && %s_schedule(m, (const void *const *)m->in, m->out%s) == 0 && cudaStreamSynchronize(m->cap) == cudaSuccess;\n",
                 N, maxd);
    if (c->nconv) w_puts(w, "    m->probing = 0;\n");
    w_puts(w, "#endif\n");
    if (!eager) {
        w_puts(w, "    /* the schedule over the model's own buffers, captured once here: capture runs\n");
        w_printf(w, "     * nothing, and %s_run_host replays it as is */\n", N);
        w_printf(w, "    ok = ok && %s_capture(m, (const void *const *)m->in, m->out%s) == 0;\n", N, maxd);
    }
    w_printf(w, "    if (!ok) {\n        %s_free(m);\n        cudaGetLastError();\n        return -1;\n    }\n", N);
    w_puts(w, "    *model = m;\n    return 0;\n}\n\n");

    if (dyn) {
        cu_shapes_api(c, w);
    } else {
        w_printf(w, "int %s_run(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
        w_puts(w, "    if (!m) return -1;\n    int same = m->exec != NULL;\n");
        if (g->n_inputs) w_printf(w, "    for (int i = 0; same && i < %d; i++) same = inputs[i] == m->gin[i];\n", g->n_inputs);
        if (g->n_outputs) w_printf(w, "    for (int i = 0; same && i < %d; i++) same = outputs[i] == m->gout[i];\n", g->n_outputs);
        w_puts(w, "    /* other buffers than the graph's: capture anew (the graph updated in place) */\n");
        w_printf(w, "    if (!same && %s_capture(m, inputs, outputs)) return -1;\n", N);
        w_puts(w, "    return cudaGraphLaunch(m->exec, m->stream) == cudaSuccess ? 0 : -1;\n}\n\n");
    }

    w_printf(w, "int %s_run_host(%s_Model *m, const void *const *inputs, void *const *outputs)\n{\n", N, N);
    w_puts(w, "    if (!m) return -1;\n");
    for (int i = 0; i < g->n_inputs; i++)
        if (value_bytes(g->inputs[i]) > 0)
            w_printf(w, "    if (cudaMemcpyAsync(m->in[%d], inputs[%d], %lld, cudaMemcpyHostToDevice, m->stream) != cudaSuccess) return -1;\n",
                     i, i, (long long)value_bytes(g->inputs[i]));
    w_printf(w, "    if (%s_run(m, (const void *const *)m->in, m->out)) return -1;\n", N);
    for (int i = 0; i < g->n_outputs; i++)
        if (value_bytes(g->outputs[i]) > 0)
            w_printf(w, "    if (cudaMemcpyAsync(outputs[%d], m->out[%d], %lld, cudaMemcpyDeviceToHost, m->stream) != cudaSuccess) return -1;\n",
                     i, i, (long long)value_bytes(g->outputs[i]));
    w_puts(w, "    (void)inputs, (void)outputs; /* unread when every tensor is empty */\n");
    w_puts(w, "    return cudaStreamSynchronize(m->stream) == cudaSuccess ? 0 : -1;\n}\n");
}

/* The weights blob: NAME_weights.bin, linked in by the assembler's .incbin
 * (NAME_weights.S, GNU as, ELF), the default. */
static void gen_weights_s(Cu *c, Writer *w)
{
    const char *N = c->name;
    w_printf(w, "/* %s_weights.S: generated by graphc; do not edit. Links %s_weights.bin (%lld bytes)\n", N, N,
             (long long)c->wbytes);
    w_puts(w, " * into .rodata with the assembler's .incbin (GNU as, ELF); NAME_init copies it to the device. */\n");
    w_printf(w, "    .section .rodata\n    .balign 64\n    .globl %s_weights\n    .type %s_weights, %%object\n", N, N);
    w_printf(w, "%s_weights:\n    .incbin \"%s_weights.bin\"\n", N, N);
    if (!c->wbytes) w_puts(w, "    .byte 0\n");
    w_printf(w, "    .size %s_weights, . - %s_weights\n", N, N);
    w_puts(w, "    .section .note.GNU-stack,\"\",%progbits\n");
}

/* Writes the blob itself into dir/file. */
static int write_blob(Cu *c, const char *dir, const char *file, Diag *d)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *path = malloc(n);
    GC_ASSERT(path);
    snprintf(path, n, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f) rc = diag_error(d, "cannot write '%s'", path);
    static const unsigned char zeros[64];
    int64_t pos = 0;
    for (int i = 0; !rc && i < c->g->n_values; i++) {
        if (c->woff[i] < 0) continue;
        const Value *v = c->g->values[i];
        if (fwrite(zeros, 1, (size_t)(c->woff[i] - pos), f) != (size_t)(c->woff[i] - pos) ||
            fwrite(weight_bytes(c, i), 1, v->nbytes, f) != v->nbytes)
            rc = diag_error(d, "cannot write '%s'", path);
        pos = c->woff[i] + (int64_t)v->nbytes;
    }
    if (!rc && fwrite(zeros, 1, (size_t)(c->wbytes - pos), f) != (size_t)(c->wbytes - pos))
        rc = diag_error(d, "cannot write '%s'", path);
    if (f && fclose(f) != 0 && !rc) rc = diag_error(d, "cannot write '%s'", path);
    free(path);
    return rc;
}

/* The weights blob as a C array (hex, 16 bytes a line): --weights=c-array,
 * for toolchains without GNU as (slow to compile for large models). */
static void gen_weights(Cu *c, Writer *w)
{
    w_printf(w, "/* %s_weights.c: generated by graphc; the constants the model reads, %lld bytes. */\n", c->name,
             (long long)c->wbytes);
    w_printf(w, "const unsigned char %s_weights[%lld] = {\n", c->name, (long long)(c->wbytes ? c->wbytes : 1));
    int64_t pos = 0, col = 0;
    for (int i = 0; i < c->g->n_values; i++) {
        if (c->woff[i] < 0) continue;
        const Value *v = c->g->values[i];
        for (; pos < c->woff[i]; pos++, col++) w_puts(w, col % 16 == 15 ? "0,\n" : "0,");
        for (size_t k = 0; k < v->nbytes; k++, pos++, col++)
            w_printf(w, col % 16 == 15 ? "0x%02x,\n" : "0x%02x,", weight_bytes(c, i)[k]);
    }
    for (; pos < c->wbytes; pos++, col++) w_puts(w, col % 16 == 15 ? "0,\n" : "0,");
    if (!c->wbytes) w_puts(w, "0");
    w_puts(w, "};\n");
}

/* --cuda-jit: host code built by the C compiler against the CUDA headers,
 * linked with the runtime, driver, NVRTC and the libraries; no nvcc. */
/* The build options of the Convs' cuDNN calls (runtime/cuda/gc_cuda.h), in
 * the Makefile's header comment; var: the flags they go in. */
static void gen_makefile_conv_options(const Cu *c, Writer *w, const char *var)
{
    if (!c->nconv) return;
    w_printf(w, "# Options for the %d Conv%s on cuDNN (add to %s; gc_cuda.h and graphc's README say more):\n", c->nconv,
             c->nconv > 1 ? "s" : "", var);
    w_printf(w, "#   -DGC_CUDNN_TIME    %s_init's warm-up run times each Conv's candidate algorithms\n", c->name);
    w_puts(w, "#   -DGC_CUDNN_FIND    cuDNN's measured search at init instead of its heuristic order\n");
    if (c->nfused)
        w_printf(w, "#   -DGC_CUDNN_FUSED   bias, residual and ReLU in one cuDNN call (%d of the Convs)\n", c->nfused);
}

static void gen_makefile_jit(Cu *c, Writer *w, int emit_main, const char *wsrc)
{
    const char *N = c->name;
    const char *deps = "gc_cuda.h gc_cuda_jit.h gc_cuda_kernel.h";
    w_printf(w, "# Generated by graphc for model '%s' (--target=cuda --cuda-jit); do not edit.\n#\n", N);
    w_printf(w, "#   make       lib%s.a%s with the C compiler and the CUDA headers (CUDA_HOME,\n", N,
             emit_main ? " and the runner" : "");
    w_printf(w, "#              default /usr/local/cuda); no nvcc: %s_init compiles the kernels with NVRTC\n", N);
    if (emit_main)
        w_printf(w, "#   make emu   %s_main_emu: the runner built as C99 on the CPU emulation (gc_cuda_emu.h)\n", N);
    w_printf(w, "# A program using lib%s.a links $(CUDA_LIBS).\n", N);
    gen_makefile_conv_options(c, w, "CFLAGS");
    w_puts(w, "#\nCUDA_HOME ?= /usr/local/cuda\nCFLAGS ?= -O2 -std=c99 -Wall -Wextra\n");
    w_puts(w, "CUDA_CFLAGS ?= -isystem $(CUDA_HOME)/include\n");
    w_printf(w, "CUDA_LIBS ?= -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -lcublas%s -lnvrtc -lcudart -lcuda -lm\n\n",
             c->nconv ? " -lcudnn" : "");
    w_printf(w, ".PHONY: all%s clean\n\nall: lib%s.a", emit_main ? " emu" : "", N);
    if (emit_main) w_printf(w, " %s_main", N);
    w_puts(w, "\n\n");
    w_printf(w, "%s.o: %s.c %s.h %s_kernels.cu %s\n\t$(CC) $(CFLAGS) $(CUDA_CFLAGS) -c %s.c -o $@\n\n", N, N, N, N, deps, N);
    w_printf(w, "%s_weights.o: %s\n\t$(CC) $(CFLAGS) -c %s -o $@\n\n", N, wsrc, wsrc);
    w_printf(w, "lib%s.a: %s.o %s_weights.o\n\t$(AR) rcs $@ %s.o %s_weights.o\n\n", N, N, N, N, N);
    if (emit_main) {
        w_printf(w, "%s_main: %s_main.c %s.h lib%s.a\n", N, N, N, N);
        w_printf(w, "\t$(CC) $(CFLAGS) -o $@ %s_main.c lib%s.a $(CUDA_LIBS)\n\n", N, N);
        w_printf(w, "emu: %s_main_emu\n\n", N);
        w_printf(w, "%s_main_emu: %s.c %s.h %s_kernels.cu %s_main.c %s %s gc_cuda_emu.h\n", N, N, N, N, N, wsrc, deps);
        w_printf(w, "\t$(CC) $(CFLAGS) -DGC_CUDA_EMULATE -o $@ %s.c %s_main.c %s -lm\n\n", N, N, wsrc);
    }
    w_printf(w, "clean:\n\trm -f %s.o %s_weights.o lib%s.a", N, N, N);
    if (emit_main) w_printf(w, " %s_main %s_main_emu", N, N);
    w_puts(w, "\n");
}

static void gen_makefile(Cu *c, Writer *w, int emit_main, const char *wsrc)
{
    if (c->jit) {
        gen_makefile_jit(c, w, emit_main, wsrc);
        return;
    }
    const char *N = c->name;
    w_printf(w, "# Generated by graphc for model '%s' (--target=cuda); do not edit.\n#\n", N);
    w_printf(w, "#   make       lib%s.a%s with nvcc (CUDA_HOME, default /usr/local/cuda)\n", N,
             emit_main ? " and the runner" : "");
    if (emit_main)
        w_printf(w, "#   make emu   %s_main_emu: the runner built as C99 on the CPU emulation (gc_cuda_emu.h)\n", N);
    gen_makefile_conv_options(c, w, "NVCCFLAGS; make emu takes them in CFLAGS");
    w_puts(w, "#\nCUDA_HOME ?= /usr/local/cuda\nNVCC ?= $(CUDA_HOME)/bin/nvcc\nNVCCFLAGS ?= -O2\n");
    w_puts(w, "CFLAGS ?= -O2 -std=c99 -Wall -Wextra\n\n");
    w_printf(w, ".PHONY: all%s clean\n\nall: lib%s.a", emit_main ? " emu" : "", N);
    if (emit_main) w_printf(w, " %s_main", N);
    w_puts(w, "\n\n");
    w_printf(w, "%s.o: %s.cu %s.h gc_cuda.h gc_cuda_kernel.h\n\t$(NVCC) $(NVCCFLAGS) -c %s.cu -o $@\n\n", N, N, N, N);
    w_printf(w, "%s_weights.o: %s\n\t$(CC) $(CFLAGS) -c %s -o $@\n\n", N, wsrc, wsrc);
    w_printf(w, "lib%s.a: %s.o %s_weights.o\n\t$(AR) rcs $@ %s.o %s_weights.o\n\n", N, N, N, N, N);
    if (emit_main) {
        w_printf(w, "%s_main: %s_main.c %s.h lib%s.a\n", N, N, N, N);
        w_printf(w, "\t$(NVCC) $(NVCCFLAGS) -o $@ %s_main.c lib%s.a -lcublas%s\n\n", N, N, c->nconv ? " -lcudnn" : "");
        w_printf(w, "emu: %s_main_emu\n\n", N);
        w_printf(w, "%s_main_emu: %s.cu %s.h %s_main.c %s gc_cuda.h gc_cuda_emu.h\n", N, N, N, N, wsrc);
        w_printf(w, "\t$(CC) $(CFLAGS) -DGC_CUDA_EMULATE -o $@ -x c %s.cu -x none %s_main.c %s -lm\n\n", N, N, wsrc);
    }
    w_printf(w, "clean:\n\trm -f %s.o %s_weights.o lib%s.a", N, N, N);
    if (emit_main) w_printf(w, " %s_main %s_main_emu", N, N);
    w_puts(w, "\n");
}

/* `DECL[n] = {NAME_KIND_0SUFFIX, ...};` over a model's count ports (`{none}` when it has none). */
static void port_table(Writer *w, const char *decl, int n, const char *N, const char *kind, int count, const char *suffix,
                       const char *none)
{
    w_printf(w, "%s[%d] = {", decl, n);
    for (int i = 0; i < count; i++) w_printf(w, "%s%s_%s_%d%s", i ? ", " : "", N, kind, i, suffix);
    w_printf(w, "%s};\n", count ? "" : none);
}

/* The runner: NAME_main OUTDIR IN0.npy ... -> OUTDIR/output_<i>.npy (plain C, host side). */
static void gen_main(Cu *c, Writer *w)
{
    const Graph *g = c->g;
    const char *N = c->name;
    const int ni = g->n_inputs ? g->n_inputs : 1, no = g->n_outputs ? g->n_outputs : 1;
    w_printf(w, "/* %s_main.c: generated by graphc (--target=cuda); do not edit.\n", N);
    w_printf(w, " *\n * Usage: %s_main OUTDIR IN0.npy IN1.npy ...\n", N);
    w_puts(w, " *\n * Reads every input from a .npy file (format 1.0-3.0, little-endian, C order,\n");
    if (g->n_syms) w_puts(w, " * the model's dtype and rank, each dim within its bounds), runs the model at\n * those shapes on the GPU (or the CPU\n");
    else w_puts(w, " * dtype and shape exactly the model's), runs the model on the GPU (or the CPU\n");
    w_puts(w, " * emulation) and writes OUTDIR/output_<i>.npy. Any error prints one line and\n");
    w_puts(w, " * exits with status 1. */\n");
    w_puts(w, "#define _POSIX_C_SOURCE 200809L\n");
    w_printf(w, "#include \"%s.h\"\n\n", N);
    w_puts(w, "#include <errno.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/stat.h>\n\n");
    /* ports as tables (runtime shapes: element sizes and the actual shapes of the run, not the outputs' maxima) */
    const int dyn = g->n_syms > 0;
    port_table(w, "static const char *const in_descr", ni, N, "INPUT", g->n_inputs, "_NPY_DESCR", "0");
    port_table(w, "static const int in_rank", ni, N, "INPUT", g->n_inputs, "_RANK", "0");
    port_table(w, "static const size_t in_bytes", ni, N, "INPUT", g->n_inputs, "_BYTES", "0");
    port_table(w, "static const char *const out_descr", no, N, "OUTPUT", g->n_outputs, "_NPY_DESCR", "0");
    port_table(w, "static const int out_rank", no, N, "OUTPUT", g->n_outputs, "_RANK", "0");
    port_table(w, "static const size_t out_bytes", no, N, "OUTPUT", g->n_outputs, "_BYTES", "0");
    w_printf(w, "static const long long in_dims[%d][%d] = {", ni, IR_MAX_RANK);
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%s_INPUT_%d_DIMS", i ? ", " : "", N, i);
    w_printf(w, "%s};\n", g->n_inputs ? "" : "{0}");
    if (!dyn) {
        w_printf(w, "static const long long out_dims[%d][%d] = {", no, IR_MAX_RANK);
        for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%s_OUTPUT_%d_DIMS", i ? ", " : "", N, i);
        w_printf(w, "%s};\n", g->n_outputs ? "" : "{0}");
    } else {
        w_printf(w, "static const size_t in_es[%d] = {", ni);
        for (int i = 0; i < g->n_inputs; i++) w_printf(w, "%s%d", i ? ", " : "", (int)ir_dtype_size(g->inputs[i]->dtype));
        w_printf(w, "%s};\nstatic const size_t out_es[%d] = {", g->n_inputs ? "" : "0", no);
        for (int i = 0; i < g->n_outputs; i++) w_printf(w, "%s%d", i ? ", " : "", (int)ir_dtype_size(g->outputs[i]->dtype));
        w_printf(w, "%s};\n", g->n_outputs ? "" : "0");
        w_printf(w, "static int64_t in_got[%d][%d], out_got[%d][%d]; /* the run's shapes */\n", ni, IR_MAX_RANK, no, IR_MAX_RANK);
    }
    w_puts(w, "\n");
    /* 0: every model; 1: static shapes only; 2: runtime shapes only */
    static const struct {
        int only;
        const char *text;
    } body[] = {
        {0, "static int fail(const char *path, const char *why)\n"},
        {0, "{\n"},
        {0, "    fprintf(stderr, \"@N@_main: %s: %s\\n\", path, why);\n"},
        {0, "    return 1;\n"},
        {0, "}\n"},
        {0, "\n"},
        {1, "/* Reads a .npy of the given descr and shape into buf (bytes). 0 or -1. */\n"},
        {1, "static int read_npy(const char *path, const char *descr, int rank, const long long *dims, void *buf, size_t bytes)\n"},
        {2, "/* Reads a .npy of the given descr, rank and shape at most dims into buf (room for es\n"},
        {2, " * times the most elements); its shape into got. 0 or -1. */\n"},
        {2, "static int read_npy(const char *path, const char *descr, int rank, const long long *dims, int64_t *got, size_t es,\n"},
        {2, "                    void *buf)\n"},
        {0, "{\n"},
        {0, "    FILE *f = fopen(path, \"rb\");\n"},
        {0, "    if (!f) return fail(path, strerror(errno)), -1;\n"},
        {0, "    unsigned char pre[12];\n"},
        {0, "    size_t hl;\n"},
        {0, "    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, \"\\x93NUMPY\", 6) != 0 || pre[6] < 1 || pre[6] > 3) {\n"},
        {0, "        fclose(f);\n"},
        {0, "        return fail(path, \"not a .npy file\"), -1;\n"},
        {0, "    }\n"},
        {0, "    if (pre[6] == 1) hl = (size_t)pre[8] | (size_t)pre[9] << 8;\n"},
        {0, "    else {\n"},
        {0, "        if (fread(pre + 10, 1, 2, f) != 2) { fclose(f); return fail(path, \"truncated header\"), -1; }\n"},
        {0, "        hl = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;\n"},
        {0, "    }\n"},
        {0, "    char *h = (char *)malloc(hl + 1);\n"},
        {0, "    if (!h || fread(h, 1, hl, f) != hl) { free(h); fclose(f); return fail(path, \"truncated header\"), -1; }\n"},
        {0, "    h[hl] = 0;\n"},
        {0, "    char want[64];\n"},
        {0, "    snprintf(want, sizeof want, \"'descr': '%s'\", descr);\n"},
        {0, "    const char *sp = strstr(h, \"'shape': (\");\n"},
        {0, "    int ok = strstr(h, want) != NULL && strstr(h, \"'fortran_order': False\") != NULL && sp != NULL;\n"},
        {0, "    if (ok) {\n"},
        {0, "        char *p = (char *)sp + 10;\n"},
        {0, "        for (int k = 0; k < rank && ok; k++) {\n"},
        {0, "            char *e;\n"},
        {0, "            long long v = strtoll(p, &e, 10);\n"},
        {1, "            ok = e != p && v == dims[k];\n"},
        {2, "            ok = e != p && v >= 0 && v <= dims[k];\n"},
        {2, "            got[k] = (int64_t)v;\n"},
        {0, "            p = e;\n"},
        {0, "            while (*p == ',' || *p == ' ') p++;\n"},
        {0, "        }\n"},
        {0, "        ok = ok && *p == ')';\n"},
        {0, "    }\n"},
        {0, "    free(h);\n"},
        {1, "    if (!ok) { fclose(f); return fail(path, \"dtype or shape differs from the model's input\"), -1; }\n"},
        {2, "    if (!ok) { fclose(f); return fail(path, \"another dtype or rank than the model's input, or a shape beyond the model's bounds\"), -1; }\n"},
        {2, "    size_t bytes = es;\n"},
        {2, "    for (int k = 0; k < rank; k++) bytes *= (size_t)got[k];\n"},
        {0, "    ok = fread(buf, 1, bytes, f) == bytes && fgetc(f) == EOF;\n"},
        {0, "    fclose(f);\n"},
        {0, "    return ok ? 0 : (fail(path, \"data size differs from the shape\"), -1);\n"},
        {0, "}\n"},
        {0, "\n"},
        {0, "static int write_npy(const char *path, const char *descr, int rank, const long long *dims, const void *buf, size_t bytes)\n"},
        {0, "{\n"},
        {0, "    char h[512], sh[400];\n"},
        {0, "    size_t o = 0;\n"},
        {0, "    sh[0] = 0;\n"},
        {0, "    for (int k = 0; k < rank; k++) o += (size_t)snprintf(sh + o, sizeof sh - o, \"%lld,%s\", dims[k], k + 1 < rank ? \" \" : \"\");\n"},
        {0, "    if (rank > 1) sh[o - 1] = 0;\n"},
        {0, "    int n = snprintf(h, sizeof h, \"{'descr': '%s', 'fortran_order': False, 'shape': (%s), }\", descr, sh);\n"},
        {0, "    while ((n + 11) % 64) h[n++] = ' ';\n"},
        {0, "    h[n++] = '\\n';\n"},
        {0, "    FILE *f = fopen(path, \"wb\");\n"},
        {0, "    if (!f) return fail(path, strerror(errno)), -1;\n"},
        {0, "    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};\n"},
        {0, "    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)n, f) == (size_t)n && fwrite(buf, 1, bytes, f) == bytes;\n"},
        {0, "    ok = (fclose(f) == 0) && ok;\n"},
        {0, "    return ok ? 0 : (fail(path, \"cannot write\"), -1);\n"},
        {0, "}\n"},
        {0, "\n"},
        {0, "int main(int argc, char **argv)\n"},
        {0, "{\n"},
        {0, "    if (argc != 2 + @NI@) {\n"},
        {0, "        fprintf(stderr, \"usage: @N@_main OUTDIR\");\n"},
        {0, "        for (int i = 0; i < @NI@; i++) fprintf(stderr, \" IN%d.npy\", i);\n"},
        {0, "        fprintf(stderr, \"\\n\");\n"},
        {0, "        return 1;\n"},
        {0, "    }\n"},
        {0, "    static void *in[@NIA@], *out[@NOA@]; /* static: still reachable when an error exits early */\n"},
        {0, "    for (int i = 0; i < @NI@; i++)\n"},
        {1, "        if (!(in[i] = malloc(in_bytes[i] ? in_bytes[i] : 1)) || read_npy(argv[2 + i], in_descr[i], in_rank[i], in_dims[i], in[i], in_bytes[i])) return 1;\n"},
        {2, "        if (!(in[i] = malloc(in_bytes[i] ? in_bytes[i] : 1)) ||\n"},
        {2, "            read_npy(argv[2 + i], in_descr[i], in_rank[i], in_dims[i], in_got[i], in_es[i], in[i]))\n"},
        {2, "            return 1;\n"},
        {0, "    for (int i = 0; i < @NO@; i++)\n"},
        {0, "        if (!(out[i] = malloc(out_bytes[i] ? out_bytes[i] : 1))) return fail(argv[1], \"out of memory\");\n"},
        {0, "    @N@_Model *m;\n"},
        {0, "    if (@N@_init(&m, NULL)) return fail(\"@N@_init\", \"cannot set up the model on the GPU\");\n"},
        {1, "    if (@N@_run_host(m, (const void *const *)in, out)) {\n"},
        {1, "        @N@_free(m);\n"},
        {1, "        return fail(\"@N@_run_host\", \"a CUDA call failed\");\n"},
        {1, "    }\n"},
        {2, "    const int64_t *ind[@NIA@] = {0};\n"},
        {2, "    int64_t *outd[@NOA@] = {0};\n"},
        {2, "    for (int i = 0; i < @NI@; i++) ind[i] = in_got[i];\n"},
        {2, "    for (int i = 0; i < @NO@; i++) outd[i] = out_got[i];\n"},
        {2, "    int rc = @N@_run_shapes_host(m, (const void *const *)in, ind, out, outd);\n"},
        {2, "    if (rc) @N@_free(m);\n"},
        {2, "    if (rc == @N@_ERR_SHAPE)\n"},
        {2, "        return fail(argv[2], \"the inputs do not fit the model: a fixed dim differs, a runtime dim is out of its bounds or \"\n"},
        {2, "                             \"differs between inputs, or a shape computed from input values is invalid or beyond its bound\");\n"},
        {2, "    if (rc) return fail(\"@N@_run_shapes_host\", \"a CUDA call failed\");\n"},
        {0, "    @N@_free(m);\n"},
        {0, "    if (mkdir(argv[1], 0777) != 0 && errno != EEXIST) return fail(argv[1], strerror(errno));\n"},
        {0, "    for (int i = 0; i < @NO@; i++) {\n"},
        {0, "        char path[4096];\n"},
        {0, "        snprintf(path, sizeof path, \"%s/output_%d.npy\", argv[1], i);\n"},
        {1, "        if (write_npy(path, out_descr[i], out_rank[i], out_dims[i], out[i], out_bytes[i])) return 1;\n"},
        {2, "        long long od[@NRK@];\n"},
        {2, "        size_t ob = out_es[i];\n"},
        {2, "        for (int k = 0; k < out_rank[i]; k++) ob *= (size_t)(od[k] = (long long)out_got[i][k]);\n"},
        {2, "        if (write_npy(path, out_descr[i], out_rank[i], od, out[i], ob)) return 1;\n"},
        {0, "    }\n"},
        {0, "    for (int i = 0; i < @NIA@; i++) free(in[i]);\n"},
        {0, "    for (int i = 0; i < @NOA@; i++) free(out[i]);\n"},
        {0, "    return 0;\n"},
        {0, "}\n"},
    };
    char ni_s[16], no_s[16], nia[16], noa[16];
    snprintf(ni_s, sizeof ni_s, "%d", g->n_inputs);
    snprintf(no_s, sizeof no_s, "%d", g->n_outputs);
    snprintf(nia, sizeof nia, "%d", ni);
    snprintf(noa, sizeof noa, "%d", no);
    for (size_t l = 0; l < sizeof body / sizeof body[0]; l++) {
        if (body[l].only && body[l].only != (g->n_syms ? 2 : 1)) continue;
        for (const char *s = body[l].text; *s;) {
            if (strncmp(s, "@N@", 3) == 0) w_puts(w, N), s += 3;
            else if (strncmp(s, "@NI@", 4) == 0) w_puts(w, ni_s), s += 4;
            else if (strncmp(s, "@NO@", 4) == 0) w_puts(w, no_s), s += 4;
            else if (strncmp(s, "@NIA@", 5) == 0) w_puts(w, nia), s += 5;
            else if (strncmp(s, "@NOA@", 5) == 0) w_puts(w, noa), s += 5;
            else if (strncmp(s, "@NRK@", 5) == 0) w_printf(w, "%d", IR_MAX_RANK), s += 5;
            else w_printf(w, "%c", *s++);
        }
    }
}

static int copy_runtime(const char *dir, const char *file, Diag *d)
{
    for (size_t f = 0; f < gc_runtime_files_count; f++)
        if (strcmp(gc_runtime_files[f].name, file) == 0) {
            Writer w;
            w_init(&w);
            w_puts(&w, (const char *)gc_runtime_files[f].data); /* text; NUL-terminated */
            int rc = cgen_save(&w, dir, file, d);
            w_free(&w);
            return rc;
        }
    return diag_error(d, "internal: the runtime file '%s' is not embedded", file);
}

static int cuda_write(const Graph *g, const char *dir, const BackendOptions *o, Diag *d)
{
    if (o->infer_graph) return diag_error(d, "the CUDA backend does not compile training steps yet");
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i]->kind == VK_STATE) return diag_error(d, "the CUDA backend does not compile training state yet");
    if (o->weights != BACKEND_WEIGHTS_INCBIN && o->weights != BACKEND_WEIGHTS_CARRAY)
        return diag_error(d, "the CUDA backend links the weights in (incbin or c-array); --weights=file is not supported yet");
    Cu c;
    cu_init(&c, g, o->name);
    c.jit = o->cuda_jit;
    int rc = gen_nodes(&c, d);
    Writer hdr, src, wts, mk, mainw, kfile;
    w_init(&hdr), w_init(&src), w_init(&wts), w_init(&mk), w_init(&mainw), w_init(&kfile);
    for (int i = 0; !rc && i < g->n_values; i++)
        if (c.used[i] && is_half(g->values[i]->dtype)) c.half = 1;
    if (!rc) {
        layout_weights(&c);
        gen_header(&c, &hdr);
        if (c.jit) cu_jit_kernels_file(&c, &kfile);
        gen_source(&c, &src, cu_wtext(&kfile));
        if (o->weights == BACKEND_WEIGHTS_CARRAY) gen_weights(&c, &wts);
        else gen_weights_s(&c, &wts);
        char wsrc[96];
        snprintf(wsrc, sizeof wsrc, o->weights == BACKEND_WEIGHTS_CARRAY ? "%s_weights.c" : "%s_weights.S", o->name);
        gen_makefile(&c, &mk, o->emit_main, wsrc);
        if (o->emit_main) gen_main(&c, &mainw);
    }
    char *tmp = rc ? NULL : cgen_dir_begin(dir, d);
    if (!rc && !tmp) rc = -1;
    if (!rc) {
        char f[128];
        snprintf(f, sizeof f, "%s.h", o->name);
        rc = cgen_save(&hdr, tmp, f, d);
        snprintf(f, sizeof f, c.jit ? "%s.c" : "%s.cu", o->name);
        if (!rc) rc = cgen_save(&src, tmp, f, d);
        snprintf(f, sizeof f, "%s_kernels.cu", o->name);
        if (!rc && c.jit) rc = cgen_save(&kfile, tmp, f, d);
        const int carray = o->weights == BACKEND_WEIGHTS_CARRAY;
        snprintf(f, sizeof f, carray ? "%s_weights.c" : "%s_weights.S", o->name);
        if (!rc) rc = cgen_save(&wts, tmp, f, d);
        snprintf(f, sizeof f, "%s_weights.bin", o->name);
        if (!rc && !carray) rc = write_blob(&c, tmp, f, d);
        if (!rc) rc = cgen_save(&mk, tmp, "Makefile", d);
        snprintf(f, sizeof f, "%s_main.c", o->name);
        if (!rc && o->emit_main) rc = cgen_save(&mainw, tmp, f, d);
        if (!rc) rc = copy_runtime(tmp, "gc_cuda.h", d);
        if (!rc) rc = copy_runtime(tmp, "gc_cuda_emu.h", d);
        if (!rc && c.jit) rc = copy_runtime(tmp, "gc_cuda_jit.h", d);
        if (!rc) rc = copy_runtime(tmp, "gc_cuda_kernel.h", d);
        if (!rc && (c.half || c.resize_host)) rc = copy_runtime(tmp, "gcrt_base.h", d); /* the emulation's f16/bf16 conversions */
        if (!rc && c.resize_host) rc = copy_runtime(tmp, "gcrt_resize.h", d);
        if (!rc && c.resize_host) rc = copy_runtime(tmp, "gcrt_resize.c", d); /* the host's runtime tap tables */
        if (rc) cgen_rmtree(tmp);
        else rc = cgen_dir_commit(tmp, dir, o->name, d);
    }
    free(tmp);
    w_free(&hdr), w_free(&src), w_free(&wts), w_free(&mk), w_free(&mainw), w_free(&kfile);
    cu_fini(&c);
    return rc;
}

const Backend backend_cuda = {
    .name = "cuda",
    .summary = "CUDA C for NVIDIA GPUs (cuBLAS, cuDNN and generated kernels for every op)",
    .supports = cuda_supports,
    .workspace = cuda_workspace,
    .kernel_note = cuda_kernel_note,
    .extra_reads = cuda_extra_reads,
    .check_name = cgen_check_name,
    .write = cuda_write,
    .render = NULL,
};
