"""The backend SDK: everything a backend (``tvm-backend-*``, ``plugins/*``) may use of tvm-core.

A backend imports the SDK and the public language of tvm (``tvm``, ``tvm.ir`` and its public
submodules, ``tvm.error``, ``tvm.target``, ``tvm.script``, ``tvm.transform``, ``tvm.tirx.op``),
nothing else: ``from tvm.backend.sdk import Builder, Options, PlanExecutable, run_tool``.
``core/tests/plugin/test_backend_imports_sdk.py`` enforces that over every backend's sources.
The page "The SDK" of ``docs/guide/writing-a-backend.md`` describes each group.

The names load lazily (on first use) so that a backend's plugin module can import the SDK
without ``import tvm`` paying for the codegen, the host compiler or the demo kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._registry import record_undo
    from ..arith import Analyzer
    from ..backend._loader import load_or_register
    from ..backend.contract import Artifact, Binary, Builder, Options, option, register_builder
    from ..backend.signatures import exported_signatures  # issue 25, round 8
    from ..codegen.bounds import BOUNDS_MESSAGE, bounds_check_enabled
    from ..codegen.c_rules import storage_sync_rule as storage_sync_rule  # issue 25, round 8
    from ..codegen.c_style import (
        CodegenCStyle,
        CudaStyleCodegen,
        FunctionInfo,
        OpTemplate,
        ParamInfo,
        const_dims,
    )
    from ..codegen.signature import function_signature, launch_plans, signature_from_func
    from ..demo import KERNELS, DemoKernel, make_case, rand_f32, softmax_ref, zeros_f32
    from ..demo import matmul_demo as matmul_demo  # issue 25, round 7 (core duplicates)
    from ..demo import row_softmax_kernel as row_softmax_kernel
    from ..demo import softmax_demo as softmax_demo  # issue 25, round 7 (core duplicates)
    from ..host.codegen import HostCodegen
    from ..host.compiler import Toolchain, get_toolchain
    from ..host.runtime import HostFunction, load_library
    from ..ir.buffer import const_numel
    from ..plugin import BackendSpec, DemoCase, DemoResult
    from ..plugin._spec import lazy_package
    from ..runtime import emu
    from ..runtime.arguments import ArgumentChecker, Signature, evaluate_tree
    from ..runtime.cache import cache_dir, cache_enabled, cache_key, compile_cache
    from ..runtime.executable import Executable
    from ..runtime.launch_plan import ARRAY, DERIVED, SCALAR, BoundLaunch, LaunchPlan, LaunchStep
    from ..runtime.plan_executable import PlanExecutable, PlanFunction
    from ..runtime.tool import DEFAULT_TIMEOUT_S, PROBE_TIMEOUT_S, compile_in_folder, run_tool
    from ..runtime.workdir import work_folder
    from ..shader.codegen import (
        KERNEL_MARKER,
        ShaderCodegen,
        generate_shaders,
        rule_unsupported,
        shader_templates,
        split_kernels,
    )
    from ..shader.demo import demo_cases as shader_demo_cases
    from ..shader.device import driver_noise_filtered
    from ..shader.device import probe as probe_device
    from ..shader.executable import ShaderExecutable, ShaderFunction, plan_artifact
    from ..tirx.compilation_pipeline import get_tir_pipeline
    from ..tirx.operator.tile_primitive import (
        SERIAL,
        DispatchContext,
        dispatch,
        fail,
        predicate,
        register_dispatch,
        register_scope_barrier,
    )
    from ..tirx.operator.tile_primitive.common import (
        MapOpType,
        Operand,
        ReduceOpType,
        RowReduction,
        bound_args,
        cast_to,
        compute_dtype,
        expr_equal,
        fold_add,
        fold_mul,
        fold_product,
        is_one,
        normalize_axes,
        region_indices,
        region_of,
        row_reduction,
        static_bool,
        static_float,
    )
    from ..tirx.operator.tile_primitive.common import (  # issue 25, round 8 (dispatch)
        gemm_args as gemm_args,
    )
    from ..tirx.operator.tile_primitive.common import (  # issue 25, round 7 (core duplicates)
        unflatten as unflatten,
    )
    from ..tirx.operator.tile_primitive.fallback import fallback_impl
    from ..tirx.operator.tile_primitive.fallback.compose import lower_compose_op
    from ..tirx.operator.tile_primitive.fallback.elementwise import (
        FLOAT_ONLY,
        apply_binary,
        apply_unary,
    )
    from ..tirx.operator.tile_primitive.ops import BINARY_OPS, TILE_OPS, UNARY_OPS
    from ..tirx.operator.tile_primitive.ops import (  # issue 25, round 8 (dispatch)
        REDUCE_OPS as REDUCE_OPS,
    )
    from ..tirx.transform import StmtSimplify, TilePrimitiveDispatch, dyn_smem_layout
    from ..tirx.transform._util import target_of
    from ..transform import Pipeline

__all__ = [
    "ARRAY",
    "Analyzer",
    "ArgumentChecker",
    "Artifact",
    "BINARY_OPS",
    "BOUNDS_MESSAGE",
    "BackendSpec",
    "Binary",
    "BoundLaunch",
    "Builder",
    "CodegenCStyle",
    "CudaStyleCodegen",
    "DEFAULT_TIMEOUT_S",
    "DERIVED",
    "DemoCase",
    "DemoKernel",
    "DemoResult",
    "DispatchContext",
    "Executable",
    "FLOAT_ONLY",
    "FunctionInfo",
    "HostCodegen",
    "HostFunction",
    "KERNELS",
    "KERNEL_MARKER",
    "LaunchPlan",
    "LaunchStep",
    "MapOpType",
    "OpTemplate",
    "Operand",
    "Options",
    "PROBE_TIMEOUT_S",
    "Pipeline",
    "ParamInfo",
    "PlanExecutable",
    "PlanFunction",
    "ReduceOpType",
    "RowReduction",
    "SCALAR",
    "SERIAL",
    "ShaderCodegen",
    "ShaderExecutable",
    "ShaderFunction",
    "Signature",
    "StmtSimplify",
    "TILE_OPS",
    "TilePrimitiveDispatch",
    "Toolchain",
    "UNARY_OPS",
    "apply_binary",
    "apply_unary",
    "bound_args",
    "bounds_check_enabled",
    "cache_dir",
    "cache_enabled",
    "cache_key",
    "cast_to",
    "compile_cache",
    "compile_in_folder",
    "compute_dtype",
    "const_dims",
    "const_numel",
    "dispatch",
    "driver_noise_filtered",
    "dyn_smem_layout",
    "emu",
    "evaluate_tree",
    "expr_equal",
    "fail",
    "fallback_impl",
    "fold_add",
    "fold_mul",
    "fold_product",
    "function_signature",
    "generate_shaders",
    "get_tir_pipeline",
    "get_toolchain",
    "is_one",
    "launch_plans",
    "lazy_package",
    "load_library",
    "load_or_register",
    "lower_compose_op",
    "make_case",
    "normalize_axes",
    "option",
    "plan_artifact",
    "predicate",
    "probe_device",
    "rand_f32",
    "record_undo",
    "region_indices",
    "region_of",
    "register_builder",
    "register_dispatch",
    "register_scope_barrier",
    "row_reduction",
    "rule_unsupported",
    "run_tool",
    "shader_demo_cases",
    "shader_templates",
    "signature_from_func",
    "row_softmax_kernel",
    "softmax_ref",
    "split_kernels",
    "static_bool",
    "static_float",
    "target_of",
    "work_folder",
    "zeros_f32",
    # issue 25, round 8 (dispatch)
    "REDUCE_OPS",
    "gemm_args",
    # issue 25, round 7 (core duplicates)
    "matmul_demo",
    "softmax_demo",
    "unflatten",
    # issue 25, round 8 (the plugin backends)
    "exported_signatures",
    "storage_sync_rule",
]

#: public name -> (the module that defines it, its name there)
_EXPORTS: dict[str, tuple[str, str]] = {
    # the backend contract: builder, options, artifact (tvm.backend.contract)
    "Artifact": ("..backend.contract", "Artifact"),
    "register_builder": ("..backend.contract", "register_builder"),
    "Binary": ("..backend.contract", "Binary"),
    "Builder": ("..backend.contract", "Builder"),
    "Options": ("..backend.contract", "Options"),
    "option": ("..backend.contract", "option"),
    # registration: the spec a plugin returns and its load hook
    "BackendSpec": ("..plugin", "BackendSpec"),
    "DemoCase": ("..plugin", "DemoCase"),
    "DemoResult": ("..plugin", "DemoResult"),
    "load_or_register": ("..backend._loader", "load_or_register"),
    "lazy_package": ("..plugin._spec", "lazy_package"),
    "record_undo": (".._registry", "record_undo"),
    # executables and the launch plan
    "Executable": ("..runtime.executable", "Executable"),
    "PlanExecutable": ("..runtime.plan_executable", "PlanExecutable"),
    "PlanFunction": ("..runtime.plan_executable", "PlanFunction"),
    "ARRAY": ("..runtime.launch_plan", "ARRAY"),
    "BoundLaunch": ("..runtime.launch_plan", "BoundLaunch"),
    "DERIVED": ("..runtime.launch_plan", "DERIVED"),
    "LaunchPlan": ("..runtime.launch_plan", "LaunchPlan"),
    "LaunchStep": ("..runtime.launch_plan", "LaunchStep"),
    "SCALAR": ("..runtime.launch_plan", "SCALAR"),
    "ArgumentChecker": ("..runtime.arguments", "ArgumentChecker"),
    "Signature": ("..runtime.arguments", "Signature"),
    "evaluate_tree": ("..runtime.arguments", "evaluate_tree"),
    # signature helpers
    "launch_plans": ("..codegen.signature", "launch_plans"),
    "signature_from_func": ("..codegen.signature", "signature_from_func"),
    "StmtSimplify": ("..tirx.transform", "StmtSimplify"),
    "TilePrimitiveDispatch": ("..tirx.transform", "TilePrimitiveDispatch"),
    "dyn_smem_layout": ("..tirx.transform", "dyn_smem_layout"),
    "function_signature": ("..codegen.signature", "function_signature"),
    "target_of": ("..tirx.transform._util", "target_of"),
    "get_tir_pipeline": ("..tirx.compilation_pipeline", "get_tir_pipeline"),
    "Pipeline": ("..transform", "Pipeline"),
    # external tools, work folders, the compile cache
    "DEFAULT_TIMEOUT_S": ("..runtime.tool", "DEFAULT_TIMEOUT_S"),
    "PROBE_TIMEOUT_S": ("..runtime.tool", "PROBE_TIMEOUT_S"),
    "run_tool": ("..runtime.tool", "run_tool"),
    "compile_in_folder": ("..runtime.tool", "compile_in_folder"),
    "work_folder": ("..runtime.workdir", "work_folder"),
    # the CPU emulators' fiber runtime (a module: emu.HEADER_DIR, emu.run_isolated, ...)
    "emu": ("..runtime", "emu"),
    "cache_dir": ("..runtime.cache", "cache_dir"),
    "cache_enabled": ("..runtime.cache", "cache_enabled"),
    "cache_key": ("..runtime.cache", "cache_key"),
    "compile_cache": ("..runtime.cache", "compile_cache"),
    # C-style codegen bases
    "CodegenCStyle": ("..codegen.c_style", "CodegenCStyle"),
    "CudaStyleCodegen": ("..codegen.c_style", "CudaStyleCodegen"),
    "FunctionInfo": ("..codegen.c_style", "FunctionInfo"),
    "OpTemplate": ("..codegen.c_style", "OpTemplate"),
    "ParamInfo": ("..codegen.c_style", "ParamInfo"),
    "const_dims": ("..codegen.c_style", "const_dims"),
    "BOUNDS_MESSAGE": ("..codegen.bounds", "BOUNDS_MESSAGE"),
    "bounds_check_enabled": ("..codegen.bounds", "bounds_check_enabled"),
    "HostCodegen": ("..host.codegen", "HostCodegen"),
    "Toolchain": ("..host.compiler", "Toolchain"),
    "get_toolchain": ("..host.compiler", "get_toolchain"),
    "HostFunction": ("..host.runtime", "HostFunction"),
    "load_library": ("..host.runtime", "load_library"),
    "KERNEL_MARKER": ("..shader.codegen", "KERNEL_MARKER"),
    "ShaderCodegen": ("..shader.codegen", "ShaderCodegen"),
    "generate_shaders": ("..shader.codegen", "generate_shaders"),
    "rule_unsupported": ("..shader.codegen", "rule_unsupported"),
    "shader_templates": ("..shader.codegen", "shader_templates"),
    "split_kernels": ("..shader.codegen", "split_kernels"),
    "ShaderExecutable": ("..shader.executable", "ShaderExecutable"),
    "ShaderFunction": ("..shader.executable", "ShaderFunction"),
    "plan_artifact": ("..shader.executable", "plan_artifact"),
    "driver_noise_filtered": ("..shader.device", "driver_noise_filtered"),
    # tile-primitive dispatch: registration, predicates, helpers
    "Analyzer": ("..arith", "Analyzer"),  # proofs about index expressions (alignment, bounds)
    "DispatchContext": ("..tirx.operator.tile_primitive", "DispatchContext"),
    "SERIAL": ("..tirx.operator.tile_primitive", "SERIAL"),
    "dispatch": ("..tirx.operator.tile_primitive", "dispatch"),
    "fail": ("..tirx.operator.tile_primitive", "fail"),
    "predicate": ("..tirx.operator.tile_primitive", "predicate"),
    "register_dispatch": ("..tirx.operator.tile_primitive", "register_dispatch"),
    "register_scope_barrier": ("..tirx.operator.tile_primitive", "register_scope_barrier"),
    "MapOpType": ("..tirx.operator.tile_primitive.common", "MapOpType"),
    "Operand": ("..tirx.operator.tile_primitive.common", "Operand"),
    "ReduceOpType": ("..tirx.operator.tile_primitive.common", "ReduceOpType"),
    "RowReduction": ("..tirx.operator.tile_primitive.common", "RowReduction"),
    "bound_args": ("..tirx.operator.tile_primitive.common", "bound_args"),
    "cast_to": ("..tirx.operator.tile_primitive.common", "cast_to"),
    "compute_dtype": ("..tirx.operator.tile_primitive.common", "compute_dtype"),
    "expr_equal": ("..tirx.operator.tile_primitive.common", "expr_equal"),
    "fold_add": ("..tirx.operator.tile_primitive.common", "fold_add"),
    "fold_mul": ("..tirx.operator.tile_primitive.common", "fold_mul"),
    "fold_product": ("..tirx.operator.tile_primitive.common", "fold_product"),
    "is_one": ("..tirx.operator.tile_primitive.common", "is_one"),
    "normalize_axes": ("..tirx.operator.tile_primitive.common", "normalize_axes"),
    "region_indices": ("..tirx.operator.tile_primitive.common", "region_indices"),
    "region_of": ("..tirx.operator.tile_primitive.common", "region_of"),
    "row_reduction": ("..tirx.operator.tile_primitive.common", "row_reduction"),
    "static_bool": ("..tirx.operator.tile_primitive.common", "static_bool"),
    "static_float": ("..tirx.operator.tile_primitive.common", "static_float"),
    "fallback_impl": ("..tirx.operator.tile_primitive.fallback", "fallback_impl"),
    "lower_compose_op": ("..tirx.operator.tile_primitive.fallback.compose", "lower_compose_op"),
    "FLOAT_ONLY": ("..tirx.operator.tile_primitive.fallback.elementwise", "FLOAT_ONLY"),
    "apply_binary": ("..tirx.operator.tile_primitive.fallback.elementwise", "apply_binary"),
    "apply_unary": ("..tirx.operator.tile_primitive.fallback.elementwise", "apply_unary"),
    "BINARY_OPS": ("..tirx.operator.tile_primitive.ops", "BINARY_OPS"),
    "TILE_OPS": ("..tirx.operator.tile_primitive.ops", "TILE_OPS"),
    "UNARY_OPS": ("..tirx.operator.tile_primitive.ops", "UNARY_OPS"),
    # demo kernels
    "DemoKernel": ("..demo", "DemoKernel"),
    "KERNELS": ("..demo", "KERNELS"),
    "make_case": ("..demo", "make_case"),
    "rand_f32": ("..demo", "rand_f32"),
    "softmax_ref": ("..demo", "softmax_ref"),
    "row_softmax_kernel": ("..demo", "row_softmax_kernel"),
    "zeros_f32": ("..demo", "zeros_f32"),
    "const_numel": ("..ir.buffer", "const_numel"),
    "probe_device": ("..shader.device", "probe"),
    "shader_demo_cases": ("..shader.demo", "demo_cases"),
    # issue 25, round 8 (dispatch)
    "REDUCE_OPS": ("..tirx.operator.tile_primitive.ops", "REDUCE_OPS"),
    "gemm_args": ("..tirx.operator.tile_primitive.common", "gemm_args"),
    # issue 25, round 7 (core duplicates)
    "matmul_demo": ("..demo", "matmul_demo"),
    "softmax_demo": ("..demo", "softmax_demo"),
    "unflatten": ("..tirx.operator.tile_primitive.common", "unflatten"),
    # issue 25, round 8 (the plugin backends)
    "exported_signatures": ("..backend.signatures", "exported_signatures"),
    "storage_sync_rule": ("..codegen.c_rules", "storage_sync_rule"),
}


# --- shared backend code (issue 25): what two or more backends used to copy ---------------
if TYPE_CHECKING:
    from ..backend.binding_layout import BindingLayout
    from ..backend.kernel_codegen import DYN_SMEM, KernelCodegen
    from ..backend.layout_spec import layout_spec
    from ..backend.target_checks import check_thread_counts

__all__ += ["BindingLayout", "DYN_SMEM", "KernelCodegen", "check_thread_counts", "layout_spec"]
_EXPORTS.update({
    "BindingLayout": ("..backend.binding_layout", "BindingLayout"),
    "DYN_SMEM": ("..backend.kernel_codegen", "DYN_SMEM"),
    "KernelCodegen": ("..backend.kernel_codegen", "KernelCodegen"),
    "layout_spec": ("..backend.layout_spec", "layout_spec"),
    "check_thread_counts": ("..backend.target_checks", "check_thread_counts"),
})
# --- end of the shared backend code ---------------------------------------------------------


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'tvm.backend.sdk' has no attribute {name!r}; the SDK's "
                             "names are listed in tvm.backend.sdk.__all__") from None
    found = importlib.import_module(module, __package__)
    try:
        value = getattr(found, attr)
    except AttributeError:  # a submodule not imported yet (emu)
        value = importlib.import_module(f"{module}.{attr}", __package__)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
