// tvm_metal_shim.h: Metal Shading Language (compute subset) as C++17, for g++/clang++.
//
// Two uses, one header:
//   * syntax check (tvm_backend_metal.msl_check): `g++ -fsyntax-only` on an MSL kernel, so syntax
//     errors, undeclared names and type errors in MSL sources fail on Linux;
//   * CPU execution (tvm_backend_metal.emulator): the same declarations have real bodies, and the
//     tvm_metal_emu namespace runs a grid with threadgroups as cooperative fibers (ucontext),
//     threadgroup_barrier as a fiber rendezvous, and 32-lane SIMD groups as lane collectives.
//
// The Python side rewrites two things before the compiler sees the source (line numbers are
// kept): MSL attributes `[[name(args)]]` become `__msl_attr_name(args)` (unknown attribute names
// thus fail to compile), and threadgroup *storage* declarations get `__tvm_tg_storage` (a
// function-local static, per OS thread, shared by the fibers of the threadgroup running on it).
//
// It does not model address-space rules on pointers, MSL's exact overload sets, or GPU rounding of
// half arithmetic (half math is done in float and rounded).
#pragma once
#pragma GCC system_header  // the shim's own warnings are not the kernel's

#include <ucontext.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include "tvm_emu_fibers.h"  // core's fiber runtime (-I tvm/runtime/emu)

namespace tvm_metal_emu {
struct ThreadCtx;
inline unsigned current_lane();
template <class T>
T simd_collective_reduce(const T& v, int op, unsigned site);
}  // namespace tvm_metal_emu

namespace metal {

// ---------------------------------------------------------------------------------------------
// Scalar types
using half = _Float16;
using uint = unsigned int;
using ushort = unsigned short;
using uchar = unsigned char;
using ulong = unsigned long;
using size_t = std::size_t;
using ptrdiff_t = std::ptrdiff_t;

// bfloat: storage of a bfloat16, arithmetic in float with round-to-nearest-even.
struct bfloat {
  uint16_t bits;
  bfloat() = default;
  bfloat(float f) {  // NOLINT: MSL converts float to bfloat implicitly
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = uint16_t((u >> 16) | 0x40u);  // quiet NaN
    } else {
      bits = uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
  }
  template <class U, std::enable_if_t<std::is_arithmetic_v<U> && !std::is_same_v<U, float>, int> = 0>
  bfloat(U v) : bfloat(float(v)) {}  // NOLINT
  bfloat(half v) : bfloat(float(v)) {}  // NOLINT
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  bfloat operator-() const { return bfloat(-float(*this)); }
  bfloat operator+() const { return *this; }
  template <class U> bfloat& operator+=(U v) { return *this = bfloat(float(*this) + float(v)); }
  template <class U> bfloat& operator-=(U v) { return *this = bfloat(float(*this) - float(v)); }
  template <class U> bfloat& operator*=(U v) { return *this = bfloat(float(*this) * float(v)); }
  template <class U> bfloat& operator/=(U v) { return *this = bfloat(float(*this) / float(v)); }
};
// bfloat op bfloat and bfloat op integer stay bfloat; with float the result is float (usual
// arithmetic conversions in MSL).
#define TVM_BF_BINOP(op)                                                                  \
  inline bfloat operator op(bfloat a, bfloat b) { return bfloat(float(a) op float(b)); } \
  template <class U, std::enable_if_t<std::is_integral_v<U>, int> = 0>                   \
  inline bfloat operator op(bfloat a, U b) { return bfloat(float(a) op float(b)); }      \
  template <class U, std::enable_if_t<std::is_integral_v<U>, int> = 0>                   \
  inline bfloat operator op(U a, bfloat b) { return bfloat(float(a) op float(b)); }      \
  template <class U, std::enable_if_t<std::is_floating_point_v<U>, int> = 0>             \
  inline U operator op(bfloat a, U b) { return U(float(a)) op b; }                        \
  template <class U, std::enable_if_t<std::is_floating_point_v<U>, int> = 0>             \
  inline U operator op(U a, bfloat b) { return a op U(float(b)); }
TVM_BF_BINOP(+)
TVM_BF_BINOP(-)
TVM_BF_BINOP(*)
TVM_BF_BINOP(/)
#undef TVM_BF_BINOP

template <class X>
inline constexpr bool is_scalar_v =
    std::is_arithmetic_v<X> || std::is_same_v<X, half> || std::is_same_v<X, bfloat>;

// ---------------------------------------------------------------------------------------------
// Vectors: vec<T, N> with x/y/z/w, r/g/b/a, swizzles, component-wise operators.
template <class T, int N>
struct vec;
template <int N>
inline constexpr int vstore = N == 3 ? 4 : N;

template <int... I>
constexpr bool distinct_indices() {
  constexpr int idx[] = {I...};
  for (unsigned a = 0; a < sizeof...(I); ++a)
    for (unsigned b = a + 1; b < sizeof...(I); ++b)
      if (idx[a] == idx[b]) return false;
  return true;
}

template <class T, int N, int... I>
struct swz {
  T d[vstore<N>];
  static constexpr int K = sizeof...(I);
  using V = vec<T, K>;
  operator V() const {
    static_assert(((I < N) && ...), "swizzle component out of range for this vector size");
    V r;
    constexpr int idx[] = {I...};
    for (int k = 0; k < K; ++k) r.d[k] = d[idx[k]];
    return r;
  }
  template <class B>
  swz& operator=(const B& b) {
    static_assert(((I < N) && ...), "swizzle component out of range for this vector size");
    static_assert(distinct_indices<I...>(), "swizzle with repeated components is not assignable");
    V v(b);
    constexpr int idx[] = {I...};
    for (int k = 0; k < K; ++k) d[idx[k]] = v.d[k];
    return *this;
  }
  swz& operator=(const swz& o) { return operator=<V>(V(o)); }
};

template <class T, int N>
struct vec_storage;
template <class T>
struct alignas(sizeof(T) * 2) vec_storage<T, 2> {
  union {
    T d[2];
    struct { T x, y; };
    struct { T r, g; };
#define TVM_SWZ_N 2
#include "tvm_metal_swizzle.inc"
#undef TVM_SWZ_N
  };
};
template <class T>
struct alignas(sizeof(T) * 4) vec_storage<T, 3> {
  union {
    T d[4];
    struct { T x, y, z; };
    struct { T r, g, b; };
#define TVM_SWZ_N 3
#include "tvm_metal_swizzle.inc"
#undef TVM_SWZ_N
  };
};
template <class T>
struct alignas(sizeof(T) * 4) vec_storage<T, 4> {
  union {
    T d[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
#define TVM_SWZ_N 4
#include "tvm_metal_swizzle.inc"
#undef TVM_SWZ_N
  };
};

template <class X>
struct vtraits {
  static constexpr bool is_vec = false;
  static constexpr int n = 1;
  using elem = X;
};
template <class T, int N>
struct vtraits<vec<T, N>> {
  static constexpr bool is_vec = true;
  static constexpr int n = N;
  using elem = T;
};
template <class T, int N, int... I>
struct vtraits<swz<T, N, I...>> {
  static constexpr bool is_vec = true;
  static constexpr int n = sizeof...(I);
  using elem = T;
};
template <class T, int N>
struct packed_vec;
template <class T, int N>
struct vtraits<packed_vec<T, N>> {
  static constexpr bool is_vec = true;
  static constexpr int n = N;
  using elem = T;
};
template <class X>
inline constexpr bool is_vecish_v = vtraits<std::remove_cv_t<std::remove_reference_t<X>>>::is_vec;

// A vector-like argument as a vec (swizzles and packed vectors convert); scalars stay scalars.
template <class X>
auto tov(const X& x) {
  if constexpr (is_vecish_v<X>) {
    return vec<typename vtraits<X>::elem, vtraits<X>::n>(x);
  } else {
    return x;
  }
}

template <class X>
constexpr int ncomp() {
  if constexpr (is_vecish_v<X>) return vtraits<X>::n;
  else return 1;
}

template <class T, int N>
struct vec : vec_storage<T, N> {
  using value_type = T;
  static constexpr int size = N;

