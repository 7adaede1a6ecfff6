"""The C launcher of the hot call (c_launcher.py): built with the system C compiler, it calls
the function at the address it was given with the kernel's sizes, the stream and a parameter
array. Here that function is a recorder (a ctypes callback with cuLaunchKernel's signature), so
what the driver would receive is checked without a GPU."""

from __future__ import annotations

import ctypes
import sysconfig
from typing import Any

import pytest

from tvm_backend_cuda import c_launcher

_PROTO = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


class Recorder:
    """A stand-in for cuLaunchKernel that records each launch and reads ``nread`` 8-byte
    parameters; it returns ``result``."""

    def __init__(self, nread: int, result: int = 0) -> None:
        self.calls: list[dict[str, Any]] = []
        self.nread, self.result = nread, result
        self.callback = _PROTO(self._record)  # kept alive as long as the recorder
        self.address = int(ctypes.cast(self.callback, ctypes.c_void_p).value or 0)

    def _record(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,
                stream: Any, params: Any, extra: Any) -> int:
        values = [ctypes.cast(params[i], ctypes.POINTER(ctypes.c_uint64))[0]
                  for i in range(self.nread)]
        self.calls.append({"f": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "smem": smem,
                           "stream": stream or 0, "values": values, "extra": bool(extra),
                           "params": ctypes.addressof(params.contents)})
        return self.result


@pytest.fixture
def built() -> Any:
    kind = c_launcher.launcher_type()
    if kind is None:
        pytest.skip(f"the C launcher cannot be built here: {c_launcher.status()}")
    return kind


def test_a_launch_passes_sizes_stream_and_pointers(built: Any) -> None:
    rec = Recorder(3)
    launch = c_launcher.make_launcher(0xABC0, (4, 2, 1), (128, 1, 1), 49152, 3,
                                      launch=rec.address)
    assert launch.nptrs == 3 and launch.dims == ((4, 2, 1), (128, 1, 1), 49152)
    assert launch(7, 0x1000, 0x2000, 2**64 - 1) == 0
    assert launch(0, 1, 2, 3) == 0  # stream 0: the default stream
    first, second = rec.calls
    assert first == {"f": 0xABC0, "grid": (4, 2, 1), "block": (128, 1, 1), "smem": 49152,
                     "stream": 7, "values": [0x1000, 0x2000, 2**64 - 1], "extra": False,
                     "params": first["params"]}
    assert second["stream"] == 0 and second["values"] == [1, 2, 3]


def test_a_launch_returns_the_drivers_result(built: Any) -> None:
    rec = Recorder(1, result=700)  # CUDA_ERROR_ILLEGAL_ADDRESS
    launch = c_launcher.make_launcher(1, (1, 1, 1), (32, 1, 1), 0, 1, launch=rec.address)
    assert launch(5, 0x10) == 700 and len(rec.calls) == 1


def test_a_prebuilt_parameter_array_is_passed_as_is(built: Any) -> None:
    values = (ctypes.c_uint64 * 2)(11, 22)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(values), ctypes.addressof(values) + 8)
    rec = Recorder(2)
    launch = c_launcher.make_launcher(9, (2, 1, 1), (384, 1, 1), 1024, -1, launch=rec.address)
    assert launch(3, ctypes.addressof(params)) == 0
    (call,) = rec.calls
    assert call["params"] == ctypes.addressof(params) and call["values"] == [11, 22]
    assert call["stream"] == 3 and call["block"] == (384, 1, 1) and call["smem"] == 1024
    with pytest.raises(ValueError, match="the parameter array is NULL"):
        launch(3, 0)


def test_bad_calls_raise_before_the_driver_is_called(built: Any) -> None:
    rec = Recorder(2)
    launch = c_launcher.make_launcher(1, (1, 1, 1), (32, 1, 1), 0, 2, launch=rec.address)
    with pytest.raises(TypeError, match=r"takes 3 arguments \(the stream, then the pointers\), "
                                        r"got 2"):
        launch(1, 2)
    with pytest.raises(TypeError, match=r"argument #2 must be an int \(an address\), not float"):
        launch(1, 2, 3.0)
    with pytest.raises(OverflowError):
        launch(1, 2, -3)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        launch(1, 2, 3, stream=4)
    assert rec.calls == []
    with pytest.raises(ValueError, match=r"nptrs must be -1 \(a parameter array\) or 0..64"):
        c_launcher.make_launcher(1, (1, 1, 1), (32, 1, 1), 0, 65, launch=rec.address)
    with pytest.raises(ValueError, match="the address of cuLaunchKernel is NULL"):
        c_launcher.make_launcher(1, (1, 1, 1), (32, 1, 1), 0, 1, launch=0)


def test_it_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(c_launcher, "_state", {})
    monkeypatch.setenv("TVM_CUDA_C_LAUNCHER", "0")
    assert c_launcher.make_launcher(1, (1, 1, 1), (32, 1, 1), 0, 1, launch=1) is None
    assert c_launcher.status() == "not in use: off (TVM_CUDA_C_LAUNCHER=0)"


