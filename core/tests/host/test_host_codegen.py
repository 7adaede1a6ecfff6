"""Golden snippets of the C-style codegen base and of the host C codegen."""

from __future__ import annotations

import pytest
from hostir import loop, make_func

from tvm._registry import snapshot_all
from tvm.codegen import CodegenCStyle
from tvm.error import TVMError
from tvm.host.codegen import HostCodegen, generate_c
from tvm.ir import (
    AllocBuffer,
    AssertStmt,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    FloatImm,
    ForKind,
    IntImm,
    LetStmt,
    Op,
    PrimFunc,
    Ramp,
    Select,
    TilePrimitiveCall,
    Var,
    seq,
)
from tvm.ir import expr as E
from tvm.tirx import op as T


def _vadd(n: int = 64, dtype: str = "float32", kind: ForKind = ForKind.SERIAL) -> PrimFunc:
    A, B, C = (Buffer(x, [n], dtype) for x in "ABC")
    body = loop(n, lambda i: BufferStore(C, A[i] + B[i], [i]), kind)
    return make_func("vadd", [A, B, C], body)


def _src(func: PrimFunc, **kw) -> str:
    return generate_c(func, **kw)[0]


def test_signature_and_body() -> None:
    src = _src(_vadd())
    assert "TVM_EXPORT int32_t vadd(float* restrict A, float* restrict B, float* restrict C) {" in src
    assert "  for (int32_t i = 0; i < 64; ++i) {\n    C[i] = (A[i] + B[i]);\n  }\n  return 0;\n}" in src


def test_scalar_params_and_shape_vars_in_signature() -> None:
    n = Var("n", "int32")
    A = Buffer("A", [n], "float32")
    alpha = Var("alpha", "float32")
    body = loop(n, lambda i: BufferStore(A, A[i] * alpha, [i]))
    src, funcs, _ = generate_c(make_func("scale", [A], body, scalars=[alpha]))
    assert "int32_t scale(float* restrict A, float alpha, int32_t n) {" in src
    (info,) = funcs
    assert [(p.name, p.kind) for p in info.params] == [("A", "buffer"), ("alpha", "scalar"),
                                                       ("n", "shape_var")]
    assert info.params[0].shape == ["n"]
    assert info.params[2].source == [(0, "shape", 0)]


def test_openmp_parallel_loop_only_when_available() -> None:
    func = _vadd(kind=ForKind.PARALLEL)
    assert ("#pragma omp parallel for schedule(static) num_threads(tvm_host_threads())\n  for "
            "(int32_t i = 0;") in _src(func, openmp=True)
    assert "#pragma omp" not in _src(func, openmp=False)
    src, _, uses = generate_c(func, openmp=True, num_threads=4)
    assert uses and "#pragma omp parallel for schedule(static) num_threads(4)" in src


def test_unroll_and_vectorize_pragmas() -> None:
    assert "#pragma GCC unroll 64\n" in _src(_vadd(kind=ForKind.UNROLLED))
    assert "#pragma GCC ivdep\n" in _src(_vadd(kind=ForKind.VECTORIZED))


