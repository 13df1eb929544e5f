/* cli.h — what the graphc driver's subcommands share (tools/graphc.c
 * defines these; tools/verify.c is one more subcommand).
 *
 * Every failure prints "graphc: error: MSG" on stderr (one such line per
 * line of MSG) and makes the command exit with status 1.
 */
#ifndef GRAPHC_TOOLS_CLI_H
#define GRAPHC_TOOLS_CLI_H

#include <stddef.h>

#include "frontend/load.h"
#include "frontend/npy.h"
#include "ir/ir.h"

/* Prints the error and returns 1 (the exit status). */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fail() with a diagnostic's message. */
int fail_diag(const Diag *d);
/* Matches option `name` at argv[*i] as "NAME=VALUE" or "NAME VALUE" (the
 * latter consumes the next argument): 1 with *val set (NULL when the value
 * is missing), 0 when argv[*i] is another argument. */
int opt_value(int argc, char **argv, int *i, const char *name, const char **val);
/* "--help" or "-h". */
int is_help(const char *a);
/* The C name derived from a model file's stem ("nets/resnet-18.gir" ->
 * "resnet_18") into out; NULL, or why there is none. */
const char *stem_name(const char *path, char *out, size_t cap);
/* The loading options of HELP_LOAD at argv[*i] (--shape, --bind, --no-fold,
 * --max-tensor-bytes): 1 consumed, 0 not one, -1 error (printed). store
 * holds the parsed --shape values (argc + 1 entries). */
int shape_opt(int argc, char **argv, int *i, const char *cmd, LoadOptions *o, InputShape *store);
void free_shapes(LoadOptions *o, InputShape *store);
/* Parses "NAME=d0,d1,..." (--shape) into *out (out->name malloc'ed); NULL, or
 * why the text is malformed. */
const char *parse_shape_opt(const char *text, InputShape *out);
/* A positive number (--eps, --atol, ...) into *out; NULL, or why not. */
const char *parse_pos(const char *v, double *out);
/* An -O option at a: 1 (*level set to 0 or 2), 0 not one, -1 error (printed). */
int opt_level_opt(const char *a, const char *cmd, int *level);
/* "expected c" (or "expected c or cuda"): the backends' names, for errors. */
const char *target_names(char *buf, size_t cap);
/* Reads the .npy file of every graph input of g (files[i] for input i),
 * each with exactly the input's dtype and shape, into arrs (ptrs[i]: the
 * data). 0, or 1 with the error printed (the caller frees arrs). */
int read_inputs(const char *model, const Graph *g, const char *const *files, int n, NpyArray *arrs,
                const void **ptrs);

/* Help text of the options above. */
#define HELP_OPT_LEVEL                                                                        \
    "  -O0, -O2             optimization level (default -O2): -O0 runs only the passes\n"     \
    "                       correctness needs (infer-shapes, fold-constants,\n"               \
    "                       plan-memory, the latter without in-place reuse); -O2 also\n"      \
    "                       simplifies, folds batch norms, fuses layer norms,\n"              \
    "                       elementwise chains and Conv/Gemm/MatMul epilogues\n"
/* The loading options every subcommand takes (api_load). */
#define HELP_LOAD                                                                             \
    "  --shape NAME=D0,D1,...  the shape of graph input NAME, for dims the model\n"           \
    "                       leaves symbolic (ONNX dim_param); may be repeated\n"              \
    "  --max-shape NAME=D0,D1,...  runtime shapes: the model is compiled once for\n"        \
    "                       every size of NAME's symbolic dims from 1 up to the\n"          \
    "                       given bound (fixed dims must match the model's); the\n"         \
    "                       arena is planned at the maximum; may be repeated\n"             \
    "  --max-dim=N          the bound of a data-dependent dim that nothing in the\n"       \
    "                       model bounds (a Range's length, a Resize output size\n"        \
    "                       from runtime scales); without it such a dim is an error\n"     \
    "  --no-fold            fold nothing at compile time: nodes with constant\n"              \
    "                       inputs stay nodes (shape operands must be constants)\n"           \
    "  --bind NAME=FILE.npy  specialize the model: graph input NAME becomes a\n"              \
    "                       constant with FILE's value (dtype and shape must match);\n"       \
    "                       it is no longer an input of the model; may be repeated\n"         \
    "  --ops FILE.c         user operators: the GRAPHC_OP / GRAPHC_GRAD annotated\n"          \
    "                       functions of FILE.c (graphc/custom_op.h) become ops of\n"         \
    "                       their domain (elementwise and general forms); may be\n"    \
    "                       repeated\n"           \
    "  --max-tensor-bytes=N  the size policy: refuse a model in which one tensor\n"           \
    "                       (input, constant, folded value, intermediate, output)\n"          \
    "                       or the memory arena would take more than N bytes\n"               \
    "                       (default 16G; N is a byte count, optionally with a\n"             \
    "                       suffix K, M, G or T for powers of 1024)\n"

/* graphc verify (tools/verify.c). */
int cmd_verify(int argc, char **argv);
/* graphc check-op (tools/check_op.c). */
int cmd_check_op(int argc, char **argv);

#endif
