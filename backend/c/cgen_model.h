/* cgen_model.h — the C backend's internals shared by its writers (cgen.c,
 * cgen_files.c, cgen_main.c, emit_table.c); the compiler reaches the C
 * backend only through its Backend description `backend_c` (backend/backend.h).
 *
 * cgen_write() turns a shape-inferred, memory-planned graph into a folder of
 * C sources (NAME.h, NAME.c, weights, the runtime units it calls, a Makefile,
 * NAME.pc, NAME.cmake and optionally NAME_main.c). The folder appears complete or not at all:
 * everything is written into a temporary sibling folder that replaces DIR at
 * the end.
 */
#ifndef GRAPHC_CGEN_MODEL_H
#define GRAPHC_CGEN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"
#include "cgen.h"

/* Writes the output folder `dir` for g (shape-inferred and memory-planned:
 * values carry ->offset, nodes ->ws_offset/ws_bytes, g->arena_bytes is set);
 * o->name passed cgen_check_name. Returns 0, or -1 with a diagnostic
 * (nothing is left behind on failure). */
int cgen_write(const Graph *g, const char *dir, const BackendOptions *o, Diag *d);
/* 0 when name can name a model (C identifier of at most 40 characters whose
 * files do not overwrite a runtime file), else -1 with the reason. */
int cgen_check_name(const char *name, Diag *d);
/* 0 when the C backend has an emitter for n's op, else -1 naming it. */
int cgen_supports(const Graph *g, const Node *n, Diag *d);

/* The runtime sources embedded into the compiler at build time
 * (tools/embed.cmake generates the definitions). `data` has a trailing NUL
 * that `size` does not count. */
typedef struct GcEmbeddedFile {
    const char *name; /* file name without folder, e.g. "gcrt_base.h" */
    const unsigned char *data;
    size_t size;
} GcEmbeddedFile;

extern const GcEmbeddedFile gc_runtime_files[];
extern const size_t gc_runtime_files_count;

/* ---- backend internals (emit_table.c) ---------------------------------- */

/* Fills table[ir_op_count()] from the family registration arrays; a duplicate
 * registration is a broken invariant (GC_ASSERT). */
void cgen_build_table(CgenEntry *table);
/* The entry of op k (emit NULL when the C backend has none). */
CgenEntry cgen_entry(int k);

/* ---- backend internals shared by cgen.c, cgen_files.c, cgen_main.c ----- */

/* One graph input or output as the generated API sees it. */
typedef struct CgenPort {
    const Value *v;
    const char *param; /* C parameter name in NAME_run, unique, sanitized */
} CgenPort;

/* The most depthwise geometries GCRT_DW_VARIANTS lists (CgenModel.dw). */
#define CGEN_MAX_DW 8

/* What the file writers need to know about the compiled model. */
typedef struct CgenModel {
    const Graph *g;
    const BackendOptions *o;
    const char *name;  /* sanitized C prefix and file stem */
    CgenPort *ins, *outs;
    int n_consts;      /* constants in the weights blob, in value-id order */
    const Value **consts;
    int64_t *const_off; /* 64-aligned offset of consts[i] in the blob */
    int64_t weights_bytes;
    /* --weights=file: the FNV-1a state after the model's identity (its
     * ports and the blob's layout), and that state continued over the
     * blob's bytes: the model hash of NAME.weights (cgen_weights_hash). */
    uint64_t weights_seed, weights_hash;
    unsigned runtime;  /* CGEN_RT_* units NAME.c includes (closed over their dependencies) */
    /* bit K: the model calls a user operator of --ops file K, copied as
     * NAME_ops_K.c and included by NAME.c (with graphc/custom_op.h) */
    uint32_t ops_files;
    /* The distinct (KH, KW, column dilation, column stride) of the model's depthwise-kernel calls,
     * for NAME.c's GCRT_DW_VARIANTS (runtime/cpu/gcrt_dwconv.h); n_dw > CGEN_MAX_DW: too many to
     * list, the runtime keeps all its specializations. */
    int n_dw;
    int64_t dw[CGEN_MAX_DW][4];
    /* Training (o->infer_graph set): the state region, the training graph's
     * state values in value-id order at 64-aligned offsets. */
    int n_state;
    const Value **state;
    int64_t *state_off;
    int64_t state_bytes;
} CgenModel;

/* Training: the state-region offset of the state value named like v (v of
 * the training or the inference graph), or -1. */
int64_t cgen_state_offset(const CgenModel *m, const Value *v);
/* The weights-blob offset of constant (or state initial value) v. */
int64_t cgen_const_offset(const CgenModel *m, const Value *v);

/* cgen.c: C-literal helpers. */
/* Appends s as the body of a C string literal (escapes quotes, backslashes,
 * '?' and non-printable bytes). */
