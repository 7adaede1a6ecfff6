/* GEMM of the host target: D = alpha * op(A) @ op(B) + beta * C, cache-blocked and packed.
 *
 * Included by the host codegen once per compute type, with TVM_GEMM_T (float or double) and
 * TVM_GEMM_SFX (f32 or f64) defined, when a kernel calls tvm_host_gemm_<sfx>. Every operand
 * is a 2-D strided view (row stride, column stride, in elements), so transposes and regions of
 * larger buffers need no copies. Inputs may be stored as float16 or bfloat16 (code 1 or 2;
 * code 0 is the compute type): packing converts them, the arithmetic is done in TVM_GEMM_T.
 * The codegen puts its 16-bit conversion helpers (tvm_f16_to_f32, ...) before this file.
 *
 * Loop structure (Goto/BLIS): for each NC-wide column block and KC-deep slice of K, B's slice
 * is packed into NR-wide panels; for each MC-high row block, A's block is packed into MR-high
 * panels; an MR x NR register tile of D is computed from one A panel and one B panel with
 * vector FMAs (GCC/Clang vector extensions: 512-bit with AVX-512, 256-bit with AVX, else 128).
 * OpenMP threads (as many as tvm_host_threads() says, kernels/threads.c, which the codegen puts
 * before this file) take disjoint column ranges of D.
 */
#if defined(__GNUC__) && !defined(__clang__)
/* -O2 here: as fast as -O3 for this code (the register tile is unrolled by pragmas) and it
 * compiles in a quarter of the time. */
#pragma GCC push_options
#pragma GCC optimize("O2")
#endif
#ifndef TVM_HOST_GEMM_COMMON
#define TVM_HOST_GEMM_COMMON
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__AVX512F__)
#define TVM_GEMM_VBYTES 64
#define TVM_GEMM_MR 12
#elif defined(__AVX__)
#define TVM_GEMM_VBYTES 32
#define TVM_GEMM_MR 6
#else
#define TVM_GEMM_VBYTES 16
#define TVM_GEMM_MR 6
#endif
#define TVM_GEMM_NV 2        /* vectors per row of the register tile */
#define TVM_GEMM_KC 256      /* depth of a packed slice */
#define TVM_GEMM_MC 144      /* rows of a packed A block (a multiple of every MR) */
#define TVM_GEMM_NC 3072     /* columns of a packed B block */
#define TVM_GEMM_CAT2(a, b) a##b
#define TVM_GEMM_CAT(a, b) TVM_GEMM_CAT2(a, b)

static inline int64_t tvm_gemm_min(int64_t a, int64_t b) { return a < b ? a : b; }

static void* tvm_gemm_alloc(size_t bytes) {
  size_t rounded = (bytes + 63u) & ~(size_t)63u;
  return aligned_alloc(64, rounded ? rounded : 64u);
}
#endif /* TVM_HOST_GEMM_COMMON */

#define T TVM_GEMM_T
#define FN(name) TVM_GEMM_CAT(name, TVM_GEMM_SFX)
#define VL ((int)(TVM_GEMM_VBYTES / sizeof(T)))
#define MR TVM_GEMM_MR
#define NR (TVM_GEMM_NV * VL)
typedef T FN(tvm_gemm_vec_) __attribute__((vector_size(TVM_GEMM_VBYTES)));
#define V FN(tvm_gemm_vec_)

/* Element (i, j) of a strided view stored with type code `code`, as T. */
static inline T FN(tvm_gemm_load_)(const void* p, int32_t code, int64_t offset) {
  if (code == 1) return (T)tvm_f16_to_f32(((const uint16_t*)p)[offset]);
  if (code == 2) return (T)tvm_bf16_to_f32(((const uint16_t*)p)[offset]);
  return ((const T*)p)[offset];
}

/* A[i0:i0+mc, p0:p0+kc] into MR-high panels, k-major inside a panel, zero-padded. */
static void FN(tvm_gemm_pack_a_)(T* restrict dst, const void* a, int32_t code, int64_t rs,
                                  int64_t cs, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                                  int64_t panel) {
  int64_t r0 = panel * MR, rows = tvm_gemm_min(MR, mc - r0);
  T* out = dst + panel * MR * kc;
  for (int64_t k = 0; k < kc; ++k) {
    int64_t r = 0;
    for (; r < rows; ++r)
      out[k * MR + r] = FN(tvm_gemm_load_)(a, code, (i0 + r0 + r) * rs + (p0 + k) * cs);
    for (; r < MR; ++r) out[k * MR + r] = (T)0;
  }
}

/* B[p0:p0+kc, j0:j0+nc] into NR-wide panels, k-major inside a panel, zero-padded. */
static void FN(tvm_gemm_pack_b_)(T* restrict dst, const void* b, int32_t code, int64_t rs,
                                  int64_t cs, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                                  int64_t panel) {
  int64_t c0 = panel * NR, cols = tvm_gemm_min(NR, nc - c0);
  T* out = dst + panel * NR * kc;
  for (int64_t k = 0; k < kc; ++k) {
    const int64_t row = (p0 + k) * rs + (j0 + c0) * cs;
    int64_t c = 0;
    if (code == 0 && cs == 1) {
      const T* src = (const T*)b + row;
      for (; c < cols; ++c) out[k * NR + c] = src[c];
    } else {
      for (; c < cols; ++c) out[k * NR + c] = FN(tvm_gemm_load_)(b, code, row + c * cs);
    }
    for (; c < NR; ++c) out[k * NR + c] = (T)0;
  }
}

