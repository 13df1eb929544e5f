/* memplan.h — the memory planner as a pure function (TFLM-style).
 *
 * Given buffers with a size and a lifetime [first, last] over the schedule
 * (inclusive step indices), assign arena offsets so that no two buffers
 * whose lifetimes intersect overlap in memory. Every offset is a multiple
 * of MEMPLAN_ALIGN; the arena size is the largest aligned end. Zero-size
 * buffers get offset 0 and conflict with nothing. Nothing here knows the
 * IR: plan_memory.c turns tensors and workspaces into PlanBufs.
 *
 * Two strategies, both O(n log n + k log T) for n buffers over T steps of
 * which k pairs are live together (see memplan.c):
 *
 *  - greedy by size (memplan_greedy): buffers largest first (ties: earlier
 *    first use, then index); each goes to the lowest aligned offset that
 *    fits between the already-placed buffers whose lifetimes intersect it.
 *    Big tensors claim the bottom of the arena and small ones fill holes.
 *
 *  - best fit in time order (memplan_best_fit): a simulation of an
 *    allocator that sees the whole program. Buffers in order of first use
 *    (ties: larger first, then index); the placed buffers whose lifetimes
 *    intersect the new one cut the address space into gaps, and the buffer
 *    goes into the smallest bounded gap it fits (ties: the lowest offset),
 *    or above them all when none fits. It tends to win on long chains of
 *    similar-sized tensors where greedy by size strands small holes.
 *
 * memplan_plan runs both and keeps the smaller arena (ties: greedy). The
 * figures memplan_lower_bound (no plan can be smaller) and memplan_no_reuse
 * (every buffer its own storage) bracket the result; memplan_check proves
 * a plan free of overlaps.
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

typedef enum MemplanStrategy { MEMPLAN_GREEDY, MEMPLAN_BEST_FIT } MemplanStrategy;

/* Assigns offsets, greedy by size; returns the arena size (bytes), or -1 on
 * overflow. */
int64_t memplan_greedy(PlanBuf *bufs, int n);
/* Assigns offsets, best fit in order of first use; same contract. */
int64_t memplan_best_fit(PlanBuf *bufs, int n);
/* Runs both strategies and keeps the plan with the smaller arena (ties:
 * greedy); *chosen (may be NULL) says which. Same contract. */
int64_t memplan_plan(PlanBuf *bufs, int n, MemplanStrategy *chosen);
/* The largest sum, over steps, of the sizes (each rounded up to
 * MEMPLAN_ALIGN) of the buffers live at that step; -1 on overflow. */
int64_t memplan_lower_bound(const PlanBuf *bufs, int n);
/* The sum of all sizes, each rounded up to MEMPLAN_ALIGN; -1 on overflow. */
int64_t memplan_no_reuse(const PlanBuf *bufs, int n);
/* Returns -1 if two live buffers overlap (or a buffer is misaligned), else 0.
 * On failure *a, *b name the pair. */
int memplan_check(const PlanBuf *bufs, int n, int *a, int *b);

#endif
