"""The IR: data types, expressions, statements, buffers and layouts, functions and modules, the
op registry, structural equality and hashing, visitors and the verifier."""

from __future__ import annotations

from .buffer import Buffer, BufferRegion, Range, decl_buffer
from .dtype import DataType
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    SizeVar,
    StringImm,
    Sub,
    Var,
    const,
    convert,
)
from .function import IRModule, PrimFunc
from .layout import AXES, Axis, ComposeLayout, Iter, S, SwizzleLayout, TileLayout
from .node import Node
from .op import OP_REGISTRY, CallEffect, Op, OpCategory
from .span import Span
from .stmt import (
    EXEC_SCOPES,
    SCOPE_ID_KINDS,
    AllocBuffer,
    AssertStmt,
    AttrStmt,
    Bind,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SBlock,
    SBlockRealize,
    ScopeIdDef,
    SeqStmt,
    Stmt,
    TilePrimitiveCall,
    While,
    seq,
)
from .structural import assert_structural_equal, structural_equal, structural_hash
from .type import PointerType, PrimType, TensorMapType, Type
from .verify import verify, verify_errors
from .visitor import Mutator, Visitor, post_order_visit, substitute

#: the seed's map container: a dict here (an attribute's node, e.g. T.hint's)
Map = dict

__all__ = [
    "AXES", "EQ", "EXEC_SCOPES", "GE", "GT", "LE", "LT", "NE", "OP_REGISTRY", "SCOPE_ID_KINDS",
    "Add", "AllocBuffer", "And", "AssertStmt", "AttrStmt", "Axis", "Bind", "BinaryOp", "Broadcast",
    "Buffer", "BufferLoad", "BufferRegion", "BufferStore", "Call", "CallEffect", "Cast", "CmpOp",
    "Map",
    "ComposeLayout", "SwizzleLayout",
    "DataType", "DeclBuffer", "Div", "Evaluate", "FloatImm", "FloorDiv", "FloorMod", "For",
    "ForKind", "IRModule", "IfThenElse", "IntImm", "Iter", "Let", "LetStmt", "Max", "Min", "Mod",
    "Mul", "Mutator", "Node", "Not", "Op", "OpCategory", "Or", "PointerType", "PrimExpr",
    "PrimFunc", "PrimType", "Ramp", "TensorMapType", "Type",
    "Range", "S", "SBlock", "SBlockRealize", "ScopeIdDef", "Select", "SeqStmt", "SizeVar", "Span", "Stmt", "StringImm", "Sub",
    "TileLayout", "TilePrimitiveCall", "Var", "Visitor", "While", "assert_structural_equal", "const",
    "convert", "decl_buffer", "post_order_visit", "seq", "structural_equal", "structural_hash",
    "substitute", "verify", "verify_errors",
]
