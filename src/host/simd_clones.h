/* Functions compiled for AVX-512, AVX2 and the baseline (GCC
 * target_clones: the loader picks the widest the CPU has), for the CPU
 * loops over lanes: src/host/batch_lanes.c (members in lanes) and the
 * large-system launcher's candidate info (src/host/md/dengine_cpu.c).
 * The C build never contracts a*b+c into an FMA (-std=c11; see
 * CMakeLists.txt), and +, -, *, / and sqrt round the same in every
 * width, so every clone gives the scalar body's bits. */
#ifndef RC_SIMD_CLONES_H
#define RC_SIMD_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&       \
    defined(__linux__)
#define RC_LANES_CLONES                                                       \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RC_LANES_CLONES
#endif

/* The hand-written AVX-512 loops (intrinsics in functions compiled with
 * RC_AVX512_TARGET, chosen at run time: the large-system launcher's pair
 * search and first scan, g(r)'s pick): whether to run them, asked once
 * before a pass's threads.  The CPU must have AVX-512 F and VL, and
 * RICOCHET_NO_AVX512 must be unset or 0 (set, the scalar loops a CPU
 * without them runs; the tests run both: tests/CMakeLists.txt). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <stdlib.h>
#include <string.h>
#define RC_HAVE_AVX512_LANES 1
#define RC_AVX512_TARGET __attribute__((target("avx512f,avx512vl,popcnt")))
static inline int rc_avx512_lanes(void)
{
    const char *off = getenv("RICOCHET_NO_AVX512");
    if (off && strcmp(off, "0") != 0)
        return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512vl");
}
#else
#define RC_HAVE_AVX512_LANES 0
static inline int rc_avx512_lanes(void) { return 0; }
#endif

#endif
