/* backend.h — the C backend's entry point for the driver.
 *
 * cgen_write() turns a shape-inferred, memory-planned graph into a folder of
 * C sources (NAME.h, NAME.c, weights, the runtime, a Makefile and optionally
 * NAME_main.c). The folder appears complete or not at all: everything is
 * written into a temporary sibling folder that replaces DIR at the end.
 */
#ifndef GRAPHC_BACKEND_C_H
#define GRAPHC_BACKEND_C_H

#include <stddef.h>
#include <stdint.h>

#include "cgen.h"

typedef struct CgenOptions {
    const char *name; /* C prefix and file names; NULL: the graph's name (sanitized) */
    int emit_main;    /* also write NAME_main.c (npy in, npy out) */
    int weights;      /* 0 incbin, 1 c-array, 2 file */
    int use_blas_default; /* Makefile default: 0 BLAS ?= auto, 1 BLAS ?= 1, -1 BLAS ?= 0 */
} CgenOptions;

enum { CGEN_WEIGHTS_INCBIN = 0, CGEN_WEIGHTS_CARRAY = 1, CGEN_WEIGHTS_FILE = 2 };

/* Writes the output folder `dir` for g (shape-inferred and memory-planned:
 * values carry ->offset, nodes ->ws_offset/ws_bytes, g->arena_bytes is set).
 * Returns 0, or -1 with a diagnostic (nothing is left behind on failure). */
int cgen_write(const Graph *g, const char *dir, const CgenOptions *o, Diag *d);

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

/* Fills table[OP_COUNT] from the family registration arrays; a duplicate
 * registration is a broken invariant (GC_ASSERT). */
void cgen_build_table(CgenEntry *table);
/* Checks that every node of g has an emitter; -1 with a diagnostic naming
 * the first node that has none. */
int cgen_check_emitters(const Graph *g, const CgenEntry *table, Diag *d);

/* ---- backend internals shared by cgen.c, cgen_files.c, cgen_main.c ----- */

/* One graph input or output as the generated API sees it. */
typedef struct CgenPort {
    const Value *v;
    const char *param; /* C parameter name in NAME_run, unique, sanitized */
} CgenPort;

/* What the file writers need to know about the compiled model. */
typedef struct CgenModel {
    const Graph *g;
    const CgenOptions *o;
    const char *name;  /* sanitized C prefix and file stem */
    CgenPort *ins, *outs;
    int n_consts;      /* constants in the weights blob, in value-id order */
    const Value **consts;
    int64_t *const_off; /* 64-aligned offset of consts[i] in the blob */
    int64_t weights_bytes;
    unsigned runtime;  /* CGEN_RT_* units NAME.c includes (closed over their dependencies) */
} CgenModel;

/* cgen.c: C-literal helpers. */
/* Appends s as the body of a C string literal (escapes quotes, backslashes,
 * '?' and non-printable bytes). */
void cgen_str_lit(Writer *w, const char *s);
/* numpy descr of a dtype ("<f4", "|b1"; bf16 as raw bits "<u2"). */
const char *cgen_npy_descr(DType t);

/* cgen_files.c: the output folder. */
/* Creates an empty temporary sibling folder of dir; returns its malloc'd path. */
char *cgen_dir_begin(const char *dir, Diag *d);
/* Replaces dir by tmp (dir may exist if it is empty or a previous graphc
 * output); on failure tmp is removed. */
int cgen_dir_commit(const char *tmp, const char *dir, Diag *d);
/* Removes a folder tree (best effort). */
void cgen_rmtree(const char *path);
/* Writes text to DIR/NAME. */
int cgen_save(const Writer *w, const char *dir, const char *file, Diag *d);
/* Writes the weights files for m->o->weights into dir. */
int cgen_write_weights(const CgenModel *m, const char *dir, Diag *d);
/* Copies gcrt_base.h and the files of the runtime units m->runtime into dir. */
int cgen_write_runtime(const CgenModel *m, const char *dir, Diag *d);
/* The name of runtime unit u (CGEN_RT_BIT_*): "nn" for gcrt_nn.{h,c}. */
const char *cgen_runtime_unit_name(int u);
/* units with every unit they depend on, transitively. */
unsigned cgen_runtime_closure(unsigned units);
void cgen_write_makefile(const CgenModel *m, Writer *w);

/* cgen_main.c: NAME_main.c (npy in, npy out). */
void cgen_write_main(const CgenModel *m, Writer *w);

#endif
