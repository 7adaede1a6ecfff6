"""Script namespaces (``T.<ns>``), device-intrinsic printing, and the call_intrin fallback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tvm._hints import install_hint
from tvm._registry import snapshot_all
from tvm.ir import Call, Evaluate, Op, PrimFunc, Var, assert_structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.namespace import NAMESPACES, register_script_namespace
from tvm.testing import skip_if_installed


@pytest.fixture
def restore_registries() -> Iterator[None]:
    restore = snapshot_all()
    try:
        yield
    finally:
        restore()


def _intrin(name: str, ns: str, dtype: Any = None, **attrs: Any) -> Op:
    return Op.register(f"tirx.{name}", category="device_intrin", namespace=ns, dtype=dtype,
                       override=True, **attrs)


def _builder(op_name: str, *, kwargs: tuple[str, ...] = ()) -> Any:
    def build(*args: Any, **kw: Any) -> Call:
        extra = [kw.get(k, "") for k in kwargs]
        return Op.get(op_name)(*args, *extra)

    build.__tir_op_name__ = op_name  # type: ignore[attr-defined]
    return build


class MmaNamespace:
    """A callable sub-namespace: ``T.unit_ns.mma(...)`` beside ``T.unit_ns.mma.sp(...)``."""

    __tir_op_name__ = "tirx.unit_ns.mma"

    def __init__(self) -> None:
        self.sp = _builder("tirx.unit_ns.mma_sp")

    def __call__(self, *args: Any) -> Call:
        return Op.get("tirx.unit_ns.mma")(*args)


class UnitNamespace:
    def __init__(self) -> None:
        self.fence = _builder("tirx.unit_ns.fence")
        self.load = _builder("tirx.unit_ns.load")
        self.func_call = _builder("tirx.unit_ns.func_call", kwargs=("source_code",))
        self.mma = MmaNamespace()


@pytest.fixture
def unit_ns(restore_registries: None) -> UnitNamespace:
    _intrin("unit_ns.fence", "unit_ns")
    _intrin("unit_ns.load", "unit_ns", dtype="arg0")
    _intrin("unit_ns.func_call", "unit_ns", script_kwargs=("source_code",))
    _intrin("unit_ns.mma", "unit_ns")
    _intrin("unit_ns.mma_sp", "unit_ns")
    return register_script_namespace("unit_ns", UnitNamespace())


def roundtrip(func: PrimFunc) -> str:
    text = func.script()
    back = from_source(text)
    assert_structural_equal(func, back)
    assert back.script() == text
    return text


def test_unknown_namespace_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_namespace'"):
        T.no_such_namespace  # noqa: B018
    assert not hasattr(T, "no_such_namespace")


@skip_if_installed("cuda")
def test_cuda_namespace_without_backend_says_what_to_install() -> None:
    with pytest.raises(AttributeError) as info:
        T.cuda  # noqa: B018
    assert "has no attribute 'cuda'" in str(info.value)
    assert install_hint("tvm-backend-cuda") in str(info.value)


@pytest.mark.parametrize(("namespace", "backend"), [
    ("ptx", "cuda"), ("cuda", "cuda"), ("nvshmem", "cuda"), ("nki", "trn"), ("metal", "metal"),
])
def test_every_catalogued_namespace_names_its_distribution(namespace: str, backend: str) -> None:
    if namespace in NAMESPACES:
        pytest.skip(f"the {backend} backend is loaded")
    with pytest.raises(AttributeError) as info:
        getattr(T, namespace)
    assert str(info.value) == (
        f"module 'tvm.script.tirx' has no attribute '{namespace}'; the script namespace "
        f"'{namespace}' comes with the {backend} backend; {install_hint(f'tvm-backend-{backend}')}")


def test_registered_namespace_resolves_live_and_prints(unit_ns: UnitNamespace) -> None:
    assert T.unit_ns is unit_ns
    from tvm.tirx.script.builder import ir as builder_ir

    assert builder_ir.unit_ns is unit_ns
    assert Op.get("tirx.unit_ns.mma_sp").printer_name == "unit_ns.mma.sp"
    assert Op.get("tirx.unit_ns.mma").printer_name == "unit_ns.mma"

    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        T.unit_ns.fence()
        T.unit_ns.mma(A.data, 1, "row")
        T.unit_ns.mma.sp(A[0], n)
        T.unit_ns.func_call("f", 1, source_code="")
        A[1] = T.unit_ns.load(A[2])

    text = roundtrip(f)
    for line in ("T.unit_ns.fence()", 'T.unit_ns.mma(A.data, 1, "row")', "T.unit_ns.mma.sp(A[0], n)",
                 'T.unit_ns.func_call("f", 1, source_code="")', "A[1] = T.unit_ns.load(A[2])"):
        assert f"    {line}\n" in text, line
    assert "T.tirx." not in text
    calls = [s.value for s in f.body.seq[:4]]
    assert [c.op.name for c in calls] == ["tirx.unit_ns.fence", "tirx.unit_ns.mma",
                                        "tirx.unit_ns.mma_sp", "tirx.unit_ns.func_call"]


def test_namespace_registered_after_facade_import(restore_registries: None) -> None:
    import tvm.script.tirx as facade  # imported before the namespace exists

    register_script_namespace("unit_late", type("LateNamespace", (), {"x": 1})())
    assert facade.unit_late.x == 1
    assert "unit_late" in dir(facade)


def test_call_intrin_fallback_when_dtype_differs(unit_ns: UnitNamespace) -> None:
    A_h = Var("A", "handle")
    from tvm.ir import Buffer

    A = Buffer("A", (4,), "float32")
    call = Call("int32", Op.get("tirx.unit_ns.load"), [A[0]])  # the rule would say float32
    text = roundtrip(PrimFunc([A_h], Evaluate(call), {A_h: A}, name="f"))
    assert '    T.call_intrin("int32", "tirx.unit_ns.load", A[0])\n' in text


def test_call_intrin_fallback_for_an_unreachable_op(restore_registries: None) -> None:
    op = _intrin("unit_hidden.thing", "unit_hidden", dtype="int32")
    n = Var("n")
    text = roundtrip(PrimFunc([n], Evaluate(op(n, 2)), {}, name="f"))
    assert '    T.call_intrin("int32", "tirx.unit_hidden.thing", n, 2)\n' in text


# -- the seed's printed forms (test_printer_tir_namespaces.py), with stand-in builders ------
def _ns_class(name: str) -> type:
    return type(name, (), {})


@pytest.fixture
def seed_namespaces(restore_registries: None) -> None:
    forms = {
        "ptx": ["wgmma.commit_group", "ldmatrix", "setmaxnreg", "fence", "fence.proxy_async",
                "cp_async.bulk.wait_group", "mbarrier.arrive", "mbarrier.arrive.expect_tx",
                "cp_async.bulk.tensor.g2c"],
        "cuda": ["func_call", "printf", "cluster_sync"],
        "nki": ["matmul"],
    }
    for ns, paths in forms.items():
        root = _ns_class(f"Seed{ns.title()}Namespace")()
        for path in paths:
            op_name = f"tirx.{ns}." + path.replace(".", "_")
            kwargs = ("source_code",) if path == "func_call" else ()
            _intrin(f"{ns}.{path.replace('.', '_')}", ns, script_kwargs=kwargs)
            *parents, leaf = path.split(".")
            obj = root
            for part in parents:
                child = getattr(obj, part, None)
                if child is None:
                    child = _ns_class(f"{part.title()}Namespace")()
                    setattr(obj, part, child)
                obj = child
            existing = getattr(obj, leaf, None)
            if existing is not None:  # a callable sub-namespace (fence / fence.proxy_async)
                cls = type(existing)
                cls.__tir_op_name__ = op_name
                cls.__call__ = lambda self, *a, _n=op_name: Op.get(_n)(*a)
                continue
            if any(p.startswith(path + ".") for p in paths):
                sub_cls = _ns_class(f"{leaf.title()}Namespace")
                sub_cls.__tir_op_name__ = op_name
                sub_cls.__call__ = lambda self, *a, _n=op_name: Op.get(_n)(*a)
                setattr(obj, leaf, sub_cls())
            else:
                setattr(obj, leaf, _builder(op_name, kwargs=kwargs))
        register_script_namespace(ns, root, override=True)


def test_seed_printed_forms(seed_namespaces: None) -> None:
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), s: T.handle, r: T.handle, tm: T.handle):
        T.ptx.wgmma.commit_group()
        T.cuda.func_call("f", 1, source_code="")
        T.ptx.ldmatrix(T.bool(True), 1, ".b16", s, r)
        T.nki.matmul(A, A, A, T.bool(True))
        T.ptx.setmaxnreg(T.bool(True), 64)
        T.ptx.fence("acq_rel", "gpu")
        T.ptx.fence.proxy_async("shared::cta")
        T.ptx.cp_async.bulk.wait_group(0, T.bool(True))
        T.ptx.mbarrier.arrive(s)
        T.ptx.mbarrier.arrive.expect_tx(s, 128)
        T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")
        T.cuda.printf("x=%d", 1)
        T.cuda.cluster_sync()

    text = roundtrip(f)
    for form in (
        "T.ptx.wgmma.commit_group()", 'T.cuda.func_call("f", 1, source_code="")',
        'T.ptx.ldmatrix(T.bool(True), 1, ".b16", s, r)', "T.nki.matmul(A, A, A, T.bool(True))",
        "T.ptx.setmaxnreg(T.bool(True), 64)", 'T.ptx.fence("acq_rel", "gpu")',
        'T.ptx.fence.proxy_async("shared::cta")', "T.ptx.cp_async.bulk.wait_group(0, T.bool(True))",
        "T.ptx.mbarrier.arrive(s)", "T.ptx.mbarrier.arrive.expect_tx(s, 128)",
        'T.ptx.cp_async.bulk.tensor.g2c(2, tm, 0, tm, 0, 1, T.uint64(0), 0, 0, 1, "")',
        'T.cuda.printf("x=%d", 1)', "T.cuda.cluster_sync()",
    ):
        assert f"    {form}\n" in text, form


def test_builtin_marker_prints_and_round_trips() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.tvm_kernel_replace_point()
        A[0] = T.sqrt(A[1])

    text = roundtrip(f)
    assert "    T.tvm_kernel_replace_point()\n" in text
    assert f.body.seq[0].value.op.category.value == "builtin"
