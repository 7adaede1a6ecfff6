"""tvm.torch.custom_op on the host target with a CPU torch: eager calls against numpy, the
schema and the fake implementation, torch.compile(fullgraph=True) with no graph break (one test
through inductor, the others through aot_eager: the same tracing, no C++ build of torch's own
code), in-place outputs (mutates_args), factories over several shapes, several outputs, and the
errors. ``import tvm.torch`` does not import torch."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.script import tirx as T

torch = pytest.importorskip("torch")
import tvm.torch as tt  # noqa: E402


@no_type_check
def axpb_func(n: int, dtype: str = "float32") -> Any:
    """``C = A * 3 + B`` over ``n`` elements."""

    @T.prim_func
    def axpb(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
        for i in range(n):
            C[i] = A[i] * T.float32(3) + B[i]

    return axpb


@no_type_check
def _scale_inplace() -> Any:
    @T.prim_func
    def scale(alpha: T.float32, X: T.Buffer((16,), "float32")):
        for i in range(16):
            X[i] = X[i] * alpha

    return scale


@no_type_check
def _split() -> Any:
    @T.prim_func
    def split(X: T.Buffer((8,), "float32"), Lo: T.Buffer((4,), "float32"),
              Hi: T.Buffer((4,), "int32")):
        for i in range(4):
            Lo[i] = X[i]
            Hi[i] = T.Cast("int32", X[i + 4])

    return split


@pytest.fixture(scope="module")
def axpb() -> Any:
    return tt.custom_op("tvmtest::axpb", axpb_func(64))


def test_eager_call_matches_numpy(axpb: Any) -> None:
    a, b = torch.randn(64), torch.randn(64)
    np.testing.assert_allclose(axpb(a, b).numpy(), a.numpy() * 3 + b.numpy(), rtol=1e-6)
    assert str(torch.ops.tvmtest.axpb.default._schema) == \
        "tvmtest::axpb(Tensor A, Tensor B) -> Tensor"


def test_fake_implementation_gives_shape_and_dtype(axpb: Any) -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out = torch.ops.tvmtest.axpb(torch.empty(64), torch.empty(64))
    assert out.shape == (64,) and out.dtype == torch.float32


def test_under_torch_compile_fullgraph_inductor(axpb: Any) -> None:
    def f(a: Any, b: Any) -> Any:
        return torch.relu(axpb(a, b)) + 1

    a, b = torch.randn(64), torch.randn(64)
    explain = torch._dynamo.explain(f)(a, b)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    compiled = torch.compile(f, fullgraph=True, dynamic=False)
    np.testing.assert_allclose(compiled(a, b).numpy(), f(a, b).numpy(), rtol=1e-6)


def test_mutating_op_under_torch_compile() -> None:
    op = tt.custom_op("tvmtest::scale_", _scale_inplace(), mutates_args=("X",))
    assert str(torch.ops.tvmtest.scale_.default._schema) == \
        "tvmtest::scale_(float alpha, Tensor(a1!) X) -> ()"
    x = torch.arange(16, dtype=torch.float32)
    assert op(2.0, x) is None
    assert torch.equal(x, torch.arange(16, dtype=torch.float32) * 2)

    def f(x: Any) -> Any:
        y = x + 1
        op(0.5, y)
        return y

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=False)
    x = torch.arange(16, dtype=torch.float32)
    assert torch.equal(compiled(x), (x + 1) * 0.5)


def test_factory_for_every_shape() -> None:
    op = tt.custom_op("tvmtest::axpb_any", axpb_func,
                      args=lambda a, b: (a.shape[0], tt.dtype_name(a.dtype)),
                      example=(8, "float32"))
    for n in (8, 24):
        a, b = torch.randn(n), torch.randn(n)
        assert torch.allclose(op(a, b), a * 3 + b)
    compiled = torch.compile(lambda a, b: op(a, b) * 2, fullgraph=True, backend="aot_eager",
                             dynamic=False)
    a, b = torch.randn(40), torch.randn(40)
    assert torch.allclose(compiled(a, b), (a * 3 + b) * 2)


def test_several_outputs() -> None:
    op = tt.custom_op("tvmtest::split", _split(), outputs=2)
    assert str(torch.ops.tvmtest.split.default._schema) == \
        "tvmtest::split(Tensor X) -> (Tensor, Tensor)"
    lo, hi = op(torch.arange(8, dtype=torch.float32) + 0.5)
    assert lo.tolist() == [0.5, 1.5, 2.5, 3.5] and hi.tolist() == [4, 5, 6, 7]
    assert hi.dtype == torch.int32


def test_errors_say_what_is_wrong() -> None:
    f = axpb_func(8)
    with pytest.raises(ValueError, match="the name 'axpb' must be 'namespace::op'"):
        tt.custom_op("axpb", f)
    with pytest.raises(ValueError, match=r"mutates_args names 'D', which is not a parameter "
                                         r"\(\['A', 'B', 'C'\]\)"):
        tt.custom_op("tvmtest::bad1", f, mutates_args=("D",))
    with pytest.raises(ValueError, match="give outputs= or mutates_args=, not both"):
        tt.custom_op("tvmtest::bad2", f, outputs=1, mutates_args=("C",))
    with pytest.raises(ValueError, match=r"outputs=4, but the kernel has 3 buffer parameters"):
        tt.custom_op("tvmtest::bad3", f, outputs=4)
    with pytest.raises(TypeError, match="a factory needs args="):
        tt.custom_op("tvmtest::bad4", axpb_func)
    with pytest.raises(TypeError, match="expected a PrimFunc or a factory of one, got int"):
        tt.custom_op("tvmtest::bad5", 3)


def test_a_device_without_a_target_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    op = tt.custom_op("tvmtest::no_target", axpb_func(8))
    monkeypatch.setitem(tt.DEVICE_TARGETS, "cpu", None)
    with pytest.raises(ValueError, match="no tvm target for tensors on cpu; pass target="):
        op(torch.randn(8), torch.randn(8))


def test_symbolic_output_shape_is_refused() -> None:
    @T.prim_func
    def copy(a: T.handle, c: T.handle):  # type: ignore[no-untyped-def]
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i]

    op = tt.custom_op("tvmtest::copy_sym", copy)
    with pytest.raises(TypeError, match="output 'C' has the symbolic shape"):
        op(torch.randn(4))


def test_import_tvm_torch_does_not_import_torch() -> None:
    probe = "import sys, tvm, tvm.torch; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False"]
    assert tvm.torch is tt
