"""Pass, PassContext, Sequential, instruments, TVM_DUMP_DIR."""

from __future__ import annotations

import dataclasses

import pytest

from tvm import ir
from tvm.ir import IRModule, PrimFunc, Var
from tvm.transform import (
    ModulePass,
    PassContext,
    PassInstrument,
    PrimFuncPass,
    Sequential,
    module_pass,
    prim_func_pass,
)


def _func(name: str = "main") -> PrimFunc:
    A = ir.Buffer("A", [4], "float32")
    i = Var("i")
    body = ir.For(i, 0, 4, ir.ForKind.SERIAL, ir.BufferStore(A, ir.FloatImm("float32", 1.0), [i]))
    return PrimFunc([A.data], body, {A.data: A}, name=name)


def _renamer(tag: str):
    @prim_func_pass(name=f"Tag{tag}")
    def tag_pass(func, mod, ctx):
        return func.with_attr("tags", func.attrs.get("tags", "") + tag)

    return tag_pass


def test_prim_func_pass_runs_on_every_function():
    mod = IRModule({"a": _func("a"), "b": _func("b")})
    out = _renamer("x")(mod)
    assert [f.attrs["tags"] for f in out.functions.values()] == ["x", "x"]
    assert "tags" not in mod["a"].attrs  # the input is untouched


def test_prim_func_pass_accepts_a_primfunc():
    out = _renamer("y")(_func())
    assert isinstance(out, IRModule)
    assert out["main"].attrs["tags"] == "y"


def test_prim_func_pass_can_remove_a_function():
    drop = prim_func_pass(lambda f, m, c: None if f.name == "a" else f, name="DropA")
    out = drop(IRModule({"a": _func("a"), "b": _func("b")}))
    assert list(out.functions) == ["b"]


def test_module_pass_decorator_forms():
    @module_pass
    def first(mod, ctx):
        return mod.with_function("extra", _func("extra"))

    @module_pass(opt_level=1, name="Second")
    def second(mod, ctx):
        return mod

    assert first.pass_name == "first" and first.info.opt_level == 0
    assert second.pass_name == "Second" and second.info.opt_level == 1
    assert "extra" in first(IRModule.from_expr(_func()))


def test_module_pass_must_return_a_module():
    bad = module_pass(lambda mod, ctx: 3, name="Bad")
    with pytest.raises(TypeError, match="module pass Bad returned int, not an IRModule"):
        bad(_func())


def test_typed_options_are_frozen_dataclass_fields():
    @dataclasses.dataclass(frozen=True)
    class Scale(PrimFuncPass):
        factor: int = 2
        name = "Scale"

        def transform_function(self, func, mod, ctx):
            return func.with_attr("factor", self.factor)

    p = Scale(factor=3)
    assert p.options() == {"factor": 3}
    assert str(p) == "Scale(factor=3)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.factor = 4  # type: ignore[misc]
    assert p(_func())["main"].attrs["factor"] == 3


def test_sequential_runs_in_order_and_prints():
    seq = Sequential([_renamer("a"), _renamer("b"), _renamer("c")], name="abc")
    assert seq(_func())["main"].attrs["tags"] == "abc"
    assert len(seq) == 3 and seq[1].pass_name == "Tagb"
    assert repr(seq) == "Sequential('abc', [\n  Taga(),\n  Tagb(),\n  Tagc(),\n])"


def test_nested_sequential_prints_indented():
    inner = Sequential([_renamer("a")], name="inner")
    outer = Sequential([inner, _renamer("b")], name="outer")
    assert repr(outer) == ("Sequential('outer', [\n  Sequential('inner', [\n    Taga(),\n  ]),\n"
                           "  Tagb(),\n])")
    assert repr(Sequential([], name="empty")) == "Sequential('empty', [])"


def test_sequential_rejects_non_passes():
    with pytest.raises(TypeError, match="is not a Pass"):
        Sequential([lambda m: m])  # type: ignore[list-item]


