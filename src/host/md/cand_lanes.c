/* The CPU launcher's loops in lanes (cand_lanes.h): a candidate build's
 * info, the first scans of exact collisions (without predictions, and
 * with them: the list of items to test, in AVX-512 lanes where the CPU
 * has them), GVI's first scan in blocks, and the exact motion pass.
 * Compiled with -fno-trapping-math (CMakeLists.txt): under GCC's default
 * it will not compute a value that a select then discards (it might
 * raise a flag nobody reads), and the selects of rc_k_md_gap_key and
 * rc_k_mdx_pred_of stayed scalar in the AVX2 and baseline clones.
 * Values and rounding are unchanged: nothing reads the floating-point
 * exception flags. */
#include <stdint.h>
#include <string.h>

#include "cand_lanes.h"
#include "../simd_clones.h"

/* The passes below run on a copy of the view whose dimension is a
 * constant (RC_DMD_CPU_BY_DIM), so that the bodies' loops over
 * coordinates unroll and their small arrays stay in registers: each
 * pass's work is an always-inlined function. */
#if defined(__GNUC__)
#define CPU_DIM_INLINE static inline __attribute__((always_inline))
#else
#define CPU_DIM_INLINE static inline
#endif

/* A build's candidate info (CAND_INFO, X_CAND_INFO_PRED) in blocks of
 * CPU_CAND_BLOCK candidates: the part of the body that reads the spheres
 * (rc_k_mdx_cand_gather) candidate by candidate, then the part that
 * computes (rc_k_md_gap_key, rc_k_mdx_pred_of: two roots and two
 * divisions a candidate, the outcomes selected) as a vector loop over
 * the block, so that the roots and divisions of many candidates are in
 * flight together instead of one candidate's chain at a time, with a
 * mispredicted branch at every other.  The same functions on the same
 * values: the body's bits (tests/test_md_dengine.c compares with the
 * body run per candidate, the reversed order). */
#define CPU_CAND_BLOCK 64
typedef struct cpu_cand_lanes {
    double s[CPU_CAND_BLOCK], ra[CPU_CAND_BLOCK], rb[CPU_CAND_BLOCK];
    double bb[CPU_CAND_BLOCK], c[CPU_CAND_BLOCK], ww[CPU_CAND_BLOCK];
    int key[CPU_CAND_BLOCK];
    float pred[CPU_CAND_BLOCK];
} cpu_cand_lanes;

static void RC_LANES_CLONES cpu_cand_math(cpu_cand_lanes *L, double near_w,
                                          int pred)
{
    int l;
    for (l = 0; l < CPU_CAND_BLOCK; ++l)
        L->key[l] = rc_k_md_gap_key(L->s[l], L->ra[l], L->rb[l], near_w);
    if (pred)
        for (l = 0; l < CPU_CAND_BLOCK; ++l)
            L->pred[l] =
                rc_k_mdx_pred_of(L->bb[l], L->c[l], L->ww[l],
                                 rc_k_mdx_pred_sig(L->ra[l], L->rb[l]), 0.0);
}

CPU_DIM_INLINE void cpu_cand_info(const rc_k_md *v, long lo, long hi, int pred)
{
    cpu_cand_lanes L;
    long e0, l;
    memset(&L, 0, sizeof L); /* the last block's unused lanes: harmless */
    for (e0 = lo; e0 < hi; e0 += CPU_CAND_BLOCK) {
        long m = hi - e0 < CPU_CAND_BLOCK ? hi - e0 : CPU_CAND_BLOCK;
        for (l = 0; l < m; ++l) {
            rc_k_mdx_cand_in o;
            rc_k_mdx_cand_gather(v, e0 + l, pred, &o);
            L.s[l] = o.s;
            L.ra[l] = o.ra;
            L.rb[l] = o.rb;
            L.bb[l] = o.bb;
            L.c[l] = o.c;
            L.ww[l] = o.ww;
        }
        cpu_cand_math(&L, v->near_w, pred);
        for (l = 0; l < m; ++l)
            v->near_key[e0 + l] = L.key[l];
        if (pred)
            for (l = 0; l < m; ++l)
                v->pred_t[e0 + l] = L.pred[l];
    }
}

