"""``tvm.compile`` for CUDA targets: codegen -> NVRTC cubin -> :class:`CudaExecutable`.

Building needs no GPU and no driver (NVRTC from the wheel): ``tvm.compile(f,
target="nvidia/nvidia-h100")`` works on a CPU-only machine, and the executable holds the CUDA
source and the cubin. Calling it there raises ``RuntimeError("no CUDA device is present: ...")``.

A call of the executable runs the host function (``docs/lowering.md`` section 4) without
generating host code: it checks the arguments (core's :func:`check_arguments`), evaluates each
kernel's launch dimensions from the argument values, and launches the kernels in order through
:class:`tvm_backend_cuda.runtime.CudaModule`, on the current torch stream when the arrays are
torch tensors.

Once a call has loaded the kernels, a function whose shapes and launch sizes are constant gets a
fast call (:func:`_make_fast_call`) built from that plan: it accepts exactly what core's checks
accept from plain torch tensors and Python scalars (anything else goes to the full path, which
raises core's errors), checking the tensors with one call of torch's C++ tensor guard where
torch has one, then launches with a launch config made once. Host time per call against a bare
``cuda.core.launch``: ``docs/perf.md`` (bench/cuda_launch_overhead.py).

Everything the call needs is kept as plain data (expressions as small JSON trees), so
``export_library`` writes it next to the cubin and ``tvm.runtime.load_module`` rebuilds the
same executable without the IR.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tvm.error import TVMError
from tvm.ir import expr as E
from tvm.ir.function import IRModule, PrimFunc
from tvm.runtime.executable import Executable, read_container

__all__ = ["BUILD_OPTIONS", "CudaExecutable", "build_module", "default_arch", "load_executable"]

BUILD_OPTIONS = {
    "arch": "the SM arch to compile for (default: the target's, else the GPU's, else sm_80)",
    "options": "extra NVRTC options, e.g. ['-lineinfo', '--use_fast_math']",
    "cache": "use the cubin cache (default True)",
}
_FORMAT = 1
LAUNCH_KERNEL = "tirx.launch_kernel"
GRID_CONSTANT = "grid_constant"  # ptr_scope of a T.TensorMap parameter (codegen.GRID_CONSTANT)
TENSOR_MAP = "tensormap"  # its parameter kind (codegen.TENSOR_MAP, runtime.TENSOR_MAP)


# -- build ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _device_arch() -> str | None:
    from .runtime import has_cuda_device

    if not has_cuda_device():
        return None
    from cuda.bindings import driver

    attr = driver.CUdevice_attribute
    _, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0)
    _, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0)
    num = int(major) * 10 + int(minor)
    return f"sm_{num}a" if num >= 90 else f"sm_{num}"


def default_arch(target: Any) -> str:
    """The arch a build uses: the target's ``arch``, else device 0's, else ``sm_80``."""
    arch = target.attrs.get("arch")
    if arch:
        return str(arch)
    return _device_arch() or "sm_80"


def build_module(mod: IRModule, target: Any, options: Mapping[str, Any]) -> CudaExecutable:
    unknown = sorted(set(options) - set(BUILD_OPTIONS))
    if unknown:
        raise TypeError(f"unknown compile option(s) {unknown} for target 'cuda'; known: "
                        f"{', '.join(sorted(BUILD_OPTIONS))}")
    from .codegen import generate_cuda
    from .nvshmem import compile_auto
    from .plugin import validate_arch

    arch = validate_arch(str(options.get("arch") or default_arch(target)))
    source, kernels = generate_cuda(mod, target)
    _check_limits(kernels, target)
    extra = tuple(options.get("options") or ())
    # kernels that call NVSHMEM are compiled relocatable and linked with its device library
    compiled = compile_auto(source, arch, options=extra, cache=bool(options.get("cache", True)))
    meta = _describe(mod, kernels)
    return CudaExecutable(target, source, compiled.cubin, arch, meta,
                          nvrtc_options=list(compiled.options))


def _check_limits(kernels: Sequence[Any], target: Any) -> None:
    limit = int(target.attrs.get("max_threads_per_block", 1024))
    for k in kernels:
        launch = k.func.attrs.get("tirx.launch")
        block = [d.value for d in getattr(launch, "block", []) if isinstance(d, E.IntImm)]
        if len(block) == 3 and block[0] * block[1] * block[2] > limit:
            raise TVMError(f"kernel {k.name} has {block[0] * block[1] * block[2]} threads per "
                           f"block; target {target.tag or target} allows {limit}")


# -- plain-data description of the host functions -------------------------------------------------


class _VarTable:
    def __init__(self) -> None:
        self.keys: dict[int, str] = {}
        self.vars: dict[str, list[str]] = {}

    def key(self, v: E.Var) -> str:
        k = self.keys.get(id(v))
        if k is None:
            k = self.keys[id(v)] = f"v{len(self.keys)}"
            self.vars[k] = [v.name, str(v.dtype)]
        return k


def _expr_json(e: Any, table: _VarTable) -> Any:
    e = E.convert(e)
    if isinstance(e, E.IntImm):
        return ["int", int(e.value), str(e.dtype)]
    if isinstance(e, E.FloatImm):
        return ["float", float(e.value), str(e.dtype)]
    if isinstance(e, E.Var):
        return ["var", table.key(e)]
    if isinstance(e, E.Cast):
        return ["Cast", str(e.dtype), _expr_json(e.value, table)]
    if isinstance(e, E.Select):
        return ["Select", *(_expr_json(x, table) for x in (e.condition, e.true_value,
                                                           e.false_value))]
    if isinstance(e, E.Not):
        return ["Not", _expr_json(e.a, table)]
    if isinstance(e, E.BinaryOp):
        return [type(e).__name__, _expr_json(e.a, table), _expr_json(e.b, table)]
    raise TVMError(f"a launch dimension or shape uses a {type(e).__name__} ({e!r}), which the "
                   "CUDA executable cannot evaluate on the host")


def _expr_from_json(j: Any, vars_: Mapping[str, E.Var]) -> Any:
    tag = j[0]
    if tag == "int":
        return E.IntImm(j[2], j[1])
    if tag == "float":
        return E.FloatImm(j[2], j[1])
    if tag == "var":
        return vars_[j[1]]
    if tag == "Cast":
        return E.Cast(j[1], _expr_from_json(j[2], vars_))
    if tag == "Select":
        return E.Select(*(_expr_from_json(x, vars_) for x in j[1:]))
    if tag == "Not":
        return E.Not(_expr_from_json(j[1], vars_))
    cls = getattr(E, tag)
    return cls(_expr_from_json(j[1], vars_), _expr_from_json(j[2], vars_))


def _describe(mod: IRModule, kernels: Sequence[Any]) -> dict[str, Any]:
    """Everything a call needs, as JSON-able data: per host function its parameters and its
    launches; per kernel its parameter types."""

    kernel_funcs = {k.name: k for k in kernels}
    out: dict[str, Any] = {"format": _FORMAT, "kernels": {}, "functions": {}}
    for k in kernels:
        params = [[p.name, _kernel_param_type(p)] for p in k.info.params]
        out["kernels"][k.name] = {"params": params, "vector_align": k.vector_align}
    for name, func in mod.functions.items():
        if not func.attrs.get("tirx.is_host"):
            continue
        out["functions"][str(func.attrs.get("global_symbol", name))] = \
            _describe_host(func, kernel_funcs)
    return out


def _kernel_param_type(p: Any) -> str:
    """A kernel parameter's type for the runtime: ``ptr``, ``tensormap`` or a scalar dtype."""
    if p.kind == TENSOR_MAP:
        return TENSOR_MAP
    return "ptr" if p.kind in ("buffer", "handle") else p.dtype


