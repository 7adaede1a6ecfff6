"""Errors raised while lowering a Tx call or an intrinsic point at the user's line, like parse
errors (file, line, caret), without the compiler's internal frames; warnings point there too."""

from __future__ import annotations

import inspect
import traceback
import warnings

import pytest

import tvm
from tvm.error import (
    CodegenError,
    DispatchError,
    LoweringError,
    LoweringTypeError,
    LoweringValueError,
    TVMError,
    located,
    warn,
)
from tvm.ir import Op, PrimFunc, Span
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive import register_dispatch


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVM_LOG_LEVEL", raising=False)


def line_of(text: str, fn) -> int:
    """The file line of the first line of ``fn``'s source containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def mismatched():
    @T.prim_func
    def mm(A: T.Buffer((32, 16), "float32"), B: T.Buffer((8, 32), "float32"),
           C: T.Buffer((32, 32), "float32")):
        Tx.gemm(C, A, B)

    return mm


def _frames(err: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(err.__traceback__)]


def test_dispatch_failure_points_at_the_call_with_its_table():
    # It used to be a bare RuntimeError after ~30 internal frames, with no file or line.
    with pytest.raises(DispatchError) as info:
        tvm.compile(mismatched(), target="c")
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, TVMError)
    line = line_of("Tx.gemm(C, A, B)", mismatched)
    assert (err.span.filename, err.span.line) == (__file__, line)
    text = str(err).splitlines()
    assert text[:4] == [
        f"{__file__}:{line}:9: error: TIRx schedule dispatch failed: op=tirx.tile.gemm target=c",
        "            Tx.gemm(C, A, B)",  # the file's line, indented by 4 as parse errors are
        "            ^~~~~~~~~~~~~~~~",
        "scope: thread",
    ]
    rows = [" ".join(line.split()) for line in text]  # cells padded to the widest reason
    assert "| fallback | -100 | * | declined | gemm shapes do not match: op(A) columns " \
           "vs op(B) rows (K) (16 vs 8) |" in rows
    # the user sees their own frame and the one re-raising frame, none of the compiler's
    assert _frames(err) == [__file__, tvm.error.__file__]


def test_debug_log_level_keeps_the_whole_traceback(monkeypatch):
    monkeypatch.setenv("TVM_LOG_LEVEL", "DEBUG")
    with pytest.raises(DispatchError) as info:
        tvm.compile(mismatched(), target="c")
    assert len(_frames(info.value)) > 10


def _fill_kernel():
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        Tx.fill(A, T.float32(1))

    return k


def test_errors_outside_dispatch_are_located_and_keep_their_kind(host_target):
    # A variant whose PrimFunc cannot bind to the call: a TypeError inside the lowering.
    x = tvm.ir.Buffer("X", [4, 4], "float32")
    p = tvm.ir.Var("p", "handle")
    register_dispatch("fill", "c", variant="bad_params", priority=100)(
        lambda call, sctx: PrimFunc([p], tvm.ir.Evaluate(0), {p: x}))
    with pytest.raises(LoweringTypeError) as info:
        tvm.compile(_fill_kernel(), target="c")
    err = info.value
    assert isinstance(err, TypeError) and isinstance(err, LoweringError)
    assert err.span.line == line_of("Tx.fill(A, T.float32(1))", _fill_kernel)
    assert str(err).splitlines()[0].endswith(
        "error: buffer parameter X has rank 2 but argument 0 has rank 1")
    assert str(err).splitlines()[1].strip() == "Tx.fill(A, T.float32(1))"


@pytest.fixture
def probe_op():
    op = Op.register("tirx.locate_ns.probe", category="device_intrin", namespace="locate_ns",
                     override=True)
    yield op


def _probe_kernel():
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        A[0] = T.call_intrin("float32", "tirx.locate_ns.probe", A[1])

    return k


def test_intrinsic_without_codegen_rule_is_located(probe_op):
    with pytest.raises(CodegenError) as info:
        tvm.compile(_probe_kernel(), target="c")
    err = info.value
    line = line_of('T.call_intrin("float32", "tirx.locate_ns.probe", A[1])', _probe_kernel)
    first, source, caret = str(err).splitlines()[:3]
    assert first == (f"{__file__}:{line}:16: error: op `tirx.locate_ns.probe` has no codegen rule "
                     "for target 'c': register one with Op.get('tirx.locate_ns.probe')"
                     ".set_codegen('c', rule) in the backend's tvm_register_ops hook")
    assert source.strip() == 'A[0] = T.call_intrin("float32", "tirx.locate_ns.probe", A[1])'
    call = 'T.call_intrin("float32", "tirx.locate_ns.probe", A[1])'
    assert caret == " " * (4 + 15) + "^" + "~" * (len(call) - 1)
    assert _frames(err) == [__file__, tvm.error.__file__]


def test_intrinsic_rule_rejecting_a_dtype_is_located(probe_op):
    def rule(cg, call, args):
        raise ValueError(f"probe takes float16, got {call.args[0].dtype}")

    probe_op.set_codegen("c", rule)
    with pytest.raises(LoweringValueError) as info:
        tvm.compile(_probe_kernel(), target="c")
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err).splitlines()[0].endswith("error: probe takes float16, got float32")
    assert err.span.line == line_of("tirx.locate_ns.probe", _probe_kernel)


def test_unlocated_errors_print_as_before():
    err = LoweringError("plain")
    assert str(err) == "plain"
    with pytest.raises(KeyError), located(None):
        raise KeyError("untouched without a span")


def test_innermost_span_wins():
    inner = Span("k.py", 3, 4, 10, "    Tx.copy(A, B)")
    outer = Span("k.py", 9, 0, 5, "call()")
    with pytest.raises(LoweringValueError) as info, located(outer), located(inner):
        raise ValueError("bad")
    assert str(info.value) == "k.py:3:5: error: bad\n        Tx.copy(A, B)\n        ^~~~~~"
    assert isinstance(info.value.__cause__, ValueError)


def test_warn_points_at_the_callers_line_or_the_span():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn("from user code")
        warn("at the kernel", span=Span("kernel.py", 12, 4, 9, "    Tx.copy(A, B)"))
    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, line_of('warn("from user code")', test_warn_points_at_the_callers_line_or_the_span)),
        ("kernel.py", 12),
    ]


def test_intrinsic_emitted_by_a_variant_points_at_the_tx_call(probe_op, host_target):
    # The variant's own call has no span: it gets the span of the Tx call it lowers.
    register_dispatch("fill", "c", variant="via_probe", priority=100)(
        lambda call, sctx: PrimFunc([], tvm.ir.Evaluate(probe_op())))
    with pytest.raises(CodegenError) as info:
        tvm.compile(_fill_kernel(), target="c")
    assert info.value.span.line == line_of("Tx.fill(A, T.float32(1))", _fill_kernel)
    assert "op `tirx.locate_ns.probe` has no codegen rule" in str(info.value).splitlines()[0]


def test_warn_skips_backend_frames():
    backend_globals = {"__name__": "tvm_backend_fake.compiler", "warn": warn}
    exec(compile("def build():\n    warn('from a backend')\n", "/fake/compiler.py", "exec"),
         backend_globals)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backend_globals["build"]()
    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, line_of('backend_globals["build"]()', test_warn_skips_backend_frames))]
