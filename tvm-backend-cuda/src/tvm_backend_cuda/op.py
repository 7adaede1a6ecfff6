"""Builders of the CUDA, PTX and NVSHMEM intrinsics (the seed's ``tvm.backend.cuda.op`` names).

Each returns a :class:`tvm.ir.Call` of a ``tirx.<ns>.<name>`` op whose operands are exactly what
the printer writes, so ``T.ptx.mapa(r, 2, "", "u64", "uint64")`` is what
``ptx_map_shared_rank(r, 2)`` prints as. The ops exist once :func:`register_ops` ran (the
plugin's ``tvm_register_ops`` hook does it).
"""

from __future__ import annotations

from typing import Any

from tvm.ir import Op, PrimExpr, const
from tvm.ir import expr as E

from .intrinsics import register_ops

__all__ = ["register_ops"]  # extended below with every builder


def _c(name: str, *args: Any) -> E.Call:
    return Op.get(f"tirx.{name}")(*args)


def _choice(name: str, value: Any, options: Any) -> None:
    if isinstance(value, E.IntImm):
        value = int(value.value)
    if isinstance(value, (int, str)) and value not in options:
        raise ValueError(f"invalid {name}={value!r}; expected one of {tuple(options)}")


def _need_str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


_CACHE_POLICY = {
    "evict_normal": 0x1000000000000000,
    "evict_first": 0x12F0000000000000,
    "evict_last": 0x14F0000000000000,
}


def _resolve_cache_policy(cache_hint: Any, cache_policy: Any) -> tuple[PrimExpr, int]:
    _need_str("cache_hint", cache_hint)
    if cache_policy is not None:
        return cache_policy, 1
    if cache_hint:
        if cache_hint not in _CACHE_POLICY:
            raise ValueError(
                f"unknown cache_hint {cache_hint!r}; expected one of "
                f"{sorted(_CACHE_POLICY)} or pass cache_policy="
            )
        return const(_CACHE_POLICY[cache_hint], "uint64"), 1
    return const(0, "uint64"), 0


# -- T.cuda ---------------------------------------------------------------------------------------
def cuda_thread_fence():
    return _c("cuda.thread_fence")


def cuda_warp_sync():
    return _c("cuda.warp_sync")


def cuda_cta_sync():
    return _c("cuda.cta_sync")


def cuda_grid_sync():
    return _c("cuda.grid_sync")


def cuda_cluster_sync():
    return _c("cuda.cluster_sync")


def cuda_warpgroup_sync(bar_no):
    return _c("cuda.warpgroup_sync", bar_no)


def cuda_thread_rank():
    return _c("cuda.thread_rank")


def cuda_syncthreads_and(cond):
    return _c("cuda.syncthreads_and", cond)


def cuda_syncthreads_or(cond):
    return _c("cuda.syncthreads_or", cond)


def cuda_syncthreads_count(cond):
    return _c("cuda.syncthreads_count", cond)


def cuda_nano_sleep(time):
    return _c("cuda.nano_sleep", time)


def cuda_trap_when_assert_failed(cond):
    return _c("cuda.trap_when_assert_failed", cond)


def cuda_atomic_add(res_addr, value):
    return _c("cuda.atomic_add", res_addr, value)


def cuda_atomic_cas(ptr, old_val, new_val):
    return _c("cuda.atomic_cas", ptr, old_val, new_val)


def cuda_ldg(addr, dtype):
    _need_str("dtype", dtype)
    return _c("cuda.ldg", addr, dtype)


def cuda_printf(fmt, *args):
    _need_str("fmt", fmt)
    return _c("cuda.printf", fmt, *args)


def cuda_func_call(func_name, *args, source_code="", return_type="void"):
    """Call the device function ``func_name``; ``source_code`` defines it (once per module)."""
    _need_str("func_name", func_name)
    _need_str("source_code", source_code)
    return Op.get("tirx.cuda.func_call")(func_name, *args, source_code, dtype=return_type)


def cuda_half2float(src):
    return _c("cuda.half2float", src)


def cuda_bfloat162float(src):
    return _c("cuda.bfloat162float", src)


def cuda_float22half2(dst, src):
    return _c("cuda.float22half2", dst, src)


def cuda_half8tofloat8(src_addr, dst_addr):
    return _c("cuda.half8tofloat8", src_addr, dst_addr)


def cuda_float8tohalf8(src_addr, dst_addr):
    return _c("cuda.float8tohalf8", src_addr, dst_addr)


def cuda_runtime_instr_desc(desc, sf_id):
    return _c("cuda.runtime_instr_desc", desc, sf_id)


def cuda_get_tmem_addr(addr, row_offset, col_offset):
    return _c("cuda.get_tmem_addr", addr, row_offset, col_offset)


def cuda_cvta_generic_to_shared(ptr):
    return _c("cuda.cvta_generic_to_shared", ptr)


def cuda_smem_addr_from_uint64(cluster_addr):
    return _c("cuda.smem_addr_from_uint64", cluster_addr)


def cuda_sm100_tma_2sm_mbarrier_addr(bar):
    """The shared address of ``bar`` with bit 24 cleared (the 2-SM TMA mbarrier operand)."""
    from tvm.tirx.op import bitwise_and

    return bitwise_and(cuda_cvta_generic_to_shared(bar), const(0xFEFFFFFF, "uint32"))


