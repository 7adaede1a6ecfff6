// tvm_cuda_emu.h: the CUDA built-ins as C++17 for g++, so that the CUDA C++ tvm generates runs
// on the CPU (tvm.compile(f, "cuda", emulate=True); tvm_backend_cuda.emulator).
//
// Execution model: core's fiber runtime (tvm/runtime/emu/tvm_emu_fibers.h): CTAs spread over OS
// threads, each thread of a CTA a fiber, __syncthreads a block barrier (strict: the whole CTA,
// at one call), warp functions collectives of the lanes at the same call site.
//
// The Python side (emulator.py) rewrites three kinds of declarations of the generated source,
// keeping its line numbers: a kernel's pointer parameters become checked global pointers
// (GPtr<T>), `__shared__ T name[n]` a checked view of the CTA's shared window (TVM_EMU_SHARED),
// and the dynamic shared array and its sub-buffers checked views of the dynamic window. Every
// access through them is bounds-checked: an access outside its buffer stops the grid with a
// BoundsCheckError naming the kernel, the buffer, the index and the thread.
//
// Half and bfloat16 arithmetic rounds as the GPU does (computed in float, one rounding to the
// 16-bit type: exact for +, -, *, as float holds those results of 16-bit operands; division
// and the math functions may differ in the last bit).
#pragma once
#pragma GCC system_header

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "tvm_emu_fibers.h"

// ---- qualifiers -------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__
#define __constant__ static
#define __grid_constant__
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __align__(n) __attribute__((aligned(n)))

namespace tvm_cuda_emu {

using tvm_emu::Dim3;

inline const tvm_emu::ThreadCtx& tctx() {
  static const tvm_emu::ThreadCtx outside{};
  tvm_emu::Fiber* f = tvm_emu::current();
  return f ? f->ctx : outside;
}
inline unsigned site_of(unsigned line, unsigned col) { return line * 4096u + col; }
// a worker thread's state vector (one entry a fiber slot, or a CTA), made on first use and
// grown to at least n entries
template <class T>
inline std::vector<T>& tls_sized(std::vector<T>*& v, size_t n) {
  if (!v) v = new std::vector<T>();
  if (v->size() < n) v->resize(n);
  return *v;
}

// ---- checked memory ---------------------------------------------------------------------------
[[noreturn]] inline void out_of_bounds(const char* space, const char* name, long long index,
                                       size_t elem, size_t count, const char* what) {
  tvm_emu::fail(tvm_emu::kBounds,
                "out-of-bounds %s of %s buffer '%s': index %lld is outside [0, %zu) "
                "(%zu-byte elements)",
                what, space, name, index, count, elem);
}

// The shared-memory race detector (below): every access through a checked shared pointer.
inline bool race_on = false;
inline void race_access(const void* p, size_t n);

// A pointer into a buffer (a kernel argument or a shared-memory array) that checks every access
// against the buffer's extent. Decays to T* where code needs a raw pointer.
template <class T>
struct Ptr {
  T* p = nullptr;
  const char* base = nullptr;  // the buffer's first byte
  size_t bytes = 0;            // the buffer's size
  const char* name = "";
  const char* space = "global";

  Ptr() = default;
  Ptr(T* p_, const void* base_, size_t bytes_, const char* name_, const char* space_)
      : p(p_), base(static_cast<const char*>(base_)), bytes(bytes_), name(name_), space(space_) {}

  static constexpr size_t esize() {
    if constexpr (std::is_void_v<std::remove_cv_t<T>>) return 1;
    else return sizeof(T);
  }
  void check(long long i, size_t n, const char* what) const {
    const char* at = reinterpret_cast<const char*>(p) + i * (long long)esize();
    if (at < base || at + n > base + bytes) {
      long long idx = (at - base) / (long long)esize();
      if (at < base && (at - base) % (long long)esize()) --idx;
      out_of_bounds(space, name, idx, esize(), bytes / esize(), what);
    }
  }
  T& operator[](long long i) const {
    check(i, sizeof(T), "access");
    if (race_on && space[0] != 'g') race_access(p + i, sizeof(T));
    return p[i];
  }
  T& operator*() const {
    check(0, sizeof(T), "access");
    if (race_on && space[0] != 'g') race_access(p, sizeof(T));
    return *p;
  }
  Ptr operator+(long long i) const { Ptr q = *this; q.p = p + i; return q; }
  Ptr operator-(long long i) const { Ptr q = *this; q.p = p - i; return q; }
  Ptr& operator+=(long long i) { p += i; return *this; }
  operator T*() const { return p; }
  // (float4*)(A + i): a view as another type, checked for the whole element at once
  template <class U, class = std::enable_if_t<!std::is_same_v<U, T*>>>
  explicit operator U() const {
    if constexpr (std::is_pointer_v<U>) {
      using E = std::remove_pointer_t<U>;
      if constexpr (!std::is_void_v<std::remove_cv_t<E>>) {
        const char* at = reinterpret_cast<const char*>(p);
        if (at < base || at + sizeof(E) > base + bytes)
          out_of_bounds(space, name, (at - base) / (long long)esize(), esize(), bytes / esize(),
                        "vector access");
      }
      return (U)(p);
    } else {
      return (U)(reinterpret_cast<uintptr_t>(p));
    }
  }
  template <class U>
  Ptr<U> view(size_t byte_offset) const {
    char* at = const_cast<char*>(reinterpret_cast<const char*>(p)) + byte_offset;
    return Ptr<U>(reinterpret_cast<U*>(at), base, bytes, name, space);
  }
};

template <class T>
using GPtr = Ptr<T>;

// The storage of `__shared__ T name[n]` (rewritten to TVM_EMU_SHARED(T, name, n, align)).
#define TVM_EMU_SHARED(T, name, n, align)                                                  \
  static const char name##_tvm_key_ = 0;                                                 \
  ::tvm_cuda_emu::Ptr<T> name(                                                           \
      static_cast<T*>(::tvm_emu::shared_static(&name##_tvm_key_, sizeof(T) * (n), (align), #name)), \
      ::tvm_emu::shared_static(&name##_tvm_key_, sizeof(T) * (n), (align), #name), sizeof(T) * (n), \
      #name, "shared")

inline unsigned char* dyn_base() {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  return w->shared + (w->shared_size - w->cfg->dynamic_bytes);
}
inline size_t dyn_bytes() { return tvm_emu::tls_worker->cfg->dynamic_bytes; }
#define TVM_EMU_DYN_SHARED(T, name)                                                      \
  ::tvm_cuda_emu::Ptr<T> name(reinterpret_cast<T*>(::tvm_cuda_emu::dyn_base()),          \
                              ::tvm_cuda_emu::dyn_base(), ::tvm_cuda_emu::dyn_bytes(), #name, \
                              "dynamic shared")

// A kernel argument: converts to the parameter's type (a checked pointer or a scalar).
template <class P>
struct is_ptr : std::false_type {};
template <class T>
struct is_ptr<Ptr<T>> : std::true_type {};

struct Arg {
  void** args;
  const uint64_t* sizes;
  const char* const* names;
  int i;
  template <class P>
  operator P() const {
    if constexpr (is_ptr<P>::value) {
      using T = std::remove_pointer_t<decltype(P().p)>;
      return P(static_cast<T*>(args[i]), args[i], sizes[i], names[i], "global");
    } else {
      return *static_cast<P*>(args[i]);
    }
  }
};

// ---- shared-memory addresses --------------------------------------------------------------------
// A 32-bit shared address is the offset in the CTA's window; a shared::cluster address of
// another CTA of the cluster (mapa's result) is that offset with (b + 1) << 24 added, b the
// CTA's index in the worker's group (its cluster's first index plus its rank).
constexpr unsigned kClusterShift = 24;
constexpr unsigned kOffsetMask = (1u << kClusterShift) - 1u;
inline unsigned cta_of_rank(unsigned rank, const char* what) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  if (rank >= w->csize)
    tvm_emu::fail(tvm_emu::kError, "%s: CTA rank %u of a cluster of %u CTAs", what, rank,
                  w->csize);
  return w->cur_cta - w->cur_cta % w->csize + rank;
}
inline unsigned encode_cta(unsigned addr, unsigned cta) {
  addr &= kOffsetMask;
  return cta == tvm_emu::tls_worker->cur_cta ? addr : addr | ((cta + 1u) << kClusterShift);
}
// %cluster_ctarank and %cluster_nctarank (clusters are one-dimensional runs of CTAs here)
inline unsigned cluster_ctarank() {
  return tvm_emu::tls_worker->cur_cta % tvm_emu::tls_worker->csize;
}
inline unsigned cluster_nctarank() { return tvm_emu::tls_worker->csize; }
inline unsigned cluster_addr(unsigned addr, unsigned rank) {
  return encode_cta(addr, cta_of_rank(rank, "mapa"));
}
inline unsigned addr_rank(unsigned addr) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  return addr >> kClusterShift ? (addr >> kClusterShift) - 1u : w->cur_cta;
}
inline unsigned cvta_to_shared(const void* p) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const unsigned char* q = static_cast<const unsigned char*>(p);
  if (w && q >= w->shared && q < w->shared + w->shared_size + 1) return unsigned(q - w->shared);
  for (unsigned r = 0; w && r < w->ncta; ++r) {  // a generic address in a peer CTA (mapa's)
    const unsigned char* base = w->cta_shared[r];
    if (q >= base && q < base + w->shared_size + 1) return encode_cta(unsigned(q - base), r);
  }
  tvm_emu::fail(tvm_emu::kError, "__cvta_generic_to_shared of an address outside shared memory");
}
inline unsigned char* smem_at(unsigned addr, size_t n, const char* what) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const unsigned rank = addr_rank(addr), off = addr & kOffsetMask;
  if (rank >= w->ncta)
    tvm_emu::fail(tvm_emu::kBounds, "%s: shared::cluster address 0x%x is outside the cluster",
                  what, addr);
  if (size_t(off) + n > w->shared_size)
    tvm_emu::fail(tvm_emu::kBounds, "%s: shared address %u (+%zu bytes) is outside the CTA's %zu "
                  "bytes of shared memory", what, off, n, w->shared_size);
  return w->cta_shared[rank] + off;
}

}  // namespace tvm_cuda_emu

// ---- thread indices -----------------------------------------------------------------------------
#define threadIdx (::tvm_cuda_emu::tctx().tid)
#define blockIdx (::tvm_cuda_emu::tctx().bid)
#define blockDim (::tvm_cuda_emu::tctx().bdim)
#define gridDim (::tvm_cuda_emu::tctx().gdim)
constexpr int warpSize = 32;

inline unsigned __cvta_generic_to_shared(const void* p) { return tvm_cuda_emu::cvta_to_shared(p); }

