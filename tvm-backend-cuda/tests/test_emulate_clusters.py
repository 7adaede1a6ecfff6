"""Thread block clusters under the CUDA emulator (CPU only): the CTAs of a cluster run together,
each with its own shared memory; cluster barriers, distributed shared memory through ``mapa``
(loads on ``shared::cluster`` addresses), shared-to-cluster bulk copies completing on a peer's
mbarrier, remote mbarrier arrivals and multicast TMA loads; checked against numpy."""

from __future__ import annotations

from typing import Any, no_type_check

import numpy as np
import pytest

import tvm
from tvm.error import DeadlockError
from tvm_backend_cuda.plugin import register_backend

register_backend()

ml_dtypes = pytest.importorskip("ml_dtypes")

SM90 = {"kind": "cuda", "arch": "sm_90a"}


def _emulated(f: Any) -> Any:
    return tvm.compile(f, target=SM90, emulate=True)


@no_type_check
def _ring(clusters: int = 2, size: int = 4, n: int = 64) -> Any:
    """Each CTA reads the shared array of the next CTA of its cluster (rank + 1 mod size)
    through a ``mapa``-mapped ``shared::cluster`` address, between two cluster barriers."""
    from tvm.script import tirx as T

    @T.prim_func
    def ring(A: T.Buffer((clusters * size * n,), "float32"),
             B: T.Buffer((clusters * size * n,), "float32")):
        T.device_entry()
        cid = T.cta_id_in_cluster([size])
        cl = T.cluster_id([clusters])
        tx = T.thread_id([n])
        S = T.alloc_buffer((n,), "float32", scope="shared")
        S[tx] = A[(cl * size + cid) * n + tx]
        T.cuda.cluster_sync()
        peer = T.ptx.mapa(T.address_of(S[tx]), (cid + 1) % size, space="shared::cluster",
                          ptx_type="u32", return_type="uint32")
        B[(cl * size + cid) * n + tx] = T.ptx.ld(peer, "float32", "f32", space="shared::cluster")
        T.cuda.cluster_sync()

    return ring


def test_distributed_shared_memory_ring_matches_numpy() -> None:
    ex = _emulated(_ring())
    assert "__cluster_dims__(4, 1, 1)" in ex.inspect_source()
    a = np.random.default_rng(0).standard_normal(2 * 4 * 64).astype("float32")
    b = np.zeros_like(a)
    ex(a, b)
    want = np.roll(a.reshape(2, 4, 64), -1, axis=1).reshape(-1)
    np.testing.assert_array_equal(b, want)


@no_type_check
def _split_barrier(n: int = 128) -> Any:
    """barrier.cluster.arrive and .wait as two calls: CTA 1 writes its shared memory between
    them, and CTA 0 stores its value into CTA 1's through a generic mapa address (st), which
    CTA 1 reads after the second barrier."""
    from tvm.script import tirx as T

    @T.prim_func
    def split(A: T.Buffer((2 * n,), "float32"), B: T.Buffer((2 * n,), "float32")):
        T.device_entry()
        cid = T.cta_id_in_cluster([2])
        T.cluster_id([1])
        tx = T.thread_id([n])
        S = T.alloc_buffer((n,), "float32", scope="shared")
        S[tx] = A[cid * n + tx]
        T.ptx.barrier.cluster.arrive()
        T.ptx.barrier.cluster.wait()
        if cid == 0:
            T.ptx.st(T.ptx.mapa(T.address_of(S[tx]), 1, space="shared::cluster",
                                ptx_type="u32", return_type="uint32"),
                     S[tx] * T.float32(2), space="shared::cluster", ptx_type="f32")
        T.ptx.barrier.cluster.arrive(sem="release")
        T.ptx.barrier.cluster.wait(acquire=True)
        B[cid * n + tx] = S[tx]

    return split


def test_cluster_barrier_orders_distributed_shared_memory_stores() -> None:
    a = np.arange(256, dtype="float32")
    b = np.zeros_like(a)
    _emulated(_split_barrier())(a, b)
    np.testing.assert_array_equal(b[:128], a[:128])
    np.testing.assert_array_equal(b[128:], a[:128] * 2)


def test_dsmem_bulk_copy_to_a_peer_completes_on_its_mbarrier() -> None:
    """The library's shared-to-cluster copy (``Tx.cta.copy_async`` with ``cta_id``): a
    ``cp.async.bulk`` into the peer's window through mapa addresses, completing the bytes on
    the peer's mbarrier."""
    from lang_kernels import dsmem_kernel

    a = np.random.default_rng(1).standard_normal(1024).astype("float32")
    b = np.zeros_like(a)
    _emulated(dsmem_kernel())(a, b)
    np.testing.assert_array_equal(a, b)