def cuda_uint_as_float(bits):
    return _c("cuda.uint_as_float", bits)


def cuda_float_as_uint(x):
    return _c("cuda.float_as_uint", x)


def cuda_ballot_sync(mask, pred):
    return _c("cuda.ballot_sync", mask, pred)


def cuda_ffs_u32(value):
    return _c("cuda.ffs_u32", value)


def cuda_reduce_add_sync_u32(mask, value):
    return _c("cuda.reduce_add_sync_u32", mask, value)


def cuda_reduce_min_sync_u32(mask, value):
    return _c("cuda.reduce_min_sync_u32", mask, value)


def cuda_clock64():
    return _c("cuda.clock64")


def cuda_make_float2(x, y):
    return _c("cuda.make_float2", x, y)


def cuda_float2_x(packed):
    return _c("cuda.float2_x", packed)


def cuda_float2_y(packed):
    return _c("cuda.float2_y", packed)


def cuda_fmul2_rn(a, b):
    return _c("cuda.fmul2_rn", a, b)


def cuda_fadd2_rn(a, b):
    return _c("cuda.fadd2_rn", a, b)


def cuda_float22bfloat162_rn(v0, v1):
    return _c("cuda.float22bfloat162_rn", v0, v1)


def cuda_float22bfloat162_rn_from_float2(packed):
    return _c("cuda.float22bfloat162_rn_from_float2", packed)


def cuda_bfloat1622float2(packed):
    return _c("cuda.bfloat1622float2", packed)


def cuda_hmin2(a, b):
    return _c("cuda.hmin2", a, b)


def cuda_hmax2(a, b):
    return _c("cuda.hmax2", a, b)


def cuda_fp8x4_e4m3_from_float4(x, y, z, w):
    return _c("cuda.fp8x4_e4m3_from_float4", x, y, z, w)


def cuda_warp_reduce(value, op, width=32):
    _choice("op", op, ("sum", "max", "min"))
    _choice("width", width, (2, 4, 8, 16, 32))
    return _c("cuda.warp_reduce", value, op, width)


def cuda_warp_sum(value, width=32):
    return cuda_warp_reduce(value, "sum", width)


def cuda_warp_max(value, width=32):
    return cuda_warp_reduce(value, "max", width)


def cuda_warp_min(value, width=32):
    return cuda_warp_reduce(value, "min", width)


def cuda_cta_reduce(value, op, num_warps, scratch):
    _choice("op", op, ("sum", "max", "min"))
    return _c("cuda.cta_reduce", value, op, num_warps, scratch)


def cuda_cta_sum(value, num_warps, scratch):
    return cuda_cta_reduce(value, "sum", num_warps, scratch)


def cuda_cta_max(value, num_warps, scratch):
    return cuda_cta_reduce(value, "max", num_warps, scratch)


def cuda_cta_min(value, num_warps, scratch):
    return cuda_cta_reduce(value, "min", num_warps, scratch)


def cuda_copy_bytes(dst, src, num_bytes):
    _choice("num_bytes", num_bytes, (1, 2, 4, 8, 16))
    return _c("cuda.copy_bytes", dst, src, num_bytes)


def cuda_copy_128b(dst, src):
    return cuda_copy_bytes(dst, src, 16)


def cuda_copy_64b(dst, src):
    return cuda_copy_bytes(dst, src, 8)


def cuda_copy_32b(dst, src):
    return cuda_copy_bytes(dst, src, 4)


def cuda_copy_16b(dst, src):
    return cuda_copy_bytes(dst, src, 2)


def cuda_copy_8b(dst, src):
    return cuda_copy_bytes(dst, src, 1)


def _event(event_type):
    return getattr(event_type, "value", event_type)


def timer_init_cuda(profiler_buffer, profiler_tag, profiler_write_offset, num_groups, group_id):
    return _c(
        "cuda.timer_init",
        profiler_buffer,
        profiler_tag,
        profiler_write_offset,
        num_groups,
        group_id,
    )


def timer_start_cuda(
    event_type,
    profiler_buffer,
    profiler_tag,
    profiler_write_offset,
    profiler_write_stride,
    leader_cond,
):
    return _c(
        "cuda.timer_start",
        _event(event_type),
        profiler_buffer,
        profiler_tag,
        profiler_write_offset,
        profiler_write_stride,
        leader_cond,
    )


def timer_end_cuda(
    event_type,
    profiler_buffer,
    profiler_tag,
    profiler_write_offset,
    profiler_write_stride,
    leader_cond,
):
    return _c(
        "cuda.timer_end",
        _event(event_type),
        profiler_buffer,
        profiler_tag,
        profiler_write_offset,
        profiler_write_stride,
        leader_cond,
    )


def timer_finalize_cuda(
    profiler_buffer, profiler_tag, profiler_write_offset, profiler_write_stride, leader_cond
):
    return _c(
        "cuda.timer_finalize",
        profiler_buffer,
        profiler_tag,
        profiler_write_offset,
        profiler_write_stride,
        leader_cond,
    )


def mma_store(dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride):
    """Store m x n mma.sync accumulators (16x8 tiles, 4 values per lane) to ``dst_ptr``."""
    _need_str("dtype", dtype)
    return _c("cuda.mma_store", dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride)


