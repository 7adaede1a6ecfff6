"""The Adreno backend: the seed's tags (exact configs), loading after the backends it requires,
the ``adreno`` pipeline that ``tvm.compile`` picks for OpenCL targets with the ``adreno`` key,
and Adreno OpenCL kernels run through the OpenCL backend."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

import tvm
import tvm.backend
import tvm.driver
import tvm_backend_adreno
from tvm.error import TargetError, TVMError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.target import Target, get_tag
from tvm.tirx.compilation_pipeline import get_default_tir_pipeline

tvm_backend_adreno.register_backend()  # a source checkout has no entry point: load in-process

# sha256 of json.dumps({name: config}, sort_keys=True) over the seed's Adreno tags, computed by
# running the seed's tag file (apache/tvm, tvm/target/tag_registry/adreno.py, moved unchanged to
# tvm/backend/adreno/target_tags.py by the seed) with a recording register_tag.
SEED_DIGEST = (5, "6ea0f18329dcbe472e67e493e1670b8a5808274f1451831f59b58c7ddc4633e0")


def test_every_seed_tag_with_the_seed_config():
    names = list(tvm_backend_adreno.target_tags.SEED_TAGS)
    registered = {name: get_tag(name) for name in names}
    digest = hashlib.sha256(json.dumps(registered, sort_keys=True).encode()).hexdigest()
    assert (len(registered), digest) == SEED_DIGEST


def test_record_requires_opencl_and_vulkan_loaded_before_it():
    records = {r.name: r for r in tvm.backend.list_backends()}
    adreno = records["adreno"]
    assert (adreno.state, adreno.requires, adreno.n_tags, adreno.pipelines) == (
        "loaded", ("opencl", "vulkan"), 5, ("adreno",))
    assert adreno.target_kinds == ()
    assert records["opencl"].state == records["vulkan"].state == "loaded"
    assert tvm.tirx.adreno is tvm_backend_adreno


def test_loading_adreno_alone_loads_opencl_and_vulkan_first():
    code = ("import tvm.backend, tvm_backend_adreno; tvm_backend_adreno.register_backend(); "
            "print(tvm.backend.is_loaded('opencl'), tvm.backend.is_loaded('vulkan'), "
            "tvm.backend.is_loaded('adreno'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=_env(TVM_BACKENDS="none"))
    assert out.stdout.split() == ["True", "True", "True"]


def _env(**extra: str) -> dict[str, str]:
    import os

    return {**os.environ, **extra}


@pytest.mark.parametrize(("tag", "keys"), [
    ("qcom/adreno-opencl", ("adreno", "opencl", "gpu")),
    ("qcom/adreno-opencl-clml", ("adreno", "opencl", "gpu", "clml")),
    ("qcom/adreno-opencl-texture", ("adreno", "opencl", "gpu", "texture")),
])
def test_opencl_tags_make_targets_that_pick_the_adreno_pipeline(tag, keys):
    t = Target(tag)
    assert (t.kind.name, t.attrs["device"], t.keys) == ("opencl", "adreno", keys)
    assert get_default_tir_pipeline(t) == "adreno"


def test_other_opencl_targets_keep_the_default_pipeline():
    assert get_default_tir_pipeline(Target("opencl")) == "default"
    assert get_default_tir_pipeline(Target({"kind": "opencl", "device": "adreno"})) == "default"
    assert get_default_tir_pipeline(Target({"kind": "opencl", "keys": ["adreno", "gpu"]})) == \
        "adreno"


@pytest.mark.parametrize("tag", ["qcom/adreno-vulkan", "qcom/adreno-vulkan-texture"])
def test_vulkan_tags(tag):
    from tvm.target.kind import list_target_kinds

    if "vulkan" not in list_target_kinds():
        with pytest.raises(TargetError) as err:
            Target(tag)
        assert "vulkan" in str(err.value)
        return
    t = Target(tag)
    assert (t.kind.name, t.attrs["device"], t.keys[:2]) == ("vulkan", "adreno", ("adreno", "vulkan"))
    assert get_default_tir_pipeline(t) != "adreno"  # the seed's rule is for OpenCL only


@T.prim_func
def softmax_rows(A: T.Buffer((4, 512), "float32"), B: T.Buffer((4, 512), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([128])
    mx = T.alloc_buffer((4,), "float32", scope="shared")
    sm = T.alloc_buffer((4,), "float32", scope="shared")
    Tx.cta.max(mx, A, axes=-1)
    for i in T.serial(4):
        Tx.cta.sub(B[i:i + 1, 0:512], A[i:i + 1, 0:512], mx[i])
    Tx.cta.exp(B, B)
    Tx.cta.sum(sm, B, axes=-1)
    for i in T.serial(4):
        Tx.cta.fdiv(B[i:i + 1, 0:512], B[i:i + 1, 0:512], sm[i])


def test_the_adreno_pipeline_is_the_default_one_after_the_texture_check():
    from tvm.tirx.compilation_pipeline import get_tir_pipeline

    adreno, default = get_tir_pipeline("adreno"), get_tir_pipeline("default")
    assert adreno.name == "adreno" and [p.pass_name for p in adreno.main] == [
        "AdrenoTextureScopes", default.main.pass_name]
    assert (str(adreno.host), str(adreno.device)) == (str(default.host), str(default.device))


def test_compiling_for_adreno_runs_the_adreno_pipeline(tmp_path):
    from tvm.transform import PassContext

    with PassContext(dump_dir=tmp_path):
        tvm.driver.lower(softmax_rows, target="qcom/adreno-opencl")
    stages = sorted(p.name for p in tmp_path.iterdir())
    assert stages[:3] == ["00_input.py", "01_AdrenoTextureScopes.py",
                          "02_TilePrimitiveDispatch.py"]


@pytest.mark.opencl
def test_adreno_opencl_kernel_runs_through_the_opencl_backend():
    ex = tvm.compile(softmax_rows, target="qcom/adreno-opencl")
    assert ex.backend == "opencl"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 512), "float32")
    b = np.zeros_like(a)
    ex(a, b)
    e = np.exp(a.astype("float64") - a.max(-1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


@T.prim_func
def textured(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    W = T.alloc_buffer((64,), "float32", scope="global.texture")
    W[tx] = A[tx]
    A[tx] = W[tx] * 2.0


def test_texture_memory_is_refused_with_the_buffer_name():
    with pytest.raises(TVMError) as err:
        tvm.compile(textured, target="qcom/adreno-opencl-texture")
    assert str(err.value) == (
        "textured: buffer `W` is in texture memory (scope 'global.texture'); tvm-backend-adreno "
        "does not lower textures to OpenCL images (the seed's InjectTextureAlloc/TextureFlatten "
        "are not ported): use global memory")
