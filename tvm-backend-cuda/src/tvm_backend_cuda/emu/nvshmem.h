// nvshmem.h for the CUDA emulator (tvm_backend_cuda/emu): NVSHMEM's device API for one PE, the
// one an emulated NvshmemContext (nvshmem_emu.py) runs. The symmetric heap is the process's
// memory, so a put or get with this PE is a copy, complete when it returns (quiet and fence have
// nothing left to do); a call naming another PE is refused (NotModelledError). Signals are
// 64-bit words updated atomically; wait_until blocks the thread (a fiber) until the word
// compares true, and a kernel that waits is launched with its blocks together when they fit
// (emulator.py), so a block may wait for another. Block- and warp-scoped calls are collective:
// every thread of the block (warp) calls them, one copy is made, and they return together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

enum { NVSHMEM_SIGNAL_SET = 0, NVSHMEM_SIGNAL_ADD = 5 };
enum {
  NVSHMEM_CMP_EQ = 0,
  NVSHMEM_CMP_NE = 1,
  NVSHMEM_CMP_GT = 2,
  NVSHMEM_CMP_LE = 3,
  NVSHMEM_CMP_LT = 4,
  NVSHMEM_CMP_GE = 5,
};

namespace tvm_cuda_emu {
namespace nvshmem {
inline void check_pe(int pe, const char* fn) {
  if (pe != 0)
    tvm_emu::fail(tvm_emu::kNotModelled, "%s to PE %d: the CUDA emulator runs one PE (PE 0 of "
                  "1); multi-PE NVSHMEM needs GPUs", fn, pe);
}
inline void copy(void* dst, const void* src, size_t n, int pe, const char* fn) {
  check_pe(pe, fn);
  if (n) std::memmove(dst, src, n);
}
template <class F>
inline void in_warp(F f) {
  __syncwarp();
  if (tctx().lane == 0) f();
  __syncwarp();
}
template <class F>
inline void in_block(F f) {
  __syncthreads();
  if (tctx().linear == 0) f();
  __syncthreads();
}
inline void signal(uint64_t* sig, uint64_t value, int op, int pe, const char* fn) {
  check_pe(pe, fn);
  if (op == NVSHMEM_SIGNAL_ADD) __atomic_fetch_add(sig, value, __ATOMIC_SEQ_CST);
  else __atomic_store_n(sig, value, __ATOMIC_SEQ_CST);
}
template <class T>
struct Wait {
  const T* ivar;
  int cmp;
  T value;
};
template <class T>
inline bool compare(T a, int cmp, T b) {
  switch (cmp) {
    case NVSHMEM_CMP_EQ: return a == b;
    case NVSHMEM_CMP_NE: return a != b;
    case NVSHMEM_CMP_GT: return a > b;
    case NVSHMEM_CMP_GE: return a >= b;
    case NVSHMEM_CMP_LT: return a < b;
    default: return a <= b;
  }
}
template <class T>
inline bool wait_done(const void* a) {
  auto* w = static_cast<const Wait<T>*>(a);
  T v;
  __atomic_load(w->ivar, &v, __ATOMIC_SEQ_CST);
  return compare(v, w->cmp, w->value);
}
template <class T>
inline void wait_describe(const void* a, char* out, size_t n) {
  auto* w = static_cast<const Wait<T>*>(a);
  static const char* names[] = {"==", "!=", ">", "<=", "<", ">="};
  std::snprintf(out, n, "in nvshmem wait_until: the word at %p is %lld, waiting for %s %lld",
                (const void*)w->ivar, (long long)*w->ivar, names[w->cmp % 6],
                (long long)w->value);
}
template <class T>
inline void wait_until(const T* ivar, int cmp, T value, unsigned line) {
  Wait<T> w{ivar, cmp, value};
  tvm_emu::wait_until(wait_done<T>, &w, "in nvshmem wait_until", line, wait_describe<T>);
}
}  // namespace nvshmem
}  // namespace tvm_cuda_emu

inline int nvshmem_my_pe() { return 0; }
inline int nvshmem_n_pes() { return 1; }
inline void nvshmem_quiet() { __threadfence(); }
inline void nvshmem_fence() { __threadfence(); }
inline void nvshmemx_quiet_warp() { __threadfence(); }
inline void nvshmemx_quiet_block() { __threadfence(); }
inline void nvshmem_barrier_all() { __threadfence(); }  // one PE: no other to wait for
inline void nvshmem_sync_all() { __threadfence(); }
inline void nvshmemx_barrier_all_warp(unsigned line = __builtin_LINE()) { __syncwarp(0xffffffffu, line); }
inline void nvshmemx_barrier_all_block(unsigned line = __builtin_LINE()) { __syncthreads(line); }
inline void nvshmemx_sync_all_warp(unsigned line = __builtin_LINE()) { __syncwarp(0xffffffffu, line); }
inline void nvshmemx_sync_all_block(unsigned line = __builtin_LINE()) { __syncthreads(line); }
inline void* nvshmem_ptr(const void* p, int pe) { return pe == 0 ? const_cast<void*>(p) : nullptr; }