def mma_store_legacy(dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride):
    _need_str("dtype", dtype)
    return _c("cuda.mma_store_legacy", dtype, m, n, dst_ptr, src_ptr, src_offset, dst_stride)


def mma_fill(dtype, local_size, local_ptr, offset):
    _need_str("dtype", dtype)
    return _c("cuda.mma_fill", dtype, local_size, local_ptr, offset)


def mma_fill_legacy(dtype, local_size, local_ptr, offset):
    _need_str("dtype", dtype)
    return _c("cuda.mma_fill_legacy", dtype, local_size, local_ptr, offset)


def cuda_shfl_sync(mask, var, lane, width=32):
    return _c("cuda.__shfl_sync", mask, var, lane, width)


def cuda_shfl_up_sync(mask, var, delta, width=32):
    return _c("cuda.__shfl_up_sync", mask, var, delta, width)


def cuda_shfl_down_sync(mask, var, delta, width=32):
    return _c("cuda.__shfl_down_sync", mask, var, delta, width)


def cuda_shfl_xor_sync(mask, var, lane_mask, width=32):
    return _c("cuda.__shfl_xor_sync", mask, var, lane_mask, width)


def cuda_activemask():
    return _c("cuda.__activemask")


# -- T.ptx: registers, loads and stores --------------------------------------------------------------
def ptx_ldg32(reg, guard, addr, local_addr):
    return _c("ptx.ldg32", reg, guard, addr, local_addr)


def ptx_elect_sync():
    return _c("ptx.elect_sync")


def ptx_setmaxnreg(inc, reg_count):
    return _c("ptx.setmaxnreg", inc, reg_count)


def ptx_fetch_register(bits, reg_name):
    _need_str("reg_name", reg_name)
    return _c("ptx.fetch_register", bits, reg_name)


_LD_TYPES = ("b32", "u32", "u64", "s32", "f32", "b64", "s64", "f64")


def ptx_ld(
    addr,
    return_type,
    ptx_type,
    *,
    weak=False,
    space="global",
    cop="",
    cache_hint="",
    cache_policy=None,
):
    _choice("ptx_type", ptx_type, _LD_TYPES)
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c("ptx.ld", addr, policy, return_type, int(bool(weak)), space, cop, ptx_type, has)


def ptx_ld_acquire(addr, return_type, ptx_type, *, scope="gpu", space="global"):
    _choice("ptx_type", ptx_type, _LD_TYPES)
    return _c("ptx.ld_acquire", addr, return_type, ptx_type, scope, space)


def ptx_ld_volatile(addr, return_type, ptx_type, *, space="global"):
    _choice("ptx_type", ptx_type, _LD_TYPES)
    return _c("ptx.ld_volatile", addr, return_type, ptx_type, space)


def ptx_ld_global_acquire(res, addr):
    return _c("ptx.ld_global_acquire", res, addr)


