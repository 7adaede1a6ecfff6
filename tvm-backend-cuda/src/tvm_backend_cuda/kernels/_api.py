"""The ready callables: ``gemm``, ``softmax``, ``rms_norm``, ``layer_norm``, ``add`` on torch
CUDA tensors (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _attention, _attention_bwd, _attention_bwd_rows, _gemm
from ._add import add_func
from ._call import (
    Tuning,
    check_tensor,
    dtype_name,
    executable,
    same_device,
    scale_tensor,
    torch_module,
)
from ._gemm import BM, gemm_func
from ._layer_norm import layer_norm_func
from ._rms_norm import rms_norm_func
from ._rows import SUPPORTED as ROW_DTYPES
from ._rows import thread_choices
from ._softmax import softmax_func

__all__ = ["add", "attention", "attention_backward", "gemm", "gemm_candidates", "layer_norm", "rms_norm", "softmax"]


def _out(where: str, out: Any, shape: tuple[int, ...], dtype: Any, ref: Any) -> Any:
    torch = torch_module()
    if out is None:
        return torch.empty(shape, dtype=dtype, device=ref.device)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{where}: out must be a torch tensor, got {type(out).__name__}")
    if tuple(out.shape) != shape or out.dtype != dtype or out.device != ref.device:
        raise ValueError(f"{where}: out must be a {dtype} tensor of shape {shape} on "
                         f"{ref.device}, got {out.dtype} {tuple(out.shape)} on {out.device}")
    if not out.is_contiguous():
        raise ValueError(f"{where}: out must be contiguous (the kernel writes it row by row)")
    return out


# -- GEMM ---------------------------------------------------------------------------------------


def _waves(tiles: int, sms: int) -> float:
    """The fraction of the SMs' time a persistent grid of ``tiles`` equal tiles keeps busy."""
    return tiles / (-(-tiles // sms) * sms)


def balanced_grid(m: int, n: int, block_n: int, sms: int) -> int:
    """The balanced persistent grid of an ``m x n`` GEMM in ``128 x block_n`` tiles: as many
    waves as ``sms`` CTAs need, every CTA the same number of tiles (to one), the SMs a partial
    last wave would leave idle not started (less power drawn in the same time)."""
    tiles = -(-m // _gemm.BM) * -(-n // block_n)
    return -(-tiles // -(-tiles // sms))


def gemm_candidates(m: int, n: int, k: int, dtype: str, accurate: bool = False
                    ) -> Callable[[str, int], list[dict[str, Any]]]:
    """The GEMM's tuning candidates for an arch and SM count: tile width (``block_n``),
    pipeline depth (``stages``), raster group (``group_m``), persistent grid (``num_ctas``:
    every SM, or the balanced grid of as many waves where the last wave is partial) and, on
    sm_90a, clusters of 2 CTAs along M that share B's tile by TMA multicast
    (``cluster=(2, 1)``). The first, used untuned, is the tile width whose tiles fill the last
    wave best (256 on a tie)."""

    def candidates(arch: str, sms: int) -> list[dict[str, Any]]:
        fp8_acc = accurate and dtype.startswith("float8")
        widths = list(_gemm.ACCURATE_BLOCK_NS[::-1]) if fp8_acc else sorted(
            _gemm.BLOCK_NS, key=lambda bn: (-_waves(-(-m // BM) * -(-n // bn), sms), -bn))
        out: list[dict[str, Any]] = []
        for bn in widths:
            out += [{"block_n": bn, "group_m": 8, "num_ctas": sms},
                    {"block_n": bn, "group_m": 16, "num_ctas": sms}]
            balanced = balanced_grid(m, n, bn, sms)
            if balanced < sms:
                out.append({"block_n": bn, "group_m": 8, "num_ctas": balanced})
            if arch == "sm_90a":  # half of B's tile from each CTA of a pair, multicast
                group = 16 if fp8_acc else 8  # the accurate tile's best group on the H200
                out.append({"block_n": bn, "group_m": group, "num_ctas": sms // 2 * 2,
                            "cluster": (2, 1)})
        out.append({"block_n": 128, "group_m": 8, "stages": 4, "num_ctas": sms})  # 6 by default
        return out

    return candidates


def gemm(a: Any, b: Any, out: Any = None, *, bias: Any = None, activation: str | None = None,
         residual: Any = None, scale_a: Any = None, scale_b: Any = None,
         accurate: bool = False) -> Any:
    """``act(a @ b.T * scale_a * scale_b + bias) + residual`` on the tensor cores.

    ``a`` ``[..., k]``, ``b`` ``[n, k]`` (a Linear layer's weight), both bfloat16, float16 or
    float8_e4m3fn; the result ``[..., n]`` is float16 for float16 inputs, else bfloat16 (into
    ``out`` when given). ``bias`` ``[n]`` and ``residual`` ``[..., n]`` have the result's dtype;
    ``activation`` is ``"relu"``, ``"gelu"`` (tanh approximation) or ``"silu"``; ``scale_a``,
    ``scale_b`` are floats or one-element float32 tensors (float8: per-tensor scales, 1 when
    not given). ``accurate=True`` (float8) promotes the accumulators to float32 every 128 of
    K. ``k`` must be a multiple of 16 and ``n`` of 8."""
    where = "kernels.gemm"
    torch = torch_module()
    check_tensor(where, "a", a, _gemm.IN_DTYPES)
    check_tensor(where, "b", b, _gemm.IN_DTYPES, ndim=2)
    _gemm.Epilogue(activation=activation)  # a bad activation fails first
    dtype = dtype_name(a)
    if dtype_name(b) != dtype:
        raise ValueError(f"{where}: a is {a.dtype} but b is {b.dtype}; give both the same dtype")
    if a.dim() < 1:
        raise ValueError(f"{where}: a must have at least one dimension")
    k = int(a.shape[-1])
    n = int(b.shape[0])
    if int(b.shape[1]) != k:
        raise ValueError(f"{where}: a is [..., {k}] but b is {list(b.shape)}: b is [n, k] (a "
                         f"Linear weight), its second dimension must be a's last")
    if k % 16:
        raise ValueError(f"{where}: k = {k} must be a multiple of 16 (TMA rows are whole "
                         f"16-byte units); pad K with zeros")
    if n % 8:
        raise ValueError(f"{where}: n = {n} must be a multiple of 8; pad b with zero rows")
    out_name = "float16" if dtype == "float16" else "bfloat16"
    out_dt = getattr(torch, out_name)
    shape = tuple(int(s) for s in (*a.shape[:-1], n))
    m = a.numel() // k if k else 0
    if bias is not None:
        check_tensor(where, "bias", bias, (out_name,), ndim=1)
        if int(bias.shape[0]) != n:
            raise ValueError(f"{where}: bias must have shape ({n},), got {tuple(bias.shape)}")
    if residual is not None:
        check_tensor(where, "residual", residual, (out_name,))
        if tuple(residual.shape) != shape:
            raise ValueError(f"{where}: residual must have the result's shape "
                             f"{shape}, got {tuple(residual.shape)}")
    same_device(where, a=a, b=b, bias=bias, residual=residual, out=out)
    result = _out(where, out, shape, out_dt, a)
    if m == 0:
        return result
    fp8 = dtype.startswith("float8")
    scaled = fp8 or scale_a is not None or scale_b is not None
    accurate = bool(accurate) and fp8
    options: dict[str, Any] = {"out_dtype": out_name, "bias": bias is not None, "activation": activation,
               "residual": residual is not None, "scaled": scaled,
               "accurate": accurate}
    a2 = a.reshape(m, k).contiguous()
    b2 = b.contiguous()
    # tuned without the epilogue (the plain GEMM of the same operands); a plain call then
    # uses the tuner's executable as it is
    fixed = dict(options, bias=False, activation=None, residual=False, scaled=fp8)
    tuning = Tuning((m, n, k, dtype), fixed, gemm_candidates(m, n, k, dtype, accurate),
                    lambda: _gemm_tuning_inputs(m, n, k, dtype, fp8, a.device))
    ex = executable("gemm", gemm_func, (m, n, k, dtype), options, a.device, tuning=tuning,
                    arch_arg=True)
    args = [a2, b2]
    if bias is not None:
        args.append(bias.contiguous())
    if residual is not None:
        args.append(residual.reshape(m, n).contiguous())
    if scaled:
        args += [scale_tensor(where, "scale_a", 1.0 if scale_a is None else scale_a, a.device),
                 scale_tensor(where, "scale_b", 1.0 if scale_b is None else scale_b, a.device)]
    args.append(result.view(m, n))
    ex(*args)
    return result


def _gemm_tuning_inputs(m: int, n: int, k: int, dtype: str, fp8: bool, device: Any
                        ) -> tuple[Callable[[Any], Callable[[], Any]], Callable[[Any], Any]]:
    """Random operands of the shape, the float32 reference, and the (run, check) pair."""
    torch = torch_module()
    gen = torch.Generator(device=device).manual_seed(m * 31 + n * 7 + k)
    a = torch.randn(m, k, device=device, generator=gen)
    b = torch.randn(n, k, device=device, generator=gen)
    out_dt = torch.float16 if dtype == "float16" else torch.bfloat16
    if fp8:
        sa, sb = float(a.abs().max()) / 448, float(b.abs().max()) / 448
        a, b = (a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn)
        scales = [torch.full((1,), sa, device=device), torch.full((1,), sb, device=device)]
        ref = (a.float() @ b.float().T) * (sa * sb)
    else:
        a, b = a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype))
        scales = []
        ref = a.float() @ b.float().T
    c = torch.empty(m, n, device=device, dtype=out_dt)

    def run(ex: Any) -> Callable[[], Any]:
        c.fill_(float("nan"))  # a candidate that writes nothing must not pass on old values
        return lambda: ex(a, b, *scales, c)

    def check(ex: Any) -> bool:
        torch.cuda.synchronize()
        err = float((c.float() - ref).norm() / ref.norm())
        return err < (3e-2 if fp8 else 1e-2)

    return run, check


# -- row kernels ----------------------------------------------------------------------------------


def _rows_of(where: str, x: Any) -> tuple[int, int]:
    check_tensor(where, "x", x, ROW_DTYPES)
    if x.dim() < 1:
        raise ValueError(f"{where}: x must have at least one dimension")
    n = int(x.shape[-1])
    if n < 8 or n % 8:
        raise ValueError(f"{where}: the last dimension ({n}) must be a positive multiple of 8 "
                         f"(rows move in 16-byte vectors)")
    return x.numel() // n, n


def _vector(where: str, name: str, v: Any, x: Any, n: int) -> Any:
    check_tensor(where, name, v, (dtype_name(x),), ndim=1)
    if int(v.shape[0]) != n:
        raise ValueError(f"{where}: {name} must have shape ({n},), got {tuple(v.shape)}")
    return v


def _row_tuning(kind: str, m: int, n: int, dtype: str, extra: dict[str, Any], device: Any
                ) -> Tuning:
    def inputs() -> tuple[Callable[[Any], Callable[[], Any]], Callable[[Any], Any]]:
        torch = torch_module()
        dt = getattr(torch, dtype)
        gen = torch.Generator(device=device).manual_seed(m + n)
        x = torch.randn(m, n, device=device, generator=gen).to(dt)
        w = (torch.rand(n, device=device, generator=gen) + 0.5).to(dt)
        bb = torch.randn(n, device=device, generator=gen).to(dt)
        y = torch.empty_like(x)
        F = torch.nn.functional  # noqa: N806 - torch's own spelling
        xf, wf, bf = x.float(), w.float(), bb.float()
        eps = extra.get("eps", 0.0)
        ref = {"softmax": lambda: torch.softmax(xf, -1),
               "rms_norm": lambda: F.rms_norm(xf, (n,), wf, eps),
               "layer_norm": lambda: F.layer_norm(xf, (n,), wf, bf, eps)}[kind]()
        args = {"softmax": [x, y], "rms_norm": [x, w, y], "layer_norm": [x, w, bb, y]}[kind]

        def check(ex: Any) -> bool:
            torch.cuda.synchronize()
            err = float((y.float() - ref).norm() / ref.norm())
            return err < (1e-5 if dtype == "float32" else 1e-2)  # False for NaN

        def run(ex: Any) -> Callable[[], Any]:
            y.fill_(float("nan"))  # a candidate that writes nothing must not pass on old values
            return lambda: ex(*args)

        return run, check

    return Tuning((m, n, dtype), extra,
                  lambda arch, sms: [{"threads": t} for t in thread_choices(n, dtype)], inputs)


def _row_call(kind: str, factory: Any, x: Any, vectors: list[Any], out: Any,
              extra: dict[str, Any]) -> Any:
    where = f"kernels.{kind}"
    m, n = _rows_of(where, x)
    vecs = [_vector(where, name, v, x, n) for name, v in vectors]
    same_device(where, x=x, **dict(vectors), out=out)
    vecs = [v.contiguous() for v in vecs]
    result = _out(where, out, tuple(int(s) for s in x.shape), x.dtype, x)
    if m == 0:
        return result
    dtype = dtype_name(x)
    ex = executable(kind, factory, (m, n, dtype), extra, x.device,
                    tuning=_row_tuning(kind, m, n, dtype, extra, x.device))
    ex(x.reshape(m, n).contiguous(), *vecs, result.view(m, n))
    return result


def softmax(x: Any, out: Any = None) -> Any:
    """Softmax over the last dimension of ``x`` (float32 or bfloat16; arithmetic in float32)."""
    return _row_call("softmax", softmax_func, x, [], out, {})


def rms_norm(x: Any, weight: Any, eps: float = 1e-6, out: Any = None) -> Any:
    """``x * rsqrt(mean(x^2) + eps) * weight`` over the last dimension of ``x``."""
    return _row_call("rms_norm", rms_norm_func, x, [("weight", weight)], out,
                     {"eps": float(eps)})


def layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-5, out: Any = None) -> Any:
    """``(x - mean) * rsqrt(var + eps) * weight + bias`` over the last dimension of ``x``."""
    return _row_call("layer_norm", layer_norm_func, x, [("weight", weight), ("bias", bias)],
                     out, {"eps": float(eps)})


def add(a: Any, b: Any, out: Any = None) -> Any:
    """``a + b`` element-wise (same shape; float32 or bfloat16)."""
    where = "kernels.add"
    check_tensor(where, "a", a, ROW_DTYPES)
    check_tensor(where, "b", b, (dtype_name(a),))
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{where}: a and b must have the same shape, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    same_device(where, a=a, b=b, out=out)
    n = a.numel()
    if n % 8:
        raise ValueError(f"{where}: the element count ({n}) must be a multiple of 8")
    result = _out(where, out, tuple(int(s) for s in a.shape), a.dtype, a)
    if n == 0:
        return result
    ex = executable("add", add_func, (n, dtype_name(a)), {}, a.device)
    ex(a.reshape(n).contiguous(), b.reshape(n).contiguous(), result.view(n))
    return result


# -- attention ------------------------------------------------------------------------------------


def attention(q: Any, k: Any, v: Any, *, causal: bool = False, scale: float | None = None,
              return_lse: bool = False) -> Any:
    """``softmax(q @ k^T * scale [+ causal mask]) @ v`` (FlashAttention forward on the tensor
    cores).

    ``q`` ``[batch, heads_q, seq_q, d]``, ``k`` and ``v`` ``[batch, heads_kv, seq_k, d]`` with
    ``heads_q`` a multiple of ``heads_kv`` (GQA, MQA), d 64, 128 or 256, bfloat16 or float16; the
    layout of ``torch.nn.functional.scaled_dot_product_attention``, whose ``is_causal`` mask
    (query ``i`` sees keys ``j <= i``) ``causal`` is. ``scale`` defaults to ``1 / sqrt(d)``.
    Returns O like ``q``, and with ``return_lse=True`` also the float32 log-sum-exp ``[batch,
    heads_q, seq_q]`` of the scaled scores. A kernel is compiled per shape."""
    where = "kernels.attention"
    torch = torch_module()
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(where, name, t, _attention.DTYPES, ndim=4)
    dtype = dtype_name(q)
    if dtype_name(k) != dtype or dtype_name(v) != dtype:
        raise ValueError(f"{where}: q, k and v must have one dtype, got {q.dtype}, {k.dtype}, "
                         f"{v.dtype}")
    b, hq, sq, d = (int(s) for s in q.shape)
    if tuple(k.shape) != tuple(v.shape):
        raise ValueError(f"{where}: k and v must have the same shape, got {tuple(k.shape)} and "
                         f"{tuple(v.shape)}")
    _, hkv, sk, _ = (int(s) for s in k.shape)
    if int(k.shape[0]) != b or int(k.shape[3]) != d:
        raise ValueError(f"{where}: q is [batch, heads, seq, d] = {list(q.shape)} but k is "
                         f"{list(k.shape)}: batch and d must agree")
    if hkv < 1 or hq % hkv:
        raise ValueError(f"{where}: q has {hq} heads, k and v {hkv}: heads_q must be a "
                         f"multiple of heads_kv")
    if d not in _attention.HEAD_DIMS:
        raise ValueError(f"{where}: head dimension {d} is not one of {_attention.HEAD_DIMS}; "
                         f"pad it with zeros to the next one")
    same_device(where, q=q, k=k, v=v)
    out = torch.empty((b, hq, sq, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((b, hq, sq), dtype=torch.float32, device=q.device)
    if out.numel() and sk:
        options = {"causal": bool(causal), "scale": None if scale is None else float(scale)}
        ex = executable("attention", _attention.attention_func, (b, hq, hkv, sq, sk, d, dtype),
                        options, q.device, arch_arg=True)
        ex(q.contiguous().view(-1, d), k.contiguous().view(-1, d), v.contiguous().view(-1, d),
           out.view(-1, d), lse.view(-1))
    elif out.numel():
        raise ValueError(f"{where}: k and v have no keys (seq_k = 0): softmax over nothing")
    return (out, lse) if return_lse else out


#: Causal attention with at most this many scores per head takes the dQ kernel unless atomics
#: are asked for (``deterministic=False``): measured on the H200 (bf16, d 128, causal, 2026-12-04),
#: at b4 h16 s4096 the dQ-kernel path took 1.698 ms and the atomic one 1.844 ms; at b1 h16
#: s16384 the atomic path was faster (6.016 against 6.466 ms), as it is without the mask
#: (2.754 against 3.044 ms at s4096)
CAUSAL_DQ_KERNEL_MAX = 4096 * 4096


def attention_backward(q: Any, k: Any, v: Any, out: Any, lse: Any, grad: Any, *,
                       causal: bool = False, scale: float | None = None,
                       deterministic: bool | None = None) -> tuple[Any, Any, Any]:
    """dq, dk, dv of ``attention(q, k, v, causal=causal, scale=scale)`` given its output
    ``out``, its log-sum-exp ``lse`` (``return_lse=True``) and the output's gradient ``grad``:
    the FlashAttention backward kernels (d 64 or 128). K and V's gradients are summed over the
    query heads that share them (GQA, MQA).

    Two ways to dQ: one kernel computes dK and dV and adds dQ's pieces into a float32 buffer
    with atomic adds (the order of those adds varies from run to run, so dq may differ in its
    last bits); or a second kernel recomputes the scores and computes dQ (no atomics, about
    1.4x the arithmetic). ``deterministic=True`` takes the second, ``False`` the first; by
    default (``None``) the faster on the H200 is taken (:data:`CAUSAL_DQ_KERNEL_MAX`)."""
    where = "kernels.attention_backward"
    torch = torch_module()
    for name, t in (("q", q), ("k", k), ("v", v), ("out", out), ("grad", grad)):
        check_tensor(where, name, t, _attention.DTYPES, ndim=4)
    check_tensor(where, "lse", lse, ("float32",), ndim=3)
    b, hq, sq, d = (int(s) for s in q.shape)
    _, hkv, sk, _ = (int(s) for s in k.shape)
    for name, t, want in (("out", out, q.shape), ("grad", grad, q.shape), ("v", v, k.shape),
                          ("lse", lse, q.shape[:-1])):
        if tuple(t.shape) != tuple(want):
            raise ValueError(f"{where}: {name} must have shape {tuple(want)}, got "
                             f"{tuple(t.shape)}")
    if d not in _attention_bwd.BWD_HEAD_DIMS:
        raise ValueError(f"{where}: head dimension {d} is not one of "
                         f"{_attention_bwd.BWD_HEAD_DIMS}")
    same_device(where, q=q, k=k, v=v, out=out, lse=lse, grad=grad)
    dtype = dtype_name(q)
    # the gradients are new contiguous tensors whatever the inputs' strides (empty_like keeps a
    # transposed view's strides, and the kernels write rows of [batch * heads * seq, d])
    dk, dv = (torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (k, v))
    if not q.numel() or not k.numel():
        return torch.zeros(q.shape, dtype=q.dtype, device=q.device), dk.zero_(), dv.zero_()
    grad = grad.contiguous()
    # the log-sum-exp in base 2 and D = rowsum(dO * O) (the softmax backward's correction), in
    # float32 rows padded for the kernels' whole-block loads
    sqp = _attention_bwd.padded_seq(sq)
    lse2 = torch.empty((b * hq, sqp), dtype=torch.float32, device=q.device)
    dl = torch.empty_like(lse2)
    executable("attention_bwd_pre", _attention_bwd_rows.attention_bwd_pre_func, (b * hq, sq, d, dtype),
               {}, q.device)(out.contiguous().view(-1, d), grad.view(-1, d),
                             lse.contiguous().view(-1), lse2, dl)
    if deterministic is None:
        deterministic = bool(causal) and sq * sk <= CAUSAL_DQ_KERNEL_MAX
    atomic = not deterministic
    options = {"causal": bool(causal), "scale": None if scale is None else float(scale)}
    fargs = (b, hq, hkv, sq, sk, d, dtype)
    rows = [t.contiguous().view(-1, d) for t in (q, k, v)]
    common = [*rows, grad.view(-1, d), lse2, dl]
    dqa = torch.zeros((b * hq * sqp * d,) if atomic else (1,), dtype=torch.float32,
                      device=q.device)
    executable("attention_bwd_dkdv", _attention_bwd.attention_bwd_dkdv_func, fargs,
               {**options, "dq_atomic": atomic}, q.device,
               arch_arg=True)(*common, dk.view(-1, d), dv.view(-1, d), dqa)
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    if atomic:  # dQ = dQa * scale, as rows
        executable("attention_bwd_post", _attention_bwd_rows.attention_bwd_post_func,
                   (b * hq, sq, d, dtype), {"scale": options["scale"]},
                   q.device)(dqa, dq.view(-1, d))
        return dq, dk, dv
    executable("attention_bwd_dq", _attention_bwd.attention_bwd_dq_func, fargs, options,
               q.device, arch_arg=True)(*common, dq.view(-1, d))
    return dq, dk, dv