// ---- synchronisation ----------------------------------------------------------------------------
inline void __syncthreads(unsigned line = __builtin_LINE()) {
  tvm_emu::block(tvm_emu::kAtBarrier, line);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
[[noreturn]] inline void __trap() {
  tvm_emu::fail(tvm_emu::kError, "__trap() (a device-side assertion failed)");
}
inline void __nanosleep(unsigned) {
  tvm_emu::wait_until([](const void*) { return true; }, nullptr, "sleeping");
}
inline long long clock64() { return 0; }
inline unsigned __activemask() { return 0xffffffffu; }

// ---- warp collectives ---------------------------------------------------------------------------
namespace tvm_cuda_emu {
enum WarpOp { kShfl, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll, kSyncWarp };

// Deposit v, wait for the lanes at this call site; check that `mask` names exactly the lanes
// (of the warp's existing lanes) that arrived.
template <class T>
const tvm_emu::WarpSnap& warp_exchange(const T& v, unsigned mask, int op, unsigned site,
                                       const char* fn) {
  static_assert(sizeof(T) <= tvm_emu::kSlot, "warp function on a type larger than 64 bytes");
  const tvm_emu::WarpSnap& snap = tvm_emu::exchange(&v, sizeof(T), op, 0, site);
  const tvm_emu::ThreadCtx& c = tctx();
  unsigned total = c.bdim.x * c.bdim.y * c.bdim.z;
  unsigned lanes_here = std::min(32u, total - c.warp * 32u);
  unsigned existing = lanes_here == 32 ? 0xffffffffu : ((1u << lanes_here) - 1u);
  if ((mask & existing) & ~snap.mask)
    tvm_emu::fail(tvm_emu::kDivergence,
                  "warp divergence: %s with mask 0x%08x, but only lanes 0x%08x of warp %u "
                  "reached this call together (the others exited or wait elsewhere)",
                  fn, mask, snap.mask, c.warp);
  return snap;
}

template <class T>
T lane_value(const tvm_emu::WarpSnap& s, unsigned lane, const T& own) {
  if (lane >= 32 || !((s.mask >> lane) & 1u)) return own;
  T v;
  std::memcpy((void*)&v, s.released[lane], sizeof(T));
  return v;
}
}  // namespace tvm_cuda_emu

// the call site of a warp collective: its line (lanes at the same line are released together)
#define TVM_EMU_SITE unsigned site_ = __builtin_LINE(), unsigned col_ = 0
namespace tvm_cuda_emu {
constexpr unsigned kOwnLane = 32;  // a source lane that leaves the thread its own value
// a shuffle of v among the lanes of mask: from(lane, seg) is the lane the thread reads (seg: the
// first lane of its width-lane segment), or kOwnLane
template <class T, class From>
T shuffle(unsigned mask, T v, int width, WarpOp op, unsigned site, const char* name, From from) {
  auto& s = warp_exchange(v, mask, op, site, name);
  unsigned lane = tctx().lane;
  return lane_value(s, from(lane, lane & ~unsigned(width - 1)), v);
}
}  // namespace tvm_cuda_emu
template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32, TVM_EMU_SITE) {
  return tvm_cuda_emu::shuffle(mask, v, width, tvm_cuda_emu::kShfl,
                               tvm_cuda_emu::site_of(site_, col_), "__shfl_sync",
                               [&](unsigned, unsigned seg) {
                                 return seg + (unsigned(src) % unsigned(width));
                               });
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32, TVM_EMU_SITE) {
  return tvm_cuda_emu::shuffle(mask, v, width, tvm_cuda_emu::kShflXor,
                               tvm_cuda_emu::site_of(site_, col_), "__shfl_xor_sync",
                               [&](unsigned lane, unsigned seg) {
                                 unsigned src = lane ^ unsigned(lane_mask);
                                 bool out = src < seg || src >= seg + unsigned(width);
                                 return out ? tvm_cuda_emu::kOwnLane : src;
                               });
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32, TVM_EMU_SITE) {
  return tvm_cuda_emu::shuffle(mask, v, width, tvm_cuda_emu::kShflUp,
                               tvm_cuda_emu::site_of(site_, col_), "__shfl_up_sync",
                               [&](unsigned lane, unsigned seg) {
                                 return lane - seg < delta ? tvm_cuda_emu::kOwnLane : lane - delta;
                               });
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32, TVM_EMU_SITE) {
  return tvm_cuda_emu::shuffle(mask, v, width, tvm_cuda_emu::kShflDown,
                               tvm_cuda_emu::site_of(site_, col_), "__shfl_down_sync",
                               [&](unsigned lane, unsigned seg) {
                                 bool out = lane + delta >= seg + unsigned(width);
                                 return out ? tvm_cuda_emu::kOwnLane : lane + delta;
                               });
}
inline unsigned __ballot_sync(unsigned mask, int pred, TVM_EMU_SITE) {
  auto& s = tvm_cuda_emu::warp_exchange(pred, mask, tvm_cuda_emu::kBallot,
                                        tvm_cuda_emu::site_of(site_, col_), "__ballot_sync");
  unsigned bits = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (((mask & s.mask) >> l) & 1u && tvm_cuda_emu::lane_value(s, l, 0)) bits |= 1u << l;
  return bits;
}
inline int __any_sync(unsigned mask, int pred, TVM_EMU_SITE) {
  return __ballot_sync(mask, pred, site_, col_) != 0;
}
inline int __all_sync(unsigned mask, int pred, TVM_EMU_SITE) {
  unsigned b = __ballot_sync(mask, pred, site_, col_);
  auto& s = tvm_emu::tls_worker->warps[tvm_cuda_emu::tctx().warp_slot];
  return (b & s.mask & mask) == (s.mask & mask);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, TVM_EMU_SITE) {
  tvm_cuda_emu::warp_exchange(0, mask, tvm_cuda_emu::kSyncWarp,
                              tvm_cuda_emu::site_of(site_, col_), "__syncwarp");
}
#define TVM_EMU_REDUCE(name, expr)                                                        \
  inline unsigned name(unsigned mask, unsigned v, TVM_EMU_SITE) {                          \
    auto& s = tvm_cuda_emu::warp_exchange(v, mask, tvm_cuda_emu::kShfl,                    \
                                          tvm_cuda_emu::site_of(site_, col_), #name);      \
    bool first = true;                                                                      \
    unsigned acc = 0;                                                                       \
    for (unsigned l = 0; l < 32; ++l) {                                                     \
      if (!(((mask & s.mask) >> l) & 1u)) continue;                                         \
      unsigned b = tvm_cuda_emu::lane_value(s, l, 0u);                                      \
      acc = first ? b : (expr);                                                             \
      first = false;                                                                        \
    }                                                                                       \
    return acc;                                                                             \
  }
TVM_EMU_REDUCE(__reduce_add_sync, acc + b)
TVM_EMU_REDUCE(__reduce_and_sync, acc & b)
TVM_EMU_REDUCE(__reduce_or_sync, acc | b)
TVM_EMU_REDUCE(__reduce_xor_sync, acc ^ b)
TVM_EMU_REDUCE(__reduce_max_sync, acc > b ? acc : b)
TVM_EMU_REDUCE(__reduce_min_sync, acc < b ? acc : b)
#undef TVM_EMU_REDUCE

// ---- 16- and 8-bit floating point ------------------------------------------------------------------
namespace tvm_cuda_emu {
inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// A wgmma's float accumulators hold this quiet NaN until its wgmma.wait_group (the result is
// kept aside): arithmetic on it keeps the payload, and a conversion to a 16- or 8-bit float (an
// epilogue's) that meets it reports the read. See "wgmma accumulators in flight" below.
constexpr uint32_t kAccPoison = 0x7fe0acc0u;
[[noreturn]] inline void acc_read_before_wait() {
  tvm_emu::fail(tvm_emu::kError, "a wgmma accumulator was read before its wgmma.wait_group: a "
                "value computed from an accumulator still in flight reached a conversion (the "
                "wgmma's registers are undefined until the wait_group that completes it)");
}
inline void check_poison(float f) {
  if ((f2u(f) & 0x7fffffffu) == kAccPoison) acc_read_before_wait();
}

// float -> IEEE binary16, round to nearest even (as __float2half_rn)
inline uint16_t float_to_half_bits(float f) {
  uint32_t x = f2u(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag == kAccPoison) acc_read_before_wait();
  if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to infinity
  if (mag < 0x38800000u) {  // subnormal half (or zero)
    float a = u2f(mag);
    // a * 2^24 rounded to nearest even integer
    float scaled = a * 16777216.0f;
    uint32_t r = uint32_t(std::nearbyint(scaled));
    return uint16_t(sign | r);
  }
  uint32_t e = ((mag >> 23) - 112u) << 10;
  uint32_t m = mag & 0x7fffffu;
  uint32_t h = e | (m >> 13);
  uint32_t rest = m & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}
inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = float(m) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (e == 31) return u2f(sign | 0x7f800000u | (m << 13));
  return u2f(sign | ((e + 112u) << 23) | (m << 13));
}
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    check_poison(f);
    return uint16_t((u >> 16) | 0x40u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return u2f(uint32_t(b) << 16); }

template <class Tag>
struct F16 {
  uint16_t __x = 0;
  static F16 from_bits(uint16_t b) { F16 r; r.__x = b; return r; }
  F16() = default;
  F16(float f) : __x(Tag::enc(f)) {}
  F16(double f) : __x(Tag::enc(float(f))) {}
  F16(int v) : __x(Tag::enc(float(v))) {}
  F16(unsigned v) : __x(Tag::enc(float(v))) {}
  F16(long long v) : __x(Tag::enc(float(v))) {}
  F16(unsigned long long v) : __x(Tag::enc(float(v))) {}
  operator float() const { return Tag::dec(__x); }
  F16& operator+=(F16 o) { return *this = F16(float(*this) + float(o)); }
  F16& operator-=(F16 o) { return *this = F16(float(*this) - float(o)); }
  F16& operator*=(F16 o) { return *this = F16(float(*this) * float(o)); }
  F16& operator/=(F16 o) { return *this = F16(float(*this) / float(o)); }
};
template <class Tag> F16<Tag> operator+(F16<Tag> a, F16<Tag> b) { return F16<Tag>(float(a) + float(b)); }
template <class Tag> F16<Tag> operator-(F16<Tag> a, F16<Tag> b) { return F16<Tag>(float(a) - float(b)); }
template <class Tag> F16<Tag> operator*(F16<Tag> a, F16<Tag> b) { return F16<Tag>(float(a) * float(b)); }
template <class Tag> F16<Tag> operator/(F16<Tag> a, F16<Tag> b) { return F16<Tag>(float(a) / float(b)); }
template <class Tag> F16<Tag> operator-(F16<Tag> a) { return F16<Tag>::from_bits(a.__x ^ 0x8000u); }
template <class Tag> bool operator<(F16<Tag> a, F16<Tag> b) { return float(a) < float(b); }
template <class Tag> bool operator>(F16<Tag> a, F16<Tag> b) { return float(a) > float(b); }
template <class Tag> bool operator<=(F16<Tag> a, F16<Tag> b) { return float(a) <= float(b); }
template <class Tag> bool operator>=(F16<Tag> a, F16<Tag> b) { return float(a) >= float(b); }
template <class Tag> bool operator==(F16<Tag> a, F16<Tag> b) { return float(a) == float(b); }
template <class Tag> bool operator!=(F16<Tag> a, F16<Tag> b) { return float(a) != float(b); }

struct HalfTag {
  static uint16_t enc(float f) { return float_to_half_bits(f); }
  static float dec(uint16_t b) { return half_bits_to_float(b); }
};
struct Bf16Tag {
  static uint16_t enc(float f) { return float_to_bf16_bits(f); }
  static float dec(uint16_t b) { return bf16_bits_to_float(b); }
};

// 8-bit floats (E4M3: bias 7, no infinity, S.1111.111 is NaN; E5M2: bias 15, IEEE-like),
// converted from float with round to nearest even and saturation to the largest finite value
// (as the __nv_fp8 constructors: __NV_SATFINITE).
template <int E, int M>
struct Fp8Format {
  static constexpr int bias = (1 << (E - 1)) - 1;
  static float decode(uint8_t v) {
    int sign = v >> 7, e = (v >> M) & ((1 << E) - 1), m = v & ((1 << M) - 1);
    if (E == 4 && e == 15 && m == 7) return NAN;
    if (E == 5 && e == 31) return m ? NAN : (sign ? -INFINITY : INFINITY);
    float mag = e == 0 ? std::ldexp(float(m), 1 - bias - M)
                       : std::ldexp(float((1 << M) | m), e - bias - M);
    return sign ? -mag : mag;
  }
  static uint8_t max_code() { return E == 4 ? 0x7e : 0x7b; }
  static uint8_t encode(float f) {
    if (std::isnan(f)) {
      check_poison(f);
      return 0x7f;
    }
    uint8_t sign = std::signbit(f) ? 0x80 : 0;
    float a = std::fabs(f);
    // binary search the largest code whose magnitude is <= a (codes are ordered by magnitude)
    int lo = 0, hi = max_code();
    if (a >= decode(uint8_t(hi))) return uint8_t(sign | hi);
    while (lo < hi) {
      int mid = (lo + hi + 1) / 2;
      if (decode(uint8_t(mid)) <= a) lo = mid; else hi = mid - 1;
    }
    float below = decode(uint8_t(lo)), above = decode(uint8_t(lo + 1));
    int code = lo;
    if (a - below > above - a || (a - below == above - a && (lo & 1))) code = lo + 1;
    return uint8_t(sign | code);
  }
};
template <int E, int M>
struct Fp8 {
  uint8_t __x = 0;
  Fp8() = default;
  Fp8(float f) : __x(Fp8Format<E, M>::encode(f)) {}
  Fp8(double f) : __x(Fp8Format<E, M>::encode(float(f))) {}
  template <class Tag>
  Fp8(F16<Tag> h) : __x(Fp8Format<E, M>::encode(float(h))) {}
  operator float() const { return Fp8Format<E, M>::decode(__x); }
};
}  // namespace tvm_cuda_emu

using __half = tvm_cuda_emu::F16<tvm_cuda_emu::HalfTag>;
using half = __half;
using __nv_bfloat16 = tvm_cuda_emu::F16<tvm_cuda_emu::Bf16Tag>;
using nv_bfloat16 = __nv_bfloat16;
using __nv_fp8_e4m3 = tvm_cuda_emu::Fp8<4, 3>;
using __nv_fp8_e5m2 = tvm_cuda_emu::Fp8<5, 2>;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return float(h); }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hfma(__half a, __half b, __half c) { return __half(std::fma(float(a), float(b), float(c))); }
inline __half __hmax(__half a, __half b) { return float(a) > float(b) ? a : b; }
inline __half __hmin(__half a, __half b) { return float(a) < float(b) ? a : b; }
inline __half hexp(__half a) { return __half(std::exp(float(a))); }
inline __half hsqrt(__half a) { return __half(std::sqrt(float(a))); }

// ---- vector types -------------------------------------------------------------------------------
#define TVM_EMU_VEC(T, name, align)                                                         \
  struct __attribute__((aligned(align * 1))) name##1 { T x; };                              \
  struct __attribute__((aligned(align * 2))) name##2 { T x, y; };                           \
  struct name##3 { T x, y, z; };                                                            \
  struct __attribute__((aligned(align * 4 > 16 ? 16 : align * 4))) name##4 { T x, y, z, w; }; \
  inline name##2 make_##name##2(T x, T y) { return {x, y}; }                                \
  inline name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; }                        \
  inline name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }
