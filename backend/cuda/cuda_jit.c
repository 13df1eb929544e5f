/* cuda_jit.c — the parts of the CUDA backend's output that launch kernels
 * through the driver API: --cuda-jit (the kernels compiled by NVRTC at
 * NAME_init) and the CPU emulation (which records launches into CUDA
 * graphs).
 *
 * The emitters write each kernel as `GC_KERNEL k<N>(PARAMS)\n{` into
 * Cu.kern and launch it with GC_LAUNCH(k<N>, n, stream, (ARGS)). Under
 * nvcc that is <<<>>>, which needs no more. cuLaunchKernel instead takes
 * the addresses of the parameters, typed as the kernel declares them, so
 * this file reads each kernel's parameter list back from Cu.kern (the one
 * place it is written, so launcher and kernel cannot disagree) and writes
 * per kernel:
 *   gc_launch_k<N>(fn, n, stream, PARAMS)  the launcher GC_LAUNCH calls:
 *        its parameters' addresses into cuLaunchKernel (gc_kernel_launch);
 *   gc_thunk_k<N>(void **a)  (emulation) calls k<N> with *a[i], and a row
 *        of NAME_emu_kernels (name, thunk, parameter sizes), which the
 *        emulated cuLaunchKernel runs or records.
 * With --cuda-jit the kernels' text becomes NAME_kernels.cu and, as string
 * chunks, NAME_kernels_src in the host code, with gc_cuda_kernel.h's text as
 * NAME_kernels_hdr (NVRTC gets it as that header).
 */
#include "cuda_emit.h"
#include "cuda_jit.h"

#include <stdlib.h>
#include <string.h>

#define KERNEL_MAX_PARAMS 32 /* gc_cuda_emu.h's GC_EMU_MAX_PARAMS */

/* One kernel parameter: its type and its name, as the kernel declares them. */
typedef struct KParam {
    char type[128], name[64];
} KParam;

