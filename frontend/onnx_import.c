/* onnx_import.c — ONNX ModelProto → graphc IR.
 *
 * The file is mapped read-only (mmap) and decoded by onnx_pb.c; the graph
 * owns the mapping (ir_graph_own) so initializers' raw_data is borrowed, not
 * copied, whenever it is suitably aligned for its element type. An image
 * already in memory (onnx_load_image: the fuzzers) is copied into a buffer
 * the graph owns in the same way, and has no folder for external data.
 *
 * Steps:
 *  1. opset: the default domain ("" or "ai.onnx") must be imported at a
 *     version in 1..17 (older forms are upgraded by onnx_upgrade.c). The
 *     training domain "ai.onnx.preview.training" (version 1) is accepted for
 *     its optimizer ops only (Adagrad, Adam, Momentum: the optim family); a
 *     model may import it alone. Nodes of any other domain are refused by
 *     name.
 *  2. initializers → constants (an initializer also listed as an input is a
 *     constant); external data is read from files confined to the model's
 *     own folder (relative path, no '..', realpath inside the folder, range
 *     checked against the file size).
 *  3. graph inputs → inputs, dtype and shape from the TypeProto; symbolic or
 *     missing dims must come from --shape NAME=d0,d1,... (LoadOptions).
 *  4. nodes → intermediate ImpNodes (names defaulted to "<OpType>_<index>",
 *     attributes decoded), upgraded from their opset's form to the IR's
 *     opset-17 form by onnx_upgrade.c, then built as IR nodes whose
 *     attributes are type-checked against the op's schema. Constant nodes
 *     become constants directly. Scan, Loop and If are unrolled into plain nodes
 *     by onnx_control.c.
 *  5. inputs are resolved by name once every node exists (ONNX files need
 *     not be sorted), graph outputs are added in order, and ir_toposort puts
 *     the nodes in order (reporting cycles).
 * Every failure is one diagnostic naming the file, and the node or tensor.
 */
#define _DEFAULT_SOURCE /* realpath */
#include "onnx_import.h"
#include "../ir/custom_op.h"
#include "../ir/op.h"
#include "../ir/writer.h"
#include "onnx_pb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ONNX_MIN_OPSET 1
#define ONNX_MAX_OPSET 17

struct OnnxImp {
    Graph *g;
    Diag *d;
    PbCtx pc;
    Arena tmp;
    const char *dir; /* the model's folder; NULL: loaded from memory, no external data */
    int opset;    /* the default domain's version; 0 if not imported */
    int training; /* the model imports ai.onnx.preview.training version 1 */
    const char **names; /* open-addressing set of every node output name */
    int cap_names, n_names;
    ImpNode **pend; /* nodes added by upgraders, built after the current one */
    int n_pend, cap_pend;
    const LoadOptions *opts; /* the caller's options (onnx_control.c reads binds) */
};

/* ---- small helpers ---- */

static int set_has(const OnnxImp *im, const char *s)
{
    if (!im->cap_names) return 0;
    uint64_t m = (uint64_t)im->cap_names - 1;
    for (uint64_t i = ir_hash_str(s) & m; im->names[i]; i = (i + 1) & m)
        if (strcmp(im->names[i], s) == 0) return 1;
    return 0;
}

static void set_add(OnnxImp *im, const char *s)
{
    if (2 * (im->n_names + 1) > im->cap_names) {
        int cap = im->cap_names ? im->cap_names * 2 : 256;
        const char **t = arena_alloc(&im->tmp, sizeof(char *) * (size_t)cap);
        for (int i = 0; i < im->cap_names; i++) {
            if (!im->names[i]) continue;
            uint64_t k = ir_hash_str(im->names[i]) & (uint64_t)(cap - 1);
            while (t[k]) k = (k + 1) & (uint64_t)(cap - 1);
            t[k] = im->names[i];
        }
        im->names = t;
        im->cap_names = cap;
    }
    uint64_t m = (uint64_t)im->cap_names - 1, i = ir_hash_str(s) & m;
    while (im->names[i]) i = (i + 1) & m;
    im->names[i] = s;
    im->n_names++;
}

static int name_taken(const OnnxImp *im, const char *s) { return set_has(im, s) || ir_find_value(im->g, s); }

int imp_node_error(OnnxImp *im, const ImpNode *n, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return diag_error(im->d, "node '%s' (%s): %s", n->name, n->op_type, buf);
}

static int pb_fail(OnnxImp *im) { return diag_error(im->d, "%s", im->pc.err[0] ? im->pc.err : "malformed ONNX protobuf"); }

static void release_map(void *p, size_t n) { munmap(p, n); }

/* ONNX TensorProto.DataType → DType; `what` names the tensor in errors. */
static int map_dtype(OnnxImp *im, int32_t t, const char *kind, const char *what, DType *out)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                        "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                        "COMPLEX128", "BFLOAT16"};
    if (ir_dtype_from_onnx(t, out) == 0) return 0;
    if (t >= 0 && t < (int32_t)(sizeof names / sizeof names[0]))
        return diag_error(im->d, "%s '%s' has ONNX data type %s, which graphc does not support", kind, what, names[t]);
    return diag_error(im->d, "%s '%s' has ONNX data type %d, which graphc does not support", kind, what, (int)t);
}