def _describe_host(func: PrimFunc, kernels: Mapping[str, Any]) -> dict[str, Any]:
    from tvm.ir import stmt as S
    from tvm.tirx.transform import function_signature

    table = _VarTable()
    params = []
    data_index: dict[int, int] = {}
    for i, spec in enumerate(function_signature(func)):
        entry: dict[str, Any] = {"name": spec.name, "kind": spec.kind, "dtype": spec.dtype,
                                 "var": table.key(spec.var) if spec.var is not None else None}
        if spec.kind == "buffer":
            entry["shape"] = [_expr_json(d, table) for d in spec.shape]
            entry["strides"] = [_expr_json(d, table) for d in spec.strides]
            entry["scope"] = spec.scope
            if spec.data is not None:
                data_index[id(spec.data)] = i
        elif spec.var is not None and spec.var.ptr_scope == GRID_CONSTANT:
            entry["kind"] = TENSOR_MAP  # T.TensorMap: the argument goes to the kernel as is
            data_index[id(spec.var)] = i
        params.append(entry)
    launches = []
    for stmt in _flat(func.body):
        if isinstance(stmt, S.Evaluate) and isinstance(stmt.value, E.Call) \
                and stmt.value.op.name == LAUNCH_KERNEL:
            call = stmt.value
            kname = call.args[0].value
            kernel = kernels.get(kname)
            if kernel is None:
                raise TVMError(f"host function {func.name} launches {kname}, which is not in "
                               "the generated source")
            launch = kernel.func.attrs.get("tirx.launch")
            args = []
            for a in call.args[1:]:
                if isinstance(a, E.Var) and id(a) in data_index:
                    args.append(["arg", data_index[id(a)]])
                else:
                    args.append(["expr", _expr_json(a, table)])
            launches.append({
                "kernel": kname, "args": args,
                "grid": [_expr_json(d, table) for d in launch.grid],
                "block": [_expr_json(d, table) for d in launch.block],
                "smem": _expr_json(launch.dyn_smem_bytes, table),
            })
        elif not _is_no_op(stmt):
            raise TVMError(f"host function {func.name}: the CUDA executable runs only kernel "
                           f"launches on the host, found a {type(stmt).__name__}")
    return {"params": params, "launches": launches, "vars": table.vars}


