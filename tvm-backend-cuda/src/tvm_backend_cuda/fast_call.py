"""The fast call of a CUDA function whose shapes and launch sizes are constant (see
:mod:`.executable`): what a call costs beyond the launch itself, specialised to the function.

:func:`make_fast_call` builds, from the function's plan, one closure ``(args, stream) ->
launched?`` that accepts exactly what core's argument checks accept from plain torch tensors and
Python scalars and says False for anything else (the full call then raises core's errors).
Tensors are checked with one call of torch's C++ tensor guard (:func:`tensor_guard`), the
pointers read with ``data_ptr``, the stream is the caller's (:mod:`.streams`), and the launch is
``cuda.core.launch`` with a config made once, or for a kernel taking tensor maps
``cuLaunchKernel`` with a parameter block cached by the call's pointers (:class:`_RawLauncher`).
A single launch taking the function's arrays gets generated code instead of the closure
(:func:`_single_launch_call`: the object's call itself) and, once the tensors of a call are
known, the hot call (:func:`_hot_call`: guard, device and kernel as constants; with torch's
DLPack C exchange API, one call of the C tensor launcher does the guard's work, the pointer
reads, the stream lookup and the launch). Host time per call: ``docs/perf.md``
(bench/cuda_launch_overhead.py)."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any, NamedTuple, cast

from tvm.backend.sdk import DERIVED, SCALAR, LaunchStep, evaluate_tree

from . import c_launcher as _c
from . import runtime as rt
from . import streams as _streams

__all__ = ["make_fast_call", "prepare_launch", "tensor_guard"]


# -- a launch step of a function, and what the calls read of torch --------------------------


class _Launch:
    """One launch step with its kernel: ``args`` are ``("arg", i)`` (the i-th argument, given
    as is or as its checked scalar value), ``("tree", tree)`` (computed from the values) or
    ``("derived", (i, kind, params))`` (computed by the runtime from the i-th argument: a
    tensor map, :func:`~tvm_backend_cuda.runtime.derive`)."""

    __slots__ = ("args", "block", "grid", "kernel", "name", "smem", "static", "step")

    def __init__(self, step: LaunchStep, kernel: Any) -> None:
        self.step = step
        self.name = step.kernel
        self.kernel = kernel
        self.args: list[tuple[str, Any]] = [_launch_arg(ref) for ref in step.args]
        self.static = step.static
        self.grid: Any = step.grid
        self.block: Any = step.block
        self.smem: Any = step.smem


def _launch_arg(ref: Sequence[Any]) -> tuple[str, Any]:
    if ref[0] == SCALAR:
        return "tree", ref[1]
    if ref[0] == DERIVED:
        return "derived", (ref[1], str(ref[2]), tuple(ref[3]))
    return "arg", ref[1]


def _dims(launch: _Launch, values: Mapping[str, Any]) -> tuple[Any, Any, int]:
    grid = tuple(int(evaluate_tree(x, values)) for x in launch.grid)
    block = tuple(int(evaluate_tree(x, values)) for x in launch.block)
    smem = int(evaluate_tree(launch.smem, values))
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
    return sys.modules["torch"].Tensor


def _torch_dtypes() -> dict[str, Any]:
    """dtype name -> torch.dtype once torch is imported (it is when arrays come from it)."""
    if _TORCH_DTYPES:
        return _TORCH_DTYPES
    torch = sys.modules.get("torch")
    if torch is None:
        return _TORCH_DTYPES
    _TORCH_TENSOR_TYPES.add(torch.Tensor)
    names = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
             "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64")
    _TORCH_DTYPES.update({n: getattr(torch, n) for n in names if hasattr(torch, n)})
    return _TORCH_DTYPES


# -- the fast call ----------------------------------------------------------------------------

# host parameter kinds of the fast call
BUF, _INT, _FLOAT, _BOOL = 0, 1, 2, 3
SCALAR_KINDS = {
    **dict.fromkeys(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
                    _INT),
    **dict.fromkeys(("float16", "bfloat16", "float32", "float64"), _FLOAT),
    "bool": _BOOL,
}
_BAD_SCALAR = (TypeError, ValueError, OverflowError)
# how a fast launch gets one kernel argument: a buffer's pointer, a converted scalar, a
# tensor map derived from a buffer
_PTR, _CONV, _MAP = 0, 1, 2


class _FastLaunch(NamedTuple):
    """A launch of the fast call: ``refs`` are ``(how, index, conv or derive params)``;
    ``raw`` launches (with a by-value tensor map) go through ``cuLaunchKernel`` with a cached
    parameter block, the others through ``cuda.core.launch``."""

    launch: _Launch
    config: Any
    refs: tuple[tuple[int, int, Any], ...]
    raw: bool


def prepare_launch(launch: _Launch, specs: Sequence[Any]) -> _FastLaunch | None:
    """The fast form of ``launch``, or None when it needs the full path."""
    ptypes = launch.kernel.param_types
    if ptypes is None or len(ptypes) != len(launch.args):
        return None
    refs: list[tuple[int, int, Any]] = []
    for (how, ref), ptype in zip(launch.args, ptypes):
        if how == "derived":
            index, kind, params = ref
            if kind != rt.TENSOR_MAP_KIND or ptype != rt.TENSOR_MAP:
                return None
            refs.append((_MAP, index, params))
        elif how != "arg":
            return None  # a shape variable or expression: computed by the full path
        elif (ptype == "ptr") != (specs[ref].kind == "buffer"):
            return None
        elif ptype == "ptr":
            refs.append((_PTR, ref, None))
        else:
            refs.append((_CONV, ref, rt._scalar_converter(ptype)))
    raw = any(r[0] == _MAP for r in refs)
    config = (launch.grid, launch.block, launch.smem) if raw else \
        rt._make_config(launch.grid, launch.block, launch.smem, None)
    return _FastLaunch(launch, config, tuple(refs), raw)


def tensor_guard(tensors: Sequence[Any]) -> Callable[..., bool] | None:
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


class _RawLauncher:
    """The raw launches of one fast launch: the kernel's parameter block (pointers, scalars and
    tensor maps, encoded once) cached by the pointers and scalars of the call (the shapes are
    constant), launched with ``cuLaunchKernel``."""

    _SIZE = 64  # parameter blocks kept per launch (inputs rotated between calls each get one)

    def __init__(self, fl: _FastLaunch, specs: Sequence[Any], name: str) -> None:
        from cuda.bindings import driver

        self.fl = fl
        self.specs = specs
        self.name = name
        self.blocks: dict[tuple[Any, ...], tuple[int, Any]] = {}
        self.cu_launch = driver.cuLaunchKernel
        self.success = driver.CUresult.CUDA_SUCCESS
        grid, block, smem = fl.config
        self.dims = (*rt._dim3(grid, "grid"), *rt._dim3(block, "block"), int(smem))
        self.functions: dict[int, Any] = {}
        self.by_device: dict[int, Any] = {}

    def device_function(self, dev: int, kernel: Any) -> Any:
        """The launchable function of ``kernel`` as loaded on device ``dev`` (cached)."""
        f = self.by_device[dev] = self.function(kernel)
        return f

    def fail(self, err: Any) -> None:
        raise RuntimeError(f"{self.name}: cuLaunchKernel of {self.fl.launch.name} failed: "
                           f"{err.name}")

    def function(self, kernel: Any) -> Any:
        f = self.functions.get(id(kernel))
        if f is None:
            from cuda.bindings import driver

            # a CUkernel (cuda.core's library kernels) launches where a CUfunction does
            f = self.functions[id(kernel)] = driver.CUfunction(int(kernel.handle))
        return f

    def launch(self, kernel: Any, stream_handle: int, params: int) -> None:
        (err,) = self.cu_launch(self.function(kernel), *self.dims, stream_handle, params, 0)
        if err != self.success:
            self.fail(err)

    def block(self, key: tuple[Any, ...], args: Sequence[Any]) -> int:
        """The address of the ``void*[]`` parameter array for these arguments."""
        found = self.blocks.get(key)
        if found is not None:
            return found[0]
        values = []
        for how, index, extra in self.fl.refs:
            if how == _MAP:
                values.append(rt.derived_tensor_map(
                    args[index], extra, what=f"{self.name}: argument {self.specs[index].name!r}"))
            elif how == _PTR:
                values.append(args[index].data_ptr())
            else:
                values.append(extra(args[index]))
        params, holders = rt._raw_param_array(values)
        if len(self.blocks) >= self._SIZE:
            self.blocks.pop(next(iter(self.blocks)))
        self.blocks[key] = (ctypes.addressof(params), (params, holders))
        return self.blocks[key][0]


def make_fast_call(plan: tuple[tuple[int, Any, Any], ...], align: tuple[tuple[int, int], ...],
                    launches: list[_FastLaunch], tensor_type: Any, specs: Sequence[Any],
                    name: str, full: Callable[[Sequence[Any], Any], None] | None = None
                    ) -> Callable[[Sequence[Any], Any], bool]:
    """The per-call work of a function whose shapes and launch sizes are all constant, as one
    closure. It accepts exactly what :func:`check_arguments` accepts from plain torch tensors and
    Python scalars, and returns False for anything else (the full path then answers, with core's
    errors). Tensors are checked with one call of torch's C++ tensor guard, built from the first
    tensors that passed the Python checks, which stay as the fallback. Then the launches, on
    the stream of :func:`~tvm_backend_cuda.runtime.launch_stream` (the current torch stream
    unless the call names one): ``cuda.core.launch`` with a launch config made once, or for a
    kernel taking tensor maps ``cuLaunchKernel`` with a parameter block cached by the call's
    pointers and scalars (the maps are encoded when a pointer is new). With ``full`` (the full
    call, ``(args, stream)``), a single launch's fast call also carries ``direct``: the same
    code as the object's call itself (``f(*args, stream=None)``), going to ``full`` where the
    fast call says False.
    """
    nargs = len(plan)
    buffers = tuple(i for i, (kind, _, _) in enumerate(plan) if kind == BUF)
    scalars = tuple((i, kind) for i, (kind, _, _) in enumerate(plan) if kind != BUF)
    if not buffers:
        return lambda args, stream: False  # no array says where to run: the full path
    only_buffers = not scalars
    pick = itemgetter(*buffers) if len(buffers) > 1 else (lambda args: (args[buffers[0]],))
    data_ptr = tensor_type.data_ptr
    tls = rt._TLS
    raw_stream = _streams.torch_raw_stream_getter()
    streams = _streams._STREAM_BY_HANDLE
    core_stream = _streams.core_stream
    launch = _streams.core_launch()
    scalar_refs = tuple(i for i, _ in scalars)
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
            guard[0] = tensor_guard(tensors) or False
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

    raws = {id(fl): _RawLauncher(fl, specs, name) for fl in launches if fl.raw}
    single = launches[0] if len(launches) == 1 else None
    direct = single is not None and not single.raw and only_buffers and \
        [r for _, r, _ in single.refs] == list(range(nargs))
    kernel_by_dev: dict[int, list[Any]] = {}

    def kernels_on(dev: int) -> list[Any] | None:
        ks = kernel_by_dev.get(dev)
        if ks is None:
            entries = [fl.launch.kernel._loaded.get(dev) for fl in launches]
            if any(e is None or e.smem_limit < fl.launch.smem
                   for e, fl in zip(entries, launches)):
                return None  # not loaded (or opted in to its shared memory) here: the full path
            ks = kernel_by_dev[dev] = [e.kernel for e in entries]
        return ks

    if single is not None and only_buffers and (direct or single.raw):
        return _single_launch_call(nargs, single, raws.get(id(single)), align, check_slow, guard,
                                   kernels_on, kernel_by_dev, data_ptr, raw_stream, streams,
                                   core_stream, launch, full)

    def fast(args: Sequence[Any], stream: Any) -> bool:
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
        if tls.device != dev:
            return False  # the first launch on this thread: the full path makes it current
        ks = kernel_by_dev.get(dev) or kernels_on(dev)
        if ks is None:
            return False
        ptrs = list(map(data_ptr, tensors))
        for i, al in align:
            if ptrs[buffers.index(i)] % al:
                return False  # the full path raises the alignment error
        if stream is None:
            handle = raw_stream(dev)
            s = streams.get(handle) or core_stream(handle)
        else:
            s = _streams._explicit_stream(stream)
            handle = int(s.handle)
        if direct:
            launch(s, single.config, ks[0], *ptrs)  # type: ignore[union-attr]
            return True
        by_index = dict(zip(buffers, ptrs))
        calls: list[tuple[Any, _RawLauncher | None, Any, Any]] = []
        try:  # every conversion before the first launch
            for fl, k in zip(launches, ks):
                if fl.raw:
                    rl = raws[id(fl)]
                    key = (*ptrs, *[args[i] for i in scalar_refs])
                    calls.append((None, rl, rl.block(key, args), k))
                else:
                    calls.append((fl.config, None, [by_index[r] if how == _PTR else extra(args[r])
                                                    for how, r, extra in fl.refs], k))
        except _BAD_SCALAR:
            return False  # out of its C type's range: the full path names it
        for config, raw_launcher, vals, k in calls:
            if raw_launcher is None:
                launch(s, config, k, *vals)
            else:
                raw_launcher.launch(k, handle, vals)
        return True

    return fast


_SINGLE_LAUNCH = """
def fast(args, stream):
    if len(args) != {n}:
        return False
    {names}, = args
    check = guard[0]
    if check and check({names}):
        dev = guard[1]
    else:
        dev = check_slow(args)
        if dev < 0:
            return False
    if tls.device != dev:
        return False
    ks = kernel_by_dev.get(dev) or kernels_on(dev)
    if ks is None:
        return False
    {ptrs}
    {align}
    if stream is None:
        handle = raw_stream(dev)
        s = streams.get(handle) or core_stream(handle)
    else:
        s = explicit_stream(stream)
        handle = int(s.handle)
    {launch}
    return True
