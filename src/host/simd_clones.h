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

#endif