/* Borrows p when it is aligned for dt, else copies it into the graph. */
static const void *borrow(OnnxImp *im, const void *p, size_t n, DType dt)
{
    size_t al = ir_dtype_size(dt);
    if (((uintptr_t)p & (al - 1)) == 0) return p;
    void *q = ir_alloc(im->g, n);
    memcpy(q, p, n);
    return q;
}

/* ---- external data ---- */

static int has_dotdot(const char *s)
{
    for (const char *p = s; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') return 1;
        p += n;
        while (*p == '/') p++;
    }
    return 0;
}

/* Maps the external data of tensor t (nbytes long) and points *out at it. */
static int load_external(OnnxImp *im, const OnnxTensor *t, size_t nbytes, const void **out, DType dt)
{
    const char *loc = t->ext_location;
    Diag *d = im->d;
    if (!loc || !*loc) return diag_error(d, "tensor '%s': external data has no 'location'", t->name);
    if (loc[0] == '/')
        return diag_error(d, "tensor '%s': external data location '%s' is an absolute path; it must be relative to the model's folder", t->name, loc);
    if (has_dotdot(loc))
        return diag_error(d, "tensor '%s': external data location '%s' contains '..'; it must stay inside the model's folder", t->name, loc);
    if (!im->dir)
        return diag_error(d, "tensor '%s': external data '%s' cannot be read: the model was not loaded from a file", t->name, loc);
    size_t pl = strlen(im->dir) + strlen(loc) + 2;
    char *path = malloc(pl);
    char *rdir = realpath(im->dir, NULL);
    if (!path || !rdir) { free(path); free(rdir); return diag_error(d, "tensor '%s': cannot resolve the model's folder: %s", t->name, strerror(errno)); }
    snprintf(path, pl, "%s/%s", im->dir, loc);
    char *rpath = realpath(path, NULL);
    int rc = 0;
    if (!rpath) {
        rc = diag_error(d, "tensor '%s': external data file '%s': %s", t->name, loc, strerror(errno));
    } else {
        size_t dl = strlen(rdir);
        int inside = strncmp(rpath, rdir, dl) == 0 && (rpath[dl] == '/' || (dl == 1 && rdir[0] == '/'));
        if (!inside)
            rc = diag_error(d, "tensor '%s': external data location '%s' resolves outside the model's folder (symbolic link?)", t->name, loc);
    }
    int fd = rc ? -1 : open(rpath, O_RDONLY);
    struct stat st;
    if (!rc && (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
        rc = diag_error(d, "tensor '%s': cannot open external data file '%s'%s%s", t->name, loc, fd < 0 ? ": " : " (not a regular file)", fd < 0 ? strerror(errno) : "");
    if (!rc) {
        uint64_t size = (uint64_t)st.st_size;
        uint64_t off = t->ext_offset < 0 ? 0 : (uint64_t)t->ext_offset;
        uint64_t len = t->ext_length < 0 ? (off <= size ? size - off : 0) : (uint64_t)t->ext_length;
        if (off > size || len > size - off)
            rc = diag_error(d, "tensor '%s': external data range [%llu, +%llu) runs past the end of '%s' (%llu bytes)", t->name,
                            (unsigned long long)off, (unsigned long long)len, loc, (unsigned long long)size);
        else if (len != nbytes)
            rc = diag_error(d, "tensor '%s': external data holds %llu bytes, its shape and type need %zu", t->name,
                            (unsigned long long)len, nbytes);
        else if (nbytes == 0)
            *out = "";
        else {
            void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (m == MAP_FAILED) rc = diag_error(d, "tensor '%s': cannot map '%s': %s", t->name, loc, strerror(errno));
            else {
                ir_graph_own(im->g, m, (size_t)size, release_map);
                *out = borrow(im, (const uint8_t *)m + off, nbytes, dt);
            }
        }
    }
    if (fd >= 0) close(fd);
    free(path); free(rdir); free(rpath);
    return rc;
}

/* Decodes tensor t into td (data borrowed from the mapping or in the graph). */
int imp_tensor(OnnxImp *im, const OnnxTensor *t, TensorData *td)
{
    memset(td, 0, sizeof *td);
    if (map_dtype(im, t->data_type, "tensor", t->name, &td->dtype)) return -1;
    int64_t numel;
    if (onnx_pb_numel(&im->pc, t, &numel)) return pb_fail(im);
    td->shape.rank = t->n_dims;
    for (int i = 0; i < t->n_dims; i++) td->shape.dims[i] = t->dims[i];
    size_t nbytes = (size_t)numel * ir_dtype_size(td->dtype);
    td->nbytes = nbytes;
    if (t->external) return load_external(im, t, nbytes, &td->data, td->dtype);
    if (t->has_raw) {
        if (t->raw.n != nbytes) {
            char sb[160];
            return diag_error(im->d, "tensor '%s' declares %s %s (%zu bytes) but raw_data holds %zu bytes", t->name,
                              ir_dtype_name(td->dtype), ir_shape_str(&td->shape, sb, sizeof sb), nbytes, t->raw.n);
        }
        td->data = nbytes ? borrow(im, t->raw.p, nbytes, td->dtype) : "";
        return 0;
    }
    if (onnx_pb_typed_data(&im->pc, t, td->dtype, numel, NULL)) return pb_fail(im);
    void *buf = ir_alloc(im->g, nbytes ? nbytes : 1);
    if (onnx_pb_typed_data(&im->pc, t, td->dtype, numel, buf)) return pb_fail(im);
    td->data = buf;
    return 0;
}

/* ---- the upgrader interface ---- */

ImpAttr *imp_attr(ImpNode *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

void imp_drop_attr(ImpNode *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) {
            n->attrs[i] = n->attrs[--n->n_attrs];
            return;
        }
}

void imp_set_attr(OnnxImp *im, ImpNode *n, const ImpAttr *a)
{
    ImpAttr *old = imp_attr(n, a->name);
    if (old) { *old = *a; return; }
    ImpAttr *na = arena_alloc(&im->tmp, sizeof(ImpAttr) * (size_t)(n->n_attrs + 1));
    if (n->n_attrs) memcpy(na, n->attrs, sizeof(ImpAttr) * (size_t)n->n_attrs);
    na[n->n_attrs++] = *a;
    n->attrs = na;
}

void imp_set_input(OnnxImp *im, ImpNode *n, int idx, const char *name)
{
    if (idx >= n->n_in) {
        const char **ni = arena_alloc(&im->tmp, sizeof(char *) * (size_t)(idx + 1));
        for (int i = 0; i <= idx; i++) ni[i] = i < n->n_in ? n->in[i] : "";
        n->in = ni;
        n->n_in = idx + 1;
    }
    n->in[idx] = name;
}

const char *imp_fresh_name(OnnxImp *im, const char *base)
{
    size_t bl = strlen(base);
    char *buf = arena_alloc(&im->tmp, bl + 24);
    memcpy(buf, base, bl + 1);
    for (int k = 1; name_taken(im, buf); k++) snprintf(buf + bl, 24, "_%d", k);
    set_add(im, buf);
    return buf;
}

static const char *imp_const(OnnxImp *im, const char *base, DType dt, const void *v, int count, int rank)
{
    const char *name = imp_fresh_name(im, base);
    int64_t dims[1] = {count};
    Shape s = ir_shape(rank ? 1 : 0, dims);
    Value *c = ir_add_const(im->g, name, dt, &s, v, 1);
    return c->name;
}

const char *imp_const_i64(OnnxImp *im, const char *base, const int64_t *v, int count, int rank)
{
    return imp_const(im, base, DT_I64, v, count, rank);
}

const char *imp_const_f32(OnnxImp *im, const char *base, const float *v, int count, int rank)
{
    return imp_const(im, base, DT_F32, v, count, rank);
}

ImpNode *imp_new_node(OnnxImp *im, const char *op_type, const char *name, int n_in, int n_out)
{
    ImpNode *n = arena_alloc(&im->tmp, sizeof *n);
    n->op_type = op_type;
    n->name = name;
    n->n_in = n_in;
    n->n_out = n_out;
    n->in = arena_alloc(&im->tmp, sizeof(char *) * (size_t)(n_in + 1));
    n->out = arena_alloc(&im->tmp, sizeof(char *) * (size_t)(n_out + 1));
    for (int i = 0; i < n_in; i++) n->in[i] = "";
    for (int i = 0; i < n_out; i++) n->out[i] = "";
    if (im->n_pend == im->cap_pend) {
        int cap = im->cap_pend ? im->cap_pend * 2 : 8;
        ImpNode **np = arena_alloc(&im->tmp, sizeof(ImpNode *) * (size_t)cap);
        if (im->n_pend) memcpy(np, im->pend, sizeof(ImpNode *) * (size_t)im->n_pend);
        im->pend = np;
        im->cap_pend = cap;
    }
    im->pend[im->n_pend++] = n;
    return n;
}

int imp_known(OnnxImp *im, const char *value, DType *dt, Shape *s)
{
    Value *v = ir_find_value(im->g, value);
    if (!v || v->kind == VK_TEMP || !v->shape_known) return -1;
    *dt = v->dtype;
    *s = v->shape;
    return 0;
}

/* ---- graph inputs ---- */

static const InputShape *find_shape(const LoadOptions *o, const char *name, char *used)
{
    for (int i = 0; o && i < o->n_shapes; i++)
        if (strcmp(o->shapes[i].name, name) == 0) { used[i] = 1; return &o->shapes[i]; }
    return NULL;
}

static int add_input(OnnxImp *im, const OnnxValueInfo *vi, const LoadOptions *o, char *used)
{
    Diag *d = im->d;
    if (!vi->has_tensor_type)
        return diag_error(d, "input '%s' is not a tensor (sequence, map and optional types are not supported)", vi->name);
    DType dt = DT_UNDEF;
    if (map_dtype(im, vi->elem_type, "input", vi->name, &dt)) return -1;
    const InputShape *given = find_shape(o, vi->name, used);
    Shape s = {0};
    char a[256], b[256];
    if (given) {
        const char *flag = given->max ? "--max-shape" : "--shape";
        s = given->shape;
        if (vi->has_shape && vi->rank != s.rank)
            return diag_error(d, "%s %s=%s has rank %d, but the model declares input '%s' with rank %d", flag, vi->name,
                              ir_shape_str(&s, a, sizeof a), s.rank, vi->name, vi->rank);
        if (given->max && !vi->has_shape)
            return diag_error(d, "--max-shape %s: the model gives input '%s' no shape; pass --shape", vi->name, vi->name);
        for (int i = 0; vi->has_shape && i < vi->rank; i++)
            if (vi->dims[i].kind == 1 && vi->dims[i].value != s.dims[i])
                return diag_error(d, "%s %s=%s: dim %d is %lld in the model", flag, vi->name, ir_shape_str(&s, a, sizeof a),
                                  i, (long long)vi->dims[i].value);
        /* --max-shape: each symbolic dim becomes a runtime dim in [1, bound]
         * (a bound of 1 is the constant 1); dims the model names alike share
         * one symbol */
        for (int i = 0; given->max && i < vi->rank; i++) {
            if (vi->dims[i].kind == 1 || s.dims[i] <= 1) continue;
            char nm[160];
            if (vi->dims[i].kind == 2 && vi->dims[i].param[0]) snprintf(nm, sizeof nm, "%s", vi->dims[i].param);
            else snprintf(nm, sizeof nm, "%s_dim%d", vi->name, i);
            int32_t k = ir_sym_var(im->g, nm, 1, s.dims[i], d);
            if (k < 0) return -1;
            s.sym[i] = k;
        }
    } else {
        if (!vi->has_shape)
            return diag_error(d, "input '%s' has no shape in the model; pass --shape %s=d0,d1,...", vi->name, vi->name);
        s.rank = vi->rank;
        int bad = -1;
        for (int i = 0; i < vi->rank; i++) {
            if (vi->dims[i].kind == 1 && vi->dims[i].value < 0)
                return diag_error(d, "input '%s' dim %d is negative (%lld)", vi->name, i, (long long)vi->dims[i].value);
            s.dims[i] = vi->dims[i].kind == 1 ? vi->dims[i].value : 1;
            if (vi->dims[i].kind != 1 && bad < 0) bad = i;
        }
        if (bad >= 0) {
            size_t k = 0;
            for (int i = 0; i < s.rank && k < sizeof b; i++)
                k += (size_t)snprintf(b + k, sizeof b - k, "%s%lld", i ? "," : "", (long long)s.dims[i]);
            char m[256];
            size_t km = 0;
            for (int i = 0; i < s.rank && km < sizeof m; i++)
                km += (size_t)(vi->dims[i].kind == 1 ? snprintf(m + km, sizeof m - km, "%s%lld", i ? "," : "", (long long)s.dims[i])
                                                     : snprintf(m + km, sizeof m - km, "%sMAX", i ? "," : ""));
            if (vi->dims[bad].kind == 2)
                return diag_error(d, "input '%s' dim %d is symbolic ('%s'); pass --max-shape %s=%s to compile once for "
                                  "sizes up to MAX, or --shape %s=%s for one size", vi->name, bad, vi->dims[bad].param,
                                  vi->name, m, vi->name, b);
            return diag_error(d, "input '%s' dim %d is unknown; pass --max-shape %s=%s to compile once for sizes up to "
                              "MAX, or --shape %s=%s for one size", vi->name, bad, vi->name, m, vi->name, b);
        }
    }
    int64_t numel;
    if (ir_shape_numel(&s, &numel)) return diag_error(d, "input '%s' shape %s has too many elements", vi->name, ir_shape_str(&s, a, sizeof a));
    if (ir_find_value(im->g, vi->name)) return diag_error(d, "graph input '%s' is listed twice", vi->name);
    ir_add_input(im->g, vi->name, dt, &s);
    return 0;
}

/* ---- nodes ---- */

static const char *kind_name(AttrKind k)
{
    static const char *n[] = {"an int", "a float", "a string", "a list of ints", "a list of floats", "a tensor"};
    return n[k];
}

static const char *onnx_attr_type_name(int t)
{
    static const char *n[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS", "STRINGS",
                              "TENSORS", "GRAPHS"};
    return t >= 0 && t <= 10 ? n[t] : "an unsupported type";
}

ImpEnv imp_env(OnnxImp *im) { return (ImpEnv){im->g, im->d, &im->tmp, im->opts}; }

/* ONNX node → ImpNode with decoded attributes. */
int imp_from_onnx(OnnxImp *im, const OnnxNode *on, int index, ImpNode *n)
{
    n->op_type = on->op_type;
    if (on->name[0]) {
        n->name = on->name;
    } else {
        char *nm = arena_alloc(&im->tmp, strlen(on->op_type) + 24);
        sprintf(nm, "%s_%d", on->op_type, index);
        n->name = nm;
    }
    n->n_in = on->n_in;
    n->in = on->in;
    n->n_out = on->n_out;
    n->out = on->out;
    n->n_attrs = on->n_attrs;
    n->attrs = arena_alloc(&im->tmp, sizeof(ImpAttr) * (size_t)(on->n_attrs + 1));
    for (int i = 0; i < on->n_attrs; i++) {
        const OnnxAttr *oa = &on->attrs[i];
        ImpAttr *a = &n->attrs[i];
        a->name = oa->name;
        a->type = oa->type;
        a->i = oa->i;
        a->f = oa->f;
        a->s = oa->s;
        a->n = oa->n;
        a->ints = oa->ints;
        a->floats = oa->floats;
        a->graph = oa->g; /* GRAPH: unrolled by onnx_control.c, else refused when built */
        if (oa->type == 10 /* GRAPHS */)
            return imp_node_error(im, n, "attribute '%s' is a list of subgraphs, which graphc does not support", oa->name);
        if (oa->type == ONNX_ATTR_TENSOR && imp_tensor(im, &oa->t, &a->t)) return -1;
    }
    return 0;
}

/* Converts an ImpAttr to the schema's kind; an error when the types differ. */
static int set_attr(OnnxImp *im, Node *node, const ImpNode *n, const ImpAttr *a)
{
    int idx = ir_attr_index(node, a->name);
    if (idx < 0) return imp_node_error(im, n, "attribute '%s' is not supported by graphc's %s", a->name, n->op_type);
    const AttrSpec *sp = &ir_op(node->op)->attrs[idx];
    static const int want[] = {ONNX_ATTR_INT, ONNX_ATTR_FLOAT, ONNX_ATTR_STRING, ONNX_ATTR_INTS, ONNX_ATTR_FLOATS,
                               ONNX_ATTR_TENSOR};
    if (a->type != want[sp->kind])
        return imp_node_error(im, n, "attribute '%s' must be %s, got ONNX type %s", a->name, kind_name(sp->kind),
                              onnx_attr_type_name(a->type));
    AttrVal *v = &node->attrs[idx];
    memset(v, 0, sizeof *v);
    v->set = 1;
    v->i = a->i;
    v->f = a->f;
    if (a->type == ONNX_ATTR_STRING) v->s = ir_strdup(im->g, a->s);
    if (a->type == ONNX_ATTR_INTS) {
        v->n = a->n;
        v->ints = ir_alloc(im->g, sizeof(int64_t) * (size_t)(a->n + 1));
        if (a->n) memcpy(v->ints, a->ints, sizeof(int64_t) * (size_t)a->n);
    }
    if (a->type == ONNX_ATTR_FLOATS) {
        v->n = a->n;
        v->floats = ir_alloc(im->g, sizeof(double) * (size_t)(a->n + 1));
        if (a->n) memcpy(v->floats, a->floats, sizeof(double) * (size_t)a->n);
    }
    if (a->type == ONNX_ATTR_TENSOR) v->t = a->t;
    return 0;
}

/* A Constant node becomes a constant value named after its output. */
static int build_constant(OnnxImp *im, const ImpNode *n)
{
    if (n->n_out != 1 || n->n_in != 0) return imp_node_error(im, n, "expects no inputs and one output");
    if (n->n_attrs != 1)
        return imp_node_error(im, n, "exactly one of the attributes value, value_float, value_floats, value_int, value_ints must be set, got %d", n->n_attrs);
    const ImpAttr *a = &n->attrs[0];
    const char *out = n->out[0];
    int64_t cnt = a->n;
    Shape s = ir_shape(1, &cnt);
    Shape scalar = ir_shape(0, NULL);
    if (strcmp(a->name, "value") == 0 && a->type == ONNX_ATTR_TENSOR) {
        ir_add_const(im->g, out, a->t.dtype, &a->t.shape, a->t.data, 0);
    } else if (strcmp(a->name, "value_float") == 0 && a->type == ONNX_ATTR_FLOAT) {
        float f = (float)a->f;
        ir_add_const(im->g, out, DT_F32, &scalar, &f, 1);
    } else if (strcmp(a->name, "value_int") == 0 && a->type == ONNX_ATTR_INT) {
        ir_add_const(im->g, out, DT_I64, &scalar, &a->i, 1);
    } else if (strcmp(a->name, "value_ints") == 0 && a->type == ONNX_ATTR_INTS) {
        ir_add_const(im->g, out, DT_I64, &s, a->ints, 1);
    } else if (strcmp(a->name, "value_floats") == 0 && a->type == ONNX_ATTR_FLOATS) {
        float *f = ir_alloc(im->g, sizeof(float) * (size_t)(cnt + 1));
        for (int64_t i = 0; i < cnt; i++) f[i] = (float)a->floats[i];
        ir_add_const(im->g, out, DT_F32, &s, f, 0);
    } else {
        return imp_node_error(im, n, "attribute '%s' (ONNX type %s) is not supported for Constant", a->name,
                              onnx_attr_type_name(a->type));
    }
    return 0;
}

typedef struct Built {
    Node *node;
    ImpNode *imp;
} Built;

/* Builds the IR node of n (inputs resolved later); *out is NULL for a
 * Constant that became a value. */
static int build_node(OnnxImp *im, ImpNode *n, Node **out)
{
    *out = NULL;
    while (n->n_out > 0 && !n->out[n->n_out - 1][0]) n->n_out--;
    while (n->n_in > 0 && !n->in[n->n_in - 1][0]) n->n_in--;
    if (strcmp(n->op_type, "Constant") == 0) return build_constant(im, n);
    int op = ir_op_lookup(n->op_type);
    if (op < 0) return imp_node_error(im, n, "unsupported op '%s'", n->op_type);
    const OpDesc *od = ir_op(op);
    if (n->n_in < od->min_in || (od->max_in >= 0 && n->n_in > od->max_in))
        return imp_node_error(im, n, "expects %d..%d inputs, got %d", od->min_in, od->max_in, n->n_in);
    if (n->n_out < od->min_out || (od->max_out >= 0 && n->n_out > od->max_out))
        return imp_node_error(im, n, "expects %d..%d outputs, got %d", od->min_out, od->max_out, n->n_out);
    const char **outs = arena_alloc(&im->tmp, sizeof(char *) * (size_t)(n->n_out + 1));
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i][0]) { outs[i] = n->out[i]; continue; }
        char base[300];
        snprintf(base, sizeof base, "%.200s_unused%d", n->name, i);
        outs[i] = imp_fresh_name(im, base);
    }
    Value **nulls = arena_alloc(&im->tmp, sizeof(Value *) * (size_t)(n->n_in + 1));
    Node *node = ir_add_node(im->g, op, n->name, nulls, n->n_in, n->n_out, outs);
    for (int i = 0; i < n->n_attrs; i++)
        if (set_attr(im, node, n, &n->attrs[i])) return -1;
    /* inputs defined by now are wired at once (onnx_control.c evaluates trip
     * counts through them); the rest after every node is built */
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i][0]) node->in[i] = ir_find_value(im->g, n->in[i]);
    *out = node;
    return 0;
}

