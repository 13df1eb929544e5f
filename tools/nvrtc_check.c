/* nvrtc_check.c — compiles CUDA source files with NVRTC, as a model built
 * with graphc compile --target=cuda --cuda-jit does at NAME_init, and
 * reports what NVRTC rejects. NVRTC needs no GPU, so this checks on any
 * machine with the CUDA toolkit that every kernel graphc generates compiles
 * for a given architecture (the ctest ops_cuda_nvrtc runs it over the op
 * tests' NAME_kernels.cu).
 *
 * Usage: nvrtc_check [--arch=sm_XY] [-I DIR]... FILE...
 *   --arch   the virtual or real architecture (default sm_90)
 *   -I DIR   where #include "..." looks (NAME_kernels.cu includes
 *            gc_cuda_kernel.h from its folder; the file's own folder is
 *            searched first)
 * Prints "FILE: ok (N bytes of PTX)" per file, or NVRTC's log and "FILE:
 * NVRTC failed"; exits 0 when every file compiled, 1 otherwise, 2 on bad
 * usage. Built only where CMake finds libnvrtc (tools/CMakeLists part of
 * tests/CMakeLists.txt).
 */
#include <nvrtc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INCLUDES 32

/* The whole of file path as a NUL-terminated string, or NULL. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

/* 0 when NVRTC compiles path with opts, else 1 with its log on stderr. */
static int check_file(const char *path, const char *const *opts, int nopts)
{
    char *src = read_text(path);
    if (!src) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }
    /* the file's own folder first, as nvcc looks for #include "..." */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    char inc[4200];
    snprintf(inc, sizeof inc, "--include-path=%s", slash ? (*slash = 0, dir) : ".");
    const char *all[MAX_INCLUDES + 8];
    all[0] = inc;
    for (int i = 0; i < nopts; i++) all[1 + i] = opts[i];

    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: nvrtcCreateProgram: %s\n", path, nvrtcGetErrorString(r));
        free(src);
        return 1;
    }
    r = nvrtcCompileProgram(prog, nopts + 1, all);
    size_t log_n = 0, ptx_n = 0;
    nvrtcGetProgramLogSize(prog, &log_n);
    if (log_n > 1) {
        char *log = malloc(log_n);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "%s", log);
        free(log);
    }
    if (r == NVRTC_SUCCESS) nvrtcGetPTXSize(prog, &ptx_n);
    nvrtcDestroyProgram(&prog);
    free(src);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: NVRTC failed: %s\n", path, nvrtcGetErrorString(r));
        return 1;
    }
    printf("%s: ok (%zu bytes of PTX)\n", path, ptx_n);
    return 0;
}

int main(int argc, char **argv)
{
    static char arch[64] = "--gpu-architecture=sm_90";
    static char incs[MAX_INCLUDES][4200];
    const char *opts[MAX_INCLUDES + 2];
    int nopts = 0, ninc = 0, first = argc;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--arch=", 7) == 0) {
            snprintf(arch, sizeof arch, "--gpu-architecture=%s", argv[i] + 7);
        } else if (strcmp(argv[i], "-I") == 0 && i + 1 < argc && ninc < MAX_INCLUDES) {
            snprintf(incs[ninc], sizeof incs[ninc], "--include-path=%s", argv[++i]);
            opts[nopts++] = incs[ninc++];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: nvrtc_check [--arch=sm_XY] [-I DIR]... FILE...\n");
            return 2;
        } else {
            first = i;
            break;
        }
    }
    if (first == argc) {
        fprintf(stderr, "usage: nvrtc_check [--arch=sm_XY] [-I DIR]... FILE...\n");
        return 2;
    }
    opts[nopts++] = arch;
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    int bad = 0;
    for (int i = first; i < argc; i++) bad |= check_file(argv[i], opts, nopts);
    printf("NVRTC %d.%d, %s: %d file(s), %s\n", major, minor, arch + 19, argc - first, bad ? "FAILED" : "all compiled");
    return bad;
}