TVM_EMU_VEC(float, float, 4)
TVM_EMU_VEC(int, int, 4)
TVM_EMU_VEC(unsigned int, uint, 4)
TVM_EMU_VEC(short, short, 2)
TVM_EMU_VEC(unsigned short, ushort, 2)
TVM_EMU_VEC(signed char, char, 1)
TVM_EMU_VEC(unsigned char, uchar, 1)
TVM_EMU_VEC(long long, longlong, 8)
TVM_EMU_VEC(double, double, 8)
#undef TVM_EMU_VEC
struct __attribute__((aligned(4))) __half2 { __half x, y; };
using half2 = __half2;
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
using nv_bfloat162 = __nv_bfloat162;
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __half2 __float22half2_rn(float2 v) { return {__half(v.x), __half(v.y)}; }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 v) {
  return {__nv_bfloat16(v.x), __nv_bfloat16(v.y)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {float(h.x), float(h.y)}; }

// ---- math -----------------------------------------------------------------------------------------
using std::ceil;
using std::exp;
using std::floor;
using std::fabs;
using std::log;
using std::sqrt;
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; std::memcpy(&x, &i, 4); return x; }
inline float __uint_as_float(unsigned i) { float x; std::memcpy(&x, &i, 4); return x; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __mul24(int a, int b) { return a * b; }
inline int __mulhi(int a, int b) { return int((long long)a * b >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((unsigned long long)a * b >> 32); }
#define TVM_EMU_MINMAX(T)                                   \
  inline T min(T a, T b) { return a < b ? a : b; }          \
  inline T max(T a, T b) { return a > b ? a : b; }
TVM_EMU_MINMAX(int)
TVM_EMU_MINMAX(unsigned int)
TVM_EMU_MINMAX(long long)
TVM_EMU_MINMAX(unsigned long long)
TVM_EMU_MINMAX(float)
TVM_EMU_MINMAX(double)
#undef TVM_EMU_MINMAX

// ---- atomics (CTAs run on several OS threads: real atomics) ---------------------------------------
namespace tvm_cuda_emu {
inline void race_atomic(const void* p, size_t n);
template <class T, class F>
T atomic_update(T* addr, F f) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic on an odd size");
  using U = std::conditional_t<sizeof(T) == 8, uint64_t,
                               std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  U* p = reinterpret_cast<U*>(addr);
  U old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  for (;;) {
    T o;
    std::memcpy((void*)&o, &old, sizeof(T));
    T n = f(o);
    U nu;
    std::memcpy(&nu, (const void*)&n, sizeof(T));
    if (__atomic_compare_exchange_n(p, &old, nu, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      if (race_on) race_atomic(addr, sizeof(T));
      return o;
    }
  }
}
}  // namespace tvm_cuda_emu
#define TVM_EMU_ATOMIC(name, T, expr) \
  inline T name(T* addr, T v) { return tvm_cuda_emu::atomic_update(addr, [&](T o) { return static_cast<T>(expr); }); }
#define TVM_EMU_ATOMICS(T)                           \
  TVM_EMU_ATOMIC(atomicAdd, T, o + v)                \
  TVM_EMU_ATOMIC(atomicSub, T, o - v)                \
  TVM_EMU_ATOMIC(atomicExch, T, v)                   \
  TVM_EMU_ATOMIC(atomicMax, T, o > v ? o : v)        \
  TVM_EMU_ATOMIC(atomicMin, T, o < v ? o : v)
TVM_EMU_ATOMICS(int)
TVM_EMU_ATOMICS(unsigned int)
TVM_EMU_ATOMICS(unsigned long long)
TVM_EMU_ATOMICS(long long)
TVM_EMU_ATOMIC(atomicAdd, float, o + v)
TVM_EMU_ATOMIC(atomicExch, float, v)
TVM_EMU_ATOMIC(atomicAdd, double, o + v)
TVM_EMU_ATOMIC(atomicAdd, __half, o + v)
TVM_EMU_ATOMIC(atomicAdd, __nv_bfloat16, o + v)
#define TVM_EMU_BIT_ATOMICS(T)                 \
  TVM_EMU_ATOMIC(atomicAnd, T, o & v)          \
  TVM_EMU_ATOMIC(atomicOr, T, o | v)           \
  TVM_EMU_ATOMIC(atomicXor, T, o ^ v)
TVM_EMU_BIT_ATOMICS(int)
TVM_EMU_BIT_ATOMICS(unsigned int)
TVM_EMU_BIT_ATOMICS(unsigned long long)
#undef TVM_EMU_BIT_ATOMICS
#undef TVM_EMU_ATOMICS
#undef TVM_EMU_ATOMIC
inline unsigned atomicInc(unsigned* addr, unsigned limit) {
  return tvm_cuda_emu::atomic_update(addr, [&](unsigned o) { return o >= limit ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned* addr, unsigned limit) {
  return tvm_cuda_emu::atomic_update(
      addr, [&](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1; });
}
#define TVM_EMU_CAS(T)                                                              \
  inline T atomicCAS(T* addr, T compare, T val) {                                   \
    T old = compare;                                                                \
    __atomic_compare_exchange_n(addr, &old, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
    return old;                                                                     \
  }
TVM_EMU_CAS(int)
TVM_EMU_CAS(unsigned int)
TVM_EMU_CAS(unsigned long long)
TVM_EMU_CAS(unsigned short)
#undef TVM_EMU_CAS

template <class T>
T __ldg(const T* p) { return *p; }

// ---- emulation bodies of the PTX intrinsics (tvm_backend_cuda/intrinsics, emulate=) ----------------
namespace tvm_cuda_emu {
// a thread's asynchronous work in commit groups (cp.async, wgmma): an item is in the open group
// (-1) until a commit closes it; a wait for n completes the items of all but the n most recent
// groups
template <class Item>
struct CommitGroups {
  std::vector<Item> pending;
  int committed = 0;
  void commit() {
    for (auto& p : pending)
      if (p.group < 0) p.group = committed;
    ++committed;
  }
  // complete(p) for each item due; the others are kept where live(p) (a dropped item is neither)
  template <class Live, class Complete>
  void wait(int n, Live live, Complete complete) {
    std::vector<Item> keep;
    for (auto& p : pending) {
      if (!live(p)) continue;
      if (p.group >= 0 && p.group < committed - n)
        complete(p);
      else
        keep.push_back(p);
    }
    pending.swap(keep);
  }
};

// cp.async: each thread's copies read their source when issued and write shared memory when
// their group is waited for (cp.async.wait_group n leaves the n most recent groups pending), as
// the hardware may. Reading at issue is what a warp running in lockstep sees: every lane's copy
// is issued before any lane goes on to write the source.
struct PendingCopy {
  unsigned dst;  // shared address
  unsigned char data[16];  // the source bytes, read at issue
  unsigned bytes, src_bytes;
  int group;  // -1: not committed yet
};
using CpAsyncState = CommitGroups<PendingCopy>;
inline thread_local std::vector<CpAsyncState>* tls_cp = nullptr;
inline CpAsyncState& cp_state() {
  return tls_sized(tls_cp, tvm_emu::tls_worker->fibers.size())[tctx().slot];
}
inline void cp_async(unsigned dst, const void* src, unsigned bytes, unsigned src_bytes) {
  smem_at(dst, bytes, "cp.async destination");
  if (bytes > 16 || src_bytes > bytes)
    tvm_emu::fail(tvm_emu::kError, "cp.async of %u bytes (%u from the source): 4, 8 or 16 bytes, "
                  "at most all of them from the source", bytes, src_bytes);
  PendingCopy c{dst, {}, bytes, src_bytes, -1};
  if (src_bytes) std::memcpy(c.data, src, src_bytes);
  cp_state().pending.push_back(c);
}
inline void cp_async_commit() { cp_state().commit(); }
inline void cp_async_wait(int n) {
  tvm_emu::yield_slice();  // the other lanes issue their copies first, as in lockstep
  cp_state().wait(
      n, [](const PendingCopy&) { return true; },
      [](const PendingCopy& c) {
        unsigned char* d = smem_at(c.dst, c.bytes, "cp.async destination");
        if (race_on) race_access(d, c.bytes);
        std::memcpy(d, c.data, c.src_bytes);
        if (c.src_bytes < c.bytes) std::memset(d + c.src_bytes, 0, c.bytes - c.src_bytes);
      });
}
inline void cp_async_reset_block(tvm_emu::Worker&) {
  if (tls_cp) tls_cp->clear();
}
}  // namespace tvm_cuda_emu

// mbarrier: the 64-bit word in shared memory holds the expected arrival count (bits 0-15), the
// pending arrivals of the current phase (16-31), the pending transaction bytes (32-62, signed)
// and the phase parity (63). A phase completes when its pending arrivals and bytes reach zero.
namespace tvm_cuda_emu {
struct MbarState {
  unsigned expected, pending, phase;
  long long tx;
};
inline MbarState mbar_read(unsigned addr) {
  uint64_t w;
  std::memcpy(&w, smem_at(addr, 8, "mbarrier"), 8);
  MbarState s;
  s.expected = unsigned(w & 0xffffu);
  s.pending = unsigned((w >> 16) & 0xffffu);
  long long tx = (long long)((w >> 32) & 0x7fffffffu);
  if (tx & 0x40000000ll) tx -= 0x80000000ll;
  s.tx = tx;
  s.phase = unsigned(w >> 63);
  return s;
}
inline void mbar_write(unsigned addr, const MbarState& s) {
  uint64_t w = uint64_t(s.expected & 0xffffu) | (uint64_t(s.pending & 0xffffu) << 16) |
               (uint64_t(s.tx & 0x7fffffffll) << 32) | (uint64_t(s.phase & 1u) << 63);
  unsigned char* p = smem_at(addr, 8, "mbarrier");
  std::memcpy(p, &w, 8);
  if (race_on) race_atomic(p, 8);  // an mbarrier operation is atomic, not a plain write
}
inline void race_interval_end(tvm_emu::Worker& w);
inline void mbar_settle(unsigned addr, MbarState s) {
  bool completed = s.pending == 0 && s.tx == 0;
  if (completed) {
    s.phase ^= 1u;
    s.pending = s.expected;
    if (race_on) race_interval_end(*tvm_emu::tls_worker);  // a completed phase orders memory
  }
  mbar_write(addr, s);
  // The threads polling the barrier see the completed phase before the thread that completed
  // it runs on (on the GPU they poll all along): without this, a producer that is never held
  // up could complete the next phase too, and a waiter on the first phase's parity would
  // wait for a phase that has come and gone.
  if (completed) tvm_emu::yield_slice();
}
inline void mbar_init(unsigned addr, unsigned count) {
  if (count == 0 || count > 0xffffu)
    tvm_emu::fail(tvm_emu::kError, "mbarrier.init with thread count %u (1 to 65535)", count);
  mbar_write(addr, MbarState{count, count, 0, 0});
}
inline void mbar_arrive(unsigned addr) {
  MbarState s = mbar_read(addr);
  if (s.expected == 0)
    tvm_emu::fail(tvm_emu::kError, "mbarrier.arrive on shared address %u, which no "
                  "mbarrier.init initialised", addr);
  if (s.pending == 0)
    tvm_emu::fail(tvm_emu::kError, "mbarrier.arrive on shared address %u: more arrivals than "
                  "its count %u in one phase", addr, s.expected);
  --s.pending;
  mbar_settle(addr, s);
}
inline void mbar_expect_tx(unsigned addr, unsigned bytes) {
  MbarState s = mbar_read(addr);
  s.tx += bytes;
  mbar_write(addr, s);
}
inline void mbar_complete_tx(unsigned addr, unsigned bytes) {
  MbarState s = mbar_read(addr);
  s.tx -= bytes;
  mbar_settle(addr, s);
}
inline bool mbar_done(unsigned addr, unsigned parity) {
  return mbar_read(addr).phase != (parity & 1u);
}
struct MbarWait {
  unsigned addr, parity;
};
inline void mbar_describe(const void* a, char* out, size_t n) {
  auto* w = static_cast<const MbarWait*>(a);
  MbarState s = mbar_read(w->addr);
  std::snprintf(out, n,
                "waiting on the mbarrier at shared address %u for phase parity %u (phase %u: %u "
                "of %u arrivals pending, %lld transaction bytes expected)",
                w->addr, w->parity & 1u, s.phase, s.pending, s.expected, s.tx);
}
inline void mbar_wait(unsigned addr, unsigned parity, unsigned line = __builtin_LINE()) {
  if (mbar_done(addr, parity)) return;
  MbarWait wait{addr, parity};
  tvm_emu::wait_until(
      [](const void* a) {
        auto* w = static_cast<const MbarWait*>(a);
        return mbar_done(w->addr, w->parity);
      },
      &wait, "waiting on an mbarrier", line, mbar_describe);
}
// try_wait / test_wait: a poll that finds the phase incomplete returns 0 once the barrier's
// word has changed (an arrival, bytes landing) or the phase completed, not at once: a loop
// polling a barrier that nothing will complete then blocks with every other thread, and the
// scheduler reports the deadlock (naming the barrier) instead of spinning forever.
struct MbarPoll {
  MbarWait wait;  // first: what mbar_describe reads
  uint64_t word;
};
inline unsigned mbar_test_wait(unsigned addr, unsigned parity, unsigned line = __builtin_LINE()) {
  if (mbar_done(addr, parity)) return 1u;
  MbarPoll poll{{addr, parity}, 0};
  std::memcpy(&poll.word, smem_at(addr, 8, "mbarrier"), 8);
  tvm_emu::wait_until(
      [](const void* a) {
        auto* p = static_cast<const MbarPoll*>(a);
        uint64_t now;
        std::memcpy(&now, smem_at(p->wait.addr, 8, "mbarrier"), 8);
        return now != p->word || mbar_done(p->wait.addr, p->wait.parity);
      },
      &poll, "polling an mbarrier", line, mbar_describe);
  return mbar_done(addr, parity) ? 1u : 0u;
}
// cp.async.mbarrier.arrive.noinc: the thread's pending cp.async copies complete, then it arrives
inline void cp_async_mbar_arrive(unsigned addr) {
  cp_async_commit();
  cp_async_wait(0);
  mbar_arrive(addr);
}
}  // namespace tvm_cuda_emu

// ---- the shared-memory race detector ---------------------------------------------------------------
// Within one barrier interval of a CTA (between two __syncthreads, or a completed wait), two
// threads of different warps must not access the same shared byte with at least one of them
// writing. Accesses are seen through the checked shared pointers: each access logs the bytes'
// values before the thread's current slice (its run until it blocks) touched them; at the end
// of the slice, a logged byte whose value changed was written by that thread. A read checks the
// byte's writer in this interval, a write (found at the slice's end) its writer and readers.
// Threads of one warp are not checked against each other (warp-synchronous code orders them
// with __syncwarp and shuffles). Not seen: accesses through raw pointers, and writes that store
// the value the byte already held.
namespace tvm_cuda_emu {
struct RaceState {
  std::vector<uint32_t> stamp;  // the slice that last logged the byte
  std::vector<unsigned char> before;
  std::vector<uint32_t> epoch;  // the interval the byte's writer/reader entries belong to
  std::vector<int> writer, reader;
  std::vector<size_t> log;
  uint32_t slice = 0, interval = 1;
};
inline thread_local RaceState* tls_race = nullptr;

// A byte is indexed by its CTA's rank in the cluster times the window size plus its offset.
inline RaceState& race_state(tvm_emu::Worker& w) {
  if (!tls_race) tls_race = new RaceState();
  RaceState& r = *tls_race;
  const size_t bytes = w.shared_size * w.cta_shared.size();
  if (r.stamp.size() < bytes) {
    r.stamp.assign(bytes, 0);
    r.before.assign(bytes, 0);
    r.epoch.assign(bytes, 0);
    r.writer.assign(bytes, -1);
    r.reader.assign(bytes, -1);
  }
  return r;
}
inline unsigned char& race_byte(tvm_emu::Worker& w, size_t b) {
  return w.cta_shared[b / w.shared_size][b % w.shared_size];
}

inline std::string thread_name(const tvm_emu::Worker& w, int linear) {
  const tvm_emu::Dim3& b = w.fibers[0].ctx.bdim;
  char buf[48];
  std::snprintf(buf, sizeof buf, "thread (%u, %u, %u)", unsigned(linear) % b.x,
                (unsigned(linear) / b.x) % b.y, unsigned(linear) / (b.x * b.y));
  return buf;
}

inline std::string shared_place(const tvm_emu::Worker& w, size_t off) {
  char buf[160];
  for (const auto& s : w.static_slots)
    if (off >= s.offset && off < s.offset + s.bytes) {
      std::snprintf(buf, sizeof buf, "shared buffer '%s' at byte %zu", s.name, off - s.offset);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "dynamic shared memory at byte %zu",
                off - (w.shared_size - w.cfg->dynamic_bytes));
  return buf;
}

[[noreturn]] inline void race_report(tvm_emu::Worker& w, size_t off, int a, const char* a_did,
                                     int b, const char* b_did) {
  std::string msg = "shared-memory race on " + shared_place(w, off) + ": " + thread_name(w, a) +
                    " " + a_did + " it and " + thread_name(w, b) + " " + b_did +
                    " it with no __syncthreads() between them";
  tvm_emu::fail(tvm_emu::kRace, "%s", msg.c_str());
}

inline bool other_warp(int a, int b) { return a >= 0 && b >= 0 && a / 32 != b / 32; }

inline void race_access(const void* p, size_t n) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  tvm_emu::Fiber* f = w ? w->cur : nullptr;
  if (!f) return;
  const unsigned char* q = static_cast<const unsigned char*>(p);
  if (q < w->shared || q + n > w->shared + w->shared_size) return;
  RaceState& r = race_state(*w);
  const int t = int(f->ctx.linear);
  const size_t base = w->cur_cta * w->shared_size;
  size_t off = size_t(q - w->shared);
  for (size_t b = base + off; b < base + off + n; ++b) {
    if (r.stamp[b] != r.slice) {
      r.stamp[b] = r.slice;
      r.before[b] = race_byte(*w, b);
      r.log.push_back(b);
    }
    if (r.epoch[b] != r.interval) {
      r.epoch[b] = r.interval;
      r.writer[b] = -1;
      r.reader[b] = -1;
    }
    if (other_warp(r.writer[b], t))
      race_report(*w, off, r.writer[b], "wrote", t, "accessed");
    if (r.reader[b] == -1) r.reader[b] = t;
    else if (r.reader[b] >= 0 && other_warp(r.reader[b], t)) r.reader[b] = -2;
  }
}

inline void race_atomic(const void* p, size_t n) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  if (!w || !tls_race) return;
  const unsigned char* q = static_cast<const unsigned char*>(p);
  if (q < w->shared || q + n > w->shared + w->shared_size) return;
  const size_t base = w->cur_cta * w->shared_size, off = size_t(q - w->shared);
  race_state(*w);
  for (size_t b = base + off; b < base + off + n; ++b)
    tls_race->before[b] = race_byte(*w, b);  // not a plain write
}

inline void race_slice_start(tvm_emu::Worker& w, tvm_emu::Fiber&) {
  RaceState& r = race_state(w);
  ++r.slice;
  r.log.clear();
}

inline void race_slice_end(tvm_emu::Worker& w, tvm_emu::Fiber& f) {
  RaceState& r = race_state(w);
  const int t = int(f.ctx.linear);
  for (size_t b : r.log) {
    if (race_byte(w, b) == r.before[b]) continue;
    if (r.epoch[b] != r.interval) {
      r.epoch[b] = r.interval;
      r.writer[b] = -1;
      r.reader[b] = -1;
    }
    const int wr = r.writer[b], rd = r.reader[b];
    if (other_warp(wr, t) || other_warp(rd, t) || rd == -2) {
      int other = other_warp(wr, t) ? wr : rd;
      std::string msg = "shared-memory race on " + shared_place(w, b % w.shared_size) + ": " +
                        thread_name(w, t) + " wrote it and " +
                        (other >= 0 ? thread_name(w, other) : std::string("threads of other warps")) +
                        (other_warp(wr, t) ? " wrote" : " read") +
                        " it with no __syncthreads() between them";
      char head[160];
      std::snprintf(head, sizeof head, "kernel '%s', block (%u, %u, %u): ", w.cfg->kernel,
                    f.ctx.bid.x, f.ctx.bid.y, f.ctx.bid.z);
      tvm_emu::record(tvm_emu::kRace, (head + msg).c_str());
      return;
    }
    r.writer[b] = t;
  }
}

inline void race_interval_end(tvm_emu::Worker& w) { ++race_state(w).interval; }
inline void named_reset_block();
inline void wgmma_reset_block();
inline void cluster_reset_block();
inline void tmem_reset_block();
inline void race_block_start(tvm_emu::Worker& w) {
  cp_async_reset_block(w);
  tmem_reset_block();
  wgmma_reset_block();
  named_reset_block();
  cluster_reset_block();
  if (race_on) ++race_state(w).interval;
}

inline void install_race_detector(bool on) {
  race_on = on;
  tvm_emu::on_block_start = race_block_start;
  tvm_emu::on_slice_start = on ? race_slice_start : nullptr;
  tvm_emu::on_slice_end = on ? race_slice_end : nullptr;
  tvm_emu::on_barrier = on ? race_interval_end : nullptr;
  tvm_emu::on_wait_done = on ? race_interval_end : nullptr;
}
}  // namespace tvm_cuda_emu

// ---- emulation bodies of scalar and warp PTX intrinsics ----------------------------------------------
namespace tvm_cuda_emu {
// elect.sync with a full mask: 1 in the lowest lane of those reaching it together
inline unsigned elect_sync(unsigned line = __builtin_LINE()) {
  auto& s = warp_exchange(0, 0xffffffffu, kBallot, site_of(line, 1), "elect.sync");
  unsigned lane = tctx().lane;
  return (s.mask & ((1u << lane) - 1u)) == 0 ? 1u : 0u;
}
// fns.b32: the lane of the offset-th set bit of mask counting from base (0xffffffff if none)
inline unsigned fns_b32(unsigned mask, unsigned base, int offset) {
  if (offset == 0) return ((mask >> base) & 1u) ? base : 0xffffffffu;
  if (offset > 0) {
    int seen = 0;
    for (unsigned p = base; p < 32; ++p)
      if ((mask >> p) & 1u && ++seen == offset) return p;
  } else {
    int seen = 0;
    for (int p = int(base); p >= 0; --p)
      if ((mask >> p) & 1u && --seen == offset) return unsigned(p);
  }
  return 0xffffffffu;
}
inline float max_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  return a > b ? a : b;
}
#define TVM_EMU_F32X2(name, expr)                                                   \
  inline unsigned long long f32x2_##name(unsigned long long a, unsigned long long b) { \
    float x[2], y[2], r[2];                                                          \
    std::memcpy(x, &a, 8);                                                           \
    std::memcpy(y, &b, 8);                                                           \
    for (int k = 0; k < 2; ++k) r[k] = (expr);                                       \
    unsigned long long out;                                                          \
    std::memcpy(&out, r, 8);                                                         \
    return out;                                                                      \
  }
TVM_EMU_F32X2(add, x[k] + y[k])
TVM_EMU_F32X2(sub, x[k] - y[k])
TVM_EMU_F32X2(mul, x[k] * y[k])
#undef TVM_EMU_F32X2
inline unsigned long long f32x2_fma(unsigned long long a, unsigned long long b,
                                    unsigned long long c) {
  float x[2], y[2], z[2], r[2];
  std::memcpy(x, &a, 8);
  std::memcpy(y, &b, 8);
  std::memcpy(z, &c, 8);
  for (int k = 0; k < 2; ++k) r[k] = std::fma(x[k], y[k], z[k]);
  unsigned long long out;
  std::memcpy(&out, r, 8);
  return out;
}
}  // namespace tvm_cuda_emu

// ---- ldmatrix and mma.sync (m16n8k16, 16-bit inputs, f32 accumulators) ---------------------------------
namespace tvm_cuda_emu {
inline uint16_t smem_u16(unsigned addr) {
  uint16_t v;
  std::memcpy(&v, smem_at(addr, 2, "ldmatrix"), 2);
  return v;
}
// ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: lanes 8j..8j+7 give the rows of matrix j;
// lane l gets, in register j, the elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix j (of its
// transpose with .trans)
inline void ldmatrix_b16(bool trans, int num, unsigned addr, unsigned* r0, unsigned* r1 = nullptr,
                         unsigned* r2 = nullptr, unsigned* r3 = nullptr,
                         unsigned line = __builtin_LINE()) {
  auto& s = warp_exchange(addr, 0xffffffffu, kShfl, site_of(line, 2), "ldmatrix");
  const unsigned l = tctx().lane;
  unsigned* regs[4] = {r0, r1, r2, r3};
  for (int j = 0; j < num; ++j) {
    unsigned lo, hi;
    if (!trans) {
      unsigned row = lane_value(s, unsigned(8 * j) + l / 4, 0u);
      lo = smem_u16(row + 4 * (l % 4));
      hi = smem_u16(row + 4 * (l % 4) + 2);
    } else {
      lo = smem_u16(lane_value(s, unsigned(8 * j) + 2 * (l % 4), 0u) + 2 * (l / 4));
      hi = smem_u16(lane_value(s, unsigned(8 * j) + 2 * (l % 4) + 1, 0u) + 2 * (l / 4));
    }
    *regs[j] = lo | (hi << 16);
  }
}

// stmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: the inverse of ldmatrix; lane l stores
// row l % 8 of matrix l / 8 at its address (element c from lane 4 * row + c / 2, or transposed)
struct StmatrixIn {
  unsigned addr, r[4];
};
inline void stmatrix_b16(bool trans, int num, unsigned addr, unsigned r0, unsigned r1 = 0,
                         unsigned r2 = 0, unsigned r3 = 0, unsigned line = __builtin_LINE()) {
  StmatrixIn mine{addr, {r0, r1, r2, r3}};
  auto& s = warp_exchange(mine, 0xffffffffu, kShfl, site_of(line, 6), "stmatrix");
  const unsigned l = tctx().lane, j = l / 8, row = l % 8;
  // the lanes' stores are done before any lane goes on (the instruction is warp-wide)
  struct Done {
    unsigned line;
    ~Done() { warp_exchange(0, 0xffffffffu, kSyncWarp, site_of(line, 7), "stmatrix"); }
  } done{line};
  if (int(j) >= num) return;
  const StmatrixIn zero{};
  uint16_t out[8];
  for (unsigned c = 0; c < 8; ++c) {
    unsigned src = trans ? 4 * c + row / 2 : 4 * row + c / 2;
    unsigned half = trans ? row % 2 : c % 2;
    unsigned reg = lane_value(s, src, zero).r[j];
    out[c] = uint16_t(half ? reg >> 16 : reg & 0xffffu);
  }
  unsigned char* d = smem_at(addr, 16, "stmatrix");
  if (race_on) race_access(d, 16);
  std::memcpy(d, out, 16);
}

template <class In>
float half_of(unsigned reg, int k) {
  return float(In::from_bits(uint16_t(k ? reg >> 16 : reg & 0xffffu)));
}
struct MmaIn {
  unsigned a[4], b[2];
  float c[4];
};
// mma.sync.aligned.m16n8k{16,8}.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (the PTX fragment layouts;
// for K = 8 only a0, a1 and b0 are read: the callers pass 0 for a2, a3, b1)
template <class In, int K = 16>
inline void mma_m16n8k(float* d0, float* d1, float* d2, float* d3, unsigned a0, unsigned a1,
                       unsigned a2, unsigned a3, unsigned b0, unsigned b1, float c0, float c1,
                       float c2, float c3, unsigned line = __builtin_LINE()) {
  static_assert(K == 16 || K == 8, "mma.sync m16n8k16 or m16n8k8");
  MmaIn mine{{a0, a1, a2, a3}, {b0, b1}, {c0, c1, c2, c3}};
  auto& s = warp_exchange(mine, 0xffffffffu, kShfl, site_of(line, 3), "mma.sync");
  const MmaIn zero{};
  auto in = [&](unsigned lane) { return lane_value(s, lane, zero); };
  auto A = [&](int r, int c) {
    MmaIn x = in(unsigned((r % 8) * 4 + (c % 8) / 2));
    return half_of<In>(x.a[(r >= 8 ? 1 : 0) + (c >= 8 ? 2 : 0)], c % 2);
  };
  auto B = [&](int k, int n) {
    MmaIn x = in(unsigned(n * 4 + (k % 8) / 2));
    return half_of<In>(x.b[k >= 8 ? 1 : 0], k % 2);
  };
  const unsigned l = tctx().lane;
  const int g = int(l >> 2), t = int(l & 3);
  float* out[4] = {d0, d1, d2, d3};
  const float cin[4] = {c0, c1, c2, c3};
  for (int e = 0; e < 4; ++e) {
    int r = g + (e >= 2 ? 8 : 0), n = 2 * t + (e % 2);
    float acc = cin[e];
    for (int k = 0; k < K; ++k) acc += A(r, k) * B(k, n);
    *out[e] = acc;
  }
}
}  // namespace tvm_cuda_emu

// ---- named barriers (bar.sync / bar.arrive id, count) ---------------------------------------------
namespace tvm_cuda_emu {
inline void race_interval_end(tvm_emu::Worker& w);
struct NamedBarrier {
  unsigned arrived = 0, gen = 0, expected = 0;
};
// 16 per CTA of the worker's cluster, reset per cluster
inline thread_local std::vector<NamedBarrier>* tls_named = nullptr;
inline NamedBarrier& named_at(unsigned cta, unsigned id) { return (*tls_named)[cta * 16 + id]; }
inline NamedBarrier& named_barrier(unsigned id) {
  if (id >= 16) tvm_emu::fail(tvm_emu::kError, "bar.sync/bar.arrive with barrier id %u (0 to 15)", id);
  tls_sized(tls_named, 16 * tvm_emu::tls_worker->cta_shared.size());
  return named_at(tctx().cta, id);
}
inline void named_reset_block() {
  if (tls_named) tls_named->assign(tls_named->size(), NamedBarrier{});
}
inline bool named_arrive(unsigned id, unsigned count) {
  const tvm_emu::ThreadCtx& c = tctx();
  if (count == 0) count = c.bdim.x * c.bdim.y * c.bdim.z;
  NamedBarrier& b = named_barrier(id);
  if (b.arrived != 0 && b.expected != count)
    tvm_emu::fail(tvm_emu::kDivergence, "named barrier %u used with thread counts %u and %u in "
                  "one phase", id, b.expected, count);
  b.expected = count;
  if (++b.arrived >= count) {
    b.arrived = 0;
    ++b.gen;
    // the barrier orders its threads' memory: a new interval for the race detector (for the
    // whole block: coarser than the barrier, never a false report)
    if (race_on) race_interval_end(*tvm_emu::tls_worker);
    return true;
  }
  return false;
}
struct NamedWait {
  unsigned cta, id, gen;
};
inline void named_describe(const void* a, char* out, size_t n) {
  auto* w = static_cast<const NamedWait*>(a);
  const NamedBarrier& b = named_at(w->cta, w->id);
  std::snprintf(out, n, "waiting at named barrier %u (bar.sync: %u of %u threads arrived)",
                w->id, b.arrived, b.expected);
}
inline void bar_sync(unsigned id, unsigned count, unsigned line = __builtin_LINE()) {
  NamedBarrier& b = named_barrier(id);
  NamedWait wait{tctx().cta, id, b.gen};
  if (named_arrive(id, count)) return;
  tvm_emu::wait_until(
      [](const void* a) {
        auto* w = static_cast<const NamedWait*>(a);
        return named_at(w->cta, w->id).gen != w->gen;
      },
      &wait, "waiting at a named barrier", line, named_describe);
}
inline void bar_arrive(unsigned id, unsigned count) { named_arrive(id, count); }
}  // namespace tvm_cuda_emu

// ---- TMA: cp.async.bulk.tensor through tensor maps ---------------------------------------------------
// The emulator's CUtensorMap: the launch (emulator.py, EmuTensorMap) fills the 128 bytes of a
// tensor-map parameter with this record, derived from the array passed for it. A copy runs when
// it is issued (a valid schedule of the asynchronous copy): a load fills the box in shared memory
// (elements outside the array read as zero) with the map's swizzle, then completes its box's
// bytes on the mbarrier; a store writes the box's elements that lie inside the array.
namespace tvm_cuda_emu {
constexpr uint32_t kTensorMapMagic = 0x504d4554u;  // "TEMP": the emulator's tensor map
struct TensorMap {
  uint32_t magic, rank, elem, swizzle;  // element bytes; swizzle in bytes (0, 32, 64, 128)
  uint64_t base, bytes;                 // the array's first byte and size
  uint32_t dims[5], box[5];             // innermost first
  uint64_t strides[4];                  // bytes, of dims 1..rank-1
  char name[16];
  uint32_t dtype;  // TmaDtype (emulator.py _TMA_DTYPE_CODES): what a TMA reduction computes in
};
enum TmaDtype { kTmaRaw, kTmaF16, kTmaBf16, kTmaF32, kTmaF64, kTmaI32, kTmaU32, kTmaI64, kTmaU64 };
static_assert(sizeof(TensorMap) <= 128, "an emulated tensor map fits a CUtensorMap");

inline const TensorMap& tensor_map(unsigned long long addr, const char* what) {
  const TensorMap* m = reinterpret_cast<const TensorMap*>(addr);
  if (!m || m->magic != kTensorMapMagic)
    tvm_emu::fail(tvm_emu::kError, "%s: the tensor-map operand is not a tensor map the CUDA "
                  "emulator derived (the emulator models the maps a launch derives from arrays)",
                  what);
  return *m;
}
// shared-memory address bits [4, 4 + b) XOR bits [7, 7 + b): the 32/64/128-byte swizzles
inline unsigned swizzle_addr(unsigned addr, unsigned sw) {
  unsigned b = sw == 128 ? 3u : sw == 64 ? 2u : sw == 32 ? 1u : 0u;
  return b ? addr ^ (((addr >> 7) & ((1u << b) - 1u)) << 4) : addr;
}
inline uint64_t box_bytes(const TensorMap& m) {
  uint64_t n = m.elem;
  for (uint32_t r = 0; r < m.rank; ++r) n *= m.box[r];
  return n;
}
// f(shared address, global pointer or nullptr outside the array) for each element of the box at
// coordinates c (innermost first), in the box's order
template <class F>
void tma_each(const TensorMap& m, unsigned smem, const int* c, const char* what, F f) {
  if (smem % 16)
    tvm_emu::fail(tvm_emu::kError, "%s: shared address %u is not 16-byte aligned", what, smem);
  uint32_t n[5] = {1, 1, 1, 1, 1};
  int at[5] = {0, 0, 0, 0, 0};
  for (uint32_t r = 0; r < m.rank; ++r) { n[r] = m.box[r]; at[r] = c[r]; }
  const uint64_t rows = uint64_t(n[1]) * n[2] * n[3] * n[4];
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  for (uint64_t row = 0; row < rows; ++row) {
    uint64_t rest = row;
    bool inside = true;
    uint64_t goff = 0;
    for (uint32_t r = 1; r < 5; ++r) {
      long long x = at[r] + (long long)(rest % n[r]);
      rest /= n[r];
      if (r < m.rank) {
        if (x < 0 || x >= (long long)m.dims[r]) inside = false;
        else goff += uint64_t(x) * m.strides[r - 1];
      }
    }
    for (uint32_t i = 0; i < n[0]; ++i) {
      unsigned lin = smem + unsigned((row * n[0] + i) * m.elem);
      unsigned sa = swizzle_addr(lin, m.swizzle);
      if (size_t(sa) + m.elem > w->shared_size)
        tvm_emu::fail(tvm_emu::kBounds, "%s: the box reaches shared address %u, outside the "
                      "CTA's %zu bytes of shared memory", what, sa, w->shared_size);
      long long x = at[0] + (long long)i;
      bool in = inside && x >= 0 && x < (long long)m.dims[0];
      unsigned char* g = nullptr;
      if (in) {
        uint64_t off = goff + uint64_t(x) * m.elem;
        if (off + m.elem > m.bytes)
          tvm_emu::fail(tvm_emu::kBounds, "%s: tensor map '%s' addresses byte %llu of a %llu-byte "
                        "array", what, m.name, (unsigned long long)off,
                        (unsigned long long)m.bytes);
        g = reinterpret_cast<unsigned char*>(m.base) + off;
      }
      f(sa, g);
    }
  }
}
inline void tma_load(unsigned dst, unsigned long long tmap, unsigned bar, const int* c) {
  const char* what = "cp.async.bulk.tensor (TMA load)";
  const TensorMap& m = tensor_map(tmap, what);
  unsigned char* sh = tvm_emu::tls_worker->shared;
  tma_each(m, dst, c, what, [&](unsigned sa, const unsigned char* g) {
    if (g) std::memcpy(sh + sa, g, m.elem);
    else std::memset(sh + sa, 0, m.elem);
    if (race_on) race_atomic(sh + sa, m.elem);  // written by the copy, not by this thread
  });
  mbar_complete_tx(bar, unsigned(box_bytes(m)));
}
inline void tma_store(unsigned src, unsigned long long tmap, const int* c) {
  const char* what = "cp.async.bulk.tensor (TMA store)";
  const TensorMap& m = tensor_map(tmap, what);
  const unsigned char* sh = tvm_emu::tls_worker->shared;
  tma_each(m, src, c, what, [&](unsigned sa, unsigned char* g) {
    if (g) std::memcpy(g, sh + sa, m.elem);
  });
}
template <class... C>
inline void tma_load_at(unsigned dst, unsigned long long tmap, unsigned bar, C... coords) {
  const int c[] = {int(coords)...};
  tma_load(dst, tmap, bar, c);
}
template <class... C>
inline void tma_store_at(unsigned src, unsigned long long tmap, C... coords) {
  const int c[] = {int(coords)...};
  tma_store(src, tmap, c);
}
// cp.reduce.async.bulk.tensor: the box's elements inside the array combined into global memory
// (the map's dtype; 16-bit floats computed in float, one rounding), one reduction at a time
// across the grid (the hardware's are atomic per element).
enum TmaRed { kRedAdd, kRedMin, kRedMax, kRedAnd, kRedOr, kRedXor };
template <class T>
inline T tma_red_apply(int op, T a, T b) {
  switch (op) {
    case kRedAdd: return a + b;
    case kRedMin: return b < a ? b : a;
    case kRedMax: return a < b ? b : a;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == kRedAnd) return a & b;
    if (op == kRedOr) return a | b;
    return a ^ b;
  }
  tvm_emu::fail(tvm_emu::kNotModelled, "cp.reduce.async.bulk.tensor: a bitwise reduction of a "
                "floating-point tensor map (PTX allows .and/.or/.xor on integers only)");
}
template <class T>
inline void tma_red_elem(int op, unsigned char* g, const unsigned char* s) {
  T a, b;
  std::memcpy(&a, g, sizeof(T));
  std::memcpy(&b, s, sizeof(T));
  a = tma_red_apply<T>(op, a, b);
  std::memcpy(g, &a, sizeof(T));
}
template <class Tag>
inline void tma_red_f16(int op, unsigned char* g, const unsigned char* s) {
  uint16_t a, b;
  std::memcpy(&a, g, 2);
  std::memcpy(&b, s, 2);
  float r = tma_red_apply<float>(op, Tag::dec(a), Tag::dec(b));
  a = Tag::enc(r);
  std::memcpy(g, &a, 2);
}
inline void tma_reduce(unsigned src, unsigned long long tmap, int op, const int* c) {
  const char* what = "cp.reduce.async.bulk.tensor (TMA reduction)";
  const TensorMap& m = tensor_map(tmap, what);
  const unsigned char* sh = tvm_emu::tls_worker->shared;
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  tma_each(m, src, c, what, [&](unsigned sa, unsigned char* g) {
    if (!g) return;
    const unsigned char* s = sh + sa;
    switch (m.dtype) {
      case kTmaF16: tma_red_f16<HalfTag>(op, g, s); break;
      case kTmaBf16: tma_red_f16<Bf16Tag>(op, g, s); break;
      case kTmaF32: tma_red_elem<float>(op, g, s); break;
      case kTmaF64: tma_red_elem<double>(op, g, s); break;
      case kTmaI32: tma_red_elem<int32_t>(op, g, s); break;
      case kTmaU32: tma_red_elem<uint32_t>(op, g, s); break;
      case kTmaI64: tma_red_elem<int64_t>(op, g, s); break;
      case kTmaU64: tma_red_elem<uint64_t>(op, g, s); break;
      default:
        tvm_emu::fail(tvm_emu::kNotModelled, "%s: tensor map '%s' has an element type the "
                      "emulator does not reduce (8- and 16-bit integers, float8)", what, m.name);
    }
  });
}
template <class... C>
inline void tma_reduce_at(unsigned src, unsigned long long tmap, int op, C... coords) {
  const int c[] = {int(coords)...};
  tma_reduce(src, tmap, op, c);
}
// cp.async.bulk (no tensor map): global -> shared, completing on an mbarrier
inline void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  unsigned char* d = smem_at(dst, bytes, "cp.async.bulk destination");
  std::memcpy(d, src, bytes);
  if (race_on) race_atomic(d, bytes);
  mbar_complete_tx(bar, bytes);
}
inline void bulk_store(void* dst, unsigned src, unsigned bytes) {
  std::memcpy(dst, smem_at(src, bytes, "cp.async.bulk source"), bytes);
}
}  // namespace tvm_cuda_emu