/* Every node output name is reserved up front, so names invented by
 * upgraders never collide with a value defined later in the file. */
static int reserve_outputs(OnnxImp *im, const ImpNode *nodes, int count)
{
    for (int k = 0; k < count; k++) {
        const ImpNode *n = &nodes[k];
        for (int i = 0; i < n->n_out; i++) {
            const char *o = n->out[i];
            if (!o[0]) continue;
            if (name_taken(im, o)) {
                Value *v = ir_find_value(im->g, o);
                return imp_node_error(im, n, "output '%s' is already defined (as %s)", o,
                                      !v ? "another node's output" : v->kind == VK_INPUT ? "a graph input" : "an initializer");
            }
            set_add(im, o);
        }
    }
    return 0;
}

#define ONNX_TRAINING_DOMAIN "ai.onnx.preview.training"

/* Whether op_type is one of the training domain's ops that graphc implements. */
static int is_training_op(const char *op_type)
{
    return !strcmp(op_type, "Adagrad") || !strcmp(op_type, "Adam") || !strcmp(op_type, "Momentum");
}

static int check_opset(OnnxImp *im, const OnnxModel *m)
{
    int found = 0;
    for (int i = 0; i < m->n_opsets; i++) {
        const OnnxOpset *o = &m->opsets[i];
        if (!strcmp(o->domain, ONNX_TRAINING_DOMAIN)) {
            if (o->version != 1)
                return diag_error(im->d, "model uses opset %lld of domain '%s'; graphc supports only version 1",
                                  (long long)o->version, ONNX_TRAINING_DOMAIN);
            im->training = 1;
            continue;
        }
        if (o->domain[0] && strcmp(o->domain, "ai.onnx") != 0) continue;
        found = 1;
        if (o->version < ONNX_MIN_OPSET || o->version > ONNX_MAX_OPSET)
            return diag_error(im->d, "model uses ONNX opset %lld; graphc supports opsets %d to %d", (long long)o->version,
                              ONNX_MIN_OPSET, ONNX_MAX_OPSET);
        im->opset = (int)o->version;
    }
    if (!found && !im->training && m->n_opsets)
        return diag_error(im->d, "model imports only opset domain '%s'; graphc supports only the default ONNX domain",
                          m->opsets[0].domain);
    if (!found && !im->training) return diag_error(im->d, "model imports no opset of the default ONNX domain");
    return 0;
}