  vec() {
    for (int i = 0; i < N; ++i) this->d[i] = T();
  }
  vec(const vec& o) { std::memcpy((void*)this->d, (const void*)o.d, sizeof(this->d)); }
  vec& operator=(const vec& o) {
    std::memcpy((void*)this->d, (const void*)o.d, sizeof(this->d));
    return *this;
  }
  // MSL replicates a scalar into every component implicitly.
  template <class S, std::enable_if_t<is_scalar_v<S>, int> = 0>
  vec(S s) {  // NOLINT
    for (int i = 0; i < N; ++i) this->d[i] = T(s);
  }
  // Between element types a vector converts only explicitly, as in MSL.
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  explicit vec(const vec<U, N>& o) {
    for (int i = 0; i < N; ++i) this->d[i] = T(o.d[i]);
  }
  vec(const packed_vec<T, N>& p) {  // NOLINT
    for (int i = 0; i < N; ++i) this->d[i] = p.d[i];
  }
  // float4(a.xy, 0, 1): components are flattened in order.
  template <class A0, class A1, class... A,
            std::enable_if_t<(ncomp<A0>() + ncomp<A1>() + (0 + ... + ncomp<A>())) == N, int> = 0>
  vec(const A0& a0, const A1& a1, const A&... a) {
    int k = 0;
    put(k, a0);
    put(k, a1);
    (put(k, a), ...);
  }
  T& operator[](int i) { return this->d[i]; }
  const T& operator[](int i) const { return this->d[i]; }

  template <class B> vec& operator+=(const B& b);
  template <class B> vec& operator-=(const B& b);
  template <class B> vec& operator*=(const B& b);
  template <class B> vec& operator/=(const B& b);
  template <class B> vec& operator%=(const B& b);
  template <class B> vec& operator&=(const B& b);
  template <class B> vec& operator|=(const B& b);
  template <class B> vec& operator^=(const B& b);
  template <class B> vec& operator<<=(const B& b);
  template <class B> vec& operator>>=(const B& b);

