/* precision.h: the precision of the products (docs/DESIGN.md §4): float32
 * throughout, or bfloat16 inputs with float32 accumulation, summed as
 * vdpbf16ps sums them (bf16) or as AMX's tile product does (amx); the
 * rounding to bfloat16, and whether this CPU runs either itself. */
#ifndef PRECISION_H
#define PRECISION_H

#include <stdint.h>
#include <string.h>

typedef enum { PRECISION_FP32 = 0, PRECISION_BF16 = 1, PRECISION_AMX = 2 } Precision;

/* x rounded to bfloat16 (float32's sign, exponent and top 7 fraction bits)
 * to nearest, ties to even. Magnitudes below float's smallest normal
 * (2^-126) become a zero of x's sign: vdpbf16ps reads a subnormal bfloat16
 * as zero anyway, so no input ever depends on that. NaN stays a (quiet) NaN. */
static inline uint16_t bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t zero = (u >> 16) & 0x8000u, nan = (u >> 16) | 0x0040u;
    uint32_t nearest = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;   /* plus half an ulp, and one more when odd */
    /* selects, not branches, so that loops of it vectorize */
    uint32_t h = (u & 0x7f800000u) == 0 ? zero : (u & 0x7fffffffu) > 0x7f800000u ? nan : nearest;
    return (uint16_t)h;
}

/* The float a bfloat16 stands for (exact). */
static inline float bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The compilers that know vdpbf16ps (_mm512_dpbf16_ps) on x86-64; the
 * kernels using it are compiled for it with a target attribute and run only
 * when the CPU says it has it, so the binary still runs elsewhere. */
#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 11) || \
                            (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10))
#define BF16_HW_COMPILED 1
#else
#define BF16_HW_COMPILED 0
#endif

/* 1 when this CPU (and OS) runs AVX-512 BF16; 0 means the products are
 * emulated in plain float arithmetic, the same bytes, slower. */
static inline int bf16_hardware(void) {
#if BF16_HW_COMPILED
    return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw");   /* the conversions' interleave (bf16_pack.h) */
#else
    return 0;
#endif
}

/* The compilers that know AMX's intrinsics (_tile_dpbf16ps), on Linux,
 * whose kernel hands out the tile registers on request. */
#if BF16_HW_COMPILED && defined(__linux__) && \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define AMX_COMPILED 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define AMX_COMPILED 0
#endif

/* 1 when this CPU has AMX's tiles and bfloat16 products (CPUID leaf 7:
 * AMX-BF16 and AMX-TILE) and the kernel lets this process use them (the
 * request is granted once and then holds). The packing's conversions need
 * AVX-512 BF16 as well. 0 means --precision amx is emulated in plain float
 * arithmetic, the same bytes, slower. The probe (CPUID traps in a VM, plus
 * a system call: about 12 us) runs once; every product asks, so the answer
 * is cached, a fact of the CPU and kernel (docs/ARCHITECTURE.md). */
static inline int amx_probe(void) {
#if AMX_COMPILED
    unsigned eax, ebx, ecx, edx;
    if (!bf16_hardware() || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    if (!(edx & (1u << 22)) || !(edx & (1u << 24))) return 0;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    return 0;
#endif
}

static inline int amx_hardware(void) {
    static int known;   /* 0: not probed yet; 1: no; 2: yes (any thread may store the same answer) */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (!k) __atomic_store_n(&known, k = amx_probe() ? 2 : 1, __ATOMIC_RELAXED);
    return k == 2;
}

/* 1 when this CPU's vdpbf16ps outruns its float32 multiply-adds: AMD's
 * (Zen 4: one a cycle, twice the float32 FMA's products). An Intel core
 * runs it at half its two FMA pipes' float32 rate, so there bfloat16
 * saves memory traffic but no time (docs/PERFORMANCE.md). */
static inline int bf16_fast(void) {
#if BF16_HW_COMPILED
    return bf16_hardware() && __builtin_cpu_is("amd");
#else
    return 0;
#endif
}

/* --precision auto: bf16 where the CPU multiplies bfloat16 pairs faster
 * than float32's (AMD's), amx where it has AMX's tiles (Intel's), float32
 * elsewhere (where either would be emulated, or no faster). Over three
 * seeds on every set of data/README.md each lies within float32's range. */
static inline Precision precision_auto(void) {
    return bf16_fast() ? PRECISION_BF16 : amx_hardware() ? PRECISION_AMX : PRECISION_FP32;
}

#endif