/* Checks node i's domain against the imported opsets: the default domain,
 * or the training domain for its optimizer ops. */
static int check_node_domain(OnnxImp *im, const OnnxNode *on, const ImpNode *n)
{
    if (!strcmp(on->domain, ONNX_TRAINING_DOMAIN)) {
        if (!im->training)
            return imp_node_error(im, n, "domain '%s' is not imported by the model", on->domain);
        if (!is_training_op(on->op_type))
            return imp_node_error(im, n, "op '%s' of domain '%s' is not supported (only Adagrad, Adam and Momentum)",
                                  on->op_type, on->domain);
        return 0;
    }
    if (on->domain[0] && strcmp(on->domain, "ai.onnx") != 0) {
        if (ir_custom_lookup_domain(on->domain, on->op_type) >= 0) return 0; /* a user operator (--ops) */
        if (ir_custom_has_domain(on->domain))
            return imp_node_error(im, n, "op '%s' of domain '%s' is not declared by the --ops files", on->op_type,
                                  on->domain);
        return imp_node_error(im, n, "domain '%s' is not supported (only the default ONNX domain; user operators "
                                     "need --ops FILE.c)", on->domain);
    }
    if (!im->opset) return imp_node_error(im, n, "the model does not import the default ONNX domain");
    return 0;
}

