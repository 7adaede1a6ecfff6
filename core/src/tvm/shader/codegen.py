"""Core's C-style codegen turned into one compute shader per kernel, for the shader-style
backends (GLSL for Vulkan, WGSL for WebGPU).

What the languages share is here: a shader per kernel, each starting with a ``// kernel:
<name>`` line (:func:`generate_shaders` joins them, :func:`split_kernels` splits them again);
no pointers (a pointer parameter's element type is read off the buffers viewing it, and a
typed view of another type is refused); thread indices read from builtins; shared memory
declared at file scope, counted against the target's ``max_shared_memory_per_block``; a failed
assert ends the invocation; ``min``/``max``/``floor`` builtins; a ``T.call_extern`` of a name
calls that builtin. A backend's subclass gives the spelling: types, literals, declarations,
the preamble that binds a kernel's parameters (its layout), and its math rules
(:func:`shader_templates`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..codegen.c_style import CodegenCStyle, FunctionInfo, OpTemplate, ParamInfo
from ..error import CodegenError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer, const_numel
from ..ir.dtype import DataType
from ..ir.function import IRModule, PrimFunc
from ..ir.visitor import post_order_visit

__all__ = ["KERNEL_MARKER", "ShaderCodegen", "generate_shaders", "pointee_types",
           "rule_abs", "rule_unsupported", "shader_templates", "split_kernels", "const_numel"]

KERNEL_MARKER = "// kernel: "


def rule_unsupported(what: str) -> Callable[[CodegenCStyle, E.Call, list[str]], str]:
    """A codegen rule refusing its op on the target, saying ``what`` the language lacks."""

    def rule(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
        raise CodegenError(f"op `{call.op.name}` is not supported on target "
                           f"{cg.target_kind!r}: {what}")

    return rule


def rule_abs(cg: CodegenCStyle, call: E.Call, args: list[str]) -> str:
    """``abs`` of a signed or float value; an unsigned or bool value is its own."""
    return args[0] if call.dtype.is_uint or call.dtype.is_bool else f"abs({args[0]})"


def shader_templates(language: str, *rules: Mapping[str, OpTemplate]) -> dict[str, OpTemplate]:
    """Core's C templates, ``abs``, no ``erf``/``nextafter``/``address_of`` (the language has
    none), then each of ``rules`` in order (a later rule of an op replaces an earlier one)."""
    out: dict[str, OpTemplate] = {
        **CodegenCStyle.op_templates,
        "tirx.abs": rule_abs,
        "tirx.erf": rule_unsupported(f"{language} has no erf"),
        "tirx.nextafter": rule_unsupported(f"{language} has no nextafter"),
        "tirx.address_of": rule_unsupported(f"{language} has no pointers"),
    }
    for more in rules:
        out.update(more)
    return out


def pointee_types(func: PrimFunc) -> dict[int, DataType]:
    """Element type of each pointer parameter, from the buffers viewing it (a kernel receives
    data handles; its DeclBuffers and accesses say what they point to)."""
    types: dict[int, DataType] = {}
    for p in func.params:
        if p.dtype.is_handle and p.ptr_dtype is not None:
            types[id(p)] = p.ptr_dtype.element_of()
    for p, buf in func.buffer_map.items():
        types.setdefault(id(p), buf.dtype.element_of())

    def visit(n: Any) -> None:
        if isinstance(n, (S.DeclBuffer, S.AllocBuffer, E.BufferLoad, S.BufferStore)):
            types.setdefault(id(n.buffer.data), n.buffer.dtype.element_of())

    post_order_visit(func.body, visit)
    return types


class ShaderCodegen(CodegenCStyle):
    """One shader for one kernel (see the module docstring). Subclasses set ``language``,
    ``reserved_words`` and ``reserved_prefix`` (names a kernel may not use), spell a constant
    declaration (:meth:`let_line`) and set ``layout`` in their ``function_header``."""

    language: ClassVar[str] = "the shader language"
    reserved_words: ClassVar[frozenset[str]] = frozenset()
    reserved_prefix: ClassVar[str] = ""
    restrict_keyword: ClassVar[str] = ""
    align_attribute: ClassVar[str] = ""
    unroll_pragma: ClassVar[str | None] = None
    includes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, target: Any = None) -> None:
        super().__init__(target)
        self._handle_types: dict[int, DataType] = {}
        self._shared_bytes = 0
        self.layout: Any = None

    def target_attr(self, name: str, default: Any) -> Any:
        attrs = getattr(self.target, "attrs", None) or {}
        return attrs.get(name, default)

    def let_line(self, name: str, ctype: str, value: str) -> str:
        """The declaration of a constant ``name`` of type ``ctype``."""
        raise NotImplementedError

    def use_builtin(self, name: str) -> None:
        """Called for each builtin a ``T.call_extern`` names (an extension it needs, ...)."""

    # -- structure ------------------------------------------------------------------------
    def add_function(self, func: PrimFunc, name: str | None = None) -> FunctionInfo:
        if not func.attrs.get("tirx.is_kernel"):
            raise CodegenError(
                f"target {self.target_kind!r}: function `{name or func.name}` is not a kernel; "
                "only the kernels of the split module (tirx.is_kernel) become shaders, the host "
                "part runs in Python")
        self._handle_types = pointee_types(func)
        return super().add_function(func, name)

    def check_param(self, info: FunctionInfo, p: ParamInfo) -> None:
        """A kernel parameter a shader can bind (no symbolic extent left unpassed)."""
        if p.kind == "shape_var":
            raise CodegenError(f"target {self.target_kind!r}: kernel `{info.name}` has a "
                               f"symbolic extent `{p.name}` that is not passed to it")

    def _elem_type(self, p: ParamInfo) -> DataType:
        if p.kind == "buffer":
            return DataType(p.dtype)
        var_id = next((k for k, n in self._names.items() if n == p.c_name), None)
        dtype = self._handle_types.get(var_id) if var_id is not None else None
        if dtype is None:
            raise CodegenError(f"target {self.target_kind!r}: cannot tell the element type of "
                               f"pointer argument `{p.name}`; give it a buffer")
        return dtype

    def finish(self) -> str:
        return f"{KERNEL_MARKER}{self._cur_info.symbol}\n" + super().finish()

    def assert_fail_lines(self, message: str) -> list[str]:
        # A shader cannot report: a failed assert ends the invocation.
        return ["return;"]

    # -- statements -------------------------------------------------------------------------
    def thread_index_line(self, name: str, ctype: str, builtin: str) -> str:
        return self.let_line(name, ctype, f"{ctype}({builtin})")

    def alloc_numel(self, buffer: Buffer) -> int:
        """The elements of an allocation in a shader, which must be constant."""
        n = const_numel(buffer)
        if n is None:
            raise CodegenError(f"target {self.target_kind!r} cannot allocate buffer "
                               f"`{buffer.name}` of dynamic shape {buffer.shape} in a shader: "
                               "give it a constant shape, or pass it as an argument")
        return n

    def reserve_shared(self, buffer: Buffer, n: int) -> None:
        """Count ``n`` elements of shared ``buffer`` against the target's limit."""
        used = self._shared_bytes + n * (4 if buffer.dtype.is_bool else buffer.dtype.bytes)
        limit = self.target_attr("max_shared_memory_per_block", 16384)
        if used > limit:
            raise CodegenError(f"target {self.target_kind!r}: shared buffer `{buffer.name}` "
                               f"brings the kernel's shared memory to {used} bytes; the target "
                               f"allows {limit} (max_shared_memory_per_block)")
        self._shared_bytes = used

    def refuse_pointer(self, var: Any) -> None:
        if var.dtype.is_handle:
            raise CodegenError(f"target {self.target_kind!r}: `{var.name}` is a pointer; "
                               f"{self.language} has no pointers (index the buffer instead)")

    def stmt_DeclBuffer(self, stmt: S.DeclBuffer) -> None:
        data = stmt.buffer.data
        pointee = self._handle_types.get(id(data))
        if pointee is not None and pointee != stmt.buffer.dtype.element_of():
            raise CodegenError(f"target {self.target_kind!r}: buffer `{stmt.buffer.name}` views "
                               f"`{data.name}` ({pointee}) as {stmt.buffer.dtype}; "
                               f"{self.language} cannot reinterpret memory, keep one element "
                               "type per buffer")
        super().stmt_DeclBuffer(stmt)

    # -- names ------------------------------------------------------------------------------
    def _sanitize(self, hint: str) -> str:
        name = super()._sanitize(hint)
        if self.reserved_prefix and name.startswith(self.reserved_prefix):
            name = ("v" if name.startswith("_") else "v_") + name
        return name + "_" if name in self.reserved_words else name

    # -- expressions ------------------------------------------------------------------------
    def expr_StringImm(self, e: E.StringImm) -> str:
        raise CodegenError(f"target {self.target_kind!r}: {self.language} has no strings "
                           f"({e.value!r})")

    def expr_Cast(self, e: E.Cast) -> str:
        value = self.print_expr(e.value)
        if e.dtype == e.value.dtype:
            return value
        return f"{self.c_type(e.dtype)}({value})"

    def expr_Min(self, e: E.Min) -> str:
        return f"min({self.print_expr(e.a)}, {self.print_expr(e.b)})"

    def expr_Max(self, e: E.Max) -> str:
        return f"max({self.print_expr(e.a)}, {self.print_expr(e.b)})"

    def expr_FloorDiv(self, e: E.FloorDiv) -> str:
        if e.dtype.is_float:
            return f"floor({self.print_expr(e.a)} / {self.print_expr(e.b)})"
        return super().expr_FloorDiv(e)

    def expr_Call(self, call: E.Call) -> str:
        if call.op.name == "tirx.call_extern" and isinstance(call.args[1], E.StringImm):
            # a builtin of the language: its name and type arguments are strings, which
            # shaders have not
            name = call.args[1].value
            self.use_builtin(name)
            return f"{name}({', '.join(self.print_expr(a) for a in call.args[2:])})"
        return super().expr_Call(call)


def generate_shaders(codegen_type: type[ShaderCodegen], mod: IRModule | PrimFunc,
                     target: Any = None, *, what: str = "generate_shaders"
                     ) -> tuple[str, list[Any]]:
    """(the shader of every kernel of ``mod``, joined; each kernel's layout)."""
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_expr(mod)
    kernels = {n: f for n, f in mod.functions.items() if f.attrs.get("tirx.is_kernel")}
    if not kernels:
        raise CodegenError(f"{what}: the module has no kernel (tirx.is_kernel); lower it with "
                           "the target's pipeline first (tvm.compile does)")
    shaders, layouts = [], []
    for name, func in kernels.items():
        cg = codegen_type(target)
        cg.add_function(func, name)
        shaders.append(cg.finish())
        assert cg.layout is not None
        layouts.append(cg.layout)
    return "\n".join(shaders), layouts


def split_kernels(source: str) -> dict[str, str]:
    """The shader of each kernel in a joined source (:func:`generate_shaders`), by name."""
    out: dict[str, str] = {}
    for chunk in source.split(KERNEL_MARKER)[1:]:
        name, _, _ = chunk.partition("\n")
        out[name.strip()] = KERNEL_MARKER + chunk
    return out