def ptx_red_scalar(
    address,
    value,
    *,
    sem="",
    scope="",
    space="global",
    op,
    ptx_type,
    cache_hint="",
    cache_policy=None,
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c("ptx.red_scalar", address, value, policy, sem, scope, space, op, ptx_type, has)


def ptx_atom_scalar(
    address,
    value,
    *,
    sem="",
    scope="",
    space="global",
    op,
    ptx_type,
    cache_hint="",
    cache_policy=None,
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c("ptx.atom_scalar", address, value, policy, sem, scope, space, op, ptx_type, has)


def ptx_st(
    address,
    *values,
    weak=False,
    space="shared",
    cop="",
    vec="",
    ptx_type,
    cache_hint="",
    cache_policy=None,
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c("ptx.st", address, *values, policy, int(bool(weak)), space, cop, vec, ptx_type, has)


def ptx_st_bulk(ptr, num_bytes, *, weak=False, space="shared::cta"):
    return _c("ptx.st_bulk", ptr, num_bytes, int(bool(weak)), space)


def ptx_prefetch_tensormap(tensormap_addr, space=""):
    _choice("space", space, ("", "const", "param"))
    return _c("ptx.prefetch_tensormap", tensormap_addr, space)


def ptx_fns_b32(mask, base, offset):
    return _c("ptx.fns_b32", mask, base, offset)


def ptx_add_rn_f32_bf16(acc, x):
    return _c("ptx.add_rn_f32_bf16", acc, x)


def ptx_any_sync(mask, pred):
    return _c("ptx.any_sync", mask, pred)


def ptx_exp2(x):
    return _c("ptx.exp2", x)


def ptx_rcp(x):
    return _c("ptx.rcp", x)


def ptx_reduce3_min_f32(a, b, c):
    return _c("ptx.reduce3_min_f32", a, b, c)


def ptx_reduce3_max_f32(a, b, c):
    return _c("ptx.reduce3_max_f32", a, b, c)


def ptx_max_f32(a, b, *, ftz=False, nan=False):
    return _c("ptx.max_f32", a, b, int(bool(ftz)), int(bool(nan)))


def ptx_mapa(ptr, rank, *, space="", ptx_type="u64", return_type="uint64"):
    _choice("space", space, ("", "shared::cluster"))
    _choice("ptx_type", ptx_type, ("u32", "u64"))
    return _c("ptx.mapa", ptr, rank, space, ptx_type, return_type)


def ptx_map_shared_rank(ptr, rank):
    """The generic address of ``ptr`` in the shared memory of cluster CTA ``rank``."""
    return ptx_mapa(ptr, rank)


def _arith(op: str, t: str, d, srcs, rounding, ftz, sat):
    _choice("rounding", rounding, ("rn", "rz", "rm", "rp"))
    if t == "f64" and (ftz or sat):
        raise ValueError(f"PTX {op}.f64 takes neither .ftz nor .sat")
    if t == "f32x2" and sat:
        raise ValueError(f"PTX {op}.f32x2 takes no .sat")
    return _c(f"ptx.{op}_{t}", d, *srcs, rounding, int(bool(ftz)), int(bool(sat)))


def _make_arith(op: str, t: str, n_src: int):
    def builder(d_addr, *srcs, rounding="rn", ftz=False, sat=False):
        if len(srcs) != n_src:
            raise TypeError(f"ptx_{op}_{t} takes d_addr and {n_src} sources, got {len(srcs)}")
        return _arith(op, t, d_addr, srcs, rounding, ftz, sat)

    builder.__name__ = builder.__qualname__ = f"ptx_{op}_{t}"
    builder.__doc__ = f"PTX ``{op}{{.rnd}}{{.ftz}}{{.sat}}.{t} [d_addr], ...`` (result to d_addr)."
    return builder


for _op, _n in (("add", 2), ("sub", 2), ("mul", 2), ("fma", 3)):
    for _t in ("f32", "f32x2", "f64"):
        globals()[f"ptx_{_op}_{_t}"] = _make_arith(_op, _t, _n)


# -- T.ptx: matrix ops ---------------------------------------------------------------------------------
def ptx_ldmatrix(trans, num, dtype, smem_ptr, *dst_handles):
    """``ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared{dtype}`` into one register per handle."""
    _choice("num", num, (1, 2, 4))
    _choice("dtype", dtype, (".b16", ".b8", "b16", "b8"))
    if isinstance(smem_ptr, str) or len(dst_handles) != int(num):
        raise TypeError(f"ldmatrix .x{num} takes the shared pointer and {num} destinations")
    return _c("ptx.ldmatrix", trans, num, dtype, smem_ptr, *dst_handles)


def ptx_ldmatrix_legacy(dtype, trans, num, type, local_ptr, local_offset, smem_ptr, smem_offset):
    return _c(
        "ptx.ldmatrix_legacy",
        dtype,
        trans,
        num,
        type,
        local_ptr,
        local_offset,
        smem_ptr,
        smem_offset,
    )


def ptx_stmatrix(trans, num, dtype, smem_ptr, *src_handles, shape="m8n8", space="shared"):
    _choice("num", num, (1, 2, 4))
    _choice("shape", shape, ("m8n8", "m16n8"))
    _choice("space", space, ("shared", "shared::cta"))
    if isinstance(smem_ptr, str) or len(src_handles) != int(num):
        raise TypeError(f"stmatrix .x{num} takes the shared pointer and {num} sources")
    return _c("ptx.stmatrix", trans, num, dtype, shape, space, smem_ptr, *src_handles)


def ptx_mma(
    shape,
    a_layout,
    b_layout,
    d_type,
    a_type,
    b_type,
    c_type,
    d_ptrs,
    a_ptrs,
    b_ptrs,
    c_ptrs=None,
    saturate=False,
    bit_op=None,
):
    """``mma.sync``: one pointer per 32-bit register of D, A, B (and C; None = C is zero)."""
    for n, v in (("d_ptrs", d_ptrs), ("a_ptrs", a_ptrs), ("b_ptrs", b_ptrs)):
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"{n} must be a list of register pointers")
    c = list(c_ptrs) if c_ptrs is not None else []
    args = [
        shape,
        a_layout,
        b_layout,
        d_type,
        a_type,
        b_type,
        c_type,
        len(d_ptrs),
        len(a_ptrs),
        len(b_ptrs),
        len(c),
        c_ptrs is None,
        *d_ptrs,
        *a_ptrs,
        *b_ptrs,
        *c,
        saturate,
    ]
    if bit_op is not None:
        args.append(bit_op)
    return _c("ptx.mma", *args)


def ptx_mma_legacy(
    dtype,
    shape,
    A_layout,
    B_layout,
    A_dtype,
    B_dtype,
    C_dtype,
    multiplicand_a,
    a_index,
    multiplicand_b,
    b_index,
    accumulator,
    c_index,
    saturate,
    operator=None,
):
    args = [
        dtype,
        shape,
        A_layout,
        B_layout,
        A_dtype,
        B_dtype,
        C_dtype,
        multiplicand_a,
        a_index,
        multiplicand_b,
        b_index,
        accumulator,
        c_index,
        saturate,
    ]
    return _c("ptx.mma_legacy", *args, *([operator] if operator is not None else []))


def ptx_mma_sp(
    dtype,
    shape,
    A_layout,
    B_layout,
    A_dtype,
    B_dtype,
    C_dtype,
    multiplicand_a,
    a_index,
    multiplicand_b,
    b_index,
    accumulator,
    c_index,
    metadata,
    meta_index,
    sparse_selector,
    saturate,
):
    return _c(
        "ptx.mma_sp",
        dtype,
        shape,
        A_layout,
        B_layout,
        A_dtype,
        B_dtype,
        C_dtype,
        multiplicand_a,
        a_index,
        multiplicand_b,
        b_index,
        accumulator,
        c_index,
        metadata,
        meta_index,
        sparse_selector,
        saturate,
    )


# -- T.ptx: cp.async and bulk copies -------------------------------------------------------------------
def ptx_cp_async(
    dst_ptr,
    src_ptr,
    cp_size,
    *,
    cache_hint="",
    cache_policy=None,
    prefetch_size=-1,
    predicate=-1,
    fill_mode="",
):
    """``cp.async`` of ``cp_size`` bytes from global ``src_ptr`` to shared ``dst_ptr``."""
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    _choice("cp_size", cp_size, (4, 8, 16))
    _choice("prefetch_size", prefetch_size, (-1, 64, 128, 256))
    _choice("fill_mode", fill_mode, ("", "zero"))
    return _c(
        "ptx.cp_async", dst_ptr, src_ptr, cp_size, policy, has, prefetch_size, predicate, fill_mode
    )


def ptx_cp_async_legacy(dtype, dst_ptr, dst_offset, src_ptr, src_offset, cp_size):
    """``cp.async`` with element offsets (in ``dtype`` elements) beside the pointers."""
    _need_str("dtype", dtype)
    return _c("ptx.cp_async_legacy", dtype, dst_ptr, dst_offset, src_ptr, src_offset, cp_size)


def ptx_cp_async_commit_group():
    return _c("ptx.cp_async_commit_group")


def ptx_cp_async_wait_group(num=0):
    return _c("ptx.cp_async_wait_group", num)


def ptx_cp_async_mbarrier_arrive(bar):
    return _c("ptx.cp_async_mbarrier_arrive", bar)


def ptx_cp_async_bulk(dtype, shared_ptr, shared_offset, global_ptr, global_offset, bytes, barrier):
    """``cp.async.bulk`` global -> shared completing on ``barrier`` (offsets in ``dtype``)."""
    _need_str("dtype", dtype)
    return _c(
        "ptx.cp_async_bulk",
        dtype,
        shared_ptr,
        shared_offset,
        global_ptr,
        global_offset,
        bytes,
        barrier,
    )


def ptx_cp_async_bulk_shared_to_cluster(dst_ptr, src_ptr, size, mbar):
    return _c("ptx.cp_async_bulk_shared_to_cluster", dst_ptr, src_ptr, size, mbar)


def ptx_cp_async_bulk_commit_group():
    return _c("ptx.cp_async_bulk_commit_group")


def ptx_cp_async_bulk_wait_group(n=0, read=True):
    return _c("ptx.cp_async_bulk_wait_group", n, read)


def ptx_cp_async_bulk_g2s_cta(
    dst_ptr,
    src_ptr,
    num_bytes,
    mbarrier_ptr,
    *,
    cache_hint="",
    cache_policy=None,
    ignore_oob=False,
    ignore_bytes_left=0,
    ignore_bytes_right=0,
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_g2s_cta",
        dst_ptr,
        src_ptr,
        num_bytes,
        ignore_bytes_left,
        ignore_bytes_right,
        mbarrier_ptr,
        policy,
        has,
        int(bool(ignore_oob)),
    )


def ptx_cp_async_bulk_g2s_cluster(
    dst_ptr,
    src_ptr,
    num_bytes,
    mbarrier_ptr,
    *,
    cache_hint="",
    cache_policy=None,
    multicast=False,
    cta_mask=0,
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_g2s_cluster",
        dst_ptr,
        src_ptr,
        num_bytes,
        mbarrier_ptr,
        cta_mask,
        policy,
        has,
        int(bool(multicast)),
    )


def ptx_cp_async_bulk_s2s_cluster(dst_ptr, src_ptr, num_bytes, mbarrier):
    return _c("ptx.cp_async_bulk_s2s_cluster", dst_ptr, src_ptr, num_bytes, mbarrier)


def ptx_cp_async_bulk_s2g(
    dst_ptr, src_ptr, num_bytes, *, cache_hint="", cache_policy=None, cp_mask=False, byte_mask=0
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_s2g",
        dst_ptr,
        src_ptr,
        num_bytes,
        byte_mask,
        policy,
        has,
        int(bool(cp_mask)),
    )


def ptx_cp_async_bulk_tensor_global_to_cluster(
    dim,
    dst_ptr,
    bar,
    tensormap_addr,
    cta_mask,
    cta_group,
    cache_hint,
    *coords,
    cache_policy=None,
    mode="",
):
    """TMA load of a ``dim``-d box at ``coords`` into ``dst_ptr``, completing on ``bar``."""
    _choice("cta_group", cta_group, (1, 2))
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_tensor_global_to_cluster",
        dim,
        dst_ptr,
        bar,
        tensormap_addr,
        cta_mask,
        cta_group,
        policy,
        has,
        *coords,
        mode,
    )


def ptx_cp_async_bulk_tensor_tile_gather4_global_to_cluster(
    dim,
    dst_ptr,
    bar,
    tensormap_addr,
    cta_mask,
    cta_group,
    cache_hint,
    *coords,
    cache_policy=None,
    mode="",
):
    _choice("cta_group", cta_group, (1, 2))
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_tensor_tile_gather4_global_to_cluster",
        dim,
        dst_ptr,
        bar,
        tensormap_addr,
        cta_mask,
        cta_group,
        policy,
        has,
        *coords,
        mode,
    )


