"""The seed's module paths that users import from: ``tvm.backend.<b>.target_tags`` (in
test_seed_tags), the CUDA ``operator`` aliases, the ``tvm.tirx.lang`` redirects, and the tile op
``Tx.compose_op`` with its Trainium variant."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import tvm
from tvm.ir import assert_structural_equal
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

# Seed families whose CUDA code comes with branches merged after this one: their alias imports
# once that code is in (flip these to plain tests then).
_LATER = {
}


def _families_table():
    from tvm_backend_cuda.plugin import SEED_PATHS

    prefix = "cuda.operator.tile_primitive."
    return {k[len(prefix):]: (v,) if isinstance(v, str) else v
            for k, v in SEED_PATHS.items() if k.startswith(prefix) and "." not in k[len(prefix):]}


def _variants_table():
    from tvm_backend_cuda.plugin import SEED_PATHS

    prefix = "cuda.operator.tile_primitive."
    return {k[len(prefix):]: v for k, v in SEED_PATHS.items()
            if k.startswith(prefix) and "." in k[len(prefix):]}


def _family_params():
    FAMILIES = _families_table()
    return [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=_LATER[f]))
            if f in _LATER else f for f in FAMILIES]


def _families():
    try:
        return _family_params()
    except ImportError:
        return ["gemm"]


@pytest.mark.parametrize("family", _families())
def test_cuda_tile_primitive_alias(cuda, family):
    alias = importlib.import_module(f"tvm.tirx.cuda.operator.tile_primitive.{family}")
    real = [importlib.import_module(m) for m in _families_table()[family]]
    has_variants = any(v.startswith(family + ".") for v in _variants_table())
    if len(real) == 1 and not has_variants:
        assert alias is real[0]  # one module: the alias is that module
    else:  # several modules, or a package of variants: a module of their public names
        assert tuple(real) == alias.MODULES
        assert hasattr(alias, "__path__") == has_variants
    exported = [getattr(m, "__all__", [n for n in vars(m) if not n.startswith("_")]) for m in real]
    for i, (module, names) in enumerate(zip(real, exported)):
        # a name several modules of the family define (VARIANT, register) is the first one's
        own = [n for n in names if not any(n in other for other in exported[:i])]
        assert names and all(getattr(alias, n) is getattr(module, n) for n in own)


def test_cuda_gemm_and_reduction_variants_through_the_seed_paths(cuda):
    from tvm.tirx.cuda.operator.tile_primitive.gemm import VARIANT, gemm_mma
    from tvm.tirx.cuda.operator.tile_primitive.reduction import warp_shuffle_reduce
    from tvm_backend_cuda.dispatch import gemm_mma as real_gemm
    from tvm_backend_cuda.dispatch import reduction as real_reduction

    assert gemm_mma is real_gemm.gemm_mma and VARIANT == real_gemm.VARIANT
    assert warp_shuffle_reduce is real_reduction.warp_shuffle_reduce


def test_cuda_variant_paths_are_their_familys_module(cuda):
    """``...tile_primitive.<family>.<variant>`` (the seed's one file per variant) imports the
    module that implements the variant here: the family's dispatch module."""
    variants = _variants_table()
    assert {"copy_async.tma", "copy_async.ldgsts", "copy_async.tcgen05_cp", "copy.reg",
            "elementwise.smem", "gemm.mma_m16n8k_", "gemm_async.tcgen05",
            "reduction.local"} <= set(variants)
    for path, module in variants.items():
        for parent in ("tvm.tirx.cuda", "tvm.backend.cuda"):
            alias = importlib.import_module(f"{parent}.operator.tile_primitive.{path}")
            assert alias is importlib.import_module(module)
    from tvm.tirx.cuda.operator.tile_primitive.copy_async.tma import derived_tensor_map
    from tvm.tirx.cuda.operator.tile_primitive.exec_scope_utils import exec_scope_ok, single_thread
    from tvm_backend_cuda.dispatch import common, copy_async

    assert derived_tensor_map is copy_async.derived_tensor_map
    assert (exec_scope_ok, single_thread) == (common.exec_scope_ok, common.single_thread)
    family = importlib.import_module("tvm.tirx.cuda.operator.tile_primitive.copy_async")
    assert "tma" in family.__doc__ and family.derived_tensor_map is copy_async.derived_tensor_map


def test_trn_operator_paths(trn):
    from tvm.backend.trn.operator.tile_primitive.common import require_trn
    from tvm.tirx.trn.operator.tile_primitive.binary.default import binary_trn
    from tvm.tirx.trn.operator.tile_primitive.copy import copy_trn
    from tvm_backend_trn.dispatch import common, copy, elementwise

    assert binary_trn is elementwise.binary_trn and copy_trn is copy.copy_trn
    assert require_trn is common.require_trn
    for family in ("binary", "unary", "copy", "gemm", "reduction", "select", "compose_op"):
        module = importlib.import_module(f"tvm.tirx.trn.operator.tile_primitive.{family}.default")
        assert module.__name__.startswith("tvm_backend_trn.dispatch.")


def test_cuda_intrinsics_alias(cuda):
    import tvm_backend_cuda.intrinsics as real

    alias = importlib.import_module("tvm.tirx.cuda.operator.intrinsics")
    assert alias.__all__ == list(real.__all__)
    assert all(getattr(alias, n) is getattr(real, n) for n in real.__all__)


def test_missing_cuda_family_says_what_it_aliases(cuda, monkeypatch):
    from tvm.backend._aliases import SUBMODULES

    key = "cuda.operator.tile_primitive.gemm"
    old = SUBMODULES[key]
    SUBMODULES.register(key, ("tvm_backend_cuda.dispatch.no_such_module",), override=True)
    try:
        for path in ("tvm_backend_cuda.operator.tile_primitive.gemm",
                     "tvm.tirx.cuda.operator.tile_primitive.gemm"):
            monkeypatch.delitem(sys.modules, path, raising=False)
            with pytest.raises(ImportError, match=f"{path} is an alias of tvm_backend_cuda."
                                                  "dispatch.no_such_module, which this "
                                                  "installation does not have"):
                importlib.import_module(path)
    finally:
        SUBMODULES.register(key, old, override=True)


def test_seed_paths_are_data_not_files(cuda):
    """The seed's paths resolve through the alias table; no file backs them."""
    import tvm_backend_cuda
    import tvm_backend_cuda.tags as tags

    root = Path(tvm_backend_cuda.__file__).parent
    assert not (root / "target_tags.py").exists() and not (root / "operator").exists()
    for path in ("tvm.backend.cuda.target_tags", "tvm.tirx.cuda.target_tags",
                 "tvm_backend_cuda.target_tags"):
        assert importlib.import_module(path) is tags
    package = importlib.import_module("tvm.tirx.cuda.operator.tile_primitive")
    assert package.__path__ == [] and "gemm_async" in package.__doc__
    merged = importlib.import_module("tvm.backend.cuda.operator.tile_primitive.gemm_async")
    assert [m.__name__ for m in merged.MODULES] == ["tvm_backend_cuda.dispatch.gemm_wgmma",
                                                    "tvm_backend_cuda.dispatch.gemm_tcgen05",
                                                    "tvm_backend_cuda.dispatch.sf_layout"]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tvm.tirx.cuda.operator.no_such_family")


# -- tvm.tirx.lang -----------------------------------------------------------------------------
LANG = ("alloc_pool", "pipeline", "smem_desc", "tile_scheduler", "warp_role")


@pytest.mark.parametrize("module", LANG)
def test_lang_path_is_the_cuda_module(cuda, module):
    """The seed's ``tvm.tirx.lang.<module>`` is a path the CUDA backend declares in its alias
    table: the module of ``tvm_backend_cuda.lang`` itself (core names no backend package)."""
    from tvm_backend_cuda.plugin import SEED_PATHS

    real = importlib.import_module(f"tvm_backend_cuda.lang.{module}")
    assert SEED_PATHS[f"tvm.tirx.lang.{module}"] == real.__name__
    assert importlib.import_module(f"tvm.tirx.lang.{module}") is real
    star: dict[str, object] = {}
    exec(f"from tvm.tirx.lang.{module} import *", star)  # noqa: S102 - the seed's spelling
    public = getattr(real, "__all__", None) or [n for n in vars(real) if not n.startswith("_")]
    assert set(public) <= set(star)
    package = importlib.import_module("tvm.tirx.lang")
    assert package.__path__ == [] and module in package.__doc__
    assert tvm.tirx.lang is package


def test_lang_path_names_the_distribution_without_the_backend(cuda, monkeypatch):
    """Without the CUDA backend (here: its declared paths withdrawn, and no cuda backend in the
    loader's view), importing the path says which distribution to install."""
    from tvm import _hints
    from tvm._registry import Registry
    from tvm.backend import _aliases

    monkeypatch.setattr(_aliases, "SUBMODULES", Registry("module path alias"))
    monkeypatch.setattr(_hints, "_state", lambda name: None)
    for name in [n for n in sys.modules if n == "tvm.tirx.lang" or n.startswith("tvm.tirx.lang.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delattr(tvm.tirx, "lang", raising=False)
    with pytest.raises(ImportError, match=r"No module named 'tvm.tirx.lang': no installed backend "
                                          r"provides module path 'tvm.tirx.lang'; install it with "
                                          r"'.*pip install --find-links \S+ tvm-backend-cuda'"):
        importlib.import_module("tvm.tirx.lang.pipeline")
    assert not hasattr(tvm.tirx, "lang")


# -- Tx.compose_op -----------------------------------------------------------------------------
def test_compose_op_roundtrips():
    """The seed's test_roundtrip_compose_op* programs (test_parser_printer.py)."""

    @T.prim_func
    def test():
        T.device_entry()
        A = T.alloc_buffer([10], "float32", scope="trn.sbuf")
        B = T.alloc_buffer([10], "float32", scope="trn.sbuf")
        C = T.alloc_buffer([10], "float32", scope="trn.sbuf")
        psum = T.alloc_buffer([10], "float32", scope="trn.psum")
        intermediate = T.alloc_buffer([10], "float32", scope="trn.sbuf")
        with Tx.compose_op(workspace={"intermediate": intermediate}, schedule="A"):
            Tx.add(B, A, T.float32(1))
            Tx.add(C, B, T.float32(1), workspace={"psum": psum})

    code = test.script()
    assert ('    with T.tile.compose_op(workspace={"intermediate": intermediate}, '
            'schedule="A"):\n'
            '        T.tile.add(B, A, T.float32(1.0))\n'
            '        T.tile.add(C, B, T.float32(1.0), workspace={"psum": psum})\n') in code
    assert from_source(code).script() == code
    assert_structural_equal(test, from_source(code))
    call = test.body.seq[-1]
    assert call.op.name == "tirx.tile.compose_op" and len(call.args) == 2


def test_compose_op_block_holds_only_tile_calls():
    from tvm.error import DiagnosticError

    src = ("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n"
           "    with Tx.compose_op():\n        A[0] = T.float32(1)\n")
    with pytest.raises(DiagnosticError, match="the block of `with Tx.compose_op\\(...\\)` may "
                                              "hold only tile primitive calls"):
        from_source(src, extra_vars={"Tx": Tx})


def test_compose_op_on_trn_runs_its_calls_in_order(trn):
    """The seed's Trainium variant of compose_op (``default``, p10) lowers the block."""
    from tvm.tirx.operator.tile_primitive import list_registered_schedules
    from tvm_backend_trn.layout import trainium_layout as tl

    assert "default" in list_registered_schedules()["tirx.tile.compose_op"]["trn"]

    @T.prim_func
    def f(X: T.Buffer((128, 64), "float32"), Y: T.Buffer((128, 64), "float32")):
        a = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf", layout=tl("PF", (128, 64)))
        b = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf", layout=tl("PF", (128, 64)))
        c = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf", layout=tl("PF", (128, 64)))
        Tx.copy(a, X)
        with Tx.compose_op():
            Tx.add(b, a, T.float32(1))
            Tx.mul(c, b, T.float32(3))
        Tx.copy(Y, c)

    x = np.random.default_rng(0).random((128, 64), dtype="float32")
    y = np.zeros_like(x)
    ex = tvm.compile(f, target="aws/trn1/trn1.2xlarge")
    ex(x, y)
    np.testing.assert_allclose(y, (x + 1) * 3, rtol=1e-6)
    assert ex.inspect_source().count("nisa.tensor_scalar(") == 2
