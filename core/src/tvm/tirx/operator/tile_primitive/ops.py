"""The tile primitives: one spec per op, registered as ``tirx.tile.<name>``.

Signatures are destination first, as in the seed: ``copy(dst, src)``, ``fill(dst, value)``,
``exp(dst, src, bias=None, scale=None)``, ``add(dst, src1, src2)``,
``sum(dst, src, axes=-1, accum=False, thread_reduce=False)``,
``gemm(D, A, B, C, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0)``,
``select(dst, true_value, false_value, pred)``.
Every op also takes ``workspace=`` and ``dispatch=`` (and ``config=``) keywords.
"""

from __future__ import annotations

import contextlib
import inspect
import keyword
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .... import _registry
from ...._suggest import did_you_mean
from ....ir import Buffer, BufferRegion, TilePrimitiveCall
from ....ir.expr import IndexLambda
from ....ir.op import CallEffect, Op, OpCategory

__all__ = ["COMMON_KEYWORDS", "COMPOSE_OP", "EXEC_SCOPE_ALIASES", "TILE_OPS", "TileOpSpec",
           "OP_SYNONYMS", "config_keyword_ok", "core_registration", "get_spec",
           "index_functions_as_ir", "make_call",
           "make_compose_op", "op_class",
           "op_summary", "reference_markdown",
           "registered_specs", "suggest_op"]

# Script spellings of the execution scopes (``Tx.wg.copy`` is ``Tx.warpgroup.copy``).
EXEC_SCOPE_ALIASES = {"wg": "warpgroup"}

_NO_DEFAULT = object()

#: keyword-only arguments of every tile primitive call
COMMON_KEYWORDS = ("dispatch", "workspace", "config")


