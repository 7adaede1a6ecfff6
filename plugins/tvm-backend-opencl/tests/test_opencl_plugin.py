"""Registration through the hooks: backend record, aliases, target kind, ``T.opencl``, and a
light import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import opencl_helpers  # noqa: F401 - loads the backend
import pytest

import tvm
import tvm.backend
from tvm import script
from tvm.error import TargetError
from tvm.ir import Op
from tvm.target import Target


def test_listed_as_loaded_with_what_it_registered():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "opencl"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-opencl"
    assert record.target_kinds == ("opencl",)
    assert record.namespaces == ("opencl",)
    assert record.n_tags == 0
    assert record.n_ops == 2
    assert record.n_dispatch == 3  # workgroup_tree for sum, max, min


def test_register_backend_is_idempotent_and_aliased():
    import tvm_backend_opencl

    assert tvm_backend_opencl.register_backend() is tvm_backend_opencl
    assert tvm.backend.load("opencl") is tvm_backend_opencl
    assert tvm.backend.opencl is tvm_backend_opencl
    assert tvm.tirx.opencl is tvm_backend_opencl
    assert importlib.import_module("tvm.tirx.opencl.op").barrier is not None


def test_target_kind_defaults():
    t = Target("opencl")
    assert t.kind.device_type == "opencl"
    assert t.keys == ("opencl", "gpu")
    assert (t.attrs["max_num_threads"], t.attrs["max_threads_per_block"],
            t.attrs["max_shared_memory_per_block"], t.attrs["thread_warp_size"]) == (
        256, 1024, 32768, 1)
    assert (t.attrs["device_type"], t.attrs["platform"], t.attrs["device"]) == ("all", "", "")
    assert (t.attrs["fp16"], t.attrs["fp64"]) == (False, True)


def test_target_from_text_and_dict():
    t = Target("opencl -device_type=cpu -max_threads_per_block=4096")
    assert (t.attrs["device_type"], t.attrs["max_threads_per_block"]) == ("cpu", 4096)
    assert Target({"kind": "opencl", "device": "adreno"}).attrs["device"] == "adreno"


@pytest.mark.parametrize(("config", "message"), [
    ({"device_type": "fpga"}, "device_type must be one of all, default, gpu, cpu, accelerator, "
                              "got 'fpga'"),
    ({"max_threads_per_block": 0}, "max_threads_per_block (the largest work-group) must be "
                                   "positive, got 0"),
    ({"max_num_threads": 512, "max_threads_per_block": 256},
     "max_num_threads (512) exceeds max_threads_per_block (256)"),
    ({"fp16": "maybe"}, "attribute 'fp16' must be bool"),
    ({"arch": "sm_90"}, "target kind 'opencl' has no attribute 'arch'"),
])
def test_bad_targets_say_what_is_wrong(config, message):
    with pytest.raises(TargetError) as err:
        Target({"kind": "opencl", **config})
    assert message in str(err.value)


HEADER = (
    "@T.prim_func\n"
    'def f(A: T.Buffer((64,), "float32")):\n'
)


@pytest.mark.parametrize(("written", "printed"), [
    ("T.opencl.barrier()", 'T.opencl.barrier("local")'),
    ('T.opencl.barrier("local_global")', 'T.opencl.barrier("local_global")'),
    ('T.opencl.mem_fence("global")', 'T.opencl.mem_fence("global")'),
])
def test_namespace_printed_form_and_round_trip(written, printed):
    func = script.from_source(HEADER + "    " + written + "\n")
    text = script.to_script(func)
    assert "    " + printed + "\n" in text
    assert tvm.ir.structural_equal(script.from_source(text), func)
    assert Op.get("tirx.opencl.barrier").category == "device_intrin"


def test_namespace_rejects_unknown_memory():
    from tvm.script import tirx as T

    with pytest.raises(ValueError) as err:
        T.opencl.barrier("texture")
    assert str(err.value) == ("T.opencl.barrier: unknown memory 'texture'; expected one of "
                              "['global', 'local', 'local_global']")


def test_import_tvm_stays_light():
    """Loading the backend imports neither pyopencl nor numpy."""
    code = ("import sys, tvm, tvm_backend_opencl; tvm_backend_opencl.register_backend(); "
            "print(sorted(m for m in ('pyopencl', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
