/* test_memplan.c — unit tests of the memory planner: the pure strategies
 * (passes/memplan.h) and the plan-memory pass over small graphs.
 *
 * Pure planner: hand-computed plans first (disjoint lifetimes share offset
 * 0, overlapping ones do not, equal lifetimes, 64-byte alignment, zero-size
 * buffers), the two strategies on problems where each one wins (worked out
 * by hand in the comments), the lower bound and no-reuse figures on a
 * hand-computed case, then 300 random problems checked against facts that
 * hold for any correct plan: memplan_check finds no overlap, the arena is at
 * least the live-set lower bound (recomputed here by brute force) and at
 * most the no-reuse sum, and memplan_plan keeps the smaller strategy.
 *
 * The pass: graphs parsed from text IR, shapes inferred, planned at -O2 or
 * -O0: an in-place chain of unary ops lands in one buffer; views alias the
 * root and stretch its lifetime; workspaces (the C target's) live for their
 * node's step; and
 * in-place sharing never touches graph inputs, graph outputs, an input read
 * later, an input read twice by the node, or a broadcast input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "ir/ir.h"
#include "ir/text.h"
#include "passes/memplan.h"
#include "passes/passes.h"

static void expect_valid(const PlanBuf *b, int n)
{
    int x = -1, y = -1;
    assert_int_equal(memplan_check(b, n, &x, &y), 0);
}

static void test_disjoint_share_offset_zero(void **state)
{
    (void)state;
    PlanBuf b[3] = {{100, 0, 1, -1}, {100, 2, 3, -1}, {64, 4, 4, -1}};
    int64_t total = memplan_greedy(b, 3);
    assert_int_equal(b[0].offset, 0);
    assert_int_equal(b[1].offset, 0);
    assert_int_equal(b[2].offset, 0);
    assert_int_equal(total, 128); /* 100 rounded up to 64 */
    expect_valid(b, 3);
}

static void test_overlapping_do_not_share(void **state)
{
    (void)state;
    /* [0,2] and [2,4] touch at step 2, so both are live there. */
    PlanBuf b[2] = {{256, 0, 2, -1}, {128, 2, 4, -1}};
    int64_t total = memplan_greedy(b, 2);
    assert_int_equal(b[0].offset, 0);   /* largest first */
    assert_int_equal(b[1].offset, 256);
    assert_int_equal(total, 384);
    expect_valid(b, 2);
}

static void test_equal_lifetimes(void **state)
{
    (void)state;
    PlanBuf b[3] = {{64, 1, 3, -1}, {64, 1, 3, -1}, {64, 1, 3, -1}};
    int64_t total = memplan_greedy(b, 3);
    assert_int_equal(total, 192);
    /* ties keep index order: 0, 64, 128 */
    assert_int_equal(b[0].offset, 0);
    assert_int_equal(b[1].offset, 64);
    assert_int_equal(b[2].offset, 128);
    expect_valid(b, 3);
}

static void test_alignment(void **state)
{
    (void)state;
    PlanBuf b[3] = {{10, 0, 5, -1}, {1, 0, 5, -1}, {65, 0, 5, -1}};
    int64_t total = memplan_greedy(b, 3);
    for (int i = 0; i < 3; i++) assert_int_equal(b[i].offset % MEMPLAN_ALIGN, 0);
    assert_int_equal(b[2].offset, 0);   /* 65 bytes, placed first */
    assert_int_equal(b[0].offset, 128);
    assert_int_equal(b[1].offset, 192);
    assert_int_equal(total, 256);
    expect_valid(b, 3);
}

static void test_gap_reuse(void **state)
{
    (void)state;
    /* A (large, [0,1]) and C ([0,3]) are live together; B ([2,3]) may reuse
     * A's space once A is dead. */
    PlanBuf b[3] = {{512, 0, 1, -1}, {256, 2, 3, -1}, {128, 0, 3, -1}};
    int64_t total = memplan_greedy(b, 3);
    assert_int_equal(b[0].offset, 0);
    assert_int_equal(b[1].offset, 0);
    assert_int_equal(b[2].offset, 512);
    assert_int_equal(total, 640);
    expect_valid(b, 3);
}

