/* Work-group building blocks shared by codecs and query kernels. */

/* Unrolls the loop that follows: a private array indexed by the loop
   variable stays in registers only where the loop unrolls, and a loop
   holding an inner data-dependent loop is not unrolled unasked. */
#ifdef TDM_NO_UNROLL
#define TDM_UNROLL
#else
#define TDM_UNROLL _Pragma("unroll")
#endif
/* Where a loop's bound is known only at run time (a partition's length),
   clang leaves it rolled, which is right, and warns "loop not unrolled";
   PoCL would print that on every build. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

/* A function kept out of line. NVIDIA's OpenCL compiler inlines every call
   unasked: with the serial block decoders (every codec) inlined into each
   cursor step of each algorithm of each range kernel, kernels.cl became
   15 MB of PTX and a cold build took over 7 minutes on the H200
   (BENCHMARKS.md, fifth session). Used only where a call costs little
   against the work behind it (a block's decode), and with arguments that
   do not make a caller's state escape to memory. */
#define TDM_NOINLINE __attribute__((noinline))

/* ---- float products and sums rounded one by one (never fused into an FMA).
   Scores must be the same bits on every device (query/score.h), so the
   kernels compute them with these. FP_CONTRACT OFF is enough for clang-based
   compilers (PoCL, AMD, Intel); NVIDIA's fuses anyway, but never fuses PTX
   mul/add with an explicit rounding mode (the host defines TDM_NV_PTX=1 on
   every NVIDIA device). */