 private:
  template <class X>
  void put(int& k, const X& x) {
    if constexpr (is_vecish_v<X>) {
      auto v = tov(x);
      for (int i = 0; i < ncomp<X>(); ++i) this->d[k++] = T(v.d[i]);
    } else {
      static_assert(is_scalar_v<X>, "vector constructor argument must be a scalar or a vector");
      this->d[k++] = T(x);
    }
  }
};

template <class A, class B>
inline constexpr bool vop_ok_v =
    (is_vecish_v<A> || is_vecish_v<B>) && (is_vecish_v<A> || is_scalar_v<A>) &&
    (is_vecish_v<B> || is_scalar_v<B>);

template <class A, class B>
struct vop_types {
  static_assert(!(is_vecish_v<A> && is_vecish_v<B>) ||
                    std::is_same_v<typename vtraits<A>::elem, typename vtraits<B>::elem>,
                "vector operands have different element types; convert one explicitly");
  static_assert(!(is_vecish_v<A> && is_vecish_v<B>) || vtraits<A>::n == vtraits<B>::n,
                "vector operands have different sizes");
  using elem = std::conditional_t<is_vecish_v<A>, typename vtraits<A>::elem, typename vtraits<B>::elem>;
  static constexpr int n = is_vecish_v<A> ? vtraits<A>::n : vtraits<B>::n;
};

template <class X>
auto vget(const X& x, int i) {
  if constexpr (vtraits<X>::is_vec) return x.d[i];
  else return x;
}

#define TVM_VBINOP(op)                                                       \
  template <class A, class B, std::enable_if_t<vop_ok_v<A, B>, int> = 0>     \
  auto operator op(const A& a, const B& b) {                                 \
    using VT = vop_types<A, B>;                                              \
    using T = typename VT::elem;                                             \
    auto va = tov(a);                                                        \
    auto vb = tov(b);                                                        \
    vec<T, VT::n> r;                                                         \
    for (int i = 0; i < VT::n; ++i) r.d[i] = T(vget(va, i) op vget(vb, i));  \
    return r;                                                                \
  }                                                                          \
  template <class T, int N>                                                  \
  template <class B>                                                         \
  vec<T, N>& vec<T, N>::operator op##=(const B& b) {                         \
    return *this = vec<T, N>(*this op b);                                    \
  }
TVM_VBINOP(+)
TVM_VBINOP(-)
TVM_VBINOP(*)
TVM_VBINOP(/)
TVM_VBINOP(%)
TVM_VBINOP(&)
TVM_VBINOP(|)
TVM_VBINOP(^)
TVM_VBINOP(<<)
TVM_VBINOP(>>)
#undef TVM_VBINOP

#define TVM_VCMPOP(op)                                                          \
  template <class A, class B, std::enable_if_t<vop_ok_v<A, B>, int> = 0>        \
  auto operator op(const A& a, const B& b) {                                    \
    using VT = vop_types<A, B>;                                                 \
    auto va = tov(a);                                                           \
    auto vb = tov(b);                                                           \
    vec<bool, VT::n> r;                                                         \
    for (int i = 0; i < VT::n; ++i) r.d[i] = bool(vget(va, i) op vget(vb, i));  \
    return r;                                                                   \
  }
TVM_VCMPOP(==)
TVM_VCMPOP(!=)
TVM_VCMPOP(<)
TVM_VCMPOP(<=)
TVM_VCMPOP(>)
TVM_VCMPOP(>=)
TVM_VCMPOP(&&)
TVM_VCMPOP(||)
#undef TVM_VCMPOP

#define TVM_VUNOP(op, R)                                                  \
  template <class A, std::enable_if_t<is_vecish_v<A>, int> = 0>           \
  auto operator op(const A& a) {                                          \
    using T = typename vtraits<A>::elem;                                  \
    auto va = tov(a);                                                     \
    vec<R, vtraits<A>::n> r;                                              \
    for (int i = 0; i < vtraits<A>::n; ++i) r.d[i] = R(op va.d[i]);       \
    return r;                                                             \
  }
TVM_VUNOP(-, T)
TVM_VUNOP(+, T)
TVM_VUNOP(~, T)
TVM_VUNOP(!, bool)
#undef TVM_VUNOP

// Packed vectors: N tightly packed components (packed_float3 is 12 bytes), for buffers.
template <class T, int N>
struct packed_vec {
  union {
    T d[N];
    struct { T x, y; };
  };
  packed_vec() = default;
  packed_vec(const vec<T, N>& v) {  // NOLINT
    for (int i = 0; i < N; ++i) d[i] = v.d[i];
  }
  T& operator[](int i) { return d[i]; }
  const T& operator[](int i) const { return d[i]; }
  T& zc() { return d[2]; }
};
template <class T>
struct packed_vec<T, 3> {
  union {
    T d[3];
    struct { T x, y, z; };
  };
  packed_vec() = default;
  packed_vec(const vec<T, 3>& v) : d{v.d[0], v.d[1], v.d[2]} {}  // NOLINT
  T& operator[](int i) { return d[i]; }
  const T& operator[](int i) const { return d[i]; }
};
template <class T>
struct packed_vec<T, 4> {
  union {
    T d[4];
    struct { T x, y, z, w; };
  };
  packed_vec() = default;
  packed_vec(const vec<T, 4>& v) : d{v.d[0], v.d[1], v.d[2], v.d[3]} {}  // NOLINT
  T& operator[](int i) { return d[i]; }
  const T& operator[](int i) const { return d[i]; }
};

#define TVM_VEC_TYPES(T, name)             \
  using name##2 = vec<T, 2>;               \
  using name##3 = vec<T, 3>;               \
  using name##4 = vec<T, 4>;               \
  using packed_##name##2 = packed_vec<T, 2>; \
  using packed_##name##3 = packed_vec<T, 3>; \
  using packed_##name##4 = packed_vec<T, 4>;
TVM_VEC_TYPES(float, float)
TVM_VEC_TYPES(half, half)
TVM_VEC_TYPES(bfloat, bfloat)
TVM_VEC_TYPES(int, int)
TVM_VEC_TYPES(uint, uint)
TVM_VEC_TYPES(short, short)
TVM_VEC_TYPES(ushort, ushort)
TVM_VEC_TYPES(char, char)
TVM_VEC_TYPES(uchar, uchar)
TVM_VEC_TYPES(long, long)
TVM_VEC_TYPES(ulong, ulong)
TVM_VEC_TYPES(bool, bool)
#undef TVM_VEC_TYPES

// Column-major matrices (float4x4 ...), the minimum a compute kernel uses.
template <class T, int C, int R>
struct matrix {
  vec<T, R> columns[C];
  vec<T, R>& operator[](int c) { return columns[c]; }
  const vec<T, R>& operator[](int c) const { return columns[c]; }
};
template <class T, int C, int R>
vec<T, R> operator*(const matrix<T, C, R>& m, const vec<T, C>& v) {
  vec<T, R> r(T(0));
  for (int c = 0; c < C; ++c) r = r + m.columns[c] * v.d[c];
  return r;
}
#define TVM_MAT_TYPES(T, name)                                                        \
  using name##2x2 = matrix<T, 2, 2>; using name##2x3 = matrix<T, 2, 3>;               \
  using name##2x4 = matrix<T, 2, 4>; using name##3x2 = matrix<T, 3, 2>;               \
  using name##3x3 = matrix<T, 3, 3>; using name##3x4 = matrix<T, 3, 4>;               \
  using name##4x2 = matrix<T, 4, 2>; using name##4x3 = matrix<T, 4, 3>;               \
  using name##4x4 = matrix<T, 4, 4>;
TVM_MAT_TYPES(float, float)
TVM_MAT_TYPES(half, half)
#undef TVM_MAT_TYPES

// ---------------------------------------------------------------------------------------------
// Bit casts, conversions, limits
template <class To, class From>
To as_type(const From& x) {
  static_assert(sizeof(To) == sizeof(From), "as_type<T>(x) needs types of the same size");
  To r;
  std::memcpy((void*)&r, (const void*)&x, sizeof(To));
  return r;
}

template <class T>
struct numeric_limits : std::numeric_limits<T> {};
template <>
struct numeric_limits<half> {
  static constexpr bool is_specialized = true;
  static half max() { return half(65504.0f); }
  static half min() { return half(6.103515625e-05f); }
  static half lowest() { return half(-65504.0f); }
  static half epsilon() { return half(0.0009765625f); }
  static half infinity() { return half(INFINITY); }
  static half quiet_NaN() { return half(NAN); }
};
template <>
struct numeric_limits<bfloat> {
  static constexpr bool is_specialized = true;
  static bfloat max() { return bfloat(3.38953139e38f); }
  static bfloat lowest() { return bfloat(-3.38953139e38f); }
  static bfloat infinity() { return bfloat(INFINITY); }
  static bfloat quiet_NaN() { return bfloat(NAN); }
};

// ---------------------------------------------------------------------------------------------
// Math. Scalars float/half/bfloat (half and bfloat computed in float), vectors component-wise.
template <class F, class A>
auto vmap(const A& a, F f) {
  auto va = tov(a);
  using T = typename vtraits<A>::elem;
  vec<T, vtraits<A>::n> r;
  for (int i = 0; i < vtraits<A>::n; ++i) r.d[i] = T(f(va.d[i]));
  return r;
}

#define TVM_MATH1(name, expr)                                                    \
  inline float name(float x) { return expr; }                                    \
  inline half name(half x) { return half(name(float(x))); }                      \
  inline bfloat name(bfloat x) { return bfloat(name(float(x))); }                \
  template <class A, std::enable_if_t<is_vecish_v<A>, int> = 0>                  \
  auto name(const A& a) {                                                        \
    return vmap(a, [](auto v) { return name(v); });                              \
  }
#define TVM_MATH1_SET           \
  TVM_MATH1(exp, std::exp(x))     \
  TVM_MATH1(exp2, std::exp2(x))   \
  TVM_MATH1(exp10, std::pow(10.0f, x)) \
  TVM_MATH1(log, std::log(x))     \
  TVM_MATH1(log2, std::log2(x))   \
  TVM_MATH1(log10, std::log10(x)) \
  TVM_MATH1(sqrt, std::sqrt(x))   \
  TVM_MATH1(rsqrt, 1.0f / std::sqrt(x)) \
  TVM_MATH1(sin, std::sin(x))     \
  TVM_MATH1(cos, std::cos(x))     \
  TVM_MATH1(tan, std::tan(x))     \
  TVM_MATH1(asin, std::asin(x))   \
  TVM_MATH1(acos, std::acos(x))   \
  TVM_MATH1(atan, std::atan(x))   \
  TVM_MATH1(sinh, std::sinh(x))   \
  TVM_MATH1(cosh, std::cosh(x))   \
  TVM_MATH1(tanh, std::tanh(x))   \
  TVM_MATH1(asinh, std::asinh(x)) \
  TVM_MATH1(acosh, std::acosh(x)) \
  TVM_MATH1(atanh, std::atanh(x)) \
  TVM_MATH1(floor, std::floor(x)) \
  TVM_MATH1(ceil, std::ceil(x))   \
  TVM_MATH1(round, std::round(x)) \
  TVM_MATH1(rint, std::nearbyint(x)) \
  TVM_MATH1(trunc, std::trunc(x)) \
  TVM_MATH1(fract, x - std::floor(x)) \
  TVM_MATH1(fabs, std::fabs(x))   \
  TVM_MATH1(saturate, std::fmin(std::fmax(x, 0.0f), 1.0f)) \
  TVM_MATH1(sign, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f))