def ptx_cp_async_bulk_tensor_global_to_cluster_prefetch(
    dim, tensormap_addr, cache_hint, *coords, cache_policy=None, mode=""
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_tensor_global_to_cluster_prefetch",
        dim,
        tensormap_addr,
        policy,
        has,
        *coords,
        mode,
    )


def ptx_cp_async_bulk_tensor_shared_to_global(
    dim, src_ptr, tensormap_addr, cache_hint, *coords, cache_policy=None, mode=""
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    return _c(
        "ptx.cp_async_bulk_tensor_shared_to_global",
        dim,
        src_ptr,
        tensormap_addr,
        policy,
        has,
        *coords,
        mode,
    )


def ptx_cp_async_bulk_tensor_shared_to_global_reduce(
    dim, src_ptr, tensormap_addr, cache_hint, red_op, *coords, cache_policy=None, mode=""
):
    policy, has = _resolve_cache_policy(cache_hint, cache_policy)
    _need_str("red_op", red_op)
    return _c(
        "ptx.cp_async_bulk_tensor_shared_to_global_reduce",
        dim,
        src_ptr,
        tensormap_addr,
        policy,
        has,
        red_op,
        *coords,
        mode,
    )


# -- T.ptx: barriers, fences -------------------------------------------------------------------------
def ptx_mbarrier_init(bar, thread_count):
    return _c("ptx.mbarrier_init", bar, thread_count)


def ptx_mbarrier_arrive(bar, cta_id=None, pred=None):
    """Arrive on ``bar``; with ``cta_id`` and ``pred``, on that cluster CTA's barrier if pred."""
    if (cta_id is None) != (pred is None):
        raise ValueError("give both cta_id and pred, or neither")
    return _c("ptx.mbarrier_arrive", bar, *([] if cta_id is None else [cta_id, pred]))


def ptx_mbarrier_arrive_expect_tx(bar, byte_count, cta_id=None, pred=None):
    if (cta_id is None) != (pred is None):
        raise ValueError("give both cta_id and pred, or neither")
    return _c(
        "ptx.mbarrier_arrive_expect_tx",
        bar,
        byte_count,
        *([] if cta_id is None else [cta_id, pred]),
    )


def ptx_mbarrier_try_wait(bar, phase):
    return _c("ptx.mbarrier_try_wait", bar, phase)


def ptx_mbarrier_try_wait_once(bar, phase, ticks):
    return _c("ptx.mbarrier_try_wait_once", bar, phase, ticks)


def ptx_mbarrier_test_wait_parity(barrier, phase, *, sem="", scope="", space="shared::cta"):
    if bool(sem) != bool(scope):
        raise ValueError("mbarrier.test_wait.parity: give sem and scope together")
    return _c("ptx.mbarrier_test_wait_parity", barrier, phase, sem, scope, space)


def ptx_bar_arrive(name_bar_id, thread_count):
    return _c("ptx.bar_arrive", name_bar_id, thread_count)


def ptx_bar_sync(name_bar_id, thread_count):
    return _c("ptx.bar_sync", name_bar_id, thread_count)


def ptx_barrier_cluster_arrive(sem="", aligned=True):
    _choice("sem", sem, ("", "release", "relaxed"))
    return _c("ptx.barrier_cluster_arrive", sem, aligned)


def ptx_barrier_cluster_wait(acquire=False, aligned=True):
    return _c("ptx.barrier_cluster_wait", acquire, aligned)


def ptx_fence(sem, scope):
    _choice("sem", sem, ("sc", "acq_rel"))
    _choice("scope", scope, ("cta", "cluster", "gpu", "sys"))
    return _c("ptx.fence", sem, scope)


def ptx_fence_proxy_async(space=""):
    _choice("space", space, ("", "global", "shared::cta", "shared::cluster"))
    return _c("ptx.fence_proxy_async", space)


def ptx_fence_mbarrier_init():
    return _c("ptx.fence_mbarrier_init")


def ptx_griddepcontrol_wait():
    return _c("ptx.griddepcontrol_wait")


def ptx_griddepcontrol_launch_dependents():
    return _c("ptx.griddepcontrol_launch_dependents")


# -- T.ptx.wgmma ---------------------------------------------------------------------------------------
def ptx_wgmma_fence():
    return _c("ptx.wgmma_fence")


def ptx_wgmma_commit_group():
    return _c("ptx.wgmma_commit_group")


def ptx_wgmma_wait_group(n):
    return _c("ptx.wgmma_wait_group", n)


def ptx_wgmma_noop_barrier(reg):
    return _c("ptx.wgmma_noop_barrier", reg)


def ptx_wgmma_encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle):
    return _c("ptx.wgmma_encode_matrix_descriptor", desc, addr, ldo, sdo, swizzle)


