"""What goes wrong says what, where and how to fix it: bad arguments (before the device is
touched), a kernel the driver rejects (its log and a command that reproduces the build), no
device, forced variants that do not apply, and options."""

from __future__ import annotations

import shlex
import subprocess

import numpy as np
import pytest
from opencl_helpers import compile_opencl

from tvm.error import CompileError, OptionError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm_backend_opencl import runtime


@T.prim_func
def vadd(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
         C: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@pytest.mark.parametrize(("args", "error", "message"), [
    (lambda z: (z.astype("float64"), z, z), ValueError,
     "vadd: argument 'A': expected dtype float32, got float64"),
    (lambda z: (z[:100], z, z), ValueError,
     "vadd: argument 'A': expected shape (256,), got (100,)"),
    (lambda z: (z, z), TypeError, "vadd() takes 3 arguments (A, B, C), got 2"),
])
def test_argument_errors_name_the_parameter(args, error, message):
    ex = compile_opencl(vadd, check=False)
    with pytest.raises(error) as err:
        ex(*args(np.zeros(256, "float32")))
    assert str(err.value) == message


def test_no_device_says_what_to_install(monkeypatch):
    ex = compile_opencl(vadd, check=False)

    def no_driver(query):
        raise runtime.OpenCLRuntimeUnavailable("no OpenCL platform (clGetPlatformIDs failed)")

    monkeypatch.setattr(runtime, "_DEVICES", {})
    monkeypatch.setattr(runtime, "_find", no_driver)
    z = np.zeros(256, "float32")
    with pytest.raises(runtime.OpenCLRuntimeUnavailable) as err:
        ex(z, z, z)
    assert str(err.value) == (
        "cannot run ['vadd'] here: no OpenCL platform (clGetPlatformIDs failed). The OpenCL C "
        "is in ex.inspect_source()")
    from tvm.error import DeviceUnavailableError

    assert isinstance(err.value, DeviceUnavailableError)


def test_unavailable_reason_names_the_package(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyopencl(name, *args, **kwargs):
        if name == "pyopencl":
            raise ImportError("No module named 'pyopencl'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(runtime, "_REASONS", {})
    monkeypatch.setattr(builtins, "__import__", no_pyopencl)
    assert runtime.unavailable_reason() == (
        "pyopencl is not installed (No module named 'pyopencl'); pip install pyopencl")


@T.prim_func
def calls_unknown(A: T.Buffer((64,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    A[tx] = T.call_extern("float32", "no_such_function", A[tx])


@pytest.mark.opencl
def test_driver_rejection_carries_log_and_repro_command():
    with pytest.raises(CompileError) as err:
        compile_opencl(calls_unknown)
    text = str(err.value)
    assert text.startswith("the OpenCL driver could not build the OpenCL C of calls_unknown for ")
    assert "no_such_function" in err.value.log
    command = shlex.split(err.value.command)
    assert command[1:3] == ["-m", "tvm_backend_opencl.compiler"]
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 1 and "no_such_function" in again.stderr


def test_without_the_check_the_source_is_still_produced():
    ex = compile_opencl(calls_unknown, check=False)
    assert "A[tx] = no_such_function(A[tx]);" in ex.inspect_source()


def test_unknown_option():
    with pytest.raises(OptionError) as err:
        compile_opencl(vadd, opt_level=3)
    assert str(err.value).startswith(
        "unknown compile option(s) ['opt_level'] for target 'opencl'; known: bounds_check, "
        "build_options, cache, check")


@T.prim_func
def odd_group(A: T.Buffer((2, 500), "float32"), S: T.Buffer((2,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([96])
    Tx.cta.sum(S, A, axes=-1, dispatch="workgroup_tree")


def test_forced_tree_on_a_work_group_that_is_no_power_of_two():
    with pytest.raises(RuntimeError) as err:
        compile_opencl(odd_group, check=False)
    assert "the work-group has 96 work-items; the tree needs a constant power of two" in str(
        err.value)


@T.prim_func
def warp_sum(A: T.Buffer((4, 64), "float32"), S: T.Buffer((4,), "float32")):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    Tx.warp.sum(S, A, axes=-1)


def test_warp_scope_has_no_barrier_on_opencl():
    with pytest.raises(RuntimeError) as err:
        compile_opencl(warp_sum, check=False)
    assert ("no barrier for scope 'warp' on target 'opencl'; the backend registers one with "
            "register_scope_barrier('opencl', 'warp', fn)") in str(err.value)


@T.prim_func
def passes_a_handle(A: T.Buffer((64,), "float32"), h: T.handle):
    T.device_entry()
    bx = T.cta_id([1])
    tx = T.thread_id([64])
    A[tx] = T.call_extern("float32", "use", h)


def test_a_kernel_takes_no_opaque_handle():
    from tvm.error import CodegenError

    with pytest.raises(CodegenError) as err:
        compile_opencl(passes_a_handle, check=False)
    assert str(err.value) == (
        "target 'opencl': `passes_a_handle` passes the handle 'h' to kernel "
        "`passes_a_handle_kernel`: only buffer arguments and scalars can cross to a kernel of "
        "this target")
