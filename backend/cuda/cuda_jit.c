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

/* A parameter's type: its text before the trailing identifier, trimmed. */
static void param_type(const char *p, size_t n, char *buf, size_t cap)
{
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\n')) n--;
    while (n && (p[n - 1] == '_' || (p[n - 1] >= '0' && p[n - 1] <= '9') || (p[n - 1] >= 'a' && p[n - 1] <= 'z') ||
                 (p[n - 1] >= 'A' && p[n - 1] <= 'Z')))
        n--;
    while (n && (*p == ' ' || *p == '\n')) p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\n')) n--;
    GC_ASSERT(n > 0 && n < cap);
    memcpy(buf, p, n);
    buf[n] = 0;
}

/* The next kernel definition in kern from *pos: its name and the text of
 * its parameter list (pointers into kern), or 0 when there is none. */
static int next_kernel(const char *kern, size_t *pos, const char **name, size_t *name_n, const char **params,
                       size_t *params_n)
{
    static const char tag[] = "GC_KERNEL ";
    for (const char *s = kern + *pos; (s = strstr(s, tag)) != NULL; s++) {
        if (s != kern && s[-1] != '\n') continue;
        const char *nm = s + sizeof tag - 1, *open = strchr(nm, '(');
        const char *close = open ? strchr(open, ')') : NULL;
        GC_ASSERT(open && close);
        *name = nm, *name_n = (size_t)(open - nm);
        *params = open + 1, *params_n = (size_t)(close - open - 1);
        *pos = (size_t)(close - kern);
        return 1;
    }
    return 0;
}

int cu_jit_count(const Cu *c)
{
    const char *kern = cu_wtext(&c->kern), *nm, *pp;
    size_t pos = 0, nn, pn;
    int k = 0;
    while (next_kernel(kern, &pos, &nm, &nn, &pp, &pn)) k++;
    return k;
}

void cu_jit_launchers(const Cu *c, Writer *w)
{
    const char *kern = cu_wtext(&c->kern), *nm, *pp;
    size_t pos = 0, nn, pn;
    char ty[128];
    w_puts(w, "/* The launchers GC_LAUNCH calls: the kernel's parameters, by address, to cuLaunchKernel. */\n");
    for (int k = 0; next_kernel(kern, &pos, &nm, &nn, &pp, &pn); k++) {
        w_printf(w, "static int gc_launch_%.*s(const CUfunction *gc_fn, int64_t gc_n, cudaStream_t gc_s, %.*s)\n{\n",
                 (int)nn, nm, (int)pn, pp);
        w_puts(w, "    void *gc_a[] = {");
        size_t at = 0;
        for (int i = 0; at <= pn; i++) {
            const char *comma = memchr(pp + at, ',', pn - at);
            size_t end = comma ? (size_t)(comma - pp) : pn, e = end;
            while (e > at && (pp[e - 1] == ' ' || pp[e - 1] == '\n')) e--;
            size_t b = e;
            while (b > at && (pp[b - 1] == '_' || (pp[b - 1] >= '0' && pp[b - 1] <= '9') ||
                              (pp[b - 1] >= 'a' && pp[b - 1] <= 'z') || (pp[b - 1] >= 'A' && pp[b - 1] <= 'Z')))
                b--;
            w_printf(w, "%s(void *)&%.*s", i ? ", " : "", (int)(e - b), pp + b);
            at = end + 1;
        }
        w_printf(w, "};\n    return gc_kernel_launch(gc_fn[%d], gc_n, gc_s, gc_a);\n}\n\n", k);
    }
    /* the emulation's thunks and table */
    w_puts(w, "#ifdef GC_CUDA_EMULATE\n");
    pos = 0;
    while (next_kernel(kern, &pos, &nm, &nn, &pp, &pn)) {
        w_printf(w, "static void gc_thunk_%.*s(void **gc_a)\n{\n    %.*s(", (int)nn, nm, (int)nn, nm);
        size_t at = 0;
        for (int i = 0; at <= pn; i++) {
            const char *comma = memchr(pp + at, ',', pn - at);
            size_t end = comma ? (size_t)(comma - pp) : pn;
            param_type(pp + at, end - at, ty, sizeof ty);
            w_printf(w, "%s*(%s%s*)gc_a[%d]", i ? ", " : "", ty, ty[strlen(ty) - 1] == '*' ? "" : " ", i);
            at = end + 1;
        }
        w_puts(w, ");\n}\n\n");
    }
    const int nk = cu_jit_count(c);
    w_printf(w, "static const gc_emu_kernel %s_emu_kernels[%d] = {\n", c->name, nk ? nk : 1);
    pos = 0;
    while (next_kernel(kern, &pos, &nm, &nn, &pp, &pn)) {
        w_printf(w, "    {\"%.*s\", gc_thunk_%.*s, ", (int)nn, nm, (int)nn, nm);
        Writer sz;
        w_init(&sz);
        size_t at = 0;
        int np = 0;
        for (; at <= pn; np++) {
            const char *comma = memchr(pp + at, ',', pn - at);
            size_t end = comma ? (size_t)(comma - pp) : pn;
            param_type(pp + at, end - at, ty, sizeof ty);
            w_printf(&sz, "%ssizeof(%s)", np ? ", " : "", ty);
            at = end + 1;
        }
        GC_ASSERT(np <= 32); /* GC_EMU_MAX_PARAMS */
        w_printf(w, "%d, {%s}},\n", np, cu_wtext(&sz));
        w_free(&sz);
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
    const char *N = c->name, *kern = cu_wtext(&c->kern), *nm, *pp;
    size_t pos = 0, nn, pn;
    const int nk = cu_jit_count(c);
    w_printf(w, "/* %s_kernels.cu and gc_cuda_kernel.h, as string chunks (joined at %s_init). */\n", N, N);
    w_printf(w, "static const char *const %s_kernels_src[] = {\n", N);
    string_chunks(w, kernels_text);
    w_printf(w, "};\nstatic const char *const %s_kernels_hdr[] = {\n", N);
    string_chunks(w, header_text);
    w_puts(w, "};\n");
    w_printf(w, "static const char *const %s_kernel_names[%d] = {", N, nk ? nk : 1);
    for (int k = 0; next_kernel(kern, &pos, &nm, &nn, &pp, &pn); k++) w_printf(w, "%s\"%.*s\"", k ? ", " : "", (int)nn, nm);
    if (!nk) w_puts(w, "\"\"");
    w_puts(w, "};\n\n");
}
