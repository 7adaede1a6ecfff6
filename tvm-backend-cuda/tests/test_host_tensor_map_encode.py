"""Tensor maps as values (issue 28, item 6): the seed's host-side encode

    A_map: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("runtime.cuTensorMapEncodeTiled", A_map, dtype, rank, A.data, ...)

printed and parsed back, lowered to the tensor map the launch derives from A (the same launch
plan as the derived form), its arguments checked at the call's line; ``T.address_of(map)``."""

from __future__ import annotations

from typing import Any, no_type_check

import pytest

import tvm
from tvm.ir import Var
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_cuda.plugin import register_backend

register_backend()

from lang_kernels import tma_kernel  # noqa: E402 - after the backend is loaded

H100 = "nvidia/nvidia-h100"
ROWS, COLS = 64, 64  # one 128-byte swizzled box of bf16 a CTA
_ENC = "runtime.cuTensorMapEncodeTiled"


@no_type_check
def _encoded_kernel(by_address: bool = False) -> Any:
    from tvm_backend_cuda.dispatch.tma_utils import tma_shared_layout
    from tvm_backend_cuda.lang import SMEMPool, TMABar

    layout = tma_shared_layout("bfloat16", "128B", (ROWS, COLS))
    nbytes = ROWS * COLS * 2

    @T.prim_func
    def encoded(A: T.Buffer((2 * ROWS, COLS), "bfloat16"), B: T.Buffer((2 * ROWS, COLS), "bfloat16")):
        TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed(_ENC, TA, "bfloat16", 2, A.data, COLS, 2 * ROWS, COLS * 2, COLS, ROWS,
                      1, 1, 0, 3, 2, 0)
        TB: T.let[T.handle("tensormap")] = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed(_ENC, TB, "bfloat16", 2, B.data, COLS, 2 * ROWS, COLS * 2, COLS, ROWS,
                      1, 1, 0, 3, 2, 0)
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([128])
        pool = SMEMPool()
        S = pool.alloc((ROWS, COLS), "bfloat16", layout=layout, align=1024)
        bar = TMABar(pool, 1, init_thread=tx == 0)
        if tx == 0:
            bar.arrive(0, nbytes)
        Tx.cta.copy_async(S, A[bx * ROWS:bx * ROWS + ROWS, 0:COLS], dispatch="tma",
                          config={"mbar": bar[0], "tensor_map": TA})
        bar.wait(0, 0)
        Tx.cta.add(S, S, T.float32(1))
        Tx.cta.copy_async(B[bx * ROWS:bx * ROWS + ROWS, 0:COLS], S, dispatch="tma",
                          config={"tensor_map": T.address_of(TB) if by_address else TB})

    return encoded


def _plan(func: Any) -> Any:
    ex = tvm.compile(func, target=H100)
    plan = ex.get_function(ex.entry_name).plan
    return ex, [(s.args, s.grid, s.block, s.smem) for s in plan.steps]  # all but the name


def test_the_seed_form_prints_and_parses_back() -> None:
    func = _encoded_kernel()
    text = func.script()
    assert 'TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)' in text
    assert 'TB: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)' in text
    assert (f'T.call_packed("{_ENC}", TA, "bfloat16", 2, A.data, 64, 128, 128, 64, 64, 1, 1, '
            '0, 3, 2, 0)') in text
    back = tvm.script.from_source(text, extra_vars={"SMEMPool": None})
    assert tvm.ir.structural_equal(back, func)


def test_an_encoded_map_launches_as_the_derived_one() -> None:
    ex, plan = _plan(_encoded_kernel())
    _, derived = _plan(tma_kernel(ROWS, COLS, derived=True))
    assert plan == derived  # the same derived arguments, params and kernel shape
    src = ex.inspect_source()
    assert src.count("const __grid_constant__ CUtensorMap") == 2
    assert "tvm_stack_alloca" not in src and "call_packed" not in src
    assert ex.cubin[:4] == b"\x7fELF"