static int is_ident_char(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* The parameters of the list text p[0..n) ("const float *x, float *y")
 * into ps; their number. */
static int split_params(const char *p, size_t n, KParam *ps)
{
    int np = 0;
    for (size_t at = 0; at <= n; np++) {
        const char *comma = memchr(p + at, ',', n - at);
        size_t end = comma ? (size_t)(comma - p) : n, e = end, b, tb = at;
        while (e > at && (p[e - 1] == ' ' || p[e - 1] == '\n')) e--;
        for (b = e; b > at && is_ident_char(p[b - 1]);) b--;
        size_t te = b;
        while (te > tb && (p[te - 1] == ' ' || p[te - 1] == '\n')) te--;
        while (tb < te && (p[tb] == ' ' || p[tb] == '\n')) tb++;
        GC_ASSERT(np < KERNEL_MAX_PARAMS && e > b && e - b < sizeof ps->name && te > tb && te - tb < sizeof ps->type);
        memcpy(ps[np].name, p + b, e - b);
        ps[np].name[e - b] = 0;
        memcpy(ps[np].type, p + tb, te - tb);
        ps[np].type[te - tb] = 0;
        at = end + 1;
    }
    return np;
}

/* The next kernel definition in kern from *pos: its name (nm, nn chars)
 * and parameters, or 0 when there is none. */
static int next_kernel(const char *kern, size_t *pos, const char **nm, size_t *nn, KParam *ps, int *np)
{
    static const char tag[] = "GC_KERNEL ";
    for (const char *s = kern + *pos; (s = strstr(s, tag)) != NULL; s++) {
        if (s != kern && s[-1] != '\n') continue;
        const char *name = s + sizeof tag - 1, *open = strchr(name, '(');
        const char *close = open ? strchr(open, ')') : NULL;
        GC_ASSERT(open && close); /* parameter lists hold no parentheses */
        *nm = name, *nn = (size_t)(open - name);
        *np = split_params(open + 1, (size_t)(close - open - 1), ps);
        *pos = (size_t)(close - kern);
        return 1;
    }
    return 0;
}

int cu_jit_count(const Cu *c)
{
    const char *kern = cu_wtext(&c->kern), *nm;
    size_t pos = 0, nn;
    KParam ps[KERNEL_MAX_PARAMS];
    int k = 0, np;
    while (next_kernel(kern, &pos, &nm, &nn, ps, &np)) k++;
    return k;
}

/* What separates p's type from what follows (its name, or the '*' of a
 * pointer to it): nothing after a '*', else a space. */
static const char *type_sep(const KParam *p) { return p->type[strlen(p->type) - 1] == '*' ? "" : " "; }

void cu_jit_launchers(const Cu *c, Writer *w)
{
    const char *kern = cu_wtext(&c->kern), *nm;
    size_t pos = 0, nn;
    KParam ps[KERNEL_MAX_PARAMS];
    int np;
    w_puts(w, "/* The launchers GC_LAUNCH calls: the kernel's parameters, by address, to cuLaunchKernel. */\n");
    for (int k = 0; next_kernel(kern, &pos, &nm, &nn, ps, &np); k++) {
        w_printf(w, "static int gc_launch_%.*s(const CUfunction *gc_fn, int64_t gc_n, cudaStream_t gc_s", (int)nn, nm);
        for (int i = 0; i < np; i++) w_printf(w, ", %s%s%s", ps[i].type, type_sep(&ps[i]), ps[i].name);
        w_puts(w, ")\n{\n    void *gc_a[] = {");
        for (int i = 0; i < np; i++) w_printf(w, "%s(void *)&%s", i ? ", " : "", ps[i].name);
        w_printf(w, "};\n    return gc_kernel_launch(gc_fn[%d], gc_n, gc_s, gc_a);\n}\n\n", k);
    }
    /* the emulation's thunks and table */
    w_puts(w, "#ifdef GC_CUDA_EMULATE\n");
    pos = 0;
    while (next_kernel(kern, &pos, &nm, &nn, ps, &np)) {
        w_printf(w, "static void gc_thunk_%.*s(void **gc_a)\n{\n    %.*s(", (int)nn, nm, (int)nn, nm);
        for (int i = 0; i < np; i++) w_printf(w, "%s*(%s%s*)gc_a[%d]", i ? ", " : "", ps[i].type, type_sep(&ps[i]), i);
        w_puts(w, ");\n}\n\n");
    }
    const int nk = cu_jit_count(c);
    w_printf(w, "static const gc_emu_kernel %s_emu_kernels[%d] = {\n", c->name, nk ? nk : 1);
    pos = 0;
    while (next_kernel(kern, &pos, &nm, &nn, ps, &np)) {
        w_printf(w, "    {\"%.*s\", gc_thunk_%.*s, %d, {", (int)nn, nm, (int)nn, nm, np);
        for (int i = 0; i < np; i++) w_printf(w, "%ssizeof(%s)", i ? ", " : "", ps[i].type);
        w_puts(w, "}},\n");
    }
    if (!nk) w_puts(w, "    {NULL, NULL, 0, {0}},\n");
    w_puts(w, "};\n#endif\n\n");
}

/* s as C string literals of at most ~2000 characters each (ISO C's 4095
 * limit, -pedantic), one a line, split after newlines where it can. */
static void string_chunks(Writer *w, const char *s)
{
    int n = 0;
    while (*s) {
        w_puts(w, "    \"");
        size_t len = 0;
        for (; *s && len < 2000; s++, len++) {
            unsigned char ch = (unsigned char)*s;
            if (ch == '\n') w_puts(w, "\\n");
            else if (ch == '\\' || ch == '"' || ch == '?') w_printf(w, "\\%c", ch);
            else if (ch == '\t') w_puts(w, "\\t");
            else if (ch < 32 || ch > 126) w_printf(w, "\\%03o", ch);
            else w_printf(w, "%c", ch);
            if (ch == '\n' && len > 1500) { s++; break; }
        }
        w_puts(w, "\",\n");
        n++;
    }
    if (!n) w_puts(w, "    \"\",\n");
}

void cu_jit_kernels_file(const Cu *c, Writer *w)
{
    w_printf(w, "/* %s_kernels.cu: generated by graphc (--target=cuda --cuda-jit); do not edit.\n", c->name);
    w_printf(w, " * The model's kernels, compiled by NVRTC at %s_init (%s.c embeds this text;\n", c->name, c->name);
    w_puts(w, " * the emulation compiles it into the host code). */\n");
    if (c->half) w_puts(w, "#ifndef GC_CUDA_HALF\n#define GC_CUDA_HALF\n#endif\n");
    w_puts(w, "#include \"gc_cuda_kernel.h\"\n\n");
    w_puts(w, cu_wtext(&c->kern));
}

void cu_jit_embed(const Cu *c, Writer *w, const char *kernels_text, const char *header_text)
{
    const char *N = c->name, *kern = cu_wtext(&c->kern), *nm;
    size_t pos = 0, nn;
    KParam ps[KERNEL_MAX_PARAMS];
    int np;
    const int nk = cu_jit_count(c);
    w_printf(w, "/* %s_kernels.cu and gc_cuda_kernel.h, as string chunks (joined at %s_init). */\n", N, N);
    w_printf(w, "static const char *const %s_kernels_src[] = {\n", N);
    string_chunks(w, kernels_text);
    w_printf(w, "};\nstatic const char *const %s_kernels_hdr[] = {\n", N);
    string_chunks(w, header_text);
    w_puts(w, "};\n");
    w_printf(w, "static const char *const %s_kernel_names[%d] = {", N, nk ? nk : 1);
    for (int k = 0; next_kernel(kern, &pos, &nm, &nn, ps, &np); k++) w_printf(w, "%s\"%.*s\"", k ? ", " : "", (int)nn, nm);
    if (!nk) w_puts(w, "\"\"");
    w_puts(w, "};\n\n");
}