void rc_dmd_cpu_cand_info(const rc_k_md *v, long lo, long hi, int pred)
{
    RC_DMD_CPU_BY_DIM(v, cpu_cand_info, lo, hi, pred);
}

/* The step's first scan of exact collisions where the list keeps no
 * predictions (X_SCREEN_PAIR at the step's start; the list too
 * short-lived to keep them, as at dt = 0.01 on 32 000 spheres, where
 * this scan was a quarter of the run): per block of CPU_CAND_BLOCK items
 * the part of the body that reads (rc_k_mdx_first_gather's: the reach
 * test, then rc_k_mdx_first_fill for the pairs within reach), then the
 * contact-time test of the pairs left (rc_k_mdx_first_meets) as a vector
 * loop.  The same functions on the same values: flag[t] as the body's
 * (rc_k_mdx_screen_pair_at). */
typedef struct cpu_scan_lanes {
    double bf[CPU_CAND_BLOCK], bb[CPU_CAND_BLOCK], c[CPU_CAND_BLOCK];
    double ww[CPU_CAND_BLOCK], sig[CPU_CAND_BLOCK];
    long hit[CPU_CAND_BLOCK];
} cpu_scan_lanes;

static void RC_LANES_CLONES cpu_scan_math(cpu_scan_lanes *L, double h)
{
    int l;
    for (l = 0; l < CPU_CAND_BLOCK; ++l)
        L->hit[l] = rc_k_mdx_first_meets(L->bf[l], L->bb[l], L->c[l],
                                         L->ww[l], L->sig[l], h);
}

/* A first scan's walk over items [t0, t0 + m) (of a share ending at hi):
 * the offsets l of the pairs not in A and within reach listed, their
 * number returned.  The items' bucket kept in *bucket as the walk goes
 * (the body's binary search per item, rc_k_md_bucket_at, finds the same
 * one); the reaches asked for RC_K_MDX_AHEAD items ahead (the scan reads
 * them at random places, and their latency was most of it: 32 000
 * spheres, dt = 0.01, perf's samples on the loads of the reaches and the
 * states); with `state`, a listed pair's states (q, p) asked for as it is
 * found. */
static int cpu_reach_list(const rc_k_md *v, long t0, long m, long hi,
                          int state, int *bucket, int *list)
{
    long l;
    int nl = 0;
    for (l = 0; l < m; ++l) {
        long t = t0 + l, e = rc_k_md_screened(v, t);
        int a = v->cand_i[e], b = v->cand_j[e];
        if (t + RC_K_MDX_AHEAD < hi) {
            long e2 = rc_k_md_screened(v, t + RC_K_MDX_AHEAD);
            __builtin_prefetch(v->reach + RC_K_MD_REACH * (long)v->cand_i[e2]);
            __builtin_prefetch(v->reach + RC_K_MD_REACH * (long)v->cand_j[e2]);
        }
        while (*bucket < RC_K_MD_NEAR - 1 &&
               v->near_count[*bucket + 1] <= t + v->near_off)
            ++*bucket;
        if ((v->cand_m[e] & RC_K_MD_IN_A) ||
            (v->reach_skip && rc_k_md_out_of_reach_in(v, *bucket, a, b)))
            continue;
        if (state) {
            rc_k_md_prefetch_state(v, a);
            rc_k_md_prefetch_state(v, b);
        }
        list[nl++] = (int)l;
    }
    return nl;
}

