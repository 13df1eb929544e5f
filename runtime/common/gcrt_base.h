/* gcrt_base.h — the base of graphc's runtime: scalar conversions between
 * f32 and the 16-bit float formats, and a copy helper.
 *
 * Generated code stores f16 and bf16 tensors as uint16_t bit patterns and
 * computes in float; it converts on every load and store with the functions
 * below. Both narrowing conversions round to nearest, ties to even, keep
 * the sign of zero, map overflow to infinity, produce subnormals where the
 * format has them (f16) and keep NaN a (quiet) NaN. Bit patterns move
 * through memcpy, so nothing here breaks strict aliasing.
 *
 * Plain C99: header-only static inline functions, no allocation, no I/O,
 * no global state.
 *
 * Every runtime kernel is private to the model that uses it: the model's
 * NAME.c includes the kernel sources it needs (runtime/c/gcrt_<unit>.c)
 * after this header, and each kernel is declared and defined GCRT_FN, i.e.
 * `static` (marked unused so that a unit whose model calls only some of its
 * kernels builds without warnings). Two generated models therefore link into
 * one program, and a model's shared library exports only its own API.
 */
#ifndef GCRT_BASE_H
#define GCRT_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GCRT_FN static __attribute__((unused))
#else
#define GCRT_FN static
#endif

static inline uint32_t gcrt_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float gcrt_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 bits -> float (exact: every half is a float). */
static inline float gcrt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) /* infinity or NaN (payload kept) */
        return gcrt_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return gcrt_bits_f32(sign); /* signed zero */
        /* subnormal: value = man * 2^-24; renormalize */
        int e = -14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        man &= 0x3ffu;
        return gcrt_bits_f32(sign | ((uint32_t)(e + 127) << 23) | (man << 13));
    }
    return gcrt_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* float -> IEEE binary16 bits, round to nearest even. */
static inline uint16_t gcrt_f32_to_f16(float f)
{
    uint32_t x = gcrt_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: keep the top payload bits, force quiet */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 rounds to infinity (and inf itself) */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below the smallest normal half, 2^-14 */
        if (ax < 0x33000000u) return (uint16_t)sign; /* <= 2^-25 rounds to 0 */
        uint32_t e = ax >> 23;                  /* 102 .. 112 */
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;              /* 14 .. 24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q); /* q == 0x400 is the smallest normal */
    }
    uint32_t q = ((((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu));
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++; /* carry may bump the exponent */
    return (uint16_t)(sign | q);
}

/* bfloat16 bits -> float (exact). */
static inline float gcrt_bf16_to_f32(uint16_t b)
{
    return gcrt_bits_f32((uint32_t)b << 16);
}

/* float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN. */
static inline uint16_t gcrt_f32_to_bf16(float f)
{
    uint32_t x = gcrt_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* memcpy that accepts n == 0 with NULL pointers (zero-size tensors). */
static inline void gcrt_copy(void *dst, const void *src, size_t n)
{
    if (n) memcpy(dst, src, n);
}

#endif
