"""The example backend's device intrinsics: ``T.example.fma(a, b, c)`` computes ``a * b + c``.

Each intrinsic is one declaration of ``INTRINSICS`` (core's :class:`tvm.ir.intrin.IntrinTable`
for this backend's target kind). From it come the op ``tirx.example.fma`` (a device intrinsic of
namespace ``example``), its builder here (``op.fma``), its script member ``T.example.fma``
(``script.py`` makes the namespace from the table), its printed form, and its codegen rule for
kind ``example``. To add an intrinsic, add a declaration: nothing else changes.
"""

from __future__ import annotations

from tvm.ir.intrin import PURE, IntrinTable

from .tags import KIND

__all__ = ["FMA", "INTRINSICS", "fma", "register_ops"]  # noqa: F822 - fma comes from the table

#: the backend's intrinsics; builders are named as the op (``fma``)
INTRINSICS = IntrinTable(KIND, builder_format="{name}")

# The rule is what the code generator of kind "example" takes (codegen.ExampleCodegen, a C-style
# printer): a C template over the printed arguments, as here; a dict picks by dtype
# ({"float32": "fmaf({0}, {1}, {2})", ...}); a function rule(codegen, call, args) -> str does
# anything else (decorate it: @INTRINSICS.intrin("example.fma", "a, b, c", ...)). A rule that
# needs something of the target says so with requires=[Requirement(...)] (tvm.ir.intrin).
INTRINSICS.declare("example.fma", "a, b, c", rule="(({0}) * ({1}) + ({2}))", dtype="arg0",
                   effect=PURE, doc="``a * b + c`` in one intrinsic.")

FMA = INTRINSICS.spec("example.fma").name


def register_ops() -> None:
    """Register the intrinsics (called from the tvm_register_ops hook, once per load)."""
    INTRINSICS.register_ops()


# the builders (``fma``), made from the declarations, are this module's attributes too
__getattr__, __dir__ = INTRINSICS.module_hooks(globals())
