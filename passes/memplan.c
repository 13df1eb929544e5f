/* memplan.c — the two offset-assignment strategies, the plan figures and
 * the overlap checker (see memplan.h for the algorithms).
 *
 * Both strategies share one placement step: the placed buffers whose
 * lifetimes intersect the new one, sorted by offset, leave gaps between
 * them (each starting at an aligned end) and one unbounded gap above the
 * last; the strategy only decides which gap wins. O(n^2 log n) in the
 * buffer count, fine for graphs of thousands of tensors. Every allocation
 * is on the heap per call; there is no state between calls.
 */
#include "memplan.h"

#include <stdlib.h>
#include <string.h>

/* x rounded up to MEMPLAN_ALIGN into *out; -1 on overflow. */
static int align_up(int64_t x, int64_t *out)
{
    if (x > INT64_MAX - (MEMPLAN_ALIGN - 1)) return -1;
    *out = (x + MEMPLAN_ALIGN - 1) / MEMPLAN_ALIGN * MEMPLAN_ALIGN;
    return 0;
}

static int live_together(const PlanBuf *a, const PlanBuf *b) { return a->first <= b->last && b->first <= a->last; }

/* Whether buffer x is placed before buffer y. */
typedef int (*OrderFn)(const PlanBuf *bufs, int x, int y);

/* Largest first (ties: earlier first use, then index). */
static int by_size(const PlanBuf *bufs, int x, int y)
{
    const PlanBuf *a = &bufs[x], *b = &bufs[y];
    if (a->size != b->size) return a->size > b->size;
    if (a->first != b->first) return a->first < b->first;
    return x < y;
}

/* Earliest first use first (ties: larger, then index). */
static int by_first_use(const PlanBuf *bufs, int x, int y)
{
    const PlanBuf *a = &bufs[x], *b = &bufs[y];
    if (a->first != b->first) return a->first < b->first;
    if (a->size != b->size) return a->size > b->size;
    return x < y;
}

