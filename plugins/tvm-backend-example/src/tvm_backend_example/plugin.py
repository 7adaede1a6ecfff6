"""The hooks of the example backend: the only module tvm imports when it loads the backend.

Hooks only; the work is in the backend's other modules, the layout every backend has:

* ``tags``: the target kind ``example`` and its tags, as data;
* ``op`` and ``script``: the intrinsic ``tirx.example.fma`` and the ``T.example`` namespace;
* ``dispatch``: the scope barrier and a tile-primitive variant; ``pipeline``: the TIR pipeline;
* ``codegen`` (IR to C), ``compiler`` (C to a shared object), ``executable`` (the build
  contract: options, builder, Executable), ``runtime`` (device access: ctypes).

The hooks are made from ``SPEC``, which states what each of them returns (see
``tvm.plugin.BackendSpec``; a hook it cannot express is a ``@hookimpl`` function written beside
it). Keep this module cheap: no SDK import at the top (``import tvm`` must stay fast); name
code that is only needed later as a ``"module:function"`` string, imported on first use.
"""

from __future__ import annotations

from tvm.backend import sdk

from . import dispatch, op, tags
from ._version import __version__
from .pipeline import example_pipeline
from .script import ExampleNamespace

__all__ = ["SPEC", "register_backend"]

# layout_spec fills in what follows from the name and the layout: the distribution
# tvm-backend-example, the aliases tvm.backend.example and tvm.tirx.example, the kinds and tags
# of tags.py, and the builder, named "tvm_backend_example.executable:ExampleBuilder" (not
# imported: executable.py and the codegen it imports load on the first build)
SPEC = sdk.layout_spec(
    # the plugin-API versions this backend was written against (core has 2)
    "example", __version__, ">=2,<3", tags,
    description="a minimal example backend (template): C for this CPU, run with ctypes",
    script_namespaces={"example": ExampleNamespace},
    register_ops=op.register_ops,
    register_dispatch=dispatch.register_all,
    # the pipeline "example", the default of kind example (a hook broadcast to every backend:
    # it answers only for its own kind)
    pipeline=example_pipeline,
    builder="ExampleBuilder",
    # rows of `python -m tvm demo`; named, so tvm.demo loads only when the demo runs
    demo_cases="tvm_backend_example.demo:demo_cases",
)
# the tvm_* hook functions (one per field that is set) and the seed's register_backend()
register_backend = SPEC.publish(globals())
