"""Render a :class:`~tvm_backend_trn.isa.Kernel` as NKI Python source.

:class:`NkiRenderer` writes the current dialect (``import nki``, destination-first
``nisa.*(dst=..., ...)`` calls, ``nl.ndarray(..., buffer=nl.sbuf)``). :class:`LegacyNkiRenderer`
writes the ``neuronxcc.nki`` dialect that Apache TVM 0.27 emits (value-returning calls,
``nl.load`` / ``nl.store``, ``nl.par_dim``). Both share :class:`Renderer`: every instruction is
first turned into a dialect-neutral :class:`Call` (function name, destination, keyword
arguments) by one method per instruction, and only :meth:`Renderer.format_call` and a few
per-instruction overrides differ between dialects. Semantics live in the simulator, never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tvm.ir.layout_axes import default_strides

from . import isa
from .isa import AP, Affine, HbmTensor, Index, Kernel, Loop

__all__ = [
    "Call", "LegacyNkiRenderer", "NkiRenderer", "Renderer", "expr", "render_nki",
    "render_nki_legacy",
]

_NL_DTYPES = {
    "float32": "nl.float32", "float16": "nl.float16", "bfloat16": "nl.bfloat16",
    "float8_e4m3fn": "nl.float8_e4m3", "float8_e5m2": "nl.float8_e5m2",
    "int32": "nl.int32", "int16": "nl.int16", "int8": "nl.int8",
    "uint32": "nl.uint32", "uint16": "nl.uint16", "uint8": "nl.uint8",
}


@dataclass(frozen=True)
class Call:
    """A dialect-neutral ISA call: ``nisa.<fn>`` writing ``dst`` with keyword ``args``."""

    fn: str
    dst: str
    args: tuple[tuple[str, str], ...]


def expr(x: Index) -> str:
    """An index expression as Python: ``k * 128 + 64``."""
    if isinstance(x, int):
        return str(x)
    text = ""
    for v, c in x.terms:
        mag = v if abs(c) == 1 else f"{v} * {abs(c)}"
        if not text:
            text = mag if c > 0 else f"-{mag}"
        else:
            text += f" + {mag}" if c > 0 else f" - {mag}"
    if not text:
        return str(x.const)
    if x.const > 0:
        text += f" + {x.const}"
    elif x.const < 0:
        text += f" - {-x.const}"
    return text


class Renderer:
    """Shared structure of the NKI renderers; subclasses set the dialect's spellings."""

    imports: tuple[str, ...] = ()
    hbm_output_buffer = "nl.shared_hbm"
    hbm_scratch_buffer = "nl.private_hbm"
    indent = "    "

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.extents: dict[str, int] = {}  # loop variables in scope while rendering

    # ------------------------------------------------------------------ kernel structure

    def render(self) -> str:
        k = self.kernel
        lines = [*self.imports, "", "", "@nki.jit", f"def {k.name}({', '.join(t.name for t in k.inputs)}):"]
        body = [self.hbm_decl(t) for t in k.tensors if t.kind != "input"]
        body += [self.alloc_decl(a) for a in k.allocs]
        for s in k.body:
            body += self.stmt(s)
        outs = [t.name for t in k.outputs]
        if outs:
            body.append(f"return {', '.join(outs)}")
        lines += [self.indent + ln if ln else ln for ln in (body or ["pass"])]
        return "\n".join(lines) + "\n"

    def stmt(self, s: isa.Stmt) -> list[str]:
        if isinstance(s, Loop):
            rng = "nl.affine_range" if s.kind == "affine" else "nl.sequential_range"
            self.extents[s.var] = s.extent
            inner = [ln for b in s.body for ln in self.stmt(b)]
            del self.extents[s.var]
            return [f"for {s.var} in {rng}({s.extent}):", *(self.indent + ln for ln in inner)]
        return self.instr(s).splitlines()

    def instr(self, ins: isa.Instr) -> str:
        method = getattr(self, f"emit_{type(ins).__name__.lower()}")
        out = method(ins)
        return out if isinstance(out, str) else self.format_call(out)

    def format_call(self, call: Call) -> str:
        raise NotImplementedError

    def dtype(self, dtype: str) -> str:
        return _NL_DTYPES[dtype]

    def shape(self, t: isa.Tensor) -> tuple[int, ...]:
        if isinstance(t, HbmTensor):
            return t.shape
        return (t.partitions, *t.free_shape)

    def hbm_decl(self, t: HbmTensor) -> str:
        buf = self.hbm_output_buffer if t.kind == "output" else self.hbm_scratch_buffer
        return f"{t.name} = nl.ndarray({_tuple(t.shape)}, dtype={self.dtype(t.dtype)}, buffer={buf})"

    def alloc_decl(self, a: isa.SbufTensor | isa.PsumTensor) -> str:
        where = (f"sbuf offset {a.offset} B" if isinstance(a, isa.SbufTensor)
                 else f"psum bank {a.bank}, offset {a.offset} B")
        return (f"{a.name} = nl.ndarray({_tuple(self.shape(a))}, dtype={self.dtype(a.dtype)}, "
                f"buffer=nl.{a.memory})  # {where}")

    # ------------------------------------------------------------------ views

    def view(self, ap: AP) -> str:
        t = self.kernel.tensor(ap.tensor)
        box = self.box(ap, t)
        if box is None:
            return self.raw_ap(ap, t)
        shape = self.shape(t)
        if all(s == 0 and n == dim for (s, n), dim in zip(box, shape)) and len(box) == len(shape):
            return ap.tensor
        return f"{ap.tensor}[{', '.join(_slice(s, n) for s, n in box)}]"

    def box(self, ap: AP, t: isa.Tensor) -> list[tuple[Index, int]] | None:
        """``[(start, size)]`` per dim of ``t`` when ``ap`` is a row-major box of it, else None."""
        shape = self.shape(t)
        if len(ap.pattern) != len(shape) - 1:
            return None
        strides = default_strides(shape)
        if isinstance(t, HbmTensor):
            if ap.p_stride != strides[0] or ap.p_start != 0:
                return None
            starts = _decompose(ap.offset, strides, shape, ap.shape, self.extents)
        else:
            if ap.p_stride != 1:
                return None
            free = _decompose(ap.offset, strides[1:], shape[1:], ap.shape[1:], self.extents)
            starts = None if free is None else [ap.p_start, *free]
        if starts is None or any(s != st for (s, _), st in zip(ap.pattern, strides[1:])):
            return None
        sizes = ap.shape
        for start, n, dim in zip(starts, sizes, shape):
            if isinstance(start, int) and start + n > dim:
                return None
        return list(zip(starts, sizes))

    def raw_ap(self, ap: AP, t: isa.Tensor) -> str:
        """``t.ap(pattern=[[partition step, n], [stride, size], ...], offset=...)``."""
        if isinstance(t, HbmTensor):
            pstep, offset = ap.p_stride, ap.offset
        else:
            pstep = t.free_size
            offset = Affine.of(ap.p_start) * t.free_size + ap.offset
            offset = offset if offset.terms else offset.const
        pattern = ", ".join(f"[{s}, {n}]" for s, n in ((pstep, ap.partitions), *ap.pattern))
        return f"{ap.tensor}.ap(pattern=[{pattern}], offset={expr(offset)})"

    def operand(self, x: AP | float | int | None) -> str:
        if isinstance(x, AP):
            return self.view(x)
        return repr(x)

    # ------------------------------------------------------------------ instructions

    def emit_dmacopy(self, i: isa.DmaCopy) -> Call | str:
        return Call("dma_copy", self.view(i.dst), (("src", self.view(i.src)),))

    def emit_tensorcopy(self, i: isa.TensorCopy) -> Call | str:
        return Call("tensor_copy", self.view(i.dst), (("src", self.view(i.src)),))

    def emit_matmul(self, i: isa.Matmul) -> Call | str:
        acc = i.accumulate
        acc_text = repr(acc) if isinstance(acc, bool) else f"({expr(acc)} != 0)"
        return Call("nc_matmul", self.view(i.dst), (
            ("stationary", self.view(i.stationary)), ("moving", self.view(i.moving)),
            ("accumulate", acc_text)))

    def emit_transpose(self, i: isa.Transpose) -> Call | str:
        args = [("data", self.view(i.data))]
        if i.engine != "tensor":
            args.append(("engine", f"nisa.{i.engine}_engine"))
        return Call("nc_transpose", self.view(i.dst), tuple(args))

    def emit_activation(self, i: isa.Activation) -> Call | str:
        args = [("op", f"nl.{i.op}"), ("data", self.view(i.data))]
        if i.bias is not None:
            args.append(("bias", self.operand(i.bias)))
        if not (isinstance(i.scale, float) and i.scale == 1.0):
            args.append(("scale", self.operand(i.scale)))
        if i.reduce_res is not None:
            args += [("reduce_op", f"nl.{i.reduce_op or 'add'}"),
                     ("reduce_res", self.view(i.reduce_res)),
                     ("reduce_cmd", "nisa.reduce_cmd.reset_reduce")]
        return Call("activation", self.view(i.dst), tuple(args))

    def emit_reciprocal(self, i: isa.Reciprocal) -> Call | str:
        return Call("reciprocal", self.view(i.dst), (("data", self.view(i.data)),))

    def emit_tensorreduce(self, i: isa.TensorReduce) -> Call | str:
        axis = str(i.axis[0]) if len(i.axis) == 1 else _tuple(i.axis)
        args = [("op", f"nl.{i.op}"), ("data", self.view(i.data)), ("axis", axis)]
        if i.negate:
            args.append(("negate", "True"))
        if i.keepdims:
            args.append(("keepdims", "True"))
        return Call("tensor_reduce", self.view(i.dst), tuple(args))

    def emit_tensortensor(self, i: isa.TensorTensor) -> Call | str:
        return Call("tensor_tensor", self.view(i.dst), (
            ("data1", self.view(i.data1)), ("data2", self.view(i.data2)), ("op", f"nl.{i.op}")))

    def emit_tensorscalar(self, i: isa.TensorScalar) -> Call | str:
        args = [("data", self.view(i.data)), ("op0", f"nl.{i.op0}"),
                ("operand0", self.operand(i.operand0))]
        if i.reverse0:
            args.append(("reverse0", "True"))
        if i.reduce_res is not None:
            args += [("reduce_op", f"nl.{i.reduce_op or 'add'}"),
                     ("reduce_res", self.view(i.reduce_res))]
        if i.op1 is not None:
            args += [("op1", f"nl.{i.op1}"), ("operand1", self.operand(i.operand1))]
            if i.reverse1:
                args.append(("reverse1", "True"))
        return Call(i.name, self.view(i.dst), tuple(args))

    def emit_scalartensortensor(self, i: isa.ScalarTensorTensor) -> Call | str:
        args = [("data", self.view(i.data)), ("op0", f"nl.{i.op0}"),
                ("operand0", self.operand(i.operand0)), ("op1", f"nl.{i.op1}"),
                ("operand1", self.view(i.operand1))]
        if i.reverse0:
            args.append(("reverse0", "True"))
        if i.reverse1:
            args.append(("reverse1", "True"))
        return Call("scalar_tensor_tensor", self.view(i.dst), tuple(args))

    def emit_memset(self, i: isa.Memset) -> Call | str:
        return Call("memset", self.view(i.dst), (("value", repr(i.value)),))

    def emit_iota(self, i: isa.Iota) -> Call | str:
        return Call("iota", self.view(i.dst), (
            ("pattern", _pattern(i.pattern)), ("offset", str(i.offset)),
            ("channel_multiplier", str(i.channel_multiplier))))

    def emit_affineselect(self, i: isa.AffineSelect) -> Call | str:
        args = [("pattern", _pattern(i.pattern)), ("channel_multiplier", str(i.channel_multiplier)),
                ("on_true_tile", self.view(i.on_true_tile)),
                ("on_false_value", repr(float(i.on_false_value))), ("cmp_op", f"nl.{i.cmp_op}")]
        if i.offset:
            args.append(("offset", str(i.offset)))
        return Call("affine_select", self.view(i.dst), tuple(args))