def ptx_wgmma_mma_async_ss(
    descA, descB, *accums, M, N, K, in_dtype, out_dtype, transA, transB, scaleA, scaleB, scaleD
):
    return _c(
        "ptx.wgmma_mma_async_ss",
        M,
        N,
        K,
        in_dtype,
        out_dtype,
        transA,
        transB,
        float(scaleA),
        float(scaleB),
        scaleD,
        descA,
        descB,
        *accums,
    )


def ptx_wgmma_mma_async_rs(
    descB, *reg_list, M, N, K, in_dtype, out_dtype, transA, transB, scaleA, scaleB, scaleD
):
    return _c(
        "ptx.wgmma_mma_async_rs",
        M,
        N,
        K,
        in_dtype,
        out_dtype,
        transA,
        transB,
        float(scaleA),
        float(scaleB),
        scaleD,
        descB,
        *reg_list,
    )


# -- T.ptx.tcgen05 ---------------------------------------------------------------------------------------
def ptx_tcgen05_alloc(dst_ptr, n_cols, cta_group=1):
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_alloc", dst_ptr, n_cols, cta_group)


def ptx_tcgen05_dealloc(taddr, n_cols, cta_group=1):
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_dealloc", taddr, n_cols, cta_group)


def ptx_tcgen05_relinquish_alloc_permit(cta_group=1):
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_relinquish_alloc_permit", cta_group)


