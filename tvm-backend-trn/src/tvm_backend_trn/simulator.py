"""Run an :mod:`~tvm_backend_trn.isa` kernel on numpy with a NeuronCore hardware model.

SBUF and PSUM are byte arenas of ``partitions x bytes-per-partition``; every allocation is a
typed window into them, and every access pattern a strided numpy view of that window, so an
instruction is one vectorized numpy operation on a whole tile. Engines compute in fp32 and round
to the destination dtype on write (bf16 and fp8 through ``ml_dtypes``, imported only here and
only when a kernel uses those dtypes). Arenas start filled with ``0xFF`` bytes (NaN in every
float dtype) so that reading memory nothing wrote shows up in the results.

Every broken rule raises :class:`SimulatorError` naming the rule, the instruction's index in
program order, its loop indices and its NKI form, e.g.::

    nc_matmul: moving free size 600 exceeds 512
      at instruction #3 [k=0]: nisa.nc_matmul(dst=ps, stationary=a[0:128, 0:128], ...)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tvm.backend import sdk
from tvm.error import BoundsCheckError, TVMError

from . import isa
from .isa import AP, HbmTensor, Kernel, Loop, evaluate
from .nki_render import NkiRenderer
from .simulator_ops import BITWISE, INT_DTYPES, binary_table, np_dtype, unary_table

__all__ = ["TRN1", "TRN2", "HardwareModel", "SimulatorError", "simulate"]


class SimulatorError(TVMError):
    """A kernel broke a hardware rule of the Trainium model while being simulated."""


class _Rule(Exception):
    """A broken rule inside one instruction; the driver adds where it happened."""


class _OutOfBounds(_Rule):
    """A view leaves a dimension of its tensor (checked with ``bounds_check``)."""


@dataclass(frozen=True)
class HardwareModel:
    """The NeuronCore limits the simulator enforces (defaults: NeuronCore-v2, trn1)."""

    partitions: int = 128
    sbuf_bytes: int = 196608
    psum_bytes: int = 16384
    psum_bank_bytes: int = isa.PSUM_BANK_BYTES
    matmul_max_k: int = 128
    matmul_max_m: int = 128
    matmul_max_n: int = 512
    max_free_dims: int = 4

    @property
    def psum_banks(self) -> int:
        return self.psum_bytes // self.psum_bank_bytes

    @classmethod
    def from_target(cls, target: Any) -> HardwareModel:
        """From a target (or its attrs mapping) with the trn kind's attribute names."""
        attrs = target if isinstance(target, Mapping) else getattr(target, "attrs", {})
        base = cls()
        return cls(
            partitions=int(attrs.get("partition_size", base.partitions)),
            sbuf_bytes=int(attrs.get("max_sbuf_size_per_partition", base.sbuf_bytes)),
            psum_bytes=int(attrs.get("max_psum_size_per_partition", base.psum_bytes)),
        )


TRN1 = HardwareModel()
TRN2 = HardwareModel(sbuf_bytes=229376)  # 24 MiB -> 28 MiB of SBUF; PSUM unchanged


def simulate(kernel: Kernel, inputs: Mapping[str, Any], *, hw: HardwareModel | None = None,
             target: Any = None, stats: dict[str, int] | None = None,
             bounds_check: bool | None = None) -> dict[str, Any]:
    """Run ``kernel`` on ``inputs`` (name -> array) and return its outputs (name -> array).

    Inputs whose dtype differs from the declared one are rounded to it first. ``hw`` or
    ``target`` chooses the hardware model (default trn1). ``stats``, when given, receives the
    number of instructions executed per ISA function.

    Every view is always checked to stay inside its tensor. ``bounds_check`` (default: what
    ``tvm.codegen.bounds.bounds_check_enabled`` says, i.e. ``TVM_BOUNDS_CHECK=1`` or the
    PassContext) also checks every axis of an HBM view against the tensor dimension it walks,
    so that a tile running past the end of a row (into the next one) raises
    :class:`~tvm.error.BoundsCheckError` instead of reading the wrong elements.
    """
    if hw is None:
        hw = HardwareModel.from_target(target) if target is not None else TRN1
    if bounds_check is None:
        bounds_check = sdk.bounds_check_enabled()
    machine = _Machine(kernel, hw, bounds_check)
    machine.load_inputs(inputs)
    machine.run(kernel.body, {})
    if stats is not None:
        stats.update(machine.counts)
    return machine.outputs()