/* Why graphc cannot import node `on` of the main graph (its domain, or an
 * op type it has no description of), written into buf; NULL when it can.
 * Control-flow bodies are checked when they are unrolled. */
static const char *unsupported_op(const OnnxImp *im, const OnnxNode *on, char *buf, size_t cap)
{
    const char *t = on->op_type;
    if (!strcmp(on->domain, ONNX_TRAINING_DOMAIN)) {
        if (is_training_op(t) && im->training) return NULL;
        snprintf(buf, cap, "unsupported op '%s' (domain '%s': graphc implements only Adagrad, Adam and Momentum%s)", t,
                 on->domain, im->training ? "" : ", and the model does not import the domain");
        return buf;
    }
    if (on->domain[0] && strcmp(on->domain, "ai.onnx") != 0) {
        if (ir_custom_lookup_domain(on->domain, t) >= 0) return NULL; /* a user operator (--ops) */
        if (ir_custom_has_domain(on->domain))
            snprintf(buf, cap, "unsupported op '%s': the --ops files declare no op '%s' of domain '%s'", t, t, on->domain);
        else
            snprintf(buf, cap, "unsupported op '%s' (domain '%s' is not supported: only the default ONNX domain; user "
                               "operators need --ops FILE.c)", t, on->domain);
        return buf;
    }
    if (!strcmp(t, "Constant") || !strcmp(t, "Scan") || !strcmp(t, "Loop") || !strcmp(t, "If") ||
        ir_op_lookup(t) >= 0 || onnx_upgrade_renames(t, im->opset))
        return NULL;
    snprintf(buf, cap, "unsupported op '%s' (domain ai.onnx, opset %d)", t, im->opset);
    return buf;
}