static void test_zero_size_and_empty(void **state)
{
    (void)state;
    PlanBuf b[2] = {{0, 0, 3, -1}, {64, 0, 3, -1}};
    int64_t total = memplan_greedy(b, 2);
    assert_int_equal(total, 64);
    expect_valid(b, 2);
    assert_int_equal(memplan_greedy(NULL, 0), 0);
}

static void test_check_reports_overlap(void **state)
{
    (void)state;
    PlanBuf b[3] = {{64, 0, 1, 0}, {64, 5, 6, 0}, {128, 1, 2, 64}};
    int x = -1, y = -1;
    /* 0 and 2 are live together at step 1 and both start at 0 */
    b[2].offset = 0;
    assert_int_equal(memplan_check(b, 3, &x, &y), -1);
    assert_int_equal(x, 0);
    assert_int_equal(y, 2);
    b[2].offset = 64;
    assert_int_equal(memplan_check(b, 3, &x, &y), 0);
    b[2].offset = 96; /* disjoint from 0 but misaligned */
    assert_int_equal(memplan_check(b, 3, &x, &y), -1);
}

/* Small deterministic generator so failures reproduce. */
static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* The live-set lower bound by brute force: every step, every buffer. */
static int64_t brute_lower_bound(const PlanBuf *b, int n, int steps)
{
    int64_t lower = 0;
    for (int t = 0; t < steps; t++) {
        int64_t live = 0;
        for (int i = 0; i < n; i++)
            if (b[i].first <= t && t <= b[i].last) live += (b[i].size + 63) / 64 * 64;
        if (live > lower) lower = live;
    }
    return lower;
}

/* Whether buffers i and j are live together and overlap in memory. */
static int brute_clash(const PlanBuf *b, int i, int j)
{
    return b[i].size > 0 && b[j].size > 0 && b[i].first <= b[j].last && b[j].first <= b[i].last &&
           b[i].offset < b[j].offset + b[j].size && b[j].offset < b[i].offset + b[i].size;
}

static int brute_any_clash(const PlanBuf *b, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (brute_clash(b, i, j)) return 1;
    return 0;
}

/* The placement rule of memplan.h by brute force (every placed buffer
 * compared with the new one; order by insertion sort): the planner's time
 * index must find exactly these offsets. */
static int64_t brute_place(PlanBuf *b, int n, int by_first_use, int best)
{
    int order[64], placed = 0, done[64];
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0; j--) {
            const PlanBuf *x = &b[i], *y = &b[order[j - 1]];
            int before = by_first_use ? (x->first != y->first ? x->first < y->first : x->size > y->size)
                                      : (x->size != y->size ? x->size > y->size : x->first < y->first);
            if (x->first == y->first && x->size == y->size) before = 0; /* ties: index order */
            if (!before) break;
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        PlanBuf *x = &b[order[k]];
        x->offset = 0;
        if (x->size <= 0) continue;
        int64_t lo[64], hi[64], cursor = 0, pick = -1, pick_len = 0;
        int m = 0;
        for (int q = 0; q < placed; q++) { /* every placed buffer live with x, by offset */
            const PlanBuf *o = &b[done[q]];
            if (o->first > x->last || x->first > o->last) continue;
            int at = m++;
            for (; at > 0 && lo[at - 1] > o->offset; at--) {
                lo[at] = lo[at - 1];
                hi[at] = hi[at - 1];
            }
            lo[at] = o->offset;
            hi[at] = o->offset + o->size;
        }
        for (int q = 0; q < m; q++) {
            int64_t gap = lo[q] - cursor;
            if (gap >= x->size && (pick < 0 || (best && gap < pick_len))) {
                pick = cursor;
                pick_len = gap;
                if (!best) break;
            }
            int64_t end = (hi[q] + 63) / 64 * 64;
            if (end > cursor) cursor = end;
        }
        x->offset = pick >= 0 ? pick : cursor;
        int64_t top = (x->offset + x->size + 63) / 64 * 64;
        if (top > total) total = top;
        done[placed++] = order[k];
    }
    return total;
}

