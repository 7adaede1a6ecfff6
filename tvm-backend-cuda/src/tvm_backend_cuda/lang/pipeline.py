"""mbarrier arrays and multi-stage pipelines built on them.

- :class:`MBarrier`: ``depth`` mbarriers (64-bit words in shared memory), initialised by one
  thread; ``arrive``, ``wait`` (parity), and the element itself (``bar[s]``) for instructions
  that complete on a barrier.
- :class:`TMABar`: a barrier that TMA copies complete on: the arriving thread announces the
  bytes (``arrive.expect_tx``).
- :class:`TCGen05Bar`: a barrier arrived on by ``tcgen05.commit`` (sm_100a) when the MMAs issued
  before it finish.
- :class:`PipelineState`: the ring position of one side of a pipeline, ``index`` (the stage)
  and ``phase`` (flips each time the ring wraps), kept in two ``local`` registers.
- :class:`Pipeline`: ``stages`` slots with a *full* and an *empty* barrier each. The producer
  ``producer_acquire`` s a slot (waits until the consumers released it), fills it,
  ``producer_commit`` s it (arrives on *full*, with the byte count for TMA); the consumer
  ``consumer_wait`` s on *full*, uses the slot and ``consumer_release`` s it (arrives on
  *empty*). Both sides start at index 0, phase 0; the producer waits for parity ``phase ^ 1``,
  which a fresh barrier passes at once, so the first ``stages`` acquires do not block.

In a ``@T.prim_func`` body::

    pool = SMEMPool()
    pipe = Pipeline(pool, 4, producer="tma", consumer_count=2)  # allocates and initialises
    prod = PipelineState(4)                                     # two local int32 registers
    ...
    pipe.producer_acquire(prod)
    pipe.producer_commit(prod, nbytes)          # before the TMA copies that complete on it
    Tx.copy_async(A_s[prod.index, :, :], A[...], dispatch="tma", config={"mbar": pipe.full[prod.index]})
    prod.advance()

Every method returns ordinary statements (``T.ptx.mbarrier.*`` calls, stores to the state
registers), so the function prints and parses back without the helpers.
"""

from __future__ import annotations

from typing import Any

from tvm.ir import Buffer, BufferLoad, BufferStore, PrimExpr, Stmt, const
from tvm.ir import expr as E

from .. import op as _op
from ._emit import alloc, as_expr, decl, evaluate, seq_of, static_int, when
from .alloc_pool import SMEMPool

__all__ = ["MBarrier", "Pipeline", "PipelineState", "TCGen05Bar", "TMABar"]


class MBarrier:
    """``depth`` mbarriers in shared memory, carved from an :class:`SMEMPool` (or, with
    ``pool=None``, a static ``shared`` array of their own).

    ``count`` is the arrival count each phase needs. ``bar = MBarrier(pool, 4)`` in a script
    declares the array and initialises it: thread ``init_thread`` (default: the condition
    ``True``, i.e. every thread of a single-thread setup; pass e.g. ``tx == 0``) runs
    ``mbarrier.init`` on each and the init fence, then all threads meet at a CTA barrier.
    """

    kind = "mbarrier"

    def __init__(self, pool: SMEMPool | None, depth: int = 1, count: int = 1, *,
                 init_thread: Any = None, name: str = "mbar") -> None:
        self.depth = static_int(depth, f"{type(self).__name__}: depth", minimum=1)
        self.count = count
        self.init_thread = init_thread
        if pool is not None:
            self.buffer = pool.carve((self.depth,), "uint64", align=8, name=name)
            self._owned = False
        else:
            self.buffer = Buffer(name, [self.depth], "uint64", scope="shared", align=8)
            self._owned = True

    # -- setup ---------------------------------------------------------------------------------
    def __tvm_script_bind__(self, name: str) -> Stmt:
        self.buffer.name = name
        if self._owned:
            self.buffer.data.name = name
        return self.init()

    def declare(self) -> Stmt:
        return alloc(self.buffer) if self._owned else decl(self.buffer)

    def init_stmts(self) -> Stmt:
        """``mbarrier.init`` of every barrier (no fence, no barrier: for a caller that does
        several)."""
        return evaluate(*[_op.ptx_mbarrier_init(self[i], self.count) for i in range(self.depth)])

    def init(self, count: Any = None) -> Stmt:
        """Declare, initialise (one thread), fence and CTA-sync (what binding the barrier in a
        script does). ``bar.init(n)``, the seed's form, is only the ``mbarrier.init`` of each
        barrier for ``n`` arrivals, run by the calling threads; the caller fences
        (``T.ptx.fence.mbarrier_init()``) and syncs."""
        if count is not None:
            self.count = count
            return self.init_stmts()
        body = seq_of([self.init_stmts(), evaluate(_op.ptx_fence_mbarrier_init())])
        cond = True if self.init_thread is None else self.init_thread
        return seq_of([self.declare(), when(cond, body), evaluate(_op.cuda_cta_sync())])

    # -- use -----------------------------------------------------------------------------------
    def __getitem__(self, stage: Any) -> BufferLoad:
        """Barrier ``stage`` (its address where an instruction takes a barrier)."""
        return BufferLoad(self.buffer, [as_expr(stage)])

    def ptr_to(self, stage: Any) -> BufferLoad:
        """Barrier ``stage`` as :meth:`__getitem__` gives it; ``bar.ptr_to([i])`` (the seed's
        spelling, a buffer's index list) is ``bar[i]``."""
        if isinstance(stage, (list, tuple)):
            if len(stage) != 1:
                raise IndexError(f"{type(self).__name__}.ptr_to takes one index (the stage), "
                                 f"got {list(stage)}")
            stage = stage[0]
        return self[stage]

    def arrive(self, stage: Any = 0, cta_id: Any = None, pred: Any = None) -> Stmt:
        """Arrive on barrier ``stage`` (on cluster CTA ``cta_id``'s copy when given)."""
        return evaluate(_op.ptx_mbarrier_arrive(self[stage], cta_id, pred))

    def wait(self, stage: Any, phase: Any) -> Stmt:
        """Wait until the phase of parity ``phase`` of barrier ``stage`` has completed."""
        return evaluate(_op.ptx_mbarrier_try_wait(self[stage], phase))