TVM_MATH1_SET

// the component-wise vector (or vector and scalar) form of a two-argument scalar function
#define TVM_VMATH2(name)                                                                     \
  template <class A, class B, std::enable_if_t<vop_ok_v<A, B>, int> = 0>                     \
  auto name(const A& a, const B& b) {                                                        \
    using VT = vop_types<A, B>;                                                              \
    using T = typename VT::elem;                                                             \
    auto va = tov(a);                                                                        \
    auto vb = tov(b);                                                                        \
    vec<T, VT::n> r;                                                                         \
    for (int i = 0; i < VT::n; ++i) r.d[i] = T(name(T(vget(va, i)), T(vget(vb, i))));       \
    return r;                                                                                \
  }
#define TVM_MATH2(name, expr)                                                                \
  inline float name(float x, float y) { return expr; }                                       \
  inline half name(half x, half y) { return half(name(float(x), float(y))); }                \
  inline bfloat name(bfloat x, bfloat y) { return bfloat(name(float(x), float(y))); }        \
  TVM_VMATH2(name)
#define TVM_MATH2_SET                       \
  TVM_MATH2(pow, std::pow(x, y))            \
  TVM_MATH2(powr, std::pow(x, y))           \
  TVM_MATH2(fmod, std::fmod(x, y))          \
  TVM_MATH2(atan2, std::atan2(x, y))        \
  TVM_MATH2(copysign, std::copysign(x, y))  \
  TVM_MATH2(fmax, std::fmax(x, y))          \
  TVM_MATH2(fmin, std::fmin(x, y))          \
  TVM_MATH2(fdim, std::fdim(x, y))          \
  TVM_MATH2(step, x < y ? 1.0f : 0.0f)

TVM_MATH2_SET

#define TVM_MATH3(name, expr)                                                             \
  inline float name(float x, float y, float z) { return expr; }                           \
  inline half name(half x, half y, half z) {                                              \
    return half(name(float(x), float(y), float(z)));                                      \
  }                                                                                       \
  inline bfloat name(bfloat x, bfloat y, bfloat z) {                                      \
    return bfloat(name(float(x), float(y), float(z)));                                    \
  }                                                                                       \
  template <class T, int N>                                                               \
  vec<T, N> name(const vec<T, N>& x, const vec<T, N>& y, const vec<T, N>& z) {            \
    vec<T, N> r;                                                                          \
    for (int i = 0; i < N; ++i) r.d[i] = T(name(x.d[i], y.d[i], z.d[i]));                \
    return r;                                                                             \
  }
#define TVM_MATH3_SET                                \
  TVM_MATH3(fma, std::fma(x, y, z))                  \
  TVM_MATH3(mad, x * y + z)                          \
  TVM_MATH3(mix, x + (y - x) * z)                    \
  TVM_MATH3(smoothstep, (z <= x) ? 0.0f : (z >= y) ? 1.0f : (z - x) / (y - x) * (z - x) / (y - x) * (3.0f - 2.0f * (z - x) / (y - x)))

TVM_MATH3_SET

// precise:: and fast:: have the same functions; the emulator computes both precisely.
namespace precise {
TVM_MATH1_SET
TVM_MATH2_SET
TVM_MATH3_SET
}  // namespace precise
namespace fast {
TVM_MATH1_SET
TVM_MATH2_SET
TVM_MATH3_SET
}  // namespace fast

// min/max/clamp/abs for every scalar type, vectors component-wise.
#define TVM_MINMAX(T)                                                       \
  inline T min(T a, T b) { return b < a ? b : a; }                          \
  inline T max(T a, T b) { return a < b ? b : a; }                          \
  inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
TVM_MINMAX(float)
TVM_MINMAX(half)
TVM_MINMAX(bfloat)
TVM_MINMAX(int)
TVM_MINMAX(uint)
TVM_MINMAX(short)
TVM_MINMAX(ushort)
TVM_MINMAX(char)
TVM_MINMAX(uchar)
TVM_MINMAX(long)
TVM_MINMAX(ulong)
#undef TVM_MINMAX
TVM_VMATH2(min)
TVM_VMATH2(max)
template <class T, int N, class L, class H>
vec<T, N> clamp(const vec<T, N>& x, const L& lo, const H& hi) {
  return min(max(x, lo), hi);
}
inline int abs(int x) { return x < 0 ? -x : x; }
inline long abs(long x) { return x < 0 ? -x : x; }
inline short abs(short x) { return short(x < 0 ? -x : x); }
inline char abs(char x) { return char(x < 0 ? -x : x); }
inline float abs(float x) { return std::fabs(x); }
inline half abs(half x) { return x < half(0) ? half(-x) : x; }
inline bfloat abs(bfloat x) { return bfloat(std::fabs(float(x))); }
template <class A, std::enable_if_t<is_vecish_v<A>, int> = 0>
auto abs(const A& a) {
  return vmap(a, [](auto v) { return abs(v); });
}

template <class T>
T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class T, int N>
vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, const vec<bool, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r.d[i] = c.d[i] ? b.d[i] : a.d[i];
  return r;
}
template <int N>
bool all(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (!v.d[i]) return false;
  return true;
}
template <int N>
bool any(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (v.d[i]) return true;
  return false;
}
inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }
inline bool isnan(float x) { return std::isnan(x); }
inline bool isnan(half x) { return std::isnan(float(x)); }
inline bool isinf(float x) { return std::isinf(x); }
inline bool isinf(half x) { return std::isinf(float(x)); }
inline bool isfinite(float x) { return std::isfinite(x); }
inline bool isfinite(half x) { return std::isfinite(float(x)); }
inline bool signbit(float x) { return std::signbit(x); }
template <class T, int N>
T dot(const vec<T, N>& a, const vec<T, N>& b) {
  T s = T(0);
  for (int i = 0; i < N; ++i) s = T(s + a.d[i] * b.d[i]);
  return s;
}
template <class T, int N>
T length(const vec<T, N>& a) {
  return T(std::sqrt(float(dot(a, a))));
}
template <class T, int N>
vec<T, N> normalize(const vec<T, N>& a) {
  return a * T(1.0f / float(length(a)));
}
inline uint popcount(uint x) { return uint(__builtin_popcount(x)); }
inline uint clz(uint x) { return x ? uint(__builtin_clz(x)) : 32u; }
inline uint ctz(uint x) { return x ? uint(__builtin_ctz(x)) : 32u; }
inline uint mulhi(uint a, uint b) { return uint((uint64_t(a) * b) >> 32); }
inline int mulhi(int a, int b) { return int((int64_t(a) * b) >> 32); }