def ptx_tcgen05_encode_matrix_descriptor(desc, addr, ldo, sdo, swizzle):
    return _c("ptx.tcgen05_encode_matrix_descriptor", desc, addr, ldo, sdo, swizzle)


def ptx_tcgen05_encode_instr_descriptor(
    desc,
    *,
    d_dtype,
    a_dtype,
    b_dtype,
    M,
    N,
    K,
    trans_a,
    trans_b,
    n_cta_groups=1,
    neg_a=False,
    neg_b=False,
    sat_d=False,
    is_sparse=False,
):
    _choice("n_cta_groups", n_cta_groups, (1, 2))
    return _c(
        "ptx.tcgen05_encode_instr_descriptor",
        desc,
        d_dtype,
        a_dtype,
        b_dtype,
        M,
        N,
        K,
        trans_a,
        trans_b,
        n_cta_groups,
        neg_a,
        neg_b,
        sat_d,
        is_sparse,
    )


def ptx_tcgen05_encode_instr_descriptor_block_scaled(
    desc,
    *,
    d_dtype,
    a_dtype,
    b_dtype,
    sfa_dtype,
    sfb_dtype,
    sfa_tmem_addr,
    sfb_tmem_addr,
    M,
    N,
    K,
    trans_a,
    trans_b,
    n_cta_groups=1,
    neg_a=False,
    neg_b=False,
    is_sparse=False,
):
    _choice("n_cta_groups", n_cta_groups, (1, 2))
    return _c(
        "ptx.tcgen05_encode_instr_descriptor_block_scaled",
        desc,
        d_dtype,
        a_dtype,
        b_dtype,
        sfa_dtype,
        sfb_dtype,
        sfa_tmem_addr,
        sfb_tmem_addr,
        M,
        N,
        K,
        trans_a,
        trans_b,
        n_cta_groups,
        neg_a,
        neg_b,
        is_sparse,
    )


def ptx_tcgen05_mma(
    d_tmem_addr,
    a_operand,
    b_desc,
    i_desc,
    *disable_output_lane,
    d_dtype,
    a_dtype,
    b_dtype,
    use_a_tmem,
    cta_group,
    enable_input_d=1,
    scale_input_d=0,
    pred=None,
):
    _choice("cta_group", cta_group, (1, 2))
    lanes = list(disable_output_lane) or [0] * (4 if int(cta_group) == 1 else 8)
    return _c(
        "ptx.tcgen05_mma",
        d_dtype,
        a_dtype,
        b_dtype,
        d_tmem_addr,
        a_operand,
        b_desc,
        i_desc,
        use_a_tmem,
        cta_group,
        enable_input_d,
        scale_input_d,
        *lanes,
        *([pred] if pred is not None else []),
    )


def ptx_tcgen05_mma_sp(
    d_tmem_addr,
    a_operand,
    b_desc,
    sp_tmem_addr,
    i_desc,
    *disable_output_lane,
    d_dtype,
    a_dtype,
    b_dtype,
    use_a_tmem,
    cta_group,
    enable_input_d=1,
    scale_input_d=0,
):
    _choice("cta_group", cta_group, (1, 2))
    lanes = list(disable_output_lane) or [0] * (4 if int(cta_group) == 1 else 8)
    return _c(
        "ptx.tcgen05_mma_sp",
        d_dtype,
        a_dtype,
        b_dtype,
        d_tmem_addr,
        a_operand,
        b_desc,
        sp_tmem_addr,
        i_desc,
        use_a_tmem,
        cta_group,
        enable_input_d,
        scale_input_d,
        *lanes,
    )


def ptx_tcgen05_mma_block_scale(
    d_tmem_addr,
    a_operand,
    b_desc,
    sfa_tmem_addr,
    sfb_tmem_addr,
    i_desc,
    *,
    d_dtype,
    a_dtype,
    b_dtype,
    sfa_dtype,
    sfb_dtype,
    use_a_tmem,
    cta_group,
    enable_input_d=1,
):
    _choice("cta_group", cta_group, (1, 2))
    return _c(
        "ptx.tcgen05_mma_block_scale",
        d_dtype,
        a_dtype,
        b_dtype,
        sfa_dtype,
        sfb_dtype,
        d_tmem_addr,
        a_operand,
        b_desc,
        sfa_tmem_addr,
        sfb_tmem_addr,
        i_desc,
        use_a_tmem,
        cta_group,
        enable_input_d,
    )


