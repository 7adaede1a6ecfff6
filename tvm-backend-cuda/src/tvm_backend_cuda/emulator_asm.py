"""Inline PTX in hand-written CUDA under the emulator.

Each ``asm [volatile] ("template" : outputs : inputs : clobbers);`` statement of a source the
emulator builds (a ``T.cuda.func_call`` helper, a ``CudaModule`` source) becomes a C++ block
that calls the emulator's helpers (``emu/tvm_cuda_emu.h``), the same ones the intrinsics'
emulation bodies call, so hand-written PTX runs with the same checks (races, mbarrier
deadlocks, bounds) as generated code. The template's ``%N`` are the operands in order (outputs,
then inputs), ``%%`` a literal ``%``; a ``{ ... }`` scope may declare predicates
(``.reg .pred p;``), and instructions may be guarded (``@p``, ``@!p``), labelled and branch
(``bra``) within the statement. The block keeps the statement's line count, so that reports
still name the source's lines.

Modelled (:data:`MODELLED`): ``mov`` (registers, immediates, ``%cluster_ctarank`` and
``%cluster_nctarank``), ``setp``, ``selp``, ``ldmatrix`` (b16, x1/x2/x4, ``.trans``),
``mma.sync`` m16n8k16 row.col f32 with f16/bf16 inputs, ``mbarrier`` init / arrive /
arrive.expect_tx / try_wait / test_wait (parity), ``cp.async`` (ca/cg, commit and wait groups),
``cp.async.bulk`` global to shared completing on an mbarrier, ``wgmma`` fence / commit /
wait / mma_async (descriptors, or A in registers), tensor memory (``tcgen05`` alloc, dealloc,
relinquish_alloc_permit, ld / st of every shape with pack / unpack, cp, commit, the waits;
cta_group::1), and the fences and ``setmaxnreg``, which
the emulator needs not model. Anything else is a :class:`~tvm.error.NotModelledError` naming
the instruction and its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tvm.error import NotModelledError

__all__ = ["INLINE_ASM", "MODELLED", "translate"]

#: the start of an inline PTX statement (the code generator and the emulator look for it)
INLINE_ASM = re.compile(r"\basm\s*(?:volatile\s*|__volatile__\s*)?\(")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_OPERAND = re.compile(r'\s*"([^"]*)"\s*\((.*)\)\s*$', re.S)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "r": "\r"}
_EMU = "::tvm_cuda_emu::"
_LOCAL = "__asm_"  # prefix of the block's own names (predicates, labels): no clash with C++'s
_SREGS = {"%cluster_ctarank": f"{_EMU}cluster_ctarank()",
          "%cluster_nctarank": f"{_EMU}cluster_nctarank()"}
_SETP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_SETP_CAST = {"b32": "(unsigned)", "u32": "(unsigned)", "s32": "(int)", "b64": "(unsigned long long)",
              "u64": "(unsigned long long)", "s64": "(long long)", "f32": "(float)"}
_MMA_IN = {"f16": "__half", "bf16": "__nv_bfloat16"}
_WGMMA_IN = {"f16": "__half", "bf16": "__nv_bfloat16", "e4m3": "__nv_fp8_e4m3",
             "e5m2": "__nv_fp8_e5m2", "tf32": f"{_EMU}Tf32"}


@dataclass
class _Statement:
    """One asm statement: its template, operands (constraint, C++ expression) in ``%N`` order
    and the source line it starts on."""

    template: str
    operands: list[tuple[str, str]]
    line: int

    def fail(self, what: str) -> NotModelledError:
        return NotModelledError(
            f"line {self.line} of the CUDA source: inline PTX {what}, which the CUDA emulator "
            f"does not model (it models: {', '.join(MODELLED)}); run it on a GPU, or write it "
            "with the T.ptx intrinsics, which the emulator runs")


def translate(source: str) -> str:
    """``source`` with every inline PTX statement replaced by its C++ (module docstring)."""
    out: list[str] = []
    pos = 0
    for m in INLINE_ASM.finditer(source):
        if m.start() < pos:
            continue  # inside a statement already replaced
        end = _closing(source, m.end())
        semi = end + 1
        while semi < len(source) and source[semi] in " \t\r\n":
            semi += 1
        if semi >= len(source) or source[semi] != ";":
            raise NotModelledError(f"line {source.count(chr(10), 0, m.start()) + 1} of the CUDA "
                                   "source: an asm statement that is not followed by ';'")
        stmt = _parse(source[m.end():end], source.count("\n", 0, m.start()) + 1)
        text = source[m.start():semi + 1]
        out += [source[pos:m.start()], "{ " + _block(stmt) + " }", "\n" * text.count("\n")]
        pos = semi + 1
    out.append(source[pos:])
    return "".join(out)


def _closing(s: str, i: int) -> int:
    """The index of the ``)`` closing the ``(`` just before ``i`` (strings skipped)."""
    depth = 1
    while i < len(s):
        c = s[i]
        if c == '"':
            i = _STRING.match(s, i).end() - 1  # type: ignore[union-attr]
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise NotModelledError("an asm statement without its closing ')'")


def _split(s: str, sep: str) -> list[str]:
    """``s`` split at ``sep`` outside strings, parentheses and braces."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i = _STRING.match(s, i).end()  # type: ignore[union-attr]
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return parts


def _parse(body: str, line: int) -> _Statement:
    sections = _split(body, ":")
    template = "".join(re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(1)), lit)
                       for lit in _STRING.findall(sections[0]))
    operands = []
    for section in sections[1:3]:
        for op in _split(section, ","):
            if not op.strip():
                continue
            m = _OPERAND.match(op)
            if m is None:
                raise NotModelledError(f"line {line} of the CUDA source: cannot read the asm "
                                       f"operand {op.strip()!r}")
            operands.append((m.group(1), m.group(2).strip()))
    return _Statement(template, operands, line)


