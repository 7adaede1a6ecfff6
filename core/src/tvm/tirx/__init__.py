"""TIRx: the tensor-level IR's public facade (nodes, builtin ops, pipelines, operators).

Backend packages appear here once loaded: ``tvm.tirx.cuda`` is ``tvm_backend_cuda``.
"""

from __future__ import annotations

import importlib
from typing import Any

from .._hints import install_hint_for_backend
from ..ir import (
    AllocBuffer,
    AssertStmt,
    AttrStmt,
    Bind,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    Cast,
    DataType,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    LetStmt,
    Op,
    PrimExpr,
    PrimFunc,
    Range,
    SBlock,
    SBlockRealize,
    ScopeIdDef,
    SeqStmt,
    SizeVar,
    Stmt,
    StringImm,
    TileLayout,
    TilePrimitiveCall,
    Var,
    While,
    const,
    decl_buffer,
)
from ..ir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    CommReducer,
    Div,
    FloorDiv,
    FloorMod,
    IterVar,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    ProducerLoad,
    Ramp,
    Reduce,
    Select,
    Shuffle,
    Sub,
)
from . import op
from .compilation_pipeline import get_tir_pipeline, register_tir_pipeline
from .op import *  # noqa: F403 - the builtin math builders are part of this facade

__all__ = [
    "AllocBuffer", "AssertStmt", "AttrStmt", "Bind", "Buffer", "BufferLoad", "BufferRegion", "BufferStore",
    "Call", "Cast", "DataType", "DeclBuffer", "Evaluate", "FloatImm", "For", "ForKind", "IRModule",
    "IfThenElse", "IntImm", "LetStmt", "Op", "PrimExpr", "PrimFunc", "Range", "SBlock", "SBlockRealize", "ScopeIdDef",
    "SeqStmt", "SizeVar", "Stmt", "StringImm", "TileLayout", "TilePrimitiveCall", "Var", "While", "const", "decl_buffer",
    "op",
    "register_tir_pipeline", "get_tir_pipeline",
    # the expression classes, as the seed's tvm.tirx has them
    "EQ", "GE", "GT", "LE", "LT", "NE", "Add", "And", "Broadcast", "CommReducer", "Div",
    "FloorDiv", "FloorMod", "IterVar", "Let", "Max", "Min", "Mod", "Mul", "Not", "Or",
    "ProducerLoad", "Ramp", "Reduce", "Select", "Shuffle", "Sub",
] + list(op.__all__)

_LAZY = {"operator", "transform", "script", "pipeline", "layout", "exec_scope", "exec_context",
         "stmt_functor", "expr_functor", "stmt", "expr", "function", "buffer", "analysis", "bench"}
# module paths a backend may declare here (the cuda backend: tvm.tirx.lang.<module>)
_DECLARED = {"lang"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _DECLARED:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:  # the backend is not loaded: say which and how
            raise AttributeError(f"module 'tvm.tirx' has no attribute {name!r}: {err}") from None
    raise AttributeError(_missing_hint(name))


def _missing_hint(name: str) -> str:
    msg = f"module 'tvm.tirx' has no attribute {name!r}"
    hint = install_hint_for_backend(name)
    return f"{msg}; {hint}" if hint else msg
