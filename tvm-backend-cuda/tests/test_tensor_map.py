"""By-value TMA descriptors: a ``T.TensorMap`` parameter is a ``const __grid_constant__
CUtensorMap`` kernel parameter (HOPPER.md: the tensor map passed by value), whose address the
TMA instructions take. The executable passes a cuda.core ``TensorMapDescriptor`` or any raw
128-byte descriptor (``bytes``, a ``cuda.bindings.driver.CUtensorMap``, a numpy array) by value.

CI: the generated source and NVRTC for sm_90a / sm_100a. GPU (``gpu``): a 2-d TMA copy with the
descriptor from cuda.core and from ``cuTensorMapEncodeTiled`` bytes, against numpy; under the
CUDA emulator, with the emulator's map of the CPU array as bytes, as a numpy array and in a
``CUtensorMap`` (cuda.core's descriptor is not emulated: it needs device memory and a driver).
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

ROWS, COLS, BOX = 128, 256, 32


@no_type_check
def tma_copy_by_value(rows: int = ROWS, cols: int = COLS, box: int = BOX) -> Any:
    """B = A + 1; each CTA loads its box x box tile of A with one 2-d TMA copy, the tensor map
    being a by-value kernel parameter (A itself is only reached through the map)."""
    nbytes = box * box * 4

    @T.prim_func
    def tma_copy(TM: T.TensorMap, B: T.Buffer((rows, cols), "float32")):
        T.device_entry()
        bx, by = T.cta_id([cols // box, rows // box])
        tx = T.thread_id([128])
        tile = T.alloc_buffer((box, box), "float32", scope="shared.dyn", align=128)
        bar = T.alloc_buffer((1,), "uint64", scope="shared.dyn", align=8)
        if tx == 0:
            T.ptx.prefetch_tensormap(TM, "")
            T.ptx.mbarrier.init(bar[0], 1)
            T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx(bar[0], nbytes)
            T.ptx.cp_async.bulk.tensor.g2c(2, tile[0, 0], bar[0], TM, 0, 1, "", bx * box,
                                           by * box)
        T.ptx.mbarrier.try_wait(bar[0], 0)
        for i in T.serial(box * box // 128):
            B[by * box + (i * 128 + tx) // box, bx * box + (i * 128 + tx) % box] = \
                tile[(i * 128 + tx) // box, (i * 128 + tx) % box] + T.float32(1)

    return tma_copy


HEADER = ('extern "C" __global__ void __launch_bounds__(128) tma_copy_kernel('
          "const __grid_constant__ CUtensorMap TM, float* __restrict__ B) {")
TYPEDEF = """\
#ifndef __cuda_cuda_h__
typedef struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; } CUtensorMap;
#endif
"""


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_tensor_map_parameter_source_and_nvrtc(arch: str) -> None:
    ex = tvm.compile(tma_copy_by_value(), target={"kind": "cuda", "arch": arch})
    assert ex.cubin[:4] == b"\x7fELF"  # NVRTC compiled it
    src = ex.inspect_source()
    assert src.startswith(TYPEDEF)
    assert HEADER in src
    # the TMA operands are the parameter's (generic, param-space) address
    assert 'prefetch.tensormap [%0];" : : "l"((unsigned long long)((&TM)))' in src
    assert '"l"((unsigned long long)((&TM))), "r"((unsigned)__cvta_generic_to_shared(&(bar[0])))' \
        in src
    assert ex.meta["kernels"]["tma_copy_kernel"]["params"] == [["TM", "tensormap"], ["B", "ptr"]]
    # the host function takes the map as its first argument
    params = ex.plans["tma_copy"].signature.params
    assert [(p.name, p.kind) for p in params][:1] == [("TM", "handle")]
    assert ex.meta["tensor_maps"] == {"tma_copy": [0]}  # checked and passed by value


def test_tensor_map_in_ptx() -> None:
    ex = tvm.compile(tma_copy_by_value(), target={"kind": "cuda", "arch": "sm_90a"})
    ptx = ex.inspect_source("ptx")
    # a 128-byte, 64-byte-aligned kernel parameter
    assert ".param .align 64 .b8 tma_copy_kernel_param_0[128]" in ptx


def test_script_round_trip_keeps_the_tensor_map() -> None:
    from tvm.ir import structural_equal
    from tvm.script import from_source

    f = tma_copy_by_value()
    text = f.script()
    assert "def tma_copy(TM: T.TensorMap(), B: T.Buffer((128, 256), \"float32\")):" in text
    assert structural_equal(from_source(text), f)


# -- the argument, without a GPU -----------------------------------------------------------------

WORDS = list(range(1, 17))
RAW = struct.pack("<16Q", *WORDS)


def _cu_tensor_map() -> Any:
    from cuda.bindings import driver

    tm = driver.CUtensorMap()
    tm.opaque = WORDS
    return tm


@pytest.mark.parametrize("make", [
    lambda: RAW, lambda: bytearray(RAW), lambda: memoryview(RAW),
    lambda: np.array(WORDS, dtype=np.uint64), _cu_tensor_map,
], ids=["bytes", "bytearray", "memoryview", "numpy", "CUtensorMap"])
def test_raw_tensor_maps_become_128_bytes(make: Any) -> None:
    from tvm_backend_cuda.runtime import _RawParam, tensor_map_arg

    raw = tensor_map_arg(make())
    assert type(raw) is _RawParam and raw.buf.raw == RAW
    assert tensor_map_arg(raw) is raw  # converted once


@pytest.mark.parametrize("bad, message", [
    (b"\0" * 64, "a CUtensorMap is 128 bytes; got 64"),
    (np.zeros(17, np.uint64), "a CUtensorMap is 128 bytes; got 136"),
    (12345, "expected a CUtensorMap .*got int"),
    ([0] * 16, "expected a CUtensorMap .*got list"),
])
def test_a_wrong_tensor_map_is_a_type_error(bad: Any, message: str) -> None:
    from tvm_backend_cuda.runtime import tensor_map_arg

    with pytest.raises(TypeError, match=message):
        tensor_map_arg(bad)


def test_kernel_marshals_a_tensor_map_parameter() -> None:
    from tvm_backend_cuda.runtime import CudaModule, _raw_param_array, _RawParam

    ex = tvm.compile(tma_copy_by_value(), target={"kind": "cuda", "arch": "sm_90a"})
    mod = CudaModule(ex.cubin, {k: v["params"] for k, v in ex.meta["kernels"].items()})
    kernel = mod.get_kernel("tma_copy_kernel")
    assert kernel.param_types == ("tensormap", "ptr") and kernel._raw_params
    values, _, _ = kernel._marshal([RAW, 0x7F0000001000])
    assert type(values[0]) is _RawParam and values[1] == 0x7F0000001000
    # the parameter array cuLaunchKernel copies from: each entry points at that argument's bytes
    params, holders = _raw_param_array([values[0], 0x7F0000001000, np.int32(-3)])
    assert ctypes.string_at(params[0], 128) == RAW
    assert ctypes.string_at(params[1], 8) == struct.pack("<Q", 0x7F0000001000)
    assert ctypes.string_at(params[2], 4) == struct.pack("<i", -3)
    with pytest.raises(TypeError, match="kernel parameter 'TM' .*128 bytes"):
        kernel._marshal([RAW[:8], 0])


def test_executable_checks_the_tensor_map_and_survives_export(tmp_path: Any) -> None:
    ex = tvm.compile(tma_copy_by_value(), target={"kind": "cuda", "arch": "sm_90a"})
    ex2 = tvm.runtime.load_module(ex.export_library(tmp_path / "tma.tvmex"))
    for e in (ex, ex2):
        func = e.get_function("tma_copy")
        assert func._tensor_maps == (0,)
        launch_args, checked = func._tensor_map_args([RAW, "B"])
        assert launch_args[0].buf.raw == RAW and checked == [None, "B"]
        with pytest.raises(TypeError, match="tma_copy: argument 'TM': a CUtensorMap is 128 bytes"):
            func._tensor_map_args([RAW[:64], "B"])
    assert ex2.meta["kernels"]["tma_copy_kernel"]["params"][0] == ["TM", "tensormap"]


def test_launch_plan_passes_the_tensor_map_by_value(monkeypatch: Any) -> None:
    from tvm_backend_cuda.runtime import _RawParam

    class FakeCudaArray:
        def __init__(self) -> None:
            self.__cuda_array_interface__ = {"shape": (ROWS, COLS), "typestr": "<f4",
                                             "data": (0x7F0000000000, False), "version": 3,
                                             "strides": None}

    ex = tvm.compile(tma_copy_by_value(), target={"kind": "cuda", "arch": "sm_90a"})
    monkeypatch.setattr(ex, "device_ready", lambda: True)
    b = FakeCudaArray()
    [(kernel, grid, block, smem, kargs)] = ex.get_function("tma_copy").launch_plan([RAW, b])
    assert kernel.name == "tma_copy_kernel" and kernel.param_types == ("tensormap", "ptr")
    assert (grid, block, smem) == ((COLS // BOX, ROWS // BOX, 1), (128, 1, 1), BOX * BOX * 4 + 8)
    assert type(kargs[0]) is _RawParam and kargs[0].buf.raw == RAW and kargs[1] is b
    with pytest.raises(TypeError, match="tma_copy: argument 'TM': expected a CUtensorMap"):
        ex.get_function("tma_copy").launch_plan([b, b])


# -- GPU ---------------------------------------------------------------------------------------


def _encode_tiled(t: Any, box: int) -> Any:
    """``cuTensorMapEncodeTiled`` for a contiguous 2-d float32 CUDA tensor (no swizzle)."""
    from cuda.bindings import driver as d

    rows, cols = t.shape
    u64, u32 = d.cuuint64_t, d.cuuint32_t
    err, tmap = d.cuTensorMapEncodeTiled(
        d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, t.data_ptr(),
        [u64(cols), u64(rows)], [u64(cols * t.element_size())], [u32(box), u32(box)],
        [u32(1), u32(1)], d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == d.CUresult.CUDA_SUCCESS, err
    return tmap


def _descriptor(kind: str, a: Any) -> Any:
    if kind == "cuda.core":
        from cuda.core.utils import StridedMemoryView

        if not hasattr(StridedMemoryView, "as_tensor_map"):
            pytest.skip("this cuda.core has no StridedMemoryView.as_tensor_map")
        view = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
        return view.as_tensor_map(box_dim=(BOX, BOX))
    if a.device.type == "cpu":  # the emulator's map of the CPU array, in each form
        from cuda.bindings import driver

        from tvm_backend_cuda.runtime import encode_tiled_tensor_map

        data = encode_tiled_tensor_map(a.data_ptr(), tuple(a.shape), tuple(a.stride()),
                                       "float32", (BOX, BOX), 0, 0, emulated=True)
        words = np.frombuffer(data, dtype=np.uint64).copy()
        if kind == "CUtensorMap":  # a driver object, made without a driver: its 128 bytes
            tmap = driver.CUtensorMap()
            tmap.opaque = [int(w) for w in words]
            return tmap
        return data if kind == "bytes" else words
    tmap = _encode_tiled(a, BOX)
    if kind == "CUtensorMap":
        return tmap
    words = np.array([int(w) for w in tmap.opaque], dtype=np.uint64)
    return words.tobytes() if kind == "bytes" else words


#: cuda.core (1.2.2) makes a TensorMapDescriptor only through StridedMemoryView.as_tensor_map
#: (TensorMapDescriptor._from_tiled; its __init__ raises), which refuses memory that is not
#: device-accessible ("The tensor must be device-accessible"), asks the driver for the current
#: context and device (cuCtxGetCurrent, cuCtxGetDevice) and encodes with the driver's
#: cuTensorMapEncodeTiled (through CCCL's make_tma_descriptor, or directly); cuda.bindings finds
#: the driver only by a system search. Its 128 bytes are not readable from Python either. Without
#: a driver there is none short of a fake (docs/decisions.md, issue 24).
_CUDA_CORE_NOT_EMULATED = ("cuda.core builds a TensorMapDescriptor only for device-accessible "
                           "memory, in a current CUDA context, with the driver's "
                           "cuTensorMapEncodeTiled")


@pytest.mark.gpu
@pytest.mark.parametrize("kind", [
    pytest.param("cuda.core", marks=pytest.mark.not_emulated(_CUDA_CORE_NOT_EMULATED)),
    "CUtensorMap", "bytes", "numpy"])
def test_tma_copy_with_a_by_value_tensor_map(kind: str, device: str) -> None:
    """On the GPU every form of a driver-encoded map; under the emulator the emulator's map of
    the CPU array as bytes, a numpy array and a ``cuda.bindings.driver.CUtensorMap`` holding
    those bytes (cuda.core's descriptor needs a driver)."""
    torch = pytest.importorskip("torch")
    if device == "cuda" and torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("TMA needs sm_90 or newer")
    ex = tvm.compile(tma_copy_by_value(), target="cuda")
    host = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype("float32")
    a = torch.from_numpy(host).to(device)
    b = torch.zeros_like(a)
    tm = _descriptor(kind, a)
    ex(tm, b)
    ex(tm, b)  # a second call
    if device == "cuda":
        torch.cuda.synchronize()
    np.testing.assert_array_equal(b.cpu().numpy(), host + np.float32(1))


@pytest.mark.gpu
def test_a_wrong_tensor_map_argument_is_refused(device: str) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(tma_copy_by_value(), target="cuda")
    b = torch.zeros((ROWS, COLS), device=device)
    with pytest.raises(TypeError, match="TM.*128-byte"):
        ex(b, b)
    with pytest.raises(TypeError, match="TM.*128-byte"):
        ex(b"\0" * 64, b)


@pytest.mark.gpu
@pytest.mark.parametrize(("n", "dtype", "box"), [(128, "float32", 128), (100, "float16", 64),
                                                 (256, "float8_e4m3fn", 256)])
def test_a_one_dimensional_tensor_map_is_encoded(n: int, dtype: str, box: int,
                                                 device: str) -> None:
    # a 1-D map has no global strides; the driver refused the empty list (seen on the H100)
    torch = pytest.importorskip("torch")
    from tvm_backend_cuda.runtime import encode_tiled_tensor_map

    tdt = {"float32": torch.float32, "float16": torch.float16,
           "float8_e4m3fn": torch.float8_e4m3fn}[dtype]
    a = torch.zeros(n, device=device).to(tdt)
    tmap = encode_tiled_tensor_map(a.data_ptr(), (n,), (1,), dtype, (box,), 0,
                                   what="A", emulated=device == "cpu")
    assert tmap is not None
