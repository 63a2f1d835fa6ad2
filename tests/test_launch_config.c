/* Launch configuration of the GPU ensemble engine (src/host/launch.c),
 * on the host: grid sizes, the grid-stride loop's coverage simulated
 * item by item, chunking of a member range against a memory budget, and
 * the per-member workspace against the kernel header's sizes.  Runs in
 * every build (no device needed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/launch.h"
#include "rc_member.h"
#include "rc_test.h"

/* Simulate the grid-stride loop of a launch of `grid` blocks of `block`
 * threads over `items` items: every item visited exactly once. */
static void check_coverage(long items, int block, int max_grid)
{
    int grid = -1;
    long t, j, threads, bad = -1;
    unsigned char *seen;
    RC_CHECK(rc_launch_grid(items, block, max_grid, &grid) == RC_OK,
             "grid(%ld, %d, %d) failed", items, block, max_grid);
    if (grid < 0)
        return;
    seen = (unsigned char *)calloc((size_t)items + 1, 1);
    if (!seen) {
        RC_CHECK(0, "out of memory for %ld items", items);
        return;
    }
    threads = (long)grid * block;
    for (t = 0; t < threads; ++t)
        for (j = t; j < items; j += threads)
            if (seen[j]++ != 0 && bad < 0)
                bad = j;
    for (j = 0; j < items && bad < 0; ++j)
        if (seen[j] != 1)
            bad = j;
    RC_CHECK(bad < 0,
             "items %ld, block %d, max_grid %d (grid %d): item %ld visited "
             "%d times",
             items, block, max_grid, grid, bad, bad >= 0 ? seen[bad] : 0);
    free(seen);
}

static void test_grid(void)
{
    static const long items[] = {0, 1, 31, 32, 33, 1000003};
    static const int want32[] = {0, 1, 1, 1, 2, 31251};
    int k, g = -1;
    for (k = 0; k < 6; ++k) {
        g = -1;
        RC_CHECK(rc_launch_grid(items[k], 32, 1 << 30, &g) == RC_OK &&
                     g == want32[k],
                 "grid(%ld, block 32) = %d, want %d", items[k], g, want32[k]);
        check_coverage(items[k], 32, 1 << 30);
    }
    /* 1000003 is prime: no block size divides it; the last block holds
     * the remainder */
    RC_CHECK(rc_launch_grid(1000003, 128, 1 << 30, &g) == RC_OK && g == 7813,
             "grid(1000003, 128) = %d, want 7813", g);
    /* beyond one grid: capped, the loop strides over the rest */
    RC_CHECK(rc_launch_grid(1000003, 128, 264, &g) == RC_OK && g == 264,
             "grid capped at 264: %d", g);
    check_coverage(1000003, 128, 264);
    check_coverage(1000003, 32, 1);
    check_coverage(5000, 128, 7);
    RC_CHECK(rc_launch_grid(1, 128, 1, &g) == RC_OK && g == 1,
             "one item: grid %d", g);
    /* a grid that needs more blocks than an int holds is capped */
    RC_CHECK(rc_launch_grid(1L << 40, 1, 65535, &g) == RC_OK && g == 65535,
             "2^40 items: grid %d", g);
    RC_CHECK(rc_launch_grid(-1, 32, 10, &g) == RC_ERR_INVALID,
             "negative items accepted");
    RC_CHECK(rc_launch_grid(10, 0, 10, &g) == RC_ERR_INVALID,
             "block 0 accepted");
    RC_CHECK(rc_launch_grid(10, 32, 0, &g) == RC_ERR_INVALID,
             "max_grid 0 accepted");
    RC_CHECK(rc_launch_grid(10, 32, 10, NULL) == RC_ERR_INVALID,
             "NULL grid accepted");
}

/* The chunks of c tile 0 .. members-1 in order, each within size. */
static void check_tiling(const rc_launch_chunking *c, const char *what)
{
    long k, next = 0, first = -1, cnt = -1;
    for (k = 0; k < c->count; ++k) {
        RC_CHECK(rc_launch_chunk_range(c, k, &first, &cnt) == RC_OK,
                 "%s: chunk %ld of %ld", what, k, c->count);
        RC_CHECK(first == next && cnt >= 1 && cnt <= c->size &&
                     (k == c->count - 1 || cnt == c->size),
                 "%s: chunk %ld = [%ld, +%ld), want start %ld, size %ld",
                 what, k, first, cnt, next, c->size);
        next = first + cnt;
    }
    RC_CHECK(next == c->members, "%s: chunks cover %ld of %ld members",
             what, next, c->members);
    RC_CHECK(rc_launch_chunk_range(c, c->count, &first, &cnt) ==
                     RC_ERR_INVALID &&
                 rc_launch_chunk_range(c, -1, &first, &cnt) == RC_ERR_INVALID,
             "%s: a chunk outside the range was given", what);
}