static int by_offset(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* Places the buffers one by one in `order`'s order: each goes to the lowest
 * gap that fits (best == 0) or to the smallest bounded gap that fits (best
 * != 0; ties: the lowest), else above every conflicting buffer. Returns the
 * arena size or -1 on overflow. */
static int64_t place_all(PlanBuf *bufs, int n, OrderFn order_fn, int best)
{
    int *order = malloc(sizeof(int) * (size_t)(n + 1));
    int *placed = malloc(sizeof(int) * (size_t)(n + 1));
    int64_t (*iv)[2] = malloc(sizeof *iv * (size_t)(n + 1));
    if (!order || !placed || !iv) abort();
    for (int i = 0; i < n; i++) { /* insertion sort: no comparator needs global context */
        int j = i;
        while (j > 0 && order_fn(bufs, i, order[j - 1])) { order[j] = order[j - 1]; j--; }
        order[j] = i;
    }
    int np = 0;
    int64_t total = 0;
    for (int k = 0; k < n && total >= 0; k++) {
        PlanBuf *b = &bufs[order[k]];
        b->offset = 0;
        if (b->size <= 0) continue; /* zero-size: offset 0, conflicts with nothing */
        int m = 0;
        for (int j = 0; j < np; j++) {
            const PlanBuf *o = &bufs[placed[j]];
            if (live_together(b, o)) { iv[m][0] = o->offset; iv[m][1] = o->offset + o->size; m++; }
        }
        qsort(iv, (size_t)m, sizeof *iv, by_offset);
        int64_t cursor = 0, pick = -1, pick_len = 0;
        for (int j = 0; j < m; j++) {
            int64_t gap = iv[j][0] - cursor;
            if (gap >= b->size && (pick < 0 || (best && gap < pick_len))) {
                pick = cursor;
                pick_len = gap;
                if (!best) break;
            }
            int64_t end;
            if (align_up(iv[j][1], &end)) { total = -1; break; }
            if (end > cursor) cursor = end;
        }
        if (total < 0) break;
        b->offset = pick >= 0 ? pick : cursor;
        int64_t top;
        if (b->offset > INT64_MAX - b->size || align_up(b->offset + b->size, &top)) { total = -1; break; }
        if (top > total) total = top;
        placed[np++] = order[k];
    }
    free(order);
    free(placed);
    free(iv);
    return total;
}

int64_t memplan_greedy(PlanBuf *bufs, int n) { return place_all(bufs, n, by_size, 0); }

int64_t memplan_best_fit(PlanBuf *bufs, int n) { return place_all(bufs, n, by_first_use, 1); }

int64_t memplan_plan(PlanBuf *bufs, int n, MemplanStrategy *chosen)
{
    PlanBuf *alt = malloc(sizeof(PlanBuf) * (size_t)(n + 1));
    if (!alt) abort();
    if (n) memcpy(alt, bufs, sizeof(PlanBuf) * (size_t)n);
    int64_t greedy = memplan_greedy(bufs, n);
    int64_t bestfit = memplan_best_fit(alt, n);
    int take_alt = bestfit >= 0 && (greedy < 0 || bestfit < greedy);
    if (take_alt && n) memcpy(bufs, alt, sizeof(PlanBuf) * (size_t)n);
    free(alt);
    if (chosen) *chosen = take_alt ? MEMPLAN_BEST_FIT : MEMPLAN_GREEDY;
    return take_alt ? bestfit : greedy;
}

/* One change of the live sum: at step `at`, `delta` bytes. */
typedef struct LiveEvent {
    int64_t at, delta;
} LiveEvent;

/* By step; at one step the deaths (negative) come before the births. */
static int by_event(const void *x, const void *y)
{
    const LiveEvent *a = x, *b = y;
    if (a->at != b->at) return a->at < b->at ? -1 : 1;
    return a->delta < b->delta ? -1 : a->delta > b->delta;
}

int64_t memplan_lower_bound(const PlanBuf *bufs, int n)
{
    LiveEvent *ev = malloc(sizeof *ev * (size_t)(2 * n + 1));
    if (!ev) abort();
    int ne = 0;
    for (int i = 0; i < n; i++) {
        int64_t sz;
        if (bufs[i].size <= 0) continue;
        if (align_up(bufs[i].size, &sz)) { free(ev); return -1; }
        ev[ne++] = (LiveEvent){bufs[i].first, sz};
        ev[ne++] = (LiveEvent){(int64_t)bufs[i].last + 1, -sz};
    }
    qsort(ev, (size_t)ne, sizeof *ev, by_event);
    int64_t live = 0, peak = 0;
    for (int i = 0; i < ne; i++) {
        if (ev[i].delta > 0 && live > INT64_MAX - ev[i].delta) { peak = -1; break; }
        live += ev[i].delta;
        if (live > peak) peak = live;
    }
    free(ev);
    return peak;
}

int64_t memplan_no_reuse(const PlanBuf *bufs, int n)
{
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        int64_t sz;
        if (bufs[i].size <= 0) continue;
        if (align_up(bufs[i].size, &sz) || sum > INT64_MAX - sz) return -1;
        sum += sz;
    }
    return sum;
}

int memplan_check(const PlanBuf *bufs, int n, int *a, int *b)
{
    for (int i = 0; i < n; i++) {
        if (bufs[i].offset < 0 || bufs[i].offset % MEMPLAN_ALIGN) { *a = *b = i; return -1; }
        for (int j = i + 1; j < n; j++) {
            if (bufs[i].size <= 0 || bufs[j].size <= 0 || !live_together(&bufs[i], &bufs[j])) continue;
            if (bufs[i].offset < bufs[j].offset + bufs[j].size && bufs[j].offset < bufs[i].offset + bufs[i].size) {
                *a = i;
                *b = j;
                return -1;
            }
        }
    }
    return 0;
}