@no_type_check
def _multicast(rows: int = 64, cols: int = 64) -> Any:
    """CTA 0 of each cluster of 2 loads a bf16 tile by TMA multicast into both CTAs' shared
    memory (completing on each one's mbarrier); each CTA adds rank + 1 and stores its copy."""
    from tvm.script import tirx as T
    from tvm.script.tirx import tile as Tx
    from tvm_backend_cuda.dispatch.tma_utils import tma_shared_layout
    from tvm_backend_cuda.lang import SMEMPool, TMABar

    nbytes = rows * cols * 2
    layout = tma_shared_layout("bfloat16", "128B", (rows, cols))

    @T.prim_func
    def multicast(A: T.Buffer((2 * rows, cols), "bfloat16"),
                  B: T.Buffer((4 * rows, cols), "bfloat16")):
        T.device_entry()
        cid = T.cta_id_in_cluster([2])
        cl = T.cluster_id([2])
        tx = T.thread_id([128])
        pool = SMEMPool()
        S = pool.alloc((rows, cols), "bfloat16", layout=layout, align=1024)
        bar = TMABar(pool, 1, init_thread=tx == 0)
        T.cuda.cluster_sync()  # both barriers are initialised before the multicast
        if tx == 0:
            bar.arrive(0, nbytes)
        if cid == 0:
            Tx.cta.copy_async(S, A[cl * rows:cl * rows + rows, 0:cols], dispatch="tma",
                              config={"mbar": bar[0], "cta_mask": 3})
        bar.wait(0, 0)
        Tx.cta.add(S, S, T.Cast("float32", cid + 1))
        row = (cl * 2 + cid) * rows
        Tx.cta.copy_async(B[row:row + rows, 0:cols], S, dispatch="tma")
        T.cuda.cluster_sync()

    return multicast


def test_multicast_tma_load_lands_in_every_cta_of_the_mask() -> None:
    ex = _emulated(_multicast())
    assert ".multicast::cluster" in tvm.compile(_multicast(), target=SM90).inspect_source()
    rng = np.random.default_rng(2)
    a = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    b = np.zeros((256, 64), ml_dtypes.bfloat16)
    ex(a, b)
    a32 = a.astype("float32").reshape(2, 1, 64, 64)
    want = (a32 + np.array([1.0, 2.0], "float32").reshape(1, 2, 1, 1)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(b.reshape(2, 2, 64, 64), want)


@no_type_check
def _peer_arrive(n: int = 64) -> Any:
    """CTA 1 waits on its mbarrier, which only CTA 0 arrives on (a remote arrive); with
    ``arrive=False`` nobody does, and the cluster deadlocks."""
    from tvm.script import tirx as T

    def build(arrive: bool) -> Any:
        @T.prim_func
        def peer(A: T.Buffer((n,), "float32")):
            T.device_entry()
            cid = T.cta_id_in_cluster([2])
            T.cluster_id([1])
            tx = T.thread_id([n])
            bar = T.alloc_buffer((1,), "uint64", scope="shared")
            if tx == 0:
                T.ptx.mbarrier.init(bar.data, 1)
            T.cuda.cluster_sync()
            if cid == 0:
                if tx == 0:
                    if arrive:
                        T.ptx.mbarrier.arrive(bar.data, 1, 1)
            if cid == 1:
                T.ptx.mbarrier.try_wait(bar.data, 0)
                A[tx] = A[tx] + T.float32(1)
            T.cuda.cluster_sync()

        return peer

    return build


def test_remote_mbarrier_arrive_releases_the_peer_and_a_missing_one_deadlocks() -> None:
    a = np.zeros(64, "float32")
    _emulated(_peer_arrive()(True))(a)
    np.testing.assert_array_equal(a, np.ones(64, "float32"))
    with pytest.raises(DeadlockError) as info:
        _emulated(_peer_arrive()(False))(np.zeros(64, "float32"))
    msg = str(info.value)
    assert "deadlock: every thread of the cluster is blocked" in msg
    assert "waiting at the cluster barrier" in msg and "waiting on the mbarrier" in msg


def test_load_source_launch_takes_a_cluster_shape() -> None:
    """A hand-written kernel launched with ``cluster=`` (as CudaModule.launch): the grid counts
    blocks and must be a multiple of the shape."""
    from tvm_backend_cuda.emulator import load_source

    src = r"""
extern "C" __global__ void ids(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x;
}
"""
    mod = load_source(src, {"ids": [("out", "ptr")]})
    out = np.zeros(8, "int32")
    mod.launch("ids", 8, 32, [out], cluster=2)
    np.testing.assert_array_equal(out, np.arange(8))
    with pytest.raises(tvm.error.EmulatorError, match="not a multiple of the cluster shape"):
        mod.launch("ids", 7, 32, [out], cluster=2)
