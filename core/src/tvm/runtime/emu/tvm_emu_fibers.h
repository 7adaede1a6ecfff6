// tvm_emu_fibers.h: the execution model of tvm's CPU emulators of GPU kernels (one runtime,
// shared by the Metal emulator and the CUDA emulator).
//
// A grid of blocks (CTAs, threadgroups) runs on a pool of OS worker threads; a worker runs one
// block at a time. Every thread of a block is a fiber (ucontext) with its own stack, run until it
// blocks (cooperative scheduling, no preemption):
//   * at a block barrier (__syncthreads, threadgroup_barrier): released once every live fiber of
//     the block is blocked and no warp collective is pending;
//   * at a warp collective (shuffle, vote, reduce, __syncwarp, simd_sum ...): the lane deposits
//     its value in its outbox and blocks; once no fiber can run, the lanes of each warp waiting
//     at the same call site are released together, with a snapshot of their values (`snap()`);
//   * in a wait (an mbarrier phase, a cp.async group): `wait_until(pred)` blocks until the
//     predicate holds; the scheduler re-checks predicates whenever every fiber is blocked.
// Clusters (CUDA): a worker runs the blocks of one cluster together, each block with its own
// shared-memory window and its own barriers; a fiber of any of them may wait for another (a
// cluster barrier, an mbarrier another block completes), and `Worker::shared` is the window of
// the block whose fiber (or whose wait predicate) runs. A cooperative launch runs the whole grid
// together that way (blocks that wait for each other through global memory), on one worker.
// Checks, each reported once per launch through `fail()` (the launch returns the message):
//   * strict barriers (CUDA): a barrier that part of the block reached while the rest exited, or
//     that fibers reached at different call sites, is a barrier divergence;
//   * a deadlock: every live fiber blocked, no barrier can be released and no wait can complete;
//     the report names the blocked threads and what each waits for.
// A failing check (or a bounds check of the guest code) aborts the block and the grid.
#pragma once

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace tvm_emu {

constexpr int kWarp = 32;
constexpr int kSlot = 64;
constexpr unsigned kMaxThreads = 1024;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct ThreadCtx {
  Dim3 tid, bid, bdim, gdim;
  unsigned linear = 0;  // thread index in the block
  unsigned lane = 0, warp = 0, nwarps = 0;
  Dim3 cdim;              // the cluster's shape in blocks (1, 1, 1 without clusters)
  unsigned cta = 0;       // the block's index in the worker's group (cluster rank: cta % csize)
  unsigned ncta = 1;      // blocks in the group (a cluster, or a cooperative grid)
  unsigned slot = 0;      // the fiber's index in its worker (unique among the cluster's threads)
  unsigned warp_slot = 0; // the warp's index in its worker
};

enum State : uint8_t { kReady, kAtBarrier, kAtWarp, kWaiting, kDone, kAborted };

using WaitFn = bool (*)(const void* arg);
// describes a wait in a deadlock report (at report time: the state it waits on may have moved)
using DescribeFn = void (*)(const void* arg, char* out, size_t n);

struct Fiber {
  ucontext_t uc;
  char* stack = nullptr;
  State state = kDone;
  unsigned site = 0;  // source line of the barrier or collective it waits at
  int op = 0;
  unsigned arg = 0;
  WaitFn wait_fn = nullptr;
  DescribeFn wait_describe = nullptr;
  const void* wait_arg = nullptr;
  char wait_what[200] = {0};
  alignas(16) unsigned char outbox[kSlot];
  ThreadCtx ctx;
};

struct WarpSnap {
  alignas(16) unsigned char released[kWarp][kSlot];
  uint32_t mask = 0;
};

// Failure codes a launch returns (the Python side maps them to exceptions).
enum Code : int {
  kOk = 0,
  kError = 1,
  kBounds = 2,
  kDivergence = 3,
  kDeadlock = 4,
  kRace = 5,
  kNotModelled = 6,
};

struct LaunchConfig {
  const char* kernel = "kernel";
  bool strict_barriers = false;  // CUDA: a barrier must be reached by the whole block
  size_t shared_bytes = 0;       // per-block shared window (static + dynamic)
  size_t dynamic_bytes = 0;      // of which the dynamic part, at the window's end
  size_t stack_size = 256 * 1024;
  Dim3 cluster;                  // blocks per cluster (CUDA thread block clusters)
  bool cooperative = false;      // every block of the grid runs together (one group)
};

using KernelFn = void (*)(void** args, const ThreadCtx& ctx);

struct Worker {
  std::vector<Fiber> fibers;
  std::vector<WarpSnap> warps;
  ucontext_t sched;
  Fiber* cur = nullptr;
  KernelFn fn = nullptr;
  void** args = nullptr;
  const LaunchConfig* cfg = nullptr;
  unsigned nthreads = 0;
  // the running block's shared memory window; static declarations are placed from its start
  unsigned char* shared = nullptr;
  size_t shared_size = 0;
  // with clusters: every block's window (by rank in the cluster), and the running block's rank
  std::vector<unsigned char*> cta_shared;
  unsigned ncta = 1, cur_cta = 0;
  unsigned csize = 1;  // blocks per cluster (the group holds ncta / csize clusters)
  size_t static_top = 0;
  struct Slot {
    const void* key;  // the declaration
    size_t offset, bytes;
    const char* name;
  };
  std::vector<Slot> static_slots;
  void* user = nullptr;  // the dialect's per-block state
};

inline thread_local Worker* tls_worker = nullptr;

// ---- failures ---------------------------------------------------------------------------------
struct Failure {
  std::atomic<int> code{0};
  char message[2048] = {0};
};
inline Failure& failure() {
  static Failure f;
  return f;
}
inline bool failed() { return failure().code.load(std::memory_order_relaxed) != 0; }

inline Fiber* current() {
  Worker* w = tls_worker;
  return w ? w->cur : nullptr;
}

inline std::string where(const ThreadCtx& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "block (%u, %u, %u), thread (%u, %u, %u)", c.bid.x, c.bid.y,
                c.bid.z, c.tid.x, c.tid.y, c.tid.z);
  return buf;
}