// one PE: the blocking and non-blocking copies are the same copy
#define TVM_NVSHMEM_COPY(name, to, from)                                                        \
  inline void name(void* dst, const void* src, size_t n, int pe) {                              \
    tvm_cuda_emu::nvshmem::copy(to, from, n, pe, #name);                                        \
  }
// the warp and block forms: one thread of the warp or block copies (in_warp, in_block)
#define TVM_NVSHMEM_SCOPED_COPY(name, scope, to, from)                                          \
  inline void name(void* dst, const void* src, size_t n, int pe) {                              \
    tvm_cuda_emu::nvshmem::in_##scope(                                                          \
        [&] { tvm_cuda_emu::nvshmem::copy(to, from, n, pe, #name); });                          \
  }
#define TVM_NVSHMEM_MEM(what, to, from)                                                         \
  TVM_NVSHMEM_COPY(nvshmem_##what, to, from)                                                    \
  TVM_NVSHMEM_COPY(nvshmem_##what##_nbi, to, from)                                              \
  TVM_NVSHMEM_SCOPED_COPY(nvshmemx_##what##_warp, warp, to, from)                               \
  TVM_NVSHMEM_SCOPED_COPY(nvshmemx_##what##_nbi_warp, warp, to, from)                           \
  TVM_NVSHMEM_SCOPED_COPY(nvshmemx_##what##_block, block, to, from)                             \
  TVM_NVSHMEM_SCOPED_COPY(nvshmemx_##what##_nbi_block, block, to, from)
TVM_NVSHMEM_MEM(putmem, dst, src)
TVM_NVSHMEM_MEM(getmem, dst, src)
#undef TVM_NVSHMEM_MEM
#undef TVM_NVSHMEM_SCOPED_COPY
#undef TVM_NVSHMEM_COPY

inline void nvshmemx_signal_op(uint64_t* sig, uint64_t value, int op, int pe) {
  tvm_cuda_emu::nvshmem::signal(sig, value, op, pe, "nvshmemx_signal_op");
}
inline void nvshmem_putmem_signal_nbi(void* dst, const void* src, size_t n, uint64_t* sig,
                                      uint64_t value, int op, int pe) {
  tvm_cuda_emu::nvshmem::copy(dst, src, n, pe, "nvshmem_putmem_signal_nbi");
  tvm_cuda_emu::nvshmem::signal(sig, value, op, pe, "nvshmem_putmem_signal_nbi");
}
inline void nvshmem_putmem_signal(void* dst, const void* src, size_t n, uint64_t* sig,
                                  uint64_t value, int op, int pe) {
  nvshmem_putmem_signal_nbi(dst, src, n, sig, value, op, pe);
}
inline void nvshmemx_putmem_signal_nbi_warp(void* dst, const void* src, size_t n, uint64_t* sig,
                                            uint64_t value, int op, int pe) {
  tvm_cuda_emu::nvshmem::in_warp([&] { nvshmem_putmem_signal_nbi(dst, src, n, sig, value, op, pe); });
}
inline void nvshmemx_putmem_signal_nbi_block(void* dst, const void* src, size_t n, uint64_t* sig,
                                             uint64_t value, int op, int pe) {
  tvm_cuda_emu::nvshmem::in_block([&] { nvshmem_putmem_signal_nbi(dst, src, n, sig, value, op, pe); });
}

#define TVM_NVSHMEM_WAIT(name, T)                                                               \
  inline void nvshmem_##name##_wait_until(T* ivar, int cmp, T value,                            \
                                          unsigned line = __builtin_LINE()) {                 \
    tvm_cuda_emu::nvshmem::wait_until<T>(ivar, cmp, value, line);                               \
  }                                                                                             \
  inline uint64_t nvshmem_##name##_test(T* ivar, int cmp, T value) {                          \
    return tvm_cuda_emu::nvshmem::compare<T>(*ivar, cmp, value);                                \
  }
TVM_NVSHMEM_WAIT(uint64, uint64_t)
TVM_NVSHMEM_WAIT(int64, int64_t)
TVM_NVSHMEM_WAIT(uint32, uint32_t)
TVM_NVSHMEM_WAIT(int32, int32_t)
TVM_NVSHMEM_WAIT(int, int)
TVM_NVSHMEM_WAIT(long, long)
TVM_NVSHMEM_WAIT(longlong, long long)
TVM_NVSHMEM_WAIT(uint, unsigned int)
TVM_NVSHMEM_WAIT(ulonglong, unsigned long long)
TVM_NVSHMEM_WAIT(short, short)
TVM_NVSHMEM_WAIT(ushort, unsigned short)
TVM_NVSHMEM_WAIT(ulong, unsigned long)
#undef TVM_NVSHMEM_WAIT
inline uint64_t nvshmem_signal_wait_until(uint64_t* sig, int cmp, uint64_t value,
                                          unsigned line = __builtin_LINE()) {
  tvm_cuda_emu::nvshmem::wait_until<uint64_t>(sig, cmp, value, line);
  return *sig;
}
