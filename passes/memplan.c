/* memplan.c — greedy-by-size offset assignment and its overlap checker
 * (see memplan.h for the algorithm). O(n^2) in the buffer count, which is
 * fine for graphs of thousands of tensors. */
#include "memplan.h"

#include <stdlib.h>

static int64_t align_up(int64_t x) { return (x + MEMPLAN_ALIGN - 1) / MEMPLAN_ALIGN * MEMPLAN_ALIGN; }

static int live_together(const PlanBuf *a, const PlanBuf *b) { return a->first <= b->last && b->first <= a->last; }

/* Orders buffer indices largest first (ties: earlier first use, then
 * index), by insertion sort so no comparator needs global context. */
static int before(const PlanBuf *bufs, int x, int y)
{
    const PlanBuf *a = &bufs[x], *b = &bufs[y];
    if (a->size != b->size) return a->size > b->size;
    if (a->first != b->first) return a->first < b->first;
    return x < y;
}

static int by_offset(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

int64_t memplan_greedy(PlanBuf *bufs, int n)
{
    int *order = malloc(sizeof(int) * (size_t)(n + 1));
    int *placed = malloc(sizeof(int) * (size_t)(n + 1));
    int64_t (*iv)[2] = malloc(sizeof *iv * (size_t)(n + 1));
    if (!order || !placed || !iv) abort();
    for (int i = 0; i < n; i++) {
        int j = i;
        while (j > 0 && before(bufs, i, order[j - 1])) { order[j] = order[j - 1]; j--; }
        order[j] = i;
    }
    int np = 0;
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        PlanBuf *b = &bufs[order[k]];
        int m = 0;
        for (int j = 0; j < np; j++) {
            const PlanBuf *o = &bufs[placed[j]];
            if (o->size > 0 && live_together(b, o)) { iv[m][0] = o->offset; iv[m][1] = o->offset + o->size; m++; }
        }
        qsort(iv, (size_t)m, sizeof *iv, by_offset);
        int64_t off = 0;
        for (int j = 0; j < m; j++) {
            if (iv[j][0] >= off + b->size) break;
            if (align_up(iv[j][1]) > off) off = align_up(iv[j][1]);
        }
        b->offset = off;
        if (off + b->size < off) { total = -1; break; }
        if (align_up(off + b->size) > total) total = align_up(off + b->size);
        placed[np++] = order[k];
    }
    free(order);
    free(placed);
    free(iv);
    return total;
}

int memplan_check(const PlanBuf *bufs, int n, int *a, int *b)
{
    for (int i = 0; i < n; i++) {
        if (bufs[i].offset % MEMPLAN_ALIGN) { *a = *b = i; return -1; }
        for (int j = i + 1; j < n; j++) {
            if (!bufs[i].size || !bufs[j].size || !live_together(&bufs[i], &bufs[j])) continue;
            if (bufs[i].offset < bufs[j].offset + bufs[j].size && bufs[j].offset < bufs[i].offset + bufs[i].size) {
                *a = i;
                *b = j;
                return -1;
            }
        }
    }
    return 0;
}