// ---- wgmma.mma_async (m64nNk*) -----------------------------------------------------------------------
// Each thread of the warpgroup computes its own accumulator fragment when the instruction is
// issued (the operands are unchanged until wgmma.wait_group, which the program must respect),
// reading A and B from shared memory through their descriptors (start address, leading and
// stride byte offsets, swizzle; K- or MN-major) or A from the warp's registers.
namespace tvm_cuda_emu {
struct WgmmaDesc {
  unsigned start, lbo, sbo, sw;
};
inline WgmmaDesc wgmma_desc(unsigned long long d) {
  WgmmaDesc r;
  r.start = unsigned(d & 0x3fffu) << 4;
  r.lbo = unsigned((d >> 16) & 0x3fffu) << 4;
  r.sbo = unsigned((d >> 32) & 0x3fffu) << 4;
  unsigned layout = unsigned(d >> 62);
  r.sw = layout == 1 ? 128u : layout == 2 ? 64u : layout == 3 ? 32u : 0u;
  return r;
}
// the shared address of element (mn, k) of an operand tile (the canonical layouts of
// dispatch/mma_desc.py): e bytes per element, T = 16 / e, W = sw / e
inline unsigned wgmma_addr(const WgmmaDesc& d, bool mn_major, unsigned e, unsigned mn,
                           unsigned k) {
  const unsigned T = 16 / e;
  unsigned lin;
  if (!mn_major) {
    lin = d.sw ? (mn % 8) * d.sw + (mn / 8) * d.sbo + k * e
               : (mn % 8) * 16 + (mn / 8) * d.sbo + (k % T) * e + (k / T) * d.lbo;
  } else if (d.sw) {
    const unsigned W = d.sw / e;
    lin = (mn % W) * e + (mn / W) * d.lbo + (k % 8) * d.sw + (k / 8) * d.sbo;
  } else {
    lin = (mn % T) * e + (mn / T) * d.sbo + (k % 8) * 16 + (k / 8) * d.lbo;
  }
  return swizzle_addr(d.start + lin, d.sw);
}
struct Tf32 {};  // tf32 inputs: 32-bit floats read with a 10-bit mantissa
template <class In>
constexpr unsigned in_bytes() {
  if constexpr (std::is_same_v<In, Tf32>) return 4;
  else return sizeof(In);
}
template <class In>
inline float in_value(const unsigned char* p) {
  if constexpr (std::is_same_v<In, Tf32>) {
    uint32_t u;
    std::memcpy(&u, p, 4);
    return u2f(u & 0xffffe000u);
  } else {
    In v;
    std::memcpy((void*)&v, p, sizeof(In));
    return float(v);
  }
}
template <class In>
inline float wgmma_smem(const WgmmaDesc& d, bool mn_major, unsigned mn, unsigned k) {
  constexpr unsigned e = in_bytes<In>();
  unsigned a = wgmma_addr(d, mn_major, e, mn, k);
  return in_value<In>(smem_at(a, e, "wgmma operand"));
}
// the A element (row of the warp's 16, k) of the register fragment: lane 4 * (row % 8) + t holds
// it in register 2 * c + row / 8, part p; 16-bit inputs: k = 8c + 2t + p, 8-bit: k = 16c + 4t + p
template <class In>
inline float wgmma_reg_a(const tvm_emu::WarpSnap& s, unsigned row, unsigned k) {
  constexpr unsigned e = in_bytes<In>();
  constexpr unsigned per = 4 / e;  // elements per register
  const unsigned c = k / (4 * per), t = (k % (4 * per)) / per, p = k % per;
  struct Regs { unsigned r[4]; };
  Regs x = lane_value(s, 4 * (row % 8) + t, Regs{});
  unsigned reg = x.r[2 * c + row / 8];
  unsigned char bytes[4];
  std::memcpy(bytes, &reg, 4);
  return in_value<In>(bytes + p * e);
}
// wgmma accumulators in flight: a wgmma with float accumulators computes its result when issued
// but keeps it aside, per thread, in the open group, and writes kAccPoison into the registers;
// wgmma.commit_group closes the group, wgmma.wait_group n writes the results of all but the n
// most recent groups back. A later wgmma on the same registers (a chain) reads the pending
// result, not the poison. Reported: a register written between issue and wait, a thread that
// exits with results pending, and (through the poison) a value read before its wait that
// reaches a conversion to a narrower float.
struct PendingAcc {
  float* reg;
  float value;
  int group;  // -1: the open group
  unsigned line;
};
using WgmmaState = CommitGroups<PendingAcc>;
inline thread_local std::vector<WgmmaState>* tls_wgmma = nullptr;
inline WgmmaState& wgmma_state() {
  return tls_sized(tls_wgmma, tvm_emu::tls_worker->fibers.size())[tctx().slot];
}
inline void wgmma_reset_block() {
  if (tls_wgmma) tls_wgmma->clear();
}
inline thread_local unsigned wgmma_line = 0;  // the issuing call's line (for reports)
// the accumulator's value as the next wgmma of a chain reads it: a pending result, else the
// register
inline float acc_input(float* reg) {
  WgmmaState& s = wgmma_state();
  for (auto it = s.pending.rbegin(); it != s.pending.rend(); ++it)
    if (it->reg == reg) return it->value;
  return *reg;
}
inline void acc_issue(float* reg, float value) {
  WgmmaState& s = wgmma_state();
  for (auto& p : s.pending)
    if (p.reg == reg) p.reg = nullptr;  // superseded by this one (it read the pending value)
  s.pending.push_back({reg, value, -1, wgmma_line});
  std::memcpy(reg, &kAccPoison, 4);
}
inline void wgmma_commit() { wgmma_state().commit(); }
inline void wgmma_wait(int n) {
  // a superseded result (reg cleared: a later wgmma of the chain read it) is dropped
  wgmma_state().wait(
      n, [](const PendingAcc& p) { return p.reg != nullptr; },
      [](const PendingAcc& p) {
        if (f2u(*p.reg) != kAccPoison)
          tvm_emu::fail(tvm_emu::kError, "a wgmma accumulator register was written before its "
                        "wgmma.wait_group (the wgmma at line %u of the generated source)", p.line);
        *p.reg = p.value;
      });
}
// at a thread's end: nothing may be in flight
inline void wgmma_thread_end() {
  if (!tls_wgmma || tctx().slot >= tls_wgmma->size()) return;
  WgmmaState& s = wgmma_state();
  for (auto& p : s.pending)
    if (p.reg)
      tvm_emu::fail(tvm_emu::kError, "the thread ended with wgmma accumulators in flight: the "
                    "wgmma at line %u of the generated source was never completed by a "
                    "wgmma.wait_group (%s), so its accumulators were read, if at all, before "
                    "their wait", p.line, p.group < 0 ? "nor committed" : "committed");
}

// after a launch: an accumulator value read before its wait that was stored to global memory
// (a float store, which no conversion saw) is still the poison there
inline int scan_poison(const char* kernel, void** args, const uint64_t* sizes,
                       const char* const* names, int n, char* err, int errlen) {
  for (int i = 0; i < n; ++i) {
    if (!sizes || !sizes[i] || !args[i]) continue;
    const unsigned char* p = static_cast<const unsigned char*>(args[i]);
    for (uint64_t off = 0; off + 4 <= sizes[i]; off += 4) {
      uint32_t u;
      std::memcpy(&u, p + off, 4);
      if ((u & 0x7fffffffu) != kAccPoison) continue;
      std::snprintf(err, errlen, "kernel '%s': a wgmma accumulator was read before its "
                    "wgmma.wait_group and stored: buffer '%s' holds the in-flight accumulator's "
                    "placeholder at byte %llu (the wgmma's registers are undefined until the "
                    "wait_group that completes it)", kernel, names[i], (unsigned long long)off);
      return tvm_emu::kError;
    }
  }
  return tvm_emu::kOk;
}

template <class In, bool F32Out, class... Acc>
inline void wgmma_run(int n, int k, bool trans_a, bool trans_b, int scale_a, int scale_b,
                      int scale_d, const WgmmaDesc* da, const tvm_emu::WarpSnap* sa,
                      unsigned long long desc_b, Acc&... acc) {
  constexpr int nacc = sizeof...(Acc);
  static_assert(nacc > 0, "wgmma without accumulators");
  if ((F32Out ? n / 2 : n / 4) != nacc)
    tvm_emu::fail(tvm_emu::kError, "wgmma m64n%d: %d accumulator registers", n, nacc);
  const WgmmaDesc db = wgmma_desc(desc_b);
  const tvm_emu::ThreadCtx& c = tctx();
  const unsigned w = c.warp % 4, l = c.lane, g = l / 4, t = l % 4;
  float a[2][32];
  for (unsigned h = 0; h < 2; ++h)
    for (int kk = 0; kk < k; ++kk) {
      unsigned row = 16 * w + 8 * h + g;
      a[h][kk] = float(scale_a) * (da ? wgmma_smem<In>(*da, trans_a, row, unsigned(kk))
                                      : wgmma_reg_a<In>(*sa, 8 * h + g, unsigned(kk)));
    }
  float b[32];
  float out[2 * nacc];
  const int nvals = F32Out ? nacc : 2 * nacc;
  void* regs[] = {static_cast<void*>(&acc)...};
  for (int cb = 0; cb < n / 8; ++cb)
    for (int e = 0; e < 2; ++e) {
      const unsigned col = unsigned(8 * cb) + 2 * t + unsigned(e);
      for (int kk = 0; kk < k; ++kk)
        b[kk] = float(scale_b) * wgmma_smem<In>(db, trans_b, col, unsigned(kk));
      for (int h = 0; h < 2; ++h) {
        float s = 0.0f;
        for (int kk = 0; kk < k; ++kk) s += a[h][kk] * b[kk];
        out[4 * cb + 2 * h + e] = s;
      }
    }
  for (int i = 0; i < nvals; ++i) {
    if (F32Out) {
      float* r = static_cast<float*>(regs[i]);
      acc_issue(r, out[i] + (scale_d ? acc_input(r) : 0.0f));
    } else {
      unsigned* r = static_cast<unsigned*>(regs[i / 2]);
      const int shift = 16 * (i % 2);
      float old = scale_d ? half_bits_to_float(uint16_t(*r >> shift)) : 0.0f;
      uint16_t v = float_to_half_bits(out[i] + old);
      *r = (*r & ~(0xffffu << shift)) | (unsigned(v) << shift);
    }
  }
}
template <class In, bool F32Out, class... Acc>
inline void wgmma_ss(int n, int k, bool trans_a, bool trans_b, int scale_a, int scale_b,
                     int scale_d, unsigned long long desc_a, unsigned long long desc_b,
                     Acc&... acc) {
  const WgmmaDesc da = wgmma_desc(desc_a);
  wgmma_run<In, F32Out>(n, k, trans_a, trans_b, scale_a, scale_b, scale_d, &da, nullptr, desc_b,
                        acc...);
}
template <class In, bool F32Out, class... Acc>
inline void wgmma_rs(unsigned line, int n, int k, bool trans_b, int scale_a, int scale_b,
                     int scale_d, unsigned long long desc_b, unsigned a0, unsigned a1,
                     unsigned a2, unsigned a3, Acc&... acc) {
  struct Regs { unsigned r[4]; };
  auto& s = warp_exchange(Regs{{a0, a1, a2, a3}}, 0xffffffffu, kShfl, site_of(line, 5),
                          "wgmma.mma_async (A in registers)");
  wgmma_run<In, F32Out>(n, k, false, trans_b, scale_a, scale_b, scale_d, nullptr, &s, desc_b,
                        acc...);
}
}  // namespace tvm_cuda_emu

