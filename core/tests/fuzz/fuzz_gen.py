"""Whole TVMScript kernels drawn with hypothesis, as text.

A kernel has one to three buffer parameters (constant or symbolic shapes, several dtypes),
sometimes scalar parameters, and a body of nested statements: loops of every kind, ``if``/
``else``, lets, local allocations, asserts, attributes, and stores whose values mix arithmetic,
comparisons, selects, casts, math calls and loads. Most indices are kept in bounds (``% extent``)
so that most kernels compile and run; some are not, which the verifier or the run-time bounds
checks must catch. Sometimes a kernel uses the kernel form (``T.device_entry()``, ``T.cta_id``,
``T.thread_id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

__all__ = ["generate", "kernels"]

DTYPES = ["float32", "float32", "int32", "int32", "float16", "int8", "uint8", "float64",
          "int64", "bfloat16"]
FLOAT_DTYPES = {"float16", "float32", "float64", "bfloat16"}
UNARY = ["T.exp", "T.sqrt", "T.fabs", "T.floor", "T.tanh", "T.sigmoid", "T.log1p", "T.round"]


@dataclass
class _Buf:
    name: str
    dtype: str
    shape: list[str]  # extents as text ("8", "n")


@dataclass
class _Ctx:
    bufs: list[_Buf] = field(default_factory=list)
    ints: list[str] = field(default_factory=list)  # int32 names in scope
    floats: list[str] = field(default_factory=list)  # float32 names in scope
    names: int = 0
    lines: list[str] = field(default_factory=list)

    def fresh(self, base: str) -> str:
        self.names += 1
        return f"{base}{self.names}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)


def _draw_int_literal(draw: st.DrawFn) -> str:
    return str(draw(st.sampled_from([0, 1, 2, 3, 4, 7, 8, 16, -1, -3])))


def _int_expr(draw: st.DrawFn, ctx: _Ctx, depth: int) -> str:
    choices = ["lit", "lit"] + ["var"] * 3 * bool(ctx.ints)
    if depth < 3:
        choices += ["bin", "bin", "minmax", "select", "cast", "load"]
    kind = draw(st.sampled_from(choices))
    if kind == "lit":
        return _draw_int_literal(draw)
    if kind == "var":
        return draw(st.sampled_from(ctx.ints))
    if kind == "bin":
        op = draw(st.sampled_from(["+", "-", "*", "//", "%"]))
        a = _int_expr(draw, ctx, depth + 1)
        if op in ("//", "%"):  # a positive divisor: division by zero is not what is tested here
            return f"({a} {op} {draw(st.sampled_from(['2', '3', '4', '7']))})"
        return f"({a} {op} {_int_expr(draw, ctx, depth + 1)})"
    if kind == "minmax":
        fn = draw(st.sampled_from(["T.min", "T.max"]))
        return f"{fn}({_int_expr(draw, ctx, depth + 1)}, {_int_expr(draw, ctx, depth + 1)})"
    if kind == "select":
        return (f"T.Select({_bool_expr(draw, ctx, depth + 1)}, {_int_expr(draw, ctx, depth + 1)}, "
                f"{_int_expr(draw, ctx, depth + 1)})")
    if kind == "cast":
        return f'T.Cast("int32", {_float_expr(draw, ctx, depth + 1)})'
    load = _load(draw, ctx, depth, want_float=False)
    return load if load is not None else _draw_int_literal(draw)


def _float_expr(draw: st.DrawFn, ctx: _Ctx, depth: int) -> str:
    choices = ["lit", "lit"] + ["var"] * bool(ctx.floats)
    if depth < 3:
        choices += ["bin", "bin", "call", "select", "cast", "load", "load"]
    kind = draw(st.sampled_from(choices))
    if kind == "lit":
        value = draw(st.sampled_from(["0.0", "1.0", "0.5", "-2.5", "3.0", "T.float32(1.5)",
                                      'T.float32("inf")', "T.float32(1e-3)"]))
        return value
    if kind == "var":
        return draw(st.sampled_from(ctx.floats))
    if kind == "bin":
        op = draw(st.sampled_from(["+", "-", "*", "/"]))
        return f"({_float_expr(draw, ctx, depth + 1)} {op} {_float_expr(draw, ctx, depth + 1)})"
    if kind == "call":
        fn = draw(st.sampled_from(UNARY + ["T.max", "T.min"]))
        if fn in ("T.max", "T.min"):
            return f"{fn}({_float_expr(draw, ctx, depth + 1)}, {_float_expr(draw, ctx, depth + 1)})"
        return f"{fn}({_float_expr(draw, ctx, depth + 1)})"
    if kind == "select":
        return (f"T.Select({_bool_expr(draw, ctx, depth + 1)}, "
                f"{_float_expr(draw, ctx, depth + 1)}, {_float_expr(draw, ctx, depth + 1)})")
    if kind == "cast":
        return f'T.Cast("float32", {_int_expr(draw, ctx, depth + 1)})'
    load = _load(draw, ctx, depth, want_float=True)
    return load if load is not None else "1.0"


def _bool_expr(draw: st.DrawFn, ctx: _Ctx, depth: int) -> str:
    kind = draw(st.sampled_from(["icmp", "icmp", "fcmp", "and", "not"] if depth < 3 else ["icmp"]))
    if kind == "icmp":
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"{_int_expr(draw, ctx, depth + 1)} {op} {_int_expr(draw, ctx, depth + 1)}"
    if kind == "fcmp":
        op = draw(st.sampled_from(["<", ">="]))
        return f"{_float_expr(draw, ctx, depth + 1)} {op} {_float_expr(draw, ctx, depth + 1)}"
    if kind == "not":
        return f"not ({_bool_expr(draw, ctx, depth + 1)})"
    op = draw(st.sampled_from(["and", "or"]))
    return f"({_bool_expr(draw, ctx, depth + 1)}) {op} ({_bool_expr(draw, ctx, depth + 1)})"


def _index(draw: st.DrawFn, ctx: _Ctx, extent: str, depth: int) -> str:
    kind = draw(st.sampled_from(["mod", "mod", "mod", "var", "lit", "raw"]))
    if kind == "var" and ctx.ints:
        return draw(st.sampled_from(ctx.ints))
    if kind == "lit":
        return "0"
    expr = _int_expr(draw, ctx, depth + 1)
    if kind == "raw":  # may leave the buffer: the verifier or the bounds checks must say so
        return expr
    return f"{expr} % {extent}"


def _load(draw: st.DrawFn, ctx: _Ctx, depth: int, want_float: bool) -> str | None:
    bufs = [b for b in ctx.bufs if (b.dtype in FLOAT_DTYPES) == want_float]
    if not bufs:
        return None
    b = draw(st.sampled_from(bufs))
    idx = ", ".join(_index(draw, ctx, e, depth) for e in b.shape)
    target = "float32" if want_float else "int32"
    load = f"{b.name}[{idx}]"
    return load if b.dtype == target else f'T.Cast("{target}", {load})'


def _value_for(draw: st.DrawFn, ctx: _Ctx, dtype: str) -> str:
    if dtype in FLOAT_DTYPES:
        value = _float_expr(draw, ctx, 0)
    else:
        value = _int_expr(draw, ctx, 0)
    base = "float32" if dtype in FLOAT_DTYPES else "int32"
    return value if dtype == base else f'T.Cast("{dtype}", {value})'


def _stmt(draw: st.DrawFn, ctx: _Ctx, depth: int) -> None:
    kinds = ["store", "store", "store"]
    if depth < 4:
        kinds += ["for", "for", "grid", "if", "let", "with_let", "alloc", "assert", "attr"]
    kind = draw(st.sampled_from(kinds))
    if kind == "store" or not ctx.bufs:
        if not ctx.bufs:
            ctx.emit(depth, "T.evaluate(0)")
            return
        b = draw(st.sampled_from(ctx.bufs))
        idx = ", ".join(_index(draw, ctx, e, 0) for e in b.shape)
        op = draw(st.sampled_from(["=", "=", "=", "+="]))
        ctx.emit(depth, f"{b.name}[{idx}] {op} {_value_for(draw, ctx, b.dtype)}")
        return
    if kind == "for":
        v = ctx.fresh("i")
        ext = draw(st.sampled_from(["4", "8", "3", "1", "0"] + ctx.ints[:2]))
        loop = draw(st.sampled_from([f"range({ext})", f"T.serial({ext})", f"range(1, {ext})",
                                     f"T.unroll({ext})", f"T.parallel({ext})",
                                     f"T.vectorized({draw(st.sampled_from(['4', '2', '8']))})"]))
        ctx.emit(depth, f"for {v} in {loop}:")
        _block(draw, ctx, depth + 1, [v])
        return
    if kind == "grid":
        a, b = ctx.fresh("i"), ctx.fresh("j")
        ctx.emit(depth, f"for {a}, {b} in T.grid({draw(st.sampled_from(['2', '4']))}, "
                        f"{draw(st.sampled_from(['3', '4', '8']))}):")
        _block(draw, ctx, depth + 1, [a, b])
        return
    if kind == "if":
        ctx.emit(depth, f"if {_bool_expr(draw, ctx, 0)}:")
        _block(draw, ctx, depth + 1, [])
        if draw(st.booleans()):
            ctx.emit(depth, "else:")
            _block(draw, ctx, depth + 1, [])
        return
    if kind == "let":
        name = ctx.fresh("x")
        if draw(st.booleans()):
            ctx.emit(depth, f"{name} = {_int_expr(draw, ctx, 0)}")
            ctx.ints.append(name)
        else:
            ctx.emit(depth, f"{name}: T.float32 = {_float_expr(draw, ctx, 0)}")
            ctx.floats.append(name)
        return  # the name stays in scope for the rest of the block
    if kind == "with_let":
        name = ctx.fresh("y")
        ctx.emit(depth, f"with T.let({_int_expr(draw, ctx, 0)}) as {name}:")
        _block(draw, ctx, depth + 1, [name])
        return
    if kind == "alloc":
        name = ctx.fresh("L")
        ext = draw(st.sampled_from(["4", "8", "16"]))
        dtype = draw(st.sampled_from(["float32", "int32"]))
        scope = draw(st.sampled_from(["local", "global", "shared"]))
        ctx.emit(depth, f'{name} = T.alloc_buffer(({ext},), "{dtype}", scope="{scope}")')
        ctx.bufs.append(_Buf(name, dtype, [ext]))
        return
    if kind == "assert":
        ctx.emit(depth, f'assert {_bool_expr(draw, ctx, 0)}, "fuzz assert"')
        return
    ctx.emit(depth, 'with T.attr({"pragma_fuzz": 1}):')
    _block(draw, ctx, depth + 1, [])


def _block(draw: st.DrawFn, ctx: _Ctx, depth: int, new_ints: list[str]) -> None:
    saved = (len(ctx.ints), len(ctx.floats), len(ctx.bufs))
    ctx.ints.extend(new_ints)
    for _ in range(draw(st.integers(1, 3))):
        _stmt(draw, ctx, depth)
    del ctx.ints[saved[0]:], ctx.floats[saved[1]:], ctx.bufs[saved[2]:]


@st.composite
def kernels(draw: st.DrawFn) -> str:
    """One kernel as TVMScript text."""
    ctx = _Ctx()
    params: list[str] = []
    header: list[str] = []
    symbolic = draw(st.booleans())
    if symbolic:
        header.append("n = T.int32()")
        ctx.ints.append("n")
    for k in range(draw(st.integers(1, 3))):
        name = "ABC"[k]
        dtype = draw(st.sampled_from(DTYPES))
        rank = draw(st.integers(1, 2))
        dims = [draw(st.sampled_from(["4", "8", "16", "3"])) for _ in range(rank)]
        if symbolic and k == 0:
            dims[0] = "n"
            params.append(f"{name.lower()}: T.handle")
            header.append(f'{name} = T.match_buffer({name.lower()}, ({", ".join(dims)},), '
                          f'"{dtype}")')
        else:
            params.append(f'{name}: T.Buffer(({", ".join(dims)},), "{dtype}")')
        ctx.bufs.append(_Buf(name, dtype, dims))
    if draw(st.booleans()):
        params.append("m: T.int32")
        ctx.ints.append("m")
    if draw(st.booleans()):
        params.append("s: T.float32")
        ctx.floats.append("s")
    kernel_form = draw(st.integers(0, 4)) == 0
    for line in header:
        ctx.emit(1, line)
    if kernel_form:
        ctx.emit(1, "T.device_entry()")
        ctx.emit(1, f"bx = T.cta_id([{draw(st.sampled_from(['1', '2', '4']))}])")
        ctx.emit(1, f"tx = T.thread_id([{draw(st.sampled_from(['1', '4', '8']))}])")
        ctx.ints += ["bx", "tx"]
    for _ in range(draw(st.integers(1, 4))):
        _stmt(draw, ctx, 1)
    head = ["from tvm.script import tirx as T", "", "", "@T.prim_func",
            f"def fuzz({', '.join(params)}):"]
    return "\n".join(head + ctx.lines) + "\n"


def generate(count: int, seed: int) -> list[str]:
    """``count`` kernels drawn from ``kernels()`` with ``seed`` (the same list every time)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed

    out: list[str] = []

    @hyp_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(kernels())
    def collect(text: str) -> None:
        out.append(text)

    collect()
    return out[:count]
