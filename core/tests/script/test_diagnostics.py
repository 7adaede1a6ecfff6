"""Every parse error names file, line and column and shows the source line with a caret."""

from __future__ import annotations

import inspect
import sys
import traceback

import pytest

from tvm._hints import install_hint
from tvm.error import DiagnosticError
from tvm.script import from_source
from tvm.script import tirx as T
from tvm.testing import skip_if_installed

HEADER = '@T.prim_func\ndef f(A: T.Buffer((16, 16), "float32"), n: T.int32):\n'

# (case id, body (starts on line 3), line, column (0-based), message)
CASES = [
    ("undefined_name", "    A[0, 0] = undefined_thing + 1\n", 3, 14,
     "name 'undefined_thing' is not defined"),
    ("builder_arg_count", '    B = T.alloc_buffer((4,), "float32", "shared", 3)\n', 3, 8,
     "T.alloc_buffer() takes from 1 to 2 positional arguments but 4 were given"),
    ("builder_keyword", '    B = T.alloc_buffer((4,), "float32", scop="shared")\n', 3, 8,
     "T.alloc_buffer() got an unexpected keyword argument 'scop'"),
    ("scope_id_arg_count", "    bx = T.cta_id([4], [2])\n", 3, 9,
     "T.cta_id() takes from 0 to 1 positional arguments but 2 were given"),
    ("tile_keyword", "    T.tile.copy(A, Src=A)\n", 3, 4,
     "Tx.copy got keyword argument 'Src'; did you mean 'src'? (signature: copy(dst, src); a "
     "keyword that is not a parameter is a config entry: write config={'Src': ...} to mean "
     "that)"),
    ("tile_arg_count", "    T.cta.copy(A)\n", 3, 4,
     "Tx.copy is missing argument 'src' (signature: copy(dst, src))"),
    ("float_loop_extent", "    for i in range(2.5):\n        pass\n", 3, 13,
     "loop extent must be an integer, got a float value"),
    ("float_typed_loop_extent", "    for i in T.serial(T.float32(4)):\n        pass\n", 3, 13,
     "loop extent must be an integer, got a float32 value"),
    ("store_index_count", "    A[0] = T.float32(1)\n", 3, 4,
     "buffer A has 2 dimension(s) but 1 index(es) were given: fewer indices name a region, "
     "which cannot be assigned; give one index per dimension, or use Tx.copy / Tx.fill for a "
     "region"),
    ("load_index_count", "    A[0, 0] = A[1, 2, 3]\n", 3, 14,
     "buffer A has 2 dimension(s) but 3 index(es) were given"),
    ("try", "    try:\n        pass\n    except Exception:\n        pass\n", 3, 4,
     "unsupported Python in TVMScript: `try` statements"),
    ("foreign_with", '    with open("never-opened") as fh:\n        pass\n', 3, 9,
     "unsupported Python in TVMScript: `with` statements other than `with T.attr({...}):`, "
     "`with T.let(v) as x:`, `with T.launch_thread(axis, n) [as x]:`, `with "
     "Tx.compose_op(...):` and scope builders (classes with __tvm_scope__, e.g. WarpRole)"),
    ("while_else", "    while n < 3:\n        pass\n    else:\n        pass\n", 3, 4,
     "unsupported Python in TVMScript: `while ... else`"),
    ("while_int_condition", "    while n:\n        pass\n", 3, 10,
     "a while loop's condition must be a bool expression, got int32; compare it, e.g. "
     "`while n[0] != 0:`"),
    ("yield", "    yield 1\n", 3, 4, "unsupported Python in TVMScript: `yield` (generators)"),
    ("return_value", "    return 1\n", 3, 4, "unsupported Python in TVMScript: `return` with a value"),
    ("for_else", "    for i in range(2):\n        pass\n    else:\n        pass\n", 3, 4,
     "unsupported Python in TVMScript: `for ... else`"),
    ("bad_dtype", '    B = T.alloc_buffer((4,), "float33")\n', 3, 8,
     "data type 'float33': float supports widths (16, 32, 64)"),
    ("tile_only", "    T.tile.exp(n, A)\n", 3, 4,
     "Tx.exp is tile-only and expects `dst` to be a Buffer or BufferRegion; use T.exp for "
     "expression/builtin calls"),
    ("scope_prefix", "    T.cta.exp10(A, A)\n", 3, 4,
     "'Tx.cta.exp10' is not a tile primitive; the 'Tx.cta.' scope prefix applies only to tile "
     "primitives; did you mean 'exp' or 'exp2'?"),
    ("syntax_error", "    A[0, 0] = = 1\n", 3, 14, "invalid syntax"),
    ("nested_def_decorated", "    @T.prim_func\n    def g():\n        pass\n", 3, 5,
     "a function defined inside a script is a helper expanded where it is called: write it "
     "without a decorator, or with @T.inline"),
    ("assign_region", "    A[0:2, 0] = T.float32(1)\n", 3, 4,
     "cannot assign to a buffer region; use Tx.copy or Tx.fill"),
    ("grid_arity", "    for i, j in T.grid(4):\n        pass\n", 3, 8,
     "T.grid has 1 extents but 2 loop variables"),
    ("missing_annotation", "    pass\n", 2, 40, None),
]