CPU_DIM_INLINE void cpu_first_scan(const rc_k_md *v, long lo, long hi)
{
    cpu_scan_lanes L;
    int list[CPU_CAND_BLOCK];
    long t0, l;
    int bucket = lo < hi ? rc_k_md_bucket_at(v, lo + v->near_off) : 0;
    memset(&L, 0, sizeof L);
    for (t0 = lo; t0 < hi; t0 += CPU_CAND_BLOCK) {
        long m = hi - t0 < CPU_CAND_BLOCK ? hi - t0 : CPU_CAND_BLOCK;
        int nl = cpu_reach_list(v, t0, m, hi, 1, &bucket, list), x;
        for (l = 0; l < m; ++l)
            L.bf[l] = 1.0; /* no hit (bf >= 0) unless tested below */
        for (x = 0; x < nl; ++x) {
            long t = t0 + list[x], e = rc_k_md_screened(v, t);
            rc_k_mdx_first_in o;
            rc_k_mdx_first_fill(v, e, v->cand_i[e], v->cand_j[e], &o);
            L.bf[list[x]] = o.bf;
            L.bb[list[x]] = o.bb;
            L.c[list[x]] = o.c;
            L.ww[list[x]] = o.ww;
            L.sig[list[x]] = o.sig;
        }
        cpu_scan_math(&L, v->h);
        for (l = 0; l < m; ++l)
            v->flag[t0 + l] = (unsigned char)L.hit[l];
    }
}

void rc_dmd_cpu_first_scan(const rc_k_md *v, long lo, long hi)
{
    RC_DMD_CPU_BY_DIM(v, cpu_first_scan, lo, hi);
}

/* The step's first contact scan of GVI's reflection (SCREEN_PAIR at the
 * step's start): as rc_dmd_cpu_first_scan, per block of CPU_CAND_BLOCK
 * items the pairs not in A and within reach listed (cpu_reach_list),
 * then the list tested (rc_k_md_screen_pair_meets), the spheres' q and
 * q^p asked for CPU_GVI_AHEAD listed pairs ahead (asked for as each pair
 * was found: 0.43-0.49 s against 0.38-0.46 s, 256 000 spheres, 100
 * steps).  The body asks for an item's reaches and states together
 * RC_K_MD_AHEAD items ahead, so each state's read waits on the reach
 * test's.  flag[t] as the body's (rc_k_md_screen_pair_at). */
#define CPU_GVI_AHEAD 8
CPU_DIM_INLINE void cpu_gvi_first_scan(const rc_k_md *v, long lo, long hi)
{
    int list[CPU_CAND_BLOCK];
    long t0;
    int bucket = lo < hi ? rc_k_md_bucket_at(v, lo + v->near_off) : 0;
    for (t0 = lo; t0 < hi; t0 += CPU_CAND_BLOCK) {
        long m = hi - t0 < CPU_CAND_BLOCK ? hi - t0 : CPU_CAND_BLOCK;
        int nl = cpu_reach_list(v, t0, m, hi, 0, &bucket, list), x;
        memset(v->flag + t0, 0, (size_t)m);
        for (x = 0; x < nl && x < CPU_GVI_AHEAD; ++x) {
            long e = rc_k_md_screened(v, t0 + list[x]);
            rc_k_md_prefetch_flight(v, v->cand_i[e]);
            rc_k_md_prefetch_flight(v, v->cand_j[e]);
        }
        for (x = 0; x < nl; ++x) {
            long t = t0 + list[x], e = rc_k_md_screened(v, t);
            if (x + CPU_GVI_AHEAD < nl) {
                long e2 = rc_k_md_screened(v, t0 + list[x + CPU_GVI_AHEAD]);
                rc_k_md_prefetch_flight(v, v->cand_i[e2]);
                rc_k_md_prefetch_flight(v, v->cand_j[e2]);
            }
            v->flag[t] = (unsigned char)rc_k_md_screen_pair_meets(
                v, e, v->cand_i[e], v->cand_j[e]);
        }
    }
}

void rc_dmd_cpu_gvi_first_scan(const rc_k_md *v, long lo, long hi)
{
    RC_DMD_CPU_BY_DIM(v, cpu_gvi_first_scan, lo, hi);
}

/* The first scan where the list keeps predictions: about 93 % of the
 * items are predicted for after the step and take one compare (256 000
 * spheres at eta 0.3, dt 0.002: 236 000 items a step, 16 500 tested,
 * 2 600 hits); the rest read both spheres' states at random places and
 * test the pair.  Per block of CPU_SCAN_BLOCK items, the compares as a
 * vector loop, every flag 0, the items to test listed; then the list is
 * tested (rc_k_mdx_screen_pair_at), the reads of later items asked for
 * in stages.  (The body asks RC_K_MDX_AHEAD items ahead, which at this
 * rate is about half a tested item ahead in time.)  0.159 -> 0.111 s
 * (100 steps; the list's states asked for all at once as found before).
 * Each item's flag is the body's. */