"""
_CORE_LAUNCH = "launch(s, config, ks[0], {ptrs})"
_RAW_LAUNCH = """key = ({ptrs},)
    found = blocks.get(key)
    params = found[0] if found is not None else raw.block(key, args)
    (err,) = cu_launch(functions.get(dev) or raw_function(dev, ks[0]), {dims}, handle, params, 0)
    if err != success:
        raw.fail(err)"""


def _single_launch_call(nargs: int, single: _FastLaunch, raw: _RawLauncher | None,
                        align: Sequence[tuple[int, int]], check_slow: Any, guard: list[Any],
                        kernels_on: Any, kernel_by_dev: dict[int, Any], data_ptr: Any,
                        raw_stream: Any, streams: Any, core_stream: Any, launch: Any,
                        full: Callable[[Sequence[Any], Any], None] | None = None
                        ) -> Callable[[Sequence[Any], Any], bool]:
    """The fast call of the most common function, specialised to its arity: one kernel launch
    whose arguments are the function's arrays (pointers in order, or tensor maps derived from
    them). Generated from :data:`_SINGLE_LAUNCH` so that each argument is a local variable:
    unpacking, the guard call and ``data_ptr`` without a loop cost a few hundred nanoseconds
    less per call, which is the budget of issue 21 (1.2x a bare ``cuda.core.launch``)."""
    names = ", ".join(f"a{i}" for i in range(nargs))
    ptrs = ", ".join(f"p{i}" for i in range(nargs))
    widest: dict[int, int] = {}
    for i, al in align:
        widest[i] = max(widest.get(i, 1), al)
    aligns = tuple(widest.get(i, 1) for i in range(nargs))
    by_align: dict[int, list[str]] = {}
    for i, al in align:
        by_align.setdefault(al, []).append(f"p{i}")
    # one test per alignment: a low bit set in any pointer (vector widths are powers of two)
    checks = "".join(
        f"\n    if ({' | '.join(ps)}) & {al - 1}:\n        return False" if al & (al - 1) == 0
        else "".join(f"\n    if {p} % {al}:\n        return False" for p in ps)
        for al, ps in by_align.items())
    env: dict[str, Any] = {
        "guard": guard, "check_slow": check_slow, "tls": rt._TLS, "kernel_by_dev": kernel_by_dev,
        "kernels_on": kernels_on, "raw_stream": raw_stream, "streams": streams,
        "core_stream": core_stream, "explicit_stream": _streams._explicit_stream}
    if raw is None:
        env.update(launch=launch, config=single.config)
        body = _CORE_LAUNCH.format(ptrs=ptrs)
    else:
        env.update(blocks=raw.blocks, raw=raw, cu_launch=raw.cu_launch, success=raw.success,
                   functions=raw.by_device, raw_function=raw.device_function)
        body = _RAW_LAUNCH.format(ptrs=ptrs, dims=", ".join(map(str, raw.dims)))
    source = _SINGLE_LAUNCH.format(
        n=nargs, names=names, ptrs="; ".join(f"p{i} = data_ptr(a{i})" for i in range(nargs)),
        align=checks.strip() or "pass", launch=body)
    checks = checks.strip() and "\n" + checks.strip("\n")
    env["data_ptr"] = data_ptr
    exec(compile(source, f"<tvm_backend_cuda fast call of {single.launch.name}>", "exec"), env)
    fast = env["fast"]
    if full is not None:  # the same code as the call itself: no frame between it and the caller
        env["full"] = full
        direct = (source.replace("def fast(args, stream):", "def call(*args, stream=None):")
                  .replace("return False", "return full(args, stream)")
                  .replace("return True", "return None"))
        exec(compile(direct, f"<tvm_backend_cuda call of {single.launch.name}>", "exec"), env)
        fast.direct = env["call"]

        def hot(args: Sequence[Any]) -> Callable[..., None] | None:
            """The hot call for tensors like ``args`` (those of the full call that prepared
            the fast one), or None where they do not fit it."""
            if len(args) != nargs or check_slow(args) < 0:
                return None
            dev, check = guard[1], guard[0]
            ks = kernels_on(dev) if check and rt._TLS.device == dev else None
            if ks is None:
                return None
            return _hot_call(nargs, single, raw, checks, env, check, dev, ks[0], fast.direct,
                             tuple(args), aligns)

        fast.hot, fast.guard = hot, guard
    return cast(Callable[[Sequence[Any], Any], bool], fast)


_MISSING = object()  # an argument of the hot call not given (the count error is core's)
_HOT_CALL = """
def call({params}, *rest, stream=None):
    if check({names}) and stream is None and not rest and tls.device == {dev}:
        {ptrs}{align}
        {launch}
    return slow(*[a for a in ({names},) if a is not MISSING], *rest, stream=stream)
