"""Kernel tests every shader-style backend (:mod:`tvm.shader`) runs on its device against
numpy: elementwise tile ops, reductions, a softmax and a tiled matmul from ``Tx.cta``
primitives, scalar arguments, a grid computed from a scalar, and integer and float rules.

Subclass :class:`ShaderKernelTests` in the backend's tests (the class name must start with
``Test``), with the backend's device fixture in use, saying how to compile and what the
backend's source shows::

    pytestmark = pytest.mark.usefixtures("vulkan_device")

    class TestKernels(ShaderKernelTests):
        compile = staticmethod(compile_vulkan)
        shared_decl = "shared float As["
        scalar_decls = ("layout(push_constant) uniform tvm_push_constants { ... };",)

The tests take the ``rng`` fixture (a seeded ``numpy.random.Generator``) from the backend's
conftest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, no_type_check

import pytest

import tvm
from tvm.error import CodegenError, DeviceLimitError
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx
from tvm.shader.demo import softmax_kernel, tiled_matmul_kernel

__all__ = ["ShaderCodegenTests", "ShaderKernelTests", "saxpy"]


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def scaled_rows() -> Any:
    @T.prim_func
    def scaled_rows(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8, 128), "float32")):
        T.device_entry()
        bx = T.cta_id([8])
        tx = T.thread_id([32])  # noqa: F841 - the kernel form binds the thread id
        Tx.cta.exp(B[bx:bx + 1, 0:128], A[bx:bx + 1, 0:128], scale=0.25)
        Tx.cta.mul(B[bx:bx + 1, 0:128], B[bx:bx + 1, 0:128], A[bx:bx + 1, 0:128])
        Tx.cta.maximum(B[bx:bx + 1, 0:128], B[bx:bx + 1, 0:128], -0.5)

    return scaled_rows


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def row_stats() -> Any:
    @T.prim_func
    def row_stats(A: T.Buffer((32, 200), "float32"), S: T.Buffer((32,), "float32"),
                  M: T.Buffer((32,), "float32"), N: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([64])  # noqa: F841 - the kernel form binds the thread id
        Tx.cta.sum(S[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)
        Tx.cta.max(M[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)
        Tx.cta.min(N[bx * 8:bx * 8 + 8], A[bx * 8:bx * 8 + 8, 0:200], axes=-1)

    return row_stats


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def axpy() -> Any:
    @T.prim_func
    def axpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32,
             shift: T.int32):
        T.device_entry()
        bx = T.cta_id([4])
        tx = T.thread_id([64])
        Y[bx * 64 + tx] = X[bx * 64 + tx] * a + Y[bx * 64 + tx] + T.cast(shift, "float32")

    return axpy


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def scale_n() -> Any:
    @T.prim_func
    def scale_n(var_A: T.handle, n: T.int32):
        A = T.match_buffer(var_A, (n,), "float32")
        T.device_entry()
        bx = T.cta_id([T.ceildiv(n, 64)])
        tx = T.thread_id([64])
        if bx * 64 + tx < n:
            A[bx * 64 + tx] = A[bx * 64 + tx] * 2.0

    return scale_n


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def int_rules() -> Any:
    @T.prim_func
    def int_rules(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"),
                  Q: T.Buffer((64,), "int32"), R: T.Buffer((64,), "int32"),
                  M: T.Buffer((64,), "int32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - the kernel form binds the block id
        tx = T.thread_id([64])
        Q[tx] = T.floordiv(A[tx], B[tx])
        R[tx] = T.floormod(A[tx], B[tx])
        M[tx] = T.truncmod(A[tx], B[tx])

    return int_rules


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def float_rules() -> Any:
    @T.prim_func
    def float_rules(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
                    R: T.Buffer((64,), "float32"), F: T.Buffer((64,), "float32"),
                    S: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - the kernel form binds the block id
        tx = T.thread_id([64])
        R[tx] = T.round(A[tx])
        F[tx] = T.fmod(A[tx], B[tx])
        S[tx] = T.rsqrt(T.fabs(B[tx]))
        C[tx] = T.copysign(A[tx], B[tx])

    return float_rules


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def saxpy() -> Any:
    """``Y = X * a + Y`` over 2 workgroups of 128: the kernel whose exact shader text each
    backend's codegen test spells out."""
    @T.prim_func
    def saxpy(X: T.Buffer((256,), "float32"), Y: T.Buffer((256,), "float32"), a: T.float32):
        T.device_entry()
        bx = T.cta_id([2])
        tx = T.thread_id([128])
        Y[bx * 128 + tx] = X[bx * 128 + tx] * a + Y[bx * 128 + tx]

    return saxpy


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def with_erf() -> Any:
    @T.prim_func
    def with_erf(A: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - the kernel form binds the block id
        tx = T.thread_id([32])
        A[tx] = T.erf(A[tx])

    return with_erf


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def too_wide() -> Any:
    @T.prim_func
    def too_wide(A: T.Buffer((512,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])  # noqa: F841 - the kernel form binds the block id
        tx = T.thread_id([512])
        A[tx] = A[tx] + 1.0

    return too_wide


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def scale_rows_symbolic(assume: bool = False) -> Any:
    """``A[i, j] *= 2`` over a ``T.int32`` shape (n, m): n * m may pass 2**31 unless assumed
    smaller."""
    @T.prim_func
    def scale_rows(a: T.handle):
        n = T.int32()
        m = T.int32()
        A = T.match_buffer(a, (n, m), "float32")
        if assume:
            T.assume(n <= 4096)
            T.assume(m <= 4096)
        T.device_entry()
        bx = T.cta_id([n])
        tx = T.thread_id([64])
        for j in range((m + 63) // 64):
            if j * 64 + tx < m:
                A[bx, j * 64 + tx] = A[bx, j * 64 + tx] * 2.0

    return scale_rows


class ShaderCodegenTests:
    """Codegen errors every shader-style backend gives alike (no GPU needed). Subclass it in the
    backend's tests (the class name must start with ``Test``)::

        class TestCodegen(ShaderCodegenTests):
            generate = staticmethod(_glsl)   # (func, target) -> the source
            kind, language = "vulkan", "GLSL"
    """

    #: ``generate(func, target)``: the backend's source for ``func`` lowered for ``target``
    generate: ClassVar[Callable[..., str]]
    #: the target kind, and the shading language as its error messages name it
    kind: ClassVar[str]
    language: ClassVar[str]

    def test_unsupported_math_names_the_op(self) -> None:
        # located at the user's call (file, line, caret); the message itself is args[0]
        with pytest.raises(CodegenError, match=rf"shader\.py:\d+:\d+: error: op `tirx.erf` is "
                                               rf"not supported on target '{self.kind}': "
                                               rf"{self.language} has no erf\n"):
            self.generate(with_erf(), self.kind)

    def test_workgroup_larger_than_the_target_allows(self) -> None:
        # located at the T.thread_id line, before codegen (tvm.codegen.limits)
        with pytest.raises(DeviceLimitError, match=rf"shader\.py:\d+:\d+: error: kernel "
                                                   rf"`too_wide_kernel`: a block of 512 threads; "
                                                   rf"target '{self.kind}' allows at most 256 "
                                                   r"\(max_threads_per_block\): use fewer "
                                                   r"threads per block and more blocks\n.*"
                                                   r"T.thread_id\(\[512\]\)"):
            tvm.compile(too_wide(), target=self.kind)

    def test_symbolic_shape_that_may_need_64_bit_offsets_says_how_to_bound_it(self) -> None:
        with pytest.raises(CodegenError, match=r"The offsets into buffer `A` \(extent n \* m\) "
                                               r"are 64-bit because it may hold 2\*\*31 elements "
                                               r"or more: bound each symbolic extent with a "
                                               r"T.assume"):
            self.generate(scale_rows_symbolic(), self.kind)
        assert "A[" in self.generate(scale_rows_symbolic(assume=True), self.kind)


class ShaderKernelTests:
    """The shared kernel tests; see the module docstring."""

    #: ``compile(func, target=..., **options)``: the backend's ``tvm.compile`` (and checks)
    compile: ClassVar[Callable[..., Any]]
    #: text of the source declaring the tiled matmul's shared tile ``As``
    shared_decl: ClassVar[str]
    #: lines of the source that bind ``axpy``'s scalars ``a`` (float32) and ``shift`` (int32)
    scalar_decls: ClassVar[tuple[str, ...]] = ()

    def test_elementwise_tile_ops(self, rng: Any) -> None:
        import numpy as np

        a = rng.uniform(-3, 3, (8, 128)).astype("float32")
        b = np.zeros_like(a)
        self.compile(scaled_rows())(a, b)
        want = np.maximum(np.exp(a.astype("float64") * 0.25) * a, -0.5)
        np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-6)

    def test_reductions_from_tile_primitives(self, rng: Any) -> None:
        import numpy as np

        a = rng.uniform(-4, 4, (32, 200)).astype("float32")
        s, mx, mn = (np.zeros(32, "float32") for _ in range(3))
        self.compile(row_stats())(a, s, mx, mn)
        np.testing.assert_allclose(s, a.astype("float64").sum(-1), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(mx, a.max(-1))
        np.testing.assert_array_equal(mn, a.min(-1))

    def test_softmax_of_tile_reductions_and_elementwise_ops(self, rng: Any) -> None:
        import numpy as np

        a = rng.standard_normal((16, 96)).astype("float32") * 4
        b = np.zeros_like(a)
        self.compile(softmax_kernel(16, 96, 32))(a, b)
        e = np.exp(a.astype("float64") - a.max(-1, keepdims=True))
        np.testing.assert_allclose(b, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)

    @pytest.mark.parametrize("m,n,k,t", [(64, 64, 64, 16), (32, 96, 48, 8)])
    def test_tiled_matmul(self, rng: Any, m: int, n: int, k: int, t: int) -> None:
        import numpy as np

        a = rng.standard_normal((m, k)).astype("float32")
        b = rng.standard_normal((k, n)).astype("float32")
        c = np.full((m, n), np.nan, "float32")
        ex = self.compile(tiled_matmul_kernel(m, n, k, t))
        assert self.shared_decl in ex.inspect_source()
        ex(a, b, c)
        np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-4,
                                   atol=1e-4)

    def test_scalar_arguments(self) -> None:
        import numpy as np

        ex = self.compile(axpy())
        text = ex.inspect_source()
        for line in self.scalar_decls:
            assert line in text, (line, text)
        x, y = np.arange(256, dtype="float32"), np.ones(256, "float32")
        ex(x, y, 0.5, -3)
        np.testing.assert_array_equal(y, x * 0.5 + 1 - 3)

    @pytest.mark.parametrize("n", [1, 64, 1000])
    def test_grid_from_a_scalar(self, n: int) -> None:
        import numpy as np

        ex = self.compile(scale_n())
        a = np.arange(n, dtype="float32")
        ex(a, n)
        np.testing.assert_array_equal(a, np.arange(n) * 2.0)

    def test_floor_and_trunc_division_of_negative_integers(self, rng: Any) -> None:
        import numpy as np

        a = rng.integers(-50, 50, 64).astype("int32")
        b = rng.choice([-7, -3, -1, 2, 5, 9], 64).astype("int32")
        q, r, m = (np.zeros(64, "int32") for _ in range(3))
        ex = self.compile(int_rules())
        assert "tvm_floordiv_i32(" in ex.inspect_source()
        ex(a, b, q, r, m)
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
        np.testing.assert_array_equal(m, np.fmod(a, b))

    def test_float_rules(self, rng: Any) -> None:
        import numpy as np

        a = np.concatenate([np.array([0.5, 1.5, 2.5, -0.5, -2.5], "float32"),
                            rng.uniform(-9, 9, 59).astype("float32")])
        b = rng.choice([-2.5, -1.0, 0.75, 3.0], 64).astype("float32")
        r, f, s, c = (np.zeros(64, "float32") for _ in range(4))
        self.compile(float_rules())(a, b, r, f, s, c)
        np.testing.assert_array_equal(r, np.round(a))  # half to even
        np.testing.assert_allclose(f, np.fmod(a, b), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s, 1 / np.sqrt(np.abs(b)), rtol=1e-6)
        np.testing.assert_array_equal(c, np.copysign(a, b))