@dataclass(frozen=True)
class TileOpSpec:
    """A tile primitive's signature.

    ``params`` are the parameter names in order; ``defaults`` gives defaults of trailing ones;
    ``buffer_params`` must be a Buffer or BufferRegion (the tile-only check); ``family`` groups
    ops lowered the same way (copy, unary, binary, reduce, gemm, ...). ``explicit_with`` maps a
    parameter to ``(guard, hint)``: when the ``guard`` argument is passed, the parameter must be
    given explicitly, because its default would silently ignore the guard (gemm: ``beta``
    defaults to 0, which ignores ``C``); the printer always writes it then.
    """

    name: str
    params: tuple[str, ...]
    family: str
    buffer_params: tuple[str, ...] = ("dst",)
    defaults: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    explicit_with: dict[str, tuple[str, str]] = field(default_factory=dict)
    details: str = ""
    # a trailing source the seed's signature has that adds nothing (zero(dst, src): dst = 0 over
    # src's shape): accepted where it has dst's shape, and not passed on
    same_shape_src: str | None = None
    # a source that defaults to dst (the seed's in-place form: Tx.exp2(A) is Tx.exp2(A, A));
    # the printer leaves it out when it is dst
    defaults_to_dst: str | None = None
    # other spellings of parameters, accepted as keywords (the seed's gemm_async takes transA)
    keyword_aliases: dict[str, str] = field(default_factory=dict)
    # parameters that are given together or not at all (gemm_async's scale factors SFA, SFB)
    together: tuple[str, ...] = ()

    @property
    def op_name(self) -> str:
        return f"tirx.tile.{self.name}"

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Positional argument list (defaults filled) from a call's args and kwargs."""
        if self.same_shape_src is not None:
            args, kwargs = self._drop_same_shape_src(args, kwargs)
        if len(args) > len(self.params):
            raise TypeError(f"Tx.{self.name} takes at most {len(self.params)} arguments "
                            f"({', '.join(self.params)}), got {len(args)}")
        out: list[Any] = list(args)
        explicit = set(self.params[:len(args)]) | set(kwargs)
        for name in self.params[len(args):]:
            if name in kwargs:
                out.append(kwargs.pop(name))
            elif name == self.defaults_to_dst and out:
                out.append(out[0])
            elif name in self.defaults:
                out.append(self.defaults[name])
            else:
                raise TypeError(f"Tx.{self.name} is missing argument {name!r} "
                                f"(signature: {self.signature()})")
        dup = [k for k in kwargs if k in self.params]
        if dup:
            raise TypeError(f"Tx.{self.name} got multiple values for {dup}")
        if kwargs:
            raise TypeError(f"Tx.{self.name} got unexpected keyword argument(s) {sorted(kwargs)} "
                            f"(signature: {self.signature()})")
        self._check_explicit(out, explicit)
        self._check_together(out)
        return out

    def split_config(self, kwargs: dict[str, Any], config: dict[str, Any] | None = None
                     ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``(parameters, config)`` of a call's keyword arguments and its ``config=``: as in the
        seed, a keyword that is not a parameter is a config entry (``Tx.add(..., hint="fast")``
        is ``config={"hint": "fast"}``). A keyword that differs from a parameter only in case or
        underscores (``transpose_a`` for ``transpose_A``) is refused as a misspelling, and one
        also given in ``config=`` as given twice."""
        kwargs = self._unalias(kwargs)
        params = {k: v for k, v in kwargs.items() if k in self.params}
        extra = {k: v for k, v in kwargs.items() if k not in self.params}
        for key in extra:
            meant = self.misspelt(key)
            if meant is not None:
                raise TypeError(f"Tx.{self.name} got keyword argument {key!r}; did you mean "
                                f"{meant!r}? (signature: {self.signature()}; a keyword that is "
                                f"not a parameter is a config entry: write config={{{key!r}: ...}} "
                                "to mean that)")
        both = sorted(set(extra) & set(config or {}))
        if both:
            raise TypeError(f"Tx.{self.name}: {both} given both as keywords and in config=; "
                            "give each once")
        return params, {**(config or {}), **extra} or None

    def _unalias(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with :attr:`keyword_aliases` spelled as their parameters."""
        out: dict[str, Any] = {}
        for key, value in kwargs.items():
            name = self.keyword_aliases.get(key, key)
            if name in out:
                raise TypeError(f"Tx.{self.name} got {name!r} twice (as {key!r} too); give it "
                                "once")
            out[name] = value
        return out

    def _check_together(self, bound: list[Any]) -> None:
        given = [p for p in self.together if bound[self.params.index(p)] is not None]
        if given and len(given) != len(self.together):
            names = " and ".join(self.together)
            raise ValueError(f"Tx.{self.name}: {names} must both be provided or both be None "
                             f"(only {', '.join(given)} is given)")

    def misspelt(self, key: str) -> str | None:
        """The parameter or common keyword that keyword ``key`` most likely misspells (the same
        name in another case or without underscores, or a very close one: ``dispath``), or
        None for a key that can be a config entry."""
        return _misspelt(key, self.params)

    def _drop_same_shape_src(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                             ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        name = self.same_shape_src
        assert name is not None
        src = kwargs.pop(name, None) if name in kwargs else (
            args[len(self.params)] if len(args) == len(self.params) + 1 else None)
        if len(args) == len(self.params) + 1:
            args = args[:-1]
        if src is None or not args:
            return args, kwargs
        shapes = [_region_shape(x) for x in (args[0], src)]
        if None not in shapes and shapes[0] != shapes[1]:
            raise ValueError(f"Tx.{self.name}: {name} has shape {shapes[1]} but dst has "
                             f"{shapes[0]}; {name} only gives the shape of what is set, so pass "
                             f"regions of the same shape (or leave {name} out)")
        return args, kwargs

    def _check_explicit(self, bound: list[Any], explicit: set[str]) -> None:
        for pname, (guard, hint) in self.explicit_with.items():
            if pname in explicit or bound[self.params.index(guard)] is None:
                continue
            raise ValueError(f"Tx.{self.name}: {guard} is passed but {pname} is left at its "
                             f"default {self.defaults[pname]!r}, which ignores {guard} "
                             f"({self.doc}); {hint}")

    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(f"{p}={self.defaults[p]!r}" if p in self.defaults else p)
        return f"{self.name}({', '.join(parts)})"

    def python_signature(self) -> inspect.Signature:
        """The signature of ``Tx.<op>``: the op's parameters, then the keyword-only
        ``dispatch``, ``workspace`` and ``config`` every tile primitive takes."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(p, kind, default=None if p == self.defaults_to_dst else
                                    self.defaults.get(p, inspect.Parameter.empty))
                  for p in self.params]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
                   for k in COMMON_KEYWORDS]
        return inspect.Signature(params)

    def help_text(self) -> str:
        """The docstring of ``Tx.<op>`` (what ``help(Tx.<op>)`` shows under the signature, and
        the op's entry in the user guide's tile-op reference)."""
        n = self.name
        buffers = ", ".join(self.buffer_params)
        paragraphs = [
            self.doc,
            self.details,
            " ".join(f"{alias}= is another name of {pname}= (the seed's)."
                     for alias, pname in self.keyword_aliases.items()),
            f"{buffers} take a Buffer or a region of one, such as A[0:32, k:k + 32].",
            f"Tx.{n} runs at thread scope: the calling thread does all of it. Tx.warp.{n}, "
            f"Tx.warpgroup.{n} (or Tx.wg.{n}), Tx.cta.{n} and Tx.cluster.{n} run it with the "
            "threads of that scope.",
            "Keywords of every tile primitive: dispatch= forces a variant by name, workspace= "
            "passes named scratch buffers, config= passes static options to the variant (any "
            "other keyword is a config entry too).",
        ]
        return "\n\n".join(textwrap.fill(p, 88) for p in paragraphs if p)


UNARY_OPS = ("exp", "exp2", "log", "sqrt", "rsqrt", "reciprocal", "abs", "neg", "silu", "tanh", "sigmoid", "relu")
BINARY_OPS = ("add", "sub", "mul", "fdiv", "maximum", "minimum")
REDUCE_OPS = ("sum", "max", "min")

TILE_OPS: dict[str, TileOpSpec] = {}


def _add(spec: TileOpSpec) -> None:
    TILE_OPS[spec.name] = spec


_BROADCAST = ("Buffer sources broadcast over dst as in NumPy (unit dimensions repeat; shapes that "
              "differ only by unit dimensions match).")
_FLOAT16 = "float16 and bfloat16 values are computed in float32 and rounded when stored."

_add(TileOpSpec("copy", ("dst", "src"), "copy", ("dst", "src"), doc="dst = src",
                details=f"Copies src into dst element by element. {_BROADCAST} The two may have "
                        "different layouts and scopes (global, shared, local); elements are "
                        "matched by logical index."))
_add(TileOpSpec("copy_async", ("dst", "src"), "copy", ("dst", "src"),
                doc="dst = src, asynchronously (completion is the variant's contract)",
                details="A backend's asynchronous variant issues the copy (cp.async, TMA, DMA) and "
                        "the kernel waits for it with that backend's intrinsics. The generic "
                        "fallback copies synchronously, so the result is the same everywhere. "
                        "Keywords other than dst and src are entries of config (the variant's "
                        "options: Tx.copy_async(dst, src, dispatch=\"tma\", mbar=bar[0]))."))
_add(TileOpSpec("fill", ("dst", "value"), "fill", doc="dst[...] = value",
                details="Sets every element of dst to value, a scalar expression."))
_add(TileOpSpec("memset", ("dst", "value"), "fill", doc="dst[...] = value",
                details="The same as fill (the seed's name for it)."))
_add(TileOpSpec("zero", ("dst",), "fill", doc="dst[...] = 0",
                details="Sets every element of dst to zero. The seed's form zero(dst, src) is "
                        "accepted where src has dst's shape.", same_shape_src="src"))
_add(TileOpSpec("cast", ("dst", "src"), "cast", ("dst", "src"), doc="dst = cast(src, dst.dtype)",
                details=f"Copies src into dst, converting each element to dst's data type. "
                        f"{_BROADCAST}"))
_UNARY_MATH = {"exp": "e ** x", "exp2": "2 ** x", "log": "the natural logarithm of x",
               "sqrt": "the square root of x", "rsqrt": "1 / sqrt(x)", "reciprocal": "1 / x",
               "abs": "|x|", "neg": "-x", "silu": "x * sigmoid(x)", "tanh": "tanh(x)",
               "sigmoid": "1 / (1 + exp(-x))", "relu": "max(x, 0)"}
for _u in UNARY_OPS:
    _add(TileOpSpec(_u, ("dst", "src", "bias", "scale"), "unary", ("dst", "src"),
                    {"bias": None, "scale": None}, doc=f"dst = {_u}(src * scale + bias)",
                    details=f"Element-wise {_u}(x) = {_UNARY_MATH[_u]}, where x = src * scale + "
                            "bias. scale and bias are optional; each is a scalar expression or a "
                            f"buffer broadcast over dst. Without src it works in place "
                            f"(Tx.{_u}(A) is Tx.{_u}(A, A)). {_FLOAT16}",
                    defaults_to_dst="src"))
_BINARY_MATH = {"add": "src1 + src2", "sub": "src1 - src2", "mul": "src1 * src2",
                "fdiv": "src1 / src2 (integers divide with floor semantics, as numpy's //)",
                "maximum": "max(src1, src2)", "minimum": "min(src1, src2)"}
for _b in BINARY_OPS:
    _add(TileOpSpec(_b, ("dst", "src1", "src2"), "binary", ("dst",),
                    doc=f"dst = {_b}(src1, src2); a source may be a scalar",
                    details=f"Element-wise dst = {_BINARY_MATH[_b]}. Either source may be a "
                            f"scalar expression (the same for every element). {_BROADCAST} "
                            f"{_FLOAT16}"))
_add(TileOpSpec("fma", ("dst", "src1", "src2", "src3"), "fma", ("dst",), doc="dst = src1 * src2 + src3",
                details=f"Element-wise fused multiply-add. Any source may be a scalar. {_BROADCAST}"))
_add(TileOpSpec("select", ("dst", "true_value", "false_value", "pred"), "select", ("dst",),
                doc="dst = pred ? true_value : false_value (pred: a bool expression of the element "
                    "indices, a bool buffer, or a scalar)",
                details="pred is a bool (or nonzero) buffer broadcast over dst, a scalar "
                        "expression, or a Python callable of dst's element indices "
                        "(lambda i, j: i >= j). The values are scalars or broadcast buffers."))
for _r in REDUCE_OPS:
    _add(TileOpSpec(_r, ("dst", "src", "axes", "accum", "thread_reduce"), "reduce", ("dst", "src"),
                    {"axes": -1, "accum": False, "thread_reduce": False},
                    doc=f"dst = {_r} of src over axes (dst keeps the other axes); accum adds to dst",
                    details="axes is an axis or a list of axes of src (negative ones count from "
                            "the end). dst has src's other axes, either dropped ([M, N] -> [M]) or "
                            "kept with extent 1 ([M, N] -> [M, 1]). With accum=True the old value "
                            f"of dst takes part in the reduction. {_FLOAT16} thread_reduce "
                            "matters only for a register tile spread over threads (a local "
                            "buffer whose layout has thread axes) whose dst keeps, on a reduced "
                            "axis, the threads that src spreads it over (dst [16, 4] for src "
                            "[16, 128] with 4 threads to a row): False leaves each of them its "
                            "own partial, True also combines them (warp shuffles), so all hold "
                            "the whole reduction. Threads that dst does not keep are always "
                            "combined."))
_add(TileOpSpec("gemm", ("D", "A", "B", "C", "transpose_A", "transpose_B", "alpha", "beta"), "gemm",
                ("D", "A", "B"), {"C": None, "transpose_A": False, "transpose_B": False, "alpha": 1.0, "beta": 0.0},
                doc="D = alpha * op(A) @ op(B) + beta * C",
                details="op(X) is X, or X transposed when transpose_X is true. D is M x N, op(A) "
                        "M x K and op(B) K x N (leading dimensions of extent 1 are allowed). As in "
                        "BLAS, C is not read when it is None or beta is 0. C may be D itself: "
                        "Tx.gemm(D, A, B, D, beta=1.0) accumulates into D. C may also broadcast "
                        "over D (a bias row). When C is passed, beta must be given too: its "
                        "default 0 would ignore C. Products accumulate in float32 for 16-bit "
                        "inputs.",
                explicit_with={"beta": ("C", "pass beta=1.0 to add C (accumulate: D = A @ B + C), "
                                             "or beta=0.0 to overwrite D without reading C")}))
_add(TileOpSpec("gemm_async", ("D", "A", "B", "transpose_A", "transpose_B", "accum", "SFA", "SFB"),
                "gemm", ("D", "A", "B"),
                {"transpose_A": False, "transpose_B": False, "accum": False, "SFA": None,
                 "SFB": None},
                keyword_aliases={"transA": "transpose_A", "transB": "transpose_B"},
                together=("SFA", "SFB"),
                doc="D[M, N] (+)= A @ B^T with A [M, K] and B [N, K] (both K-major, as the tensor "
                    "cores and the seed take them); transpose_A: A is [K, M]; transpose_B: B is "
                    "[K, N]; issued asynchronously",
                details="With accum=True the product is added to D, else it overwrites D. A "
                        "backend's asynchronous variant (wgmma, tcgen05) issues it and the kernel "
                        "waits with that backend's intrinsics; the generic fallback computes it "
                        "synchronously. transA / transB are the seed's spellings of transpose_A / "
                        "transpose_B. SFA and SFB (both or neither) are the scale factors of a "
                        "block-scaled MMA (tcgen05 on sm_100a): D (+)= (A * SFA) @ (B * SFB)^T "
                        "with one scale per row and block of K."))
_add(TileOpSpec("permute_layout", ("dst", "src"), "copy", ("dst", "src"),
                doc="dst = src where the two buffers have different layouts",
                details="Elements are matched by logical index; only where they live changes."))
_OP_NAMES = ("op1, op2 and op name binary ops: 'add', 'sub', 'mul', 'fdiv' (or 'div'), 'maximum' "
             "(or 'max'), 'minimum' (or 'min').")
_add(TileOpSpec("binary_chain", ("dst", "src1", "src2", "src3", "op1", "op2"), "compose", ("dst",),
                doc="dst = (src1 op1 src2) op2 src3",
                details=f"One element-wise pass; src3 may be dst. {_OP_NAMES}"))
_add(TileOpSpec("binary_reduce", ("dst", "reduce_dst", "src1", "src2", "op", "reduce_op", "axes"),
                "compose", ("dst", "reduce_dst"), {"axes": -1},
                keyword_aliases={"reduce_axes": "axes"},
                doc="dst = src1 op src2; reduce_dst = reduce_op of dst over axes",
                details=f"{_OP_NAMES} reduce_op is 'sum', 'max' or 'min'; axes as in sum."))
_add(TileOpSpec("unary_reduce", ("dst", "reduce_dst", "src", "op", "reduce_op", "axes", "bias", "scale"),
                "compose", ("dst", "reduce_dst", "src"), {"axes": -1, "bias": None, "scale": None},
                keyword_aliases={"reduce_axes": "axes"},
                doc="dst = op(src * scale + bias); reduce_dst = reduce_op of dst over axes",
                details="op names a unary op (exp, log, relu, ...); reduce_op is 'sum', 'max' or "
                        "'min'; axes as in sum. Used for softmax-style passes."))
_add(TileOpSpec("reduce_negate", ("dst", "src", "reduce_op", "axes"), "compose", ("dst", "src"),
                {"axes": -1}, keyword_aliases={"reduce_axes": "axes"},
                doc="dst = -(reduce_op of src over axes)",
                details="reduce_op is 'sum', 'max' or 'min'; axes as in sum."))
# ``with Tx.compose_op(...):`` -- the call's arguments are the tile primitive calls of the block
COMPOSE_OP = "compose_op"
_add(TileOpSpec(COMPOSE_OP, (), "compose", (),
                doc="the tile primitive calls of a `with Tx.compose_op(...):` block, as one op",
                details="Written `with Tx.compose_op(workspace=None, dispatch=None, config=None, "
                        "**config):` around tile primitive calls; other keywords join config, as "
                        "in the seed. A backend may lower the calls together; the generic "
                        "fallback runs them in order."))


#: other vocabularies' names for tile primitives (NumPy, PyTorch, BLAS) and common misspellings,
#: for did-you-mean: a name here is offered before the names close in spelling
OP_SYNONYMS = {
    "matmul": "gemm", "mm": "gemm", "bmm": "gemm", "dot": "gemm", "linear": "gemm",
    "matmul_async": "gemm_async", "mma": "gemm_async", "wgmma": "gemm_async",
    "subtract": "sub", "substract": "sub", "minus": "sub", "multiply": "mul", "mult": "mul",
    "div": "fdiv", "divide": "fdiv", "true_divide": "fdiv", "plus": "add", "sum_": "sum",
    "reduce_sum": "sum", "amax": "max", "amin": "min", "reduce_max": "max", "reduce_min": "min",
    "negative": "neg", "absolute": "abs", "ln": "log", "inv": "reciprocal", "where": "select",
    "assign": "copy", "memcpy": "copy", "load": "copy", "store": "copy", "astype": "cast",
    "to": "cast", "zeros": "zero", "zero_": "zero", "fill_": "fill", "full": "fill",
    "swish": "silu", "logistic": "sigmoid", "addcmul": "fma", "muladd": "fma",
    "transpose": "permute_layout", "permute": "permute_layout", "permute_dims": "permute_layout",
}
#: what to add when a synonym's op is not quite the same thing
OP_SYNONYM_NOTES = {
    "permute_layout": "a transposed copy is Tx.permute_layout(dst, src) into a dst declared "
                      "with the transposed layout; Tx.gemm transposes its operands itself "
                      "(transpose_A=True, transpose_B=True)",
    "gemm": "Tx.gemm(D, A, B) computes D = A @ B",
}


def suggest_op(name: str) -> str:
    """The did-you-mean of an unknown ``Tx.<name>``: ops close in spelling, a synonym first
    (``matmul`` -> ``gemm``), and a note where the synonym needs one; ``""`` when none."""
    names = [op.name.removeprefix("tirx.tile.") for op in Op.list("tirx.tile.")]
    hint = did_you_mean(name, names, synonyms=OP_SYNONYMS)
    meant = OP_SYNONYMS.get(name.lower())
    if hint and meant in names and meant in OP_SYNONYM_NOTES:
        hint += f" ({OP_SYNONYM_NOTES[meant]})"
    return hint


@contextlib.contextmanager
def core_registration() -> Iterator[None]:
    """Register as core, outside any backend's transaction.

    Core's tile ops and fallback variants are registered when this package is first imported,
    which may happen while a backend's registration runs; they must not become that backend's
    entries, nor be rolled back if it fails.
    """
    token = _registry._journal.set(None)
    try:
        with _registry.owner_scope(_registry.CORE_OWNER):
            yield
    finally:
        _registry._journal.reset(token)


def _register() -> None:
    with core_registration():
        for spec in TILE_OPS.values():
            Op.register(spec.op_name, category=OpCategory.TILE_PRIMITIVE,
                        effect=CallEffect.UPDATE_STATE, signature=spec.params, tile_spec=spec)


_register()


def get_spec(name: str) -> TileOpSpec:
    spec = TILE_OPS.get(name.removeprefix("tirx.tile."))
    if spec is None:
        raise AttributeError(f"{name!r} is not a tile primitive; tile primitives: {sorted(TILE_OPS)}")
    return spec


def _misspelt(key: str, params: tuple[str, ...]) -> str | None:
    """See :meth:`TileOpSpec.misspelt` (``params``: the op's parameters)."""
    names = [*params, *COMMON_KEYWORDS]
    folded = {n.lower().replace("_", ""): n for n in names}
    meant = folded.get(key.lower().replace("_", ""))
    if meant is not None and meant != key:
        return meant
    import difflib  # noqa: PLC0415 - only when a call has a keyword that is no parameter

    close = difflib.get_close_matches(key, names, n=1, cutoff=0.8)
    return close[0] if close and close[0] != key else None


def config_keyword_ok(key: Any, spec: TileOpSpec | None) -> bool:
    """Whether config entry ``key`` can be written as a keyword of a call of ``spec``'s op
    (and read back as the same entry): an identifier that is no Python keyword, no name the
    call takes itself and no misspelling of one."""
    if not (isinstance(key, str) and key.isidentifier()) or keyword.iskeyword(key):
        return False
    params = spec.params if spec is not None else ()
    return key not in (*params, *COMMON_KEYWORDS, "scope") and _misspelt(key, params) is None


def index_functions_as_ir(bound: list[Any]) -> list[Any]:
    """``bound`` with each Python callable argument (the seed's ``lambda i, j: i < j``
    predicate) made the :class:`~tvm.ir.expr.IndexLambda` of dst's indices, so the call
    holds IR only."""
    if not any(_index_function(a) for a in bound):
        return bound
    dst = bound[0]
    if not isinstance(dst, (Buffer, BufferRegion)):
        raise TypeError("an index function argument needs a Buffer or region as dst")
    return [IndexLambda.from_callable(a, len(dst.shape)) if _index_function(a) else a
            for a in bound]


def _index_function(a: Any) -> bool:
    """A user's Python function (a lambda or a def), not a class, a builtin or one of tvm's
    own functions (``T.exp`` as an argument stays the error that it cannot be IR)."""
    return isinstance(a, types.FunctionType) and not (a.__module__ or "").startswith("tvm.")


def make_call(name: str, *args: Any, scope: str = "thread", dispatch: str | None = None,
              workspace: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
              **kwargs: Any) -> Any:
    """A :class:`~tvm.ir.TilePrimitiveCall` of tile primitive ``name`` with its arguments bound
    in parameter order (defaults filled), after the tile-only check of ``buffer_params``.

    This is what ``Tx.<op>(...)`` and ``Tx.<scope>.<op>(...)`` build.
    """
    spec = get_spec(name)
    kwargs, config = spec.split_config(kwargs, config)
    bound = spec.bind(args, kwargs)
    for pname, value in zip(spec.params, bound):
        if pname in spec.buffer_params and not isinstance(value, (Buffer, BufferRegion)):
            raise TypeError(f"Tx.{spec.name} is tile-only and expects `{pname}` to be a Buffer or "
                            f"BufferRegion; use T.{spec.name} for expression/builtin calls")
    scope = EXEC_SCOPE_ALIASES.get(scope, scope)
    bound = index_functions_as_ir(bound)
    return TilePrimitiveCall(Op.get(spec.op_name), bound, scope=scope, dispatch=dispatch,
                             workspace=workspace, config=config)


def registered_specs() -> list[TileOpSpec]:
    """The specs of every registered tile primitive (core's and backends'), by name."""
    return sorted((op.get_attr("tile_spec") for op in Op.list("tirx.tile.")
                   if op.get_attr("tile_spec") is not None), key=lambda sp: sp.name)


def op_summary() -> str:
    """One line per registered tile primitive, its name and what it computes: what
    ``help(Tx)`` lists."""
    specs = registered_specs()
    width = max((len(sp.name) for sp in specs), default=0)
    return "\n".join(textwrap.fill(sp.doc, 88, initial_indent=f"{sp.name:<{width}}  ",
                                    subsequent_indent=" " * (width + 2)) for sp in specs)


def reference_markdown() -> str:
    """The user guide's tile-op reference: a table of every registered tile primitive with a
    spec, then each one's signature and help text, exactly as ``help(Tx.<op>)`` shows them."""
    specs = registered_specs()
    out = ["# Tile primitive reference", "",
           "Generated from the op registry (`tirx.tile.*`) by `python docs/generated.py`: each "
           "entry is what `help(Tx.<op>)` prints, and the table is what `help(Tx)` lists. Every "
           "op is also `Tx.<scope>.<op>` for the scopes `warp`, `warpgroup` (`wg`), `cta` and "
           "`cluster`.", "", "| op | what it does |", "|---|---|"]
    out += [f"| [`{sp.name}`](#tx{sp.name}) | {sp.doc.replace('|', '&#124;')} |"
            for sp in specs]
    out.append("")
    for spec in specs:
        if not spec.params:  # a statement form (`with Tx.compose_op(...):`), not a call
            text = "\n\n".join(textwrap.fill(p, 88) for p in (spec.doc, spec.details) if p)
            out += [f"## `Tx.{spec.name}`", "", "```text", text, "```", ""]
            continue
        out += [f"## `Tx.{spec.name}`", "", "```text",
                f"{spec.name}{spec.python_signature()}", "", spec.help_text(), "```", ""]
    return "\n".join(out)


def make_compose_op(calls: list[Any], *, scope: str = "thread", dispatch: str | None = None,
                    workspace: dict[str, Any] | None = None,
                    config: dict[str, Any] | None = None) -> Any:
    """The :class:`~tvm.ir.TilePrimitiveCall` of ``tirx.tile.compose_op`` over ``calls`` (what
    ``with Tx.compose_op(...):`` builds from the calls of its block)."""
    bad = [c for c in calls if not isinstance(c, TilePrimitiveCall)]
    if bad:
        raise TypeError(f"Tx.compose_op composes tile primitive calls only; got a "
                        f"{type(bad[0]).__name__}")
    scope = EXEC_SCOPE_ALIASES.get(scope, scope)
    return TilePrimitiveCall(Op.get(f"tirx.tile.{COMPOSE_OP}"), list(calls), scope=scope,
                             dispatch=dispatch, workspace=workspace, config=config)


def _snake(camel: str) -> str:
    out = []
    for i, ch in enumerate(camel):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def op_class(name: str) -> Any:
    """The seed's per-op constructor of tile primitive ``name`` (``ops.CopyAsync(dst, src,
    config={...})`` is ``make_call("copy_async", dst, src, config={...})``)."""
    spec = get_spec(name)

    def construct(*args: Any, **kwargs: Any) -> Any:
        return make_call(spec.name, *args, **kwargs)

    construct.__name__ = construct.__qualname__ = "".join(p.title() for p in spec.name.split("_"))
    construct.__doc__ = f"A TilePrimitiveCall of Tx.{spec.name} (make_call({spec.name!r}, ...))."
    return construct


def __getattr__(name: str) -> Any:
    # the seed's op classes by their CamelCase names: Copy, CopyAsync, BinaryReduce, ...
    if name[:1].isupper() and _snake(name) in TILE_OPS:
        return op_class(_snake(name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _region_shape(x: Any) -> tuple[Any, ...] | None:
    """The constant shape of a buffer or region (unit extents dropped), or None."""
    if isinstance(x, Buffer):
        dims = list(x.shape)
    elif isinstance(x, BufferRegion):
        dims = [r.extent for r in x.region]
    else:
        return None
    values = [getattr(d, "value", d) for d in dims]
    if not all(isinstance(v, int) for v in values):
        return None
    return tuple(v for v in values if v != 1)