static void expect_plan_sound(const PlanBuf *b, int n, int64_t total, int iter, const char *what)
{
    int x = -1, y = -1;
    if (memplan_check(b, n, &x, &y) != 0) fail_msg("problem %d (%s): buffers %d and %d overlap", iter, what, x, y);
    if (brute_any_clash(b, n)) fail_msg("problem %d (%s): brute force finds an overlap", iter, what);
    assert_true(total >= memplan_lower_bound(b, n));
    assert_true(total <= memplan_no_reuse(b, n));
    for (int i = 0; i < n; i++) {
        assert_true(b[i].offset >= 0);
        assert_true(b[i].offset + b[i].size <= total);
    }
}

static void test_random_problems(void **state)
{
    (void)state;
    enum { MAXN = 40, STEPS = 30 };
    uint32_t seed = 12345;
    for (int iter = 0; iter < 300; iter++) {
        PlanBuf b[MAXN], g[MAXN], f[MAXN];
        int n = 1 + (int)(lcg(&seed) % MAXN);
        for (int i = 0; i < n; i++) {
            int first = (int)(lcg(&seed) % STEPS);
            int len = (int)(lcg(&seed) % 8);
            b[i].first = first;
            b[i].last = first + len < STEPS ? first + len : STEPS - 1;
            b[i].size = (int64_t)(lcg(&seed) % 5000);
            b[i].offset = -1;
        }
        int64_t lower = brute_lower_bound(b, n, STEPS);
        assert_int_equal(memplan_lower_bound(b, n), lower);
        memcpy(g, b, sizeof(PlanBuf) * (size_t)n);
        memcpy(f, b, sizeof(PlanBuf) * (size_t)n);
        int64_t tg = memplan_greedy(g, n), tf = memplan_best_fit(f, n);
        expect_plan_sound(g, n, tg, iter, "greedy");
        expect_plan_sound(f, n, tf, iter, "best fit");
        MemplanStrategy chosen;
        int64_t tp = memplan_plan(b, n, &chosen);
        expect_plan_sound(b, n, tp, iter, "plan");
        assert_int_equal(tp, tg <= tf ? tg : tf);
        assert_int_equal(chosen, tg <= tf ? MEMPLAN_GREEDY : MEMPLAN_BEST_FIT);
        for (int i = 0; i < n; i++) assert_int_equal(b[i].offset, (tg <= tf ? g : f)[i].offset);
        /* the same offsets as the rule applied by brute force */
        PlanBuf r[MAXN];
        memcpy(r, g, sizeof(PlanBuf) * (size_t)n);
        assert_int_equal(brute_place(r, n, 0, 0), tg);
        for (int i = 0; i < n; i++) assert_int_equal(r[i].offset, g[i].offset);
        memcpy(r, f, sizeof(PlanBuf) * (size_t)n);
        assert_int_equal(brute_place(r, n, 1, 1), tf);
        for (int i = 0; i < n; i++) assert_int_equal(r[i].offset, f[i].offset);
        /* a corrupted plan: the checker agrees with brute force and names a clashing pair */
        memcpy(r, b, sizeof(PlanBuf) * (size_t)n);
        r[lcg(&seed) % (uint32_t)n].offset = (int64_t)(lcg(&seed) % 64) * 64;
        int x = -1, y = -1, bad = memplan_check(r, n, &x, &y) != 0;
        assert_int_equal(bad, brute_any_clash(r, n));
        if (bad) {
            assert_true(x < y);
            assert_true(brute_clash(r, x, y));
        }
    }
}

/* ---- the two strategies and the figures ---------------------------------- */

