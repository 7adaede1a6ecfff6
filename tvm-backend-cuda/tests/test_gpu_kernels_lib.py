"""The kernel library on the GPU (marker ``gpu``): ``kernels.gemm`` against torch at shapes no
tile divides, every fused epilogue, float16 and float8 (fast and accurate: the accurate mode's
error at K = 8192 is no larger than ``torch._scaled_mm``'s), the row kernels and ``add``; the
``torch.ops.tvm`` ops under ``torch.compile(fullgraph=True)`` and a CUDA graph; tuning that a
second process reuses without measuring. Tuning is off (``TVM_AUTOTUNE=0``) except where a
test is about it.

Without a GPU (the ``device`` fixture gives ``"cpu"``) the same tests call the callables on CPU
tensors under the CUDA emulator, at the smaller shape each large case names (``EMULATED``); the
CUDA graph is GPU-only, and the tuning test checks that an emulated run measures nothing."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tvm_backend_cuda.plugin import register_backend

register_backend()  # a source checkout on PYTHONPATH has no entry point

from tvm_backend_cuda import kernels  # noqa: E402

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def no_tuning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVM_AUTOTUNE", "0")


def _rel(torch: Any, got: Any, want: Any) -> float:
    assert torch.isfinite(got.float()).all(), "unwritten or non-finite output elements"
    return float((got.double() - want.double()).norm() / want.double().norm())


def _act(torch: Any, x: Any, act: str | None) -> Any:
    F = torch.nn.functional  # noqa: N806 - torch's own spelling
    return {None: lambda v: v, "relu": F.relu, "silu": F.silu,
            "gelu": lambda v: F.gelu(v, approximate="tanh")}[act](x)


GEMM_SHAPES = [(300, 264, 48, "bfloat16"), (1000, 1000, 512, "bfloat16"),
               (129, 520, 64, "float16"), (777, 1032, 256, "float8_e4m3fn"),
               (1000, 4096, 4096, "bfloat16")]

#: the smaller shape the emulator runs in place of a large GPU one (still no tile divides it)
EMULATED: dict[tuple[int, ...], tuple[int, ...]] = {
    (1000, 1000, 512): (300, 520, 128), (777, 1032, 256): (200, 264, 128),
    (1000, 4096, 4096): (260, 392, 256), (1000, 1032, 256): (300, 264, 128),
    (1024, 1024, 8192): (256, 256, 1024)}


def _shape(device: str, *shape: int) -> tuple[int, ...]:
    return EMULATED.get(shape, shape) if device == "cpu" else shape


@pytest.mark.parametrize("m, n, k, dtype", GEMM_SHAPES)
def test_gemm_against_torch(torch: Any, m: int, n: int, k: int, dtype: str, device: str) -> None:
    m, n, k = _shape(device, m, n, k)
    g = torch.Generator(device=device).manual_seed(m + n + k)
    a = torch.randn(m, k, device=device, generator=g)
    b = torch.randn(n, k, device=device, generator=g)
    if dtype.startswith("float8"):
        A, B = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        C = kernels.gemm(A, B, scale_a=0.5, scale_b=torch.tensor([0.25], device=device))
        ref = (A.double() @ B.double().T) * 0.125
    else:
        A, B = a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype))
        C = kernels.gemm(A, B)
        ref = A.double() @ B.double().T
    assert C.dtype == (torch.float16 if dtype == "float16" else torch.bfloat16)
    assert _rel(torch, C, ref) < 1e-2


EPILOGUES = [dict(bias=True), dict(bias=True, activation="silu"), dict(activation="gelu"),
             dict(activation="relu", residual=True), dict(residual=True, scale=0.5),
             dict(bias=True, activation="silu", residual=True)]


@pytest.mark.parametrize("opts", EPILOGUES, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
@pytest.mark.parametrize("m, n, k", [(1000, 1032, 256), (256, 512, 128)])
def test_fused_epilogue_against_torch(torch: Any, opts: dict[str, Any], m: int, n: int, k: int,
                                      device: str) -> None:
    m, n, k = _shape(device, m, n, k)
    g = torch.Generator(device=device).manual_seed(m + k)
    a = torch.randn(m, k, device=device, generator=g).to(torch.bfloat16)
    b = (torch.randn(n, k, device=device, generator=g) / math.sqrt(k)).to(torch.bfloat16)
    bias = torch.randn(n, device=device, generator=g).to(torch.bfloat16) \
        if opts.get("bias") else None
    res = torch.randn(m, n, device=device, generator=g).to(torch.bfloat16) \
        if opts.get("residual") else None
    scale = opts.get("scale")
    out = torch.full((m, n), float("nan"), device=device, dtype=torch.bfloat16)
    got = kernels.gemm(a, b, out, bias=bias, activation=opts.get("activation"), residual=res,
                       scale_a=scale)
    assert got is out
    want = a.float() @ b.float().T * (scale or 1.0)
    if bias is not None:
        want = want + bias.float()
    want = _act(torch, want, opts.get("activation"))
    if res is not None:
        want = want + res.float()
    assert _rel(torch, out, want) < 1e-2


def _fp8_operands(torch: Any, device: str, m: int, n: int, k: int, seed: int
                  ) -> tuple[Any, ...]:
    """float8 e4m3 ``A [m, k]``, ``B [n, k]`` scaled to the format's range, their per-tensor
    scales (one-element float32 tensors, as ``torch._scaled_mm`` takes them) and the float64
    reference ``A @ B^T * scale_a * scale_b``."""
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn(m, k, device=device, generator=g)
    b = torch.randn(n, k, device=device, generator=g)
    sa, sb = a.abs().max() / 448, b.abs().max() / 448
    A, B = (a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn)
    sa, sb = sa.float().reshape(1), sb.float().reshape(1)
    return A, B, sa, sb, (A.double() @ B.double().T) * (sa.double() * sb.double())


def test_accurate_fp8_is_no_worse_than_scaled_mm(torch: Any, device: str) -> None:
    m, n, k = _shape(device, 1024, 1024, 8192)
    A, B, sa, sb, ref = _fp8_operands(torch, device, m, n, k, seed=3)
    cublas = torch._scaled_mm(A, B.T, scale_a=sa.reshape(()), scale_b=sb.reshape(()),
                              out_dtype=torch.bfloat16)
    fast = kernels.gemm(A, B, scale_a=sa, scale_b=sb)
    accurate = kernels.gemm(A, B, scale_a=sa, scale_b=sb, accurate=True)
    e_cublas, e_fast, e_acc = (_rel(torch, x, ref) for x in (cublas, fast, accurate))
    print(f"fp8 K={k}: rel. error _scaled_mm {e_cublas:.3e}, fast {e_fast:.3e}, "
          f"accurate {e_acc:.3e}")
    # both are near the bf16 output's rounding error: a few percent is run-to-run noise
    assert e_acc <= e_cublas * 1.05
    assert e_acc <= e_fast * 1.01


@pytest.mark.parametrize("m, n, k", [(128, 384, 1024), (200, 328, 2176)])
def test_accurate_fp8_half_width_scratch(torch: Any, device: str, m: int, n: int, k: int
                                         ) -> None:
    """The default accurate tile on sm_90a, 128 x 192: two scratch accumulators of 96 columns
    each, every stage two groups; 200 x 328 x 2176 crosses the tile edges and leaves a tail
    block of one stage after four blocks of ``HALVES_BLOCK`` (4)."""
    import tvm

    A, B, sa, sb, ref = _fp8_operands(torch, device, m, n, k, seed=m + k)
    arch = "sm_90a" if device == "cpu" else None
    ex = tvm.compile(kernels.gemm_func(m, n, k, "float8_e4m3fn", arch=arch, accurate=True,
                                       block_n=192), target="cuda")
    out = torch.full((m, n), float("nan"), device=device, dtype=torch.bfloat16)
    ex(A, B, sa, sb, out)
    assert _rel(torch, out, ref) < 4e-3


@pytest.mark.parametrize("m, n, k, dtype, block_n, store_n", [
    (200, 328, 2176, "float8_e4m3fn", 192, 64),  # accurate; the last tile's third part: 8 columns
    (130, 320, 512, "float8_e4m3fn", 192, 64),  # the last tile's third part wholly past n
    (200, 328, 256, "bfloat16", 256, 128),  # the fused epilogue, part by part
])
def test_c_stored_in_parts(torch: Any, device: str, m: int, n: int, k: int, dtype: str,
                           block_n: int, store_n: int) -> None:
    """``store_n``: the tile's C staged and stored ``store_n`` columns at a time (the staging
    buffer, read by one TMA store before the next part is written, is that much smaller), with
    the epilogue's bias, activation and residual at each part's own columns."""
    import tvm

    arch = "sm_90a" if device == "cpu" else None
    fp8 = dtype.startswith("float8")
    if fp8:
        A, B, sa, sb, ref = _fp8_operands(torch, device, m, n, k, seed=m + n)
        f = kernels.gemm_func(m, n, k, dtype, arch=arch, accurate=True, block_n=block_n,
                              store_n=store_n)
        args: tuple[Any, ...] = (A, B, sa, sb)
    else:
        g = torch.Generator(device=device).manual_seed(n)
        A = (torch.randn(m, k, device=device, generator=g) / math.sqrt(k)).to(torch.bfloat16)
        B = torch.randn(n, k, device=device, generator=g).to(torch.bfloat16)
        bias = torch.randn(n, device=device, generator=g).to(torch.bfloat16)
        res = torch.randn(m, n, device=device, generator=g).to(torch.bfloat16)
        f = kernels.gemm_func(m, n, k, dtype, arch=arch, bias=True, activation="silu",
                              residual=True, block_n=block_n, store_n=store_n)
        args = (A, B, bias, res)
        ref = torch.nn.functional.silu(A.float() @ B.float().T + bias.float()) + res.float()
    ex = tvm.compile(f, target="cuda")
    out = torch.full((m, n), float("nan"), device=device, dtype=torch.bfloat16)
    ex(*args, out)
    assert _rel(torch, out, ref) < (4e-3 if fp8 else 1e-2)


@pytest.mark.parametrize("m, n, k, dtype, cluster, opts", [
    # 3 tile rows padded to 2 clusters: the fourth tile is all past m (loads zeros, stores
    # nothing) and its CTA still multicasts its half of B to its partner
    (300, 264, 256, "bfloat16", (2, 1), {"bias": True, "activation": "silu",
                                         "residual": True}),
    (200, 600, 256, "float8_e4m3fn", (1, 2), {}),  # A shared; 3 tile columns padded to 4
    (300, 520, 128, "bfloat16", (2, 2), {"num_ctas": 4}),  # one cluster, 4 tiles in turn
    (200, 328, 2176, "float8_e4m3fn", (2, 1), {"accurate": True}),  # 128 x 192, promoted
])
def test_gemm_in_clusters(torch: Any, device: str, m: int, n: int, k: int, dtype: str,
                          cluster: tuple[int, int], opts: dict[str, Any]) -> None:
    """``cluster=(cluster_m, cluster_n)``: CTAs in clusters share their A and B tiles by TMA
    multicast (each loads a part and sends it to the cluster row or column), and each stage is
    loaded again only once every CTA reading it released it (remote mbarrier arrivals)."""
    import tvm

    arch = "sm_90a" if device == "cpu" else None
    if dtype.startswith("float8"):
        A, B, sa, sb, ref = _fp8_operands(torch, device, m, n, k, seed=m + n)
        args: tuple[Any, ...] = (A, B, sa, sb)
        tol = 4e-3 if opts.get("accurate") else 2e-2
    else:
        g = torch.Generator(device=device).manual_seed(n)
        A = (torch.randn(m, k, device=device, generator=g) / math.sqrt(k)).to(torch.bfloat16)
        B = torch.randn(n, k, device=device, generator=g).to(torch.bfloat16)
        ref = A.double() @ B.double().T
        args, tol = (A, B), 1e-2
        if opts.get("bias"):
            bias = torch.randn(n, device=device, generator=g).to(torch.bfloat16)
            res = torch.randn(m, n, device=device, generator=g).to(torch.bfloat16)
            args = (A, B, bias, res)
            ref = torch.nn.functional.silu(ref + bias.double()) + res.double()
    f = kernels.gemm_func(m, n, k, dtype, arch=arch, cluster=cluster, **opts)
    ex = tvm.compile(f, target="cuda")
    assert f"__cluster_dims__({cluster[0] * cluster[1]}, 1, 1)" in ex.inspect_source()
    out = torch.full((m, n), float("nan"), device=device, dtype=torch.bfloat16)
    ex(*args, out)
    assert _rel(torch, out, ref) < tol


@pytest.mark.parametrize("k", [2048, 2176])  # 16 stages of 128: two whole blocks; 17: a tail
def test_accurate_fp8_promoting_every_second_stage(torch: Any, device: str, k: int) -> None:
    """``promote_every=2``: two scratch accumulators taking turns (each group's MMAs run while
    the previous group is added), in blocks of 8 stages, a tail block of one stage."""
    import tvm

    m, n = 128, 256
    A, B, sa, sb, ref = _fp8_operands(torch, device, m, n, k, seed=k)
    arch = "sm_90a" if device == "cpu" else None
    ex = tvm.compile(kernels.gemm_func(m, n, k, "float8_e4m3fn", arch=arch, accurate=True,
                                       block_n=128, promote_every=2), target="cuda")
    out = torch.full((m, n), float("nan"), device=device, dtype=torch.bfloat16)
    ex(A, B, sa, sb, out)
    assert _rel(torch, out, ref) < 4e-3


ROW_SHAPES = [(1, 8), (7, 136), (33, 1000), (5, 4096), (3, 8200)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("m, n", ROW_SHAPES)
def test_row_callables_against_torch(torch: Any, dtype: str, m: int, n: int, device: str
                                     ) -> None:
    F = torch.nn.functional  # noqa: N806 - torch's own spelling
    dt = getattr(torch, dtype)
    x = (torch.randn(2, m, n, device=device) * 3).to(dt)
    w = (torch.rand(n, device=device) + 0.5).to(dt)
    bb = torch.randn(n, device=device).to(dt)
    xd, wd, bd = x.double(), w.double(), bb.double()
    tol = 1e-5 if dtype == "float32" else 1e-2
    assert _rel(torch, kernels.softmax(x), torch.softmax(xd, -1)) < tol
    assert _rel(torch, kernels.rms_norm(x, w), F.rms_norm(xd, (n,), wd, 1e-6)) < tol
    assert _rel(torch, kernels.layer_norm(x, w, bb), F.layer_norm(xd, (n,), wd, bd, 1e-5)) < tol
    y = torch.empty_like(x)
    assert kernels.add(x, x, out=y) is y and torch.equal(y, (x.float() * 2).to(dt))


def test_row_callables_build_for_the_emulated_devices_arch(torch: Any, device: str,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """Under the emulator the library builds for the emulated device's arch
    (``$TVM_CUDA_EMULATE_ARCH``), as on a GPU for the GPU's: an sm_80 device runs the row
    kernels built for sm_80 (code built for sm_90a would be refused at load)."""
    if device != "cpu":
        pytest.skip("the emulated device's arch; a GPU's is its own")
    from tvm_backend_cuda import emulator
    from tvm_backend_cuda.kernels import _call

    monkeypatch.setattr(emulator, "DEVICE_ARCH", "sm_80")
    x = torch.randn(3, 200)
    w = torch.rand(200) + 0.5
    want = torch.nn.functional.rms_norm(x.double(), (200,), w.double(), 1e-6)
    assert _rel(torch, kernels.rms_norm(x, w), want) < 1e-5
    built = [ex.arch for key, ex in _call._EXES.items() if "sm_80" in key]
    assert built and set(built) == {"sm_80"}


def test_torch_ops_under_compile_and_cuda_graphs(torch: Any, device: str) -> None:
    g = torch.Generator(device=device).manual_seed(9)
    x = torch.randn(256, 512, device=device, generator=g).to(torch.bfloat16)
    w_norm = (torch.rand(512, device=device, generator=g) + 0.5).to(torch.bfloat16)
    w1 = (torch.randn(1024, 512, device=device, generator=g) / 23).to(torch.bfloat16)
    b1 = torch.randn(1024, device=device, generator=g).to(torch.bfloat16)
    w2 = (torch.randn(512, 1024, device=device, generator=g) / 32).to(torch.bfloat16)

    def block(x: Any) -> Any:
        h = torch.ops.tvm.rms_norm(x, w_norm, 1e-6)
        h = torch.ops.tvm.gemm(h, w1, bias=b1, activation="silu")
        return torch.ops.tvm.gemm(h, w2, residual=x)

    def eager(x: Any) -> Any:
        F = torch.nn.functional  # noqa: N806 - torch's own spelling
        h = F.rms_norm(x.float(), (512,), w_norm.float(), 1e-6).to(torch.bfloat16)
        h = F.silu(h.float() @ w1.float().T + b1.float()).to(torch.bfloat16)
        return (h.float() @ w2.float().T + x.float()).to(torch.bfloat16)

    want = eager(x)
    assert _rel(torch, block(x), want) < 2e-2
    explain = torch._dynamo.explain(block)(x)
    assert explain.graph_break_count == 0
    compiled = torch.compile(block, fullgraph=True, dynamic=False)
    assert _rel(torch, compiled(x), want) < 2e-2
    if device == "cpu":
        return  # CUDA graphs are the GPU's: the emulator launches synchronously, one by one
    # a CUDA graph replays our launches (compiled before the capture)
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        block(static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = block(static_x)
    new_x = torch.randn(256, 512, device="cuda", generator=g).to(torch.bfloat16)
    static_x.copy_(new_x)
    graph.replay()
    torch.cuda.synchronize()
    assert _rel(torch, static_out, eager(new_x)) < 2e-2


TUNE = """
import json, sys
import torch
from tvm import autotune
from tvm_backend_cuda import kernels
device = sys.argv[1]
a = torch.randn(512, 1024, device=device).to(torch.bfloat16)
b = torch.randn(768, 1024, device=device).to(torch.bfloat16)
c = kernels.gemm(a, b)
if device == "cuda":
    torch.cuda.synchronize()
