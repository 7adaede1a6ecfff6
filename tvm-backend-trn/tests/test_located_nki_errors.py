"""A T.nki call that the Trainium codegen rejects is reported at the kernel's line."""

from __future__ import annotations

import inspect
from typing import Any, no_type_check

import pytest

import tvm
from tvm.error import CompileError


@no_type_check  # TVMScript
def _kernel() -> Any:
    from tvm.script import tirx as T

    @T.prim_func
    def act(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
        a = T.alloc_buffer((128, 64), "float32", scope="trn.sbuf")
        T.nki.load(a, A)
        T.nki.activation(a, a, "relux")
        T.nki.store(B, a)

    return act


def test_codegen_error_of_a_nki_call_points_at_its_line():
    with pytest.raises(CompileError) as info:
        tvm.compile(_kernel(), target="aws/trn1/trn1.2xlarge")
    err = info.value
    lines, first = inspect.getsourcelines(_kernel)
    line = first + next(i for i, text in enumerate(lines) if '"relux"' in text)
    assert (err.span.filename, err.span.line) == (__file__, line)
    head, source, caret = str(err).splitlines()[:3]
    assert head.startswith(f"{__file__}:{line}:9: error: T.nki.activation: ")
    assert "relux" in head
    assert source.strip() == 'T.nki.activation(a, a, "relux")'
    assert caret.strip() == "^" + "~" * (len('T.nki.activation(a, a, "relux")') - 1)
