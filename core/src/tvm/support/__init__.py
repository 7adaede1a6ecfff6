"""The seed's ``tvm.support`` helpers that kernels' tests use (``popen_pool.PopenWorker``)."""
