"""WebGPU through core's build contract: options, stage dumps, the exported file, the WGSL
check and the plugin's registration."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from wg_helpers import TARGET

import tvm
import tvm.backend
from tvm.backend import CATALOGUE
from tvm.error import CompileError, OptionError
from tvm.runtime.executable import read_container
from tvm.script import tirx as T
from tvm.testing.layout import check_backend_layout


@T.prim_func
def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    Y[bx * 128 + tx] = X[bx * 128 + tx] * a + Y[bx * 128 + tx]


def test_options_are_parsed_by_core():
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['opt_level'\] for "
                                          r"target 'webgpu'; known: bounds_check, cache, check"):
        tvm.compile(axpy, target=TARGET, opt_level=3)


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path))
    ex = tvm.compile(axpy, target=TARGET)
    names = sorted(p.name for p in tmp_path.glob("webgpu-*"))
    assert names == ["webgpu-01-source.wgsl", "webgpu-02-binary.wgsl", "webgpu-03-metadata.json"]
    assert (tmp_path / "webgpu-02-binary.wgsl").read_text() == ex.inspect_source()
    meta = json.loads((tmp_path / "webgpu-03-metadata.json").read_text())
    assert meta["layouts"] == [{"name": "axpy_kernel", "uniform_size": 16, "uniform_binding": 2,
                                "params": [["buffer", 0, "float32"], ["buffer", 1, "float32"],
                                           ["uniform", 0, "float32"]]}]


def test_exported_file_holds_wgsl_and_plans(tmp_path, webgpu_device):
    ex = tvm.compile(axpy, target=TARGET)
    path = ex.export_library(tmp_path / "axpy.tvmex")
    header, payload = read_container(path)
    assert header["backend"] == "webgpu" and payload.decode() == ex.inspect_source()
    loaded = tvm.runtime.load_module(path)
    x, y = np.ones(256, "float32"), np.ones(256, "float32")
    loaded(x, y, 0.5)
    np.testing.assert_array_equal(y, 1.5)


def test_invalid_wgsl_is_reported_with_nagas_words(webgpu_device, monkeypatch):
    from tvm_backend_webgpu import codegen

    real = codegen.generate_wgsl

    def broken(mod, target=None):
        source, layouts = real(mod, target)
        return source.replace("* a)", "* undefined_a)"), layouts

    monkeypatch.setattr("tvm_backend_webgpu.executable.generate_wgsl", broken)
    assert "undefined_a" in tvm.compile(axpy, target=TARGET).inspect_source()  # unchecked
    with pytest.raises(CompileError) as info:
        tvm.compile(axpy, target=TARGET, check=True)
    assert str(info.value).startswith("wgpu-native rejected the WGSL of kernel 'axpy_kernel'")
    assert "undefined_a" in info.value.log


def test_listed_as_loaded_and_aliased():
    import tvm_backend_webgpu

    (record,) = [r for r in tvm.backend.list_backends() if r.name == "webgpu"]
    assert record.state == "loaded" and record.distribution == "tvm-backend-webgpu"
    assert record.target_kinds == ("webgpu",)
    assert tvm_backend_webgpu.register_backend() is tvm_backend_webgpu
    assert tvm.backend.webgpu is tvm_backend_webgpu and tvm.tirx.webgpu is tvm_backend_webgpu
    check_backend_layout(tvm_backend_webgpu)
    (entry,) = [e for e in CATALOGUE if e.name == "webgpu"]
    assert entry.distribution == "tvm-backend-webgpu"


def test_shuffle_ops_have_their_wgsl_rule():
    from tvm.ir.op import Op

    for name in ("subgroup_shuffle", "subgroup_shuffle_up", "subgroup_shuffle_down"):
        assert Op.get(f"tirx.webgpu.{name}").get_codegen("webgpu") is not None


def test_loading_imports_no_sdk():
    code = ("import sys, tvm, tvm_backend_webgpu; tvm_backend_webgpu.register_backend(); "
            "print(sorted(m for m in ('numpy', 'wgpu', 'tvm_backend_webgpu.codegen', "
            "'tvm_backend_webgpu.executable') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