@pytest.mark.parametrize("case, body, line, col, message", CASES, ids=[c[0] for c in CASES])
def test_diagnostic(case: str, body: str, line: int, col: int, message: str | None) -> None:
    text = HEADER + body
    if case == "missing_annotation":
        text = '@T.prim_func\ndef f(A: T.Buffer((16, 16), "float32"), n):\n' + body
        message = ("parameter n needs a type annotation, e.g. `n: T.int32` or "
                   "`n: T.Buffer((n,), \"float32\")`")
    if case == "builder_keyword" and sys.version_info >= (3, 13):
        message += ". Did you mean 'scope'?"  # Python 3.13's own suggestion
    with pytest.raises(DiagnosticError) as info:
        from_source(text, filename="kernel.py")
    err = info.value
    assert (err.filename, err.lineno, err.col, err.message) == ("kernel.py", line, col, message)
    src_line = text.splitlines()[line - 1]
    assert str(err) == f"kernel.py:{line}:{col + 1}: error: {message}\n    {src_line}\n    {' ' * col}^"


@skip_if_installed("cuda")
def test_missing_backend_namespace_is_a_diagnostic() -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(HEADER + "    T.cuda.thread_fence()\n")
    assert info.value.lineno == 3 and info.value.col == 4
    assert install_hint("tvm-backend-cuda") in info.value.message


def test_decorated_function_reports_its_file_line_and_indentation() -> None:
    with pytest.raises(DiagnosticError) as info:

        @T.prim_func
        def kernel(A: T.Buffer((4,), "float32")):
            A[0] = not_defined_anywhere  # noqa: F821

    err = info.value
    assert err.filename == __file__
    expected_line = inspect.currentframe().f_lineno - 4  # type: ignore[union-attr]
    assert err.lineno == expected_line
    assert err.source_line.strip() == "A[0] = not_defined_anywhere  # noqa: F821"
    assert err.col == err.source_line.index("not_defined_anywhere")
    assert err.message == "name 'not_defined_anywhere' is not defined"


def test_no_parser_traceback_reaches_the_user() -> None:
    with pytest.raises(DiagnosticError) as info:
        from_source(HEADER + '    B = T.alloc_buffer((4,), "float33")\n')
    frames = traceback.extract_tb(info.value.__traceback__)
    assert all("script/parser/" not in fr.filename or fr.name == "from_source" for fr in frames)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_diagnostic_error_is_a_syntax_error_for_tools() -> None:
    with pytest.raises(SyntaxError) as info:
        from_source(HEADER + "    x = y\n")
    assert info.value.lineno == 3 and info.value.offset == 9


@pytest.mark.parametrize(("annotation", "col"), [
    ("T.Buffer", 21), ("T.float32(1.0)", 21), ("T.alloc_buffer((4,))", 21),
])
def test_bad_parameter_annotation(annotation: str, col: int) -> None:
    text = f"@T.prim_func\ndef f(n: T.int32, A: {annotation}):\n    pass\n"
    with pytest.raises(DiagnosticError) as info:
        from_source(text, filename="kernel.py")
    err = info.value
    assert (err.filename, err.lineno, err.col) == ("kernel.py", 2, col)
    assert err.message == ("parameter A: expected T.Buffer(...), T.handle or a scalar type such "
                           "as T.int32")
