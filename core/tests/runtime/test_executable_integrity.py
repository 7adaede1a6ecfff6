"""Integrity of exported executables and cache entries, and loading untrusted paths safely
(issue 26, items 2 and 3): digests over header and payload, content-addressed lookups, 0700
cache directories under any umask, ``expected_sha256`` pins, and clean errors for FIFOs,
devices, directories, oversized and malformed files."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvm
from tvm.error import ExecutableFileError, IntegrityError
from tvm.runtime import compile_cache, load_module, read_container, write_container
from tvm.script import tirx as T


@T.prim_func
def _vadd(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
          C: T.Buffer((64,), "float32")):
    for i in range(64):
        C[i] = A[i] + B[i]


@T.prim_func
def _vsub(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
          C: T.Buffer((64,), "float32")):
    for i in range(64):
        C[i] = A[i] - B[i]


def _export(tmp_path: Path, func: Any = _vadd, name: str = "vadd.tvmex") -> Path:
    path = tmp_path / name
    tvm.compile(func, target="c").export_library(path)
    return path


def _run(ex: Any) -> np.ndarray:
    a = np.arange(64, dtype="float32")
    b = np.full(64, 10, "float32")
    c = np.zeros(64, "float32")
    ex(a, b, c)
    return c


def _edit_header(path: Path, old: bytes, new: bytes) -> None:
    """Change the header in place, as a bit flip or a hand edit would (the digest stays)."""
    data = path.read_bytes()
    first, _, rest = data.partition(b"\n")
    header, _, payload = rest.partition(b"\n")
    assert header.count(old) == 1, old
    path.write_bytes(first + b"\n" + header.replace(old, new) + b"\n" + payload)


# -- digests of exported files ----------------------------------------------------------------


def test_a_changed_recorded_shape_is_an_integrity_error(tmp_path) -> None:
    # Before: [64] -> [68] loaded, and the kernel was allowed to write 4 elements past C.
    path = _export(tmp_path)
    _edit_header(path, b'"shape": [64], "strides": [], "var": null, "written": true',
                 b'"shape": [68], "strides": [], "var": null, "written": true')
    with pytest.raises(IntegrityError, match=rf"^{path}: its contents do not match the digest "
                                             r"in its first line \(recorded sha256:[0-9a-f]{64}, "
                                             r"computed sha256:[0-9a-f]{64}\): the file was "
                                             r"damaged or changed after it was exported"):
        load_module(path)


def test_a_cleared_written_flag_is_an_integrity_error(tmp_path) -> None:
    path = _export(tmp_path)
    _edit_header(path, b'"written": true', b'"written": false')
    with pytest.raises(IntegrityError, match="do not match the digest"):
        load_module(path)


def test_a_flipped_payload_bit_is_an_integrity_error(tmp_path) -> None:
    path = _export(tmp_path)
    data = bytearray(path.read_bytes())
    data[-200] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="do not match the digest"):
        load_module(path)


def test_files_of_the_previous_format_are_refused_with_a_fix(tmp_path) -> None:
    path = _export(tmp_path)
    first, _, rest = path.read_bytes().partition(b"\n")
    path.write_bytes(b"TVM-EXECUTABLE 2\n" + rest)
    with pytest.raises(ExecutableFileError, match="has executable format 2, written by an older "
                                                  "tvm .* compile and export it again"):
        load_module(path)


def test_expected_sha256_pins_the_file(tmp_path) -> None:
    path = _export(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    np.testing.assert_array_equal(_run(load_module(path, expected_sha256=digest)),
                                  np.arange(64) + 10)
    assert load_module(path, expected_sha256=f"sha256:{digest.upper()}") is not None
    other = _export(tmp_path, _vsub, "vsub.tvmex")  # a valid file, but not the pinned one
    with pytest.raises(IntegrityError, match=rf"^{other}: its SHA-256 is [0-9a-f]{{64}}, not the "
                                             rf"expected {digest}: this is not the file that "
                                             r"was pinned; do not load it$"):
        load_module(other, expected_sha256=digest)
    with pytest.raises(ValueError, match=r"expected_sha256='abc' is not a SHA-256"):
        load_module(path, expected_sha256="abc")


# -- the cache ----------------------------------------------------------------------------------


def test_a_planted_loaded_entry_is_not_what_loading_runs(tmp_path) -> None:
    path = _export(tmp_path)
    _, payload = read_container(path)
    other = tmp_path / "vsub.tvmex"
    tvm.compile(_vsub, target="c").export_library(other)
    _, evil = read_container(other)
    # A self-consistent entry (record, digest, checksum) under the good binary's content key.
    key = hashlib.sha256(payload).hexdigest()
    planted = compile_cache("loaded").put(key, evil)
    assert planted.read_bytes() == evil
    # Before: loading vadd ran vsub's code (a - b).
    np.testing.assert_array_equal(_run(load_module(path)), np.arange(64) + 10)
    assert planted.read_bytes() == payload  # the planted entry was replaced by the real one


def test_an_edited_cache_record_is_a_miss(tmp_path) -> None:
    cache = compile_cache("c")
    key = "ab" * 32
    cache.put(key, b"binary", {"arch": "x"})
    _, meta = cache.paths(key)
    record = json.loads(meta.read_text())
    assert record["digest"] == hashlib.sha256(json.dumps(
        {k: v for k, v in record.items() if k != "digest"}, sort_keys=True,
        separators=(",", ":")).encode()).hexdigest()
    record["meta"]["arch"] = "y"  # the binary's checksum still matches; the record does not
    meta.write_text(json.dumps(record))
    assert cache.get_path(key) is None and not meta.exists()


def test_every_directory_the_cache_creates_is_private_under_umask_002(tmp_path,
                                                                      monkeypatch) -> None:
    root = tmp_path / "a" / "b" / "tvm"
    monkeypatch.setenv("TVM_CACHE_DIR", str(root))
    old = os.umask(0o002)
    try:
        tvm.compile(_vadd, target="c")
    finally:
        os.umask(old)
    created = [tmp_path / "a", tmp_path / "a" / "b", root]
    created += [p for p in root.rglob("*") if p.is_dir()]
    assert len(created) >= 5  # a, a/b, tvm, tvm/c, tvm/c/<xx>
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in created}
    assert set(modes.values()) == {"0o700"}, modes


def test_an_existing_cache_directory_keeps_its_mode(tmp_path, monkeypatch) -> None:
    root = tmp_path / "shared"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    monkeypatch.setenv("TVM_CACHE_DIR", str(root))
    tvm.compile(_vadd, target="c")
    assert stat.S_IMODE(root.stat().st_mode) == 0o755


# -- what load_module refuses before reading ---------------------------------------------------


def _load_in_thread(path: Any) -> BaseException | None:
    """load_module(path) with a time limit: a FIFO used to block for ever."""
    out: list[BaseException | None] = [None]

    def run() -> None:
        try:
            load_module(path)
        except BaseException as err:
            out[0] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), f"load_module({path}) did not return"
    return out[0]


def test_a_fifo_is_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "pipe.tvmex"
    os.mkfifo(fifo)
    err = _load_in_thread(fifo)
    assert isinstance(err, ExecutableFileError)
    assert str(err) == f"{fifo} is a FIFO (named pipe), not a regular file"


def test_a_device_is_refused_without_reading(tmp_path) -> None:
    err = _load_in_thread("/dev/zero")
    assert isinstance(err, ExecutableFileError)
    assert str(err) == "/dev/zero is a character device, not a regular file"


def test_a_directory_is_refused(tmp_path) -> None:
    with pytest.raises(ExecutableFileError, match=rf"^{tmp_path} is a directory, not a regular "
                                                  r"file$"):
        load_module(tmp_path)


def test_a_file_over_the_size_bound_is_refused_before_reading(tmp_path, monkeypatch) -> None:
    path = _export(tmp_path)
    size = path.stat().st_size
    monkeypatch.setenv("TVM_MAX_EXECUTABLE_BYTES", str(size - 1))
    with pytest.raises(ExecutableFileError, match=rf"^{path} is {size} bytes, more than the "
                                                  rf"{size - 1} bytes read from such a file$"):
        load_module(path)
    monkeypatch.setenv("TVM_MAX_EXECUTABLE_BYTES", str(size))
    assert load_module(path) is not None


# -- malformed files: a tvm error naming the file and the field -------------------------------


def _rewrite(tmp_path: Path, edit: Any, payload: bytes | None = None) -> Path:
    """The vadd file with its header edited by ``edit`` and written with a valid digest (what
    a buggy or hostile writer produces: the digest cannot catch it)."""
    header, good = read_container(_export(tmp_path))
    header = copy.deepcopy(header)
    edit(header)
    path = tmp_path / "edited.tvmex"
    write_container(path, header, good if payload is None else payload)
    return path


def _set(*keys: str, value: Any) -> Any:
    def edit(header: dict[str, Any]) -> None:
        node = header
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return edit


def _drop(*keys: str) -> Any:
    def edit(header: dict[str, Any]) -> None:
        node = header
        for k in keys[:-1]:
            node = node[k]
        del node[keys[-1]]
    return edit


_PARAM = ("metadata", "arguments", "_vadd", "params")


@pytest.mark.parametrize(("edit", "message"), [
    (_set("target", value="c"), r"header field 'target' must be an object with a string 'kind', "
                                r"not \"c\""),
    (_set("target", value={"opt_level": 3}), r"header field 'target' must be an object with a "
                                             r"string 'kind'"),
    (_drop("entries"), r"header field 'entries' is missing"),
    (_set("entries", value=["vadd", 3]), r"header field 'entries' must be a list of function "
                                          r"names, not \[\"vadd\", 3\]"),
    (_set("metadata", value=[]), r"header field 'metadata' must be an object, not \[\]"),
    (_set("builder_format", value="1"), r"header field 'builder_format' must be an integer, "
                                         r"not \"1\""),
    (_drop("metadata", "functions"), r"field 'functions' is missing from its build metadata"),
    (_set("metadata", "functions", value=[1]), r"its build metadata or binary is malformed "
                                               r"\(AttributeError: "),
    (_set(*_PARAM, value=[{"name": "A", "kind": "buffer", "dtype": "floaty"}]),
     r"malformed build metadata: parameter 'A': field 'dtype' must be a data type, not 'floaty'"),
    (_set(*_PARAM, value=[{"name": "A", "kind": "buffer", "dtype": "float32",
                           "shape": ["n", {"x": 1}]}]),
     r"malformed build metadata: parameter 'A': field 'shape' must be a list of dimensions"),
    (_set(*_PARAM, value=[{"name": "A", "kind": "buffer", "dtype": "float32",
                           "written": "no"}]),
     r"malformed build metadata: parameter 'A': field 'written' must be true or false"),
    (_set("target", value={"kind": "c", "opt_level": "fast"}),
     r"target kind 'c': attribute 'opt_level' must be int, got str 'fast'"),
], ids=["target-str", "target-no-kind", "no-entries", "entries-int", "metadata-list",
        "builder-format-str", "no-functions", "functions-list", "param-dtype", "param-shape",
        "param-written", "target-attr"])
def test_malformed_headers_are_tvm_errors_naming_file_and_field(tmp_path, edit, message) -> None:
    path = _rewrite(tmp_path, edit)
    with pytest.raises(tvm.error.TVMError, match=rf"^{path}: {message}"):
        load_module(path)


def _raw(tmp_path: Path, header_line: bytes, payload: bytes = b"") -> Path:
    body = header_line + b"\n" + payload
    path = tmp_path / "raw.tvmex"
    path.write_bytes(b"TVM-EXECUTABLE 3 sha256:" + hashlib.sha256(body).hexdigest().encode()
                     + b"\n" + body)
    return path


@pytest.mark.parametrize(("line", "message"), [
    (b"\xff\xfe not utf-8", r"the header is not JSON \('utf-8' codec can't decode"),
    (b"[1, 2]", r"the header is a JSON list, not an object"),
    (b"{\"target\": {\"kind\": \"c\"}, \"entries\": []}", r"header field 'payload_size' is "
                                                           r"missing"),
    (b"[" * 100000, r"the header is not JSON"),
], ids=["not-utf8", "json-list", "no-payload-size", "deep-json"])
def test_undecodable_headers_name_the_file(tmp_path, line, message) -> None:
    path = _raw(tmp_path, line)
    with pytest.raises(ExecutableFileError, match=rf"^{path}: {message}"):
        load_module(path)


@pytest.mark.parametrize("first", [b"TVM-EXECUTABLE x\n", b"TVM-EXECUTABLE 3\n",
                                   b"TVM-EXECUTABLE 3 md5:abc\n", b"TVM-EXECUTABLE 3 sha256:"])
def test_malformed_first_lines_name_the_file(tmp_path, first) -> None:
    path = tmp_path / "first.tvmex"
    path.write_bytes(first + b"{}\n")
    with pytest.raises(ExecutableFileError, match=rf"^{path}: (malformed first line|the first "
                                                  r"line has no 'sha256:<64 hex digits>' digest)"):
        load_module(path)


def test_a_payload_that_is_not_a_shared_object_is_a_tvm_error(tmp_path) -> None:
    path = _rewrite(tmp_path, lambda h: None, payload=b"\x7fELF, but not really")
    with pytest.raises(tvm.error.TVMError, match=rf"^{path}: could not load the compiled module"):
        load_module(path)