def _flat(stmt: Any) -> list[Any]:
    from tvm.ir import stmt as S

    if isinstance(stmt, S.SeqStmt):
        return [x for s in stmt.seq for x in _flat(s)]
    return [stmt]


def _is_no_op(stmt: Any) -> bool:
    from tvm.ir import stmt as S

    return isinstance(stmt, S.Evaluate) and isinstance(stmt.value, (E.IntImm, E.FloatImm))


# -- calling ---------------------------------------------------------------------------------------


class _Launch:
    __slots__ = ("args", "block", "grid", "kernel", "name", "smem", "static")

    def __init__(self, name: str, kernel: Any, args: list[tuple[str, Any]], grid: list[Any],
                 block: list[Any], smem: Any) -> None:
        self.name = name
        self.kernel = kernel
        self.args = args
        consts = [*grid, *block, smem]
        self.static = all(isinstance(x, E.IntImm) for x in consts)
        if self.static:
            self.grid: Any = tuple(int(x.value) for x in grid)
            self.block: Any = tuple(int(x.value) for x in block)
            self.smem: Any = int(smem.value)
        else:
            self.grid, self.block, self.smem = grid, block, smem


class CudaFunction:
    """One host function of a :class:`CudaExecutable`, callable on device arrays."""

    def __init__(self, exe: CudaExecutable, name: str, desc: Mapping[str, Any]) -> None:
        from tvm.tirx.transform import ParamSpec

        self.name = name
        self._exe = exe
        vars_ = {k: E.Var(n, dt) for k, (n, dt) in desc["vars"].items()}
        self._vars = vars_
        specs = []
        self._tensor_maps: tuple[int, ...] = ()  # indices of T.TensorMap parameters
        for i, p in enumerate(desc["params"]):
            var = vars_[p["var"]] if p.get("var") else None
            if p["kind"] == TENSOR_MAP:
                # core checks it as a handle (given None); _tensor_map_args checks the value
                specs.append(ParamSpec(p["name"], "scalar", "handle", var=var))
                self._tensor_maps += (i,)
            elif p["kind"] == "buffer":
                specs.append(ParamSpec(
                    p["name"], "buffer", p["dtype"],
                    tuple(_expr_from_json(d, vars_) for d in p["shape"]),
                    tuple(_expr_from_json(d, vars_) for d in p["strides"]),
                    p.get("scope", "global"), var, None))
            else:
                specs.append(ParamSpec(p["name"], "scalar", p["dtype"], var=var))
        self.specs = specs
        self._launch_desc = desc["launches"]
        self._launches: list[_Launch] | None = None
        self._fast: list[tuple[int, str, tuple[int, ...]]] | None = self._fast_plan()
        self._align = self._alignment_plan(exe.meta["kernels"])
        # None: not prepared yet (after the first full call); False: not applicable
        self._fast_plan_torch: Any = None
        # the prepared fast call (args tuple -> launched?), see _make_fast_call
        self._fast_call: Callable[[Sequence[Any]], bool] | None = None

    def _fast_plan(self) -> list[tuple[int, str, tuple[int, ...]]] | None:
        """(index, dtype, shape) of every buffer when all shapes are constant and arrays are
        contiguous: then a torch tensor is checked with a few attribute reads."""
        plan = []
        for i, s in enumerate(self.specs):
            if s.kind != "buffer":
                continue
            if s.strides or not all(isinstance(d, E.IntImm) for d in s.shape):
                return None
            plan.append((i, s.dtype, tuple(int(d.value) for d in s.shape
                                           if isinstance(d, E.IntImm))))
        return plan

    def _alignment_plan(self, kernels: Mapping[str, Any]) -> list[tuple[int, int]]:
        out: dict[int, int] = {}
        for launch in self._launch_desc:
            need = kernels[launch["kernel"]].get("vector_align", {})
            params = kernels[launch["kernel"]]["params"]
            for (pname, _), ref in zip(params, launch["args"]):
                if ref[0] == "arg" and pname in need:
                    out[ref[1]] = max(out.get(ref[1], 0), int(need[pname]))
        return sorted(out.items())

    def _build_launches(self) -> list[_Launch]:
        kernels = self._exe.module()
        out = []
        for d in self._launch_desc:
            args = [("arg", ref[1]) if ref[0] == "arg" else
                    ("expr", _expr_from_json(ref[1], self._vars)) for ref in d["args"]]
            out.append(_Launch(d["kernel"], kernels.get_kernel(d["kernel"]), args,
                               [_expr_from_json(x, self._vars) for x in d["grid"]],
                               [_expr_from_json(x, self._vars) for x in d["block"]],
                               _expr_from_json(d["smem"], self._vars)))
        return out

    # -- argument checks ------------------------------------------------------------------------
    def _check(self, args: Sequence[Any]) -> dict[Any, Any]:
        fast = self._fast
        # a shortcut for torch tensors of static shape; scalars always get core's checks (type,
        # range), so only functions without any take it
        if fast is not None and len(fast) == len(self.specs) == len(args):
            torch_dtypes = _torch_dtypes()
            for i, dtype, shape in fast:
                a = args[i]
                if (type(a) not in _TORCH_TENSOR_TYPES or a.dtype is not torch_dtypes.get(dtype)
                        or a.shape != shape or not a.is_cuda or not a.is_contiguous()):
                    break
            else:
                return {}
        from tvm.tirx.transform import check_arguments

        return check_arguments(self.specs, args, "cuda", func_name=self.name)

    def _tensor_map_args(self, args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """(args with each tensor map converted for the launch, args for core's check)."""
        from .runtime import tensor_map_arg

        launch_args, check_args = list(args), list(args)
        if len(args) != len(self.specs):
            return launch_args, check_args  # core's check names the count
        for i in self._tensor_maps:
            try:
                launch_args[i] = tensor_map_arg(args[i])
            except TypeError as e:
                raise TypeError(f"{self.name}: argument {self.specs[i].name!r}: {e}") from None
            check_args[i] = None
        return launch_args, check_args

    def _check_alignment(self, args: Sequence[Any]) -> None:
        for i, align in self._align:
            a = args[i]
            ptr = a.data_ptr() if hasattr(a, "data_ptr") else _cai_pointer(a)
            if ptr is not None and ptr % align:
                raise ValueError(f"{self.name}: argument {self.specs[i].name!r} starts at address "
                                 f"{ptr:#x}, which is not {align}-byte aligned; the kernel reads "
                                 f"it with vector loads. Pass an aligned (e.g. freshly allocated "
                                 f"or .clone()d) array")

    # -- the fast path: torch tensors, static shapes and launch sizes -----------------------------
    def _fast_launch(self, args: Sequence[Any]) -> bool:
        """Check and launch in one pass (the same verdicts as :func:`check_arguments`); False
        sends the call to the full path, which also raises the errors."""
        fast = self._fast_call
        if fast is None:
            if self._fast_plan_torch is None:
                self._prepare_fast()
            fast = self._fast_call
            if fast is None:
                return False
        return fast(args)

    def _prepare_fast(self) -> Any:
        """Build the fast call once a full call has loaded the kernels; mark it not applicable
        (False) for good when the function does not fit it."""
        dtypes = _torch_dtypes()
        if self._launches is None or not dtypes:
            return False  # not yet: no call has loaded the kernels, or no torch
        self._fast_plan_torch = False
        if self._fast is None or not all(x.static for x in self._launches):
            return False
        from . import runtime as rt

        shapes = {i: shape for i, _, shape in self._fast}
        plan: list[tuple[int, Any, Any]] = []
        for i, spec in enumerate(self.specs):
            if spec.kind == "buffer":
                tdt = dtypes.get(spec.dtype)
                if tdt is None:
                    return False
                plan.append((_BUF, tdt, shapes[i]))
            else:
                kind = _SCALAR_KINDS.get(spec.dtype)
                if kind is None:
                    return False  # handles and the like: the full path
                plan.append((kind, None, None))
        scalar_index = {id(s.var): i for i, s in enumerate(self.specs)
                        if s.kind == "scalar" and s.var is not None}
        launches = []
        for launch in self._launches:
            ptypes = launch.kernel.param_types
            if ptypes is None or len(ptypes) != len(launch.args):
                return False
            if launch.smem > rt._DEFAULT_SMEM_LIMIT:
                return False  # the full path opts the kernel in first
            refs: list[tuple[int, Any]] = []
            for (how, ref), ptype in zip(launch.args, ptypes):
                if how == "expr" and isinstance(ref, E.Var) and id(ref) in scalar_index:
                    how, ref = "arg", scalar_index[id(ref)]  # a scalar parameter, passed on
                if how != "arg":
                    return False  # a shape variable or expression: computed by the full path
                if (ptype == "ptr") != (self.specs[ref].kind == "buffer"):
                    return False
                refs.append((ref, None if ptype == "ptr" else rt._scalar_converter(ptype)))
            config = rt._make_config(launch.grid, launch.block, launch.smem, None)
            launches.append((launch.kernel, config, tuple(refs)))
        self._fast_call = _make_fast_call(tuple(plan), tuple(self._align), launches,
                                          _torch_tensor_type())
        self._fast_plan_torch = plan
        return plan

    # -- call -----------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> None:
        fast = self._fast_call
        if fast is not None and fast(args):
            return
        self._full_call(args)

    def _full_call(self, args: Sequence[Any]) -> None:
        """Core's argument checks (their errors), launch dimensions evaluated from the values,
        launches through :class:`~tvm_backend_cuda.runtime.CudaKernel`."""
        for kernel, grid, block, smem, kargs in self.launch_plan(args):
            kernel.launch(grid, block, kargs, shmem=smem)
        if self._fast_plan_torch is None:
            self._prepare_fast()

    def launch_plan(self, args: Sequence[Any]) -> list[tuple[Any, Any, Any, int, list[Any]]]:
        """What a call with ``args`` launches, after the same checks: per kernel launch, in
        order, ``(CudaKernel, grid, block, dynamic shared bytes, kernel arguments)``. For callers
        that launch themselves (``NvshmemContext.run`` launches cooperatively)."""
        exe = self._exe
        if not exe.device_ready():
            from .runtime import no_device_reason

            raise RuntimeError(f"no CUDA device is present: {no_device_reason()}. This "
                               f"executable was compiled for {exe.arch} (compiling needs no GPU);"
                               " run it on a machine with an NVIDIA GPU and driver")
        if self._tensor_maps:
            args, checked = self._tensor_map_args(args)
            values = self._check(checked)
        else:
            values = self._check(args)
        if self._align:
            self._check_alignment(args)
        launches = self._launches
        if launches is None:
            launches = self._launches = self._build_launches()
        plan = []
        for launch in launches:
            kargs = [args[ref] if kind == "arg" else _value(ref, values)
                     for kind, ref in launch.args]
            if launch.static:
                grid, block, smem = launch.grid, launch.block, launch.smem
            else:
                grid, block, smem = _dims(launch, values)
            plan.append((launch.kernel, grid, block, smem, kargs))
        return plan

    def __repr__(self) -> str:
        params = ", ".join(f"{s.name}: {s.dtype}" for s in self.specs)
        return f"<CudaFunction {self.name}({params})>"


# host parameter kinds of the fast call
_BUF, _INT, _FLOAT, _BOOL = 0, 1, 2, 3
_SCALAR_KINDS = {
    **dict.fromkeys(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
                    _INT),
    **dict.fromkeys(("float16", "bfloat16", "float32", "float64"), _FLOAT),
    "bool": _BOOL,
}
_BAD_SCALAR = (TypeError, ValueError, OverflowError)


def _tensor_guard(tensors: Sequence[Any]) -> Callable[..., bool] | None:
    """torch's C++ tensor guard (the one ``torch.compile`` runs before a compiled graph) built
    from tensors that passed the checks: it accepts exactly the tensors equal to them in Python
    type, dispatch keys (so device type), dtype, device index, requires_grad, sizes and strides.
    None where this torch has no usable one (it is private API)."""
    try:
        from torch._C._dynamo.guards import TensorGuards

        guard = TensorGuards(*tensors, dynamic_dims_sizes=None, dynamic_dims_strides=None)
        check = guard.check
        if check(*tensors) is not True:
            return None
    except Exception:  # a torch without it or with another signature: the Python checks
        return None
    return check


def _make_fast_call(plan: tuple[tuple[int, Any, Any], ...], align: tuple[tuple[int, int], ...],
                    launches: list[tuple[Any, Any, tuple[tuple[int, Any], ...]]],
                    tensor_type: Any) -> Callable[[Sequence[Any]], bool]:
    """The per-call work of a function whose shapes and launch sizes are all constant, as one
    closure. It accepts exactly what :func:`check_arguments` accepts from plain torch tensors and
    Python scalars, and returns False for anything else (the full path then answers, with core's
    errors). Tensors are checked with one call of torch's C++ tensor guard, built from the first
    tensors that passed the Python checks, which stay as the fallback. Then ``cuda.core.launch``
    on the current torch stream, with a launch config made once.
    """
    from operator import itemgetter

    from . import runtime as rt

    nargs = len(plan)
    buffers = tuple(i for i, (kind, _, _) in enumerate(plan) if kind == _BUF)
    scalars = tuple((i, kind) for i, (kind, _, _) in enumerate(plan) if kind != _BUF)
    if not buffers:
        return lambda args: False  # no array says where to run: the full path
    only_buffers = not scalars
    pick = itemgetter(*buffers) if len(buffers) > 1 else (lambda args: (args[buffers[0]],))
    data_ptr = tensor_type.data_ptr
    tls = rt._TLS
    raw_stream = rt.torch_raw_stream_getter()
    streams = rt._STREAM_BY_HANDLE
    core_stream = rt.core_stream
    launch = rt.core_launch()
    # the guard's check and the device of the tensors it was built from; None: not built yet,
    # False: none available
    guard: list[Any] = [None, -1]

    def check_slow(tensors: Sequence[Any]) -> int:
        """The Python checks of the tensors: their device, or -1 for the full path."""
        dev = -1
        for a, i in zip(tensors, buffers):
            _, tdt, shape = plan[i]
            if (type(a) is not tensor_type or a.dtype is not tdt or a.shape != shape
                    or not a.is_cuda or not a.is_contiguous()):
                return -1
            d = a.get_device()
            if d != dev:
                if dev >= 0:
                    return -1
                dev = d
        if guard[0] is None:
            guard[0] = _tensor_guard(tensors) or False
            guard[1] = dev
        return dev

    def scalars_ok(args: Sequence[Any]) -> bool:
        for i, kind in scalars:
            t = type(args[i])
            if kind == _INT:
                if t is not int:
                    return False
            elif kind == _FLOAT:
                if t is not float and t is not int:
                    return False
            elif t is not bool:
                return False
        return True

    single = launches[0] if len(launches) == 1 else None
    direct = single is not None and only_buffers and \
        [r for r, _ in single[2]] == list(range(nargs))
    kernel_by_dev: dict[int, list[Any]] = {}

    def kernels_on(dev: int) -> list[Any] | None:
        ks = kernel_by_dev.get(dev)
        if ks is None:
            entries = [k._loaded.get(dev) for k, _, _ in launches]
            if any(e is None for e in entries):
                return None  # not loaded on this device yet: the full path loads it
            ks = kernel_by_dev[dev] = [e.kernel for e in entries]
        return ks

    def fast(args: Sequence[Any]) -> bool:
        if len(args) != nargs:
            return False
        tensors = args if only_buffers else pick(args)
        check = guard[0]
        if check and check(*tensors):
            dev = guard[1]
        else:
            dev = check_slow(tensors)
            if dev < 0:
                return False
        if not only_buffers and not scalars_ok(args):
            return False
        if getattr(tls, "device", None) != dev:
            return False  # the first launch on this thread: the full path makes it current
        ks = kernel_by_dev.get(dev) or kernels_on(dev)
        if ks is None:
            return False
        if direct:
            vals = list(map(data_ptr, tensors))
            for i, al in align:
                if vals[i] % al:
                    return False  # the full path raises the alignment error
            handle = raw_stream(dev)
            stream = streams.get(handle) or core_stream(handle)
            launch(stream, single[1], ks[0], *vals)  # type: ignore[index]
            return True
        ptrs = dict(zip(buffers, map(data_ptr, tensors)))
        for i, al in align:
            if ptrs[i] % al:
                return False
        calls = []
        try:  # every conversion before the first launch
            for (_, config, refs), k in zip(launches, ks):
                calls.append((config, k, [ptrs[r] if conv is None else conv(args[r])
                                          for r, conv in refs]))
        except _BAD_SCALAR:
            return False  # out of its C type's range: the full path names it
        handle = raw_stream(dev)
        stream = streams.get(handle) or core_stream(handle)
        for config, k, vals in calls:
            launch(stream, config, k, *vals)
        return True

    return fast


def _value(expr: Any, values: Mapping[Any, Any]) -> Any:
    if isinstance(expr, E.Var):
        for k, v in values.items():
            if k is expr:
                return v
    if isinstance(expr, (E.IntImm, E.FloatImm)):
        return expr.value
    from tvm.tirx.transform import evaluate

    return evaluate(expr, values)


def _dims(launch: _Launch, values: Mapping[Any, Any]) -> tuple[Any, Any, int]:
    from tvm.tirx.transform import evaluate

    grid = tuple(int(evaluate(x, values)) for x in launch.grid)
    block = tuple(int(evaluate(x, values)) for x in launch.block)
    smem = int(evaluate(launch.smem, values))
    if any(g <= 0 for g in grid):
        raise ValueError(f"kernel {launch.name}: the grid {grid} from these arguments is empty")
    return grid, block, smem


def _cai_pointer(a: Any) -> int | None:
    try:
        return int(a.__cuda_array_interface__["data"][0])
    except Exception:  # not a CUDA array; the argument check already answered for it
        return None


_TORCH_TENSOR_TYPES: set[type] = set()
_TORCH_DTYPES: dict[str, Any] = {}


def _torch_tensor_type() -> Any:
    import sys

    return sys.modules["torch"].Tensor


def _torch_dtypes() -> dict[str, Any]:
    """dtype name -> torch.dtype once torch is imported (it is when arrays come from it)."""
    if _TORCH_DTYPES:
        return _TORCH_DTYPES
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return _TORCH_DTYPES
    _TORCH_TENSOR_TYPES.add(torch.Tensor)
    names = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
             "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64")
    _TORCH_DTYPES.update({n: getattr(torch, n) for n in names if hasattr(torch, n)})
    return _TORCH_DTYPES


