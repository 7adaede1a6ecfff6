"""Op aliases: a second name that resolves to a registered op (a backend's flat seed spelling)."""

from __future__ import annotations

import pytest

from tvm._registry import transaction
from tvm.error import RegistrationConflict
from tvm.ir import Call, Op, OpCategory
from tvm.ir.op import OP_ALIASES
from tvm.script import from_source
from tvm.tirx.op import call_intrin


class _Rollback(Exception):
    pass


def _register() -> Op:
    op = Op.register("tirx.aliastest.ping", category=OpCategory.DEVICE_INTRIN,
                     namespace="aliastest", dtype="int32")
    Op.register_alias("tirx.aliastest_ping", "tirx.aliastest.ping")
    return op


def test_alias_resolves_to_the_same_op_and_is_not_listed() -> None:
    with pytest.raises(_Rollback), transaction("alias-test"):
        op = _register()
        assert Op.get("tirx.aliastest_ping") is op
        assert Op.exists("tirx.aliastest_ping")
        assert Op.aliases_of("tirx.aliastest.ping") == ["tirx.aliastest_ping"]
        assert [o.name for o in Op.list("tirx.aliastest")] == ["tirx.aliastest.ping"]
        call = call_intrin("int32", "tirx.aliastest_ping")
        assert isinstance(call, Call) and call.op is op
        Op.register_alias("tirx.aliastest_ping", "tirx.aliastest.ping")  # same pair: no-op
        raise _Rollback
    # the failed registration took its alias with it
    assert "tirx.aliastest_ping" not in OP_ALIASES
    assert not Op.exists("tirx.aliastest_ping")


def test_alias_cannot_shadow_an_op_nor_an_op_take_an_alias_name() -> None:
    with pytest.raises(_Rollback), transaction("alias-test"):
        _register()
        with pytest.raises(RegistrationConflict, match="would shadow"):
            Op.register_alias("tirx.aliastest.ping", "tirx.aliastest.ping")
        with pytest.raises(RegistrationConflict, match="would shadow"):
            Op.register_alias("tirx.sqrt", "tirx.aliastest.ping")
        with pytest.raises(RegistrationConflict, match="is an alias of 'tirx.aliastest.ping'"):
            Op.register("tirx.aliastest_ping")
        with pytest.raises(RegistrationConflict, match="registered twice"):
            Op.register_alias("tirx.aliastest_ping", "tirx.sqrt")
        raise _Rollback


def test_call_through_an_alias_prints_and_parses_as_the_canonical_op() -> None:
    with pytest.raises(_Rollback), transaction("alias-test"):
        op = _register()
        text = (
            "from tvm.script import tirx as T\n\n"
            "@T.prim_func\n"
            "def f():\n"
            '    T.evaluate(T.call_intrin("int32", "tirx.aliastest_ping"))\n'
        )
        func = from_source(text)
        printed = func.script()
        assert '"tirx.aliastest.ping"' in printed and "aliastest_ping" not in printed
        assert from_source(printed).script() == printed
        assert func.body.value.op is op
        raise _Rollback
