"""The CUDA call path without a GPU: tensor maps derived at launch, the arch that target
``cuda`` resolves to, the stream rule, and the checks a derived tensor map makes before the
driver sees it. (On the GPU: test_gpu_call_path.py.)"""

from __future__ import annotations

import pathlib
import sys
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import TVMError
from tvm.runtime.launch_plan import ARRAY, DERIVED, LaunchPlan
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_cuda import executable as cuda_exe
from tvm_backend_cuda import runtime as rt
from tvm_backend_cuda import streams
from tvm_backend_cuda.plugin import register_backend

register_backend()  # a source checkout on PYTHONPATH has no entry point

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from lang_kernels import tma_kernel  # noqa: E402

from tvm_backend_cuda.kernels import add_func, gemm_func  # noqa: E402

H100 = {"kind": "cuda", "arch": "sm_90a"}


# -- tensor maps derived at launch ----------------------------------------------------------------


def test_gemm_takes_only_its_arrays() -> None:
    ex = tvm.compile(gemm_func(256, 512, 128, arch="sm_90a"), target=H100)
    func = ex.get_function(ex.entry_name)
    assert [s.name for s in func.specs] == ["A", "B", "C"]
    assert ex.meta["tensor_maps"] == {}  # no T.TensorMap parameter for the caller to encode
    [step] = func.plan.steps
    # one map per global buffer: A and B in (BM, BK) and (BN, BK) boxes, C in 64-column blocks
    assert [list(a) for a in step.args] == [
        [DERIVED, 0, "cuda.tensor_map", ["bfloat16", 3, 2, 128, 64]],
        [DERIVED, 1, "cuda.tensor_map", ["bfloat16", 3, 2, 256, 64]],
        [DERIVED, 2, "cuda.tensor_map", ["bfloat16", 3, 2, 64, 64]],
    ]
    src = ex.inspect_source()
    assert ("gemm_sm90_kernel(const __grid_constant__ CUtensorMap A_tensor_map, "
            "const __grid_constant__ CUtensorMap B_tensor_map1, "
            "const __grid_constant__ CUtensorMap C_tensor_map2)") in src


def test_fp8_gemm_takes_its_scales_between_the_arrays() -> None:
    # one-element float32 arrays, as torch._scaled_mm takes them (a CUDA graph may capture a
    # call whose scales change between replays)
    ex = tvm.compile(gemm_func(256, 256, 256, "float8_e4m3fn", arch="sm_90a"), target=H100)
    func = ex.get_function(ex.entry_name)
    assert [s.name for s in func.specs] == ["A", "B", "scale_a", "scale_b", "C"]
    kinds = [a[0] for a in func.plan.steps[0].args]
    # the kernel's parameters: the two scale pointers, then the maps of A, B and C
    assert kinds == [ARRAY, ARRAY, DERIVED, DERIVED, DERIVED]


def test_copies_of_one_buffer_with_one_box_share_a_map() -> None:
    ex = tvm.compile(tma_kernel(derived=True), target=H100)
    [step] = ex.get_function(ex.entry_name).plan.steps
    assert [(a[0], a[1]) for a in step.args] == [(DERIVED, 0), (DERIVED, 1)]
    assert ex.inspect_source().count("const __grid_constant__ CUtensorMap") == 2


def test_the_derived_plan_survives_export(tmp_path: pathlib.Path) -> None:
    ex = tvm.compile(tma_kernel(derived=True), target=H100)
    path = ex.export_library(tmp_path / "tma.tvmexe")
    back = tvm.runtime.load_module(path)
    assert back.get_function(back.entry_name).plan == ex.get_function(ex.entry_name).plan