// ---- thread block clusters -------------------------------------------------------------------------
// The blocks of a cluster run together on one worker (core's fiber runtime), each with its own
// shared window. A shared::cluster address names a peer's window (cluster_addr above); mapa maps
// an address of this CTA's window to the same offset in a peer's. barrier.cluster: a thread's
// wait completes once every non-exited thread of the cluster has arrived as often as it has.
namespace tvm_cuda_emu {
inline thread_local std::vector<unsigned>* tls_cluster_arrivals = nullptr;  // by fiber slot
inline std::vector<unsigned>& cluster_arrivals() {
  return tls_sized(tls_cluster_arrivals, tvm_emu::tls_worker->fibers.size());
}
inline void cluster_reset_block() {
  if (tls_cluster_arrivals) tls_cluster_arrivals->assign(tls_cluster_arrivals->size(), 0u);
}
inline void cluster_arrive() { ++cluster_arrivals()[tctx().slot]; }
struct ClusterWait {
  unsigned target;
};
// the fibers of the running block's cluster: [lo, hi)
inline void cluster_fibers(unsigned& lo, unsigned& hi) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  lo = (w->cur_cta - w->cur_cta % w->csize) * w->nthreads;
  hi = lo + w->csize * w->nthreads;
}
inline bool cluster_done(const void* a) {
  const unsigned target = static_cast<const ClusterWait*>(a)->target;
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const std::vector<unsigned>& arr = cluster_arrivals();
  unsigned lo, hi;
  cluster_fibers(lo, hi);
  for (unsigned i = lo; i < hi; ++i)
    if (arr[i] < target && w->fibers[i].state != tvm_emu::kDone) return false;
  return true;
}
inline void cluster_describe(const void* a, char* out, size_t n) {
  const unsigned target = static_cast<const ClusterWait*>(a)->target;
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const std::vector<unsigned>& arr = cluster_arrivals();
  unsigned lo, hi, missing = 0;
  cluster_fibers(lo, hi);
  const unsigned total = hi - lo;
  for (unsigned i = lo; i < hi; ++i)
    missing += arr[i] < target && w->fibers[i].state != tvm_emu::kDone;
  std::snprintf(out, n, "waiting at the cluster barrier (barrier.cluster.wait, phase %u: %u of "
                "the cluster's %u threads have not arrived)", target, missing, total);
}
inline void cluster_wait(unsigned line = __builtin_LINE()) {
  ClusterWait wait{cluster_arrivals()[tctx().slot]};
  if (wait.target == 0)
    tvm_emu::fail(tvm_emu::kError, "barrier.cluster.wait without a barrier.cluster.arrive before "
                  "it");
  tvm_emu::wait_until(cluster_done, &wait, "waiting at the cluster barrier", line,
                      cluster_describe);
  if (race_on) race_interval_end(*tvm_emu::tls_worker);
}
inline void cluster_sync(unsigned line = __builtin_LINE()) {
  cluster_arrive();
  cluster_wait(line);
}

