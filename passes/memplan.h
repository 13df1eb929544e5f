/* memplan.h — the memory planner as a pure function (TFLM-style).
 *
 * Given buffers with a size and a lifetime [first, last] over the schedule
 * (inclusive step indices), assign arena offsets so that no two buffers
 * whose lifetimes intersect overlap in memory. Algorithm: greedy by size —
 * place buffers largest first, each at the lowest 64-byte-aligned offset that
 * fits between the already-placed buffers whose lifetimes intersect it.
 */
#ifndef GRAPHC_MEMPLAN_H
#define GRAPHC_MEMPLAN_H

#include <stdint.h>

#define MEMPLAN_ALIGN 64

typedef struct PlanBuf {
    int64_t size;
    int first, last;
    int64_t offset; /* output */
} PlanBuf;

/* Assigns offsets; returns the arena size (bytes), or -1 on overflow. */
int64_t memplan_greedy(PlanBuf *bufs, int n);
/* Returns -1 if two live buffers overlap (or a buffer is misaligned), else 0.
 * On failure *a, *b name the pair. */
int memplan_check(const PlanBuf *bufs, int n, int *a, int *b);

#endif
