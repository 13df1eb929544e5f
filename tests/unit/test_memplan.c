/* test_memplan.c — unit tests of the pure memory planner (passes/memplan.h).
 *
 * Hand-computed plans first (disjoint lifetimes share offset 0, overlapping
 * ones do not, equal lifetimes, 64-byte alignment, zero-size buffers), then
 * 200 random problems checked against two facts that hold for any correct
 * plan: memplan_check finds no overlap, and the arena is at least the largest
 * sum of sizes live at one step (the live-set lower bound).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "passes/memplan.h"

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

static void test_random_problems(void **state)
{
    (void)state;
    enum { MAXN = 40, STEPS = 30 };
    uint32_t seed = 12345;
    for (int iter = 0; iter < 200; iter++) {
        PlanBuf b[MAXN];
        int n = 1 + (int)(lcg(&seed) % MAXN);
        for (int i = 0; i < n; i++) {
            int f = (int)(lcg(&seed) % STEPS);
            int len = (int)(lcg(&seed) % 8);
            b[i].first = f;
            b[i].last = f + len < STEPS ? f + len : STEPS - 1;
            b[i].size = (int64_t)(lcg(&seed) % 5000);
            b[i].offset = -1;
        }
        int64_t total = memplan_greedy(b, n);
        int x = -1, y = -1;
        if (memplan_check(b, n, &x, &y) != 0)
            fail_msg("problem %d: buffers %d and %d overlap", iter, x, y);
        int64_t lower = 0;
        for (int t = 0; t < STEPS; t++) {
            int64_t live = 0;
            for (int i = 0; i < n; i++)
                if (b[i].first <= t && t <= b[i].last) live += b[i].size;
            if (live > lower) lower = live;
        }
        assert_true(total >= lower);
        for (int i = 0; i < n; i++) {
            assert_true(b[i].offset >= 0);
            assert_true(b[i].offset + b[i].size <= total);
        }
    }
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
