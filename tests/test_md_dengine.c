/* The large-system engine (src/host/md/dengine.c), the one orchestration
 * of the step, on its CPU launcher: what the launcher and the tiers may
 * not change.
 *
 *  1. The reduction's two forms (the GPU's tree levels and the CPU's
 *     stream fold) are bitwise equal: both launchers sum in one
 *     association.
 *  2. Launchers: the same steps with the loops in parallel on 1 and 2
 *     threads, serially in reverse and in a strided order (a GPU keeps no
 *     order), with the island kernels' scratch checked (an island writing
 *     past its block is a race on a GPU): positions, momenta, images, the
 *     pair energy and virial and every counter bitwise equal after every
 *     step.  Cases: a periodic gas (3-D, 2-D mixed), walls with gravity,
 *     a dense fluid whose islands go to the host tiers, Moreau reflection
 *     with held contacts, a Lennard-Jones gas and a walled WCA fluid.
 *     The contact screen bounded by the candidates' gaps at their build
 *     (rc_dmd_extend) against every candidate screened: the same
 *     contacts, so the same bits, over every step of those cases
 *     (periodic and walled, 2-D and 3-D, polydisperse, held contacts;
 *     exact collisions with the first scan's predictions kept, and with
 *     builds that keep and drop them in turn, one that drops them after a
 *     motion pass that set no reaches).
 *     The screens in windows of a few dozen candidates (rc_dmd_extend's,
 *     which keep the flags within the reduction array) against one
 *     window: the same bits.  The candidate arrays no larger after the
 *     last build than its count asks for (rc_dmd_fit_set).  A build's
 *     list against every pair of spheres put to the pair test (the CPU
 *     launcher's half search, the GPU's body, the whole search of small
 *     periodic boxes).
 *  3. Tiers: the same islands solved by different exact solvers agree to
 *     round-off, one step at a time from one state (the first engine's
 *     state loaded into the second before each step): the per-thread
 *     dense NNLS against the host tiers (dense tier cut to 2 contacts,
 *     LAPACK and projected Gauss-Seidel beyond), against the batched
 *     medium tier, and held contacts (R3) of islands beyond the
 *     per-thread tier against the per-thread tier.
 * Agreement with an independent implementation is tests/test_md_reference.c
 * (the dense small-system GVI) and with theory tests/test_md_fluid.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/md/dengine.h"
#include "rc_test.h"
#include "rc_md_test.h"

/* The reduction's two forms of one association (rc_md.h): the GPU's
 * tree levels (rc_k_tree_level, run here serially level by level) and
 * the stream fold of the CPU launcher and the host engine
 * (rc_k_tree_push/_total), bitwise, for every count of chunk results up
 * to 4100 (all shapes of the tree up to 2^12 and past it), sums of
 * values of mixed sign and magnitude (so that a different pairing would
 * round differently) and maxima. */
static void tree_forms(void)
{
    enum { NMAX = 4100 };
    static double x[NMAX], a[NMAX];
    unsigned long long seed = 12345;
    long n, i, s, t, bad = 0, rounding_seen = 0;
    int is_max;
    for (i = 0; i < NMAX; ++i)
        x[i] = (rc_test_uniform(&seed) - 0.5) *
               pow(10.0, 8.0 * rc_test_uniform(&seed));
    for (is_max = 0; is_max < 2; ++is_max)
        for (n = 0; n <= NMAX; ++n) {
            rc_k_tree tr;
            double lv, st, seq = 0.0;
            memcpy(a, x, sizeof(double) * (size_t)n);
            for (s = 1; s < n; s *= 2)
                for (t = 0; t < (n + 2 * s - 1) / (2 * s); ++t)
                    rc_k_tree_level(a, n, s, t, is_max);
            lv = n > 0 ? a[0] : 0.0;
            rc_k_tree_init(&tr, is_max);
            for (i = 0; i < n; ++i) {
                rc_k_tree_push(&tr, x[i]);
                seq = is_max ? rc_fmax(seq, x[i]) : seq + x[i];
            }
            st = rc_k_tree_total(&tr);
            bad += memcmp(&lv, &st, sizeof lv) != 0;
            rounding_seen += !is_max && st != seq;
        }
    RC_CHECK(bad == 0, "reduction tree: %ld counts where the level form "
                       "and the stream form differ", bad);
    /* the test can tell pairings apart: the tree and a running sum
     * round differently for most counts */
    RC_CHECK(rounding_seen > 1000, "reduction tree: only %ld counts where "
                                   "the tree and a running sum differ",
             rounding_seen);
    printf("reduction tree: level and stream forms bitwise equal for 0..%d "
           "chunk results (tree != running sum for %ld counts)\n",
           NMAX, rounding_seen);
}

/* How an engine runs: the CPU launcher's threads, item order and
 * checks, and the island tiers' bounds (0: the case's). */
typedef struct variant {
    const char *what;
    int threads, order, check, dense_max, lapack_max;
    int screen_all; /* every candidate screened, not only the near ones */
    long screen_window; /* candidates a screen window takes (0: the
                           engine's choice, < 0: one window) */
} variant;

/* Exact collisions' predictions kept at every other build, in the engines
 * start() makes while set (rc_dmd.pred_alternate). */
static int g_pred_alternate;

static int start(const setup *s, const variant *w, rc_md *md, rc_dmd *g)
{
    const rc_dmd_ops *ops;
    void *ctx;
    if (w->dense_max > 0)
        md->par.dense_max = w->dense_max;
    if (w->lapack_max > 0)
        md->par.lapack_max = w->lapack_max;
    md->par.threads = w->threads;
    RC_CHECK(rc_dmd_cpu_launcher(&ops, &ctx) == RC_OK, "launcher");
    rc_dmd_cpu_threads(ctx, w->threads);
    rc_dmd_cpu_order(ctx, w->order);
    rc_dmd_cpu_check(ctx, w->check);
    if (rc_dmd_init(g, md, ops, ctx) != RC_OK) {
        RC_CHECK(0, "%s (%s): engine: %s", s->what, w->what, md->msg);
        return -1;
    }
    g->screen_all = w->screen_all;
    g->screen_window = w->screen_window;
    g->pred_alternate = g_pred_alternate;
    g->count_reach = 1;
    return 0;
}

/* What a run used, over the cases (test that each path is reached). */
static long g_host_islands, g_medium, g_held, g_pgs;
/* builds within exact steps after an island round (the islands then run
 * again, every one laid out anew) */
