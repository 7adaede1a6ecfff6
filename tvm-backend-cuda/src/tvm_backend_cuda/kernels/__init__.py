"""Memory-bound kernels written with tile primitives (``Tx.*``) for the CUDA backend.

Each module is a factory returning a ``@T.prim_func`` for a shape and dtype, its arguments
inputs first, then the output:

- :func:`add.add` ``(n, dtype)``: ``C = A + B``;
- :func:`softmax.softmax` ``(m, n, dtype)``: row softmax;
- :func:`rmsnorm.rmsnorm` ``(m, n, dtype, eps=1e-6)``: ``Y = X * rsqrt(mean(X^2) + eps) * W``;
- :func:`layernorm.layernorm` ``(m, n, dtype, eps=1e-5)``: ``Y = (X - mean) * rstd * W + B``;
- :func:`gemm.gemm` ``(m, n, k, dtype="bfloat16", out_dtype="bfloat16")``: ``C = A @ B^T``
  on the tensor cores (``Tx.gemm_async``), its tensor maps from :func:`gemm.tensor_maps`.

Any positive row count, any row length that is a multiple of 8; float32 and bfloat16
(arithmetic in float32). ``bench/cuda_perf.py`` times them.
"""