err = float((c.float() - a.float() @ b.float().T).norm() / (a.float() @ b.float().T).norm())
print(json.dumps({"stats": autotune.stats, "err": err}))
"""


def test_tuning_is_recorded_and_reused_by_a_second_process(torch: Any, tmp_path: Path,
                                                           device: str) -> None:
    """On the GPU the first process measures and records, the second reuses the record; under
    the emulator (whose times say nothing about a GPU) neither measures nor records."""
    env = {k: v for k, v in os.environ.items() if k != "TVM_AUTOTUNE"}
    env["TVM_CACHE_DIR"] = str(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "core" / "src"),
                                         str(ROOT / "tvm-backend-cuda" / "src"),
                                         env.get("PYTHONPATH", "")])
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", TUNE, device], env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    if device == "cpu":
        assert first["stats"]["measured"] == second["stats"]["measured"] == 0
        assert first["err"] < 1e-2 and second["err"] < 1e-2
        assert not list(tmp_path.glob("autotune/*.json"))
        return
    assert first["stats"]["measured"] == 1 and first["stats"]["compiled"] >= 2
    assert second["stats"] == {"measured": 0, "reused": 1, "compiled": 0}
    assert first["err"] < 1e-2 and second["err"] < 1e-2
    [record] = (tmp_path / "autotune").glob("gemm-*.json")
    data = json.loads(record.read_text())
    assert data["args"][:4] == [512, 768, 1024, "bfloat16"]
    assert data["device"]["name"] == torch.cuda.get_device_name(0)
    assert set(data["best"]) >= {"block_n", "group_m", "num_ctas"}