def test_opt_level_disabled_and_required():
    high = prim_func_pass(lambda f, m, c: f.with_attr("high", True), opt_level=3, name="High")
    with PassContext(opt_level=2):
        assert "high" not in high(_func())["main"].attrs
    with PassContext(opt_level=2, required_pass=["High"]):
        assert high(_func())["main"].attrs["high"] is True
    with PassContext(opt_level=3, disabled_pass=["High"]):
        assert "high" not in high(_func())["main"].attrs


def test_pass_context_current_and_nesting():
    default = PassContext.current()
    with PassContext(config={"k": 1}) as outer:
        assert PassContext.current() is outer
        with PassContext(config={"k": 2}) as inner:
            assert PassContext.current() is inner
            assert PassContext.current().config["k"] == 2
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_pass_context_rejects_bad_opt_level():
    with pytest.raises(ValueError, match="opt_level must be a non-negative int"):
        PassContext(opt_level=-1)


class _Recorder(PassInstrument):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def enter_pass_ctx(self) -> None:
        self.log.append(f"{self.name}:enter")

    def exit_pass_ctx(self) -> None:
        self.log.append(f"{self.name}:exit")

    def run_before_pass(self, mod, info) -> None:
        self.log.append(f"{self.name}:before:{info.name}")

    def run_after_pass(self, mod, info) -> None:
        self.log.append(f"{self.name}:after:{info.name}")


def test_instruments_run_around_each_pass_in_order():
    log: list[str] = []
    seq = Sequential([_renamer("a"), _renamer("b")], name="seq")
    with PassContext(instruments=[_Recorder("I1", log), _Recorder("I2", log)]):
        seq(_func())
    assert log == [
        "I1:enter", "I2:enter",
        "I1:before:seq", "I2:before:seq",
        "I1:before:Taga", "I2:before:Taga", "I1:after:Taga", "I2:after:Taga",
        "I1:before:Tagb", "I2:before:Tagb", "I1:after:Tagb", "I2:after:Tagb",
        "I1:after:seq", "I2:after:seq",
        "I1:exit", "I2:exit",
    ]


def test_instrument_sees_module_before_and_after():
    seen = []

    class Watch:  # duck-typed: only the hooks it needs
        def run_before_pass(self, mod, info):
            seen.append(("before", mod["main"].attrs.get("tags")))

        def run_after_pass(self, mod, info):
            seen.append(("after", mod["main"].attrs.get("tags")))

    with PassContext(instruments=[Watch()]):
        _renamer("z")(_func())
    assert seen == [("before", None), ("after", "z")]


def test_should_run_can_skip_a_pass():
    class SkipB:
        def should_run(self, mod, info):
            return info.name != "Tagb"

    with PassContext(instruments=[SkipB()]):
        out = Sequential([_renamer("a"), _renamer("b"), _renamer("c")])(_func())
    assert out["main"].attrs["tags"] == "ac"


def test_dump_dir_env_writes_one_file_per_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path))
    with PassContext():
        Sequential([_renamer("a"), _renamer("b")], name="seq")(_func())
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["00_input.py", "01_Taga.py", "02_Tagb.py"]
    for p in tmp_path.iterdir():
        assert p.read_text().strip()  # some text: the script, or the plain fallback


def test_dump_dir_argument_and_pass_name_sanitized(tmp_path):
    odd = prim_func_pass(lambda f, m, c: f, name="tirx.Odd Name")
    with PassContext(dump_dir=tmp_path / "d"):
        odd(_func())
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["00_input.py", "01_tirx_Odd_Name.py"]


def test_dump_falls_back_when_printing_fails(tmp_path, monkeypatch):
    def boom(self, **kw):
        raise RuntimeError("printer broke")

    monkeypatch.setattr(IRModule, "script", boom)
    with PassContext(dump_dir=tmp_path):
        _renamer("a")(_func())
    text = (tmp_path / "01_Taga.py").read_text()
    assert text.startswith("# TVMScript printing failed (RuntimeError: printer broke)")
    assert "IRModule(" in text


def test_no_dump_without_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("TVM_DUMP_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    with PassContext():
        _renamer("a")(_func())
    assert list(tmp_path.iterdir()) == []


def test_base_pass_is_abstract():
    class Nothing(ModulePass):
        pass

    with pytest.raises(NotImplementedError, match="Nothing does not implement transform_module"):
        Nothing()(_func())