def _block(stmt: _Statement) -> str:
    """The C++ of one statement's template: declarations, then one line per instruction."""
    text = stmt.template.replace("%%", "\x00")
    decls, code = [], []
    for raw in text.split(";"):
        ins = raw.strip().lstrip("{").strip()
        while ins.startswith("}"):
            ins = ins[1:].strip()
        if not ins:
            continue
        label = re.match(r"^([A-Za-z_$][\w$]*):\s*", ins)
        if label:
            code.append(f"{_LOCAL}{label.group(1)}:;")
            ins = ins[label.end():].strip()
            if not ins:
                continue
        decl = re.match(r"^\.reg\s+\.(\w+)\s+(.+)$", ins)
        if decl:
            ctype = "bool" if decl.group(1) == "pred" else "unsigned long long"
            decls += [f"{ctype} {_LOCAL}{n.strip()};" for n in decl.group(2).split(",")]
            continue
        code.append(_instruction(stmt, ins.replace("\x00", "%")))
    return " ".join(decls + code)


def _instruction(stmt: _Statement, ins: str) -> str:
    guard = ""
    g = re.match(r"^@(!?)([A-Za-z_]\w*)\s+", ins)
    if g:
        guard = f"if ({'!' if g.group(1) else ''}{_LOCAL}{g.group(2)}) "
        ins = ins[g.end():]
    opcode, _, rest = ins.partition(" ")
    ops = [o.strip() for o in _split(rest, ",")] if rest.strip() else []
    for prefix, rule in _RULES:
        if opcode == prefix or opcode.startswith(prefix + "."):
            return guard + rule(_Ops(stmt, ops, ins), opcode) + ";"
    raise stmt.fail(f"`{ins}`")


class _Ops:
    """The operands of one instruction, read as C++ expressions."""

    def __init__(self, stmt: _Statement, ops: list[str], ins: str) -> None:
        self.stmt, self.ops, self.ins = stmt, ops, ins

    def __len__(self) -> int:
        return len(self.ops)

    def value(self, i: int) -> str:
        return self.expr(self.ops[i])

    def expr(self, tok: str) -> str:
        tok = tok.strip()
        m = re.fullmatch(r"%(\d+)", tok)
        if m:
            n = int(m.group(1))
            if n >= len(self.stmt.operands):
                raise self.stmt.fail(f"`{self.ins}` naming operand %{n} of "
                                     f"{len(self.stmt.operands)}")
            return f"({self.stmt.operands[n][1]})"
        if tok in _SREGS:
            return _SREGS[tok]
        if tok.startswith("%"):
            raise self.stmt.fail(f"special register {tok} (in `{self.ins}`)")
        if re.fullmatch(r"[-+]?(0[xX][0-9a-fA-F]+|\d+)[uU]?", tok):
            return tok
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            return _LOCAL + tok  # a predicate or register the statement declared
        raise self.stmt.fail(f"operand {tok!r} (in `{self.ins}`)")

    def address(self, i: int) -> str:
        tok = self.ops[i].strip()
        if not (tok.startswith("[") and tok.endswith("]")):
            raise self.stmt.fail(f"`{self.ins}` whose operand {tok!r} is not an address")
        return self.expr(tok[1:-1])

    def vector(self, i: int) -> list[str]:
        tok = self.ops[i].strip()
        if not (tok.startswith("{") and tok.endswith("}")):
            return [self.expr(tok)]
        return [self.expr(t) for t in tok[1:-1].split(",")]