void cgen_str_lit(Writer *w, const char *s);
/* numpy descr of a dtype ("<f4", "|b1"; bf16 as raw bits "<u2"). */
const char *cgen_npy_descr(DType t);

/* The NAME.weights file of --weights=file: a header of
 * CGEN_WEIGHTS_HEADER_BYTES (magic, format version, header bytes, blob
 * bytes, model hash, model name; cgen_files.c draws it), then the blob.
 * The header's size keeps the blob 64-byte aligned in a 64-byte-aligned
 * buffer. The model hash is 64-bit FNV-1a. */
#define CGEN_WEIGHTS_MAGIC "GCWEIGHT"
#define CGEN_WEIGHTS_FORMAT 1
#define CGEN_WEIGHTS_HEADER_BYTES 64
#define CGEN_FNV_BASIS 0xcbf29ce484222325ull
#define CGEN_FNV_PRIME 0x100000001b3ull
/* 64-bit FNV-1a of n bytes, continuing state h (CGEN_FNV_BASIS to start). */
uint64_t cgen_fnv1a(uint64_t h, const void *data, size_t n);
/* Sets m->weights_seed and m->weights_hash (m's weights laid out). */
void cgen_weights_hash(CgenModel *m);

/* cgen_files.c: the output folder. */
/* Creates an empty temporary sibling folder of dir; returns its malloc'd path. */
char *cgen_dir_begin(const char *dir, Diag *d);
/* Replaces dir by tmp (dir may exist if it is empty or a previous graphc
 * output, whose files graphc did not write move into the new folder; name
 * is the new model's); on failure tmp is removed and dir is unchanged. */
int cgen_dir_commit(const char *tmp, const char *dir, const char *name, Diag *d);
/* Removes a folder tree (best effort). */
void cgen_rmtree(const char *path);
/* Writes text to DIR/NAME. */
int cgen_save(const Writer *w, const char *dir, const char *file, Diag *d);
/* --weights=c-array: the part files NAME_weights_<k>.inc that NAME_weights.c
 * includes (k < this number). */
int cgen_weights_parts(const CgenModel *m);
/* Writes the weights files for m->o->weights into dir. */
int cgen_write_weights(const CgenModel *m, const char *dir, Diag *d);
/* Copies gcrt_base.h and the files of the runtime units m->runtime into dir. */
int cgen_write_runtime(const CgenModel *m, const char *dir, Diag *d);
/* The name of runtime unit u (CGEN_RT_BIT_*): "nn" for gcrt_nn.{h,c}. */
const char *cgen_runtime_unit_name(int u);
/* units with every unit they depend on, transitively. */
unsigned cgen_runtime_closure(unsigned units);
void cgen_write_makefile(const CgenModel *m, Writer *w);
/* The "Building:" paragraph of NAME.h's opening comment (sources, -I, link line). */
void cgen_write_build_note(const CgenModel *m, Writer *w);
/* NAME.pc: pkg-config flags for the libNAME.a the Makefile builds. */
void cgen_write_pkgconfig(const CgenModel *m, Writer *w);
/* NAME.cmake: a CMake snippet defining the static library target NAME. */
void cgen_write_cmake(const CgenModel *m, Writer *w);

/* cgen_main.c: NAME_main.c (npy in, npy out). */
void cgen_write_main(const CgenModel *m, Writer *w);

/* ---- runtime shapes (cgen_shapes.c) ------------------------------------ */

/* NAME.c: the table of maxima NAME_run_v runs at, and NAME_run_shapes. */
void cgen_write_max_dims(const Graph *g, const char *N, Writer *w);
void cgen_write_run_shapes(const CgenModel *m, Writer *w);
/* NAME.h: the runtime dims with their names and bounds. */
void cgen_write_dims_defs(const Graph *g, const char *N, Writer *w);
/* `    dim[k] = EXPR;` for every derived dim of g, in table order. */
void cgen_write_derived_dims(const Graph *g, Writer *w);
/* The statements, shared by the C and CUDA backends' NAME_run_shapes,
 * that fill the shape table dim[] from the actual input shapes in_dims
 * (return NAME_ERR_SHAPE on a wrong fixed dim, a runtime dim out of bounds
 * or differing between inputs; data-dependent dims at their bounds;
 * derived dims evaluated), and that report each output's actual shape
 * into out_dims[i] (when not NULL; out_dims itself not NULL). */
void cgen_write_bind_dims(const Graph *g, const char *N, Writer *w);
/* A schedule's shape table: `int64_t dim[n]` from its argument dims, each
 * extent clamped to its bounds (the compiler then knows every loop's
 * range, and a wrong caller cannot overflow a buffer). */
void cgen_write_shape_table(const Graph *g, Writer *w);
void cgen_write_out_dims(const Graph *g, Writer *w);
/* From cgen.c: the weights prologue of an API function (declares `blob`). */
void cgen_blob_prologue(const CgenModel *m, Writer *w);

#endif