// Record the launch's first failure (later ones are dropped).
inline void record(int code, const char* text) {
  int none = 0;
  Failure& f = failure();
  if (f.code.compare_exchange_strong(none, -1)) {
    std::snprintf(f.message, sizeof f.message, "%s", text);
    f.code.store(code);
  }
}

// Record a failure of the running thread, then abandon it: the block and the grid stop.
[[noreturn]] inline void abort_thread() {
  Worker* w = tls_worker;
  Fiber* f = w ? w->cur : nullptr;
  if (!f) {
    std::fprintf(stderr, "tvm emulator: %s\n", failure().message);
    std::abort();
  }
  f->state = kAborted;
  swapcontext(&f->uc, &w->sched);
  __builtin_unreachable();
}

[[noreturn]] inline void fail(int code, const char* fmt, ...) {
  char text[1536];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  Fiber* f = current();
  const char* kernel = (tls_worker && tls_worker->cfg) ? tls_worker->cfg->kernel : "kernel";
  std::string msg = std::string("kernel '") + kernel + "': " + text;
  if (f) msg += " (" + where(f->ctx) + ")";
  record(code, msg.c_str());
  abort_thread();
}

// ---- blocking ------------------------------------------------------------------------------
inline void block(State s, unsigned site = 0) {
  Worker* w = tls_worker;
  if (!w || !w->cur) return;  // not running under the emulator: nothing to wait for
  Fiber* f = w->cur;
  f->state = s;
  f->site = site;
  swapcontext(&f->uc, &w->sched);
  if (failed()) abort_thread();  // another thread failed: stop here
}

// Block until pred(arg) holds; `what` describes the wait for a deadlock report.
inline void wait_until(WaitFn pred, const void* arg, const char* what, unsigned site = 0,
                       DescribeFn describe = nullptr) {
  if (pred(arg)) return;
  Worker* w = tls_worker;
  if (!w || !w->cur) return;
  Fiber* f = w->cur;
  f->wait_fn = pred;
  f->wait_describe = describe;
  f->wait_arg = arg;
  std::snprintf(f->wait_what, sizeof f->wait_what, "%s", what);
  block(kWaiting, site);
  f->wait_fn = nullptr;
  f->wait_describe = nullptr;
}