class NkiRenderer(Renderer):
    """The current NKI dialect (``nki`` 0.3+): destination-first ``nisa`` calls."""

    imports = ("import nki", "import nki.isa as nisa", "import nki.language as nl")

    def format_call(self, call: Call) -> str:
        args = ", ".join(f"{k}={v}" for k, v in (("dst", call.dst), *call.args))
        return f"nisa.{call.fn}({args})"


class LegacyNkiRenderer(Renderer):
    """The legacy ``neuronxcc.nki`` dialect: value-returning calls, ``nl.load``/``nl.store``."""

    imports = ("import neuronxcc.nki as nki", "import neuronxcc.nki.isa as nisa",
               "import neuronxcc.nki.language as nl")
    hbm_scratch_buffer = "nl.hbm"

    def format_call(self, call: Call) -> str:
        args = ", ".join(f"{k}={v}" for k, v in call.args)
        return f"{self.lvalue(call.dst)} = nisa.{call.fn}({args})"

    def lvalue(self, text: str) -> str:
        return text if "[" in text else f"{text}[...]"

    def alloc_decl(self, a: isa.SbufTensor | isa.PsumTensor) -> str:
        text = super().alloc_decl(a)
        return text.replace(f"(({a.partitions},", f"((nl.par_dim({a.partitions}),", 1).replace(
            f"nl.ndarray(({a.partitions}, ", f"nl.ndarray((nl.par_dim({a.partitions}), ", 1)

    def raw_ap(self, ap: AP, t: isa.Tensor) -> str:
        raise ValueError(
            f"legacy NKI has no access patterns: view of {ap.tensor!r} with pattern "
            f"{list(ap.pattern)} is not a box of its declared shape")

    def emit_dmacopy(self, i: isa.DmaCopy) -> Call | str:
        dst_mem = self.kernel.tensor(i.dst.tensor).memory
        if dst_mem == "hbm":
            return f"nl.store({self.view(i.dst)}, value={self.view(i.src)})"
        return f"{self.lvalue(self.view(i.dst))} = nl.load({self.view(i.src)})"

    def emit_matmul(self, i: isa.Matmul) -> Call | str:
        op = "=" if i.accumulate is False else "+="
        # The legacy compiler zero-fills a PSUM tile accumulated with `+=` in a loop.
        return (f"{self.lvalue(self.view(i.dst))} {op} nisa.nc_matmul({self.view(i.stationary)}, "
                f"{self.view(i.moving)})")

    def emit_activation(self, i: isa.Activation) -> Call | str:
        call = super().emit_activation(i)
        assert isinstance(call, Call)
        if i.reduce_res is None:
            return call
        args = tuple(a for a in call.args if a[0] != "reduce_cmd")
        return Call("activation_reduce", call.dst, args)

    def emit_memset(self, i: isa.Memset) -> Call | str:
        d = self.kernel.tensor(i.dst.tensor)
        return Call("memset", self.view(i.dst), (
            ("shape", _tuple(i.dst.shape)), ("value", repr(i.value)), ("dtype", self.dtype(d.dtype))))

    def _affine_pred(self, dst: AP, pattern: Sequence[tuple[int, int]], cm: int, offset: int) -> str:
        if len(pattern) != 1:
            raise ValueError("legacy NKI iota/affine_select: only one free dim is supported")
        step, n = pattern[0]
        return (f"{offset} + {cm} * nl.arange({dst.partitions})[:, None] + "
                f"{step} * nl.arange({n})[None, :]")

    def emit_iota(self, i: isa.Iota) -> Call | str:
        d = self.kernel.tensor(i.dst.tensor)
        pred = self._affine_pred(i.dst, i.pattern, i.channel_multiplier, i.offset)
        return Call("iota", self.view(i.dst), (("expr", pred), ("dtype", self.dtype(d.dtype))))

    def emit_affineselect(self, i: isa.AffineSelect) -> Call | str:
        cmp = {"equal": "==", "not_equal": "!=", "greater": ">", "greater_equal": ">=",
               "less": "<", "less_equal": "<="}[i.cmp_op]
        pred = self._affine_pred(i.dst, i.pattern, i.channel_multiplier, i.offset)
        return Call("affine_select", self.view(i.dst), (
            ("pred", f"({pred} {cmp} 0)"), ("on_true_tile", self.view(i.on_true_tile)),
            ("on_false_value", repr(float(i.on_false_value)))))