static void test_chunks(void)
{
    rc_launch_chunking c;
    /* budget smaller than one member: nothing can run */
    RC_CHECK(rc_launch_chunks(10, 1000, 999, 0, &c) == RC_ERR_NOMEM,
             "a budget below one member was accepted");
    RC_CHECK(rc_launch_chunks(10, 1000, 0, 0, &c) == RC_ERR_NOMEM,
             "a zero budget was accepted");
    /* exactly one member's worth */
    RC_CHECK(rc_launch_chunks(3, 1000, 1000, 0, &c) == RC_OK &&
                 c.size == 1 && c.count == 3,
             "budget of one member: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "one member a chunk");
    /* exact multiple: 100 members, 25 a chunk */
    RC_CHECK(rc_launch_chunks(100, 40, 1000, 0, &c) == RC_OK &&
                 c.size == 25 && c.count == 4,
             "exact multiple: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "exact multiple");
    /* remainder chunk: 101 members -> 4 of 25 and 1 */
    RC_CHECK(rc_launch_chunks(101, 40, 1000, 0, &c) == RC_OK &&
                 c.size == 25 && c.count == 5,
             "remainder: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "remainder");
    /* a budget that is not a multiple of the member size rounds down */
    RC_CHECK(rc_launch_chunks(100, 40, 1039, 0, &c) == RC_OK && c.size == 25,
             "budget 1039 / 40: size %ld", c.size);
    /* the cap binds before the budget */
    RC_CHECK(rc_launch_chunks(100000, 8, 1L << 40, 65536, &c) == RC_OK &&
                 c.size == 65536 && c.count == 2,
             "capped: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "capped");
    /* everything fits: one chunk of all members */
    RC_CHECK(rc_launch_chunks(2000, 300, 1L << 30, 65536, &c) == RC_OK &&
                 c.size == 2000 && c.count == 1,
             "one chunk: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "one chunk");
    /* a prime member count against a small budget */
    RC_CHECK(rc_launch_chunks(1000003, 1, 1000, 0, &c) == RC_OK &&
                 c.size == 1000 && c.count == 1001,
             "prime: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "prime");
    /* 0 members: no chunk, whatever the budget */
    RC_CHECK(rc_launch_chunks(0, 1000, 10, 0, &c) == RC_OK && c.count == 0 &&
                 c.size == 0,
             "0 members: size %ld, count %ld", c.size, c.count);
    check_tiling(&c, "0 members");
    RC_CHECK(rc_launch_chunks(-1, 8, 100, 0, &c) == RC_ERR_INVALID &&
                 rc_launch_chunks(10, 0, 100, 0, &c) == RC_ERR_INVALID &&
                 rc_launch_chunks(10, 8, -1, 0, &c) == RC_ERR_INVALID &&
                 rc_launch_chunks(10, 8, 100, -1, &c) == RC_ERR_INVALID &&
                 rc_launch_chunks(10, 8, 100, 0, NULL) == RC_ERR_INVALID,
             "bad chunking arguments accepted");
}

/* Chunks as whole waves (rc_launch_wave_cap), as the GPU launcher cuts
 * them: resident threads from the occupancy, a cap from the budget. */
static void test_waves(void)
{
    long w = -1, k;
    rc_launch_chunking c;
    /* an H100 at 2 blocks of 128 a multiprocessor: 132 * 256 = 33792
     * resident; the default cap 65536 holds one wave, not two */
    RC_CHECK(rc_launch_wave_cap(33792, 65536, &w) == RC_OK && w == 33792,
             "33792 resident, cap 65536: %ld", w);
    /* at 4 blocks a multiprocessor: 67584 resident, more than the cap:
     * the cap itself (one partial wave) */
    RC_CHECK(rc_launch_wave_cap(67584, 65536, &w) == RC_OK && w == 65536,
             "67584 resident, cap 65536: %ld", w);
    RC_CHECK(rc_launch_wave_cap(1000, 1000000, &w) == RC_OK && w == 1000000,
             "exact multiple: %ld", w);
    RC_CHECK(rc_launch_wave_cap(1000, 1000999, &w) == RC_OK && w == 1000000,
             "rounded down to waves: %ld", w);
    RC_CHECK(rc_launch_wave_cap(1, 7, &w) == RC_OK && w == 7, "1: %ld", w);
    RC_CHECK(rc_launch_wave_cap(0, 7, &w) == RC_ERR_INVALID &&
                 rc_launch_wave_cap(7, 0, &w) == RC_ERR_INVALID &&
                 rc_launch_wave_cap(7, 7, NULL) == RC_ERR_INVALID,
             "bad wave arguments accepted");
    /* 100000 members cut at whole waves of 33792: every chunk but the
     * last is exactly one wave */
    RC_CHECK(rc_launch_wave_cap(33792, 65536, &w) == RC_OK &&
                 rc_launch_chunks(100000, 100, 1L << 40, w, &c) == RC_OK &&
                 c.size == 33792 && c.count == 3,
             "waves: size %ld, count %ld", c.size, c.count);
    for (k = 0; k + 1 < c.count; ++k) {
        long first, cnt;
        rc_launch_chunk_range(&c, k, &first, &cnt);
        RC_CHECK(cnt % 33792 == 0, "chunk %ld: %ld members, not whole waves",
                 k, cnt);
    }
    check_tiling(&c, "waves");
}

static void test_workspace(void)
{
    /* (N, nc, neq): the pogo stick (1D, 2 particles, a wall), the
     * cart-pendulum (2D, 2 particles: line, rod, wall), 3 spheres in a
     * 3D box of 6 walls and a rod */
    static const int cases[][3] = {{2, 1, 0}, {4, 3, 2}, {9, 10, 1},
                                   {1, 0, 0}};
    int k;
    rc_launch_workspace ws;
    for (k = 0; k < 4; ++k) {
        int N = cases[k][0], nc = cases[k][1], neq = cases[k][2];
        long d = rc_k_gvi_work_doubles(N, nc, neq) + 2L * N;
        long i = rc_k_gvi_work_ints(N, nc, neq);
        long b = d * (long)sizeof(double) + i * (long)sizeof(int) +
                 2L * N * (long)sizeof(double) +
                 (long)sizeof(rc_k_member_out);
        RC_CHECK(rc_launch_member_workspace(N, nc, neq, &ws) == RC_OK &&
                     ws.doubles == d && ws.ints == i && ws.bytes == b,
                 "workspace(%d, %d, %d) = %ld doubles, %ld ints, %ld bytes; "
                 "want %ld, %ld, %ld",
                 N, nc, neq, ws.doubles, ws.ints, ws.bytes, d, i, b);
        RC_CHECK(ws.state_bytes == 2L * N * (long)sizeof(double) +
                                       (long)sizeof(rc_k_member_out),
                 "workspace(%d, %d, %d): state bytes %ld", N, nc, neq,
                 ws.state_bytes);
        /* the carve stays inside the block it is sized for */
        {
            double *blk = (double *)calloc((size_t)d, sizeof(double));
            int *iblk = (int *)calloc((size_t)i + 1, sizeof(int));
            rc_k_gvi_work w;
            if (blk && iblk) {
                rc_k_gvi_work_carve(&w, N, nc, neq, blk, iblk);
                RC_CHECK(w.imp + N <= blk + d - 2L * N &&
                             w.inA + nc <= iblk + i,
                         "workspace(%d, %d, %d): the carve overruns", N, nc,
                         neq);
            }
            free(blk);
            free(iblk);
        }
    }
    RC_CHECK(rc_launch_member_workspace(0, 1, 0, &ws) == RC_ERR_INVALID &&
                 rc_launch_member_workspace(2, -1, 0, &ws) == RC_ERR_INVALID &&
                 rc_launch_member_workspace(2, 1, 2, &ws) == RC_ERR_INVALID &&
                 rc_launch_member_workspace(2, 1, 0, NULL) == RC_ERR_INVALID,
             "bad workspace arguments accepted");
}

int main(void)
{
    test_grid();
    test_chunks();
    test_waves();
    test_workspace();
    return rc_test_finish("test_launch_config");
}
