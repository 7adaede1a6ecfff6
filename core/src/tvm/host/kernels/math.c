/* Math of the host target, written so that loops calling it vectorise (no branches, no libm
 * calls): the C compiler if-converts the selects into vector compares and blends.
 *
 * tvm_fmaxf/tvm_fminf (and the double versions) have fmaxf's semantics: a NaN operand is
 * ignored (the other one is returned); -0 and +0 compare equal.
 *
 * tvm_expf:
 * exp(x) = 2^n * exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2 (Cody-Waite: ln 2 split
 * in a high part with few bits, so n * ln2_hi is exact); exp(r) by its degree-7 Taylor
 * polynomial (truncation error below 1e-8 relative). 2^n is applied as two exact powers of two
 * so that results in the subnormal range round once. No branches: NaN is passed through by a
 * select, large inputs overflow to infinity and small ones underflow to zero by the scaling.
 * Accuracy: within 2 ulp of the correctly rounded result over the whole float range.
 */
static inline float tvm_expf(float x) {
  const float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round to int */
  float r = xc - n * 0.693145751953125f;
  r = r - n * 1.42860682030941723212e-6f;
  float p = 1.98412698412698413e-4f;
  p = p * r + 1.38888888888888889e-3f;
  p = p * r + 8.33333333333333333e-3f;
  p = p * r + 4.16666666666666667e-2f;
  p = p * r + 1.66666666666666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
  const uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
  float s1, s2;
  memcpy(&s1, &b1, sizeof(s1));
  memcpy(&s2, &b2, sizeof(s2));
  const float y = (p * s1) * s2;
  return x != x ? x : y;
}

static inline float tvm_fmaxf(float a, float b) { return (b > a || a != a) ? b : a; }
static inline float tvm_fminf(float a, float b) { return (b < a || a != a) ? b : a; }
static inline double tvm_fmax(double a, double b) { return (b > a || a != a) ? b : a; }
static inline double tvm_fmin(double a, double b) { return (b < a || a != a) ? b : a; }