// ---------------------------------------------------------------------------------------------
// Synchronisation
enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
inline mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(unsigned(a) | unsigned(b)); }
inline void threadgroup_barrier(mem_flags flags = mem_flags::mem_none);
inline void simdgroup_barrier(mem_flags flags = mem_flags::mem_none,
                              unsigned site_ = __builtin_LINE());

// Atomics: device/threadgroup atomic_int/uint/float/bool with *_explicit functions.
enum memory_order { memory_order_relaxed, memory_order_acquire, memory_order_release,
                    memory_order_acq_rel, memory_order_seq_cst };
template <class T>
struct atomic {
  T v;
};
using atomic_int = atomic<int>;
using atomic_uint = atomic<uint>;
using atomic_float = atomic<float>;
using atomic_bool = atomic<bool>;
using atomic_ulong = atomic<ulong>;
template <class T>
using atomic_value_t = std::common_type_t<T>;  // a non-deduced context

template <class T>
T atomic_load_explicit(const volatile atomic<T>* o, memory_order) {
  T r;
  __atomic_load(const_cast<T*>(&o->v), &r, __ATOMIC_SEQ_CST);
  return r;
}
template <class T>
void atomic_store_explicit(volatile atomic<T>* o, atomic_value_t<T> v, memory_order) {
  __atomic_store(const_cast<T*>(&o->v), &v, __ATOMIC_SEQ_CST);
}
template <class T>
T atomic_exchange_explicit(volatile atomic<T>* o, atomic_value_t<T> v, memory_order) {
  T r;
  __atomic_exchange(const_cast<T*>(&o->v), &v, &r, __ATOMIC_SEQ_CST);
  return r;
}
template <class T>
bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* o, T* expected,
                                           atomic_value_t<T> desired, memory_order,
                                           memory_order) {
  return __atomic_compare_exchange(const_cast<T*>(&o->v), expected, &desired, false,
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
// Read-modify-write through a compare-exchange loop: works for float as for integers.
template <class T, class F>
T atomic_rmw(volatile atomic<T>* o, F f) {
  T* p = const_cast<T*>(&o->v);
  T old;
  __atomic_load(p, &old, __ATOMIC_SEQ_CST);
  T desired;
  do {
    desired = f(old);
  } while (!__atomic_compare_exchange(p, &old, &desired, true, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST));
  return old;
}
#define TVM_ATOMIC_RMW(name, expr)                                                     \
  template <class T>                                                                   \
  T atomic_fetch_##name##_explicit(volatile atomic<T>* o, atomic_value_t<T> v,         \
                                   memory_order) {                                     \
    return atomic_rmw(o, [v](T x) { return T(expr); });                                \
  }
TVM_ATOMIC_RMW(add, x + v)
TVM_ATOMIC_RMW(sub, x - v)
TVM_ATOMIC_RMW(max, x < v ? v : x)
TVM_ATOMIC_RMW(min, v < x ? v : x)
TVM_ATOMIC_RMW(and, x & v)
TVM_ATOMIC_RMW(or, x | v)
TVM_ATOMIC_RMW(xor, x ^ v)
#undef TVM_ATOMIC_RMW

// ---------------------------------------------------------------------------------------------
// SIMD-group functions: collectives over the active lanes of the calling SIMD group.
enum simd_op_kind : int {
  simd_op_sum, simd_op_product, simd_op_max, simd_op_min, simd_op_and, simd_op_or,
  simd_op_xor, simd_op_shuffle, simd_op_shuffle_up, simd_op_shuffle_down, simd_op_shuffle_xor,
  simd_op_prefix_incl_sum, simd_op_prefix_excl_sum, simd_op_prefix_incl_product,
  simd_op_prefix_excl_product, simd_op_all, simd_op_any, simd_op_is_first, simd_op_ballot,
  simd_op_shuffle_rotate_down, simd_op_shuffle_rotate_up,
};
}  // namespace metal

namespace tvm_metal_emu {
template <class T>
T simd_collective(const T& v, int op, unsigned arg, unsigned site);
}