"""
_HOT_CORE = """s = streams.get(raw_stream({dev}))
        if s is not None:
            launch(s, config, kernel, {ptrs})
            return None"""
_HOT_RAW = """found = blocks.get(({ptrs},))
        if found is not None:
            (err,) = cu_launch(function, {dims}, raw_stream({dev}), found[0], 0)
            if err == success:
                return None
            raw.fail(err)"""
# the C tensor launcher (c_launcher.py) checks the tensors, reads their pointers and torch's
# current stream through torch's DLPack C exchange API, and launches: 0 launched, -1 not these
# tensors (the general call answers), > 0 the CUresult of a failed launch
_HOT_C_TENSORS = """
def call({params}, *rest, stream=None):
    if stream is None and not rest and tls.device == {dev}:
        err = c_call({names})
        if not err:
            return None
        if err > 0:
            launch_failed(err)
    return slow(*[a for a in ({names},) if a is not MISSING], *rest, stream=stream)
"""
# the same launches through the C launcher (c_launcher.py): the raw stream handle, no lookup
_HOT_C_CORE = """err = c_launch(raw_stream({dev}), {ptrs})
        if not err:
            return None
        launch_failed(err)"""
_HOT_C_RAW = """found = blocks.get(({ptrs},))
        if found is not None:
            err = c_launch(raw_stream({dev}), found[0])
            if not err:
                return None
            launch_failed(err)"""


def _hot_call(nargs: int, single: _FastLaunch, raw: _RawLauncher | None, align: str,
              env: dict[str, Any], check: Any, dev: int, kernel: Any,
              slow: Callable[..., None], tensors: tuple[Any, ...],
              aligns: tuple[int, ...]) -> Callable[..., None]:
    """The call of a single-launch function once its tensors are known (``tensors``, which
    passed the checks; ``aligns``: the alignment each pointer needs): the tensor guard, the
    device and the kernel are constants of the code (no lookups), the arguments are parameters
    (no tuple to unpack). Tensors the guard accepts on the device whose context is current
    launch on torch's current stream; anything else (another device, a stream argument, a
    new stream, a misaligned pointer, a new pointer set of a tensor-map kernel, a wrong count)
    goes to ``slow``, the general call, with the arguments as given. Where the C tensor
    launcher can be made (torch's DLPack C exchange API), it does the guard's work, the pointer
    reads and the stream lookup in one C call instead."""
    names = ", ".join(f"a{i}" for i in range(nargs))
    ptrs = ", ".join(f"p{i}" for i in range(nargs))
    c_call = _c_tensor_launcher(single, kernel, tensors, aligns, raw)
    if c_call is not None:
        hot_env = dict(env, slow=slow, MISSING=_MISSING, c_call=c_call,
                       launch_failed=_launch_failed(single.launch.name))
        source = _HOT_C_TENSORS.format(
            params=", ".join(f"a{i}=MISSING" for i in range(nargs)), names=names, dev=dev)
        exec(compile(source, f"<tvm_backend_cuda hot call of {single.launch.name}>", "exec"),
             hot_env)
        return cast(Callable[..., None], hot_env["call"])
    # a failed alignment test goes to the general call, which raises the error
    align = align.replace("\n    if", "\n        if").replace(
        "\n        return False", "\n            return slow(" + names + ", stream=stream)")
    hot_env = dict(env, check=check, slow=slow, MISSING=_MISSING)
    c_launch = _c_launcher(single, kernel, -1 if raw is not None else nargs)
    if c_launch is not None:
        hot_env.update(c_launch=c_launch, launch_failed=_launch_failed(single.launch.name))
        body = (_HOT_C_CORE if raw is None else _HOT_C_RAW).format(dev=dev, ptrs=ptrs)
    elif raw is None:
        hot_env.update(kernel=kernel)
        body = _HOT_CORE.format(dev=dev, ptrs=ptrs)
    else:
        hot_env.update(function=raw.device_function(dev, kernel))
        body = _HOT_RAW.format(dev=dev, ptrs=ptrs, dims=", ".join(map(str, raw.dims)))
    source = _HOT_CALL.format(
        params=", ".join(f"a{i}=MISSING" for i in range(nargs)), names=names, dev=dev,
        ptrs="; ".join(f"p{i} = data_ptr(a{i})" for i in range(nargs)), align=align,
        launch=body)
    exec(compile(source, f"<tvm_backend_cuda hot call of {single.launch.name}>", "exec"),
         hot_env)
    return cast(Callable[..., None], hot_env["call"])


def _c_launcher(single: _FastLaunch, kernel: Any, nptrs: int) -> Any:
    """The C launcher (:mod:`.c_launcher`) of ``kernel`` with the launch's constant sizes and
    ``nptrs`` pointers (-1: a parameter array), or None (the extension is unavailable)."""
    launch = single.launch
    grid, block = rt._dim3(launch.grid, "grid"), rt._dim3(launch.block, "block")
    try:
        return _c.make_launcher(int(kernel.handle), grid, block, int(launch.smem), nptrs)
    except OSError:  # no driver library to take cuLaunchKernel from: cuda.core launches
        return None


def _c_tensor_launcher(single: _FastLaunch, kernel: Any, tensors: tuple[Any, ...],
                       aligns: tuple[int, ...], raw: _RawLauncher | None) -> Any:
    """The C tensor launcher (:func:`.c_launcher.make_tensor_launcher`) of ``kernel`` for
    tensors like ``tensors``, launching with the pointers or (``raw``: a tensor-map kernel)
    with ``raw``'s parameter blocks; None where it cannot be made (the Python reads stay)."""
    launch = single.launch
    grid, block = rt._dim3(launch.grid, "grid"), rt._dim3(launch.block, "block")
    try:
        return _c.make_tensor_launcher(int(kernel.handle), grid, block, int(launch.smem),
                                       tensors, aligns, None if raw is None else raw.blocks)
    except OSError:  # no driver library to take cuLaunchKernel from
        return None


def _launch_failed(kernel: str) -> Callable[[int], None]:
    def fail(err: int) -> None:
        from cuda.bindings import driver

        try:
            name = driver.CUresult(err).name
        except ValueError:
            name = f"CUresult {err}"
        raise RuntimeError(f"cuLaunchKernel of {kernel} failed: {name}")

    return fail