# ------------------------------------------------------------------------------ bounds


def _check_dims(t: HbmTensor, ap: AP, offset: int) -> None:
    """Every axis of ``ap`` that walks one dimension of ``t`` (its stride is that dimension's
    row-major stride and it is no longer than the dimension) must stay inside it; an axis that
    spans several rows at once (a merged contiguous run) is checked by the flat range only."""
    strides = [math.prod(t.shape[k + 1:]) for k in range(len(t.shape))]
    coords, rest = [], offset
    for st in strides:
        coords.append(rest // st)
        rest %= st
    for stride, count in ((ap.p_stride, ap.partitions), *ap.pattern):
        if count <= 1:
            continue
        for k, (st, ext) in enumerate(zip(strides, t.shape)):
            if st != abs(stride) or count > ext or ext == 1:
                continue
            last = coords[k] + (count - 1) * (1 if stride > 0 else -1)
            if not 0 <= last < ext:
                index = ", ".join(f"{c}" if j != k else f"{c}..{last}"
                                  for j, c in enumerate(coords))
                raise _OutOfBounds(f"{sdk.BOUNDS_MESSAGE} HBM tensor {ap.tensor!r} of shape "
                                   f"{tuple(t.shape)}: index [{index}] leaves dimension {k} "
                                   f"(extent {ext})")
            break


# ------------------------------------------------------------------------------ machine


class _Machine:
    def __init__(self, kernel: Kernel, hw: HardwareModel, bounds_check: bool = False) -> None:
        import numpy as np

        self.np = np
        self.kernel = kernel
        self.hw = hw
        self.bounds_check = bounds_check
        self.counts: dict[str, int] = {}
        self.index = {id(ins): n for n, ins in enumerate(isa.walk(kernel.body))}
        self.tensors = {t.name: t for t in (*kernel.tensors, *kernel.allocs)}
        self.dtypes = {name: np_dtype(t.dtype) for name, t in self.tensors.items()}
        self.unary = unary_table()
        self.binary = binary_table()
        self._check_allocations()
        self.sbuf = np.full((hw.partitions, hw.sbuf_bytes), 0xFF, dtype=np.uint8)
        self.psum = np.full((hw.partitions, hw.psum_bytes), 0xFF, dtype=np.uint8)
        # Which PSUM bytes hold an nc_matmul result: accumulating onto anything else is UB.
        self.from_matmul = np.zeros((hw.partitions, hw.psum_bytes), dtype=bool)
        self.hbm: dict[str, Any] = {}
        for t in kernel.tensors:
            self.hbm[t.name] = np.full(t.size * isa.dtype_bytes(t.dtype), 0xFF, dtype=np.uint8)

    # -------------------------------------------------------------- setup and results

    def _check_allocations(self) -> None:
        hw = self.hw
        for a in self.kernel.allocs:
            what = f"{a.memory.upper()} tensor {a.name!r}"
            if not 1 <= a.partitions <= hw.partitions:
                raise SimulatorError(f"{what}: partition dim {a.partitions} > {hw.partitions}"
                                     if a.partitions > hw.partitions else
                                     f"{what}: partition dim {a.partitions} < 1")
            end = a.address + a.bytes_per_partition
            if isinstance(a, isa.SbufTensor):
                if a.offset < 0 or end > hw.sbuf_bytes:
                    raise SimulatorError(
                        f"SBUF partition overflow: {what} occupies bytes {a.offset}..{end} of "
                        f"each partition; {end} B > {hw.sbuf_bytes} B")
            else:
                if not 0 <= a.bank < hw.psum_banks or not 0 <= a.offset < hw.psum_bank_bytes:
                    raise SimulatorError(
                        f"{what}: bank {a.bank} offset {a.offset} B is not a PSUM location "
                        f"(banks 0..{hw.psum_banks - 1}, offsets 0..{hw.psum_bank_bytes - 1} B)")
                if end > hw.psum_bytes:
                    raise SimulatorError(
                        f"PSUM partition overflow: {what} occupies bytes {a.address}..{end} of "
                        f"each partition; {end} B > {hw.psum_bytes} B")

    def load_inputs(self, inputs: Mapping[str, Any]) -> None:
        np = self.np
        names = {t.name for t in self.kernel.inputs}
        extra = set(inputs) - names
        if extra:
            raise SimulatorError(f"kernel {self.kernel.name!r} has no input {sorted(extra)[0]!r}"
                                 f" (inputs: {', '.join(sorted(names)) or 'none'})")
        for t in self.kernel.inputs:
            if t.name not in inputs:
                raise SimulatorError(f"kernel {self.kernel.name!r}: missing input {t.name!r}")
            arr = np.asarray(inputs[t.name])
            if tuple(arr.shape) != tuple(t.shape):
                raise SimulatorError(f"input {t.name!r}: shape {tuple(arr.shape)} != declared "
                                     f"{tuple(t.shape)}")
            typed = np.ascontiguousarray(arr.astype(self.dtypes[t.name], copy=False))
            self.hbm[t.name][:] = typed.reshape(-1).view(np.uint8)

    def outputs(self) -> dict[str, Any]:
        return {t.name: self.hbm[t.name].view(self.dtypes[t.name]).reshape(t.shape).copy()
                for t in self.kernel.outputs}

    # -------------------------------------------------------------- driver

    def run(self, body: tuple[isa.Stmt, ...], env: dict[str, int]) -> None:
        for s in body:
            if isinstance(s, Loop):
                if s.var in env:
                    raise SimulatorError(f"loop variable {s.var!r} shadows an enclosing loop")
                for v in range(s.extent):
                    env[s.var] = v
                    self.run(s.body, env)
                del env[s.var]
                continue
            try:
                getattr(self, f"_exec_{type(s).__name__.lower()}")(s, env)
            except _OutOfBounds as rule:
                raise BoundsCheckError(f"{rule}\n  at {self._where(s, env)}") from None
            except _Rule as rule:
                raise SimulatorError(f"{rule}\n  at {self._where(s, env)}") from None
            self.counts[s.name] = self.counts.get(s.name, 0) + 1

    def _where(self, ins: isa.Instr, env: dict[str, int]) -> str:
        try:
            text = NkiRenderer(self.kernel).instr(ins)
        except Exception:  # the rendering itself may hit the same broken rule
            text = repr(ins)
        loops = ", ".join(f"{k}={v}" for k, v in env.items())
        return f"instruction #{self.index.get(id(ins), '?')}{f' [{loops}]' if loops else ''}: {text}"

    # -------------------------------------------------------------- views

    def memory(self, ap: AP) -> str:
        try:
            return self.tensors[ap.tensor].memory
        except KeyError:
            raise _Rule(f"unknown tensor {ap.tensor!r}") from None

    def view(self, ap: AP, env: dict[str, int]) -> Any:
        """A writable strided numpy view of ``ap`` after checking it stays inside its tensor."""
        np = self.np
        t = self.tensors.get(ap.tensor)
        if t is None:
            raise _Rule(f"unknown tensor {ap.tensor!r}")
        dt = self.dtypes[ap.tensor]
        isz = dt.itemsize
        off = evaluate(ap.offset, env)
        lo = off + sum(s * (n - 1) for s, n in ap.pattern if s < 0)
        hi = off + sum(s * (n - 1) for s, n in ap.pattern if s > 0)
        if ap.partitions < 1 or any(n < 1 for _, n in ap.pattern):
            raise _Rule(f"view of {ap.tensor!r} has an empty dim: shape {ap.shape}")
        if isinstance(t, HbmTensor):
            span_hi = hi + max(ap.p_stride * (ap.partitions - 1), 0)
            span_lo = lo + min(ap.p_stride * (ap.partitions - 1), 0)
            if span_lo < 0 or span_hi >= t.size:
                raise _Rule(f"view of HBM tensor {ap.tensor!r} reaches elements "
                            f"{span_lo}..{span_hi}, outside 0..{t.size - 1}")
            if self.bounds_check:
                _check_dims(t, ap, off)
            return np.ndarray(ap.shape, dtype=dt, buffer=self.hbm[ap.tensor], offset=off * isz,
                              strides=(ap.p_stride * isz, *(s * isz for s, _ in ap.pattern)))
        p0 = evaluate(ap.p_start, env)
        if ap.partitions > self.hw.partitions:
            raise _Rule(f"partition dim {ap.partitions} > {self.hw.partitions} "
                        f"(view of {ap.tensor!r})")
        if p0 < 0 or p0 + ap.partitions > t.partitions:
            raise _Rule(f"partitions {p0}..{p0 + ap.partitions - 1} of {ap.tensor!r} are outside "
                        f"its {t.partitions} partitions")
        if len(ap.pattern) > self.hw.max_free_dims:
            raise _Rule(f"access pattern of {ap.tensor!r} has {len(ap.pattern)} free dims; "
                        f"the hardware reads at most {self.hw.max_free_dims}")
        if lo < 0 or hi >= t.free_size:
            raise _Rule(f"view of {ap.tensor!r} reaches elements {lo}..{hi} of a partition, "
                        f"outside 0..{t.free_size - 1}")
        arena = self.sbuf if isinstance(t, isa.SbufTensor) else self.psum
        row = arena.shape[1]
        return np.ndarray(ap.shape, dtype=dt, buffer=arena,
                          offset=p0 * row + t.address + off * isz,
                          strides=(row, *(s * isz for s, _ in ap.pattern)))

    def read(self, ap: AP, env: dict[str, int]) -> Any:
        """The tile as fp32 ``[P, F]`` (engines compute in fp32)."""
        v = self.view(ap, env)
        return v.astype(self.np.float32).reshape(ap.partitions, -1)

    def write(self, ap: AP, env: dict[str, int], values: Any, *, by_matmul: bool = False) -> None:
        np = self.np
        v = self.view(ap, env)
        dt = v.dtype
        if np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)
            values = np.clip(np.rint(values), info.min, info.max)
        v[...] = np.asarray(values).astype(dt).reshape(v.shape)
        if self.memory(ap) == "psum":
            p0, b0, b1 = self._psum_bytes(ap, env)
            self.from_matmul[p0:p0 + ap.partitions, b0:b1] = by_matmul

    def _psum_bytes(self, ap: AP, env: dict[str, int]) -> tuple[int, int, int]:
        """First partition and the byte range ``[b0, b1)`` a PSUM view spans in a partition."""
        t = self.tensors[ap.tensor]
        assert isinstance(t, isa.PsumTensor)
        isz = self.dtypes[ap.tensor].itemsize
        off = evaluate(ap.offset, env)
        lo = off + sum(s * (n - 1) for s, n in ap.pattern if s < 0)
        hi = off + sum(s * (n - 1) for s, n in ap.pattern if s > 0)
        return evaluate(ap.p_start, env), t.address + lo * isz, t.address + (hi + 1) * isz

    def operand(self, x: AP | float | int | None, partitions: int, env: dict[str, int],
                what: str) -> Any:
        """A scalar, or a ``[P, 1]`` column broadcast along the free dims."""
        if not isinstance(x, AP):
            return self.np.float32(x)
        if x.partitions != partitions or x.free_size != 1:
            raise _Rule(f"{what} must be a scalar or a [{partitions}, 1] tile, got shape {x.shape}")
        return self.read(x, env)

    # -------------------------------------------------------------- shared checks

    def on_chip(self, ins: isa.Instr, ap: AP, role: str, allowed: tuple[str, ...] = ("sbuf", "psum")) -> None:
        mem = self.memory(ap)
        if mem not in allowed:
            where = " or ".join(m.upper() for m in allowed)
            raise _Rule(f"{ins.name}: {role} {ap.tensor!r} is in {mem.upper()}; it must be in {where}")

    def same_tile(self, ins: isa.Instr, dst: AP, src: AP, role: str) -> None:
        if dst.partitions != src.partitions:
            raise _Rule(f"{ins.name}: dst has {dst.partitions} partitions but {role} has "
                        f"{src.partitions}")
        if dst.free_size != src.free_size:
            raise _Rule(f"{ins.name}: dst has {dst.free_size} elements per partition but {role} "
                        f"has {src.free_size}")

    def op(self, ins: isa.Instr, table: dict[str, Any], op: str, role: str = "op") -> Any:
        try:
            return table[op]
        except KeyError:
            raise _Rule(f"{ins.name}: unsupported {role} {op!r}; expected one of "
                        f"{', '.join(sorted(table))}") from None

    def apply(self, ins: isa.Instr, op: str, a: Any, b: Any, reverse: bool = False) -> Any:
        fn = self.op(ins, self.binary, op)
        with self.np.errstate(all="ignore"):
            out = fn(b, a) if reverse else fn(a, b)
        return out.astype(self.np.float32) if out.dtype == bool else out

    def reduce_into(self, ins: isa.Instr, op: str | None, res_ap: AP, values: Any,
                    env: dict[str, int]) -> None:
        np = self.np
        table = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum,
                 "multiply": np.multiply}
        fn = self.op(ins, table, op or "add", "reduce_op")
        if res_ap.partitions != values.shape[0] or res_ap.free_size != 1:
            raise _Rule(f"{ins.name}: reduce_res must be a [{values.shape[0]}, 1] tile, got "
                        f"shape {res_ap.shape}")
        self.on_chip(ins, res_ap, "reduce_res")
        self.write(res_ap, env, fn.reduce(values, axis=1, keepdims=True))

    # -------------------------------------------------------------- instructions

    def _exec_dmacopy(self, i: isa.DmaCopy, env: dict[str, int]) -> None:
        for ap, role in ((i.dst, "dst"), (i.src, "src")):
            if self.memory(ap) == "psum":
                raise _Rule(f"dma_copy: {role} {ap.tensor!r} is in PSUM; DMA cannot reach PSUM "
                            f"(evict PSUM to SBUF with tensor_copy first)")
        sd, dd = self.tensors[i.src.tensor].dtype, self.tensors[i.dst.tensor].dtype
        if sd != dd:
            raise _Rule(f"dma_copy: src dtype {sd} != dst dtype {dd}; DMA does not cast "
                        f"(cast on chip with tensor_copy)")
        self.same_tile(i, i.dst, i.src, "src")
        src = self.view(i.src, env)
        dst = self.view(i.dst, env)
        dst[...] = src.reshape(dst.shape) if src.shape != dst.shape else src

    def _exec_tensorcopy(self, i: isa.TensorCopy, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.src, "src")
        self.same_tile(i, i.dst, i.src, "src")
        self.write(i.dst, env, self.read(i.src, env))

    def _exec_matmul(self, i: isa.Matmul, env: dict[str, int]) -> None:
        hw = self.hw
        self.on_chip(i, i.stationary, "stationary", ("sbuf",))
        self.on_chip(i, i.moving, "moving", ("sbuf",))
        self.on_chip(i, i.dst, "dst", ("psum",))
        k, m, n = i.stationary.partitions, i.stationary.free_size, i.moving.free_size
        if i.moving.partitions != k:
            raise _Rule(f"nc_matmul: contraction (partition) sizes differ: stationary {k}, "
                        f"moving {i.moving.partitions}")
        if k > hw.matmul_max_k:
            raise _Rule(f"nc_matmul: contraction size {k} exceeds {hw.matmul_max_k}")
        if m > hw.matmul_max_m:
            raise _Rule(f"nc_matmul: stationary free size {m} exceeds {hw.matmul_max_m}")
        if n > hw.matmul_max_n:
            raise _Rule(f"nc_matmul: moving free size {n} exceeds {hw.matmul_max_n}")
        if i.dst.partitions != m or i.dst.free_size != n:
            raise _Rule(f"nc_matmul: dst must be [{m}, {n}] (stationary free x moving free), "
                        f"got {i.dst.partitions} x {i.dst.free_size}")
        dd = self.tensors[i.dst.tensor].dtype
        if dd != "float32":
            raise _Rule(f"nc_matmul: dst dtype {dd}; PSUM accumulation is float32")
        sd, md = self.tensors[i.stationary.tensor].dtype, self.tensors[i.moving.tensor].dtype
        if (sd == "float32") != (md == "float32"):
            raise _Rule(f"nc_matmul: float32 input pairs only with float32 (stationary {sd}, "
                        f"moving {md})")
        p0, b0, b1 = self._psum_bytes(i.dst, env)
        bank = hw.psum_bank_bytes
        if b0 // bank != (b1 - 1) // bank:
            raise _Rule(f"nc_matmul: PSUM tile crosses a 2 KiB bank (bytes {b0}..{b1} of a "
                        f"partition; banks are {bank} B)")
        acc = i.accumulate if isinstance(i.accumulate, bool) else evaluate(i.accumulate, env) != 0
        if acc and not self.from_matmul[p0:p0 + m, b0:b1].all():
            raise _Rule("nc_matmul: accumulate=True onto PSUM data that no nc_matmul wrote "
                        "(undefined on NeuronCore-v2/v3); start the group with accumulate=False")
        st = self.read(i.stationary, env)
        mv = self.read(i.moving, env)
        res = st.T @ mv
        if acc:
            res += self.read(i.dst, env)
        self.write(i.dst, env, res, by_matmul=True)

    def _exec_transpose(self, i: isa.Transpose, env: dict[str, int]) -> None:
        p, f = i.data.partitions, i.data.free_size
        if i.engine == "tensor":
            self.on_chip(i, i.dst, "dst", ("psum",))
            limit = self.hw.matmul_max_m
        elif i.engine == "vector":
            self.on_chip(i, i.dst, "dst")
            limit = 32
        else:
            raise _Rule(f"nc_transpose: engine must be 'tensor' or 'vector', got {i.engine!r}")
        self.on_chip(i, i.data, "data")
        if p > limit or f > limit:
            raise _Rule(f"nc_transpose: {i.engine} engine transposes at most {limit} x {limit}, "
                        f"got {p} x {f}")
        if i.dst.partitions != f or i.dst.free_size != p:
            raise _Rule(f"nc_transpose: dst must be [{f}, {p}], got {i.dst.partitions} x "
                        f"{i.dst.free_size}")
        self.write(i.dst, env, self.read(i.data, env).T)

    def _exec_activation(self, i: isa.Activation, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.data, "data")
        self.same_tile(i, i.dst, i.data, "data")
        fn = self.op(i, self.unary, i.op)
        x = self.read(i.data, env)
        scale = self.operand(i.scale, i.data.partitions, env, "activation: scale")
        bias = self.operand(0.0 if i.bias is None else i.bias, i.data.partitions, env,
                            "activation: bias")
        with self.np.errstate(all="ignore"):
            y = fn(x * scale + bias).astype(self.np.float32)
        if i.reduce_res is not None:
            if (i.reduce_op or "add") != "add":
                raise _Rule(f"activation: reduce_op must be add (the Scalar Engine accumulators "
                            f"only sum), got {i.reduce_op!r}")
            self.reduce_into(i, "add", i.reduce_res, y, env)
        self.write(i.dst, env, y)

    def _exec_reciprocal(self, i: isa.Reciprocal, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.data, "data")
        self.same_tile(i, i.dst, i.data, "data")
        with self.np.errstate(all="ignore"):
            self.write(i.dst, env, 1.0 / self.read(i.data, env))

    def _exec_tensorreduce(self, i: isa.TensorReduce, env: dict[str, int]) -> None:
        np = self.np
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.data, "data")
        nfree = len(i.data.pattern)
        if 0 in i.axis:
            raise _Rule("tensor_reduce: axis 0 is the partition dim; only free axes reduce "
                        "(use tensor_partition_reduce across partitions)")
        bad = [a for a in i.axis if not 1 <= a <= nfree]
        if bad or not i.axis:
            raise _Rule(f"tensor_reduce: axis {bad or list(i.axis)} out of range; data has free "
                        f"axes 1..{nfree}")
        table = {"add": np.add, "maximum": np.maximum, "minimum": np.minimum,
                 "multiply": np.multiply}
        fn = self.op(i, table, i.op)
        x = self.read(i.data, env).reshape(i.data.shape)
        out = fn.reduce(x, axis=tuple(i.axis), keepdims=i.keepdims)
        if i.negate:
            out = -out
        out = out.reshape(i.data.partitions, -1)
        if i.dst.partitions != out.shape[0] or i.dst.free_size != out.shape[1]:
            raise _Rule(f"tensor_reduce: dst must hold [{out.shape[0]}, {out.shape[1]}], got "
                        f"shape {i.dst.shape}")
        self.write(i.dst, env, out)

    def _exec_tensortensor(self, i: isa.TensorTensor, env: dict[str, int]) -> None:
        np = self.np
        mems = ("sbuf",) if i.op == "power" else ("sbuf", "psum")
        if i.op == "power" and "psum" in {self.memory(a) for a in (i.dst, i.data1, i.data2)}:
            raise _Rule("tensor_tensor: op power runs on GpSimd, which cannot access PSUM")
        self.on_chip(i, i.dst, "dst", mems)
        self.on_chip(i, i.data1, "data1", mems)
        self.on_chip(i, i.data2, "data2", mems)
        if self.memory(i.data1) == "psum" and self.memory(i.data2) == "psum":
            raise _Rule("tensor_tensor: data1 and data2 cannot both be in PSUM")
        self.same_tile(i, i.dst, i.data1, "data1")
        self.same_tile(i, i.dst, i.data2, "data2")
        if i.op in BITWISE:
            kinds = {self.tensors[a.tensor].dtype for a in (i.dst, i.data1, i.data2)}
            if not kinds <= INT_DTYPES:
                raise _Rule(f"tensor_tensor: bitwise op {i.op} needs integer tiles, got "
                            f"{', '.join(sorted(kinds))}")
            a = self.view(i.data1, env).astype(np.int64).reshape(i.dst.partitions, -1)
            b = self.view(i.data2, env).astype(np.int64).reshape(i.dst.partitions, -1)
            self.write(i.dst, env, self.binary[i.op](a, b))
            return
        self.write(i.dst, env, self.apply(i, i.op, self.read(i.data1, env),
                                          self.read(i.data2, env)))

    def _exec_tensorscalar(self, i: isa.TensorScalar, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.data, "data")
        self.same_tile(i, i.dst, i.data, "data")
        p = i.data.partitions
        x = self.read(i.data, env)
        y = self.apply(i, i.op0, x, self.operand(i.operand0, p, env, f"{i.name}: operand0"),
                       i.reverse0)
        if i.op1 is not None:
            if i.operand1 is None:
                raise _Rule(f"{i.name}: op1 {i.op1!r} needs operand1")
            y = self.apply(i, i.op1, y, self.operand(i.operand1, p, env, f"{i.name}: operand1"),
                           i.reverse1)
        if i.reduce_res is not None:
            self.reduce_into(i, i.reduce_op, i.reduce_res, y, env)
        self.write(i.dst, env, y)

    def _exec_scalartensortensor(self, i: isa.ScalarTensorTensor, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        self.on_chip(i, i.data, "data")
        self.on_chip(i, i.operand1, "operand1")
        self.same_tile(i, i.dst, i.data, "data")
        self.same_tile(i, i.dst, i.operand1, "operand1")
        p = i.data.partitions
        y = self.apply(i, i.op0, self.read(i.data, env),
                       self.operand(i.operand0, p, env, "scalar_tensor_tensor: operand0"),
                       i.reverse0)
        y = self.apply(i, i.op1, y, self.read(i.operand1, env), i.reverse1)
        self.write(i.dst, env, y)

    def _exec_memset(self, i: isa.Memset, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst")
        dt = self.tensors[i.dst.tensor].dtype
        if dt in INT_DTYPES and not isinstance(i.value, int):
            raise _Rule(f"memset: value {i.value!r} is not an int but dst dtype {dt} is integer")
        full = self.np.full((i.dst.partitions, i.dst.free_size), i.value,
                            dtype=self.np.int64 if dt in INT_DTYPES else self.np.float32)
        self.write(i.dst, env, full)

    def _pattern_values(self, i: isa.Iota | isa.AffineSelect, offset: int, cm: int) -> Any:
        """``offset + p * cm + sum(idx_k * step_k)`` as int64 ``[P, F]``."""
        np = self.np
        if not 1 <= len(i.pattern) <= 4:
            raise _Rule(f"{i.name}: pattern needs 1 to 4 [step, num] pairs, got {len(i.pattern)}")
        count = math.prod(n for _, n in i.pattern)
        if count != i.dst.free_size:
            raise _Rule(f"{i.name}: pattern covers {count} elements but dst has "
                        f"{i.dst.free_size} per partition")
        grids = np.ix_(*(np.arange(n, dtype=np.int64) * s for s, n in i.pattern))
        free = sum(grids, np.zeros((1,) * len(i.pattern), dtype=np.int64)).reshape(-1)
        part = np.arange(i.dst.partitions, dtype=np.int64)[:, None] * cm
        return offset + part + free[None, :]

    def _exec_iota(self, i: isa.Iota, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst", ("sbuf",))
        vals = self._pattern_values(i, i.offset, i.channel_multiplier).astype(self.np.int32)
        dt = self.tensors[i.dst.tensor].dtype
        self.write(i.dst, env, vals if dt in INT_DTYPES else vals.astype(self.np.float32))

    def _exec_affineselect(self, i: isa.AffineSelect, env: dict[str, int]) -> None:
        self.on_chip(i, i.dst, "dst", ("sbuf",))
        self.on_chip(i, i.on_true_tile, "on_true_tile", ("sbuf",))
        self.same_tile(i, i.dst, i.on_true_tile, "on_true_tile")
        cmp = self.op(i, {k: self.binary[k] for k in isa.CMP_OPS}, i.cmp_op, "cmp_op")
        pred = cmp(self._pattern_values(i, i.offset, i.channel_multiplier), 0)
        out = self.np.where(pred, self.read(i.on_true_tile, env),
                            self.np.float32(i.on_false_value))
        self.write(i.dst, env, out)