// mapa: the generic address, or the shared::cluster address, of the same offset in CTA `rank`
inline unsigned long long mapa_generic(unsigned long long p, unsigned rank) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const unsigned off = cvta_to_shared(reinterpret_cast<const void*>(p)) & kOffsetMask;
  return reinterpret_cast<unsigned long long>(w->cta_shared[cta_of_rank(rank, "mapa")] + off);
}
inline unsigned mapa_shared(unsigned addr, unsigned rank) { return cluster_addr(addr, rank); }

// run f() with CTA `rank` as the current one (its window is `shared`, its race state is used)
template <class F>
inline void in_cta(unsigned rank, F f) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  const unsigned prev = tvm_emu::enter_cta(*w, rank);
  f();
  tvm_emu::enter_cta(*w, prev);
}

// an mbarrier arrive (with expected transaction bytes) on CTA `cta`'s barrier, if pred
inline void mbar_arrive_peer(unsigned addr, unsigned cta, unsigned pred) {
  if (pred) mbar_arrive(cluster_addr(addr, cta));
}
inline void mbar_arrive_expect_tx_peer(unsigned addr, unsigned bytes, unsigned cta,
                                       unsigned pred) {
  if (!pred) return;
  const unsigned a = cluster_addr(addr, cta);
  mbar_expect_tx(a, bytes);
  mbar_arrive(a);
}