#pragma OPENCL FP_CONTRACT OFF
#ifndef TDM_NV_PTX
#define TDM_NV_PTX 0
#endif
#if TDM_NV_PTX
float tdm_fmul(float a, float b)
{
    float r;
    __asm__("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
float tdm_fadd(float a, float b)
{
    float r;
    __asm__("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
/* The correctly rounded quotient (OpenCL's float division may be 2.5 ulp). */
float tdm_fdiv(float a, float b)
{
    float r;
    __asm__("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
#else
float tdm_fmul(float a, float b) { return a * b; }
float tdm_fadd(float a, float b) { return a + b; }
#endif

/* The correctly rounded float quotient (round to nearest, ties to even)
   from integer arithmetic alone, for devices with neither cl_khr_fp64 nor
   PTX (rusticl's llvmpipe): OpenCL's float division may be 2.5 ulp off,
   and BM25 scores must be bit-identical on every device. The significands'
   quotient is taken to 40 bits by a 64-bit integer division, its remainder
   is the sticky bit. Zeros, infinities and NaNs take the plain division,
   which is exact for them. tests/test_fdiv.c checks it against C's. */
float tdm_fdiv_rn(float a, float b)
{
    uint ua = as_uint(a), ub = as_uint(b);
    uint sign = (ua ^ ub) & 0x80000000u;
    int ea = (int)((ua >> 23) & 0xffu), eb = (int)((ub >> 23) & 0xffu);
    uint ma = ua & 0x7fffffu, mb = ub & 0x7fffffu;
    if (ea == 0xff || eb == 0xff || ((ea | (int)ma) == 0) || ((eb | (int)mb) == 0))
        return a / b;
    if (ea) /* normal: the hidden bit; subnormal: shifted up to it */
        ma |= 0x800000u;
    else {
        int z = (int)clz(ma) - 8;
        ma <<= z;
        ea = 1 - z;
    }
    if (eb)
        mb |= 0x800000u;
    else {
        int z = (int)clz(mb) - 8;
        mb <<= z;
        eb = 1 - z;
    }
    int e = ea - eb + 127; /* biased exponent of ma / mb in [1, 2) */
    if (ma < mb) {
        ma <<= 1;
        e -= 1;
    }
    ulong num = (ulong)ma << 39;
    ulong q = num / mb; /* in [2^39, 2^40) */
    uint sticky = num % mb != 0ul;
    if (e >= 255)
        return as_float(sign | 0x7f800000u);
    uint s = 16u + (e < 1 ? (uint)(1 - e) : 0u); /* bits below the result's last */
    if (s > 63u)
        return as_float(sign);
    ulong m = q >> s, rest = q & ((1ul << s) - 1ul), mid = 1ul << (s - 1u);
    if (rest > mid || (rest == mid && (sticky || (m & 1ul))))
        m++;
    /* the hidden bit adds 1 to the exponent field; a carry out of rounding
       adds the next (up to infinity's bits) */
    uint field = (uint)(e < 1 ? 0 : e - 1) << 23;
    return as_float(sign | (field + (uint)m));
}

/* Test entry: q[i] = tdm_fdiv_rn(a[i], b[i]) (tests/test_fdiv.c). */
__kernel void tdm_test_fdiv_rn(__global const float *a, __global const float *b,
                               __global float *q, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        q[i] = tdm_fdiv_rn(a[i], b[i]);
}

/* ---- warp shuffles: NVIDIA only (the host defines TDM_NV_SHFL=1 for
   compute capability 7.0 and up, host/engine/program.c). OpenCL C 1.2 has
   no sub-group functions, but NVIDIA's compiler takes inline PTX, as
   CLBlast uses it. A warp is 32 consecutive work-items of a 1D group whose
   size is a multiple of 32; shfl.sync names all 32 lanes, so every lane
   must reach each call: call these from uniform control flow only, never
   from a kernel whose work-items may have returned. */
#ifndef TDM_NV_SHFL
#define TDM_NV_SHFL 0
#endif
#if TDM_NV_SHFL
uint tdm_lane(void) { return get_local_id(0) & 31u; }

/* The value of lane lane - d (v itself where that is below lane 0). */
uint tdm_shfl_up(uint v, uint d)
{
    uint r;
    __asm__ volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}

/* The value of lane src (0..31). */
uint tdm_shfl_idx(uint v, uint src)
{
    uint r;
    __asm__ volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                     : "=r"(r)
                     : "r"(v), "r"(src));
    return r;
}

/* Inclusive sum of v over aligned segments of seg lanes (a power of two,
   at most 32): log2(seg) shuffles, no barrier, no local memory. */
uint tdm_warp_scan_incl(uint v, uint seg)
{
    uint at = tdm_lane() & (seg - 1u);
    for (uint d = 1; d < seg; d <<= 1) {
        uint y = tdm_shfl_up(v, d);
        v += at >= d ? y : 0u;
    }
    return v;
}
#endif

/* Inclusive prefix sum of one value per work-item over the whole work-group
 * (a power of two). Every work-item of the group must call it. scratch holds
 * get_local_size(0) uints; *total receives the group's sum.
 *
 * Radix-8 raking in place: at each level a work-item adds up to 7 entries to
 * its left within its piece of 8 (reads a piece shares: broadcasts), then one
 * work-item a piece overwrites the level with the piece totals for the next
 * one. Nothing assumes warps in lockstep, so each level takes two barriers:
 * 6 for 256 work-items, where Hillis-Steele takes 18. */
uint tdm_wg_scan_incl(uint v, __local uint *scratch, uint *total)
{
    uint lid = get_local_id(0), entries = get_local_size(0);
    uint excl = 0, idx = lid, span = 1;
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) { /* the same trip count for the whole group */
        uint piece = entries < 8 ? entries : 8u;
        uint g = idx & ~(piece - 1u), r = idx & (piece - 1u), p = 0, all = 0;
        for (uint j = 0; j < 8; j++) {
            uint x = j < piece ? scratch[g + j] : 0u;
            p += j < r ? x : 0u;
            all += x;
        }
        excl += p;
        if (entries <= 8) {
            *total = all;
            break;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* this level read by all */
        if (r == 7 && lid % span == 0)
            scratch[idx >> 3] = all;
        barrier(CLK_LOCAL_MEM_FENCE);
        idx >>= 3;
        entries >>= 3;
        span <<= 3;
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused right after */
    return excl + v;
}

/* D-gaps to values, one work-group per block of `block` gaps:
 * out[i] = bases[b] + gaps[start_b] + ... + gaps[i] for i in block b.
 * Launched with TDM_WG_SIZE work-items per group and one group per block. */
__kernel void tdm_delta_decode(__global const uint *gaps, __global const uint *bases,
                               __global uint *out, uint n, uint block)
{
    __local uint scratch[TDM_WG_SIZE];
    uint b = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    uint start = b * block;
    uint end = min(start + block, n);
    uint carry = bases[b];
    for (uint i = start; i < end; i += wg) { /* same trip count for the whole group */
        uint idx = i + lid, total;
        uint p = tdm_wg_scan_incl(idx < end ? gaps[idx] : 0u, scratch, &total);
        if (idx < end)
            out[idx] = carry + p;
        carry += total;
    }
}

/* Does nothing: the runtime times its launch (host/runtime/probe.c). */
__kernel void tdm_nop(void) {}
