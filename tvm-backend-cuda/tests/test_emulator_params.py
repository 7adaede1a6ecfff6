"""The parameters the CUDA emulator reads from a kernel's declaration, for a module given no
signature (``tvm_backend_cuda.emulator_params``); no compiler needed."""

from __future__ import annotations

import pytest

from tvm.error import EmulatorError
from tvm_backend_cuda.emulator import load_source
from tvm_backend_cuda.emulator_params import source_params

SOURCE = r"""
#include <cuda_fp16.h>
// extern "C" __global__ void vadd(double x) in a comment is not the declaration
extern "C" __global__ void vadd(const float* __restrict__ a, const float* __restrict__ b,
                                float* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void __launch_bounds__(128, 1) scalars(
    unsigned int u, unsigned v, signed char sc, unsigned char uc, short s,
    unsigned short int us, long long ll, unsigned long long ull, long l, size_t z,
    bool flag, float f, double d, __half h, __nv_bfloat16 bf, const int32_t ci, uint8_t u8) {}

extern "C" __global__ void pointers(const float* const p, float4 * /* out */ out, void* raw,
                                    volatile int* flags, float** table, const half2 *h2,
                                    uint8_t* __restrict__ bytes) {}

extern "C" __global__ void tma(const __grid_constant__ CUtensorMap map, float* out) {}
extern "C" __global__ void no_params() {}
extern "C" __global__ void void_params(void) {}

struct Pair { int a, b; };
extern "C" __global__ void by_struct(float* out, Pair p) {}
extern "C" __global__ void by_reference(float* out, const int& n) {}
extern "C" __global__ void by_template(Vec<float, 4> v, int n) {}
extern "C" __global__ void by_array(int n[4]) {}

template <typename T>
__global__ void scale(T* x, T alpha) {}
"""


def test_pointer_and_int_parameters_of_a_multi_line_declaration() -> None:
    assert source_params(SOURCE, "vadd") == [("a", "ptr"), ("b", "ptr"), ("c", "ptr"),
                                             ("n", "int32")]


def test_scalar_types_map_to_their_dtypes() -> None:
    got = dict(source_params(SOURCE, "scalars"))
    assert got == {"u": "uint32", "v": "uint32", "sc": "int8", "uc": "uint8", "s": "int16",
                   "us": "uint16", "ll": "int64", "ull": "uint64", "l": "int64", "z": "uint64",
                   "flag": "bool", "f": "float32", "d": "float64", "h": "float16",
                   "bf": "bfloat16", "ci": "int32", "u8": "uint8"}


def test_any_pointer_is_ptr_with_its_qualifiers() -> None:
    assert source_params(SOURCE, "pointers") == [
        ("p", "ptr"), ("out", "ptr"), ("raw", "ptr"), ("flags", "ptr"), ("table", "ptr"),
        ("h2", "ptr"), ("bytes", "ptr")]


def test_a_by_value_tensor_map_and_empty_lists() -> None:
    assert source_params(SOURCE, "tma") == [("map", "tensormap"), ("out", "ptr")]
    assert source_params(SOURCE, "no_params") == []
    assert source_params(SOURCE, "void_params") == []


@pytest.mark.parametrize(("kernel", "what"), [
    ("by_struct", r"parameter 'p' \(#1\) is declared 'Pair p'"),
    ("by_reference", r"parameter 'n' \(#1\) is declared 'const int& n'"),
    ("by_template", r"parameter 'v' \(#0\) is declared 'Vec<float, 4> v'"),
    ("by_array", r"parameter #0 is declared 'int n\[4\]'"),
])
def test_a_type_it_cannot_read_asks_for_a_signature(kernel: str, what: str) -> None:
    with pytest.raises(EmulatorError, match=rf"kernel '{kernel}': {what}, a type the CUDA "
                       rf"emulator cannot read .* give the module its signature: "
                       rf"\{{'{kernel}': \[\(name, type\), \.\.\.\]\}}"):
        source_params(SOURCE, kernel)


def test_a_template_kernel_or_a_missing_one_is_refused() -> None:
    with pytest.raises(EmulatorError, match=r"kernel 'scale' is a template; .* declare an "
                       r"extern \"C\" __global__ kernel that calls scale<\.\.\.>"):
        source_params(SOURCE, "scale")
    with pytest.raises(EmulatorError, match=r"kernel 'vsub' has no extern \"C\" __global__ "
                       r"declaration in the CUDA source"):
        source_params(SOURCE, "vsub")


def test_load_source_reads_what_it_is_not_given_before_building() -> None:
    """Names alone, or a kernel mapped to None, read the declaration; an unreadable one fails
    before the compiler runs; types alone are named as the GPU's module names them."""
    from tvm_backend_cuda import emulator_params

    with pytest.raises(EmulatorError, match=r"kernel 'by_struct': parameter 'p' \(#1\)"):
        load_source(SOURCE, ["by_struct"])
    assert emulator_params.signatures(SOURCE, ["vadd"]) == {
        "vadd": [("a", "ptr"), ("b", "ptr"), ("c", "ptr"), ("n", "int32")]}
    assert emulator_params.signatures(SOURCE, {"tma": None, "vadd": ["ptr", "ptr", "ptr", "int32"]}) \
        == {"tma": [("map", "tensormap"), ("out", "ptr")],
            "vadd": [("arg0", "ptr"), ("arg1", "ptr"), ("arg2", "ptr"), ("arg3", "int32")]}
