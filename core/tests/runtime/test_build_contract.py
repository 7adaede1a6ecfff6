"""The build contract (tvm.backend.contract): options, cache, dumps, export/load, builders."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pytest

import tvm
from tvm.backend import contract
from tvm.backend.contract import Artifact, Builder, Options, option
from tvm.error import BackendError, OptionError
from tvm.host.executable import HostOptions
from tvm.runtime.cache import compile_cache
from tvm.script import tirx as T
from tvm.target import Target


@pytest.fixture(autouse=True)
def _host_backend() -> None:
    tvm.driver.ensure_builtin_backends()  # a source checkout has no entry point for "c"


def _vadd():
    @T.prim_func
    def vadd(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
             C: T.Buffer((64,), "float32")):
        for i in range(64):
            C[i] = A[i] + B[i]

    return vadd


def _entries(root: Path, namespace: str = "c") -> list[Path]:
    return sorted((root / namespace).rglob("*.bin")) if (root / namespace).exists() else []


def test_options_parse_defaults_target_attrs_and_user_values() -> None:
    target = Target({"kind": "c", "opt_level": 3, "mcpu": "native"})
    opts = HostOptions.parse(target, {"extra_flags": ["-g"]})
    assert (opts.opt_level, opts.mcpu, opts.extra_flags, opts.cache) == (3, "native", ("-g",), True)
    assert HostOptions.parse(target, {"opt_level": 1}).opt_level == 1  # the call wins
    assert dataclasses.is_dataclass(opts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.opt_level = 0  # type: ignore[misc]
    assert "cache" not in opts.key() and opts.key()["opt_level"] == 3


def test_one_unknown_option_error_and_type_errors() -> None:
    with pytest.raises(OptionError, match=r"unknown compile option\(s\) \['bogus', 'zz'\] for "
                                          r"target 'c'; known: cache, cc, extra_flags, mcpu, "
                                          r"num_threads, opt_level"):
        tvm.compile(_vadd(), target="c", bogus=1, zz=2)
    with pytest.raises(TypeError, match="compile option 'opt_level' for target 'c' must be int, "
                                        "got str 'high'"):
        tvm.compile(_vadd(), target="c", opt_level="high")
    with pytest.raises(OptionError, match="'extra_flags' .* must be a list or tuple"):
        tvm.compile(_vadd(), target="c", extra_flags="-g")


def test_describe_lists_every_option_with_its_doc() -> None:
    rows = {name: (tp, default, doc) for name, tp, default, doc in HostOptions.describe()}
    assert rows["opt_level"] == ("int", 3, "optimisation level of the C compiler (-O<n>)")
    assert rows["cache"][1] is True


def test_tvm_cache_0_and_cache_dir_and_xdg(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "explicit"))
    tvm.compile(_vadd(), target="c")
    assert len(_entries(tmp_path / "explicit")) == 1
    monkeypatch.delenv("TVM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    tvm.compile(_vadd(), target="c")
    assert len(_entries(tmp_path / "xdg" / "tvm")) == 1
    monkeypatch.setenv("TVM_CACHE", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "off"))
    ex = tvm.compile(_vadd(), target="c")
    assert not (tmp_path / "off").exists()
    a = np.ones(64, "float32")
    c = np.zeros_like(a)
    ex(a, a, c)
    assert (c == 2).all()


def test_cache_hit_skips_compile_and_keeps_metadata(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    calls = []

    class Counting(contract.get_builder("c").__class__):  # type: ignore[misc]
        def compile(self, artifact, options):
            calls.append(1)
            return super().compile(artifact, options)

    builder = Counting()
    lowered = tvm.driver.lower(_vadd(), "c")
    monkeypatch.setitem(contract._RESOLVED, ("c", contract.BUILDERS["c"]), builder)
    first = contract.build(lowered, Target("c"), {})
    second = contract.build(lowered, Target("c"), {})
    assert calls == [1]
    assert second.metadata == first.metadata
    contract.build(lowered, Target("c"), {"cache": False})
    assert calls == [1, 1]


def test_unusable_cache_warns_once_and_builds(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TVM_CACHE_DIR", str(blocker))
    cache = compile_cache("c")
    monkeypatch.setattr(cache, "_warned", False)
    with pytest.warns(RuntimeWarning, match="compile cache at .* cannot be used"):
        ex = tvm.compile(_vadd(), target="c", opt_level=1)
    a = np.ones(64, "float32")
    c = np.zeros_like(a)
    ex(a, a, c)
    assert (c == 2).all()


def test_cache_entries_through_symlinks_or_fifos_are_not_read(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    tvm.compile(_vadd(), target="c")
    (entry,) = _entries(tmp_path)
    entry.unlink()
    entry.symlink_to("/dev/zero")
    tvm.compile(_vadd(), target="c")  # neither hangs nor loads it: rebuilt
    assert entry.is_file() and not entry.is_symlink()
    meta = entry.with_suffix(".json")
    meta.unlink()
    os.mkfifo(meta)
    tvm.compile(_vadd(), target="c")  # a FIFO does not block the open
    assert meta.is_file()


def test_entry_key_is_checked(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    cache = compile_cache("unit-keys")
    cache.put("aa" * 32, b"one")
    bin_a, meta_a = cache.paths("aa" * 32)
    bin_b, meta_b = cache.paths("bb" * 32)
    bin_b.parent.mkdir(parents=True, exist_ok=True)
    bin_b.write_bytes(bin_a.read_bytes())
    meta_b.write_bytes(meta_a.read_bytes())  # an entry copied under another key
    assert cache.get("bb" * 32) is None and not meta_b.exists()


def test_dump_dir_holds_every_build_stage(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TVM_DUMP_DIR", str(tmp_path))
    tvm.compile(_vadd(), target="c")
    stages = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("c-"))
    assert stages == ["c-01-source.c", "c-02-binary.so", "c-03-metadata.json"]


@dataclasses.dataclass(frozen=True)
class _ToyOptions(Options):
    scale: float = option(2.0, "what the toy multiplies by")


class _ToyBuilder(Builder):
    kind = "test_toy"
    options_type = _ToyOptions
    cached = False

    def codegen(self, mod, target, options):
        return Artifact("toy source", {"scale": options.scale})

    def compile(self, artifact, options):
        return b"toy binary", {"compiled": True}

    def load(self, binary, metadata, target):
        exe = tvm.runtime.Executable(target, ["toy"], binary=binary, metadata=metadata)
        return exe


def test_a_builder_by_reference_is_imported_on_first_use(monkeypatch) -> None:
    monkeypatch.setattr(contract, "BUILDERS", contract.Registry("builder"))
    monkeypatch.setattr(contract, "_RESOLVED", {})
    contract.register_builder("test_toy", f"{__name__}:_ToyBuilder")
    assert isinstance(contract.BUILDERS["test_toy"], str)
    builder = contract.get_builder("test_toy")
    assert isinstance(builder, _ToyBuilder) and contract.get_builder("test_toy") is builder
    contract.register_builder("broken", f"{__name__}:NoSuchClass")
    with pytest.raises(BackendError, match="names builder .*NoSuchClass.* for target kind "
                                           "'broken', which could not be made"):
        contract.get_builder("broken")
    with pytest.raises(TypeError, match="must be 'package.module:ClassName'"):
        contract.register_builder("x", "no-colon")
    with pytest.raises(TypeError, match="_ToyBuilder builds target kind 'test_toy', but it is "
                                        "registered for 'other'"):
        contract.register_builder("other", _ToyBuilder())
