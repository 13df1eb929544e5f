/* gc_cuda_jit.h — NVRTC at NAME_init, for the host code graphc writes with
 * --target=cuda --cuda-jit (gc_cuda.h includes it under GC_CUDA_JIT).
 *
 * Such a NAME.cu embeds its kernels' source (NAME_kernels.cu) as a string;
 * gc_jit_load compiles it for the current device with NVRTC and loads it
 * through the driver API, so an application needs no nvcc at build time,
 * only the CUDA runtime and driver, NVRTC, cuBLAS and cuDNN.
 *
 * The architecture: the device's compute capability when this NVRTC
 * supports it (sm_XY, a CUBIN the driver loads as is), else the newest
 * virtual architecture below it that NVRTC supports (compute_XY, PTX the
 * driver compiles on load: a device newer than the NVRTC). NVRTC's log
 * goes to stderr when the compile fails (or warns); every failure is one
 * line there and -1, with nothing left loaded.
 */
#ifndef GC_CUDA_JIT_H
#define GC_CUDA_JIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The n strings of parts joined into one malloc'd string, or NULL. */
static inline char *gc_jit_join(const char *const *parts, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(parts[i]);
    char *s = (char *)malloc(len), *o = s;
    for (int i = 0; s && i < n; i++) {
        size_t k = strlen(parts[i]);
        memcpy(o, parts[i], k);
        o += k;
    }
    if (s) *o = 0;
    return s;
}

/* NVRTC's log of p on stderr, under a line naming what failed. */
static inline void gc_jit_log(nvrtcProgram p, const char *name, const char *what)
{
    size_t n = 0;
    if (what) fprintf(stderr, "%s: %s\n", name, what);
    if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n < 2) return;
    char *log = (char *)malloc(n);
    if (log && nvrtcGetProgramLog(p, log) == NVRTC_SUCCESS) fprintf(stderr, "%s", log);
    free(log);
}

/* The architecture option for the current device into opt: 0, or -1 with
 * the reason on stderr. */
static inline int gc_jit_arch(const char *name, char *opt, size_t cap)
{
    int dev = 0, major = 0, minor = 0, n = 0, archs[64];
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        fprintf(stderr, "%s: cannot query the device's compute capability\n", name);
        return -1;
    }
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n < 1 || n > 64 || nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: cannot list NVRTC's architectures\n", name);
        return -1;
    }
    const int want = major * 10 + minor;
    int best = 0;
    for (int i = 0; i < n; i++)
        if (archs[i] <= want && archs[i] > best) best = archs[i];
    if (!best) {
        fprintf(stderr, "%s: this NVRTC compiles for no architecture up to the device's compute capability %d.%d\n", name,
                major, minor);
        return -1;
    }
    snprintf(opt, cap, "--gpu-architecture=%s_%d", best == want ? "sm" : "compute", best);
    return 0;
}

/* The compiled image of p (CUBIN for an sm_ target, else PTX), malloc'd, or
 * NULL. */
static inline char *gc_jit_image(nvrtcProgram p, int cubin)
{
    size_t n = 0;
    if ((cubin ? nvrtcGetCUBINSize(p, &n) : nvrtcGetPTXSize(p, &n)) != NVRTC_SUCCESS || n == 0) return NULL;
    char *img = (char *)malloc(n);
    if (img && (cubin ? nvrtcGetCUBIN(p, img) : nvrtcGetPTX(p, img)) != NVRTC_SUCCESS) {
        free(img);
        img = NULL;
    }
    return img;
}

/* Compiles src (the program `name`; it includes "gc_cuda_kernel.h", whose
 * text is header) for the current device and loads it into *mod, with
 * fn[i] the kernel names[i]. 0, or -1 with the reason (and NVRTC's log) on
 * stderr and *mod NULL. */
static inline int gc_jit_load(const char *name, const char *src, const char *header, int nk, const char *const *names,
                              CUmodule *mod, CUfunction *fn)
{
    char arch[64];
    *mod = NULL;
    if (gc_jit_arch(name, arch, sizeof arch)) return -1;
    const char *hname = "gc_cuda_kernel.h", *opts[1] = {arch};
    nvrtcProgram p;
    nvrtcResult r = nvrtcCreateProgram(&p, src, name, 1, &header, &hname);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: nvrtcCreateProgram: %s\n", name, nvrtcGetErrorString(r));
        return -1;
    }
    r = nvrtcCompileProgram(p, 1, opts);
    if (r != NVRTC_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "NVRTC cannot compile the kernels (%s, %s):", arch + 19, nvrtcGetErrorString(r));
        gc_jit_log(p, name, what);
        nvrtcDestroyProgram(&p);
        return -1;
    }
    char *img = gc_jit_image(p, arch[19] == 's');
    nvrtcDestroyProgram(&p);
    CUresult cr = img ? cuModuleLoadData(mod, img) : CUDA_ERROR_INVALID_VALUE;
    free(img);
    if (cr != CUDA_SUCCESS) {
        const char *why = NULL;
        cuGetErrorString(cr, &why);
        fprintf(stderr, "%s: cannot load the compiled kernels (%s): %s\n", name, arch + 19, why ? why : "unknown error");
        *mod = NULL;
        return -1;
    }
    for (int i = 0; i < nk; i++)
        if (cuModuleGetFunction(&fn[i], *mod, names[i]) != CUDA_SUCCESS) {
            fprintf(stderr, "%s: kernel %s not found in the compiled module\n", name, names[i]);
            cuModuleUnload(*mod);
            *mod = NULL;
            return -1;
        }
    return 0;
}

#endif
