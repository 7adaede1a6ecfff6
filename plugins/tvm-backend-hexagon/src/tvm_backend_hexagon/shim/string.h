/* tvm-backend-hexagon: see stdio.h beside this file. */
#ifndef TVM_HEXAGON_SHIM_STRING_H
#define TVM_HEXAGON_SHIM_STRING_H
#include <stddef.h>
void* memcpy(void* restrict dst, const void* restrict src, size_t n);
void* memset(void* dst, int c, size_t n);
#endif