/* Reports every node of the main graph whose op graphc cannot import, one
 * line each ("node 'NAME' (Op): unsupported op ..."; lines after the
 * first repeat the file name), so that a user sees the whole list at once.
 * 0 when there is none. */
static int check_ops(OnnxImp *im, const OnnxGraph *og, const ImpNode *nodes)
{
    Writer w;
    w_init(&w);
    int n_bad = 0, n_listed = 0;
    const char *file = im->d ? im->d->file : NULL;
    for (int i = 0; i < og->n_nodes; i++) {
        char why[600];
        if (!unsupported_op(im, &og->nodes[i], why, sizeof why)) continue;
        n_bad++;
        if (w.len > 1500) continue; /* Diag holds 2 KB: the rest is counted */
        if (n_listed++) w_printf(&w, "\n%s%s", file ? file : "", file ? ": " : "");
        w_printf(&w, "node '%s' (%s): %s", nodes[i].name, nodes[i].op_type, why);
    }
    if (n_bad > n_listed)
        w_printf(&w, "\n%s%sand %d more unsupported node%s", file ? file : "", file ? ": " : "", n_bad - n_listed,
                 n_bad - n_listed == 1 ? "" : "s");
    int rc = n_bad ? diag_error(im->d, "%s", w.buf) : 0;
    w_free(&w);
    return rc;
}