def test_the_address_of_a_map_is_the_map() -> None:
    _, by_var = _plan(_encoded_kernel())
    _, by_address = _plan(_encoded_kernel(by_address=True))
    assert by_var == by_address
    tm = T.handle("tensormap")
    assert str(T.address_of(tm).dtype) == "uint64"  # the seed's type of a map's address
    A = tvm.ir.buffer.decl_buffer((4, 4), "float32", "A")
    assert T.address_of(A).args[0].indices[0].value == 0  # a buffer: its first element
    with pytest.raises(TypeError, match="takes a buffer, a buffer element or a variable"):
        T.address_of(3)


def _one_map(args: str) -> Any:
    text = f'''
@T.prim_func
def k(A: T.Buffer((128, 64), "float16"), B: T.Buffer((128, 64), "float16")):
    TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("{_ENC}", TA, {args})
    T.device_entry()
    tx = T.thread_id([32])
    B[tx, 0] = A[tx, 0]
'''
    return tvm.script.from_source(text)


@pytest.mark.parametrize(("args", "match"), [
    ('"float16", 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 0, 0',
     r"rank 2 takes 14 arguments after the map .*, got 13"),
    ('"float32", 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 0, 0, 0',
     r"the element type float32 is not A's \(float16\)"),
    # constant dims and strides other than A's: a view of A's memory, which must fit in it
    ('"float16", 2, A.data, 64, 200, 128, 64, 64, 1, 1, 0, 0, 0, 0',
     r"the map does not fit in A \(its dims \[64, 200\] \(innermost first\) and byte "
     r"strides \[128\] reach 25600 bytes, but A has 16384\)"),
    ('"float16", 2, A.data, 64, 128, 256, 64, 64, 1, 1, 0, 0, 0, 0',
     r"reach 32640 bytes, but A has 16384"),
    ('"float16", 2, A.data, 64, 128, 128, 64, 512, 1, 1, 0, 0, 0, 0',
     r"box dim 1 is 512; each is 1 to 256 elements"),
    ('"float16", 2, A.data, 64, 128, 128, 64, 64, 2, 1, 0, 0, 0, 0',
     r"element strides \[2, 1\] are not supported"),
    ('"float16", 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 1, 0, 0',
     r"inner box dim is 128 bytes, more than the 32-byte swizzle span"),
    ('"float16", 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 0, 0, 1',
     r"OOB fill 1 is not supported"),
    ('"float16", 2, B, 64, 128, 128, 64, 64, 1, 1, 0, 0, 0, 0',
     r"the address must be a buffer argument's data"),
    ('"float16", 6, A.data', r"a tensor map has rank 1 to 5, got 6"),
])
def test_encode_arguments_are_checked_at_the_call(args: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as info:
        tvm.compile(_one_map(args), target=H100)
    assert "<string>:5:" in str(info.value)  # the call_packed line


def test_an_unfilled_or_unknown_encode_is_named() -> None:
    unfilled = tvm.script.from_source('''
@T.prim_func
def k(A: T.Buffer((32,), "float32")):
    TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    T.device_entry()
    tx = T.thread_id([32])
    A[tx] = A[tx] + 1.0
''')
    with pytest.raises(ValueError, match=r"TA = T.tvm_stack_alloca\(...\) is never filled"):
        tvm.compile(unfilled, target=H100)
    unknown = _one_map('"float16"').with_body(_one_map('"float16"').body)
    text = unknown.script().replace(_ENC, "runtime.cuTensorMapEncodeIm2col")
    with pytest.raises(ValueError, match=r"'runtime.cuTensorMapEncodeIm2col', TA, ...\): no "
                                         r"backend lowers that packed function \(known here: "
                                         r"runtime.cuTensorMapEncodeTiled"):
        tvm.compile(tvm.script.from_source(text), target=H100)


def test_a_stray_call_packed_is_refused() -> None:
    stray = tvm.script.from_source(f'''
@T.prim_func
def k(A: T.Buffer((32,), "float32")):
    T.call_packed("{_ENC}", A.data)
    T.device_entry()
    tx = T.thread_id([32])
    A[tx] = A[tx] + 1.0
''')
    with pytest.raises(ValueError, match=r"compiles only as the encoder of a T.tvm_stack_alloca"):
        tvm.compile(stray, target=H100)
    assert isinstance(T.handle("tensormap"), Var)


@pytest.mark.gpu
def test_an_encoded_map_runs(device: str) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(_encoded_kernel(), target="cuda")
    a = torch.randn((2 * ROWS, COLS), dtype=torch.bfloat16, device=device)
    b = torch.zeros_like(a)
    ex(a, b)
    if device == "cuda":
        torch.cuda.synchronize()
    torch.testing.assert_close(b, a + 1, rtol=1e-2, atol=1e-2)


_OK = ["64", "128", "128", "64", "64", "1", "1", "0", "0", "0", "0"]  # dims, stride, box, ...


def _with(**changes: str) -> str:
    """The arguments of a valid rank-2 encode of A (float16, 128 x 64), some replaced:
    positions 0-1 dims, 2 the stride, 3-4 the box, 5-6 element strides, 7 interleave,
    8 swizzle, 9 L2 promotion, 10 OOB fill."""
    names = ["dim0", "dim1", "stride0", "box0", "box1", "elem0", "elem1", "interleave",
             "swizzle", "l2", "oob"]
    values = [changes.get(n, v) for n, v in zip(names, _OK)]
    return '"float16", 2, A.data, ' + ", ".join(values)


@pytest.mark.parametrize(("args", "seed_message"), [
    ('"float16", 0, A.data', "tensorRank must be non-zero"),
    ('"float16", 6, A.data', "cuTensorMapEncodeTiled only supports up to 5D tensors"),
    ('"float16", 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 0, 0',
     "cuTensorMapEncodeTiled expects 15 arguments"),
    ('"float4_e2m1fn", 2, A.data', "Unsupported data type float4_e2m1fn"),
    ('"float16x2", 2, A.data', "Expect tensor_dtype to have lanes=1, but get float16x2"),
    (_with(dim0="0"), "globalDim[0] must be non-zero"),
    (_with(stride0="100"), "global strides must be multiple of 16"),
    (_with(box1="0"), "boxDim[1] must be non-zero"),
    (_with(box1="512"), "boxDim[1] must be less than or equal to 256"),
    (_with(elem0="0"), "elementStrides[0] must be non-zero"),
    (_with(elem1="9"), "elementStrides[1] must be less than or equal to 8"),
    (_with(interleave="4"), "Unsupported interleave enum value: 4"),
    (_with(swizzle="5"), "Unsupported swizzle enum value: 5"),
    (_with(l2="7"), "Unsupported l2Promotion enum value: 7"),
    (_with(oob="3"), "Unsupported oobFill enum value: 3"),
    (_with(box0="4"), "boxDim[0] * elementSizeInBytes(tensorDataType) must be a multiple of "
                      "16 bytes"),
    (_with(swizzle="1"), "CU_TENSOR_MAP_SWIZZLE_32B implies the bounding box inner dimension "
                         "will be <= 32."),
    (_with(swizzle="2"), "CU_TENSOR_MAP_SWIZZLE_64B implies the bounding box inner dimension "
                         "will be <= 64."),
    (_with(interleave="1"),
     "tensorRank must be greater than or equal to 3 when interleave is not NONE"),
])
def test_encode_errors_carry_the_seed_runtimes_sentence(args: str, seed_message: str) -> None:
    """The seed's runtime refuses these encodes with these sentences; we refuse them at the
    call's line with the same sentence first."""
    with pytest.raises(ValueError) as info:
        tvm.compile(_one_map(args), target=H100)
    assert seed_message in str(info.value)
    assert "<string>:5:" in str(info.value)
    assert isinstance(info.value, tvm.error.InternalError)  # what the seed's tests catch


@pytest.mark.parametrize(("dtype", "tail", "seed_message"), [
    # a 32-byte interleave over int32 rows of 12 bytes: the 48-byte stride is no multiple of 32
    ("int32", "1, 1, 1, 2, 0, 0, 0", "globalStrides[0] must be a multiple of 32"),
    # a NaN out-of-bounds fill of an integer array
    ("int32", "1, 1, 1, 0, 0, 0, 1", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA requires "
                                     "a floating-point tensorDataType"),
])
def test_interleave_and_fill_rules_of_a_rank_3_encode(dtype: str, tail: str,
                                                      seed_message: str) -> None:
    src = f'''
@T.prim_func
def k(A: T.Buffer((5, 7, 12), "{dtype}")):
    TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
    T.call_packed("{_ENC}", TA, "{dtype}", 3, A.data, 12, 7, 5, 48, 336, 4, 7, 5, {tail})
    T.device_entry()
    tx = T.thread_id([32])
    A[0, 0, tx % 12] = A[0, 0, 0]
'''
    with pytest.raises(tvm.error.InternalError) as info:
        tvm.compile(tvm.script.from_source(src), target=H100)
    assert seed_message in str(info.value)
    assert "<string>:5:" in str(info.value)


def test_a_data_type_object_names_the_element_type() -> None:
    """The seed's scripts pass ``tvm.DataType(dtype)`` as often as the string."""
    f16 = tvm.DataType("float16")

    @T.prim_func
    def k(A: T.Buffer((128, 64), "float16")):
        TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed(_ENC, TA, f16, 2, A.data, 64, 128, 128, 64, 64, 1, 1, 0, 3, 2, 0)
        T.device_entry()
        tx = T.thread_id([32])
        A[tx, 0] = A[tx, 1]

    tvm.compile(k, target=H100)


def test_a_valid_encode_with_the_128b_swizzle_compiles() -> None:
    tvm.compile(_one_map(_with(swizzle="3")), target=H100)


def test_an_encode_of_its_own_geometry_views_the_array() -> None:
    """The seed encodes the dims and strides it is given, over the array's memory: a 2-D map
    of a 1-D buffer (rows of 32 float32, the second half of each row skipped by a 256-byte
    stride), and a 16 x 8 buffer written as 8 x 16, copied through shared memory."""
    import numpy as np

    @T.prim_func
    def k(A: T.Buffer((512,), "float32"), B: T.Buffer((8, 16), "float32"),
          D: T.Buffer((16, 8), "float32")):
        TA: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed(_ENC, TA, "float32", 2, A.data, 16, 8, 256, 16, 8, 1, 1, 0, 0, 0, 0)
        TB: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)
        T.call_packed(_ENC, TB, "float32", 2, B.data, 16, 8, 64, 16, 8, 1, 1, 0, 0, 0, 0)
        TD: T.handle("tensormap") = T.tvm_stack_alloca("tensormap", 1)  # D as 8 x 16
        T.call_packed(_ENC, TD, "float32", 2, D.data, 16, 8, 64, 16, 8, 1, 1, 0, 0, 0, 0)
        T.device_entry()
        T.cta_id([1])
        tx = T.thread_id([32])
        S = T.alloc_buffer((8, 16), "float32", scope="shared", align=128)
        bar = T.shared_scalar("uint64")
        if tx == 0:
            T.ptx.mbarrier.init(T.address_of(bar), 1)
            T.ptx.fence.proxy_async("shared::cta")
            T.ptx.cp_async.bulk.tensor.g2c(2, S.data, T.address_of(bar), T.address_of(TA), 0,
                                           1, "", 0, 0)
            T.ptx.mbarrier.arrive.expect_tx(T.address_of(bar), 512)
        T.ptx.mbarrier.try_wait(T.address_of(bar), 0)
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.cp_async.bulk.tensor.s2g(2, S.data, T.address_of(TB), "", 0, 0)
            T.ptx.cp_async.bulk.commit_group()
            T.ptx.cp_async.bulk.wait_group(0)
            T.ptx.cp_async.bulk.tensor.s2g(2, S.data, T.address_of(TD), "", 0, 0)
            T.ptx.cp_async.bulk.commit_group()
            T.ptx.cp_async.bulk.wait_group(0)

    ex = tvm.compile(k, target=H100, emulate=True)
    a = np.arange(512, dtype="float32")
    b, d = np.zeros((8, 16), "float32"), np.zeros((16, 8), "float32")
    ex(a, b, d)
    np.testing.assert_array_equal(b, a.reshape(8, 64)[:, :16])
    np.testing.assert_array_equal(d.reshape(8, 16), b)  # D's 16 x 8 memory written as 8 x 16