// cp.async.bulk.shared::cluster.shared::cta: this CTA's bytes into a cluster CTA's window,
// completing them on that CTA's mbarrier
inline void bulk_s2c(unsigned dst, unsigned src, unsigned bytes, unsigned bar) {
  const unsigned char* s = smem_at(src, bytes, "cp.async.bulk source");
  unsigned char* d = smem_at(dst, bytes, "cp.async.bulk destination (shared::cluster)");
  std::memmove(d, s, bytes);
  in_cta(addr_rank(dst), [&] { if (race_on) race_atomic(d, bytes); });
  mbar_complete_tx(bar, bytes);
}

// multicast: the copy lands at the same offset in each CTA of `mask` and completes its bytes on
// the mbarrier at the same offset in each of them
template <class F>
inline void each_cta(unsigned mask, const char* what, F f) {
  tvm_emu::Worker* w = tvm_emu::tls_worker;
  if (w->csize < 32 && mask >> w->csize)
    tvm_emu::fail(tvm_emu::kError, "%s: multicast mask 0x%x names CTAs outside the cluster of %u",
                  what, mask, w->csize);
  const unsigned base = w->cur_cta - w->cur_cta % w->csize;
  for (unsigned r = 0; r < w->csize; ++r)
    if ((mask >> r) & 1u) in_cta(base + r, f);
}
// A multicast copy lands after the other CTAs of the cluster have run up to their next blocking
// point: on the GPU they start together and the copy takes a while, so the receivers have set
// up their barriers (mbarrier.init, arrive.expect_tx) before its bytes arrive.
inline void tma_load_mc(unsigned dst, unsigned long long tmap, unsigned bar, unsigned mask,
                        const int* c) {
  tvm_emu::yield_slice();
  each_cta(mask, "cp.async.bulk.tensor .multicast::cluster", [&] {
    tma_load(dst & kOffsetMask, tmap, bar & kOffsetMask, c);
  });
}
template <class... C>
inline void tma_load_mc_at(unsigned dst, unsigned long long tmap, unsigned bar, unsigned mask,
                           C... coords) {
  const int c[] = {int(coords)...};
  tma_load_mc(dst, tmap, bar, mask, c);
}
inline void bulk_load_mc(unsigned dst, const void* src, unsigned bytes, unsigned bar,
                         unsigned mask) {
  tvm_emu::yield_slice();  // lands after the receivers set up, as tma_load_mc
  each_cta(mask, "cp.async.bulk .multicast::cluster", [&] {
    bulk_load(dst & kOffsetMask, src, bytes, bar & kOffsetMask);
  });
}
}  // namespace tvm_cuda_emu

// ---- Blackwell tensor memory (tcgen05) ---------------------------------------------------------------
// Each CTA has 128 lanes x 512 columns of 32-bit cells. A tensor-memory address holds the lane in
// bits 31-16 and the column in bits 15-0. tcgen05.alloc (a warp's collective) takes a power-of-two
// run of 32 to 512 columns, aligned to its size, and writes its address (lane 0) to shared
// memory; its columns read as kTmemPoison until written. Loads and stores move each thread's
// cells at once (their waits have nothing left to wait for); a warp reaches only the 32-lane
// quarter warp_id % 4, and only allocated columns. tcgen05.cp (issued by one thread) copies a
// shared-memory matrix, read through its descriptor, when issued; tcgen05.commit arrives at once.
// cta_group::2 and the other forms are not modelled (the intrinsics' emulation rules say so).
namespace tvm_cuda_emu {
constexpr unsigned kTmemLanes = 128, kTmemCols = 512;
constexpr uint32_t kTmemPoison = 0x7fc0dead;  // a quiet NaN as float
struct TmemCta {
  std::vector<uint32_t> cells;  // lane-major, made on the CTA's first alloc
  unsigned short run[kTmemCols] = {};  // an allocation's size at its first column, else 0
  bool used[kTmemCols] = {};
  bool relinquished = false;
};
inline thread_local std::vector<TmemCta>* tls_tmem = nullptr;
inline TmemCta& tmem_cta() {
  return tls_sized(tls_tmem, tvm_emu::tls_worker->cta_shared.size())[tctx().cta];
}
inline void tmem_reset_block() {
  if (tls_tmem)
    for (TmemCta& t : *tls_tmem) {
      std::memset(t.run, 0, sizeof t.run);
      std::memset(t.used, 0, sizeof t.used);
      t.relinquished = false;
    }
}
// the warp's lanes meet (every lane must come: the .sync.aligned instructions); true in the one
// lane that acts for the warp
inline bool tmem_warp_leader(unsigned line, const char* what) {
  const tvm_emu::WarpSnap& s = warp_exchange(0, 0xffffffffu, kSyncWarp, site_of(line, 7), what);
  return tctx().lane == unsigned(__builtin_ctz(s.mask));
}
inline void tmem_alloc(unsigned dst, unsigned ncols, unsigned line = __builtin_LINE()) {
  if (!tmem_warp_leader(line, "tcgen05.alloc")) return;
  if (ncols < 32 || ncols > kTmemCols || (ncols & (ncols - 1)))
    tvm_emu::fail(tvm_emu::kError, "tcgen05.alloc of %u columns: the count must be a power of "
                  "two from 32 to 512", ncols);
  TmemCta& t = tmem_cta();
  if (t.relinquished)
    tvm_emu::fail(tvm_emu::kError, "tcgen05.alloc after the CTA's "
                  "tcgen05.relinquish_alloc_permit: allocate before relinquishing the permit");
  if (t.cells.empty()) t.cells.assign(size_t(kTmemLanes) * kTmemCols, kTmemPoison);
  for (unsigned c = 0; c < kTmemCols; c += ncols) {
    bool free_run = true;
    for (unsigned q = c; q < c + ncols && free_run; ++q) free_run = !t.used[q];
    if (!free_run) continue;
    for (unsigned q = c; q < c + ncols; ++q) t.used[q] = true;
    t.run[c] = (unsigned short)ncols;
    for (unsigned l = 0; l < kTmemLanes; ++l)
      std::fill_n(&t.cells[size_t(l) * kTmemCols + c], ncols, kTmemPoison);
    std::memcpy(smem_at(dst, 4, "tcgen05.alloc destination"), &c, 4);
    return;
  }
  unsigned used = 0;
  for (bool u : t.used) used += u;
  tvm_emu::fail(tvm_emu::kDeadlock, "tcgen05.alloc of %u columns waits forever: %u of the CTA's "
                "512 tensor-memory columns are allocated and never freed while it waits "
                "(tcgen05.dealloc them first)", ncols, used);
}
inline void tmem_dealloc(unsigned taddr, unsigned ncols, unsigned line = __builtin_LINE()) {
  if (!tmem_warp_leader(line, "tcgen05.dealloc")) return;
  TmemCta& t = tmem_cta();
  const unsigned col = taddr & 0xffffu;
  if ((taddr >> 16) != 0 || col >= kTmemCols || t.run[col] != ncols)
    tvm_emu::fail(tvm_emu::kError, "tcgen05.dealloc of %u columns at tensor-memory address 0x%x, "
                  "which is not the address of an allocation of %u columns (%s)", ncols, taddr,
                  ncols, col < kTmemCols && t.run[col] ? "it has another size" :
                  "pass the address tcgen05.alloc wrote");
  t.run[col] = 0;
  for (unsigned q = col; q < col + ncols; ++q) t.used[q] = false;
}
inline void tmem_relinquish() { tmem_cta().relinquished = true; }

// the cell of register r of lane l for a tcgen05.ld/st shape (lane and column offsets from the
// address): the PTX ISA's fragments (tvm_backend_cuda.layout.tcgen05_atom_layout encodes the
// same for the layouts of tile copies)
enum TmemShape { k32x32b, k16x64b, k16x128b, k16x256b, k16x32bx2 };
inline const char* tmem_shape_name(int s) {
  static const char* names[] = {"32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"};
  return names[s];
}
inline void tmem_fragment(int shape, unsigned l, unsigned r, unsigned half_off, unsigned& dl,
                          unsigned& dc) {
  switch (shape) {
    case k32x32b: dl = l; dc = r; return;
    case k16x64b: dl = (l >> 2) + 8 * (l & 1); dc = ((l >> 1) & 1) + 2 * r; return;
    case k16x128b: dl = (l >> 2) + 8 * (r & 1); dc = (l & 3) + 4 * (r >> 1); return;
    case k16x256b: dl = (l >> 2) + 8 * ((r >> 1) & 1); dc = (r & 1) + 2 * (l & 3) + 8 * (r >> 2);
      return;
    default: dl = l & 15; dc = r + (l >= 16 ? half_off : 0); return;
  }
}
// the cell at (lane, column) that a thread's tcgen05.ld/st touches, checked
inline uint32_t& tmem_cell(const char* what, int shape, unsigned taddr, unsigned lane,
                           unsigned col) {
  TmemCta& t = tmem_cta();
  const tvm_emu::ThreadCtx& c = tctx();
  const unsigned quarter = c.warp % 4;
  if (lane / 32 != quarter)
    tvm_emu::fail(tvm_emu::kError, "%s.%s at tensor-memory address 0x%x: thread %u (warp %u) "
                  "reaches TMEM lane %u, but warp %u may access only lanes %u-%u (its warp id %% "
                  "4 = %u picks the 32-lane quarter); address the warp's own quarter", what,
                  tmem_shape_name(shape), taddr, c.linear, c.warp, lane, c.warp, 32 * quarter,
                  32 * quarter + 31, quarter);
  if (col >= kTmemCols || !t.used[col])
    tvm_emu::fail(tvm_emu::kBounds, "%s.%s at tensor-memory address 0x%x: thread %u reaches "
                  "column %u, which the CTA has not allocated (tcgen05.alloc)", what,
                  tmem_shape_name(shape), taddr, c.linear, col);
  return t.cells[size_t(lane) * kTmemCols + col];
}
inline void tmem_check_num(const char* what, int shape, unsigned num, size_t nregs, bool pack) {
  static const unsigned per[] = {1, 1, 2, 4, 1};
  if (num == 0 || (num & (num - 1)) || num * per[shape] > 128 || nregs != num * per[shape])
    tvm_emu::fail(tvm_emu::kError, "%s.%s.x%u%s with %zu registers: .x1 to .x%u (powers of two) "
                  "move %u registers a repetition", what, tmem_shape_name(shape), num,
                  pack ? " (16-bit packing)" : "", nregs, 128 / per[shape], per[shape]);
}
// tcgen05.ld: pack (.pack::16b) joins the low halves of two adjacent columns in each register
inline void tmem_ld_n(int shape, unsigned num, bool pack, unsigned taddr, unsigned half_off,
                      size_t n, unsigned* const* regs) {
  tmem_check_num("tcgen05.ld", shape, num, n, pack);
  const unsigned l = tctx().lane;
  for (unsigned r = 0; r < n; ++r) {
    unsigned dl, dc;
    tmem_fragment(shape, l, r, half_off, dl, dc);
    const unsigned lane = (taddr >> 16) + dl, col = (taddr & 0xffffu);
    if (pack) {
      uint32_t lo = tmem_cell("tcgen05.ld", shape, taddr, lane, col + 2 * dc);
      uint32_t hi = tmem_cell("tcgen05.ld", shape, taddr, lane, col + 2 * dc + 1);
      *regs[r] = (lo & 0xffffu) | (hi << 16);
    } else {
      *regs[r] = tmem_cell("tcgen05.ld", shape, taddr, lane, col + dc);
    }
  }
}
// tcgen05.st: unpack (.unpack::16b) spreads each register's halves over two adjacent columns
inline void tmem_st_n(int shape, unsigned num, bool unpack, unsigned taddr, unsigned half_off,
                      size_t n, const unsigned* vals) {
  tmem_check_num("tcgen05.st", shape, num, n, unpack);
  const unsigned l = tctx().lane;
  for (unsigned r = 0; r < n; ++r) {
    unsigned dl, dc;
    tmem_fragment(shape, l, r, half_off, dl, dc);
    const unsigned lane = (taddr >> 16) + dl, col = (taddr & 0xffffu);
    if (unpack) {
      tmem_cell("tcgen05.st", shape, taddr, lane, col + 2 * dc) = vals[r] & 0xffffu;
      tmem_cell("tcgen05.st", shape, taddr, lane, col + 2 * dc + 1) = vals[r] >> 16;
    } else {
      tmem_cell("tcgen05.st", shape, taddr, lane, col + dc) = vals[r];
    }
  }
}
template <class... R>
inline void tmem_ld(int shape, unsigned num, bool pack, unsigned taddr, unsigned half_off,
                    R&... regs) {
  unsigned* out[] = {&regs...};
  tmem_ld_n(shape, num, pack, taddr, half_off, sizeof...(R), out);
}
template <class... V>
inline void tmem_st(int shape, unsigned num, bool unpack, unsigned taddr, unsigned half_off,
                    V... vals) {
  const unsigned in[] = {unsigned(vals)...};
  tmem_st_n(shape, num, unpack, taddr, half_off, sizeof...(V), in);
}

// tcgen05.cp: a shared-memory matrix of rows x (bits / 8) bytes, read through the descriptor
// (K-major canonical layout: 8-row core matrices of 16-byte rows; swizzle none, 32B, 64B, 128B)
// into `rows` lanes from the address's lane, bits / 32 columns from its column. warpx4 copies 32
// rows to each lane quarter; warpx2::02_13 rows 0-31 to quarters 0 and 2, rows 32-63 to 1 and 3;
// warpx2::01_23 rows 0-31 to quarters 0 and 1, rows 32-63 to 2 and 3.
enum TmemMulticast { kCpNone, kCpWarpx4, kCpWarpx2_02_13, kCpWarpx2_01_23 };
inline void tmem_cp(unsigned taddr, unsigned long long desc, unsigned rows, unsigned bits,
                    int multicast) {
  const unsigned mode = unsigned(desc >> 61) & 7u;
  if (mode != 0 && mode != 2 && mode != 4 && mode != 6)
    tvm_emu::fail(tvm_emu::kNotModelled, "tcgen05.cp with shared-memory descriptor swizzle mode "
                  "%u (the emulator models none, 128B, 64B and 32B: modes 0, 2, 4, 6)", mode);
  WgmmaDesc d;
  d.start = unsigned(desc & 0x3fffu) << 4;
  d.lbo = unsigned((desc >> 16) & 0x3fffu) << 4;
  d.sbo = unsigned((desc >> 32) & 0x3fffu) << 4;
  d.sw = mode == 2 ? 128u : mode == 4 ? 64u : mode == 6 ? 32u : 0u;
  TmemCta& t = tmem_cta();
  const unsigned lane0 = taddr >> 16, col0 = taddr & 0xffffu, ncols = bits / 32;
  auto put = [&](unsigned row, unsigned lane) {
    for (unsigned c = 0; c < ncols; ++c) {
      const unsigned col = col0 + c;
      if (lane >= kTmemLanes || col >= kTmemCols || !t.used[col])
        tvm_emu::fail(tvm_emu::kBounds, "tcgen05.cp into tensor-memory lane %u, column %u "
                      "(address 0x%x), which the CTA has not allocated", lane, col, taddr);
      uint32_t v;
      std::memcpy(&v, smem_at(wgmma_addr(d, false, 1, row, 4 * c), 4, "tcgen05.cp source"), 4);
      t.cells[size_t(lane) * kTmemCols + col] = v;
    }
  };
  for (unsigned row = 0; row < rows; ++row) {
    switch (multicast) {
      case kCpWarpx4:
        for (unsigned q = 0; q < 4; ++q) put(row, lane0 + 32 * q + row);
        break;
      case kCpWarpx2_02_13:
        for (unsigned q : {row / 32, row / 32 + 2}) put(row, lane0 + 32 * q + row % 32);
        break;
      case kCpWarpx2_01_23:
        for (unsigned q : {2 * (row / 32), 2 * (row / 32) + 1}) put(row, lane0 + 32 * q + row % 32);
        break;
      default:
        put(row, lane0 + row);
    }
  }
}
// tcgen05.commit: the tcgen05 operations before it are done (the emulator runs them when
// issued): arrive on the mbarrier at once (mask != 0: on that offset in each CTA of the mask)
inline void tmem_commit(unsigned bar, unsigned mask) {
  if (mask == 0) {
    mbar_arrive(bar);
    return;
  }
  each_cta(mask, "tcgen05.commit .multicast::cluster",
           [&] { mbar_arrive(bar & kOffsetMask); });
}
}  // namespace tvm_cuda_emu
namespace tvm_cuda_emu {
// the 32 bits of a register operand of inline PTX ("r" or "f"), unconverted
template <class T>
inline unsigned bits32(const T& v) {
  static_assert(sizeof(T) == 4, "a 32-bit register operand");
  unsigned u;
  std::memcpy(&u, &v, 4);
  return u;
}
}  // namespace tvm_cuda_emu