// Let the other ready threads of the block run first: this thread resumes after every thread
// that could run has run up to its next blocking point (what lanes running in lockstep see).
inline void yield_slice() {
  Worker* w = tls_worker;
  if (!w || !w->cur) return;
  Fiber* f = w->cur;
  f->wait_fn = [](const void*) { return true; };  // ready again once the others have run
  f->wait_describe = nullptr;
  f->wait_arg = nullptr;
  std::snprintf(f->wait_what, sizeof f->wait_what, "%s", "a yield");
  block(kWaiting, 0);
  f->wait_fn = nullptr;
}

// A warp collective: deposit `v` (at most kSlot bytes), block until the lanes of this warp at
// the same call site are released, and return the warp's snapshot (mask = participating lanes).
inline const WarpSnap& exchange(const void* v, size_t n, int op, unsigned arg, unsigned site) {
  Worker* w = tls_worker;
  Fiber* f = w->cur;
  std::memcpy(f->outbox, v, n < size_t(kSlot) ? n : size_t(kSlot));
  f->op = op;
  f->arg = arg;
  block(kAtWarp, site);
  // Resumed right after the release: no other release of this warp happens before every
  // participant has run again, so the snapshot is still ours.
  return w->warps[f->ctx.warp_slot];
}

// Make block `rank` of the cluster the running one (its shared window); returns the previous.
inline unsigned enter_cta(Worker& w, unsigned rank) {
  unsigned prev = w.cur_cta;
  w.cur_cta = rank;
  w.shared = w.cta_shared[rank];
  return prev;
}

// ---- shared memory -----------------------------------------------------------------------------
// The storage of a static shared declaration (`key` identifies it): placed on first use in the
// block, the same address for every thread of the block.
inline void* shared_static(const void* key, size_t bytes, size_t align,
                           const char* name = "shared") {
  Worker* w = tls_worker;
  for (auto& s : w->static_slots)
    if (s.key == key) return w->shared + s.offset;
  size_t off = (w->static_top + align - 1) / align * align;
  const size_t limit = w->shared_size - w->cfg->dynamic_bytes;
  if (off + bytes > limit)
    fail(kError, "static shared memory exceeds the %zu bytes the emulator provides", limit);
  w->static_slots.push_back(Worker::Slot{key, off, bytes, name});
  w->static_top = off + bytes;
  return w->shared + off;
}

// ---- the scheduler -----------------------------------------------------------------------------
inline void fiber_main() {
  Worker* w = tls_worker;
  Fiber* f = w->cur;
  w->fn(w->args, f->ctx);
  f->state = kDone;  // uc_link returns to the scheduler
}

inline const char* state_name(const Fiber& f) {
  switch (f.state) {
    case kAtBarrier: return "at a block barrier";
    case kAtWarp: return "at a warp collective";
    case kWaiting: return f.wait_what;
    case kDone: return "exited";
    default: return "running";
  }
}

// Describe up to a few fibers of each kind of state (for divergence and deadlock reports), of
// fibers [lo, hi) (a block) or of the whole cluster; threads of a cluster name their block.
inline std::string describe_threads(Worker& w, bool (*pick)(const Fiber&), unsigned lo = 0,
                                    unsigned hi = ~0u) {
  std::string out;
  int shown = 0, more = 0;
  hi = std::min(hi, w.nthreads * w.ncta);
  const bool cluster = w.ncta > 1 && hi - lo > w.nthreads;
  std::vector<int> per_cta(w.ncta, 0);  // a cluster's report shows a few threads of each block
  for (unsigned i = lo; i < hi; ++i) {
    const Fiber& f = w.fibers[i];
    if (!pick(f)) continue;
    if (cluster ? per_cta[f.ctx.cta]++ >= 3 || shown == 12 : shown == 6) { ++more; continue; }
    char who[96];
    if (w.ncta > 1)
      std::snprintf(who, sizeof who, "block (%u, %u, %u) thread (%u, %u, %u)", f.ctx.bid.x,
                    f.ctx.bid.y, f.ctx.bid.z, f.ctx.tid.x, f.ctx.tid.y, f.ctx.tid.z);
    else
      std::snprintf(who, sizeof who, "thread (%u, %u, %u)", f.ctx.tid.x, f.ctx.tid.y,
                    f.ctx.tid.z);
    char buf[420];
    if (f.state == kAtBarrier || f.state == kWaiting)
      std::snprintf(buf, sizeof buf, "%s%s %s (line %u)", shown ? "; " : "", who, state_name(f),
                    f.site);
    else
      std::snprintf(buf, sizeof buf, "%s%s %s", shown ? "; " : "", who, state_name(f));
    out += buf;
    ++shown;
  }
  if (more) out += "; and " + std::to_string(more) + " more";
  return out;
}

