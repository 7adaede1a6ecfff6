/* tvm-backend-hexagon: see stdio.h beside this file. */
#ifndef TVM_HEXAGON_SHIM_STDLIB_H
#define TVM_HEXAGON_SHIM_STDLIB_H
#include <stddef.h>
void* aligned_alloc(size_t alignment, size_t size);
void* malloc(size_t size);
void free(void* ptr);
#endif