// tcgen05.mma (cta_group::1, A and B in shared memory through their descriptors, D float32 in
// tensor memory): computed when issued by the one issuing thread. The instruction descriptor
// gives M (bits 24-28, >> 4), N (17-22, >> 3), the A / B formats (7-9, 10-12) and majorness
// (15, 16: MN-major), negation (13, 14) and D's format (4-5: 1 = f32). D row m is TMEM lane m
// for M = 128; for M = 64 rows 16w..16w+15 are lanes 32w..32w+15 (datapath F). K is one
// instruction's: 32 bytes of A and B elements.
namespace tvm_cuda_emu {
inline WgmmaDesc tcgen05_desc(unsigned long long desc, const char* what) {
  const unsigned mode = unsigned(desc >> 61) & 7u;
  if (mode != 0 && mode != 2 && mode != 4 && mode != 6)
    tvm_emu::fail(tvm_emu::kNotModelled, "%s with shared-memory descriptor swizzle mode %u (the "
                  "emulator models none, 128B, 64B and 32B: modes 0, 2, 4, 6)", what, mode);
  WgmmaDesc d;
  d.start = unsigned(desc & 0x3fffu) << 4;
  d.lbo = unsigned((desc >> 16) & 0x3fffu) << 4;
  d.sbo = unsigned((desc >> 32) & 0x3fffu) << 4;
  d.sw = mode == 2 ? 128u : mode == 4 ? 64u : mode == 6 ? 32u : 0u;
  return d;
}
template <class In>
inline void tcgen05_mma_ss(unsigned d_tmem, unsigned long long a_desc, unsigned long long b_desc,
                           unsigned idesc, bool accumulate, const float* a_scale = nullptr,
                           const float* b_scale = nullptr) {
  const unsigned M = ((idesc >> 24) & 0x1fu) << 4, N = ((idesc >> 17) & 0x3fu) << 3;
  const bool a_mn = (idesc >> 15) & 1u, b_mn = (idesc >> 16) & 1u;
  const float na = (idesc >> 13) & 1u ? -1.0f : 1.0f, nb = (idesc >> 14) & 1u ? -1.0f : 1.0f;
  if (((idesc >> 4) & 3u) != 1u)
    tvm_emu::fail(tvm_emu::kNotModelled, "tcgen05.mma with a float16 D (the emulator models "
                  "float32 accumulators)");
  if (M != 64 && M != 128)
    tvm_emu::fail(tvm_emu::kNotModelled, "tcgen05.mma with M = %u (cta_group::1 models M = 64 "
                  "and 128)", M);
  const WgmmaDesc a = tcgen05_desc(a_desc, "tcgen05.mma A"), b = tcgen05_desc(b_desc,
                                                                                "tcgen05.mma B");
  const unsigned K = 32 / in_bytes<In>();
  TmemCta& t = tmem_cta();
  const unsigned lane0 = d_tmem >> 16, col0 = d_tmem & 0xffffu;
  std::vector<float> bv(size_t(N) * K);
  for (unsigned n = 0; n < N; ++n) {
    const float s = b_scale ? nb * b_scale[n] : nb;
    for (unsigned k = 0; k < K; ++k) bv[size_t(n) * K + k] = s * wgmma_smem<In>(b, b_mn, n, k);
  }
  for (unsigned m = 0; m < M; ++m) {
    float av[32];
    const float s = a_scale ? na * a_scale[m] : na;
    for (unsigned k = 0; k < K; ++k) av[k] = s * wgmma_smem<In>(a, a_mn, m, k);
    const unsigned lane = lane0 + (M == 128 ? m : 32 * (m / 16) + m % 16);
    for (unsigned n = 0; n < N; ++n) {
      const unsigned col = col0 + n;
      if (lane >= kTmemLanes || col >= kTmemCols || !t.used[col])
        tvm_emu::fail(tvm_emu::kBounds, "tcgen05.mma writes tensor-memory lane %u, column %u "
                      "(D at address 0x%x), which the CTA has not allocated", lane, col, d_tmem);
      uint32_t& cell = t.cells[size_t(lane) * kTmemCols + col];
      float acc = accumulate ? u2f(cell) : 0.0f;
      for (unsigned k = 0; k < K; ++k) acc += av[k] * bv[size_t(n) * K + k];
      cell = f2u(acc);
    }
  }
}
// tcgen05.mma.block_scale (kind::mxf8f6f4, scale_vec::1X, ue8m0 factors; cta_group::1, M = 128):
// the MMA above with A's row m scaled by 2^(e - 127) of the factor byte `sf id` (idesc bits
// 29-30 for A, 4-5 for B) of tensor memory lane (sfa lane) + m, column (sfa column) + m / 32,
// and B's row n by that of lane (sfb lane) + n % 32, column (sfb column) + n / 32: where
// tcgen05.cp .32x128b .warpx4 puts rows of 16 bytes. Bits 30-31 of the factor addresses (the
// ids again) are not part of the lane.
inline float ue8m0(unsigned e) { return e == 255u ? NAN : std::ldexp(1.0f, int(e) - 127); }
inline float tmem_sf(unsigned addr, unsigned lane_off, unsigned col_off, unsigned id) {
  TmemCta& t = tmem_cta();
  const unsigned lane = ((addr >> 16) & 0x3fffu) + lane_off, col = (addr & 0xffffu) + col_off;
  if (lane >= kTmemLanes || col >= kTmemCols || !t.used[col])
    tvm_emu::fail(tvm_emu::kBounds, "tcgen05.mma.block_scale reads a scale factor at "
                  "tensor-memory lane %u, column %u (address 0x%x), which the CTA has not "
                  "allocated", lane, col, addr);
  return ue8m0((t.cells[size_t(lane) * kTmemCols + col] >> (8 * id)) & 0xffu);
}
template <class In>
inline void tcgen05_mma_ss_bs(unsigned d_tmem, unsigned long long a_desc,
                              unsigned long long b_desc, unsigned sfa, unsigned sfb,
                              unsigned idesc, bool accumulate) {
  const unsigned M = ((idesc >> 24) & 0x1fu) << 4, N = ((idesc >> 17) & 0x3fu) << 3;
  if (M != 128)
    tvm_emu::fail(tvm_emu::kNotModelled, "tcgen05.mma.block_scale with M = %u (the emulator "
                  "models M = 128)", M);
  if (!((idesc >> 23) & 1u))
    tvm_emu::fail(tvm_emu::kNotModelled, "tcgen05.mma.block_scale with ue4m3 scale factors "
                  "(the emulator models ue8m0)");
  const unsigned a_id = (idesc >> 29) & 3u, b_id = (idesc >> 4) & 3u;
  std::vector<float> sa(M), sb(N);
  for (unsigned m = 0; m < M; ++m) sa[m] = tmem_sf(sfa, m, m / 32, a_id);
  for (unsigned n = 0; n < N; ++n) sb[n] = tmem_sf(sfb, n % 32, n / 32, b_id);
  // the dense descriptor's D-format bits (4-5) hold B's factor id here: D is float32
  tcgen05_mma_ss<In>(d_tmem, a_desc, b_desc, (idesc & ~0x30u) | 0x10u, accumulate, sa.data(),
                     sb.data());
}
}  // namespace tvm_cuda_emu