static int import_graph(OnnxImp *im, const OnnxModel *m, const LoadOptions *o)
{
    const OnnxGraph *og = &m->graph;
    Graph *g = im->g;
    im->opts = o;
    if (og->name[0]) g->name = ir_strdup(g, og->name);
    for (int i = 0; i < og->n_inits; i++) {
        const OnnxTensor *t = &og->inits[i];
        TensorData td;
        if (!t->name[0]) return diag_error(im->d, "initializer %d has no name", i);
        if (ir_find_value(g, t->name)) return diag_error(im->d, "initializer '%s' is defined twice", t->name);
        if (imp_tensor(im, t, &td)) return -1;
        ir_add_const(g, t->name, td.dtype, &td.shape, td.data, 0);
    }
    char *used = arena_alloc(&im->tmp, (size_t)(o ? o->n_shapes : 0) + 1);
    for (int i = 0; i < og->n_inputs; i++) {
        const OnnxValueInfo *vi = &og->inputs[i];
        Value *v = ir_find_value(g, vi->name);
        if (v && v->kind == VK_CONST) continue; /* an initializer: a constant */
        if (add_input(im, vi, o, used)) return -1;
    }
    for (int i = 0; o && i < o->n_shapes; i++)
        if (!used[i]) {
            char names[512] = "";
            for (int k = 0; k < g->n_inputs; k++) {
                strncat(names, k ? ", " : "", sizeof names - strlen(names) - 1);
                strncat(names, g->inputs[k]->name, sizeof names - strlen(names) - 1);
            }
            return diag_error(im->d, "--shape names '%s', which is not a graph input (inputs: %s)", o->shapes[i].name,
                              g->n_inputs ? names : "none");
        }

    ImpNode *nodes = arena_alloc(&im->tmp, sizeof(ImpNode) * (size_t)(og->n_nodes + 1));
    for (int i = 0; i < og->n_nodes; i++) {
        const OnnxNode *on = &og->nodes[i];
        if (imp_from_onnx(im, on, i, &nodes[i])) return -1;
    }
    if (check_ops(im, og, nodes)) return -1;
    for (int i = 0; i < og->n_nodes; i++)
        if (check_node_domain(im, &og->nodes[i], &nodes[i])) return -1;
    if (reserve_outputs(im, nodes, og->n_nodes)) return -1;
    Built *built = arena_alloc(&im->tmp, sizeof(Built) * (size_t)(og->n_nodes + 1));
    int n_built = 0, cap_built = og->n_nodes + 1;
    for (int i = 0; i < og->n_nodes; i++) {
        im->n_pend = 0;
        /* training-domain ops have one form: no default-domain upgrade applies */
        int opset = strcmp(og->nodes[i].domain, ONNX_TRAINING_DOMAIN) ? im->opset : ONNX_MAX_OPSET;
        int unrolled = onnx_control_node(im, &nodes[i], opset); /* Scan/Loop/If → pending nodes */
        if (unrolled < 0 || (!unrolled && onnx_upgrade_node(im, &nodes[i], opset))) return -1;
        for (int k = unrolled ? 0 : -1; k < im->n_pend; k++) {
            ImpNode *n = k < 0 ? &nodes[i] : im->pend[k];
            Node *node;
            if (build_node(im, n, &node)) return -1;
            if (!node) continue;
            if (n_built == cap_built) {
                cap_built *= 2;
                Built *nb = arena_alloc(&im->tmp, sizeof(Built) * (size_t)cap_built);
                memcpy(nb, built, sizeof(Built) * (size_t)n_built);
                built = nb;
            }
            built[n_built++] = (Built){node, n};
        }
    }
    for (int k = 0; k < n_built; k++) {
        Node *node = built[k].node;
        const ImpNode *n = built[k].imp;
        for (int i = 0; i < n->n_in; i++) {
            if (!n->in[i][0]) continue;
            Value *v = ir_find_value(g, n->in[i]);
            if (!v) return diag_node_error(im->d, node, "input '%s' is not defined (no graph input, initializer or node output has that name)", n->in[i]);
            node->in[i] = v;
        }
    }
    for (int i = 0; i < og->n_outputs; i++) {
        Value *v = ir_find_value(g, og->outputs[i].name);
        if (!v) return diag_error(im->d, "graph output '%s' is not defined by any node, input or initializer", og->outputs[i].name);
        ir_add_output(g, v);
    }
    if (og->n_outputs == 0) return diag_error(im->d, "the graph has no outputs");
    return g->n_nodes ? ir_toposort(g, im->d) : 0; /* (ir_toposort memcpy's into a NULL array when empty) */
}