static void test_best_fit_equal_lifetimes(void **state)
{
    (void)state;
    PlanBuf b[3] = {{64, 1, 3, -1}, {64, 1, 3, -1}, {64, 1, 3, -1}};
    assert_int_equal(memplan_best_fit(b, 3), 192);
    assert_int_equal(b[0].offset, 0); /* ties keep index order */
    assert_int_equal(b[1].offset, 64);
    assert_int_equal(b[2].offset, 128);
    expect_valid(b, 3);
}

static void test_plan_keeps_best_fit_when_smaller(void **state)
{
    (void)state;
    /* Greedy: D3 (192, first 0) at 0, D2 (192, [4,6]) at 0 too, D1 (128,
     * [3,5]) above D2 at 192, D0 (64, [1,3]) above D3 and D1 at 320: 384.
     * Best fit (first-use order): D3 at 0, D0 at 192, D1 into the gap
     * [0,192) left by D3 at 0, D2 above D1 at 128: 320, which is also the
     * lower bound (D1 + D2 at steps 4 and 5). */
    PlanBuf d[4] = {{64, 1, 3, -1}, {128, 3, 5, -1}, {192, 4, 6, -1}, {192, 0, 2, -1}};
    PlanBuf g[4], f[4];
    memcpy(g, d, sizeof d);
    memcpy(f, d, sizeof d);
    assert_int_equal(memplan_greedy(g, 4), 384);
    assert_int_equal(g[3].offset, 0);
    assert_int_equal(g[2].offset, 0);
    assert_int_equal(g[1].offset, 192);
    assert_int_equal(g[0].offset, 320);
    assert_int_equal(memplan_best_fit(f, 4), 320);
    assert_int_equal(f[3].offset, 0);
    assert_int_equal(f[0].offset, 192);
    assert_int_equal(f[1].offset, 0);
    assert_int_equal(f[2].offset, 128);
    expect_valid(f, 4);
    assert_int_equal(memplan_lower_bound(d, 4), 320);
    MemplanStrategy s;
    assert_int_equal(memplan_plan(d, 4, &s), 320);
    assert_int_equal(s, MEMPLAN_BEST_FIT);
    for (int i = 0; i < 4; i++) assert_int_equal(d[i].offset, f[i].offset);
}

static void test_plan_keeps_greedy_when_smaller(void **state)
{
    (void)state;
    /* Greedy: A (256, [1,3]) at 0, B (128, [3,3]) at 256, C (64, [0,1])
     * beside B at 256: 384. Best fit: C at 0, A above it at 64, B finds
     * only the 64-byte gap under A and goes to 320: 448. */
    PlanBuf d[3] = {{256, 1, 3, -1}, {128, 3, 3, -1}, {64, 0, 1, -1}};
    PlanBuf f[3];
    memcpy(f, d, sizeof d);
    assert_int_equal(memplan_best_fit(f, 3), 448);
    assert_int_equal(f[2].offset, 0);
    assert_int_equal(f[0].offset, 64);
    assert_int_equal(f[1].offset, 320);
    MemplanStrategy s;
    assert_int_equal(memplan_plan(d, 3, &s), 384);
    assert_int_equal(s, MEMPLAN_GREEDY);
    assert_int_equal(d[0].offset, 0);
    assert_int_equal(d[1].offset, 256);
    assert_int_equal(d[2].offset, 256);
    expect_valid(d, 3);
}

static void test_plan_tie_keeps_greedy(void **state)
{
    (void)state;
    PlanBuf d[2] = {{128, 0, 1, -1}, {64, 1, 2, -1}}; /* both strategies: 192 */
    MemplanStrategy s;
    assert_int_equal(memplan_plan(d, 2, &s), 192);
    assert_int_equal(s, MEMPLAN_GREEDY);
}

