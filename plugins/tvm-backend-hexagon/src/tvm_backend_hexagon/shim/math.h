/* tvm-backend-hexagon: see stdio.h beside this file. */
#ifndef TVM_HEXAGON_SHIM_MATH_H
#define TVM_HEXAGON_SHIM_MATH_H
#define NAN __builtin_nanf("")
#define INFINITY __builtin_inff()
#define isnan(x) __builtin_isnan(x)
#define isinf(x) __builtin_isinf(x)
#define isfinite(x) __builtin_isfinite(x)
#define signbit(x) __builtin_signbit(x)
double exp(double x);
float expf(float x);
double exp2(double x);
float exp2f(float x);
double log(double x);
float logf(float x);
double log2(double x);
float log2f(float x);
double log10(double x);
float log10f(float x);
double log1p(double x);
float log1pf(float x);
double sqrt(double x);
float sqrtf(float x);
double sin(double x);
float sinf(float x);
double cos(double x);
float cosf(float x);
double tan(double x);
float tanf(float x);
double asin(double x);
float asinf(float x);
double acos(double x);
float acosf(float x);
double atan(double x);
float atanf(float x);
double sinh(double x);
float sinhf(float x);
double cosh(double x);
float coshf(float x);
double tanh(double x);
float tanhf(float x);
double erf(double x);
float erff(float x);
double floor(double x);
float floorf(float x);
double ceil(double x);
float ceilf(float x);
double nearbyint(double x);
float nearbyintf(float x);
double rint(double x);
float rintf(float x);
double round(double x);
float roundf(float x);
double trunc(double x);
float truncf(float x);
double fabs(double x);
float fabsf(float x);
double pow(double x, double y);
float powf(float x, float y);
double fmod(double x, double y);
float fmodf(float x, float y);
double atan2(double x, double y);
float atan2f(float x, float y);
double hypot(double x, double y);
float hypotf(float x, float y);
double copysign(double x, double y);
float copysignf(float x, float y);
double nextafter(double x, double y);
float nextafterf(float x, float y);
double fmin(double x, double y);
float fminf(float x, float y);
double fmax(double x, double y);
float fmaxf(float x, float y);
double fma(double x, double y, double z);
float fmaf(float x, float y, float z);
#endif
