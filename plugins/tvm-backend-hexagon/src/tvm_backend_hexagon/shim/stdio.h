/* tvm-backend-hexagon: the declarations the generated C uses, for a compile check with an LLVM
 * clang that has the Hexagon target but no Hexagon SDK (no C library headers). The Hexagon SDK's
 * own headers are used instead when it is installed; the symbols resolve against its C library
 * when the object is linked there. */
#ifndef TVM_HEXAGON_SHIM_STDIO_H
#define TVM_HEXAGON_SHIM_STDIO_H
#include <stddef.h>
int snprintf(char* restrict s, size_t n, const char* restrict format, ...);
#endif