inline void block_failure(Worker& w, int code, const std::string& what, unsigned first = 0) {
  const Fiber& f0 = w.fibers[first];
  char head[200];
  if (w.ncta > 1 && first == 0 && w.cfg->cooperative)
    std::snprintf(head, sizeof head, "kernel '%s', the cooperative grid: ", w.cfg->kernel);
  else if (w.ncta > 1 && first == 0)
    std::snprintf(head, sizeof head, "kernel '%s', the cluster of block (%u, %u, %u): ",
                  w.cfg->kernel, f0.ctx.bid.x, f0.ctx.bid.y, f0.ctx.bid.z);
  else
    std::snprintf(head, sizeof head, "kernel '%s', block (%u, %u, %u): ", w.cfg->kernel,
                  f0.ctx.bid.x, f0.ctx.bid.y, f0.ctx.bid.z);
  record(code, (head + what).c_str());
}

// Hooks a dialect may set (per process): called when a block (a cluster) starts and when the
// threads of a block are released from a block barrier (the race detector's interval ends there;
// `Worker::cur_cta` is that block).
inline void (*on_block_start)(Worker&) = nullptr;
inline void (*on_barrier)(Worker&) = nullptr;
// around each run of a fiber until it blocks (a slice), and when a wait of the block completes
inline void (*on_slice_start)(Worker&, Fiber&) = nullptr;
inline void (*on_slice_end)(Worker&, Fiber&) = nullptr;
inline void (*on_wait_done)(Worker&) = nullptr;

// Release the block barrier of block `c` (fibers [lo, hi)) if every live thread of it is there;
// true if released. A strict barrier reached by part of the block (the rest exited), or at
// different call sites, is recorded as a divergence (then `failed()`).
inline bool release_barrier(Worker& w, unsigned c, unsigned lo, unsigned hi) {
  unsigned at_barrier = 0, done = 0;
  for (unsigned i = lo; i < hi; ++i) {
    State s = w.fibers[i].state;
    if (s != kAtBarrier && s != kDone) return false;
    at_barrier += s == kAtBarrier;
    done += s == kDone;
  }
  if (!at_barrier) return false;
  if (w.cfg->strict_barriers) {
    if (done) {
      block_failure(w, kDivergence, "barrier divergence: __syncthreads() reached by " +
                    std::to_string(at_barrier) + " of the block's " + std::to_string(hi - lo) +
                    " threads, the others exited without reaching it: " +
                    describe_threads(w, [](const Fiber& f) { return f.state == kAtBarrier; },
                                     lo, hi) +
                    "; exited: " + describe_threads(w, [](const Fiber& f) {
                      return f.state == kDone; }, lo, hi), lo);
      return false;
    }
    for (unsigned i = lo; i < hi; ++i) {
      if (w.fibers[i].site == w.fibers[lo].site) continue;
      block_failure(w, kDivergence, "barrier divergence: the block's threads wait at "
                    "different __syncthreads() calls: " +
                    describe_threads(w, [](const Fiber& f) { return f.state == kAtBarrier; },
                                     lo, hi), lo);
      return false;
    }
  }
  enter_cta(w, c);
  if (on_barrier) on_barrier(w);
  for (unsigned i = lo; i < hi; ++i) w.fibers[i].state = kReady;
  return true;
}