class TMABar(MBarrier):
    """A barrier that TMA copies complete on; ``arrive(stage, nbytes)`` announces the bytes
    (``mbarrier.arrive.expect_tx``) the copies will deliver."""

    kind = "tma"

    def arrive(self, stage: Any = 0, nbytes: Any = None, cta_id: Any = None,  # type: ignore[override]
               pred: Any = None) -> Stmt:
        if nbytes is None:
            return super().arrive(stage, cta_id, pred)
        return evaluate(_op.ptx_mbarrier_arrive_expect_tx(self[stage], nbytes, cta_id, pred))


class TCGen05Bar(MBarrier):
    """A barrier arrived on by ``tcgen05.commit`` (sm_100a): ``arrive(stage)`` commits the MMAs
    this thread issued so far to barrier ``stage`` (``cta_mask``: multicast to those cluster
    CTAs)."""

    kind = "tcgen05"

    def __init__(self, pool: SMEMPool | None, depth: int = 1, count: int = 1, *,
                 init_thread: Any = None, name: str = "mbar", cta_group: int = 1) -> None:
        super().__init__(pool, depth, count, init_thread=init_thread, name=name)
        if cta_group not in (1, 2):
            raise ValueError(f"TCGen05Bar: cta_group must be 1 or 2, got {cta_group}")
        self.cta_group = cta_group

    def arrive(self, stage: Any = 0, cta_mask: Any = 0,  # type: ignore[override]
               pred: Any = None) -> Stmt:
        return evaluate(_op.ptx_tcgen05_commit(self[stage], self.cta_group, cta_mask, pred=pred))


class PipelineState:
    """A ring position: ``index`` in ``[0, stages)`` and ``phase`` in ``{0, 1}``, held in two
    ``local`` int32 registers that ``state = PipelineState(stages)`` declares and zeroes."""

    def __init__(self, stages: int, *, index: int = 0, phase: int = 0,
                 name: str = "state") -> None:
        self.stages = static_int(stages, "PipelineState: stages", minimum=1)
        if phase not in (0, 1):
            raise ValueError(f"PipelineState: phase must be 0 or 1, got {phase}")
        self._start = (static_int(index, "PipelineState: index", minimum=0), phase)
        if self._start[0] >= self.stages:
            raise ValueError(f"PipelineState: index {index} is not below stages {self.stages}")
        self.regs = Buffer(name, [2], "int32", scope="local")

    def __tvm_script_bind__(self, name: str) -> Stmt:
        self.regs.name = name
        self.regs.data.name = name
        return self.init()

    def init(self) -> Stmt:
        zero = const(0, "int32")
        return seq_of([alloc(self.regs),
                       BufferStore(self.regs, const(self._start[0], "int32"), [zero]),
                       BufferStore(self.regs, const(self._start[1], "int32"), [const(1, "int32")])])

    @property
    def index(self) -> PrimExpr:
        return BufferLoad(self.regs, [const(0, "int32")])

    @property
    def phase(self) -> PrimExpr:
        return BufferLoad(self.regs, [const(1, "int32")])

    def advance(self, steps: int = 1) -> Stmt:
        """Move ``steps`` slots on (flipping the phase at each wrap)."""
        steps = static_int(steps, "PipelineState.advance: steps", minimum=1)
        out: list[Stmt] = []
        for _ in range(steps):
            nxt = self.index + 1
            wrap = E.EQ(nxt, const(self.stages, "int32"))
            # the phase first: it reads the index before the index moves
            out.append(BufferStore(self.regs, E.Select(wrap, self.phase ^ 1, self.phase),
                                   [const(1, "int32")]))
            out.append(BufferStore(self.regs, E.Select(wrap, const(0, "int32"), nxt),
                                   [const(0, "int32")]))
        return seq_of(out)


