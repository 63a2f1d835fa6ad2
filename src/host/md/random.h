/* Counter-based random numbers for the set-up of large systems (DESIGN
 * §6): every draw is a pure function of (seed, a, b, c), so a particle's
 * values depend on no other particle, thread or call order.  The same
 * construction as the ensemble's rc_member_uniform (src/host/scenario.c):
 * splitmix64 chained over the key words, 52 bits centred in their cell.
 *
 * Key convention (the caller's): a = particle, b = attempt or axis,
 * c = (stream << 8) | draw, with one stream per use below so that one
 * seed may drive both the positions and the momenta without the two
 * sharing draws. */
#ifndef RC_MD_RANDOM_H
#define RC_MD_RANDOM_H

#include <math.h>

enum {
    RC_MD_STREAM_PLACE = 1,
    RC_MD_STREAM_MAXWELL = 2,
    RC_MD_STREAM_RADIUS = 3
};

/* splitmix64 finaliser of z + golden gamma: a bijection of 64-bit words
 * whose output bits each depend on every input bit. */
static inline unsigned long long rc_md_mix64(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* 64 random bits keyed by (seed, a, b, c). */
static inline unsigned long long rc_md_hash(unsigned long long seed,
                                            unsigned long long a,
                                            unsigned long long b,
                                            unsigned long long c)
{
    unsigned long long z = rc_md_mix64(seed);
    z = rc_md_mix64(z ^ a);
    z = rc_md_mix64(z ^ b);
    return rc_md_mix64(z ^ c);
}

/* The top 52 of 64 bits as a double centred in its cell of width 2^-52:
 * in [2^-53, 1 - 2^-53], strictly inside (0, 1) (never 0 for the log of
 * Box-Muller, never 1 for a position at L); both ends are exact. */
static inline double rc_md_unit(unsigned long long bits)
{
    return ((double)(bits >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

/* Uniform in (0, 1) keyed by (seed, a, b, c). */
static inline double rc_md_uniform(unsigned long long seed,
                                   unsigned long long a, unsigned long long b,
                                   unsigned long long c)
{
    return rc_md_unit(rc_md_hash(seed, a, b, c));
}

/* Standard normal by Box-Muller from the uniforms of draws c and c + 1
 * (the cosine branch; the sine partner is not used, so each normal is a
 * function of its own key alone).  |value| <= sqrt(-2 log 2^-53) ~ 8.6. */
static inline double rc_md_normal(unsigned long long seed,
                                  unsigned long long a, unsigned long long b,
                                  unsigned long long c)
{
    double u1 = rc_md_uniform(seed, a, b, c);
    double u2 = rc_md_uniform(seed, a, b, c + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