static void test_lower_bound_and_no_reuse(void **state)
{
    (void)state;
    /* Aligned sizes 128, 64, 64, 0, 256. Live sums per step: 0: 128;
     * 1, 2: 128 + 64; 3: 64 + 64; 4: 256; 5: 0 (zero-size only). */
    PlanBuf b[5] = {{100, 0, 2, -1}, {64, 1, 3, -1}, {1, 3, 3, -1}, {0, 0, 5, -1}, {200, 4, 4, -1}};
    assert_int_equal(memplan_lower_bound(b, 5), 256);
    assert_int_equal(memplan_no_reuse(b, 5), 512);
    assert_int_equal(memplan_lower_bound(b, 4), 192);
    assert_int_equal(memplan_lower_bound(NULL, 0), 0);
    assert_int_equal(memplan_no_reuse(NULL, 0), 0);
}

/* ---- the plan-memory pass ------------------------------------------------ */

/* Parses text IR and infers shapes (which may reorder the schedule). */
static Graph *parsed(const char *text)
{
    Diag d;
    memset(&d, 0, sizeof d);
    Graph *g = ir_parse(text, strlen(text), "t.gir", &d);
    if (!g) fail_msg("parse failed: %s", d.msg);
    if (pass_infer_shapes(g, &d)) fail_msg("shape inference failed: %s", d.msg);
    return g;
}

static void plan(Graph *g, int level)
{
    Diag d;
    memset(&d, 0, sizeof d);
    g->opt_level = level;
    g->workspace = backend_find("c")->workspace; /* the C target's workspace policy, as compiles use it */
    if (pass_plan_memory(g, &d)) fail_msg("planning failed: %s", d.msg);
}

/* Parses text IR, infers shapes and plans memory at -O`level`. */
static Graph *planned(const char *text, int level)
{
    Graph *g = parsed(text);
    plan(g, level);
    return g;
}

/* Sets the schedule to the nodes named (by first output) in order. */
static void schedule(Graph *g, const char *const *outs, int n)
{
    assert_int_equal(n, g->n_nodes);
    Node **order = calloc((size_t)n, sizeof *order);
    assert_non_null(order);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->n_nodes; k++)
            if (strcmp(g->nodes[k]->out[0]->name, outs[i]) == 0) order[i] = g->nodes[k];
    for (int i = 0; i < n; i++) {
        if (!order[i]) fail_msg("no node making '%s'", outs[i]);
        g->nodes[i] = order[i];
    }
    free(order);
}

static Value *val(const Graph *g, const char *name)
{
    Value *v = ir_find_value(g, name);
    if (!v) fail_msg("no value '%s'", name);
    return v;
}

static const char chain_ir[] =
    "graph chain {\n"
    "  input %x: f32[4,16]\n"
    "  %a = Exp(%x)\n"
    "  %b = Relu(%a)\n"
    "  %c = Sigmoid(%b)\n"
    "  %d = Tanh(%c)\n"
    "  %e = Neg(%d)\n"
    "  output %e\n"
    "}\n";

static void test_pass_inplace_chain(void **state)
{
    (void)state;
    Graph *g = planned(chain_ir, 2);
    /* a..d are 256 bytes each; each op's input dies where its output is born */
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) assert_int_equal(val(g, names[i])->offset, 0);
    assert_int_equal(val(g, "x")->offset, -1);
    assert_int_equal(val(g, "e")->offset, -1);
    assert_int_equal(g->arena_bytes, 256);
    assert_int_equal(g->plan_lower_bound, 256);
    assert_int_equal(g->plan_no_reuse, 256);
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    assert_int_equal(n, 1);
    assert_string_equal(e[0].name, "a");
    assert_int_equal(e[0].offset, 0);
    assert_int_equal(e[0].size, 256);
    assert_int_equal(e[0].first, 0);
    assert_int_equal(e[0].last, 4);
    assert_int_equal(e[0].is_workspace, 0);
    free(e);
    assert_int_equal(pass_count_kernels(g), 5);
    ir_graph_free(g);

    /* -O0: every temporary its own buffer; greedy alternates two slots */
    g = planned(chain_ir, 0);
    assert_int_equal(val(g, "a")->offset, 0);
    assert_int_equal(val(g, "b")->offset, 256);
    assert_int_equal(val(g, "c")->offset, 0);
    assert_int_equal(val(g, "d")->offset, 256);
    assert_int_equal(g->arena_bytes, 512);
    assert_int_equal(g->plan_lower_bound, 512);
    assert_int_equal(g->plan_no_reuse, 1024);
    n = pass_plan_entries(g, &e);
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        assert_string_equal(e[i].name, names[i]);
        assert_int_equal(e[i].first, i);
        assert_int_equal(e[i].last, i + 1);
    }
    free(e);
    ir_graph_free(g);
}

