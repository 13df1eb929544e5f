/* memplan.c — the two offset-assignment strategies, the plan figures and
 * the overlap checker (see memplan.h for the algorithms).
 *
 * Both strategies share one placement step: the placed buffers whose
 * lifetimes intersect the new one, sorted by offset, leave gaps between
 * them (each starting at an aligned end) and one unbounded gap above the
 * last; the strategy only decides which gap wins. Finding the placed
 * buffers that are live together with the new one goes through a time
 * index (a segment tree over the steps: each placed lifetime is stored at
 * the O(log T) tree nodes that cover it exactly, and every node counts the
 * lifetimes stored in its subtree, so a query visits only subtrees that
 * hold something and overlap the asked lifetime). A query costs
 * O(log T) per buffer it reports, so a plan costs O(n log n + k log T)
 * for k pairs of buffers live together: linear-ish for the long chains of
 * large graphs, and the overlap checker uses the same index. Every
 * allocation is on the heap per call; there is no state between calls.
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

/* ---- the time index -------------------------------------------------------- */

typedef struct TimeIndex {
    int size;        /* leaves: a power of two covering the steps */
    int base;        /* step of leaf 0 (the smallest first use) */
    int **list;      /* per tree node: buffers stored there */
    int *len, *cap;
    int *sub;        /* per tree node: entries stored in its subtree */
    int *stamp;      /* per buffer: the query that last reported it */
    int tick;
} TimeIndex;

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

static void ti_init(TimeIndex *t, const PlanBuf *bufs, int n)
{
    int lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || bufs[i].first < lo) lo = bufs[i].first;
        if (i == 0 || bufs[i].last > hi) hi = bufs[i].last;
    }
    int64_t steps = (int64_t)hi - lo + 1;
    t->size = 1;
    while (t->size < steps) t->size *= 2;
    t->base = lo;
    t->list = xcalloc((size_t)2 * (size_t)t->size, sizeof *t->list);
    t->len = xcalloc((size_t)2 * (size_t)t->size, sizeof *t->len);
    t->cap = xcalloc((size_t)2 * (size_t)t->size, sizeof *t->cap);
    t->sub = xcalloc((size_t)2 * (size_t)t->size, sizeof *t->sub);
    t->stamp = xcalloc((size_t)n, sizeof *t->stamp);
    t->tick = 0;
}

static void ti_free(TimeIndex *t)
{
    for (int i = 0; i < 2 * t->size; i++) free(t->list[i]);
    free(t->list);
    free(t->len);
    free(t->cap);
    free(t->sub);
    free(t->stamp);
}

static void ti_put(TimeIndex *t, int node, int idx)
{
    if (t->len[node] == t->cap[node]) {
        t->cap[node] = t->cap[node] ? 2 * t->cap[node] : 4;
        t->list[node] = realloc(t->list[node], sizeof(int) * (size_t)t->cap[node]);
        if (!t->list[node]) abort();
    }
    t->list[node][t->len[node]++] = idx;
    for (int x = node; x >= 1; x >>= 1) t->sub[x]++;
}

/* Stores buffer idx's lifetime. */
static void ti_add(TimeIndex *t, const PlanBuf *b, int idx)
{
    int l = b->first - t->base + t->size, r = b->last - t->base + 1 + t->size;
    for (; l < r; l >>= 1, r >>= 1) {
        if (l & 1) ti_put(t, l++, idx);
        if (r & 1) ti_put(t, --r, idx);
    }
}

typedef struct TiFrame {
    int node, lo, hi; /* tree node covering steps [lo, hi) */
} TiFrame;

/* Writes into out[0..) each stored buffer whose lifetime meets b's, once;
 * returns how many. */
