"""Registration through the hooks: the backend record, aliases, the target kind, the file
layout every backend has, the catalogue entry, and that loading imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import vk_helpers  # noqa: F401 - loads the backend

import tvm
import tvm.backend
from tvm.backend import CATALOGUE
from tvm.testing.layout import check_backend_layout


def test_listed_as_loaded_with_what_it_registered():
    (record,) = [r for r in tvm.backend.list_backends() if r.name == "vulkan"]
    assert record.state == "loaded"
    assert record.distribution == "tvm-backend-vulkan"
    assert record.target_kinds == ("vulkan",)
    assert record.namespaces == ()


def test_register_backend_is_idempotent_and_aliased():
    import tvm_backend_vulkan

    assert tvm_backend_vulkan.register_backend() is tvm_backend_vulkan
    assert tvm.backend.load("vulkan") is tvm_backend_vulkan
    assert tvm.backend.vulkan is tvm_backend_vulkan and tvm.tirx.vulkan is tvm_backend_vulkan


def test_file_layout():
    import tvm_backend_vulkan

    check_backend_layout(tvm_backend_vulkan)


def test_catalogue_names_the_distribution():
    (entry,) = [e for e in CATALOGUE if e.name == "vulkan"]
    assert entry.distribution == "tvm-backend-vulkan" and entry.target_kinds == ("vulkan",)


def test_loading_imports_no_sdk():
    code = ("import sys, tvm, tvm_backend_vulkan; tvm_backend_vulkan.register_backend(); "
            "print(sorted(m for m in ('numpy', 'vulkan', 'cffi', 'tvm_backend_vulkan.codegen', "
            "'tvm_backend_vulkan.executable') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