namespace metal {
#define TVM_SIMD_REDUCE(name, op)                                                  \
  template <class T>                                                               \
  T name(T v, unsigned site_ = __builtin_LINE()) {                                 \
    return tvm_metal_emu::simd_collective<T>(v, op, 0, site_);                     \
  }
TVM_SIMD_REDUCE(simd_sum, simd_op_sum)
TVM_SIMD_REDUCE(simd_product, simd_op_product)
TVM_SIMD_REDUCE(simd_max, simd_op_max)
TVM_SIMD_REDUCE(simd_min, simd_op_min)
TVM_SIMD_REDUCE(simd_and, simd_op_and)
TVM_SIMD_REDUCE(simd_or, simd_op_or)
TVM_SIMD_REDUCE(simd_xor, simd_op_xor)
TVM_SIMD_REDUCE(simd_prefix_inclusive_sum, simd_op_prefix_incl_sum)
TVM_SIMD_REDUCE(simd_prefix_exclusive_sum, simd_op_prefix_excl_sum)
TVM_SIMD_REDUCE(simd_prefix_inclusive_product, simd_op_prefix_incl_product)
TVM_SIMD_REDUCE(simd_prefix_exclusive_product, simd_op_prefix_excl_product)
#undef TVM_SIMD_REDUCE
#define TVM_SIMD_SHUFFLE(name, op)                                                 \
  template <class T>                                                               \
  T name(T v, ushort arg, unsigned site_ = __builtin_LINE()) {                     \
    return tvm_metal_emu::simd_collective<T>(v, op, arg, site_);                   \
  }
TVM_SIMD_SHUFFLE(simd_shuffle, simd_op_shuffle)
TVM_SIMD_SHUFFLE(simd_broadcast, simd_op_shuffle)
TVM_SIMD_SHUFFLE(simd_shuffle_up, simd_op_shuffle_up)
TVM_SIMD_SHUFFLE(simd_shuffle_down, simd_op_shuffle_down)
TVM_SIMD_SHUFFLE(simd_shuffle_xor, simd_op_shuffle_xor)
TVM_SIMD_SHUFFLE(simd_shuffle_rotate_down, simd_op_shuffle_rotate_down)
TVM_SIMD_SHUFFLE(simd_shuffle_rotate_up, simd_op_shuffle_rotate_up)
#undef TVM_SIMD_SHUFFLE
template <class T>
T simd_broadcast_first(T v, unsigned site_ = __builtin_LINE()) {
  return tvm_metal_emu::simd_collective<T>(v, simd_op_shuffle, 0xffffu, site_);
}
inline bool simd_all(bool v, unsigned site_ = __builtin_LINE()) {
  return tvm_metal_emu::simd_collective<bool>(v, simd_op_all, 0, site_);
}
inline bool simd_any(bool v, unsigned site_ = __builtin_LINE()) {
  return tvm_metal_emu::simd_collective<bool>(v, simd_op_any, 0, site_);
}
inline bool simd_is_first(unsigned site_ = __builtin_LINE()) {
  return tvm_metal_emu::simd_collective<bool>(true, simd_op_is_first, 0, site_);
}
struct simd_vote {
  uint64_t bits;
  explicit operator uint64_t() const { return bits; }
  bool all() const { return bits == 0xffffffffu; }
  bool any() const { return bits != 0; }
};
inline simd_vote simd_ballot(bool v, unsigned site_ = __builtin_LINE()) {
  return simd_vote{tvm_metal_emu::simd_collective<uint64_t>(v ? 1 : 0, simd_op_ballot, 0, site_)};
}

// ---------------------------------------------------------------------------------------------
// SIMD-group matrices (8x8 only, as on Apple GPUs). Every lane keeps a full copy; the lane's own
// two elements (the thread_elements() of Apple's layout) are authoritative, so that kernels that
// write thread_elements() directly work: multiply-accumulate gathers those from all lanes first.
inline void simdgroup_coord(unsigned lane, int& row, int& col) {
  unsigned qid = lane / 4;
  row = int((qid & 4) + ((lane / 2) % 4));
  col = int((qid & 2) * 2 + (lane % 2) * 2);
}
template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "only 8x8 simdgroup matrices are supported");
  alignas(16) T e[64];
  simdgroup_matrix() = default;
  // MSL: a diagonal matrix with the given value.
  explicit simdgroup_matrix(T diag) {
    for (int i = 0; i < 64; ++i) e[i] = (i / 8 == i % 8) ? diag : T(0);
  }
  vec<T, 2>& thread_elements() {
    int r, c;
    simdgroup_coord(tvm_metal_emu::current_lane(), r, c);
    return *reinterpret_cast<vec<T, 2>*>(&e[r * 8 + c]);
  }
  const vec<T, 2>& thread_elements() const {
    int r, c;
    simdgroup_coord(tvm_metal_emu::current_lane(), r, c);
    return *reinterpret_cast<const vec<T, 2>*>(&e[r * 8 + c]);
  }
};
using simdgroup_float8x8 = simdgroup_matrix<float, 8, 8>;
using simdgroup_half8x8 = simdgroup_matrix<half, 8, 8>;
using simdgroup_bfloat8x8 = simdgroup_matrix<bfloat, 8, 8>;

template <class T, int C, int R>
simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, C, R> m;
  for (int i = 0; i < 64; ++i) m.e[i] = value;
  return m;
}
template <class T, int C, int R>
void simdgroup_load(simdgroup_matrix<T, C, R>& d, const T* src, ulong elements_per_row = C,
                    vec<ulong, 2> matrix_origin = vec<ulong, 2>(0), bool transpose_matrix = false) {
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      ulong sr = transpose_matrix ? matrix_origin.y + c : matrix_origin.y + r;
      ulong sc = transpose_matrix ? matrix_origin.x + r : matrix_origin.x + c;
      d.e[r * 8 + c] = src[sr * elements_per_row + sc];
    }
}
template <class T, int C, int R>
void simdgroup_store(const simdgroup_matrix<T, C, R>& a, T* dst, ulong elements_per_row = C,
                     vec<ulong, 2> matrix_origin = vec<ulong, 2>(0),
                     bool transpose_matrix = false) {
  // Each lane writes its own two elements, so the 32 lanes together write the whole tile.
  int r, c0;
  simdgroup_coord(tvm_metal_emu::current_lane(), r, c0);
  for (int c = c0; c < c0 + 2; ++c) {
    ulong dr = transpose_matrix ? matrix_origin.y + c : matrix_origin.y + r;
    ulong dc = transpose_matrix ? matrix_origin.x + r : matrix_origin.x + c;
    dst[dr * elements_per_row + dc] = a.e[r * 8 + c];
  }
}
}  // namespace metal

namespace tvm_metal_emu {
template <class T, int C, int R>
metal::simdgroup_matrix<T, C, R> simdgroup_gather(const metal::simdgroup_matrix<T, C, R>& m,
                                                  unsigned site);
}

namespace metal {
template <class TD, class TA, class TB, class TC>
void simdgroup_multiply_accumulate(simdgroup_matrix<TD, 8, 8>& d,
                                   const simdgroup_matrix<TA, 8, 8>& a,
                                   const simdgroup_matrix<TB, 8, 8>& b,
                                   const simdgroup_matrix<TC, 8, 8>& c,
                                   unsigned site_ = __builtin_LINE()) {
  auto fa = tvm_metal_emu::simdgroup_gather(a, site_);
  auto fb = tvm_metal_emu::simdgroup_gather(b, site_);
  auto fc = tvm_metal_emu::simdgroup_gather(c, site_);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      float acc = float(fc.e[i * 8 + j]);
      for (int k = 0; k < 8; ++k) acc += float(fa.e[i * 8 + k]) * float(fb.e[k * 8 + j]);
      d.e[i * 8 + j] = TD(acc);
    }
}
template <class TD, class TA, class TB>
void simdgroup_multiply(simdgroup_matrix<TD, 8, 8>& d, const simdgroup_matrix<TA, 8, 8>& a,
                        const simdgroup_matrix<TB, 8, 8>& b, unsigned site_ = __builtin_LINE()) {
  simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<TD, 8, 8>(TD(0)), site_);
}
}  // namespace metal