_FULL = {"tma": TMABar, "mbarrier": MBarrier}
_EMPTY = {"mbarrier": MBarrier, "tcgen05": TCGen05Bar}


class Pipeline:
    """``stages`` slots with a full and an empty barrier each (see the module docstring).

    ``producer``: ``"tma"`` (full barriers expect bytes: :meth:`producer_commit` takes
    ``nbytes``) or ``"mbarrier"`` (plain arrivals); ``consumer``: ``"mbarrier"`` (threads
    arrive on empty) or ``"tcgen05"`` (the MMA issuer commits to empty). ``producer_count`` /
    ``consumer_count``: arrivals that complete a full / empty phase.
    """

    def __init__(self, pool: SMEMPool | None, stages: int, *, producer: str = "tma",
                 consumer: str = "mbarrier", producer_count: int = 1, consumer_count: int = 1,
                 init_thread: Any = None, name: str = "pipe") -> None:
        self.stages = static_int(stages, "Pipeline: stages", minimum=1)
        if producer not in _FULL:
            raise ValueError(f"Pipeline: producer must be one of {sorted(_FULL)}, got "
                             f"{producer!r}")
        if consumer not in _EMPTY:
            raise ValueError(f"Pipeline: consumer must be one of {sorted(_EMPTY)}, got "
                             f"{consumer!r}")
        self.full = _FULL[producer](pool, self.stages, producer_count, init_thread=init_thread,
                                    name=f"{name}_full")
        self.empty = _EMPTY[consumer](pool, self.stages, consumer_count,
                                      init_thread=init_thread, name=f"{name}_empty")
        self.init_thread = init_thread

    def __tvm_script_bind__(self, name: str) -> Stmt:
        for bar, suffix in ((self.full, "full"), (self.empty, "empty")):
            bar.buffer.name = f"{name}_{suffix}"
            if bar._owned:
                bar.buffer.data.name = bar.buffer.name
        return self.init()

    def init(self) -> Stmt:
        body = seq_of([self.full.init_stmts(), self.empty.init_stmts(),
                       evaluate(_op.ptx_fence_mbarrier_init())])
        cond = True if self.init_thread is None else self.init_thread
        return seq_of([self.full.declare(), self.empty.declare(), when(cond, body),
                       evaluate(_op.cuda_cta_sync())])

    def _check(self, state: PipelineState) -> None:
        if not isinstance(state, PipelineState):
            raise TypeError(f"Pipeline: expected a PipelineState, got {type(state).__name__}")
        if state.stages != self.stages:
            raise ValueError(f"Pipeline: the state rings over {state.stages} stages, the "
                             f"pipeline has {self.stages}")

    def producer_acquire(self, state: PipelineState) -> Stmt:
        """Wait until the consumers released slot ``state.index`` (its previous use)."""
        self._check(state)
        return self.empty.wait(state.index, state.phase ^ 1)

    def producer_commit(self, state: PipelineState, nbytes: Any = None) -> Stmt:
        """Arrive on the slot's full barrier (announcing ``nbytes`` of TMA data)."""
        self._check(state)
        if isinstance(self.full, TMABar):
            return self.full.arrive(state.index, nbytes)
        return self.full.arrive(state.index)

    def consumer_wait(self, state: PipelineState) -> Stmt:
        """Wait until slot ``state.index`` is full."""
        self._check(state)
        return self.full.wait(state.index, state.phase)

    def consumer_release(self, state: PipelineState) -> Stmt:
        """Hand slot ``state.index`` back to the producer."""
        self._check(state)
        return self.empty.arrive(state.index)