def test_without_python_headers_it_says_why(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Any) -> None:
    monkeypatch.setattr(c_launcher, "_state", {})
    monkeypatch.setattr(sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    assert c_launcher.launcher_type() is None
    assert c_launcher.status() == (f"not in use: OSError: this interpreter's headers are not "
                                   f"installed (no Python.h in {tmp_path}; e.g. the python3-dev "
                                   f"package)")


def test_a_compiler_error_leaves_cuda_core_to_launch(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Any) -> None:
    monkeypatch.setattr(c_launcher, "_state", {})
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", "false")  # a compiler that fails every build
    assert c_launcher.launcher_type() is None
    assert c_launcher.status().startswith("not in use: CompileError: ")


# -- the tensor launcher: tensors read through torch's DLPack C exchange API ----------------


@pytest.fixture
def torch_api(built: Any) -> Any:
    torch = pytest.importorskip("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip(f"torch {torch.__version__} has no DLPack C exchange API")
    return torch


def _tensor_launcher(torch: Any, rec: Recorder, tensors: tuple[Any, ...],
                     aligns: tuple[int, ...] | None = None, blocks: Any = None) -> Any:
    launch = c_launcher.make_tensor_launcher(0xF00, (3, 1, 1), (256, 1, 1), 512, tensors,
                                             aligns or (16,) * len(tensors), blocks,
                                             launch=rec.address)
    assert launch is not None, c_launcher.status()
    return launch


def test_a_tensor_launch_passes_each_tensors_address(torch_api: Any) -> None:
    torch = torch_api
    a, b, c = torch.randn(64, 8), torch.randn(64, 8), torch.empty(64, 8)
    rec = Recorder(3)
    launch = _tensor_launcher(torch, rec, (a, b, c))
    assert launch.ntensors == 3 and not launch.cached_blocks
    a2, b2, c2 = torch.randn(64, 8), torch.randn(64, 8), torch.empty(64, 8)
    assert launch(a2, b2, c2) == 0
    (call,) = rec.calls
    assert call["values"] == [a2.data_ptr(), b2.data_ptr(), c2.data_ptr()]
    # the CPU's work stream is NULL; on a GPU it is torch's current stream
    assert call["f"] == 0xF00 and call["grid"] == (3, 1, 1) and call["block"] == (256, 1, 1)
    assert call["smem"] == 512 and call["stream"] == 0


def test_a_view_with_an_offset_passes_its_own_address(torch_api: Any) -> None:
    torch = torch_api
    base = torch.randn(4, 64, 8)
    rec = Recorder(1)
    launch = _tensor_launcher(torch, rec, (base[0],))
    assert launch(base[2]) == 0
    assert rec.calls[0]["values"] == [base[2].data_ptr()] and base[2].data_ptr() != base.data_ptr()


@pytest.mark.parametrize("other", [
    "dtype", "shape", "strides", "rank", "subclass", "not_a_tensor", "misaligned", "count"])
def test_tensors_unlike_the_first_ones_are_not_launched(torch_api: Any, other: str) -> None:
    torch = torch_api
    a, b = torch.randn(64, 8), torch.randn(64, 8)
    rec = Recorder(2)
    launch = _tensor_launcher(torch, rec, (a, b))
    x = {
        "dtype": lambda: torch.randn(64, 8, dtype=torch.float64),
        "shape": lambda: torch.randn(8, 64),
        "strides": lambda: torch.randn(8, 64).t(),
        "rank": lambda: torch.randn(512),
        "subclass": lambda: torch.nn.Parameter(torch.randn(64, 8)),
        "not_a_tensor": lambda: 7,
        "misaligned": lambda: torch.randn(64 * 8 + 1)[1:].view(64, 8),
        "count": None,
    }[other]
    assert (launch(a) if x is None else launch(a, x())) == -1
    assert rec.calls == []
    assert launch(a, b) == 0 and len(rec.calls) == 1  # and the first ones still launch


def test_a_failed_launch_returns_the_drivers_result(torch_api: Any) -> None:
    torch = torch_api
    a = torch.randn(16)
    rec = Recorder(1, result=700)
    assert _tensor_launcher(torch, rec, (a,))(a) == 700 and len(rec.calls) == 1


def test_tensor_map_kernels_launch_with_the_block_cached_under_the_pointers(
        torch_api: Any) -> None:
    torch = torch_api
    a, b = torch.randn(32), torch.randn(32)
    values = (ctypes.c_uint64 * 2)(5, 6)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(values), ctypes.addressof(values) + 8)
    blocks: dict[Any, Any] = {}
    rec = Recorder(2)
    launch = _tensor_launcher(torch, rec, (a, b), blocks=blocks)
    assert launch.cached_blocks
    assert launch(a, b) == -1 and rec.calls == []  # not encoded yet: the general path's work
    blocks[(a.data_ptr(), b.data_ptr())] = (ctypes.addressof(params), params)
    assert launch(a, b) == 0
    (call,) = rec.calls
    assert call["params"] == ctypes.addressof(params) and call["values"] == [5, 6]
    assert launch(b, a) == -1  # another pointer set


def test_a_type_without_the_exchange_api_leaves_the_python_reads(built: Any,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    np = pytest.importorskip("numpy")
    monkeypatch.setitem(c_launcher._state, "tensors", None)
    got = c_launcher.make_tensor_launcher(1, (1, 1, 1), (32, 1, 1), 0, (np.zeros(4),), (1,),
                                          launch=Recorder(1).address)
    assert got is None
    assert c_launcher.status() == ("in use; tensors read in Python: ValueError: tensor launcher: "
                                   "numpy.ndarray has no DLPack C exchange API "
                                   "(__dlpack_c_exchange_api__; torch 2.10 or later has it)")
