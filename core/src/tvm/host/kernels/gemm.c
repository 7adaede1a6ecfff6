/* GEMM of the host target: D = alpha * op(A) @ op(B) + beta * C, cache-blocked and packed.
 *
 * Included by the host codegen once per compute type, with TVM_GEMM_T (float or double) and
 * TVM_GEMM_SFX (f32 or f64) defined, when a kernel calls tvm_host_gemm_<sfx>. Every operand
 * is a 2-D strided view (row stride, column stride, in elements), so transposes and regions of
 * larger buffers need no copies. Inputs may be stored as float16 or bfloat16 (code 1 or 2;
 * code 0 is the compute type): packing converts them, the arithmetic is done in TVM_GEMM_T.
 * The codegen puts its 16-bit conversion helpers (tvm_f16_to_f32, ...) before this file.
 *
 * Loop structure (Goto/BLIS): A is packed once into MR-high panels over all of K; for each
 * column strip of D and KC-deep slice of K, B's slice is packed into NR-wide panels; an MR x NR
 * register tile of D is computed from one A panel and one B panel with vector FMAs (GCC/Clang
 * vector extensions: 512-bit with AVX-512, 256-bit with AVX, else 128) and added to D in
 * place (a tile at an edge, or the first slice with a C, goes through a tile buffer).
 * OpenMP threads share the packing of A, then take column strips from a queue (see
 * tvm_gemm_core_; kernels/threads.c, which the codegen puts before this file, says how many
 * threads a small one takes).
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
#define TVM_GEMM_KC 512      /* depth of a packed slice of B: D is updated K / KC times */
#define TVM_GEMM_NC 3072     /* widest column strip */
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
/* the same vector at any element boundary (rows of D, of an unpacked B) */
typedef T FN(tvm_gemm_uvec_) __attribute__((vector_size(TVM_GEMM_VBYTES), aligned(sizeof(T))));

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
      if (cols == NR) {  /* a whole panel row: vector copies */
#pragma GCC unroll 4
        for (int v = 0; v < TVM_GEMM_NV; ++v)
          *(V*)(out + k * NR + v * VL) = *(const FN(tvm_gemm_uvec_)*)(src + v * VL);
        continue;
      }
      for (; c < cols; ++c) out[k * NR + c] = src[c];
    } else {
      for (; c < cols; ++c) out[k * NR + c] = FN(tvm_gemm_load_)(b, code, row + c * cs);
    }
    for (; c < NR; ++c) out[k * NR + c] = (T)0;
  }
}

/* The MR x NR register tile: acc = A panel @ B panel over kc, then out = alpha * acc, or
 * out += alpha * acc with `accumulate`; `out` has row stride `ld` (D itself for a whole tile,
 * else a tile buffer). Modules are compiled with -ffp-contract=off; this loop asks for fused
 * multiply-adds. */
#if defined(__clang__)
#define TVM_GEMM_FMA
#else
#define TVM_GEMM_FMA __attribute__((optimize("fp-contract=fast")))
#endif
TVM_GEMM_FMA static void FN(tvm_gemm_tile_)(int64_t kc, const T* restrict a, const T* restrict b,
                                T* restrict out, int64_t ld, T alpha, int accumulate) {
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
  const V va = (V){0} + alpha;
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < TVM_GEMM_NV; ++v) {
      FN(tvm_gemm_uvec_)* p = (FN(tvm_gemm_uvec_)*)(out + r * ld + v * VL);
      *p = accumulate ? *p + va * acc[r][v] : va * acc[r][v];
    }
  }
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

/* D[:, j0:j1] (row stride d_rs, compute type) = alpha * A @ B + beta * C for one column strip,
 * by one thread: A comes packed whole (MR-high panels over all of K, `ap`); B's slices of the
 * strip are packed into this thread's `bp` (TVM_GEMM_KC x the strip, in NR-wide panels). */