def _noop(ops: _Ops, opcode: str) -> str:
    return "(void)0"


def _fence(ops: _Ops, opcode: str) -> str:
    return "__threadfence()"  # the emulator's memory is coherent: one proxy, no reordering


def _mov(ops: _Ops, opcode: str) -> str:
    return f"{ops.value(0)} = {ops.value(1)}"


def _setp(ops: _Ops, opcode: str) -> str:
    cmp = opcode.split(".")[1]
    if cmp not in _SETP or len(ops) != 3:
        raise ops.stmt.fail(f"`{ops.ins}`")
    cast = _SETP_CAST.get(opcode.split(".")[-1])
    if cast is None:
        raise ops.stmt.fail(f"`{ops.ins}`")
    return f"{ops.value(0)} = {cast}{ops.value(1)} {_SETP[cmp]} {cast}{ops.value(2)}"


def _selp(ops: _Ops, opcode: str) -> str:
    return f"{ops.value(0)} = {ops.value(3)} ? {ops.value(1)} : {ops.value(2)}"


def _ldmatrix(ops: _Ops, opcode: str) -> str:
    m = re.fullmatch(r"ldmatrix\.sync\.aligned\.m8n8\.x([124])(\.trans)?\.shared(::cta)?\.b16",
                     opcode)
    regs = ops.vector(0)
    if m is None or len(regs) != int(m.group(1)):
        raise ops.stmt.fail(f"`{ops.ins}`")
    ptrs = ", ".join(f"(unsigned*)&{r}" for r in regs)
    return (f"{_EMU}ldmatrix_b16({'true' if m.group(2) else 'false'}, {m.group(1)}, "
            f"(unsigned)({ops.address(1)}), {ptrs})")