static long g_isl_rebuilds;
/* the overlap checks against every pair, and those with an overlap */
static long g_overlap_checks, g_overlap_seen;
static long g_screened_near, g_screened_all; /* bounded vs every one */
static long g_reach_skipped; /* pairs the bounded run passed over */
static long g_pred_skipped; /* ... of them with exact collisions */
static long g_scans_one, g_scans_windows; /* one screen window vs many */
static long g_reach_only; /* builds that dropped the predictions after a
                             motion pass that set no reaches */

/* The candidates' one byte (cand_m: image and mark of A, rc_k_md.h):
 * after a build, every candidate's shift L m gives at the build's
 * positions the minimum-image difference rc_k_box_delta computes, bit for
 * bit, with its mark of A set or not; pairs across edges and corners of
 * the box (two or three axes shifted) are among them.  And their order
 * without a pair potential: no index array (near), the list itself in
 * its gap buckets' order, each candidate in the bucket of its gap at the
 * build, each bucket sorted by (i, j), so that the screens read the
 * candidates in the order the index gave before; and the build's cell
 * list and offsets in qbuild. */
static void cand_bytes(void)
{
    setup s = {"periodic gas 3-D", 3, 500, RC_LATTICE_FCC, 1, 0, 100, 64,
               0, 0.3, 0.0, 0.02, 1, 0, 0, 0, 0, 0};
    const variant one = {"1 thread", 1, RC_DMD_CPU_FORWARD, 0, 0, 0, 0, 0};
    rc_md md;
    rc_dmd g;
    long e, bad = 0, corners = 0, order_bad = 0;
    int mark;
    memset(&md, 0, sizeof md);
    memset(&g, 0, sizeof g);
    if (make(&s, &md, NULL) != 0)
        return;
    if (start(&s, &one, &md, &g) != 0 || rc_dmd_step(&g) != RC_OK) {
        RC_CHECK(0, "candidate bytes: %s", md.msg);
        goto done;
    }
    RC_CHECK(g.v.ncand > 0, "candidate bytes: no candidates");
    RC_CHECK(g.v.near == NULL, "hard spheres: the candidates kept an index");
    /* the build's cell list and pair offsets in qbuild (3-D, no pair
     * potential): no arrays of their own (the 2-D and pair-potential
     * cases of main's comparisons take those) */
    RC_CHECK(!g.own_cell_of && !g.own_cell_idx && !g.own_cell_start &&
                 !g.own_pair_off,
             "hard spheres 3-D: the build's cells took arrays of their own");
    for (e = 0; e < g.v.ncand; ++e) {
        const double *qa = g.v.qbuild + 3L * g.v.cand_i[e],
                     *qb = g.v.qbuild + 3L * g.v.cand_j[e];
        double del[3], gap;
        long b = 0;
        int key;
        rc_k_box_delta(&g.v.box, qa, qb, del);
        gap = sqrt(del[0] * del[0] + del[1] * del[1] + del[2] * del[2]) -
              g.v.radius[g.v.cand_i[e]] - g.v.radius[g.v.cand_j[e]];
        key = !(gap > 0.0) ? 0
              : gap >= (RC_K_MD_NEAR - 1) * g.v.near_w
                  ? RC_K_MD_NEAR - 1
                  : (int)(gap / g.v.near_w);
        while (g.near_start[b + 1] <= e)
            ++b;
        order_bad += key != (int)b;
        if (e > g.near_start[b])
            order_bad += !(g.v.cand_i[e - 1] < g.v.cand_i[e] ||
                           (g.v.cand_i[e - 1] == g.v.cand_i[e] &&
                            g.v.cand_j[e - 1] < g.v.cand_j[e]));
    }
    RC_CHECK(order_bad == 0 && g.near_start[RC_K_MD_NEAR] == g.v.ncand,
             "candidates: %ld out of their bucket or (i, j) order", order_bad);
    for (e = 0; e < g.v.ncand; ++e) {
        const double *qa = g.v.qbuild + 3L * g.v.cand_i[e],
                     *qb = g.v.qbuild + 3L * g.v.cand_j[e];
        double del[3], sh[3];
        unsigned char keep = g.v.cand_m[e];
        int k, shifted = 0;
        rc_k_box_delta(&g.v.box, qa, qb, del);
        for (mark = 0; mark < 2; ++mark) {
            g.v.cand_m[e] = (unsigned char)(mark ? keep | RC_K_MD_IN_A
                                                 : keep & ~RC_K_MD_IN_A);
            rc_k_md_cand_shift(&g.v, e, sh);
            for (k = 0; k < 3; ++k)
                if ((qa[k] - qb[k]) - sh[k] != del[k])
                    ++bad;
        }
        for (k = 0; k < 3; ++k)
            shifted += sh[k] != 0.0;
        corners += shifted >= 2;
        g.v.cand_m[e] = keep;
    }
    RC_CHECK(bad == 0,
             "candidate bytes: %ld coordinates differ from the minimum image",
             bad);
    RC_CHECK(corners > 0, "candidate bytes: no pair across an edge or corner");
done:
    rc_dmd_free(&g);
    rc_md_free(&md);
}

/* The candidate list of a build against every pair tested: after the
 * first step, whose build took the start's positions (inside the box, so
 * wrapping left them as they were), the list holds exactly the pairs
 * i < j that the pair test (rc_k_pair_close) accepts among all
 * n (n - 1) / 2, each once.  The CPU launcher's half
 * search (forward, 1 and 2 threads; cpu_pairs_half), the GPU's body
 * (reversed order) and the whole search where a periodic axis has fewer
 * than 3 cells; periodic and walled, 2-D and 3-D, mixed radii, pairs
 * across faces, edges and corners. */
static int pair_cmp(const void *a, const void *b)
{
    const int *x = (const int *)a, *y = (const int *)b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0])
                        : (x[1] > y[1]) - (x[1] < y[1]);
}