/* The MR x NR register tile: acc = A panel @ B panel over kc, stored to `tile`. Modules are
 * compiled with -ffp-contract=off; this loop asks for fused multiply-adds. */
#if defined(__clang__)
#define TVM_GEMM_FMA
#else
#define TVM_GEMM_FMA __attribute__((optimize("fp-contract=fast")))
#endif
TVM_GEMM_FMA static void FN(tvm_gemm_tile_)(int64_t kc, const T* restrict a, const T* restrict b,
                                T* restrict tile) {
#if defined(__clang__)
#pragma clang fp contract(fast)
#endif
  V acc[MR][TVM_GEMM_NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < TVM_GEMM_NV; ++v) acc[r][v] = (V){0};
  for (int64_t k = 0; k < kc; ++k) {
    V bv[TVM_GEMM_NV];
#pragma GCC unroll 4
    for (int v = 0; v < TVM_GEMM_NV; ++v) bv[v] = *(const V*)(b + v * VL);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const T ar = a[r];
#pragma GCC unroll 4
      for (int v = 0; v < TVM_GEMM_NV; ++v) acc[r][v] += ar * bv[v];
    }
    a += MR;
    b += NR;
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < TVM_GEMM_NV; ++v) *(V*)(tile + r * NR + v * VL) = acc[r][v];
}

/* D[i, j] (+)= alpha * tile (+ beta * C) for the valid part of a tile. */
static void FN(tvm_gemm_store_)(const T* restrict tile, int64_t rows, int64_t cols, T alpha,
                                 T beta, const void* c, int32_t c_code, int64_t c_rs,
                                 int64_t c_cs, T* restrict d, int64_t d_rs, int64_t i0,
                                 int64_t j0, int first) {
  for (int64_t r = 0; r < rows; ++r) {
    T* drow = d + (i0 + r) * d_rs + j0;
    const T* trow = tile + r * NR;
    if (!first) {
      for (int64_t j = 0; j < cols; ++j) drow[j] += alpha * trow[j];
    } else if (c == NULL) {
      for (int64_t j = 0; j < cols; ++j) drow[j] = alpha * trow[j];
    } else {
      const int64_t crow = (i0 + r) * c_rs + j0 * c_cs;
      for (int64_t j = 0; j < cols; ++j)
        drow[j] = alpha * trow[j] + beta * FN(tvm_gemm_load_)(c, c_code, crow + j * c_cs);
    }
  }
}

/* D[i0:i1, j0:j1] (row stride d_rs, compute type) = alpha * A @ B + beta * C, by one
 * thread, with its own packing buffers. Returns -1 when they cannot be allocated. */
static int32_t FN(tvm_gemm_block_)(int64_t i0, int64_t i1, int64_t j0, int64_t j1, int64_t K,
                                    T alpha, const void* a, int32_t a_code, int64_t a_rs,
                                    int64_t a_cs, const void* b, int32_t b_code, int64_t b_rs,
                                    int64_t b_cs, T beta, const void* c, int32_t c_code,
                                    int64_t c_rs, int64_t c_cs, T* d, int64_t d_rs) {
  const int64_t M = i1 - i0, N = j1 - j0;
  if (M <= 0 || N <= 0) return 0;
  const int64_t kc_max = tvm_gemm_min(K, TVM_GEMM_KC), nc_max = tvm_gemm_min(N, TVM_GEMM_NC);
  const int64_t mc_max = tvm_gemm_min(M, TVM_GEMM_MC);
  const int64_t a_panels = (mc_max + MR - 1) / MR, b_panels = (nc_max + NR - 1) / NR;
  T* ap = (T*)tvm_gemm_alloc((size_t)(a_panels * MR * kc_max) * sizeof(T));
  T* bp = (T*)tvm_gemm_alloc((size_t)(b_panels * NR * kc_max) * sizeof(T));
  T tile[MR * NR] __attribute__((aligned(64)));
  if (ap == NULL || bp == NULL) {
    free(ap);
    free(bp);
    return -1;
  }
  for (int64_t jc = j0; jc < j1; jc += TVM_GEMM_NC) {
    const int64_t nc = tvm_gemm_min(TVM_GEMM_NC, j1 - jc), nb = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < K; pc += TVM_GEMM_KC) {
      const int64_t kc = tvm_gemm_min(TVM_GEMM_KC, K - pc);
      for (int64_t q = 0; q < nb; ++q)
        FN(tvm_gemm_pack_b_)(bp, b, b_code, b_rs, b_cs, pc, kc, jc, nc, q);
      for (int64_t ic = i0; ic < i1; ic += TVM_GEMM_MC) {
        const int64_t mc = tvm_gemm_min(TVM_GEMM_MC, i1 - ic), mb = (mc + MR - 1) / MR;
        for (int64_t p = 0; p < mb; ++p)
          FN(tvm_gemm_pack_a_)(ap, a, a_code, a_rs, a_cs, ic, mc, pc, kc, p);
        for (int64_t q = 0; q < nb; ++q) {
          for (int64_t p = 0; p < mb; ++p) {
            FN(tvm_gemm_tile_)(kc, ap + p * MR * kc, bp + q * NR * kc, tile);
            FN(tvm_gemm_store_)(tile, tvm_gemm_min(MR, mc - p * MR),
                                tvm_gemm_min(NR, nc - q * NR), alpha, beta, c, c_code, c_rs,
                                c_cs, d, d_rs, ic + p * MR, jc + q * NR, pc == 0);
          }
        }
      }
    }
  }
  free(ap);
  free(bp);
  return 0;
}