static void FN(tvm_gemm_strip_)(int64_t j0, int64_t j1, int64_t M, int64_t K, T alpha,
                                 const T* ap, const void* b, int32_t b_code, int64_t b_rs,
                                 int64_t b_cs, T beta, const void* c, int32_t c_code,
                                 int64_t c_rs, int64_t c_cs, T* d, int64_t d_rs, T* bp) {
  const int64_t nc = j1 - j0, nb = (nc + NR - 1) / NR, panels = (M + MR - 1) / MR;
  T tile[MR * NR] __attribute__((aligned(64)));
  for (int64_t pc = 0; pc < K; pc += TVM_GEMM_KC) {
    const int64_t kc = tvm_gemm_min(TVM_GEMM_KC, K - pc);
    for (int64_t q = 0; q < nb; ++q)
      FN(tvm_gemm_pack_b_)(bp, b, b_code, b_rs, b_cs, pc, kc, j0, nc, q);
    for (int64_t p = 0; p < panels; ++p) {  /* an A panel stays in L1, B's slice in L2 */
      const T* panel = ap + p * MR * K + pc * MR;
      const int64_t rows = tvm_gemm_min(MR, M - p * MR);
      for (int64_t q = 0; q < nb; ++q) {
        const int64_t cols = tvm_gemm_min(NR, nc - q * NR);
        if (rows == MR && cols == NR && (pc > 0 || c == NULL)) {  /* straight into D */
          FN(tvm_gemm_tile_)(kc, panel, bp + q * NR * kc, d + p * MR * d_rs + j0 + q * NR,
                             d_rs, alpha, pc > 0);
          continue;
        }
        FN(tvm_gemm_tile_)(kc, panel, bp + q * NR * kc, tile, NR, (T)1, 0);
        FN(tvm_gemm_store_)(tile, rows, cols, alpha, beta, c, c_code, c_rs, c_cs, d, d_rs,
                            p * MR, j0 + q * NR, pc == 0);
      }
    }
  }
}

/* D (M x N, row stride d_rs, compute type) = alpha * A @ B + beta * C (C may be NULL).
 *
 * The team first packs A whole (its panels shared out), then takes column strips of D from a
 * queue (schedule(dynamic)), each thread packing B for its strip: a thread descheduled by
 * another program delays one strip, which the others do not wait for (they take the rest). So
 * a GEMM worth more than TVM_GEMM_WIDE multiply-adds uses every OpenMP thread whatever the
 * load (over many time slices more threads get more of the machine, as numpy's BLAS does); a
 * smaller one, shorter than a time slice, takes tvm_host_threads() (kernels/threads.c). */
#ifndef TVM_GEMM_WIDE
#define TVM_GEMM_WIDE 67108864.0 /* 512^3/2: a few milliseconds on one core */
#endif
static int32_t FN(tvm_gemm_core_)(int64_t M, int64_t N, int64_t K, T alpha, const void* a,
                                   int32_t a_code, int64_t a_rs, int64_t a_cs, const void* b,
                                   int32_t b_code, int64_t b_rs, int64_t b_cs, T beta,
                                   const void* c, int32_t c_code, int64_t c_rs, int64_t c_cs,
                                   T* d, int64_t d_rs, int32_t nthreads) {
  const double work = (double)M * (double)N * (double)K;
  const int parallel = work >= 262144.0; /* threads pay off from about a 64^3 product */
  int team = 1;
#ifdef _OPENMP
  team = nthreads > 0 ? nthreads : work >= TVM_GEMM_WIDE ? omp_get_max_threads()
                                                          : tvm_host_threads();
#endif
  if (!parallel) team = 1;
  const int64_t panels = (M + MR - 1) / MR;
  /* strips of whole register tiles, about four per thread, for the queue to balance */
  int64_t width = (N + 4 * team - 1) / (4 * team);
  width = tvm_gemm_min(TVM_GEMM_NC, ((width + NR - 1) / NR) * NR);
  if (width < 4 * NR) width = 4 * NR;
  const int64_t strips = (N + width - 1) / width;
  const int64_t kc_max = tvm_gemm_min(K, TVM_GEMM_KC);
  T* ap = (T*)tvm_gemm_alloc((size_t)(panels * MR * K) * sizeof(T));
  if (ap == NULL) return -1;
  int32_t status = 0;
  (void)team;
#pragma omp parallel num_threads(team) if (team > 1)
  {
#pragma omp for schedule(dynamic, 4)
    for (int64_t p = 0; p < panels; ++p)
      FN(tvm_gemm_pack_a_)(ap, a, a_code, a_rs, a_cs, 0, M, 0, K, p);
    T* bp = (T*)tvm_gemm_alloc((size_t)(width * kc_max) * sizeof(T));
    if (bp == NULL) {
#pragma omp atomic write
      status = -1;
    }
#pragma omp for schedule(dynamic, 1)
    for (int64_t s = 0; s < strips; ++s) {
      if (bp == NULL) continue;
      FN(tvm_gemm_strip_)(s * width, tvm_gemm_min(N, (s + 1) * width), M, K, alpha, ap, b,
                          b_code, b_rs, b_cs, beta, c, c_code, c_rs, c_cs, d, d_rs, bp);
    }
    free(bp);
  }
  free(ap);
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
