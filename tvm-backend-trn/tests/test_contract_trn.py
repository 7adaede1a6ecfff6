"""Trainium through core's build contract: options, the JSON payload (no pickle), stage dumps,
the exported file, and the cache settings (the compile stage caches nothing)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import tvm
from tvm.error import OptionError, TVMError
from tvm.runtime.executable import read_container
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_trn import isa
from tvm_backend_trn.compiler import decode_kernels, encode_kernels
from tvm_backend_trn.isa import Var
from tvm_backend_trn.nki_render import render_nki_legacy

TARGET = "aws/trn1/trn1.2xlarge"


@T.prim_func
def exp_plus_one(X: T.Buffer((128, 64), "float32"), Y: T.Buffer((128, 64), "float32")):
    s = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf")
    Tx.copy(s, X)
    Tx.exp(s, s, bias=1.0)
    Tx.copy(Y, s)


def _files(root):
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _run(ex):
    x = np.random.default_rng(0).standard_normal((128, 64)).astype("float32")
    y = np.zeros_like(x)
    ex(x, y)
    np.testing.assert_allclose(y, np.exp(x + 1.0), rtol=1e-5)


# -- the payload ---------------------------------------------------------------------------------


def _every_kind_of_field() -> isa.Kernel:
    """A kernel using Affine offsets and flags, loops, on-chip tensors of both memories, scalar
    and column operands, tuples of pairs and a non-finite float."""
    at = isa.HbmTensor("AT", (256, 64), "float32")
    c = isa.HbmTensor("C", (64, 32), "float32", kind="output")
    a_sb = isa.SbufTensor("a_sb", 128, (64,), "float32")
    c_sb = isa.SbufTensor("c_sb", 64, (32,), "float32", offset=512)
    col = isa.SbufTensor("col", 64, (1,), "float32", offset=1024)
    ps = isa.PsumTensor("ps", 64, (32,), bank=7, offset=1024)
    kk = Var("kk")
    body = (
        isa.Loop("kk", 2, (
            isa.DmaCopy(a_sb.full(), src=at.tile([kk * 128, 0], [128, 64])),
            isa.Matmul(ps.full(), stationary=a_sb.full(), moving=a_sb.view(pattern=((1, 32),)),
                       accumulate=kk),
        ), kind="sequential"),
        isa.Memset(col.full(), value=-math.inf),
        isa.Activation(c_sb.full(), op="exp", data=ps.full(), bias=col.full(), scale=0.5,
                       reduce_op="add", reduce_res=col.full()),
        isa.TensorScalar(c_sb.full(), data=c_sb.full(), op0="multiply", operand0=2,
                         op1="add", operand1=col.full()),
        isa.AffineSelect(c_sb.full(), pattern=((-1, 32),), channel_multiplier=1,
                         on_true_tile=c_sb.full(), on_false_value=-math.inf),
        isa.Transpose(c_sb.full(), data=c_sb.full(), engine="vector"),
        isa.DmaCopy(c.full(), src=c_sb.full()),
    )
    return isa.Kernel("k", (at, c), (a_sb, c_sb, col, ps), body)


def test_payload_round_trips_the_instruction_form():
    kernel = _every_kind_of_field()
    data = encode_kernels({"k": kernel})
    assert json.loads(data)["format"] == "tvm-trn-isa/1"
    back = decode_kernels(data)
    assert back == {"k": kernel}
    assert back["k"].body[0].body[1].accumulate == Var("kk")
    assert back["k"].body[1].value == -math.inf


def test_compiled_kernels_round_trip():
    ex = tvm.compile(exp_plus_one, target=TARGET)
    assert decode_kernels(encode_kernels(ex.kernels)) == ex.kernels
    assert ex.binary.data == encode_kernels(ex.kernels)


@pytest.mark.parametrize(("payload", "message"), [
    (b"\x80\x04K\x01.", "the Trainium payload is not JSON"),  # a pickle
    (b'{"format": "other"}', "has format 'other'; this tvm-backend-trn reads 'tvm-trn-isa/1'"),
    (b'{"format": "tvm-trn-isa/1", "kernels": {"k": {"_": "os.system", "command": "id"}}}',
     "names 'os.system', which is not a class of the instruction form"),
    (b'{"format": "tvm-trn-isa/1", "kernels": {"k": {"_": "Var", "name": "x"}}}',
     "names 'Var', which is not a class of the instruction form"),
    (b'{"format": "tvm-trn-isa/1", "kernels": {"k": {"_": "Affine", "const": 1, "x": 2}}}',
     r"gives Affine the unknown field\(s\) \['x'\]"),
    (b'{"format": "tvm-trn-isa/1", "kernels": {"k": {"_": "Affine", "const": 1}}}',
     "entry 'k' is not a kernel"),
    (b'{"format": "tvm-trn-isa/1", "kernels": {"k": {"_": "Loop", "var": "i", "extent": 0, '
     b'"body": []}}}', "has a bad Loop: loop 'i': extent 0 < 1"),
])
def test_bad_payloads_are_refused(payload, message):
    with pytest.raises(TVMError, match=message):
        decode_kernels(payload)


# -- tvm.compile for trn -------------------------------------------------------------------------


def test_dialect_option():
    ex = tvm.compile(exp_plus_one, target=TARGET, dialect="legacy")
    assert ex.inspect_source() == "\n\n".join(render_nki_legacy(k) for k in ex.kernels.values())
    assert ex.inspect_source("nki").startswith("import nki\n")
    _run(ex)
    with pytest.raises(OptionError, match="compile option 'dialect' for target 'trn' must be "
                                          "'nki' or 'legacy', got 'nki2'"):
        tvm.compile(exp_plus_one, target=TARGET, dialect="nki2")
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['opt_level'\] for "
                                          r"target 'trn'; known: cache, dialect"):
        tvm.compile(exp_plus_one, target=TARGET, opt_level=2)


def test_dump_dir_gets_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path))
    ex = tvm.compile(exp_plus_one, target=TARGET)
    stages = sorted(p.name for p in tmp_path.glob("trn-*"))
    assert stages == ["trn-01-source.py", "trn-02-binary.json", "trn-03-metadata.json"]
    assert (tmp_path / "trn-01-source.py").read_text() == ex.inspect_source()
    assert decode_kernels((tmp_path / "trn-02-binary.json").read_bytes()) == ex.kernels
    metadata = json.loads((tmp_path / "trn-03-metadata.json").read_text())
    assert metadata["kernels"] == ["exp_plus_one"] and metadata["dialect"] == "nki"
    params = metadata["arguments"]["exp_plus_one"]["params"]
    assert [p["name"] for p in params] == ["X", "Y"]


def test_exported_file_is_json_and_loads(tmp_path):
    ex = tvm.compile(exp_plus_one, target=TARGET, dialect="legacy")
    path = ex.export_library(tmp_path / "k.tvmex")
    header, payload = read_container(path)
    assert header["backend"] == "trn" and header["builder_format"] == 3
    assert header["metadata"]["dialect"] == "legacy"
    assert json.loads(payload)["format"] == "tvm-trn-isa/1"
    loaded = tvm.runtime.load_module(path)
    assert loaded.kernels == ex.kernels
    assert loaded.inspect_source() == ex.inspect_source()
    _run(loaded)


def test_compile_writes_nothing_to_the_cache(tmp_path, monkeypatch):
    # Serialising the instruction form is the whole compile stage: nothing is cached, so
    # neither TVM_CACHE_DIR, nor XDG_CACHE_HOME, nor HOME gets a file.
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    _run(tvm.compile(exp_plus_one, target=TARGET))
    monkeypatch.delenv("TVM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _run(tvm.compile(exp_plus_one, target=TARGET))
    assert _files(tmp_path) == []


def test_compile_with_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TVM_CACHE", "0")
    _run(tvm.compile(exp_plus_one, target=TARGET, cache=False))
    assert _files(tmp_path) == []