/* Graph.extra_reads of a target whose kernel at step 3 (d = Tanh(c)) also reads a. */
static void reads_a_at_step_3(const Graph *g, int *last)
{
    const Value *a = ir_find_value(g, "a");
    if (last[a->id] < 3) last[a->id] = 3;
}

static int overlap(const Value *u, const Value *v)
{
    return u->offset < v->offset + 256 && v->offset < u->offset + 256;
}

static void test_pass_extra_reads(void **state)
{
    (void)state;
    Graph *g = parsed(chain_ir);
    g->extra_reads = reads_a_at_step_3;
    plan(g, 2);
    /* a lives to step 3: b, c and d cannot take its bytes (in place or after) */
    assert_false(overlap(val(g, "a"), val(g, "b")));
    assert_false(overlap(val(g, "a"), val(g, "c")));
    assert_false(overlap(val(g, "a"), val(g, "d")));
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    int seen = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].name, "a") == 0) {
            assert_int_equal(e[i].first, 0);
            assert_int_equal(e[i].last, 3);
            seen = 1;
        }
    assert_true(seen);
    free(e);
    assert_int_equal(g->arena_bytes, 512);
    ir_graph_free(g);
}

/* Graph.stored_bytes of a target that stores only 64 of b's 256 bytes. */
static int64_t stores_64_of_b(const Graph *g, const Value *v)
{
    (void)g;
    return strcmp(v->name, "b") == 0 ? 64 : -1;
}

static void test_pass_stored_bytes(void **state)
{
    (void)state;
    Graph *g = parsed(chain_ir);
    g->stored_bytes = stores_64_of_b;
    plan(g, 2);
    /* b's buffer is 64 bytes, so no neighbour takes it in place (a's 256 bytes would not fit, and c
     * must not write 256 bytes into it): b lives apart from a and from c */
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e), seen = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(e[i].name, "b") == 0) {
            assert_int_equal(e[i].size, 64);
            seen = 1;
        }
    assert_true(seen);
    free(e);
    const Value *a = val(g, "a"), *b = val(g, "b"), *c = val(g, "c");
    assert_true(b->offset >= a->offset + 256 || a->offset >= b->offset + 64);
    assert_true(b->offset >= c->offset + 256 || c->offset >= b->offset + 64);
    assert_int_equal(g->plan_lower_bound, 256 + 64);
    assert_int_equal(g->arena_bytes, 256 + 64);
    ir_graph_free(g);
}