def ptx_tcgen05_mma_sp_block_scale(
    d_tmem_addr,
    a_operand,
    b_desc,
    sfa_tmem_addr,
    sfb_tmem_addr,
    sp_tmem_addr,
    i_desc,
    *,
    d_dtype,
    a_dtype,
    b_dtype,
    sfa_dtype,
    sfb_dtype,
    use_a_tmem,
    cta_group,
    enable_input_d=1,
):
    _choice("cta_group", cta_group, (1, 2))
    return _c(
        "ptx.tcgen05_mma_sp_block_scale",
        d_dtype,
        a_dtype,
        b_dtype,
        sfa_dtype,
        sfb_dtype,
        d_tmem_addr,
        a_operand,
        b_desc,
        sfa_tmem_addr,
        sfb_tmem_addr,
        sp_tmem_addr,
        i_desc,
        use_a_tmem,
        cta_group,
        enable_input_d,
    )


def ptx_tcgen05_fence_before_thread_sync():
    return _c("ptx.tcgen05_fence_before_thread_sync")


def ptx_tcgen05_fence_after_thread_sync():
    return _c("ptx.tcgen05_fence_after_thread_sync")


def ptx_tcgen05_cp(
    taddr, src_desc, *, shape, cta_group=1, multicast="", decompress="", row=0, col=0
):
    _choice("shape", shape, ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b"))
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_cp", taddr, src_desc, shape, cta_group, multicast, decompress, row, col)


def ptx_tcgen05_shift(taddr, cta_group=1):
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_shift", taddr, cta_group)


def ptx_tcgen05_ld(src_addr, *regs, shape, num, row=0, col=0, pack=False):
    return _c("ptx.tcgen05_ld", src_addr, row, col, shape, num, pack, *regs)


def ptx_tcgen05_st(dst_addr, *regs, shape, num, row=0, col=0, unpack=False):
    return _c("ptx.tcgen05_st", dst_addr, row, col, shape, num, unpack, *regs)


def ptx_tcgen05_wait_ld():
    return _c("ptx.tcgen05_wait_ld")


def ptx_tcgen05_wait_st():
    return _c("ptx.tcgen05_wait_st")


def ptx_tcgen05_commit(bar, cta_group=1, cta_mask=0, *, pred=None):
    _choice("cta_group", cta_group, (1, 2))
    return _c("ptx.tcgen05_commit", bar, cta_group, cta_mask, *([pred] if pred is not None else []))


# -- T.nvshmem --------------------------------------------------------------------------------------------
def nvshmem_my_pe():
    return _c("nvshmem.my_pe")


def nvshmem_n_pes():
    return _c("nvshmem.n_pes")


def nvshmem_quiet():
    return _c("nvshmem.quiet")


def nvshmem_fence():
    return _c("nvshmem.fence")


def nvshmem_barrier_all():
    return _c("nvshmem.barrier_all")


def nvshmem_signal_op(sig_addr, signal, sig_op, pe):
    _choice("sig_op", sig_op, ("set", "add"))
    return _c("nvshmem.signal_op", sig_addr, signal, sig_op, pe)


def nvshmem_wait_until(ivar, cmp, cmp_value, type="uint64_t"):
    _choice("cmp", cmp, ("eq", "ne", "gt", "ge", "lt", "le"))
    return _c("nvshmem.wait_until", ivar, cmp, cmp_value, type)


def nvshmem_getmem_nbi(dst, src, nelems, pe):
    return _c("nvshmem.getmem_nbi", dst, src, nelems, pe)


def nvshmem_putmem_nbi(dst, src, nelems, pe):
    return _c("nvshmem.putmem_nbi", dst, src, nelems, pe)


def nvshmem_getmem_nbi_warp(dst, src, nelems, pe):
    return _c("nvshmem.getmem_nbi_warp", dst, src, nelems, pe)


def nvshmem_putmem_nbi_warp(dst, src, nelems, pe):
    return _c("nvshmem.putmem_nbi_warp", dst, src, nelems, pe)


def nvshmem_getmem_nbi_block(dst, src, nelems, pe):
    return _c("nvshmem.getmem_nbi_block", dst, src, nelems, pe)


def nvshmem_putmem_nbi_block(dst, src, nelems, pe):
    return _c("nvshmem.putmem_nbi_block", dst, src, nelems, pe)


def nvshmem_putmem_signal_nbi(dst, src, nelems, sig_addr, signal, sig_op, pe):
    _choice("sig_op", sig_op, ("set", "add"))
    return _c("nvshmem.putmem_signal_nbi", dst, src, nelems, sig_addr, signal, sig_op, pe)


def nvshmem_putmem_signal_nbi_warp(dst, src, nelems, sig_addr, signal, sig_op, pe):
    _choice("sig_op", sig_op, ("set", "add"))
    return _c("nvshmem.putmem_signal_nbi_warp", dst, src, nelems, sig_addr, signal, sig_op, pe)


def nvshmem_putmem_signal_nbi_block(dst, src, nelems, sig_addr, signal, sig_op, pe):
    _choice("sig_op", sig_op, ("set", "add"))
    return _c("nvshmem.putmem_signal_nbi_block", dst, src, nelems, sig_addr, signal, sig_op, pe)


__all__ += sorted(n for n in dir() if n.startswith(("cuda_", "ptx_", "nvshmem_", "mma_", "timer_")))