def _mma(ops: _Ops, opcode: str) -> str:
    m = re.fullmatch(
        r"mma\.sync\.aligned\.m16n8k(16|8)\.row\.col\.f32\.(f16|bf16)\.(f16|bf16)\.f32", opcode)
    if m is None or m.group(2) != m.group(3) or len(ops) != 4:
        raise ops.stmt.fail(f"`{ops.ins}`")
    k = int(m.group(1))
    d, a, b, c = (ops.vector(i) for i in range(4))
    if (len(d), len(a), len(b), len(c)) != (4, k // 4, k // 8, 4):
        raise ops.stmt.fail(f"`{ops.ins}`")
    pad_a, pad_b = ["0u"] * (4 - len(a)), ["0u"] * (2 - len(b))
    args = [f"(float*)&{x}" for x in d] + [f"(unsigned)({x})" for x in a] + pad_a + \
        [f"(unsigned)({x})" for x in b] + pad_b + [f"(float)({x})" for x in c]
    return f"{_EMU}mma_m16n8k<{_MMA_IN[m.group(2)]}, {k}>({', '.join(args)})"


def _mbarrier(ops: _Ops, opcode: str) -> str:
    parts = opcode.split(".")
    if parts[1] == "init":
        return f"{_EMU}mbar_init((unsigned)({ops.address(0)}), (unsigned)({ops.value(1)}))"
    if parts[1] in ("try_wait", "test_wait") and "parity" in parts:
        return (f"{ops.value(0)} = {_EMU}mbar_test_wait((unsigned)({ops.address(1)}), "
                f"(unsigned)({ops.value(2)}))")
    if parts[1] == "arrive":
        state = "" if ops.ops[0].strip() == "_" else f"{ops.value(0)} = 0, "
        bar = f"(unsigned)({ops.address(1)})"
        if len(parts) > 2 and parts[2] == "expect_tx":
            return (f"({state}{_EMU}mbar_expect_tx({bar}, (unsigned)({ops.value(2)})), "
                    f"{_EMU}mbar_arrive({bar}))")
        if len(ops) == 2:
            return f"({state}{_EMU}mbar_arrive({bar}))"
    raise ops.stmt.fail(f"`{ops.ins}`")


def _cp_async(ops: _Ops, opcode: str) -> str:
    if opcode == "cp.async.commit_group":
        return f"{_EMU}cp_async_commit()"
    if opcode in ("cp.async.wait_group", "cp.async.wait_all"):
        return f"{_EMU}cp_async_wait({ops.value(0) if len(ops) else 0})"
    if opcode.startswith("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes") \
            or opcode.startswith("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"):
        return (f"{_EMU}bulk_load((unsigned)({ops.address(0)}), (const void*)({ops.address(1)}), "
                f"(unsigned)({ops.value(2)}), (unsigned)({ops.address(3)}))")
    if re.fullmatch(r"cp\.async\.(ca|cg)\.shared(::cta)?\.global(\.L2::\w+)?", opcode) and \
            len(ops) in (3, 4):
        size = ops.value(2)
        src_size = ops.value(3) if len(ops) == 4 else size
        return (f"{_EMU}cp_async((unsigned)({ops.address(0)}), (const void*)({ops.address(1)}), "
                f"(unsigned)({size}), (unsigned)({src_size}))")
    raise ops.stmt.fail(f"`{ops.ins}`")


def _wgmma(ops: _Ops, opcode: str) -> str:
    if opcode == "wgmma.fence.sync.aligned":
        return "(void)0"
    if opcode == "wgmma.commit_group.sync.aligned":
        return f"{_EMU}wgmma_commit()"
    if opcode == "wgmma.wait_group.sync.aligned":
        return f"{_EMU}wgmma_wait({ops.value(0)})"
    m = re.fullmatch(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(\d+)\.(f32|f16)\.(\w+)\.(\w+)",
                     opcode)
    if m is None or m.group(4) != m.group(5) or m.group(4) not in _WGMMA_IN or len(ops) < 6:
        raise ops.stmt.fail(f"`{ops.ins}`")
    n, k, out_t, in_t = m.group(1), m.group(2), m.group(3), m.group(4)
    acc = ops.vector(0)
    rs = ops.ops[1].strip().startswith("{")
    rest = [ops.value(i) for i in range(3, len(ops))]  # scale-d, imm-scale-a/b, transposes
    scale_d, sa, sb = rest[0], rest[1], rest[2]
    trans = rest[3:] + ["0"] * (2 - len(rest[3:]))
    tmpl = f"<{_WGMMA_IN[in_t]}, {'true' if out_t == 'f32' else 'false'}>"
    con = "float" if out_t == "f32" else "unsigned"
    accs = "".join(f", *({con}*)&{x}" for x in acc)
    if rs:
        a = "".join(f", (unsigned)({x})" for x in ops.vector(1))
        call = (f"{_EMU}wgmma_rs{tmpl}(__LINE__, {n}, {k}, (bool)({trans[-1]}), {sa}, {sb}, "
                f"(int)({scale_d}), (unsigned long long)({ops.value(2)}){a}{accs})")
    else:
        call = (f"{_EMU}wgmma_ss{tmpl}({n}, {k}, (bool)({trans[0]}), (bool)({trans[1]}), {sa}, "
                f"{sb}, (int)({scale_d}), (unsigned long long)({ops.value(1)}), "
                f"(unsigned long long)({ops.value(2)}){accs})")
    return f"({_EMU}wgmma_line = __LINE__, {call})"


_TMEM_SHAPES = {"32x32b": "k32x32b", "16x64b": "k16x64b", "16x128b": "k16x128b",
                "16x256b": "k16x256b", "16x32bx2": "k16x32bx2"}
_TMEM_CP = {"128x256b": (128, 256, "kCpNone"), "128x128b": (128, 128, "kCpNone"),
            "32x128b.warpx4": (32, 128, "kCpWarpx4"),
            "64x128b.warpx2::02_13": (64, 128, "kCpWarpx2_02_13"),
            "64x128b.warpx2::01_23": (64, 128, "kCpWarpx2_01_23")}


def _tcgen05(ops: _Ops, opcode: str) -> str:
    """Tensor memory (``emu/tvm_cuda_emu.h``, "Blackwell tensor memory"): one CTA's
    (cta_group::1); the waits and fences are no-ops, as the emulator runs each operation when
    issued."""
    parts = opcode.split(".")
    if "cta_group::2" in parts:
        raise ops.stmt.fail(f"`{ops.ins}` (cta_group::2: a CTA pair's tensor memory)")
    verb = parts[1]
    if verb in ("wait::ld", "wait::st", "fence::before_thread_sync", "fence::after_thread_sync"):
        return "(void)0"
    if verb == "alloc" and "shared::cta" in parts and len(ops) == 2:
        return (f"{_EMU}tmem_alloc((unsigned)({ops.address(0)}), (unsigned)({ops.value(1)}), "
                "__LINE__)")
    if verb == "dealloc" and len(ops) == 2:
        return (f"{_EMU}tmem_dealloc((unsigned)({ops.value(0)}), (unsigned)({ops.value(1)}), "
                "__LINE__)")
    if verb == "relinquish_alloc_permit":
        return f"{_EMU}tmem_relinquish()"
    if verb in ("ld", "st"):
        m = re.fullmatch(r"tcgen05\.(ld|st)\.sync\.aligned\.(\w+)\.x(\d+)"
                         r"(\.pack::16b|\.unpack::16b)?\.b32", opcode)
        flag = m.group(4) if m else None
        if m is None or m.group(2) not in _TMEM_SHAPES or \
                flag not in (None, ".pack::16b" if verb == "ld" else ".unpack::16b"):
            raise ops.stmt.fail(f"`{ops.ins}`")
        half = m.group(2) == "16x32bx2"  # its immediate half offset follows the address
        if len(ops) != 2 + half:
            raise ops.stmt.fail(f"`{ops.ins}`")
        regs_at, addr_at = (0, 1) if verb == "ld" else (1 + half, 0)
        off = ops.value(addr_at + 1) if half else "0u"
        head = (f"{_EMU}{_TMEM_SHAPES[m.group(2)]}, {m.group(3)}u, "
                f"{'true' if m.group(4) else 'false'}, (unsigned)({ops.address(addr_at)}), "
                f"(unsigned)({off})")
        if verb == "ld":
            regs = "".join(f", *(unsigned*)&{r}" for r in ops.vector(regs_at))
            return f"{_EMU}tmem_ld({head}{regs})"
        vals = "".join(f", {_EMU}bits32({r})" for r in ops.vector(regs_at))
        return f"{_EMU}tmem_st({head}{vals})"
    if verb == "commit" and "mbarrier::arrive::one" in parts:
        mask = f"(unsigned)({ops.value(1)})" if "multicast::cluster" in parts else "0u"
        return f"{_EMU}tmem_commit((unsigned)({ops.address(0)}), {mask})"
    if verb == "cp" and len(ops) == 2:
        shape = ".".join(p for p in parts[2:] if not p.startswith("cta_group"))
        if shape not in _TMEM_CP:
            raise ops.stmt.fail(f"`{ops.ins}`")
        rows, bits, kind = _TMEM_CP[shape]
        return (f"{_EMU}tmem_cp((unsigned)({ops.address(0)}), (unsigned long long)"
                f"({ops.value(1)}), {rows}u, {bits}u, {_EMU}{kind})")
    raise ops.stmt.fail(f"`{ops.ins}`")


def _bra(ops: _Ops, opcode: str) -> str:
    return f"goto {_LOCAL}{ops.ops[0].strip()}"


_Rule = Callable[[_Ops, str], str]
#: (opcode prefix, rule), longest prefixes first where one extends another
_RULES: list[tuple[str, _Rule]] = [
    ("mov", _mov), ("setp", _setp), ("selp", _selp), ("bra", _bra),
    ("ldmatrix", _ldmatrix), ("mma", _mma), ("mbarrier", _mbarrier), ("cp.async", _cp_async),
    ("wgmma", _wgmma), ("tcgen05", _tcgen05), ("fence", _fence), ("setmaxnreg", _noop),
]
#: what the emulator models, for messages and the guide
MODELLED = ("mov", "setp", "selp", "bra", "ldmatrix", "mma.sync m16n8k16", "mbarrier",
            "cp.async", "cp.async.bulk (global to shared)", "wgmma",
            "tcgen05 alloc/dealloc/ld/st/cp/commit/wait/fence (cta_group::1)", "fence",
            "setmaxnreg")