static void pairs_all(void)
{
    setup cases[] = {
        {"periodic 3-D mixed", 3, 1200, RC_LATTICE_RANDOM, 1, 0, 100, 64, 1,
         0.3, 0.0, 0.02, 1, 0, 0, 0, 0, 0},
        {"periodic 2-D mixed", 2, 900, RC_LATTICE_RANDOM, 1, 0, 100, 64, 1,
         0.4, 0.0, 0.02, 1, 0, 0, 0, 0, 0},
        {"walls 3-D mixed", 3, 800, RC_LATTICE_RANDOM, 0, 0, 100, 64, 1, 0.2,
         0.0, 0.02, 1, 0, 0, 0, 0, 0},
        {"walls 2-D", 2, 700, RC_LATTICE_RANDOM, 0, 0, 100, 64, 0, 0.35, 0.0,
         0.02, 1, 0, 0, 0, 0, 0},
        {"periodic 3-D, 3 cells an axis", 3, 40, RC_LATTICE_RANDOM, 1, 0, 100,
         64, 0, 0.3, 0.0, 0.02, 1, 0, 0, 0, 0, 0},
        {"periodic 3-D, 2 cells an axis", 3, 20, RC_LATTICE_RANDOM, 1, 0, 100,
         64, 0, 0.3, 0.0, 0.02, 1, 0, 0, 0, 0, 0},
    };
    const variant vs[] = {
        {"1 thread", 1, RC_DMD_CPU_FORWARD, 0, 0, 0, 0, 0},
        {"2 threads", 2, RC_DMD_CPU_FORWARD, 0, 0, 0, 0, 0},
        {"reversed", 1, RC_DMD_CPU_REVERSE, 0, 0, 0, 0, 0},
    };
    size_t c, w;
    int seen_small = 0, seen_two = 0, seen_plain = 0;
    for (c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (w = 0; w < sizeof vs / sizeof vs[0]; ++w) {
            const setup *s = &cases[c];
            rc_md md;
            rc_dmd g;
            long i, j, e, nexp = 0, bad = 0, cap;
            int *exp = NULL, *got = NULL, k;
            double lim[3], *q0 = NULL;
            memset(&md, 0, sizeof md);
            memset(&g, 0, sizeof g);
            if (make(s, &md, NULL) != 0)
                continue;
            q0 = (double *)malloc(sizeof(double) * (size_t)(s->n * s->dim));
            if (!q0) {
                RC_CHECK(0, "pairs: out of memory");
                goto next;
            }
            memcpy(q0, md.q, sizeof(double) * (size_t)(s->n * s->dim));
            if (start(s, &vs[w], &md, &g) != 0)
                goto next;
            if (rc_dmd_step(&g) != RC_OK) {
                RC_CHECK(0, "pairs (%s): %s", s->what, md.msg);
                goto next;
            }
            RC_CHECK(g.rebuilds == 1, "pairs (%s): %ld builds in one step",
                     s->what, g.rebuilds);
            rc_k_pair_limits(&g.v.box, lim);
            cap = (long)s->n * (s->n - 1) / 2 + 1;
            exp = (int *)malloc(sizeof(int) * 2 * (size_t)cap);
            got = (int *)malloc(sizeof(int) * 2 * (size_t)(g.v.ncand + 1));
            if (!exp || !got) {
                RC_CHECK(0, "pairs: out of memory");
                goto next;
            }
            for (i = 0; i < s->n; ++i)
                for (j = i + 1; j < s->n; ++j)
                    if (rc_k_pair_close(&g.v.box, lim, q0 + i * s->dim,
                                        q0 + j * s->dim, g.v.cut2, s->dim)) {
                        exp[2 * nexp] = (int)i;
                        exp[2 * nexp + 1] = (int)j;
                        ++nexp;
                    }
            for (e = 0; e < g.v.ncand; ++e) {
                got[2 * e] = g.v.cand_i[e];
                got[2 * e + 1] = g.v.cand_j[e];
            }
            qsort(got, (size_t)g.v.ncand, 2 * sizeof(int), pair_cmp);
            if (g.v.ncand != nexp)
                bad = 1;
            else
                for (e = 0; e < 2 * nexp; ++e)
                    bad += got[e] != exp[e];
            RC_CHECK(bad == 0 && nexp > 0,
                     "pairs (%s, %s): %ld candidates, %ld pairs within the "
                     "cutoff, %ld differ",
                     s->what, vs[w].what, g.v.ncand, nexp, bad);
            {
                int wide = s->periodic;
                for (k = 0; k < s->dim; ++k) {
                    seen_small += s->periodic && g.v.nc[k] == 3;
                    seen_two += s->periodic && g.v.nc[k] < 3;
                    wide &= g.v.nc[k] >= 9;
                }
                /* the half search's runs without the minimum image's
                 * checks (cpu_half_cell's plain) */
                seen_plain += wide;
            }
        next:
            free(q0);
            free(exp);
            free(got);
            rc_dmd_free(&g);
            rc_md_free(&md);
        }
    /* the cases reach both searches' edge cases */
    RC_CHECK(seen_small > 0 && seen_two > 0 && seen_plain > 0,
             "pairs: no periodic axis of 3 cells (%d) or of fewer (%d), or "
             "no periodic grid of 9 cells an axis (%d)",
             seen_small, seen_two, seen_plain);
    printf("candidate lists = every pair within the cutoff: %d cases, 1 and "
           "2 threads and reversed\n",
           (int)(sizeof cases / sizeof cases[0]));
}

/* A state that becomes non-finite fails the step with RC_ERR_NONFINITE
 * naming the first bad sphere, with exact collisions (caught by the
 * motion pass's reduction, rc_k_md_max_guard) and with GVI (the check at
 * the step's end); and the end check of exact collisions, over A's
 * contacts alone (rc_k_md_finite_con), names the first bad endpoint. */
static void nonfinite(void)
{
    int exact;
    for (exact = 0; exact < 2; ++exact) {
        setup s = {"periodic gas 3-D", 3, 500, RC_LATTICE_FCC, 1, 0, 100, 64,
                   0, 0.3, 0.0, 0.02, 1, 0, 0, 0, 0, 0};
        const variant one = {"1 thread", 1, RC_DMD_CPU_FORWARD, 0, 0, 0, 0,
                             0};
        rc_md md;
        rc_dmd g;
        rc_status st;
        char want[64];
        memset(&md, 0, sizeof md);
        memset(&g, 0, sizeof g);
        s.exact = exact;
        if (make(&s, &md, NULL) != 0)
            continue;
        if (start(&s, &one, &md, &g) != 0 || rc_dmd_step(&g) != RC_OK ||
            rc_dmd_step(&g) != RC_OK) {
            RC_CHECK(0, "non-finite: the steps before: %s", md.msg);
            goto done;
        }
        /* two spheres, the later one first: the message names the first */
        g.v.p[3 * 377 + 1] = NAN;
        g.v.p[3 * 123 + 2] = INFINITY;
        st = rc_dmd_step(&g);
        snprintf(want, sizeof want, "first at particle 123");
        RC_CHECK(st == RC_ERR_NONFINITE && strstr(md.msg, want) != NULL &&
                     strstr(md.msg, "at step 3") != NULL,
                 "non-finite (%s): status %d, message '%s'",
                 exact ? "exact" : "gvi", (int)st, md.msg);
    done:
        rc_dmd_free(&g);
        rc_md_free(&md);
    }
    {
        /* the end check's body: contacts (1, 3), the wall contact of 2,
         * (0, 2); 3's momentum and 2's position bad */
        double qp[12], p[12], red[3];
        rc_k_md_contact con[3];
        rc_k_md v;
        int k;
        memset(&v, 0, sizeof v);
        memset(con, 0, sizeof con);
        for (k = 0; k < 12; ++k)
            qp[k] = p[k] = 0.5 * k;
        p[3 * 3 + 1] = NAN;
        qp[3 * 2 + 0] = -INFINITY;
        v.n = 4;
        v.dim = 3;
        v.qp = qp;
        v.p = p;
        v.red = red;
        v.con = con;
        con[0].i = 1, con[0].j = 3;
        con[1].i = 2, con[1].j = -1;
        con[2].i = 0, con[2].j = 2;
        for (k = 0; k < 3; ++k)
            rc_k_md_finite_con(&v, k);
        RC_CHECK(red[0] == 1.0 && red[1] == 2.0 && red[2] == 2.0,
                 "finite_con: %g %g %g, expected 1 2 2 (n - the bad sphere)",
                 red[0], red[1], red[2]);
        p[3 * 3 + 1] = 1.0;
        qp[3 * 2 + 0] = 1.0;
        for (k = 0; k < 3; ++k)
            rc_k_md_finite_con(&v, k);
        RC_CHECK(red[0] == 0.0 && red[1] == 0.0 && red[2] == 0.0,
                 "finite_con: a finite state flagged (%g %g %g)", red[0],
                 red[1], red[2]);
    }
    printf("non-finite states: named at the step they appear (exact, gvi)\n");
}

/* The CPU launcher's sort by a one-digit key: over the identity (the
 * candidates by gap, written straight into val) and over any other
 * values (through its scratch) the same stable order as an insertion
 * sort written here. */
static void sort_identity(void)
{
    /* 5000 items: one thread's sort; 100 000 on 2 threads: each thread
     * counts and places a block (cpu_sort_by_key) */
    enum { N = 100000 };
    static int k1[N], k2[N], v1[N], v2[N], rk[N], rv[N];
    const long sizes[2] = {5000, N};
    int c;
    for (c = 0; c < 2; ++c) {
        const rc_dmd_ops *ops;
        void *ctx;
        long i, bad = 0, m = 0, n = sizes[c];
        int key;
        RC_CHECK(rc_dmd_cpu_launcher(&ops, &ctx) == RC_OK, "launcher");
        rc_dmd_cpu_threads(ctx, c == 0 ? 1 : 2);
        for (i = 0; i < n; ++i) {
            k1[i] = k2[i] = (int)((i * 7919 + (i >> 3)) % 13); /* 4 bits */
            v1[i] = (int)i;           /* the identity */
            v2[i] = (int)(3 * i + 1); /* not */
        }
        /* reference: stable by construction, key by key in input order */
        for (key = 0; key < 16; ++key)
            for (i = 0; i < n; ++i)
                if (k1[i] == key) {
                    rk[m] = key;
                    rv[m++] = (int)i;
                }
        RC_CHECK(ops->sort_by_key(ctx, k1, v1, n, 4) == 0 &&
                     ops->sort_by_key(ctx, k2, v2, n, 4) == 0,
                 "sort: %s", ops->error(ctx));
        for (i = 0; i < n; ++i)
            bad += k1[i] != rk[i] || v1[i] != rv[i] || k2[i] != rk[i] ||
                   v2[i] != 3 * rv[i] + 1;
        RC_CHECK(bad == 0 && m == n,
                 "one-digit sorts of %ld: %ld items out of stable order", n,
                 bad);
        ops->destroy(ctx);
    }
}

/* The CPU launcher's sort by keys of two and three digits (19 and 25
 * bits: the closing rounds' list, keyed by candidate, and wider), on 1
 * and 2 threads (each thread counts and places a block a digit,
 * cpu_sort_digits), against a stable reference (qsort by key, then by
 * input position): the one order on any thread count.  Keys repeat (a
 * hundred values over 20 000 items), so a pass that lost stability would
 * show. */
typedef struct { int key, pos; } key_pos;
static int key_pos_cmp(const void *a, const void *b)
{
    const key_pos *x = (const key_pos *)a, *y = (const key_pos *)b;
    return x->key != y->key ? (x->key < y->key ? -1 : 1)
                            : (x->pos > y->pos) - (x->pos < y->pos);
}

static void sort_digits(void)
{
    enum { N = 20000 };
    static int k[N], val[N];
    static key_pos ref[N];
    int bits[2] = {19, 25}, b, thr;
    for (b = 0; b < 2; ++b)
        for (thr = 1; thr <= 2; ++thr) {
            const rc_dmd_ops *ops;
            void *ctx;
            long i, bad = 0;
            unsigned long long seed = 99 + (unsigned long long)b;
            int distinct[100];
            for (i = 0; i < 100; ++i)
                distinct[i] = (int)(rc_test_uniform(&seed) *
                                    (double)(1L << bits[b]));
            for (i = 0; i < N; ++i) {
                k[i] = distinct[(long)(rc_test_uniform(&seed) * 100.0) % 100];
                val[i] = (int)(5 * i + 3);
                ref[i].key = k[i];
                ref[i].pos = (int)i;
            }
            qsort(ref, N, sizeof ref[0], key_pos_cmp);
            RC_CHECK(rc_dmd_cpu_launcher(&ops, &ctx) == RC_OK, "launcher");
            rc_dmd_cpu_threads(ctx, thr);
            RC_CHECK(ops->sort_by_key(ctx, k, val, N, bits[b]) == 0,
                     "sort: %s", ops->error(ctx));
            for (i = 0; i < N; ++i)
                bad += k[i] != ref[i].key || val[i] != 5 * ref[i].pos + 3;
            RC_CHECK(bad == 0,
                     "%d-bit sort of %d on %d threads: %ld items out of "
                     "stable order", bits[b], N, thr, bad);
            ops->destroy(ctx);
        }
}

/* Steps of a comparison.  The sanitizer build (about 30x slower) runs a
 * third of them, at least 10: the same per-step bitwise checks over the
 * first steps, where the islands, the tiers and the rebuilds of every
 * case already occur; the Release build runs them all. */
static long rc_test_steps(long steps)
{
#ifdef RICOCHET_SANITIZE_BUILD
    return steps / 3 > 10 ? steps / 3 : (steps < 10 ? steps : 10);
#else
    return steps;
#endif
}

/* The largest overlap of any two spheres of md's host state (wrapped
 * into the box, after rc_dmd_sync), by every pair and the minimum image
 * by rounding: apart from the engine's candidates and its gap. */
static double brute_overlap(const rc_md *md)
{
    double w = 0.0;
    int i, j, k, d = md->dim;
    for (i = 0; i < md->n; ++i)
        for (j = i + 1; j < md->n; ++j) {
            double s = 0.0;
            for (k = 0; k < d; ++k) {
                double u = md->q[i * d + k] - md->q[j * d + k];
                if (md->box.periodic[k])
                    u -= md->box.L[k] * nearbyint(u / md->box.L[k]);
                s += u * u;
            }
            w = fmax(w, md->radius[i] + md->radius[j] - sqrt(s));
        }
    return w;
}

/* Every OBSERVE_EVERY steps a comparison takes both engines' observables
 * (rc_dmd_observe, with the overlap check, which reads only the buckets
 * the motion since the build can have closed, or every candidate where
 * the engine screens every one) and compares them bitwise, and where b
 * screens every candidate a's overlap with every pair's. */
#define OBSERVE_EVERY 7

/* Engines a and b on one start, s->steps steps.  tol < 0: bitwise after
 * every step; tol >= 0: one step at a time from a's state, positions and
 * momenta within tol (the counters may differ where the solvers do). */
static void compare(const setup *s, const variant *wa, const variant *wb,
                    double tol)
{
    rc_md ma, mb;
    rc_dmd a, b;
    int step, same = 1;
    size_t N = (size_t)s->n * (size_t)s->dim;
    double worst = 0.0;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&ma, 0, sizeof ma);
    memset(&mb, 0, sizeof mb);
    if (make(s, &ma, &mb) != 0 || start(s, wa, &ma, &a) != 0 ||
        start(s, wb, &mb, &b) != 0)
        goto done;
    for (step = 0; step < rc_test_steps(s->steps) && same; ++step) {
        rc_status sa, sb;
        if (tol >= 0.0) {
            memcpy(mb.q, ma.q, sizeof(double) * N);
            memcpy(mb.p, ma.p, sizeof(double) * N);
            memcpy(mb.image, ma.image, sizeof(int) * N);
            if (rc_dmd_load(&b) != RC_OK) {
                RC_CHECK(0, "%s: load: %s", s->what, mb.msg);
                break;
            }
        }
        sa = rc_dmd_step(&a);
        sb = rc_dmd_step(&b);
        if (sa != RC_OK || sb != RC_OK) {
            /* every case's steps succeed: two engines failing alike
             * would otherwise end the comparison quietly */
            RC_CHECK(0, "%s: step %d: %s %d (%s), %s %d (%s)", s->what, step,
                     wa->what, sa, ma.msg, wb->what, sb, mb.msg);
            break;
        }
        if (rc_dmd_sync(&a) != RC_OK || rc_dmd_sync(&b) != RC_OK) {
            RC_CHECK(0, "%s: sync: %s %s", s->what, ma.msg, mb.msg);
            break;
        }
        if (tol >= 0.0) {
            size_t k;
            double d = 0.0;
            for (k = 0; k < N; ++k)
                d = fmax(d, fmax(fabs(ma.q[k] - mb.q[k]),
                                 fabs(ma.p[k] - mb.p[k])));
            worst = fmax(worst, d);
            same = d <= tol;
            RC_CHECK(same, "%s: step %d: %s and %s differ by %.3g",
                     s->what, step, wa->what, wb->what, d);
            continue;
        }
        same = memcmp(ma.q, mb.q, sizeof(double) * N) == 0 &&
               memcmp(ma.p, mb.p, sizeof(double) * N) == 0 &&
               memcmp(ma.image, mb.image, sizeof(int) * N) == 0 &&
               ma.epot_pair == mb.epot_pair &&
               ma.virial_force == mb.virial_force &&
               ma.step.virial == mb.step.virial &&
               ma.step.collisions == mb.step.collisions &&
               ma.step.wall_collisions == mb.step.wall_collisions &&
               ma.step.passes == mb.step.passes &&
               ma.step.islands == mb.step.islands &&
               ma.step.largest_island == mb.step.largest_island &&
               ma.step.rounds == mb.step.rounds &&
               ma.step.held == mb.step.held &&
               ma.step.pgs_islands == mb.step.pgs_islands &&
               ma.step.lapack_islands == mb.step.lapack_islands;
        if (same && step % OBSERVE_EVERY == OBSERVE_EVERY - 1) {
            double oa[8], ob[8];
            if (rc_dmd_observe(&a, oa, oa + 1, oa + 2, NULL, oa + 5) !=
                    RC_OK ||
                rc_dmd_observe(&b, ob, ob + 1, ob + 2, NULL, ob + 5) !=
                    RC_OK) {
                RC_CHECK(0, "%s: observe: %s %s", s->what, ma.msg, mb.msg);
                break;
            }
            RC_CHECK(memcmp(oa, ob, sizeof(double) * 6) == 0,
                     "%s: step %d: observables differ between %s and %s "
                     "(overlap %.17g, %.17g)",
                     s->what, step, wa->what, wb->what, oa[5], ob[5]);
            if (wb->screen_all) {
                /* the engine's gap from unwrapped positions and the
                 * candidates' shifts, the brute force's from wrapped
                 * ones: both round within 1e-12 of the box's scale */
                double bo = fmax(0.0, brute_overlap(&ma));
                RC_CHECK(fabs(oa[5] - bo) <= 1e-12 * (1.0 + ma.box.L[0]),
                         "%s: step %d: overlap %.17g, every pair's %.17g",
                         s->what, step, oa[5], bo);
                g_overlap_checks++;
                g_overlap_seen += oa[5] > 0.0;
            }
        }
        RC_CHECK(same,
                 "%s: step %d differs between %s and %s: collisions "
                 "%ld/%ld passes %ld/%ld islands %ld/%ld largest %ld/%ld "
                 "rounds %ld/%ld held %ld/%ld",
                 s->what, step, wa->what, wb->what, ma.step.collisions,
                 mb.step.collisions, ma.step.passes, mb.step.passes,
                 ma.step.islands, mb.step.islands, ma.step.largest_island,
                 mb.step.largest_island, ma.step.rounds, mb.step.rounds,
                 ma.step.held, mb.step.held);
    }
    RC_CHECK(ma.total.collisions + ma.total.wall_collisions > 0,
             "%s: no collisions: the comparison would be empty", s->what);
    g_reach_only += a.kernel_calls[RC_DMD_X_REACH_ONLY];
    if (a.v.exact)
        g_isl_rebuilds += a.isl_rebuilds;
    /* summary.json's engine bytes: the arrays the launcher holds, less
     * their one extra element each and the gap buckets' counts (under
     * 1 KiB) */
    {
        long live = rc_dmd_cpu_live_bytes(a.ctx);
        double acc = rc_dmd_bytes(&a);
        RC_CHECK(live >= acc && live - acc <= 1024.0,
                 "%s: rc_dmd_bytes %.0f, the launcher holds %ld bytes",
                 s->what, acc, live);
    }
    /* the candidate arrays, after the last build, no larger than that
     * build's count asks for (rc_dmd_fit_set): from the lattice the
     * count falls (6 a sphere at eta = 0.45, about 4.4 once melted), and
     * arrays kept at the lattice's size would fail this in the dense
     * cases */
    {
        long need = a.v.ncand + 1;
        RC_CHECK(a.cap_cand <= need + need / 4 + 1024 + need / 8,
                 "%s: %ld candidates in arrays for %ld", s->what,
                 a.v.ncand, a.cap_cand);
    }
    if (wb->screen_window > 0) {
        g_scans_one += a.scans;
        g_scans_windows += b.scans;
    }
    g_host_islands += a.host_islands + b.host_islands;
    g_medium += ma.total.lapack_islands + mb.total.lapack_islands;
    g_held += ma.total.held + mb.total.held;
    g_pgs += ma.total.pgs_islands + mb.total.pgs_islands;
    if (wb->screen_all) {
        g_screened_near += a.screened;
        g_screened_all += b.screened;
        g_reach_skipped += a.reach_skipped;
        if (a.v.exact)
            g_pred_skipped += a.reach_skipped;
        RC_CHECK(b.reach_skipped == 0,
                 "%s: the full screen skipped %ld pairs by reach", s->what,
                 b.reach_skipped);
    }
    printf("%-30s %-16s vs %-18s %4d steps, %7ld collisions, %5ld wall, "
           "largest island %3ld, held %ld, host-tier islands %ld/%ld, "
           "medium solves %ld/%ld: ",
           s->what, wa->what, wb->what, step, ma.total.collisions,
           ma.total.wall_collisions, ma.total.largest_island, ma.total.held,
           a.host_islands, b.host_islands, ma.total.lapack_islands,
           mb.total.lapack_islands);
    if (tol >= 0.0)
        printf("one step at a time, |dq|, |dp| <= %.2g\n", worst);
    else
        printf("bitwise\n");
done:
    rc_dmd_free(&a);
    rc_dmd_free(&b);
    rc_md_free(&ma);
    rc_md_free(&mb);
}