def test_floordiv_uses_plain_division_only_when_provably_nonnegative() -> None:
    A = Buffer("A", [64], "int32")
    B = Buffer("B", [64], "int32")
    body = loop(64, lambda i: BufferStore(B, A[i] // 4 + A[i] % 4 + i // 4 + i % 4, [i]))
    src = _src(make_func("f", [A, B], body))
    assert "tvm_floordiv_i32(A[i], 4)" in src and "tvm_floormod_i32(A[i], 4)" in src
    assert "(i / 4)" in src and "(i % 4)" in src
    assert "static inline int32_t tvm_floordiv_i32(int32_t a, int32_t b) {" in src


def test_truncdiv_is_c_division() -> None:
    A, B = Buffer("A", [8], "int64"), Buffer("B", [8], "int64")
    body = loop(8, lambda i: BufferStore(B, T.truncdiv(A[i], IntImm("int64", -3))
                                         + T.truncmod(A[i], IntImm("int64", 5)), [i]))
    src = _src(make_func("f", [A, B], body))
    assert "B[i] = ((A[i] / INT64_C(-3)) + (A[i] % INT64_C(5)));" in src


@pytest.mark.parametrize(("dtype", "text"), [
    ("float32", "tvm_expf(A[i])"),  # kernels/math.c: vectorises, within 2 ulp
    ("float64", "exp(A[i])"),
])
def test_math_op_template_by_dtype(dtype: str, text: str) -> None:
    A, B = Buffer("A", [8], dtype), Buffer("B", [8], dtype)
    src = _src(make_func("f", [A, B], loop(8, lambda i: BufferStore(B, T.exp(A[i]), [i]))))
    assert f"B[i] = {text};" in src


def test_float16_native_and_emulated() -> None:
    A, B = Buffer("A", [8], "float16"), Buffer("B", [8], "float16")
    func = make_func("f", [A, B], loop(8, lambda i: BufferStore(B, T.exp(A[i]) + A[i], [i])))
    native = _src(func, float16=True)
    assert "_Float16* restrict A" in native
    assert "B[i] = (((_Float16)(tvm_expf((float)(A[i])))) + A[i]);" in native
    emulated = _src(func, float16=False)
    assert "uint16_t* restrict A" in emulated
    assert ("B[i] = tvm_f32_to_f16(tvm_round_f16(tvm_round_f16(tvm_expf((float)(tvm_f16_to_f32(A[i]))))"
            " + tvm_f16_to_f32(A[i])));") in emulated


def test_bfloat16_is_stored_as_uint16_and_computed_in_float() -> None:
    A, B = Buffer("A", [8], "bfloat16"), Buffer("B", [8], "float32")
    src = _src(make_func("f", [A, B], loop(8, lambda i: BufferStore(
        B, Cast("float32", A[i] * FloatImm("bfloat16", 2.0)), [i]))))
    assert "uint16_t* restrict A" in src
    assert "B[i] = ((float)(tvm_round_bf16(tvm_bf16_to_f32(A[i]) * tvm_round_bf16(2.0f))));" in src
    assert "static inline uint16_t tvm_f32_to_bf16(float f) {" in src


def test_select_min_max_cast_and_constants() -> None:
    A, B = Buffer("A", [8], "float32"), Buffer("B", [8], "int32")
    body = loop(8, lambda i: BufferStore(
        B, Select(A[i] > 0.5, Cast("int32", E.Max(A[i], FloatImm("float32", -1.5))),
                  E.Min(i, IntImm("int32", 3))), [i]))
    src = _src(make_func("f", [A, B], body))
    assert ("B[i] = ((A[i] > 0.5f) ? ((int32_t)(tvm_fmaxf(A[i], (-1.5f)))) : "
            "(((i) < (3)) ? (i) : (3)));") in src


def test_special_float_constants() -> None:
    A = Buffer("A", [3], "float32")
    body = seq([BufferStore(A, FloatImm("float32", float("inf")), [0]),
                BufferStore(A, FloatImm("float32", float("-inf")), [1]),
                BufferStore(A, FloatImm("float32", float("nan")), [2])])
    src = _src(make_func("f", [A], body))
    assert "A[0] = INFINITY;" in src and "A[1] = (-INFINITY);" in src and "A[2] = NAN;" in src


def test_vector_store_is_scalarized_lane_by_lane() -> None:
    A, B = Buffer("A", [16], "float32"), Buffer("B", [16], "float32")
    body = loop(4, lambda i: BufferStore(
        B, BufferLoad(A, [Ramp(i * 4, 1, 4)]) + Broadcast(FloatImm("float32", 1.0), 4),
        [Ramp(i * 4, 1, 4)]))
    src = _src(make_func("f", [A, B], body))
    assert "B[i * 4] = (A[i * 4] + 1.0f);" in src
    assert "B[(i * 4) + 3] = (A[(i * 4) + 3] + 1.0f);" in src


def test_allocations_stack_and_heap() -> None:
    A = Buffer("A", [4], "float32")
    small = Buffer("acc", [4], "float32", scope="local")
    big = Buffer("tmp", [100000], "float32")
    body = seq([AllocBuffer(small), AllocBuffer(big),
                loop(4, lambda i: seq([BufferStore(small, A[i], [i]), BufferStore(big, small[i], [i]),
                                       BufferStore(A, big[i], [i])]))])
    src = _src(make_func("f", [A], body))
    assert "float acc[4] __attribute__((aligned(64)));" in src
    assert ("float* tmp = (float*)__builtin_assume_aligned(tvm_alloc((size_t)(100000) * "
            "sizeof(float)), 64);") in src
    assert 'if (tmp == NULL) {\n    return tvm_fail("out of memory allocating buffer tmp");' in src
    assert "  free(tmp);\n  return 0;\n}" in src


def test_assert_returns_an_error_and_let_binds() -> None:
    A = Buffer("A", [4], "int32")
    x = Var("x", "int32")
    body = seq([AssertStmt(A[0] >= 0, 'A[0] must be "non-negative"'),
                LetStmt(x, A[1] * 2, BufferStore(A, x + 1, [2]))])
    src = _src(make_func("f", [A], body))
    assert 'if (!(A[0] >= 0)) {\n    return tvm_fail("A[0] must be \\"non-negative\\"");\n  }' in src
    assert "const int32_t x = (A[1] * 2);\n  A[2] = (x + 1);" in src


def test_assert_inside_parallel_loop_records_and_jumps() -> None:
    A = Buffer("A", [8], "int32")
    body = loop(8, lambda i: seq([AssertStmt(A[i] < 100, "too big"),
                                  BufferStore(A, A[i] + 1, [i])]), ForKind.PARALLEL)
    src = _src(make_func("f", [A], body), openmp=True)
    assert "const char* tvm_par_error = NULL;" in src
    assert "#pragma omp critical(tvm_error)\n      { tvm_par_error = \"too big\"; }\n" in src
    assert "goto tvm_par_end;" in src and "  tvm_par_end: ;\n  }\n" in src
    assert "if (tvm_par_error != NULL) return tvm_fail(tvm_par_error);" in src


def test_names_are_sanitized_and_unique() -> None:
    A = Buffer("A", [4], "float32")
    i1, i2 = Var("i", "int32"), Var("i", "int32")
    from tvm.ir import For

    body = seq([For(i1, 0, 2, ForKind.SERIAL, BufferStore(A, 1.0, [i1])),
                For(i2, 2, 2, ForKind.SERIAL, BufferStore(A, 2.0, [i2]))])
    src = _src(make_func("exp", [A], body))
    assert "int32_t exp_(float* restrict A)" in src
    assert "for (int32_t i = 0; i < 2; ++i)" in src
    assert "for (int32_t i_1 = 2; i_1 < (2 + 2); ++i_1)" in src


@pytest.fixture(autouse=True)
def _restore_registries():
    restore = snapshot_all()  # ops a test registers must not outlive it (other tests list ops)
    yield
    restore()


def test_per_op_codegen_rule_wins_over_the_table() -> None:
    op = Op.register("tirx.test_host_cg.double_it", category="device_intrin",
                     namespace="test_host_cg", effect=1, dtype="arg0", override=True)
    op.set_codegen("c", "(2.0f * ({0}))")
    A = Buffer("A", [4], "float32")
    src = _src(make_func("f", [A], loop(4, lambda i: BufferStore(A, op(A[i]), [i]))))
    assert "A[i] = (2.0f * (A[i]));" in src
    op.set_codegen("c", lambda cg, call, args: f"my_exp({args[0]})")
    src = _src(make_func("f", [A], loop(4, lambda i: BufferStore(A, op(A[i]), [i]))))
    assert "A[i] = my_exp(A[i]);" in src


def test_missing_rule_names_op_and_target() -> None:
    op = Op.register("tirx.test_host_cg.no_rule", category="device_intrin",
                     namespace="test_host_cg", effect=1, dtype="arg0", override=True)
    A = Buffer("A", [4], "float32")
    func = make_func("f", [A], loop(4, lambda i: BufferStore(A, op(A[i]), [i])))
    with pytest.raises(TVMError, match=r"op `tirx.test_host_cg.no_rule` has no codegen rule for "
                                       r"target 'c'"):
        _src(func)


def test_tile_primitive_reaching_codegen_is_an_error() -> None:
    op = Op.register("tirx.tile.test_host_cg_fill", category="tile_primitive", override=True)
    A = Buffer("A", [4], "float32")
    func = make_func("f", [A], TilePrimitiveCall(op, [A, FloatImm("float32", 0.0)]))
    with pytest.raises(TVMError, match="tile primitive `tirx.tile.test_host_cg_fill` reached "
                                       "codegen; the TilePrimitiveDispatch pass"):
        _src(func)


def test_extern_call_and_address_of() -> None:
    A = Buffer("A", [4], "float32")
    body = seq([Evaluate(T.call_extern("int32", "puts", "hi")),
                BufferStore(A, T.call_extern("float32", "cbrtf", A[1]), [0]),
                Evaluate(Call("handle", "tirx.address_of", [A[2]]))])
    src = _src(make_func("f", [A], body))
    assert 'puts("hi");' in src and "A[0] = cbrtf(A[1]);" in src and "(&A[2]);" in src


class _CudaLike(CodegenCStyle):
    """What a GPU backend changes: data only (plus the thread-binding method it inherits)."""

    target_kind = "test_gpu"
    kernel_prefix = 'extern "C" __global__ '
    restrict_keyword = "__restrict__"
    storage_qualifiers = {"shared": "__shared__ "}
    thread_index_names = {"blockIdx.x": "blockIdx.x", "threadIdx.x": "threadIdx.x"}
    half_type = "half"
    op_templates = {**CodegenCStyle.op_templates, "tirx.exp": {"float32": "__expf({0})",
                                                               "float16": "hexp({0})"}}


def test_subclass_changes_keywords_thread_indices_and_templates() -> None:
    from tvm.ir import For

    A = Buffer("A", [256], "float32")
    H = Buffer("H", [256], "float16")
    S = Buffer("S", [128], "float32", scope="shared")
    bx, tx = Var("bx", "int32"), Var("tx", "int32")
    idx = bx * 128 + tx
    body = For(bx, 0, 2, ForKind.THREAD_BINDING, thread_tag="blockIdx.x", body=seq([
        AllocBuffer(S),
        For(tx, 0, 128, ForKind.THREAD_BINDING, thread_tag="threadIdx.x", body=seq([
            BufferStore(S, T.exp(A[idx]), [tx]),
            BufferStore(H, T.exp(H[idx]), [idx]),
            BufferStore(A, S[tx], [idx]),
        ]))]))
    func = make_func("k", [A, H], body).with_attr("tirx.is_kernel", True)
    src = _CudaLike().generate(func)
    assert 'extern "C" __global__ void k(float* __restrict__ A, half* __restrict__ H) {' in src
    assert "const int32_t bx = (int32_t)blockIdx.x;" in src
    assert "__shared__ float S[128] __attribute__((aligned(64)));" in src
    assert "S[tx] = __expf(A[(bx * 128) + tx]);" in src
    assert "H[(bx * 128) + tx] = hexp(H[(bx * 128) + tx]);" in src
    assert "return 0;" not in src


def test_host_thread_binding_becomes_loops() -> None:
    from tvm.ir import For

    A = Buffer("A", [256], "float32")
    bx, tx = Var("bx", "int32"), Var("tx", "int32")
    body = For(bx, 0, 2, ForKind.THREAD_BINDING, thread_tag="blockIdx.x", body=For(
        tx, 0, 128, ForKind.THREAD_BINDING, thread_tag="threadIdx.x",
        body=BufferStore(A, A[bx * 128 + tx] + 1.0, [bx * 128 + tx])))
    src = HostCodegen(openmp=True).generate(make_func("k", [A], body))
    # the loop restates its range inside the body: OpenMP's outlined body loses it (a tiled
    # matmul ran 12x slower than its serial form without this line)
    assert ("#pragma omp parallel for schedule(static) num_threads(tvm_host_threads())\n"
            "  for (int32_t bx = 0; bx < 2; ++bx) {\n"
            "    if (bx < 0 || bx >= 2) __builtin_unreachable();\n"
            "    for (int32_t tx = 0; tx < 128; ++tx) {\n") in src
    assert src.count("__builtin_unreachable") == 1  # the serial loop keeps its own range


def test_multi_dim_access_is_row_major() -> None:
    A = Buffer("A", [4, 8], "float32")
    body = loop(4, lambda i: loop(8, lambda j: BufferStore(A, A[i, j] * 2.0, [i, j]), name="j"))
    src = _src(make_func("f", [A], body))
    assert "A[(i * 8) + j] = (A[(i * 8) + j] * 2.0f);" in src