/* D (M x N, row stride d_rs, compute type) = alpha * A @ B + beta * C (C may be NULL).
 * Threads take disjoint column (or, for narrow D, row) ranges of D and never wait for each
 * other until the end: on a shared machine a descheduled thread delays only itself. */
static int32_t FN(tvm_gemm_core_)(int64_t M, int64_t N, int64_t K, T alpha, const void* a,
                                   int32_t a_code, int64_t a_rs, int64_t a_cs, const void* b,
                                   int32_t b_code, int64_t b_rs, int64_t b_cs, T beta,
                                   const void* c, int32_t c_code, int64_t c_rs, int64_t c_cs,
                                   T* d, int64_t d_rs, int32_t nthreads) {
  int32_t status = 0;
  /* threads pay off from about a 64^3 product */
  const int parallel = (double)M * (double)N * (double)K >= 262144.0;
  (void)nthreads;
  (void)parallel;
#pragma omp parallel num_threads(nthreads > 0 ? nthreads : tvm_host_threads()) if (parallel)
  {
    int64_t t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    int64_t i0 = 0, i1 = M, j0 = 0, j1 = N;
    if (N >= nt * NR * 2) {  /* split the columns, in whole register tiles */
      const int64_t tiles = (N + NR - 1) / NR;
      j0 = tvm_gemm_min(N, tiles * t / nt * NR);
      j1 = tvm_gemm_min(N, tiles * (t + 1) / nt * NR);
    } else {
      const int64_t tiles = (M + MR - 1) / MR;
      i0 = tvm_gemm_min(M, tiles * t / nt * MR);
      i1 = tvm_gemm_min(M, tiles * (t + 1) / nt * MR);
    }
    if (FN(tvm_gemm_block_)(i0, i1, j0, j1, K, alpha, a, a_code, a_rs, a_cs, b, b_code, b_rs,
                            b_cs, beta, c, c_code, c_rs, c_cs, d, d_rs) != 0) {
#pragma omp atomic write
      status = -1;
    }
  }
  return status;
}

/* The entry point: D may be stored as float16/bfloat16 (d_code 1/2), then it is computed in a
 * T workspace and converted once at the end (no rounding between K slices). */
static int32_t FN(tvm_host_gemm_)(int64_t M, int64_t N, int64_t K, T alpha, const void* a,
                                   int32_t a_code, int64_t a_rs, int64_t a_cs, const void* b,
                                   int32_t b_code, int64_t b_rs, int64_t b_cs, T beta,
                                   const void* c, int32_t c_code, int64_t c_rs, int64_t c_cs,
                                   void* d, int32_t d_code, int64_t d_rs, int32_t nthreads) {
  if (M <= 0 || N <= 0) return 0;
  if (beta == (T)0) c = NULL;
  if (d_code == 0 && K > 0)
    return FN(tvm_gemm_core_)(M, N, K, alpha, a, a_code, a_rs, a_cs, b, b_code, b_rs, b_cs,
                              beta, c, c_code, c_rs, c_cs, (T*)d, d_rs, nthreads);
  T* w = (T*)tvm_gemm_alloc((size_t)(M * N) * sizeof(T));
  if (w == NULL) return -1;
  int32_t status = 0;
  if (K > 0) {
    status = FN(tvm_gemm_core_)(M, N, K, alpha, a, a_code, a_rs, a_cs, b, b_code, b_rs, b_cs,
                                beta, c, c_code, c_rs, c_cs, w, N, nthreads);
  } else {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        w[i * N + j] = c == NULL ? (T)0 : beta * FN(tvm_gemm_load_)(c, c_code, i * c_rs + j * c_cs);
  }
  for (int64_t i = 0; status == 0 && i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      const T v = w[i * N + j];
      if (d_code == 1) ((uint16_t*)d)[i * d_rs + j] = tvm_f32_to_f16((float)v);
      else if (d_code == 2) ((uint16_t*)d)[i * d_rs + j] = tvm_f32_to_bf16((float)v);
      else ((T*)d)[i * d_rs + j] = v;
    }
  }
  free(w);
  return status;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#undef TVM_GEMM_FMA
#undef V
#undef NR
#undef MR
#undef VL
#undef FN
#undef T
