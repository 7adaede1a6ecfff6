"""The CUDA backend's script namespaces: ``T.cuda``, ``T.ptx`` (with its nested groups) and
``T.nvshmem``.

Every member is a builder carrying ``__tir_op_name__``, so registering the namespace gives each
op its attribute path as printer name. A member accepts the builder's own signature
(``T.ptx.tcgen05.ld(addr, r0, r1, shape="32x32b", num=2)``) and also the op's raw operand list,
which is what the printer writes (``T.ptx.tcgen05.ld(addr, 0, 0, "32x32b", 2, T.bool(False),
r0, r1)``): with no keyword arguments, arguments the builder cannot bind (a ``TypeError``) are
taken as raw operands when their count fits the op. A ``ValueError`` (a bad value) propagates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tvm.ir import Buffer, Op

from . import op as _op

__all__ = ["CUDANamespace", "NVSHMEMNamespace", "PTXNamespace"]


def _raw_call(op_name: str, args: tuple[Any, ...]) -> Any:
    op = Op.get(op_name)
    lo, hi = op.get_attr("cuda.nargs", (0, None))
    if len(args) < lo or (hi is not None and len(args) > hi):
        return None
    return op(*args)


def _e(builder: Callable[..., Any], op_name: str, *, dtype_forward: bool = False) -> Any:
    """A namespace member: ``builder``, falling back to the raw operand form of ``op_name``.

    ``dtype_forward``: a ``dtype=`` keyword becomes the first positional argument (the seed's
    ``_dtype_forward``); otherwise ``dtype=`` is dropped (its ``_op_wrapper``).
    """
    full = f"tirx.{op_name}"

    @functools.wraps(builder)
    def entry(*args: Any, **kwargs: Any) -> Any:
        if "dtype" in kwargs:
            dtype = kwargs.pop("dtype")
            if dtype_forward:
                args = (dtype, *args)
        if kwargs:
            return builder(*args, **kwargs)
        try:
            return builder(*args)
        except TypeError:  # the arguments do not bind: the raw operand list the printer wrote
            raw = _raw_call(full, args)
            if raw is None:
                raise
            return raw

    entry.__tir_op_name__ = full  # type: ignore[attr-defined]
    return entry


class _CallableNamespace:
    """A sub-namespace that is itself an op: ``T.ptx.mma(...)`` beside ``T.ptx.mma.sp(...)``."""

    __tir_op_name__: str = ""
    _builder: Callable[..., Any]
    _dtype_forward = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _e(
            type(self)._builder,
            self.__tir_op_name__.removeprefix("tirx."),
            dtype_forward=self._dtype_forward,
        )(*args, **kwargs)


# -- T.ptx ----------------------------------------------------------------------------------------
class MmaNamespace(_CallableNamespace):
    """``mma.sync``: ``T.ptx.mma(...)``, ``.sp`` (sparse), ``.legacy`` (pointer + offset)."""

    __tir_op_name__ = "tirx.ptx.mma"
    _builder = staticmethod(_op.ptx_mma)

    def __init__(self) -> None:
        self.sp = _e(_op.ptx_mma_sp, "ptx.mma_sp", dtype_forward=True)
        self.legacy = _e(_op.ptx_mma_legacy, "ptx.mma_legacy", dtype_forward=True)


class CpAsyncBulkTensorNamespace:
    """TMA copies: g2c (+ tile_gather4, prefetch) and s2g (+ reduce)."""

    def __init__(self) -> None:
        self.g2c = _e(
            _op.ptx_cp_async_bulk_tensor_global_to_cluster,
            "ptx.cp_async_bulk_tensor_global_to_cluster",
        )
        self.g2c_tile_gather4 = _e(
            _op.ptx_cp_async_bulk_tensor_tile_gather4_global_to_cluster,
            "ptx.cp_async_bulk_tensor_tile_gather4_global_to_cluster",
        )
        self.g2c_prefetch = _e(
            _op.ptx_cp_async_bulk_tensor_global_to_cluster_prefetch,
            "ptx.cp_async_bulk_tensor_global_to_cluster_prefetch",
        )
        self.s2g = _e(
            _op.ptx_cp_async_bulk_tensor_shared_to_global,
            "ptx.cp_async_bulk_tensor_shared_to_global",
        )
        self.s2g_reduce = _e(
            _op.ptx_cp_async_bulk_tensor_shared_to_global_reduce,
            "ptx.cp_async_bulk_tensor_shared_to_global_reduce",
        )

    # The seed's spellings for a barrier given as a 32-bit shared address: the same op (the
    # codegen takes a uint32 barrier operand as an address already).
    @staticmethod
    def g2c_bar_addr(*args: Any, **kwargs: Any) -> Any:
        return _op.ptx_cp_async_bulk_tensor_global_to_cluster(*args, **kwargs)

    @staticmethod
    def g2c_tile_gather4_bar_addr(*args: Any, **kwargs: Any) -> Any:
        return _op.ptx_cp_async_bulk_tensor_tile_gather4_global_to_cluster(*args, **kwargs)


class CpAsyncBulkNamespace(_CallableNamespace):
    """``cp.async.bulk``: callable (global -> shared), commit/wait groups, s2c, tensor."""

    __tir_op_name__ = "tirx.ptx.cp_async_bulk"
    _builder = staticmethod(_op.ptx_cp_async_bulk)
    _dtype_forward = True

    def __init__(self) -> None:
        self.commit_group = _e(_op.ptx_cp_async_bulk_commit_group, "ptx.cp_async_bulk_commit_group")
        self.wait_group = _e(_op.ptx_cp_async_bulk_wait_group, "ptx.cp_async_bulk_wait_group")
        self.s2c = _e(
            _op.ptx_cp_async_bulk_shared_to_cluster, "ptx.cp_async_bulk_shared_to_cluster"
        )
        self.tensor = CpAsyncBulkTensorNamespace()


class CpAsyncMbarrierNamespace:
    def __init__(self) -> None:
        self.arrive = _e(_op.ptx_cp_async_mbarrier_arrive, "ptx.cp_async_mbarrier_arrive")


class CpAsyncNamespace(_CallableNamespace):
    """``cp.async``: callable, commit_group, wait_group, legacy, bulk, mbarrier.arrive."""

    __tir_op_name__ = "tirx.ptx.cp_async"
    _builder = staticmethod(_op.ptx_cp_async)

    def __init__(self) -> None:
        self.commit_group = _e(_op.ptx_cp_async_commit_group, "ptx.cp_async_commit_group")
        self.wait_group = _e(_op.ptx_cp_async_wait_group, "ptx.cp_async_wait_group")
        self.legacy = _e(_op.ptx_cp_async_legacy, "ptx.cp_async_legacy", dtype_forward=True)
        self.bulk = CpAsyncBulkNamespace()
        self.mbarrier = CpAsyncMbarrierNamespace()


class WgmmaMmaAsyncNamespace:
    def __init__(self) -> None:
        self.ss = _e(_op.ptx_wgmma_mma_async_ss, "ptx.wgmma_mma_async_ss")
        self.rs = _e(_op.ptx_wgmma_mma_async_rs, "ptx.wgmma_mma_async_rs")


class WgmmaNamespace:
    def __init__(self) -> None:
        self.fence = _e(_op.ptx_wgmma_fence, "ptx.wgmma_fence")
        self.commit_group = _e(_op.ptx_wgmma_commit_group, "ptx.wgmma_commit_group")
        self.wait_group = _e(_op.ptx_wgmma_wait_group, "ptx.wgmma_wait_group")
        self.noop_barrier = _e(_op.ptx_wgmma_noop_barrier, "ptx.wgmma_noop_barrier")
        self.encode_matrix_descriptor = _e(
            _op.ptx_wgmma_encode_matrix_descriptor, "ptx.wgmma_encode_matrix_descriptor"
        )
        self.mma_async = WgmmaMmaAsyncNamespace()


class MbarrierArriveNamespace(_CallableNamespace):
    __tir_op_name__ = "tirx.ptx.mbarrier_arrive"
    _builder = staticmethod(_op.ptx_mbarrier_arrive)

    def __init__(self) -> None:
        self.expect_tx = _e(_op.ptx_mbarrier_arrive_expect_tx, "ptx.mbarrier_arrive_expect_tx")


class MbarrierNamespace:
    def __init__(self) -> None:
        self.init = _e(_op.ptx_mbarrier_init, "ptx.mbarrier_init")
        self.try_wait = _e(_op.ptx_mbarrier_try_wait, "ptx.mbarrier_try_wait")
        self.try_wait_once = _e(_op.ptx_mbarrier_try_wait_once, "ptx.mbarrier_try_wait_once")
        self.arrive = MbarrierArriveNamespace()


class Tcgen05WaitNamespace:
    def __init__(self) -> None:
        self.ld = _e(_op.ptx_tcgen05_wait_ld, "ptx.tcgen05_wait_ld")
        self.st = _e(_op.ptx_tcgen05_wait_st, "ptx.tcgen05_wait_st")


class Tcgen05FenceNamespace:
    def __init__(self) -> None:
        self.before_thread_sync = _e(
            _op.ptx_tcgen05_fence_before_thread_sync, "ptx.tcgen05_fence_before_thread_sync"
        )
        self.after_thread_sync = _e(
            _op.ptx_tcgen05_fence_after_thread_sync, "ptx.tcgen05_fence_after_thread_sync"
        )


class Tcgen05MmaSpNamespace(_CallableNamespace):
    __tir_op_name__ = "tirx.ptx.tcgen05_mma_sp"
    _builder = staticmethod(_op.ptx_tcgen05_mma_sp)

    def __init__(self) -> None:
        self.block_scale = _e(_op.ptx_tcgen05_mma_sp_block_scale, "ptx.tcgen05_mma_sp_block_scale")


class Tcgen05MmaNamespace(_CallableNamespace):
    __tir_op_name__ = "tirx.ptx.tcgen05_mma"
    _builder = staticmethod(_op.ptx_tcgen05_mma)

    def __init__(self) -> None:
        self.block_scale = _e(_op.ptx_tcgen05_mma_block_scale, "ptx.tcgen05_mma_block_scale")
        self.sp = Tcgen05MmaSpNamespace()


class Tcgen05Namespace:
    def __init__(self) -> None:
        for name in (
            "alloc",
            "dealloc",
            "relinquish_alloc_permit",
            "encode_matrix_descriptor",
            "encode_instr_descriptor",
            "encode_instr_descriptor_block_scaled",
            "ld",
            "st",
            "cp",
            "shift",
            "commit",
        ):
            setattr(self, name, _e(getattr(_op, f"ptx_tcgen05_{name}"), f"ptx.tcgen05_{name}"))
        self.wait = Tcgen05WaitNamespace()
        self.mma = Tcgen05MmaNamespace()
        self.fence = Tcgen05FenceNamespace()


class BarNamespace:
    def __init__(self) -> None:
        self.arrive = _e(_op.ptx_bar_arrive, "ptx.bar_arrive")
        self.sync = _e(_op.ptx_bar_sync, "ptx.bar_sync")


class BarrierClusterNamespace:
    def __init__(self) -> None:
        self.arrive = _e(_op.ptx_barrier_cluster_arrive, "ptx.barrier_cluster_arrive")
        self.wait = _e(_op.ptx_barrier_cluster_wait, "ptx.barrier_cluster_wait")


class BarrierNamespace:
    def __init__(self) -> None:
        self.cluster = BarrierClusterNamespace()


class FenceNamespace(_CallableNamespace):
    """``T.ptx.fence(sem, scope)``, ``.proxy_async(space)``, ``.mbarrier_init()``."""

    __tir_op_name__ = "tirx.ptx.fence"
    _builder = staticmethod(_op.ptx_fence)

    def __init__(self) -> None:
        self.proxy_async = _e(_op.ptx_fence_proxy_async, "ptx.fence_proxy_async")
        self.mbarrier_init = _e(_op.ptx_fence_mbarrier_init, "ptx.fence_mbarrier_init")


class GriddepcontrolNamespace:
    def __init__(self) -> None:
        self.wait = _e(_op.ptx_griddepcontrol_wait, "ptx.griddepcontrol_wait")
        self.launch_dependents = _e(
            _op.ptx_griddepcontrol_launch_dependents, "ptx.griddepcontrol_launch_dependents"
        )


def _ptx_ldg32(reg: Any, guard: Any, addr: Any, local_addr: Any) -> Any:
    if isinstance(addr, Buffer):
        addr = addr[0]
    return _op.ptx_ldg32(reg, guard, addr, local_addr)


_PTX_FLAT = (
    "ldmatrix_legacy",
    "stmatrix",
    "setmaxnreg",
    "elect_sync",
    "fetch_register",
    "ld",
    "ld_acquire",
    "ld_volatile",
    "ld_global_acquire",
    "red_scalar",
    "atom_scalar",
    "prefetch_tensormap",
    "mbarrier_test_wait_parity",
    "cp_async_bulk_g2s_cta",
    "cp_async_bulk_g2s_cluster",
    "cp_async_bulk_s2s_cluster",
    "cp_async_bulk_s2g",
    "st",
    "st_bulk",
    "fns_b32",
    "add_rn_f32_bf16",
    "mapa",
    "any_sync",
    "exp2",
    "rcp",
    "reduce3_min_f32",
    "reduce3_max_f32",
    "add_f32",
    "add_f32x2",
    "add_f64",
    "sub_f32",
    "sub_f32x2",
    "sub_f64",
    "mul_f32",
    "mul_f32x2",
    "mul_f64",
    "fma_f32",
    "fma_f32x2",
    "fma_f64",
    "max_f32",
)


class PTXNamespace:
    """``T.ptx``: PTX instructions, flat and in groups."""

    def __init__(self) -> None:
        self.ldg32 = _e(_ptx_ldg32, "ptx.ldg32")
        self.ldmatrix = _e(_op.ptx_ldmatrix, "ptx.ldmatrix", dtype_forward=False)
        for name in _PTX_FLAT:
            setattr(
                self,
                name,
                _e(
                    getattr(_op, f"ptx_{name}"),
                    f"ptx.{name}",
                    dtype_forward=name == "ldmatrix_legacy",
                ),
            )
        # builds a `mapa` call (the seed prints it as T.ptx.mapa); no op of its own
        self.map_shared_rank = _op.ptx_map_shared_rank
        self.mma = MmaNamespace()
        self.cp_async = CpAsyncNamespace()
        self.wgmma = WgmmaNamespace()
        self.mbarrier = MbarrierNamespace()
        self.tcgen05 = Tcgen05Namespace()
        self.bar = BarNamespace()
        self.barrier = BarrierNamespace()
        self.fence = FenceNamespace()
        self.griddepcontrol = GriddepcontrolNamespace()


# -- T.cuda ---------------------------------------------------------------------------------------
_CUDA_OPS = (
    "atomic_add",
    "thread_fence",
    "warpgroup_sync",
    "warp_sync",
    "cta_sync",
    "grid_sync",
    "cluster_sync",
    "thread_rank",
    "trap_when_assert_failed",
    "runtime_instr_desc",
    "half2float",
    "bfloat162float",
    "float22half2",
    "half8tofloat8",
    "float8tohalf8",
    "syncthreads_and",
    "syncthreads_or",
    "syncthreads_count",
    "nano_sleep",
    "atomic_cas",
    "func_call",
    "printf",
    "ldg",
    "get_tmem_addr",
    "cvta_generic_to_shared",
    "smem_addr_from_uint64",
    "uint_as_float",
    "float_as_uint",
    "ballot_sync",
    "ffs_u32",
    "reduce_add_sync_u32",
    "reduce_min_sync_u32",
    "clock64",
    "make_float2",
    "float2_x",
    "float2_y",
    "fmul2_rn",
    "fadd2_rn",
    "float22bfloat162_rn",
    "float22bfloat162_rn_from_float2",
    "bfloat1622float2",
    "hmin2",
    "hmax2",
    "fp8x4_e4m3_from_float4",
    "warp_reduce",
    "cta_reduce",
    "copy_bytes",
)
# convenience builders over another op (warp_sum builds warp_reduce): no op name of their own
_CUDA_SUGAR = (
    "warp_sum",
    "warp_max",
    "warp_min",
    "cta_sum",
    "cta_max",
    "cta_min",
    "copy_128b",
    "copy_64b",
    "copy_32b",
    "copy_16b",
    "copy_8b",
    "sm100_tma_2sm_mbarrier_addr",
)


class CUDANamespace:
    """``T.cuda``: CUDA C++ device functions and the backend's helpers."""

    def __init__(self) -> None:
        for name in _CUDA_OPS:
            setattr(self, name, _e(getattr(_op, f"cuda_{name}"), f"cuda.{name}"))
        for name in _CUDA_SUGAR:
            setattr(self, name, getattr(_op, f"cuda_{name}"))
        for name in ("init", "start", "end", "finalize"):
            setattr(
                self, f"timer_{name}", _e(getattr(_op, f"timer_{name}_cuda"), f"cuda.timer_{name}")
            )
        for name in ("mma_store", "mma_fill", "mma_store_legacy", "mma_fill_legacy"):
            setattr(self, name, _e(getattr(_op, name), f"cuda.{name}", dtype_forward=True))
        # dunder names: set as attributes, so the printer-name walk (which skips `_` names)
        # leaves them to their registered printer names (cuda.__shfl_sync, ...)
        for name in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "activemask"):
            setattr(self, f"__{name}", _shfl(getattr(_op, f"cuda_{name}")))


