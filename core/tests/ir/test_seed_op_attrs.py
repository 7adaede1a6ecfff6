"""The seed's op attribute names read this project's op fields."""

from __future__ import annotations

import pytest

import tvm
from tvm.ir import Op


def test_device_intrinsic_attrs() -> None:
    op = Op.get("tirx.webgpu.subgroup_shuffle")  # a device intrinsic core itself declares
    assert op.get_attr("TScriptPrinterName") == "webgpu.subgroup_shuffle"
    assert op.get_attr("TDeviceIntrinsicNamespace") == "webgpu"
    assert op.get_attr("TCallEffectKind") == 3  # it updates state


def test_a_backends_intrinsic_attrs() -> None:
    pytest.importorskip("tvm_backend_cuda")
    from tvm_backend_cuda.plugin import register_backend

    register_backend()
    op = Op.get("tirx.ptx.wgmma_commit_group")
    assert op.get_attr("TScriptPrinterName") == "ptx.wgmma.commit_group"
    assert op.get_attr("TDeviceIntrinsicNamespace") == "ptx"
    assert op.get_attr("TCallEffectKind") == 3


def test_effect_kinds_use_the_seeds_numbers() -> None:
    # the seed's kOpaque is kUpdateState (3); ours is a value of its own
    kinds = {op.effect.name: op.get_attr("TCallEffectKind") for op in map(Op.get, Op.list_op_names())}
    assert kinds.get("OPAQUE", 3) == 3 and kinds.get("UPDATE_STATE", 3) == 3
    assert kinds.get("PURE", 1) == 1


def test_builtins_have_no_printer_name_attr() -> None:
    assert Op.get("tirx.tile.copy").get_attr("TScriptPrinterName") is None
    assert tvm.backend._LOADED_BACKENDS is not None  # the seed's private reset hook exists