def render_nki(kernel: Kernel) -> str:
    """The kernel as current-dialect NKI source."""
    return NkiRenderer(kernel).render()


def render_nki_legacy(kernel: Kernel) -> str:
    """The kernel as legacy ``neuronxcc.nki`` source."""
    return LegacyNkiRenderer(kernel).render()


# ---------------------------------------------------------------------- helpers


def _tuple(xs: Sequence[int]) -> str:
    xs = tuple(xs)
    return f"({xs[0]},)" if len(xs) == 1 else f"({', '.join(map(str, xs))})"


def _pattern(p: Sequence[tuple[int, int]]) -> str:
    return "[" + ", ".join(f"[{s}, {n}]" for s, n in p) + "]"


def _slice(start: Index, n: int) -> str:
    stop = Affine.of(start) + n
    return f"{expr(start)}:{expr(stop if stop.terms else stop.const)}"


def _decompose(offset: Index, strides: Sequence[int], shape: Sequence[int],
               sizes: Sequence[int], extents: dict[str, int]) -> list[Index] | None:
    """Split a flat offset into per-dim starts of a row-major box, if it splits exactly.

    The constant splits by mixed radix. A loop term goes to the innermost dim whose stride
    divides its coefficient and, when the loop's extent is known, where the box still fits for
    the loop's last iteration (``j * 512`` on a ``[K, 512]`` tensor is a column start when
    ``j`` only takes 0, a row start otherwise). The simulator checks bounds for real.
    """
    a = Affine.of(offset)
    starts: list[Affine] = []
    rest = a.const
    for d, st in enumerate(strides):
        q, rest = divmod(rest, st)
        if d > 0 and q + sizes[d] > shape[d]:
            return None
        starts.append(Affine(q))
    reach = [s.const + n for s, n in zip(starts, sizes)]
    for v, c in sorted(a.terms, key=lambda t: -abs(t[1])):
        for d in range(len(strides) - 1, -1, -1):
            if c % strides[d]:
                continue
            q = c // strides[d]
            ext = extents.get(v)
            fits = (reach[d] + max(q, 0) * (ext - 1) <= shape[d]) if ext is not None else (
                abs(c) < strides[d - 1] if d > 0 else True)
            if d == 0 or (q > 0 and fits):
                starts[d] = starts[d] + Affine(0, ((v, q),))
                if ext is not None:
                    reach[d] += q * (ext - 1)
                break
        else:
            return None
    return [s if s.terms else s.const for s in starts]
