"""Warp and warpgroup specialisation: which warps (or warpgroups) play which role, and the
register split between roles (``setmaxnreg``, sm_90a).

In a ``@T.prim_func`` body (384 threads: one producer warpgroup, two consumers)::

    wg = T.warpgroup_id([3])
    role = WarpgroupRole(wg, producer=0, consumer=[1, 2], regs={"producer": 40, "consumer": 232})
    if role.producer:                 # an expression: wg == 0
        role.setmaxnreg("producer")   # setmaxnreg.dec.sync.aligned.u32 40
        ...
    else:
        role.setmaxnreg("consumer")   # setmaxnreg.inc.sync.aligned.u32 232
        c = role.index("consumer")    # 0 or 1: which consumer this warpgroup is

``setmaxnreg`` takes effect only when the kernel has a register cap at entry
(``T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})`` gives ``__launch_bounds__(384, 1)``)
and each role is one branch of one if/else (HOPPER.md). The helper checks the budget: the
registers of all roles' threads must fit the SM's 65536, each count a multiple of 8 in
[24, 256]; a role whose count is above the cap at entry (65536 / threads, rounded down to a
multiple of 8, at most 255) increases, one below it decreases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tvm.ir import IfThenElse, PrimExpr, SeqStmt, Stmt, const
from tvm.ir import expr as E

from .. import op as _op
from ._emit import evaluate, static_int

__all__ = ["WarpRole", "WarpgroupRole"]

REGISTERS_PER_SM = 65536


class _Roles:
    unit = "warp"
    threads = 32

    def __init__(self, ident: Any, roles: Mapping[str, Any] | int | Sequence[int] | None = None,
                 *, regs: Mapping[str, int] | int | None = None, increase: bool = False,
                 **kw_roles: Any) -> None:
        if not isinstance(ident, PrimExpr):
            raise TypeError(f"{type(self).__name__}: the first argument is the {self.unit} index "
                            f"(e.g. T.{self.unit}_id([n])), got {ident!r}")
        # the seed's scoped form: `with WarpgroupRole(wg, 2, regs=200, increase=True):`
        self._scoped = roles is not None and not isinstance(roles, Mapping)
        self._increase = increase
        if self._scoped:
            if kw_roles:
                raise TypeError(f"{type(self).__name__}({self.unit} ids, ...): named roles "
                                f"{sorted(kw_roles)} do not go with the one-role form")
            roles = {"role": roles}
            if regs is not None and not isinstance(regs, Mapping):
                regs = {"role": regs}
        elif regs is not None and not isinstance(regs, Mapping):
            raise TypeError(f"{type(self).__name__}: regs is a dict role -> registers here "
                            f"(regs={{'producer': 40}}); an int goes with the one-role form "
                            f"{type(self).__name__}(ident, {self.unit}_ids, regs=n)")
        table: dict[str, Any] = dict(roles) if isinstance(roles, Mapping) else {}
        table.update(kw_roles)
        if not table:
            raise ValueError(f"{type(self).__name__}: give at least one role, e.g. producer=0")
        self.ident = ident
        self.roles: dict[str, list[int]] = {}
        owner: dict[int, str] = {}
        for name, members in table.items():
            ids = [members] if isinstance(members, int) else list(members)
            ids = [static_int(i, f"{type(self).__name__}: role {name!r}: {self.unit}", minimum=0)
                   for i in ids]
            if not ids:
                raise ValueError(f"{type(self).__name__}: role {name!r} has no {self.unit}s")
            for i in ids:
                if i in owner:
                    raise ValueError(f"{type(self).__name__}: {self.unit} {i} is in roles "
                                     f"{owner[i]!r} and {name!r}")
                owner[i] = name
            self.roles[name] = ids
        self.count = max(owner) + 1
        self.regs = self._check_regs(dict(regs or {}))

    # -- registers -----------------------------------------------------------------------------
    def _check_regs(self, regs: dict[str, int]) -> dict[str, int]:
        for name, n in regs.items():
            if name not in self.roles:
                raise ValueError(f"{type(self).__name__}: regs for unknown role {name!r}; roles: "
                                 f"{sorted(self.roles)}")
            if not isinstance(n, int) or n % 8 or not 24 <= n <= 256:
                raise ValueError(f"{type(self).__name__}: regs[{name!r}] = {n!r}: setmaxnreg "
                                 "takes a multiple of 8 in [24, 256]")
        if regs:
            total = 0
            for name, ids in self.roles.items():
                total += len(ids) * self.threads * regs.get(name, self.entry_regs)
            if total > REGISTERS_PER_SM:
                raise ValueError(
                    f"{type(self).__name__}: the roles ask for {total} registers "
                    f"({', '.join(f'{k}: {len(self.roles[k])} x {self.threads} x {v}' for k, v in regs.items())}); "
                    f"an SM has {REGISTERS_PER_SM}. Lower the register counts.")
        return regs

    @property
    def entry_regs(self) -> int:
        """Registers per thread at kernel entry under ``__launch_bounds__(threads, 1)``."""
        return min(255, REGISTERS_PER_SM // (self.count * self.threads)) // 8 * 8

    def setmaxnreg(self, role: str) -> Stmt:
        """``setmaxnreg.{inc|dec}`` to the role's register count (run by all its threads)."""
        if role not in self.regs:
            raise ValueError(f"{type(self).__name__}: no register count for role {role!r} "
                             "(give regs={...})")
        n = self.regs[role]
        return evaluate(_op.ptx_setmaxnreg(n > self.entry_regs, n))

    # -- membership ----------------------------------------------------------------------------
    def is_(self, role: str) -> PrimExpr:
        """True in the role's {unit}s."""
        ids = self._ids(role)
        lo, hi = min(ids), max(ids)
        if ids == list(range(lo, hi + 1)):
            if len(ids) == 1:
                return E.EQ(self.ident, const(lo, self.ident.dtype))
            return E.And(E.GE(self.ident, const(lo, self.ident.dtype)),
                         E.LE(self.ident, const(hi, self.ident.dtype)))
        cond: PrimExpr = E.EQ(self.ident, const(ids[0], self.ident.dtype))
        for i in ids[1:]:
            cond = E.Or(cond, E.EQ(self.ident, const(i, self.ident.dtype)))
        return cond

    def index(self, role: str) -> PrimExpr:
        """The position of this {unit} among the role's (0, 1, ...; contiguous roles only)."""
        ids = self._ids(role)
        if ids != list(range(ids[0], ids[0] + len(ids))):
            raise ValueError(f"{type(self).__name__}: index() needs role {role!r} to be "
                             f"contiguous {self.unit}s, got {ids}")
        return self.ident if ids[0] == 0 else self.ident - ids[0]

    def size(self, role: str) -> int:
        return len(self._ids(role))

    def _ids(self, role: str) -> list[int]:
        ids = self.roles.get(role)
        if ids is None:
            raise AttributeError(f"{type(self).__name__} has no role {role!r}; roles: "
                                 f"{sorted(self.roles)}")
        return ids

    # -- the seed's scoped form ------------------------------------------------------------------
    def __tvm_scope__(self, body: Stmt) -> Stmt:
        """``with WarpgroupRole(wg, 2, regs=200, increase=True): body`` in a script: ``if wg ==
        2:`` with ``setmaxnreg`` (inc with ``increase``, else dec) before the body."""
        if not self._scoped:
            raise ValueError(f"`with {type(self).__name__}(...)` takes the one-role form "
                             f"{type(self).__name__}(ident, {self.unit}_ids, regs=n, "
                             f"increase=False); with named roles write `if role.<name>:`")
        stmts = [body]
        if "role" in self.regs:
            stmts.insert(0, evaluate(_op.ptx_setmaxnreg(self._increase, self.regs["role"])))
        return IfThenElse(self.is_("role"), SeqStmt(stmts) if len(stmts) > 1 else body)

    def __getattr__(self, name: str) -> PrimExpr:
        if name.startswith("_") or name in ("roles", "regs", "ident", "count"):
            raise AttributeError(name)
        return self.is_(name)


class WarpRole(_Roles):
    """Roles of warps: ``WarpRole(warp_id, tma=0, mma=1, epilogue=[2, 3, 4, 5])``;
    ``role.tma`` is the condition ``warp_id == 0``. (``setmaxnreg`` works per warpgroup: use
    :class:`WarpgroupRole` for a register split.)"""

    unit = "warp"
    threads = 32

    def setmaxnreg(self, role: str) -> Stmt:
        raise ValueError("WarpRole: setmaxnreg applies to whole warpgroups; use WarpgroupRole "
                         "(the one-role scoped form `with WarpRole(w, i, regs=n):` emits it as "
                         "the seed does: every warp of the warpgroup must run the same count)")


class WarpgroupRole(_Roles):
    """Roles of warpgroups (4 consecutive warps, 128 threads):
    ``WarpgroupRole(wg_id, producer=0, consumer=[1, 2], regs={...})``."""

    unit = "warpgroup"
    threads = 128