#define CPU_SCAN_BLOCK 1024

static void RC_LANES_CLONES cpu_pred_test(const float *restrict pt,
                                          double after, long m,
                                          unsigned char *restrict test)
{
    long l;
    for (l = 0; l < m; ++l)
        test[l] = !((double)pt[l] > after);
}

/* list = t0 + l for the l < m not predicted for after the step
 * (!((double)pt[l] > after), rc_k_mdx_predicted's test), ascending;
 * returns how many: the test as a vector loop into flags (test: room for
 * m + 8), then the flags 8 at a time. */
static long cpu_pred_list(const float *pt, double after, long m, long t0,
                          unsigned char *test, long *list)
{
    long l, nt = 0;
    cpu_pred_test(pt, after, m, test);
    memset(test + m, 0, 8);
    for (l = 0; l < m; l += 8) {
        uint64_t w;
        memcpy(&w, test + l, 8);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                           \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (w) { /* test[l + x] is byte x of w */
            list[nt++] = t0 + l + __builtin_ctzll(w) / 8;
            w &= w - 1;
        }
#else
        if (w) {
            int x;
            for (x = 0; x < 8; ++x)
                if (test[l + x])
                    list[nt++] = t0 + l + x;
        }
#endif
    }
    return nt;
}

#if RC_HAVE_AVX512_LANES
#include <immintrin.h>
/* cpu_pred_list's list in AVX-512 lanes: eight predictions compared at
 * once and the indices of those to test compressed into one store (list
 * has room for m + 8); no loop over each word's flags, whose exits
 * mispredicted (7 % of the items are tested, at random). */
static RC_AVX512_TARGET long cpu_pred_list_avx512(const float *pt,
                                                  double after, long m,
                                                  long t0, long *list)
{
    const __m512d a = _mm512_set1_pd(after);
    __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(t0),
                                   _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    const __m512i step = _mm512_set1_epi64(8);
    long l, nt = 0;
    for (l = 0; l < m; l += 8) {
        __mmask8 lm = m - l >= 8 ? (__mmask8)0xff
                                 : (__mmask8)((1u << (m - l)) - 1u);
        /* the float widened exactly, as the scalar (double) cast; NGT
         * unordered: true for NaN, as !(x > after) */
        __m512d p = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(lm, pt + l));
        __mmask8 k = _mm512_mask_cmp_pd_mask(lm, p, a, _CMP_NGT_UQ);
        _mm512_storeu_si512((void *)(list + nt),
                            _mm512_maskz_compress_epi64(k, idx));
        nt += __builtin_popcount((unsigned)k);
        idx = _mm512_add_epi64(idx, step);
    }
    return nt;
}
#endif

CPU_DIM_INLINE void cpu_first_scan_pred(const rc_k_md *v, long lo, long hi,
                                        int avx512)
{
    long list[CPU_SCAN_BLOCK + 8], t0;
    unsigned char test[CPU_SCAN_BLOCK + 8];
    /* rc_k_mdx_predicted's test over the block with its bound once (the
     * flags' stores, bytes, made the loop read it and the predictions'
     * place anew at every item), listing the items to test, 7 % of them */
    const double after = rc_k_mdx_pred_after(v);
    for (t0 = lo; t0 < hi; t0 += CPU_SCAN_BLOCK) {
        long m = hi - t0 < CPU_SCAN_BLOCK ? hi - t0 : CPU_SCAN_BLOCK, l, nt;
        const float *pt = v->pred_t + v->near_off + t0;
        memset(v->flag + t0, 0, (size_t)m);
#if RC_HAVE_AVX512_LANES
        nt = avx512 ? cpu_pred_list_avx512(pt, after, m, t0, list)
                    : cpu_pred_list(pt, after, m, t0, test, list);
#else
        (void)avx512;
        nt = cpu_pred_list(pt, after, m, t0, test, list);
#endif
        for (l = 0; l < nt; ++l) {
            /* the reads at random places asked for in stages: the
             * candidate's spheres and mark 16 items on, their states 8
             * on (the spheres read by then) */
            if (l + 16 < nt) {
                long e = rc_k_md_screened(v, list[l + 16]);
                __builtin_prefetch(v->cand_i + e);
                __builtin_prefetch(v->cand_j + e);
                __builtin_prefetch(v->cand_m + e);
            }
            if (l + 8 < nt) {
                long e = rc_k_md_screened(v, list[l + 8]);
                rc_k_md_prefetch_state(v, v->cand_i[e]);
                rc_k_md_prefetch_state(v, v->cand_j[e]);
            }
            v->flag[list[l]] =
                (unsigned char)rc_k_mdx_screen_pair_at(v, list[l]);
        }
    }
}