class CudaExecutable(Executable):
    """CUDA source + cubin + the host functions' launch plans. Callable on device arrays."""

    backend = "cuda"

    def __init__(self, target: Any, source: str, cubin: bytes, arch: str, meta: Mapping[str, Any],
                 *, nvrtc_options: Sequence[str] = ()) -> None:
        super().__init__(target, list(meta["functions"]))
        self.source = source
        self.cubin = bytes(cubin)
        self.arch = arch
        self.meta = dict(meta)
        self.nvrtc_options = list(nvrtc_options)
        self._module: Any = None
        self._functions: dict[str, CudaFunction] = {}
        self._device_ok: bool | None = None
        self._entry: CudaFunction | None = None

    @property
    def kernel_names(self) -> list[str]:
        return list(self.meta["kernels"])

    def device_ready(self) -> bool:
        ok = self._device_ok
        if ok is None:
            from .runtime import has_cuda_device

            ok = self._device_ok = has_cuda_device()
        return ok

    def module(self) -> Any:
        """The :class:`~tvm_backend_cuda.runtime.CudaModule` of the cubin (made on first use); an
        :class:`~tvm_backend_cuda.nvshmem.NvshmemModule` when the source calls NVSHMEM."""
        if self._module is None:
            from .nvshmem import NvshmemModule, uses_nvshmem
            from .runtime import CudaModule

            specs = {name: [tuple(p) for p in k["params"]] for name, k in self.meta["kernels"].items()}
            # NVSHMEM kernels: bound to this process's NvshmemContext when first loaded
            cls = NvshmemModule if uses_nvshmem(self.source) else CudaModule
            self._module = cls(self.cubin, specs, arch=self.arch)
        return self._module

    def get_function(self, name: str) -> CudaFunction:
        func = self._functions.get(name)
        if func is not None:
            return func
        desc = self.meta["functions"].get(name)
        if desc is None:
            raise KeyError(f"this executable has no function {name!r}; it has "
                           f"{sorted(self.meta['functions'])}")
        func = self._functions[name] = CudaFunction(self, name, desc)
        return func

    def __call__(self, *args: Any) -> Any:
        func = self._entry
        if func is None:
            func = self._entry = self.get_function(self.entry_name)
        fast = func._fast_call  # inlined CudaFunction.__call__: one Python frame less per call
        if fast is not None and fast(args):
            return None
        return func._full_call(args)

    def inspect_source(self, kind: str = "") -> str:
        """``""``/``"cuda"``: the CUDA C++; ``"ptx"``: PTX for this arch (compiled now)."""
        if kind in ("", "cuda", "cu"):
            return self.source
        if kind == "ptx":
            from .compiler import compile_ptx

            return compile_ptx(self.source, self.arch)
        raise ValueError(f"unknown source kind {kind!r}: use 'cuda' or 'ptx'")

    def export_header(self) -> dict[str, Any]:
        return {"arch": self.arch, "cuda": self.meta, "nvrtc_options": self.nvrtc_options}

    def export_payload(self) -> bytes:
        return self.cubin


def load_executable(path_or_bytes: Any, header: Mapping[str, Any]) -> CudaExecutable | None:
    if header.get("backend") != "cuda":
        return None
    from tvm.target import Target

    full, payload = read_container(path_or_bytes)
    meta = full.get("cuda")
    if not meta or meta.get("format", 0) > _FORMAT:
        raise ValueError("this CUDA executable was written by a newer tvm-backend-cuda; upgrade it")
    return CudaExecutable(Target(full["target"]), full.get("source", ""), payload, full["arch"],
                          meta, nvrtc_options=full.get("nvrtc_options", ()))
