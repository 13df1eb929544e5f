/* cuda_jit.h — cuda_jit.c's entry points (launchers, the kernels file and
 * its embedded text), used by cuda_backend.c. */
#ifndef GRAPHC_CUDA_JIT_H
#define GRAPHC_CUDA_JIT_H

#include "cuda_emit.h"

/* The kernels c->kern defines. */
int cu_jit_count(const Cu *c);
/* The launchers gc_launch_k<N>, and under GC_CUDA_EMULATE the thunks and
 * the table NAME_emu_kernels. */
void cu_jit_launchers(const Cu *c, Writer *w);
/* NAME_kernels.cu: gc_cuda_kernel.h's include and the kernels. */
void cu_jit_kernels_file(const Cu *c, Writer *w);
/* NAME_kernels_src / NAME_kernels_hdr (string chunks of the two texts) and
 * NAME_kernel_names. */
void cu_jit_embed(const Cu *c, Writer *w, const char *kernels_text, const char *header_text);

#endif