// =============================================================================================
// Execution model (the emulator): core's fiber runtime (tvm/runtime/emu/tvm_emu_fibers.h), shared
// with the CUDA emulator. A threadgroup is a block, each of its threads a fiber; SIMD groups are
// its 32-lane warps. Metal keeps the lenient barrier rule: a threadgroup_barrier releases once
// every live thread has reached a barrier (threads that returned no longer count, as exited GPU
// threads). A SIMD-group function is a warp collective of the runtime: each participant computes
// its result from the snapshot of the lanes released together (the active lanes).
namespace tvm_metal_emu {
using metal::uint;
using metal::uint3;

constexpr int kSimdWidth = tvm_emu::kWarp;
constexpr int kSlot = tvm_emu::kSlot;
constexpr unsigned kMaxThreads = tvm_emu::kMaxThreads;

// The Metal view of a thread (what [[attribute]] parameters read).
struct ThreadCtx {
  uint3 thread_position_in_grid, thread_position_in_threadgroup, threadgroup_position_in_grid,
      threads_per_threadgroup, threadgroups_per_grid, threads_per_grid;
  uint thread_index_in_threadgroup, thread_index_in_simdgroup, simdgroup_index_in_threadgroup,
      simdgroups_per_threadgroup, threads_per_simdgroup;
  void** tgmem;
};

inline uint3 as_uint3(const tvm_emu::Dim3& d) { return uint3(d.x, d.y, d.z); }

// Threadgroup memory of [[threadgroup(k)]] parameters, per worker.
struct TgMem {
  std::vector<std::vector<unsigned char>> blocks;
  std::vector<void*> ptrs;
};

inline ThreadCtx metal_ctx(const tvm_emu::ThreadCtx& c, void** tgmem) {
  ThreadCtx m;
  m.thread_position_in_threadgroup = as_uint3(c.tid);
  m.threadgroup_position_in_grid = as_uint3(c.bid);
  m.threads_per_threadgroup = as_uint3(c.bdim);
  m.threadgroups_per_grid = as_uint3(c.gdim);
  m.threads_per_grid = m.threadgroups_per_grid * m.threads_per_threadgroup;
  m.thread_position_in_grid =
      m.threadgroup_position_in_grid * m.threads_per_threadgroup + m.thread_position_in_threadgroup;
  m.thread_index_in_threadgroup = c.linear;
  m.thread_index_in_simdgroup = c.lane;
  m.simdgroup_index_in_threadgroup = c.warp;
  m.simdgroups_per_threadgroup = c.nwarps;
  m.threads_per_simdgroup = kSimdWidth;
  m.tgmem = tgmem;
  return m;
}

// Run-time bounds checks of generated kernels (tvm's bounds_check=True): the first failing
// check's message; the launch stops and returns it as an error.
inline void report_bounds_failure(const char* message) {
  tvm_emu::record(tvm_emu::kBounds, message);
}

inline unsigned current_lane() {
  tvm_emu::Fiber* f = tvm_emu::current();
  return f ? f->ctx.lane : 0u;
}

// Lane collective: returns this lane's result; `snap` holds the participants' values.
template <class T>
T combine(const T& own, int op, unsigned arg, unsigned lane, uint32_t mask,
          const unsigned char (*snap)[kSlot]) {
  auto val = [&](unsigned l) {
    T v;
    std::memcpy((void*)&v, snap[l], sizeof(T));
    return v;
  };
  auto active = [&](unsigned l) { return l < (unsigned)kSimdWidth && ((mask >> l) & 1u); };
  auto fold = [&](unsigned hi, bool inclusive, auto f, T init) {
    T acc = init;
    bool first = true;
    for (unsigned l = 0; l < hi + (inclusive ? 1 : 0); ++l) {
      if (!active(l)) continue;
      acc = first ? val(l) : f(acc, val(l));
      first = false;
    }
    return acc;
  };
  auto add = [](T a, T b) { return T(a + b); };
  auto mul = [](T a, T b) { return T(a * b); };
  switch (op) {
    case metal::simd_op_sum: return fold(kSimdWidth - 1, true, add, T(0));
    case metal::simd_op_product: return fold(kSimdWidth - 1, true, mul, T(1));
    case metal::simd_op_prefix_incl_sum: return fold(lane, true, add, T(0));
    case metal::simd_op_prefix_excl_sum: return fold(lane, false, add, T(0));
    case metal::simd_op_prefix_incl_product: return fold(lane, true, mul, T(1));
    case metal::simd_op_prefix_excl_product: return fold(lane, false, mul, T(1));
    case metal::simd_op_max:
      return fold(kSimdWidth - 1, true, [](T a, T b) { return T(metal::max(a, b)); }, own);
    case metal::simd_op_min:
      return fold(kSimdWidth - 1, true, [](T a, T b) { return T(metal::min(a, b)); }, own);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case metal::simd_op_and: return fold(kSimdWidth - 1, true, [](T a, T b) { return T(a & b); }, own);
      case metal::simd_op_or: return fold(kSimdWidth - 1, true, [](T a, T b) { return T(a | b); }, own);
      case metal::simd_op_xor: return fold(kSimdWidth - 1, true, [](T a, T b) { return T(a ^ b); }, own);
      case metal::simd_op_all: return T(fold(kSimdWidth - 1, true, [](T a, T b) { return T(a && b); }, own));
      case metal::simd_op_any: return T(fold(kSimdWidth - 1, true, [](T a, T b) { return T(a || b); }, own));
      case metal::simd_op_ballot: {
        uint64_t bits = 0;
        for (unsigned l = 0; l < kSimdWidth; ++l)
          if (active(l) && val(l)) bits |= uint64_t(1) << l;
        return T(bits);
      }
      case metal::simd_op_is_first: {
        for (unsigned l = 0; l < kSimdWidth; ++l)
          if (active(l)) return T(l == lane);
        return T(0);
      }
      default: break;
    }
  }
  unsigned src = lane;
  switch (op) {
    case metal::simd_op_shuffle:
      if (arg == 0xffffu) {  // simd_broadcast_first
        for (unsigned l = 0; l < kSimdWidth; ++l)
          if (active(l)) { src = l; break; }
      } else {
        src = arg;
      }
      break;
    case metal::simd_op_shuffle_up: src = lane >= arg ? lane - arg : lane; break;
    case metal::simd_op_shuffle_down: src = lane + arg < (unsigned)kSimdWidth ? lane + arg : lane; break;
    case metal::simd_op_shuffle_xor: src = lane ^ arg; break;
    case metal::simd_op_shuffle_rotate_down: src = (lane + arg) % kSimdWidth; break;
    case metal::simd_op_shuffle_rotate_up: src = (lane + kSimdWidth - arg % kSimdWidth) % kSimdWidth; break;
    default: break;
  }
  // Reading an inactive lane is undefined in Metal; the emulator returns the caller's value.
  return active(src) ? val(src) : own;
}

template <class T>
T simd_collective(const T& v, int op, unsigned arg, unsigned site) {
  static_assert(sizeof(T) <= kSlot, "SIMD-group function on a type larger than 64 bytes");
  tvm_emu::Fiber* f = tvm_emu::current();
  if (!f) return v;
  const tvm_emu::WarpSnap& sg = tvm_emu::exchange(&v, sizeof(T), op, arg, site);
  return combine<T>(v, op, arg, f->ctx.lane, sg.mask, sg.released);
}

