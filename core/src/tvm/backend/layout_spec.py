"""The :class:`~tvm.plugin.BackendSpec` of a backend laid out as every ``tvm-backend-*`` is.

Every backend's ``plugin.py`` spelled out the same wiring by hand, all of it following from the
backend's name and its layout (``tvm.testing.layout``): the distribution
``tvm-backend-<name>``, the alias ``<name> -> tvm_backend_<name>``, the seed's
``<name>.target_tags`` path, the kinds and tags of its ``tags`` module, the builder class in its
``executable`` module and the pipeline it names after itself. :func:`layout_spec` fills those
in; a backend passes what is its own (version, API range, description, hooks)::

    SPEC = layout_spec("mydev", __version__, ">=2,<3", tags,
                       description="...", builder="MydevBuilder", seed_tags=True,
                       register_dispatch=dispatch.register_all)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ..plugin import BackendSpec
from ..plugin._spec import Ref

__all__ = ["layout_spec"]


def layout_spec(name: str, version: str, api_range: str, tags: ModuleType, *,
                description: str, builder: str | None = None, pipeline: Ref | None = None,
                seed_tags: bool = False,
                aliases: Mapping[str, str | tuple[str, ...]] | None = None,
                **fields: Any) -> BackendSpec:
    """The spec of backend ``name``, whose package is ``tvm_backend_<name>``.

    ``tags``: the backend's ``tags`` module (its ``KINDS``, ``TAGS`` and, for ``builder`` and
    ``pipeline``, ``KIND``). ``builder``: the name of the Builder class in the package's
    ``executable`` module, registered for ``tags.KIND``. ``pipeline``: the factory (or
    ``"module:function"``) of the TIR pipeline named ``name``, the default one of ``tags.KIND``.
    ``seed_tags``: alias the seed's ``<name>.target_tags`` to the ``tags`` module. ``aliases``:
    more module aliases, after those. Every other keyword is a :class:`BackendSpec` field.
    """
    package = f"tvm_backend_{name}"
    names: dict[str, str | tuple[str, ...]] = {name: package}  # tvm.backend.<name>, tvm.tirx.<name>
    if seed_tags:
        names[f"{name}.target_tags"] = f"{package}.tags"
    names.update(aliases or {})
    if builder is not None:
        fields["builders"] = {tags.KIND: f"{package}.executable:{builder}"}
    if pipeline is not None:
        fields["pipelines"] = {name: pipeline}
        fields["default_pipeline"] = {tags.KIND: name}
    return BackendSpec(name=name, version=version, api_range=api_range,
                       distribution=f"tvm-backend-{name}", description=description,
                       aliases=names, kinds=tags.KINDS, tags=tags.TAGS, **fields)