/* Exact collisions: simultaneous impacts in an island of more contacts
 * than the per-thread NNLS takes (dense_max, 2 here).  Two Newton's
 * cradles of five spheres a diameter and 1/8 apart, the end spheres
 * moving inwards at speed 1 (positions and times exact in binary): the
 * ends meet their neighbours at t = 1/8 together, those meet the middle
 * sphere at 1/4 together (one group of two contacts, solved by the
 * NNLS), and are thrown back onto the ends at 3/8.  One step of 1/2:
 * each cradle is one island of four contacts, and after the step the
 * spheres are where they started with the end spheres' velocities
 * reversed (the elastic cradle's analytic outcome).  The islands' scratch
 * is checked (an island writing past its block into the next one's
 * fails the step): before, an island beyond dense_max placed the NNLS's
 * work m^2 doubles into its block, sized for dense_max^2, and wrote past
 * it (found by AddressSanitizer in an island of 2 623 contacts). */
static void exact_group_scratch(void)
{
    enum { N = 10 };
    const double x[5] = {2.75, 3.875, 5.0, 6.125, 7.25};
    setup s;
    variant w = {"1 thread, checked", 1, RC_DMD_CPU_FORWARD, 1, 2, 0, 0, 0};
    double q[3 * N], p[3 * N], m[N], r[N];
    rc_k_box box;
    rc_md md;
    rc_dmd g;
    rc_status st;
    int i, k;
    double worst = 0.0;
    memset(&s, 0, sizeof s);
    s.what = "exact, simultaneous impacts beyond dense_max";
    memset(&box, 0, sizeof box);
    box.dim = 3;
    for (k = 0; k < 3; ++k) {
        box.L[k] = 16.0;
        box.periodic[k] = 1;
    }
    for (i = 0; i < N; ++i) {
        q[3 * i] = x[i % 5];
        q[3 * i + 1] = i < 5 ? 4.0 : 12.0;
        q[3 * i + 2] = 8.0;
        p[3 * i] = i % 5 == 0 ? 1.0 : i % 5 == 4 ? -1.0 : 0.0;
        p[3 * i + 1] = p[3 * i + 2] = 0.0;
        m[i] = 1.0;
        r[i] = 0.5;
    }
    {
        rc_md_params par;
        memset(&par, 0, sizeof par);
        par.dt = 0.5;
        par.threads = 1;
        par.max_passes = 100;
        par.exact = 1;
        par.dense_max = 64;
        par.lapack_max = 512;
        par.pgs_tol = 1e-12;
        par.pgs_max_iter = 100000;
        memset(&md, 0, sizeof md);
        memset(&g, 0, sizeof g);
        if (rc_md_init(&md, &box, N, q, p, m, r, &par) != RC_OK) {
            RC_CHECK(0, "%s: set-up: %s", s.what, md.msg);
            return;
        }
    }
    if (start(&s, &w, &md, &g) != 0)
        goto done;
    st = rc_dmd_step(&g);
    RC_CHECK(st == RC_OK, "%s: step: %s", s.what, md.msg);
    if (st != RC_OK || rc_dmd_sync(&g) != RC_OK)
        goto done;
    RC_CHECK(md.step.collisions == 2 * 6,
             "%s: %ld impacts, not 12 (six a cradle)", s.what,
             (long)md.step.collisions);
    for (i = 0; i < N; ++i) {
        double want = i % 5 == 0 ? -1.0 : i % 5 == 4 ? 1.0 : 0.0;
        worst = fmax(worst, fabs(md.p[3 * i] - want));
        worst = fmax(worst, fabs(md.q[3 * i] - x[i % 5]));
        for (k = 1; k < 3; ++k)
            worst = fmax(worst, fabs(md.p[3 * i + k]));
    }
    /* the group's NNLS solves to 1e-12 of its scale (rc_k_mdx_island) */
    RC_CHECK(worst <= 1e-12,
             "%s: the cradles end %.3g from their analytic state", s.what,
             worst);
    printf("%s: both cradles reversed to %.1e\n", s.what, worst);
done:
    rc_dmd_free(&g);
    rc_md_free(&md);
}