@no_type_check
def test_a_map_of_a_reshaped_view_is_refused() -> None:
    @T.prim_func
    def k(A: T.Buffer((128, 128), "bfloat16"), B: T.Buffer((128, 128), "bfloat16")):
        T.device_entry()
        tx = T.thread_id([128])
        A2 = T.decl_buffer((64, 256), "bfloat16", data=A.data)
        S = T.alloc_buffer((64, 64), "bfloat16", scope="shared.dyn", align=128)
        bar = T.alloc_buffer((1,), "uint64", scope="shared.dyn", align=8)
        Tx.cta.copy_async(S, A2[0:64, 0:64], dispatch="tma", config={"mbar": bar[0]})
        Tx.cta.copy(B[0:64, 0:64], S)

    with pytest.raises(Exception, match=r"derived from a view of parameter A with shape "
                                        r"\[64, 256\], but the argument has shape \[128, 128\]"):
        tvm.compile(k, target=H100)


def test_a_plan_with_a_derived_argument_needs_a_runtime_that_derives() -> None:
    ex = tvm.compile(tma_kernel(derived=True), target=H100)
    plan: LaunchPlan = ex.get_function(ex.entry_name).plan
    np = pytest.importorskip("numpy")
    a = np.zeros((128, 128), dtype=np.uint16)  # the checker takes any array of the right size

    class BF16:  # a host array the argument checker accepts as bfloat16
        def __init__(self, arr: Any) -> None:
            self.arr = arr
            self.shape = arr.shape
            self.dtype = "bfloat16"

    with pytest.raises(TVMError, match="takes a cuda.tensor_map derived from argument #0"):
        plan._bind_step(plan.steps[0], [BF16(a), BF16(a)], {})
    seen = []
    bound = plan._bind_step(plan.steps[0], [a, a], {},
                            lambda kind, arr, params: seen.append((kind, params)) or kind)
    assert bound.args == ["cuda.tensor_map", "cuda.tensor_map"]
    assert seen[0] == ("cuda.tensor_map", ["bfloat16", 3, 2, 64, 64])


@pytest.mark.parametrize("ptr, shape, strides, dtype, match", [
    (0x1008, (64, 64), (64, 1), "bfloat16", "16-byte aligned address; the array starts at 0x1008"),
    (0x1000, (64, 4), (4, 1), "bfloat16", r"multiple of 16 bytes; .* strides \[8\] bytes"),
    (0x1000, (64, 64), (1, 64), "bfloat16", "reads the innermost dim contiguously"),
    (0x1000, (64, 64), (64, 1), "complex64", "TMA has no element type for complex64"),
    (0x1000, (1, 1, 1, 1, 1, 2), (2, 2, 2, 2, 2, 1), "float32", "1 to 5 dims"),
])
def test_tensor_map_checks_name_the_rule(ptr: int, shape: tuple[int, ...],
                                         strides: tuple[int, ...], dtype: str, match: str) -> None:
    box = [1] * (len(shape) - 1) + [min(shape[-1], 64)]
    with pytest.raises(ValueError, match=f"gemm: argument 'A': .*{match}"):
        rt.encode_tiled_tensor_map(ptr, shape, strides, dtype, box, 3,
                                   what="gemm: argument 'A'")


def test_an_unknown_derived_kind_says_what_to_do() -> None:
    with pytest.raises(ValueError, match="derives no 'cuda.im2col'.*newer tvm-backend-cuda"):
        rt.derive("cuda.im2col", object(), [])


# -- the arch of target "cuda" ----------------------------------------------------------------------