def _shfl(builder: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(builder)
    def entry(*args: Any) -> Any:
        if len(args) > 1 and isinstance(args[1], Buffer):
            args = (args[0], args[1][0], *args[2:])
        return builder(*args)

    return entry


# -- T.nvshmem ------------------------------------------------------------------------------------
class _NvshmemMem(_CallableNamespace):
    def __init__(self) -> None:
        base = self.__tir_op_name__.removeprefix("tirx.nvshmem.")
        self.warp = _e(getattr(_op, f"nvshmem_{base}_warp"), f"nvshmem.{base}_warp")
        self.block = _e(getattr(_op, f"nvshmem_{base}_block"), f"nvshmem.{base}_block")


class NVSHMEMGetMemNBINamespace(_NvshmemMem):
    __tir_op_name__ = "tirx.nvshmem.getmem_nbi"
    _builder = staticmethod(_op.nvshmem_getmem_nbi)


class NVSHMEMPutMemNBINamespace(_NvshmemMem):
    __tir_op_name__ = "tirx.nvshmem.putmem_nbi"
    _builder = staticmethod(_op.nvshmem_putmem_nbi)


class NVSHMEMPutMemSignalNBINamespace(_NvshmemMem):
    __tir_op_name__ = "tirx.nvshmem.putmem_signal_nbi"
    _builder = staticmethod(_op.nvshmem_putmem_signal_nbi)


class NVSHMEMNamespace:
    """``T.nvshmem``: NVSHMEM device calls."""

    def __init__(self) -> None:
        for name in ("my_pe", "n_pes", "signal_op", "wait_until", "quiet", "fence", "barrier_all"):
            setattr(self, name, _e(getattr(_op, f"nvshmem_{name}"), f"nvshmem.{name}"))
        self.getmem_nbi = NVSHMEMGetMemNBINamespace()
        self.putmem_nbi = NVSHMEMPutMemNBINamespace()
        self.putmem_signal_nbi = NVSHMEMPutMemSignalNBINamespace()
