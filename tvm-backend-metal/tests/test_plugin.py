"""Registration through the hooks: backend record, aliases, target kind and tags, namespace."""

from __future__ import annotations

import importlib

import pytest
from metal_helpers import TARGET

import tvm
import tvm.backend
from tvm.error import TargetError
from tvm.ir import Op
from tvm.target import Target, list_tags


def test_listed_as_loaded_with_what_it_registered():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "metal"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-metal"
    assert record.target_kinds == ("metal",)
    assert record.namespaces == ("metal",)
    assert record.n_tags == 5
    assert record.n_ops == 14


def test_register_backend_is_idempotent():
    import tvm_backend_metal

    assert tvm_backend_metal.register_backend() is tvm_backend_metal
    assert tvm.backend.load("metal") is tvm_backend_metal
    assert tvm.backend.is_loaded("metal")


def test_aliases():
    import tvm_backend_metal

    assert tvm.backend.metal is tvm_backend_metal
    assert tvm.tirx.metal is tvm_backend_metal
    assert importlib.import_module("tvm.tirx.metal.op").simdgroup_load is not None
    assert importlib.import_module("tvm.backend.metal.tags").TAGS["apple/m2-gpu"]


def test_target_kind_defaults():
    t = Target("metal")
    assert t.kind.device_type == "metal"
    assert t.keys == ("metal", "gpu")
    assert t.attrs["max_num_threads"] == 256
    assert t.attrs["max_threads_per_block"] == 256
    assert t.attrs["max_shared_memory_per_block"] == 32768
    assert t.attrs["thread_warp_size"] == 32
    assert t.attrs["max_function_args"] == 31


@pytest.mark.parametrize(("tag", "threads", "mcpu", "family"), [
    ("apple/m1-gpu", 1024, "apple-m1", "apple7"),
    ("apple/m1-gpu-restricted", 256, "apple-m1", "apple7"),
    ("apple/m2-gpu", 1024, "apple-m2", "apple7"),  # the seed's config names no family
    ("apple/m3-gpu", 1024, "apple-m3", "apple9"),
    ("apple/m4-gpu", 1024, "apple-m4", "apple9"),
])
def test_tags(tag, threads, mcpu, family):
    assert tag in list_tags()
    t = Target(tag)
    assert t.kind.name == "metal"
    assert t.attrs["max_threads_per_block"] == threads
    assert t.attrs["max_num_threads"] == min(threads, 256)
    assert t.attrs["max_shared_memory_per_block"] == 32768
    assert t.attrs["thread_warp_size"] == 32
    assert t.attrs["gpu_family"] == family
    # the chip is the host target, an llvm CPU on macOS (the seed's form)
    assert t.host.kind.name == "llvm"
    assert t.host.attrs["mcpu"] == mcpu and t.host.attrs["mtriple"] == "arm64-apple-macos"


def test_target_validation():
    with pytest.raises(TargetError, match="thread_warp_size must be 32"):
        Target({"kind": "metal", "thread_warp_size": 16})
    with pytest.raises(TargetError, match="max_threads_per_block must be 1..1024"):
        Target({"kind": "metal", "max_threads_per_block": 2048, "max_num_threads": 256})


def test_namespace_is_on_t_and_ops_are_classified():
    from tvm.script import tirx as T
    from tvm.script.namespace import NAMESPACES
    from tvm_backend_metal.script import MetalNamespace

    assert isinstance(T.metal, MetalNamespace)
    assert T.metal is NAMESPACES["metal"]
    for op in Op.list("tirx.metal."):
        assert op.category.value == "device_intrin"
        assert op.namespace == "metal"
        assert op.printer_name == "metal." + op.name.removeprefix("tirx.metal.")
        assert callable(getattr(T.metal, op.printer_name.split(".")[1]))
        assert op.get_codegen("metal") is not None


def test_backend_specific_wrappers_are_not_root_exports():
    import tvm.tirx
    import tvm.tirx.op
    from tvm.script import tirx as T

    for name in ("make_filled_simdgroup_matrix", "simdgroup_load", "simd_shuffle"):
        assert not hasattr(tvm.tirx.op, name)
        assert not hasattr(tvm.tirx, name)
        assert not hasattr(T, name)
        assert hasattr(tvm.tirx.metal.op, name)


def test_seed_helpers():
    import tvm_backend_metal
    from tvm_backend_metal.script import MetalNamespace

    assert isinstance(tvm_backend_metal.script_namespace(), MetalNamespace)
    assert list(tvm_backend_metal.script_namespaces()) == ["metal"]


def test_default_target_tag_compiles():
    assert Target(TARGET).kind.name == "metal"


def test_loading_the_backend_imports_nothing_heavy():
    import os
    import subprocess
    import sys

    code = ("import sys, tvm, tvm_backend_metal; tvm_backend_metal.register_backend(); "
            "from tvm.script import tirx as T; T.metal; "
            "print(sorted(m for m in ('numpy', 'ml_dtypes', 'Metal', 'objc') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "TVM_BACKENDS": "none"}, check=True)
    assert out.stdout.strip() == "[]"


def test_demo_rows_off_macos(capsys):
    import sys

    from tvm_backend_metal.demo import demo_cases

    cases = demo_cases()
    assert [c.name for c in cases][-1] == "simdgroup matmul (Tx.cta.gemm)"
    assert all(c.target == "apple/m1-gpu" for c in cases)
    if sys.platform == "darwin":
        return
    assert all(c.backend == "metal (emulated)" for c in cases)
    result = cases[0].run()  # vector add
    assert result.ok and "emulated on the CPU" in result.note
    # the MSL comes back with the result (`tvm demo --show-source` prints it); it used to be
    # printed while the table was being built, 150 lines scrolling over it
    assert "kernel void vector_add_kernel(" in result.source
    assert capsys.readouterr().out == ""