static void test_pass_workspace(void **state)
{
    (void)state;
    /* TopK's workspace is 16 bytes per element of the axis: 128 here. At
     * step 1, a (64 bytes), v (24 -> 64) and the workspace are all live. */
    Graph *g = planned("graph ws {\n"
                       "  input %x: f32[2,8]\n"
                       "  const %k: i64[1] = [3]\n"
                       "  %a = Relu(%x)\n"
                       "  %v, %i = TopK(%a, %k) {axis=1}\n"
                       "  %y = Neg(%v)\n"
                       "  output %y\n"
                       "  output %i\n"
                       "}\n",
                       2);
    const Node *topk = g->nodes[1];
    assert_int_equal(topk->ws_bytes, 128);
    assert_true(topk->ws_offset >= 0);
    assert_int_equal(topk->ws_offset % 64, 0);
    assert_int_equal(g->arena_bytes, 256);
    assert_int_equal(g->plan_lower_bound, 256);
    int64_t lo[3] = {val(g, "a")->offset, val(g, "v")->offset, topk->ws_offset};
    int64_t sz[3] = {64, 24, 128};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) assert_true(lo[i] + sz[i] <= lo[j] || lo[j] + sz[j] <= lo[i]);
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    assert_int_equal(n, 3);
    int seen = 0;
    for (int i = 0; i < n; i++) {
        if (!e[i].is_workspace) continue;
        char want[128];
        snprintf(want, sizeof want, "%s (workspace)", topk->name);
        assert_string_equal(e[i].name, want);
        assert_int_equal(e[i].first, 1);
        assert_int_equal(e[i].last, 1);
        assert_int_equal(e[i].size, 128);
        assert_int_equal(e[i].offset, topk->ws_offset);
        seen++;
    }
    assert_int_equal(seen, 1);
    free(e);
    ir_graph_free(g);
}

static const char views_ir[] =
    "graph views {\n"
    "  input %x: f32[1,64]\n"
    "  const %s416: i64[2] = [4, 16]\n"
    "  const %s164: i64[2] = [1, 64]\n"
    "  %a = Relu(%x)\n"
    "  %r = Reshape(%a, %s416)\n"
    "  %b = Exp(%x)\n"
    "  %u = Reshape(%r, %s164)\n"
    "  %c = Sigmoid(%u)\n"
    "  %y = Add(%c, %b)\n"
    "  output %y\n"
    "}\n";
/* 0 a; 1 r: view of a; 2 b; 3 u: view of a (the root, not r); 4 c: a dies
 * here, c takes its buffer; 5 y. */
static const char *const views_order[] = {"a", "r", "b", "u", "c", "y"};

static void test_pass_views(void **state)
{
    (void)state;
    Graph *g = parsed(views_ir);
    schedule(g, views_order, 6);
    plan(g, 2);
    Value *a = val(g, "a"), *b = val(g, "b");
    assert_ptr_equal(val(g, "r")->alias, a);
    assert_ptr_equal(val(g, "u")->alias, a);
    assert_null(a->alias);
    assert_null(b->alias);
    assert_int_equal(val(g, "u")->offset, a->offset);
    /* a's last direct read is step 1, but its views are read up to step 4:
     * a and b (from step 2) must not share memory */
    assert_int_not_equal(a->offset, b->offset);
    assert_int_equal(val(g, "c")->offset, a->offset);
    assert_int_equal(g->arena_bytes, 512);
    PlanEntry *e = NULL;
    int n = pass_plan_entries(g, &e);
    assert_int_equal(n, 2);
    assert_string_equal(e[0].name, "a");
    assert_int_equal(e[0].first, 0);
    assert_int_equal(e[0].last, 5); /* c, in a's buffer, is read at step 5 */
    assert_string_equal(e[1].name, "b");
    assert_int_equal(e[1].first, 2);
    assert_int_equal(e[1].last, 5);
    free(e);
    assert_int_equal(pass_count_kernels(g), 4);
    ir_graph_free(g);

    /* -O0: no views, every node runs */
    g = parsed(views_ir);
    schedule(g, views_order, 6);
    plan(g, 0);
    assert_null(val(g, "r")->alias);
    assert_null(val(g, "u")->alias);
    assert_true(val(g, "r")->offset >= 0);
    assert_int_equal(pass_count_kernels(g), 6);
    ir_graph_free(g);
}

static void test_pass_view_of_input_and_output(void **state)
{
    (void)state;
    /* A view of a graph input aliases the input; a view that is itself a
     * graph output is not an alias (the caller's buffer is distinct). */
    Graph *g = planned("graph vio {\n"
                       "  input %x: f32[2,3]\n"
                       "  const %s6: i64[1] = [6]\n"
                       "  %r = Reshape(%x, %s6)\n"
                       "  %y = Neg(%r)\n"
                       "  %z = Flatten(%y)\n"
                       "  output %z\n"
                       "}\n",
                       2);
    assert_ptr_equal(val(g, "r")->alias, val(g, "x"));
    assert_int_equal(val(g, "r")->offset, -1);
    assert_null(val(g, "z")->alias);
    assert_int_equal(pass_count_kernels(g), 2);
    ir_graph_free(g);
}