@pytest.fixture
def gpu_arch(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Pretend the GPU of this process has ``arch`` (None: no GPU)."""

    def set_arch(arch: str | None) -> None:
        monkeypatch.setattr(cuda_exe, "_device_arch", lambda: arch)

    return set_arch


def test_cuda_without_a_gpu_builds_for_the_documented_default(gpu_arch: Any) -> None:
    gpu_arch(None)
    ex = tvm.compile(tma_kernel(derived=True), target={"kind": "cuda", "arch": "sm_90a"})
    assert ex.arch == "sm_90a"
    with pytest.raises(Exception) as err:
        tvm.compile(tma_kernel(derived=True), target="cuda")
    assert cuda_exe.DEFAULT_ARCH == "sm_80"
    assert ("TMA needs sm_90 or newer; the target's arch is sm_80 (compile with "
            "target={'kind': 'cuda', 'arch': 'sm_90a'} or target='nvidia/nvidia-h100')"
            ) in str(err.value)


def test_cuda_means_the_gpu_of_this_process(gpu_arch: Any) -> None:
    gpu_arch("sm_90a")
    ex = tvm.compile(gemm_func(256, 256, 64), target="cuda")  # wgmma needs sm_90a
    assert ex.arch == "sm_90a"
    assert "wgmma.mma_async" in ex.inspect_source()
    # what lowering sees is what codegen sees
    lowered = tvm.driver.lower(tma_kernel(derived=True), "cuda")
    targets = {str(f.attrs["target"].attrs["arch"]) for f in lowered.functions.values()}
    assert targets == {"sm_90a"}


def test_the_arch_option_wins_over_the_gpu_and_the_tag(gpu_arch: Any) -> None:
    gpu_arch("sm_90a")
    builder = tvm.backend.contract.get_builder("cuda")
    opts = builder.options_type.parse(tvm.target.Target("cuda"), {"arch": "sm_100a"})
    assert builder.resolve_target(tvm.target.Target("cuda"), opts).attrs["arch"] == "sm_100a"
    tagged = tvm.target.Target("nvidia/nvidia-h100")
    assert builder.resolve_target(tagged) is tagged  # already settled: unchanged, tag kept
    moved = builder.resolve_target(tagged, opts)
    assert moved.attrs["arch"] == "sm_100a" and moved.tag is None
    ex = tvm.compile(tma_kernel(derived=True), target="cuda", arch="sm_100a")
    assert ex.arch == "sm_100a"


def test_doctor_says_what_cuda_resolves_to(gpu_arch: Any) -> None:
    from tvm import _doctor

    gpu_arch(None)
    text = _doctor.format_report(_doctor.collect())
    assert "target 'cuda' builds here with: arch=sm_80" in text


# -- the stream rule --------------------------------------------------------------------------------


def test_launch_stream_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    wrapped: list[int] = []
    monkeypatch.setattr(streams, "_STREAM_BY_HANDLE", {})
    monkeypatch.setattr(streams, "_wrap_stream", lambda h: wrapped.append(h) or f"stream {h}")
    monkeypatch.setattr(streams, "_TORCH_RAW_STREAM", lambda dev: 1000 + dev)
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or object())
    assert rt.launch_stream(1) == "stream 1001"  # torch imported: its current stream
    assert rt.launch_stream(0, 77) == "stream 77"  # stream= wins
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.setattr(streams, "_DEFAULT_STREAMS", {2: "default stream of device 2"})
    assert rt.launch_stream(2) == "default stream of device 2"  # else cuda.core's default
    assert wrapped == [1001, 77]


# -- the fast call, with the driver replaced by recorders --------------------------------------------


class _FakeTensor:
    """What the fast call reads of a CUDA torch tensor (the guard cannot be built for it, so the
    Python checks run on every call)."""

    def __init__(self, torch: Any, shape: tuple[int, ...], dtype: Any, ptr: int) -> None:
        self.shape, self.dtype, self._ptr = torch.Size(shape), dtype, ptr
        self.is_cuda = True

    def data_ptr(self) -> int:
        return self._ptr

    def is_contiguous(self) -> bool:
        return True

    def get_device(self) -> int:
        return 0


class _FakeKernel:
    handle = 4242


def _fast_call_with_recorders(ex: Any, torch: Any, monkeypatch: pytest.MonkeyPatch
                              ) -> tuple[Any, dict[str, list[Any]]]:
    from cuda.bindings import driver

    from tvm_backend_cuda import fast_call

    seen: dict[str, list[Any]] = {"cu": [], "core": [], "maps": [], "full": []}
    func = ex.get_function(ex.entry_name)
    func._launches = func._build_launches()
    for launch in func._launches:
        loaded = launch.kernel._loaded[0] = rt._Loaded(_FakeKernel(), None)
        loaded.smem_limit = 0  # not opted in to its shared memory yet
    monkeypatch.setattr(rt._TLS, "device", 0, raising=False)
    monkeypatch.setattr(streams, "_TORCH_RAW_STREAM", lambda dev: 7)
    monkeypatch.setitem(streams._STREAM_BY_HANDLE, 7, "torch's stream")
    monkeypatch.setattr(streams, "_explicit_stream", lambda s: type("S", (), {"handle": s})())
    monkeypatch.setattr(streams, "_LAUNCH", lambda *a: seen["core"].append(a))
    monkeypatch.setattr(driver, "cuLaunchKernel",
                        lambda *a: seen["cu"].append(a) or (driver.CUresult.CUDA_SUCCESS,))

    def fake_map(array: Any, params: Any, *, what: str) -> Any:
        seen["maps"].append((array.data_ptr(), tuple(params), what))
        return rt._RawParam(bytes(128))

    monkeypatch.setattr(rt, "derived_tensor_map", fake_map)
    plan = func._prepare_fast()
    assert plan, "the function should take the fast path"
    launches = [fast_call.prepare_launch(x, func.specs) for x in func._launches]
    fast = fast_call.make_fast_call(tuple(plan), tuple(func._align), launches, _FakeTensor,
                                   func.specs, func.name,
                                   full=lambda args, stream: seen["full"].append((args, stream)))
    tensors = [_FakeTensor(torch, shape, dtype, 0x100000 * (i + 1))
               for i, (_, dtype, shape) in enumerate(plan)]
    if any(x.smem > 0 for x in func._launches):
        assert not fast(tuple(tensors), None)  # the full path first opts the kernel in
    for launch in func._launches:
        launch.kernel._loaded[0].smem_limit = 1 << 20
    assert not seen["cu"] and not seen["core"]
    return fast, seen


def _gemm_fast_call(torch: Any, monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[Any, dict[str, list[Any]], tuple[Any, ...]]:
    """The fast call of a 256 x 512 x 128 GEMM with recorders, and its tensors A, B and two Cs."""
    ex = tvm.compile(gemm_func(256, 512, 128, arch="sm_90a"), target=H100)
    fast, seen = _fast_call_with_recorders(ex, torch, monkeypatch)
    bf16 = torch.bfloat16
    a, b = _FakeTensor(torch, (256, 128), bf16, 0x10000), _FakeTensor(torch, (512, 128), bf16, 0x20000)
    c1, c2 = (_FakeTensor(torch, (256, 512), bf16, p) for p in (0x30000, 0x40000))
    return fast, seen, (a, b, c1, c2)


def test_fast_call_of_a_tensor_map_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    fast, seen, (a, b, c1, c2) = _gemm_fast_call(torch, monkeypatch)
    assert fast((a, b, c1), None) and fast((a, b, c1), None) and fast((a, b, c2), None)
    assert fast((a, b, c1), 99)  # stream=
    # one parameter block per pointer set: its maps encoded once
    assert [m[0] for m in seen["maps"]] == [0x10000, 0x20000, 0x30000, 0x10000, 0x20000, 0x40000]
    assert seen["maps"][2][1] == ("bfloat16", 3, 2, 64, 64)
    assert "gemm_sm90: argument 'C'" in seen["maps"][2][2]
    assert len(seen["cu"]) == 4 and not seen["core"]
    fn, *dims, stream, params, extra = seen["cu"][0]
    assert int(fn) == 4242 and dims[3:6] == [384, 1, 1] and stream == 7 and extra == 0
    assert seen["cu"][1][-2] == params != seen["cu"][2][-2]  # the cached block, then a new one
    assert seen["cu"][3][-3] == 99 and seen["cu"][3][-2] == params
    # anything else goes to the full path, which raises core's errors
    assert not fast((a, b), None)
    assert not fast((a, b, _FakeTensor(torch, (256, 511), torch.bfloat16, 0x50000)), None)
    assert not fast((a, b, _FakeTensor(torch, (256, 512), torch.float16, 0x50000)), None)


def test_fast_call_of_an_array_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(add_func(4096, "float32"), target={"kind": "cuda", "arch": "sm_80"})
    fast, seen = _fast_call_with_recorders(ex, torch, monkeypatch)
    t = [_FakeTensor(torch, (4096,), torch.float32, 0x1000 * (i + 1)) for i in range(3)]
    assert fast(tuple(t), None) and fast(tuple(t), 5)
    assert not seen["cu"] and not seen["maps"]
    (s0, _, k0, *p0), (s1, _, _, *p1) = seen["core"]
    assert s0 == "torch's stream" and s1.handle == 5 and k0.handle == 4242
    assert p0 == p1 == [0x1000, 0x2000, 0x3000]
    assert not fast((t[0], t[1], _FakeTensor(torch, (4096,), torch.float32, 0x3004)), None)
    # the call itself (``ex(*args, stream=None)`` once prepared): the same work, the full call
    # (with the arguments as given) wherever the fast call says no
    call = fast.direct
    assert call(*t) is None and call(*t, stream=5) is None and not seen["full"]
    assert [a[0] for a in seen["core"][2:]] == ["torch's stream", seen["core"][3][0]]
    assert seen["core"][3][0].handle == 5 and seen["core"][3][3:] == (0x1000, 0x2000, 0x3000)
    odd = _FakeTensor(torch, (4096,), torch.float32, 0x3004)
    assert call(t[0], t[1], odd, stream=5) is None and call(t[0]) is None
    assert seen["full"] == [((t[0], t[1], odd), 5), ((t[0],), None)]
    assert len(seen["core"]) == 4


def test_hot_call_of_an_array_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(add_func(4096, "float32"), target={"kind": "cuda", "arch": "sm_80"})
    fast, seen = _fast_call_with_recorders(ex, torch, monkeypatch)
    t = [_FakeTensor(torch, (4096,), torch.float32, 0x1000 * (i + 1)) for i in range(3)]
    # the tensor guard torch builds from real tensors, stood in for by one accepting these
    fast.guard[:] = [lambda *a: all(isinstance(x, _FakeTensor) for x in a), 0]
    call = fast.hot(tuple(t))
    assert call is not None and call(*t) is None
    assert seen["core"] == [("torch's stream", seen["core"][0][1], seen["core"][0][2],
                             0x1000, 0x2000, 0x3000)] and seen["core"][0][2].handle == 4242
    # a stream argument, a wrong count, another kind of argument, a misaligned pointer: the
    # general call, with the arguments as given
    assert call(*t, stream=5) is None and seen["core"][1][0].handle == 5
    odd = _FakeTensor(torch, (4096,), torch.float32, 0x3004)
    assert call(t[0]) is None and call(t[0], t[1], 3.0) is None
    assert call(t[0], t[1], odd) is None
    assert seen["full"] == [((t[0],), None), ((t[0], t[1], 3.0), None), ((t[0], t[1], odd), None)]
    monkeypatch.setattr(rt._TLS, "device", 1)  # another device's context current: general
    assert call(*t) is None and seen["full"][-1] == (tuple(t), None) and len(seen["core"]) == 2
    fast.guard[:] = [lambda *a: False, 0]  # tensors the guard refuses fit no hot call
    assert fast.hot(tuple(t)) is None


def test_hot_call_of_a_tensor_map_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    fast, seen, (a, b, c1, c2) = _gemm_fast_call(torch, monkeypatch)
    fast.guard[:] = [lambda *x: all(isinstance(y, _FakeTensor) for y in x), 0]
    call = fast.hot((a, b, c1))
    # a new pointer set goes through the general call (which encodes the maps), a known one
    # launches from the cached parameter block
    assert call(a, b, c1) is None and call(a, b, c1) is None and call(a, b, c2) is None
    assert [m[0] for m in seen["maps"]] == [0x10000, 0x20000, 0x30000, 0x10000, 0x20000, 0x40000]
    assert len(seen["cu"]) == 3 and not seen["core"] and not seen["full"]
    assert seen["cu"][0][-2] == seen["cu"][1][-2] != seen["cu"][2][-2]
    fn, *dims, stream, _, extra = seen["cu"][1]
    assert int(fn) == 4242 and dims[3:6] == [384, 1, 1] and stream == 7 and extra == 0


@pytest.fixture
def c_recorder(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The C launcher, built, calling a recorder instead of the driver's cuLaunchKernel."""
    from test_c_launcher import Recorder

    from tvm_backend_cuda import c_launcher

    if c_launcher.launcher_type() is None:
        pytest.skip(f"the C launcher cannot be built here: {c_launcher.status()}")
    rec = Recorder(3)
    monkeypatch.setattr(c_launcher, "cu_launch_kernel_address", lambda: rec.address)
    return rec


def test_hot_call_launches_through_the_c_launcher(monkeypatch: pytest.MonkeyPatch,
                                                  c_recorder: Any) -> None:
    torch = pytest.importorskip("torch")
    ex = tvm.compile(add_func(4096, "float32"), target={"kind": "cuda", "arch": "sm_80"})
    fast, seen = _fast_call_with_recorders(ex, torch, monkeypatch)
    t = [_FakeTensor(torch, (4096,), torch.float32, 0x1000 * (i + 1)) for i in range(3)]
    fast.guard[:] = [lambda *a: all(isinstance(x, _FakeTensor) for x in a), 0]
    call = fast.hot(tuple(t))
    assert call(*t) is None and not seen["core"] and not seen["cu"]
    (launch,) = c_recorder.calls
    launches = ex.get_function(ex.entry_name)._launches
    assert launch["f"] == 4242 and launch["stream"] == 7  # torch's raw stream, no lookup
    assert launch["values"] == [0x1000, 0x2000, 0x3000]
    assert launch["grid"] == rt._dim3(launches[0].grid, "grid") and launch["block"][0] > 0
    # what the hot call does not take goes to the general call, as before
    odd = _FakeTensor(torch, (4096,), torch.float32, 0x3004)
    assert call(t[0], t[1], odd) is None and seen["full"] == [((t[0], t[1], odd), None)]
    # the driver's error, named
    c_recorder.result = 1  # CUDA_ERROR_INVALID_VALUE
    with pytest.raises(RuntimeError, match="cuLaunchKernel of .* failed: CUDA_ERROR_INVALID_VALUE"):
        call(*t)


def test_hot_call_of_a_tensor_map_kernel_through_the_c_launcher(
        monkeypatch: pytest.MonkeyPatch, c_recorder: Any) -> None:
    torch = pytest.importorskip("torch")
    fast, seen, (a, b, c1, c2) = _gemm_fast_call(torch, monkeypatch)
    fast.guard[:] = [lambda *x: all(isinstance(y, _FakeTensor) for y in x), 0]
    call = fast.hot((a, b, c1))
    c_recorder.nread = 0  # the parameters are 128-byte tensor maps
    assert call(a, b, c1) is None and call(a, b, c1) is None and call(a, b, c2) is None
    # the first call of a pointer set encodes its maps (the general call, through the driver
    # binding); a known set launches its cached parameter block through the C launcher
    assert [m[0] for m in seen["maps"]] == [0x10000, 0x20000, 0x30000, 0x10000, 0x20000, 0x40000]
    assert len(seen["cu"]) == 2 and len(c_recorder.calls) == 1
    (launch,) = c_recorder.calls
    assert launch["params"] == int(seen["cu"][0][-2]) and launch["stream"] == 7
    assert launch["f"] == 4242 and launch["block"] == (384, 1, 1)


def test_hot_call_hands_the_tensors_to_the_c_tensor_launcher(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """With torch's DLPack C exchange API the hot call makes one C call: the tensor launcher
    (test_c_launcher.py) checks the tensors, reads pointers and stream, and launches. Its three
    answers: 0 launched, -1 the general call, > 0 the driver's error, named."""
    torch = pytest.importorskip("torch")
    from tvm_backend_cuda import fast_call

    made: list[tuple[Any, ...]] = []
    answers: list[int] = []
    calls: list[tuple[Any, ...]] = []

    def c_call(*tensors: Any) -> int:
        calls.append(tensors)
        return answers.pop(0)

    def make(single: Any, kernel: Any, tensors: Any, aligns: Any, raw: Any) -> Any:
        made.append((kernel.handle, tensors, aligns, raw))
        return c_call

    monkeypatch.setattr(fast_call, "_c_tensor_launcher", make)
    ex = tvm.compile(add_func(4096, "float32"), target={"kind": "cuda", "arch": "sm_80"})
    fast, seen = _fast_call_with_recorders(ex, torch, monkeypatch)
    t = [_FakeTensor(torch, (4096,), torch.float32, 0x1000 * (i + 1)) for i in range(3)]
    fast.guard[:] = [lambda *a: True, 0]
    call = fast.hot(tuple(t))
    ((handle, tensors, aligns, raw),) = made
    assert handle == 4242 and tensors == tuple(t) and raw is None
    assert len(aligns) == 3 and all(al >= 1 and al & (al - 1) == 0 for al in aligns)
    answers[:] = [0, -1, 1]
    assert call(*t) is None and calls == [tuple(t)] and not seen["core"] and not seen["full"]
    # -1: the general call (whose own checks pass these, so it launches with cuda.core)
    assert call(*t) is None and len(seen["core"]) == 1 and not seen["full"]
    with pytest.raises(RuntimeError, match="cuLaunchKernel of .* failed: CUDA_ERROR_INVALID_VALUE"):
        call(*t)
    # a stream argument never reaches the C call; a missing argument reaches it as a marker
    # (no tensor: the real launcher says -1) and the general call names what is missing
    n = len(calls)
    call(*t, stream=5)
    assert len(calls) == n and len(seen["core"]) == 2 and seen["core"][-1][0].handle == 5
    answers[:] = [-1]
    call(t[0], t[1])
    assert calls[-1][:2] == (t[0], t[1]) and calls[-1][2] is fast_call._MISSING
    assert seen["full"] == [((t[0], t[1]), None)]


def test_a_device_tvm_tensor_gives_its_pointer_without_parsing_the_typestr() -> None:
    # float8_e5m2's typestr "<f1" is one cuda.core cannot parse (seen on the H100): the pointer
    # comes from the device array the tensor holds
    from tvm_backend_cuda.pointers import _pointer

    class DeviceArray:  # what tvm.runtime.tensor(..., tvm.cuda(0)) holds on a GPU
        ptr, device_id = 0x7F0000001000, 0
        __cuda_array_interface__ = {"shape": (8,), "typestr": "<f1", "data": (ptr, False),
                                    "strides": None, "version": 3}

    t = tvm.runtime.DeviceTensor(DeviceArray(), (8,), "float8_e5m2", tvm.cuda(0))
    assert _pointer(t, 0, "A") == (0x7F0000001000, 0, 0)
    # and a tensor map derived from it reads the same geometry (seen on the H100 too)
    from tvm_backend_cuda.tensor_map import array_geometry

    t2 = tvm.runtime.DeviceTensor(DeviceArray(), (2, 4), "float8_e5m2", tvm.cuda(0))
    assert array_geometry(t2) == (0x7F0000001000, (2, 4), (4, 1), 0)
    host = tvm.runtime.DeviceTensor(np.zeros(8, "float32"), (8,), "float32", tvm.cuda(0))
    with pytest.raises(ValueError, match=r"parameter 'A' \(#0\) is a tvm tensor in host memory"):
        _pointer(host, 0, "A")