void rc_dmd_cpu_first_scan_pred(const rc_k_md *v, long lo, long hi,
                                int avx512)
{
    RC_DMD_CPU_BY_DIM(v, cpu_first_scan_pred, lo, hi, avx512);
}

/* The exact collisions' motion pass (X_MOTION, run_max) over spheres
 * [lo, hi) of a 3-D fluid of one mass without a field (no pair
 * potential, no gravity): rc_k_mdx_motion_rows per sphere with the
 * constants of that case, and the maxes of the body's two values in
 * CPU_MOTION_LANES lanes, merged at the end (a max of maxes: the same
 * bits in any grouping, the values never NaN).  The body's loop, with
 * v->dim and the field read per sphere and every array possibly the
 * same, did not vectorise (GCC: "loop nest containing two or more
 * consecutive inner loops").  Without a field the islands keep p0
 * (p_lazy), so this pass copies no momenta.  Its gradient is -m g_k for
 * every sphere, which is -1 g_k here for any finite m > 0 (g_k = +-0):
 * the same bits without reading the masses.  m[0], m[1]: the maxes. */
#define CPU_MOTION_LANES 8

void RC_LANES_CLONES rc_dmd_cpu_x_motion(const rc_k_md *v, long lo, long hi,
                                         double m[2])
{
    const double *restrict q = v->q, *restrict p = v->p,
                           *restrict qb = v->qbuild;
    const int *restrict img = v->image;
    double *restrict qp = v->qp;
    const double h = v->h, im = v->uni_inv_mass,
                 hg2 = 0.5 * v->g_len * v->h * v->h;
    const double grad[3] = {-1.0 * v->gravity[0], -1.0 * v->gravity[1],
                            -1.0 * v->gravity[2]};
    const int reach_set = v->reach_set;
    double a[CPU_MOTION_LANES] = {0.0}, b[CPU_MOTION_LANES] = {0.0};
    long i0, i;
    int l;
    for (i0 = lo; i0 < hi; i0 += CPU_MOTION_LANES) {
        int nl = hi - i0 < CPU_MOTION_LANES ? (int)(hi - i0)
                                            : CPU_MOTION_LANES;
        double r[CPU_MOTION_LANES], m2[CPU_MOTION_LANES];
        for (l = 0; l < nl; ++l) {
            i = i0 + l;
            rc_k_mdx_motion_rows(3, h, im, grad, hg2, v->box.L, q + 3 * i,
                                 p + 3 * i, qb + 3 * i, img + 3 * i,
                                 qp + 3 * i, &r[l], &m2[l]);
            a[l] = rc_fmax(a[l], rc_k_md_max_guard(r[l] * r[l]));
            b[l] = rc_fmax(b[l], rc_k_md_max_guard(m2[l]));
        }
        if (reach_set) /* as the body */
            for (l = 0; l < nl; ++l)
                rc_k_md_reach_set(v, i0 + l, r[l], rc_sqrt(m2[l]));
    }
    m[0] = m[1] = 0.0;
    for (l = 0; l < CPU_MOTION_LANES; ++l) {
        m[0] = rc_fmax(m[0], a[l]);
        m[1] = rc_fmax(m[1], b[l]);
    }
}