static int ti_query(TimeIndex *t, const PlanBuf *b, int *out)
{
    int qa = b->first - t->base, qb = b->last - t->base + 1; /* [qa, qb) */
    int m = 0;
    t->tick++;
    TiFrame stk[72]; /* depth-first: at most one pending sibling per level */
    int sp = 0;
    stk[sp++] = (TiFrame){1, 0, t->size};
    while (sp) {
        int node = stk[sp - 1].node, lo = stk[sp - 1].lo, hi = stk[sp - 1].hi;
        sp--;
        if (!t->sub[node] || hi <= qa || qb <= lo) continue;
        for (int k = 0; k < t->len[node]; k++) {
            int idx = t->list[node][k];
            if (t->stamp[idx] != t->tick) {
                t->stamp[idx] = t->tick;
                out[m++] = idx;
            }
        }
        if (node < t->size) {
            int mid = lo + (hi - lo) / 2;
            stk[sp++] = (TiFrame){2 * node + 1, mid, hi};
            stk[sp++] = (TiFrame){2 * node, lo, mid};
        }
    }
    return m;
}

/* ---- placement -------------------------------------------------------------- */

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

/* order[0..n) sorted by order_fn (a total order): bottom-up merge sort, as
 * no comparator here may need global context (qsort has none to pass). */
static void sort_order(const PlanBuf *bufs, int n, OrderFn order_fn, int *order)
{
    int *tmp = xcalloc((size_t)n, sizeof *tmp);
    for (int i = 0; i < n; i++) order[i] = i;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = order_fn(bufs, order[b], order[a]) ? order[b++] : order[a++];
            while (a < mid) tmp[k++] = order[a++];
            while (b < hi) tmp[k++] = order[b++];
        }
        memcpy(order, tmp, sizeof(int) * (size_t)n);
    }
    free(tmp);
}

/* Places the buffers one by one in `order`'s order: each goes to the lowest
 * gap that fits (best == 0) or to the smallest bounded gap that fits (best
 * != 0; ties: the lowest), else above every conflicting buffer. Returns the
 * arena size or -1 on overflow. */
static int64_t place_all(PlanBuf *bufs, int n, OrderFn order_fn, int best)
{
    int *order = xcalloc((size_t)n, sizeof *order);
    int *hits = xcalloc((size_t)n, sizeof *hits);
    int64_t (*iv)[2] = xcalloc((size_t)n, sizeof *iv);
    sort_order(bufs, n, order_fn, order);
    TimeIndex ti;
    ti_init(&ti, bufs, n);
    int64_t total = 0;
    for (int k = 0; k < n && total >= 0; k++) {
        PlanBuf *b = &bufs[order[k]];
        b->offset = 0;
        if (b->size <= 0) continue; /* zero-size: offset 0, conflicts with nothing */
        int m = ti_query(&ti, b, hits);
        for (int j = 0; j < m; j++) {
            const PlanBuf *o = &bufs[hits[j]];
            iv[j][0] = o->offset;
            iv[j][1] = o->offset + o->size;
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
        ti_add(&ti, b, order[k]);
    }
    ti_free(&ti);
    free(order);
    free(hits);
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
    for (int i = 0; i < n; i++)
        if (bufs[i].offset < 0 || bufs[i].offset % MEMPLAN_ALIGN) { *a = *b = i; return -1; }
    /* each buffer against the earlier ones live together with it */
    TimeIndex ti;
    ti_init(&ti, bufs, n);
    int *hits = xcalloc((size_t)n, sizeof *hits);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (bufs[i].size <= 0) continue;
        int m = ti_query(&ti, &bufs[i], hits), first = -1;
        for (int k = 0; k < m; k++) {
            const PlanBuf *o = &bufs[hits[k]];
            if (bufs[i].offset < o->offset + o->size && o->offset < bufs[i].offset + bufs[i].size &&
                (first < 0 || hits[k] < first))
                first = hits[k];
        }
        if (first >= 0) {
            *a = first;
            *b = i;
            rc = -1;
        }
        ti_add(&ti, &bufs[i], i);
    }
    free(hits);
    ti_free(&ti);
    return rc;
}