// Run one cluster of blocks (one block without clusters): `bids` are its blocks, by rank.
inline void run_cluster(Worker& w, const std::vector<Dim3>& bids, const Dim3& bdim,
                        const Dim3& gdim, const Dim3& cdim) {
  const unsigned n = bdim.x * bdim.y * bdim.z;
  const unsigned nw = (n + kWarp - 1) / kWarp;
  const unsigned ncta = unsigned(bids.size());
  const unsigned total = n * ncta;
  w.nthreads = n;
  w.ncta = ncta;
  w.static_top = 0;
  w.static_slots.clear();
  enter_cta(w, 0);
  if (on_block_start) on_block_start(w);
  for (unsigned i = 0; i < total; ++i) {
    Fiber& f = w.fibers[i];
    ThreadCtx& c = f.ctx;
    const unsigned t = i % n, cta = i / n;
    c.tid = Dim3{t % bdim.x, (t / bdim.x) % bdim.y, t / (bdim.x * bdim.y)};
    c.bid = bids[cta];
    c.bdim = bdim;
    c.gdim = gdim;
    c.cdim = cdim;
    c.cta = cta;
    c.ncta = ncta;
    c.slot = i;
    c.linear = t;
    c.lane = t % kWarp;
    c.warp = t / kWarp;
    c.nwarps = nw;
    c.warp_slot = cta * nw + c.warp;
    f.wait_fn = nullptr;
    getcontext(&f.uc);
    f.uc.uc_stack.ss_sp = f.stack;
    f.uc.uc_stack.ss_size = w.cfg->stack_size;
    f.uc.uc_link = &w.sched;
    makecontext(&f.uc, fiber_main, 0);
    f.state = kReady;
  }
  for (;;) {
    for (unsigned i = 0; i < total; ++i) {
      Fiber& f = w.fibers[i];
      if (f.state != kReady) continue;
      w.cur = &f;
      enter_cta(w, f.ctx.cta);
      if (on_slice_start) on_slice_start(w, f);
      swapcontext(&w.sched, &f.uc);
      if (on_slice_end && !failed()) on_slice_end(w, f);
      w.cur = nullptr;
      if (failed()) return;
    }
    bool progress = false;
    for (unsigned i = 0; i < total; ++i) {
      Fiber& f = w.fibers[i];
      if (f.state != kWaiting) continue;
      enter_cta(w, f.ctx.cta);  // the predicate reads the waiting block's shared memory
      if (f.wait_fn(f.wait_arg)) {
        f.state = kReady;
        progress = true;
      }
    }
    if (progress) {
      if (on_wait_done) on_wait_done(w);
      continue;
    }
    for (unsigned s = 0; s < nw * ncta; ++s) {
      const unsigned cta = s / nw;
      unsigned lo = cta * n + (s % nw) * kWarp, hi = std::min(cta * n + n, lo + kWarp);
      int first = -1;
      for (unsigned i = lo; i < hi; ++i)
        if (w.fibers[i].state == kAtWarp) { first = int(i); break; }
      if (first < 0) continue;
      WarpSnap& snap = w.warps[s];
      snap.mask = 0;
      const unsigned site = w.fibers[first].site;
      for (unsigned i = lo; i < hi; ++i) {
        Fiber& f = w.fibers[i];
        if (f.state != kAtWarp || f.site != site) continue;
        std::memcpy(snap.released[i - lo], f.outbox, kSlot);
        snap.mask |= 1u << (i - lo);
        f.state = kReady;
      }
      progress = true;
    }
    if (progress) continue;
    for (unsigned c = 0; c < ncta; ++c) {
      progress |= release_barrier(w, c, c * n, c * n + n);
      if (failed()) return;
    }
    if (progress) continue;
    bool blocked = false;
    for (unsigned i = 0; i < total; ++i) {
      Fiber& f = w.fibers[i];
      if (f.state == kWaiting || f.state == kAtBarrier) blocked = true;
      if (f.state == kWaiting && f.wait_describe) {
        enter_cta(w, f.ctx.cta);
        f.wait_describe(f.wait_arg, f.wait_what, sizeof f.wait_what);
      }
    }
    if (!blocked) return;  // every fiber has returned
    block_failure(w, kDeadlock, std::string("deadlock: every thread of the ") +
                  (ncta == 1 ? "block" : w.cfg->cooperative ? "grid" : "cluster") + " is blocked and none can proceed: " +
                  describe_threads(w, [](const Fiber& f) {
                    return f.state == kWaiting || f.state == kAtBarrier; }));
    return;
  }
}

inline void run_block(Worker& w, const Dim3& bid, const Dim3& bdim, const Dim3& gdim) {
  run_cluster(w, std::vector<Dim3>{bid}, bdim, gdim, Dim3{});
}