int main(void)
{
    /* what, dim, n, lattice, periodic, moreau, max_passes, dense_max,
     * mixed, eta, gravity, dt, steps, lapack_max, reload (unused), order
     * (unused), pair, exact */
    setup gas = {"periodic gas 3-D", 3, 2048, RC_LATTICE_FCC, 1, 0, 100, 64,
                 0, 0.3, 0.0, 0.02, 150, 0, 0, 0, 0, 0};
    setup gas2 = {"periodic gas 2-D, mixed", 2, 1600, RC_LATTICE_RANDOM, 1, 0,
                  100, 64, 1, 0.4, 0.0, 0.02, 150, 0, 0, 0, 0, 0};
    setup walls = {"walls + gravity 3-D", 3, 1000, RC_LATTICE_RANDOM, 0, 0,
                   100, 64, 1, 0.2, 2.0, 0.01, 200, 0, 0, 0, 0, 0};
    setup dense = {"dense, tiers cut to 2", 3, 864, RC_LATTICE_FCC, 1, 0, 100,
                   2, 0, 0.45, 0.0, 0.02, 80, 2, 0, 0, 0, 0};
    setup moreau = {"walls, moreau 1 pass", 2, 900, RC_LATTICE_RANDOM, 0, 1, 1,
                    64, 1, 0.45, 5.0, 0.02, 120, 64, 0, 0, 0, 0};
    setup lj = {"Lennard-Jones gas 3-D", 3, 2048, RC_LATTICE_FCC, 1, 0, 100,
                64, 0, 0.3, 0.0, 0.005, 150, 0, 0, 0, RC_POT_LENNARD_JONES, 0};
    setup wca = {"WCA, walls + gravity 2-D", 2, 1200, RC_LATTICE_RANDOM, 0, 0,
                 100, 64, 1, 0.35, 1.0, 0.005, 150, 0, 0, 0, RC_POT_WCA, 0};
    setup ljdense = {"Lennard-Jones dense, tiers 2", 3, 864, RC_LATTICE_FCC,
                     1, 0, 100, 2, 0, 0.45, 0.0, 0.02, 60, 2, 0, 0,
                     RC_POT_LENNARD_JONES, 0};
    const variant one = {"1 thread", 1, RC_DMD_CPU_FORWARD, 0, 0, 0, 0, 0};
    const variant two = {"2 threads", 2, RC_DMD_CPU_FORWARD, 0, 0, 0, 0, 0};
    const variant rev = {"reversed, checked", 1, RC_DMD_CPU_REVERSE, 1, 0, 0,
                         0, 0};
    const variant strided = {"strided, checked", 1, RC_DMD_CPU_STRIDED, 1, 0,
                             0, 0, 0};
    /* the per-thread tier alone (dense_max above any island here) */
    const variant dense_tier = {"per-thread tier", 2, RC_DMD_CPU_FORWARD, 0,
                                100000, 100000, 0, 0};
    /* islands above 2 contacts: LAPACK batched tier up to 512 */
    const variant medium_tier = {"medium from 3", 2, RC_DMD_CPU_FORWARD, 0, 2,
                                 512, 0, 0};
    /* islands above 2 contacts: host tiers (LAPACK for held contacts up to
     * lapack_max, projected Gauss-Seidel beyond) */
    const variant host_tier = {"host tiers from 3", 2, RC_DMD_CPU_FORWARD, 0,
                               2, 2, 0, 0};
    const variant moreau_host = {"host tiers from 9", 2, RC_DMD_CPU_FORWARD, 0,
                                 8, 8, 0, 0};
    const variant all = {"every candidate", 2, RC_DMD_CPU_FORWARD, 0, 0, 0,
                         1, 0};
    /* the contact screens in windows of 61 candidates (dozens a screen
     * here) against one window: the same contacts in the same order */
    const variant windows = {"windows of 61", 2, RC_DMD_CPU_FORWARD, 0, 0, 0,
                             0, 61};
    const variant one_window = {"one window", 2, RC_DMD_CPU_FORWARD, 0, 0, 0,
                                0, -1};
    tree_forms();
    cand_bytes();
    sort_identity();
    sort_digits();
    pairs_all();
    nonfinite();
    exact_group_scratch();
    /* 2. launchers: threads, orders, checks; bitwise.  And the screen
     * bounded by the gaps at the build against every candidate screened:
     * the same contacts in the same order, so the same bits */
    compare(&gas, &one, &two, -1.0);
    compare(&gas, &two, &rev, -1.0);
    compare(&gas, &two, &strided, -1.0);
    compare(&gas2, &one, &two, -1.0);
    compare(&walls, &two, &strided, -1.0);
    compare(&dense, &one, &two, -1.0);
    compare(&dense, &two, &rev, -1.0);
    RC_CHECK(g_host_islands > 0 && g_pgs > 0,
             "the dense case must send islands to the host tiers (%ld) and "
             "the sparse one (%ld)", g_host_islands, g_pgs);
    compare(&moreau, &one, &two, -1.0);
    compare(&moreau, &two, &strided, -1.0);
    RC_CHECK(g_held > 0, "the Moreau case must hold contacts");
    compare(&lj, &one, &strided, -1.0);
    compare(&wca, &one, &two, -1.0);
    compare(&ljdense, &one, &two, -1.0);
    {
        /* exact collision times: the same launcher rules (the islands'
         * impact loops, the path screens and the logs), with steps long
         * enough for several impacts per island and sets closed over the
         * deflected paths; and gravity with walls (parabolic flights) */
        setup xgas = gas, xgas2 = gas2, xwalls = walls;
        xgas.what = "exact, periodic gas 3-D";
        xgas.exact = 1;
        xgas.dt = 0.08;
        xgas.steps = 12;
        xgas2.what = "exact, periodic gas 2-D, mixed";
        xgas2.exact = 1;
        xgas2.dt = 0.05;
        xgas2.steps = 30;
        xwalls.what = "exact, walls + gravity 3-D";
        xwalls.exact = 1;
        xwalls.gravity = 0.5;
        xwalls.dt = 0.05;
        xwalls.steps = 30;
        compare(&xgas, &one, &two, -1.0);
        compare(&xgas, &two, &rev, -1.0);
        compare(&xgas2, &one, &strided, -1.0);
        compare(&xwalls, &two, &rev, -1.0);
        compare(&xgas, &two, &all, -1.0);
        compare(&xwalls, &two, &all, -1.0);
        compare(&xgas2, &two, &all, -1.0);
        {
            /* short steps: the first scans' predictions carried over
             * many steps of a list (tens of steps a build) */
            setup xfine = gas;
            xfine.what = "exact, periodic gas 3-D, short steps";
            xfine.exact = 1;
            xfine.dt = 0.004;
            xfine.steps = 150;
            compare(&xfine, &two, &all, -1.0);
        }
        {
            /* builds that keep the predictions and drop them in turn:
             * one that drops them follows a motion pass that set no
             * reaches, which the first scan then reads (X_REACH_ONLY);
             * every candidate screened reads none, so a reach missing
             * would show (a collision missed) */
            setup xalt = gas;
            xalt.what = "exact, periodic gas 3-D, predictions on and off";
            xalt.exact = 1;
            xalt.dt = 0.02;
            xalt.steps = 60;
            g_pred_alternate = 1;
            compare(&xalt, &two, &all, -1.0);
            g_pred_alternate = 0;
            RC_CHECK(g_reach_only > 0,
                     "no build dropped the predictions after a motion pass "
                     "without reaches: the case misses its path");
        }
        {
            /* long steps of a gas from the lattice: islands whose impacts
             * make a sphere faster than any before use up the skin
             * within a step now and then */
            setup xreb = gas;
            xreb.what = "exact, periodic gas 3-D, long steps";
            xreb.exact = 1;
            xreb.dt = 0.1;
            xreb.steps = 200;
            compare(&xreb, &one, &two, -1.0);
        }
        /* builds within a step after a round that may have taken
         * islands as they were: the islands then run again from the
         * step's start, every one given its scratch and log room anew
         * (without that this case failed at step 70, an island out of
         * log room, on both engines alike) */
#ifndef RICOCHET_SANITIZE_BUILD /* (its third of the steps ends before) */
        RC_CHECK(g_isl_rebuilds > 0,
                 "no exact case rebuilt its candidates within a step after "
                 "an island round: the cases miss that path");
#endif
        printf("exact collisions: %ld builds within a step after an island "
               "round\n", g_isl_rebuilds);
    }
    compare(&dense, &one_window, &windows, -1.0);
    compare(&walls, &one_window, &windows, -1.0);
    {
        setup xdense = dense;
        xdense.what = "exact, dense";
        xdense.exact = 1;
        xdense.steps = 40;
        compare(&xdense, &one_window, &windows, -1.0);
    }
    RC_CHECK(g_scans_windows > g_scans_one,
             "the screens must run in several windows (%ld scans against "
             "%ld in one window)", g_scans_windows, g_scans_one);
    compare(&gas, &two, &all, -1.0);
    compare(&gas2, &two, &all, -1.0);
    compare(&walls, &two, &all, -1.0);
    compare(&dense, &two, &all, -1.0);
    compare(&moreau, &two, &all, -1.0);
    compare(&wca, &two, &all, -1.0);
    RC_CHECK(g_screened_near < g_screened_all,
             "the bounded screen must skip candidates (%ld of %ld screened)",
             g_screened_near, g_screened_all);
    /* and of the screened ones, the first scans must pass over some
     * untested, with the same bits: out of the spheres' reaches
     * (rc_k_md_out_of_reach), and with exact collisions predicted for
     * after the step (rc_k_mdx_predicted) */
    RC_CHECK(g_reach_skipped > g_pred_skipped && g_pred_skipped > 0,
             "the first scans must pass over pairs untested, out of reach "
             "(%ld) and predicted (%ld)",
             g_reach_skipped - g_pred_skipped, g_pred_skipped);
    printf("bounded screens: %ld of %ld candidates screened, %ld of them "
           "passed over untested (%ld predicted for later)\n",
           g_screened_near, g_screened_all, g_reach_skipped, g_pred_skipped);
    /* the overlap check over the buckets the motion can have closed
     * against every pair, where some spheres overlap (GVI's contacts end
     * a step within its tolerance, not exactly apart) */
    RC_CHECK(g_overlap_checks > 0 && g_overlap_seen > 0,
             "the overlap checks must meet overlapping spheres (%ld of %ld "
             "did)", g_overlap_seen, g_overlap_checks);
    printf("overlap check: the bounded one = every candidate's, bitwise, and "
           "every pair's: %ld checks, %ld with an overlap\n",
           g_overlap_checks, g_overlap_seen);
    /* 3. tiers, one step at a time: two exact solvers of one NNLS round
     * differently, ~1e-15 of the momenta for these well-conditioned
     * islands (PGS to its tolerance 1e-12 relative); 1e-10 keeps a margin
     * and still sees any impulse lost or doubled (O(1)) */
    g_host_islands = g_medium = g_held = 0;
    compare(&dense, &dense_tier, &host_tier, 1e-10);
    RC_CHECK(g_host_islands > 0, "the host tiers must take islands");
    compare(&dense, &dense_tier, &medium_tier, 1e-10);
    RC_CHECK(g_medium > 0, "the batched medium tier must take islands");
    g_host_islands = g_held = 0;
    /* held contacts: the position update stops within rc_k_md_hold_tol
     * (1e-10 of a diameter, 1 here) of its solution, wherever each solver
     * lands; the holding impulse behind such a shift is up to
     * 1e-10 m / h = 1e-10 x 1.75 / 0.02 ~ 1e-8 */
    compare(&moreau, &dense_tier, &moreau_host, 2e-8);
    RC_CHECK(g_host_islands > 0 && g_held > 0,
             "the Moreau case must hold contacts in islands of the host "
             "tiers (%ld islands, %ld held)", g_host_islands, g_held);
    return rc_test_finish("test_md_dengine");
}