static void test_pass_inplace_guards(void **state)
{
    (void)state;
    Graph *g = planned("graph guard {\n"
                       "  input %x: f32[4,16]\n"
                       "  %a = Exp(%x)\n"        /* 0: never into x (a graph input) */
                       "  %b = Relu(%a)\n"       /* 1: a is a graph output: own buffer */
                       "  %c = Sigmoid(%b)\n"    /* 2: b is read again at 3 */
                       "  %d = Add(%c, %b)\n"    /* 3: both die: d takes c's buffer */
                       "  %e = Mul(%d, %d)\n"    /* 4: d read twice: no sharing */
                       "  %y = Neg(%e)\n"        /* 5: y is a graph output */
                       "  output %a\n"
                       "  output %y\n"
                       "}\n",
                       2);
    Value *a = val(g, "a"), *b = val(g, "b"), *c = val(g, "c"), *d = val(g, "d"), *e = val(g, "e");
    assert_int_equal(val(g, "x")->offset, -1);
    assert_int_equal(a->offset, -1);
    assert_int_equal(val(g, "y")->offset, -1);
    assert_true(b->offset >= 0);
    assert_int_not_equal(c->offset, b->offset);
    assert_int_equal(d->offset, c->offset);
    assert_int_not_equal(e->offset, d->offset);
    PlanEntry *en = NULL;
    int n = pass_plan_entries(g, &en);
    assert_int_equal(n, 3); /* b, c (with d), e */
    assert_string_equal(en[0].name, "b");
    assert_string_equal(en[1].name, "c");
    assert_int_equal(en[1].first, 2);
    assert_int_equal(en[1].last, 4);
    assert_string_equal(en[2].name, "e");
    free(en);
    ir_graph_free(g);

    /* Broadcast: p ([4,1]) is not element-aligned with the output; q is, and
     * the second pair (input 1 -> output 0) applies. */
    g = planned("graph bcast {\n"
                "  input %x: f32[4,16]\n"
                "  input %s: f32[4,1]\n"
                "  %p = Exp(%s)\n"
                "  %q = Exp(%x)\n"
                "  %z = Add(%p, %q)\n"
                "  %y = Neg(%z)\n"
                "  output %y\n"
                "}\n",
                2);
    assert_int_equal(val(g, "z")->offset, val(g, "q")->offset);
    assert_int_not_equal(val(g, "z")->offset, val(g, "p")->offset);
    ir_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disjoint_share_offset_zero),
        cmocka_unit_test(test_overlapping_do_not_share),
        cmocka_unit_test(test_equal_lifetimes),
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_gap_reuse),
        cmocka_unit_test(test_zero_size_and_empty),
        cmocka_unit_test(test_check_reports_overlap),
        cmocka_unit_test(test_random_problems),
        cmocka_unit_test(test_best_fit_equal_lifetimes),
        cmocka_unit_test(test_plan_keeps_best_fit_when_smaller),
        cmocka_unit_test(test_plan_keeps_greedy_when_smaller),
        cmocka_unit_test(test_plan_tie_keeps_greedy),
        cmocka_unit_test(test_lower_bound_and_no_reuse),
        cmocka_unit_test(test_pass_inplace_chain),
        cmocka_unit_test(test_pass_workspace),
        cmocka_unit_test(test_pass_extra_reads),
        cmocka_unit_test(test_pass_stored_bytes),
        cmocka_unit_test(test_pass_views),
        cmocka_unit_test(test_pass_view_of_input_and_output),
        cmocka_unit_test(test_pass_inplace_guards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