// Run the grid; returns a Code and fills `err` with the first failure's message. With
// `cfg.cluster` other than 1x1x1, the grid (in blocks) must be a multiple of it, and each worker
// runs a cluster's blocks together.
inline int launch(KernelFn fn, void** args, const uint32_t* grid3, const uint32_t* block3,
                  const LaunchConfig& cfg, int n_workers, char* err, int errlen,
                  void (*init_worker)(Worker&) = nullptr, void (*fini_worker)(Worker&) = nullptr) {
  const Dim3 grid{grid3[0], grid3[1], grid3[2]};
  const Dim3 bdim{block3[0], block3[1], block3[2]};
  const Dim3 cdim = cfg.cluster;
  const uint64_t n = uint64_t(bdim.x) * bdim.y * bdim.z;
  const uint64_t csize = uint64_t(cdim.x) * cdim.y * cdim.z;
  failure().code = 0;
  failure().message[0] = 0;
  if (n == 0 || n > kMaxThreads) {
    std::snprintf(err, errlen, "threads per block must be 1..%u, got %llu", kMaxThreads,
                  (unsigned long long)n);
    return kError;
  }
  if (csize == 0 || csize > 16 || grid.x % cdim.x || grid.y % cdim.y || grid.z % cdim.z) {
    std::snprintf(err, errlen, "grid (%u, %u, %u) is not a multiple of the cluster shape "
                  "(%u, %u, %u) of 1 to 16 blocks", grid.x, grid.y, grid.z, cdim.x, cdim.y,
                  cdim.z);
    return kError;
  }
  const Dim3 cgrid{grid.x / cdim.x, grid.y / cdim.y, grid.z / cdim.z};
  const uint64_t nclusters = uint64_t(cgrid.x) * cgrid.y * cgrid.z;
  if (nclusters == 0) return kOk;
  // a group: one cluster, or (cooperative) every cluster of the grid
  const uint64_t per_group = cfg.cooperative ? nclusters : 1;
  const uint64_t ncta = csize * per_group;
  const uint64_t total = nclusters / per_group;
  if (n_workers < 1) n_workers = 1;
  if (uint64_t(n_workers) > total) n_workers = int(total);
  std::atomic<uint64_t> next{0};
  std::atomic<int> no_stack{0};
  auto work = [&]() {
    Worker w;
    w.fn = fn;
    w.args = args;
    w.cfg = &cfg;
    w.fibers.resize(n * ncta);
    w.warps.resize((n + kWarp - 1) / kWarp * ncta);
    std::vector<std::vector<unsigned char>> windows(ncta);
    for (auto& win : windows) {
      win.resize(cfg.shared_bytes + 64);
      unsigned char* p = win.data();
      w.cta_shared.push_back(p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64);
    }
    w.shared = w.cta_shared[0];
    w.shared_size = cfg.shared_bytes;
    for (auto& f : w.fibers) {
      void* p = mmap(nullptr, cfg.stack_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) {
        no_stack = 1;
        break;
      }
      f.stack = static_cast<char*>(p);
    }
    if (!no_stack) {
      tls_worker = &w;
      w.csize = unsigned(csize);
      if (init_worker) init_worker(w);
      std::vector<Dim3> bids(ncta);
      for (uint64_t t = next++; t < total && !failed(); t = next++) {
        for (uint64_t k = 0; k < per_group; ++k) {
          const uint64_t c = t * per_group + k;
          const Dim3 cid{uint32_t(c % cgrid.x), uint32_t((c / cgrid.x) % cgrid.y),
                         uint32_t(c / (uint64_t(cgrid.x) * cgrid.y))};
          for (uint32_t r = 0; r < csize; ++r)  // rank r: x fastest, as %cluster_ctarank
            bids[k * csize + r] = Dim3{cid.x * cdim.x + r % cdim.x,
                                       cid.y * cdim.y + (r / cdim.x) % cdim.y,
                                       cid.z * cdim.z + r / (cdim.x * cdim.y)};
        }
        run_cluster(w, bids, bdim, grid, cdim);
      }
      if (fini_worker) fini_worker(w);
      tls_worker = nullptr;
    }
    for (auto& f : w.fibers)
      if (f.stack) munmap(f.stack, cfg.stack_size);
  };
  if (n_workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < n_workers; ++k) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (int code = failure().code.load()) {
    std::snprintf(err, errlen, "%s", failure().message);
    return code;
  }
  if (no_stack) {
    std::snprintf(err, errlen, "could not allocate fiber stacks (%llu threads x %llu bytes)",
                  (unsigned long long)(n * ncta), (unsigned long long)cfg.stack_size);
    return kError;
  }
  return kOk;
}

}  // namespace tvm_emu