template <class T, int C, int R>
metal::simdgroup_matrix<T, C, R> simdgroup_gather(const metal::simdgroup_matrix<T, C, R>& m,
                                                  unsigned site) {
  metal::simdgroup_matrix<T, C, R> full = m;
  tvm_emu::Fiber* f = tvm_emu::current();
  if (!f) return full;
  int r, c;
  metal::simdgroup_coord(f->ctx.lane, r, c);
  struct Pair { T v[2]; } mine{{m.e[r * 8 + c], m.e[r * 8 + c + 1]}};
  const tvm_emu::WarpSnap& sg = tvm_emu::exchange(&mine, sizeof(Pair), -1, 0, site);
  for (unsigned l = 0; l < (unsigned)kSimdWidth; ++l) {
    if (!((sg.mask >> l) & 1u)) continue;
    Pair p;
    std::memcpy((void*)&p, sg.released[l], sizeof(Pair));
    metal::simdgroup_coord(l, r, c);
    full.e[r * 8 + c] = p.v[0];
    full.e[r * 8 + c + 1] = p.v[1];
  }
  return full;
}

using KernelFn = void (*)(void** args, const ThreadCtx& ctx);

// The launch's kernel entry and threadgroup memory sizes (a launch runs in one call).
inline KernelFn launch_fn = nullptr;
inline const uint64_t* launch_tg_sizes = nullptr;
inline int launch_n_tg = 0;
inline thread_local TgMem* tls_tgmem = nullptr;

inline void entry(void** args, const tvm_emu::ThreadCtx& c) {
  launch_fn(args, metal_ctx(c, tls_tgmem->ptrs.data()));
}
inline void init_worker(tvm_emu::Worker&) {
  tls_tgmem = new TgMem;
  for (int k = 0; k < launch_n_tg; ++k) tls_tgmem->blocks.emplace_back(launch_tg_sizes[k] + 16);
  for (auto& b : tls_tgmem->blocks) tls_tgmem->ptrs.push_back(b.data());
}
inline void fini_worker(tvm_emu::Worker&) {
  delete tls_tgmem;
  tls_tgmem = nullptr;
}

inline int launch(KernelFn fn, void** args, const uint32_t* grid3, const uint32_t* tg3,
                  const uint64_t* tgmem_sizes, int n_tgmem, int n_workers, uint64_t stack_size,
                  char* err, int errlen) {
  launch_fn = fn;
  launch_tg_sizes = tgmem_sizes;
  launch_n_tg = n_tgmem;
  tvm_emu::LaunchConfig cfg;
  cfg.kernel = "metal kernel";
  cfg.strict_barriers = false;
  cfg.shared_bytes = 0;
  cfg.stack_size = stack_size;
  return tvm_emu::launch(entry, args, grid3, tg3, cfg, n_workers, err, errlen, init_worker,
                         fini_worker);
}

// Kernel-parameter helpers for the generated launcher.
template <class P>
P arg_cast(void* p) {
  if constexpr (std::is_pointer_v<P>) {
    return static_cast<P>(p);
  } else if constexpr (std::is_reference_v<P>) {
    return *static_cast<std::remove_reference_t<P>*>(p);
  } else {
    return *static_cast<P*>(p);
  }
}
template <class P>
auto builtin_cast(const uint3& v) {
  using D = std::remove_cv_t<std::remove_reference_t<P>>;
  if constexpr (metal::is_vecish_v<D>) {
    using E = typename metal::vtraits<D>::elem;
    if constexpr (metal::vtraits<D>::n == 2) return D(E(v.x), E(v.y));
    else return D(E(v.x), E(v.y), E(v.z));
  } else {
    return D(v.x);
  }
}
template <class P>
auto builtin_cast(uint v) {
  using D = std::remove_cv_t<std::remove_reference_t<P>>;
  return D(v);
}
}  // namespace tvm_metal_emu

namespace metal {
inline void threadgroup_barrier(mem_flags) { tvm_emu::block(tvm_emu::kAtBarrier); }
inline void simdgroup_barrier(mem_flags, unsigned site_) {
  tvm_metal_emu::simd_collective<int>(0, -2, 0, site_);
}
}  // namespace metal

// Types are visible without `using namespace metal;`, as in MSL.
using metal::bfloat;
using metal::half;
using metal::uchar;
using metal::uint;
using metal::ulong;
using metal::ushort;
#define TVM_GLOBAL_VEC(name)                                                    \
  using metal::name##2; using metal::name##3; using metal::name##4;             \
  using metal::packed_##name##2; using metal::packed_##name##3; using metal::packed_##name##4;
TVM_GLOBAL_VEC(float)
TVM_GLOBAL_VEC(half)
TVM_GLOBAL_VEC(bfloat)
TVM_GLOBAL_VEC(int)
TVM_GLOBAL_VEC(uint)
TVM_GLOBAL_VEC(short)
TVM_GLOBAL_VEC(ushort)
TVM_GLOBAL_VEC(char)
TVM_GLOBAL_VEC(uchar)
TVM_GLOBAL_VEC(long)
TVM_GLOBAL_VEC(ulong)
TVM_GLOBAL_VEC(bool)
#undef TVM_GLOBAL_VEC

// MSL literal suffixes: 1.0h (half) and 1.0bf (bfloat).
constexpr metal::half operator""h(long double v) { return metal::half(double(v)); }
inline metal::bfloat operator""bf(long double v) { return metal::bfloat(float(v)); }

#define HALF_MAX 65504.0h
#define HALF_MIN 6.103515625e-05h
#define MAXHALF HALF_MAX
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif

// MSL keywords, last: after every standard header, so that <thread> and friends are untouched.
#define kernel
#define device
#define constant const
#define thread
#define threadgroup
#define ray_data
#define object_data
// Threadgroup storage declared in a kernel body: one copy per OS worker thread, shared by the
// fibers of the threadgroup that worker is running (the Python side inserts this marker).
#define __tvm_tg_storage static thread_local

// Known MSL attributes (the Python side rewrites [[name(args)]] to __msl_attr_name(args)).
#define __msl_attr_kernel
#define __msl_attr_buffer(...)
#define __msl_attr_texture(...)
#define __msl_attr_sampler(...)
#define __msl_attr_threadgroup(...)
#define __msl_attr_function_constant(...)
#define __msl_attr_host_name(...)
#define __msl_attr_max_total_threads_per_threadgroup(...)
#define __msl_attr_visible
#define __msl_attr_id(...)
#define __msl_attr_thread_position_in_grid
#define __msl_attr_thread_position_in_threadgroup
#define __msl_attr_threadgroup_position_in_grid
#define __msl_attr_threads_per_threadgroup
#define __msl_attr_threadgroups_per_grid
#define __msl_attr_threads_per_grid
#define __msl_attr_thread_index_in_threadgroup
#define __msl_attr_thread_index_in_simdgroup
#define __msl_attr_simdgroup_index_in_threadgroup
#define __msl_attr_threads_per_simdgroup
#define __msl_attr_simdgroups_per_threadgroup
#define __msl_attr_thread_execution_width
#define __msl_attr_dispatch_threads_per_threadgroup
#define __msl_attr_dispatch_simdgroups_per_threadgroup
#define __msl_attr_grid_origin
#define __msl_attr_grid_size

// What tvm's generated kernels call when a run-time bounds check fails (before `return;`).
#define TVM_BOUNDS_FAIL(message) ::tvm_metal_emu::report_bounds_failure(message)