/* Decodes the model image map (size bytes), which g owns already. */
static Graph *load_image(Graph *g, const void *map, size_t size, const char *dir, const LoadOptions *opts, Diag *d)
{
    OnnxImp im;
    memset(&im, 0, sizeof im);
    im.d = d;
    im.g = g;
    im.pc.base = map;
    im.pc.size = size;
    im.pc.arena = &im.tmp;
    im.dir = dir ? arena_strdup(&im.tmp, dir) : NULL;

    OnnxModel m;
    int rc = onnx_pb_model(&im.pc, map, size, &m) ? pb_fail(&im) : 0;
    if (!rc && m.ir_version == 0) rc = diag_error(d, "not an ONNX model (ModelProto has no ir_version)");
    if (!rc && !m.has_graph) rc = diag_error(d, "not an ONNX model (ModelProto has no graph)");
    if (!rc) rc = check_opset(&im, &m);
    if (!rc) rc = import_graph(&im, &m, opts);
    arena_free(&im.tmp);
    if (rc) {
        ir_graph_free(im.g);
        return NULL;
    }
    return im.g;
}

Graph *onnx_load(const char *path, const LoadOptions *opts, Diag *d)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        diag_error(d, "cannot read file: %s", strerror(e));
        return NULL;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        diag_error(d, "%s (not an ONNX model)", S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED) {
        diag_error(d, "cannot map file: %s", strerror(e));
        return NULL;
    }
    Graph *g = ir_graph_new("model");
    ir_graph_own(g, map, size, release_map);
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    GC_ASSERT(dir);
    g = load_image(g, map, size, dir, opts, d);
    free(dir);
    return g;
}

static void release_copy(void *p, size_t n) { free(p); }

Graph *onnx_load_image(const void *buf, size_t size, const char *dir, const LoadOptions *opts, Diag *d)
{
    if (size == 0) {
        diag_error(d, "empty file (not an ONNX model)");
        return NULL;
    }
    void *copy = malloc(size);
    GC_ASSERT(copy);
    memcpy(copy, buf, size);
    Graph *g = ir_graph_new("model");
    ir_graph_own(g, copy, size, release_copy);
    return load_image(g, copy, size, dir, opts, d);
}
