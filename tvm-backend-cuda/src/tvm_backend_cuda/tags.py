"""NVIDIA target tags as data: one line per tag (the seed's ``nvidia/*`` list, plus H200 and B200).

``_cuda(name, arch, shared_mem=49152, regs=65536, **extra)`` builds the seed's config::

    {"kind": "cuda", "keys": ["cuda", "gpu"], "arch": arch, "max_shared_memory_per_block":
     shared_mem, "max_threads_per_block": 1024, "thread_warp_size": 32,
     "registers_per_block": regs, **extra}

Jetson modules add a host target. The seed's Jetson host is ``{"kind": "llvm", "mtriple":
"aarch64-linux-gnu", "mcpu": ..., "num-cores": ...}``; this project has no ``llvm`` kind, so the
host is core's ``c`` kind with the same ``mcpu`` (the CPU cores are kept in ``host_num_cores``
of the tag's own record, :data:`JETSON_HOSTS`).

Only the name, arch, shared memory, register file and L2 size differ between tags: add a line.
"""

from __future__ import annotations

import re
from typing import Any

from tvm.target import Attr, TargetKind

__all__ = ["JETSON_HOSTS", "KINDS", "TAGS", "validate_arch"]

_KB = 1024
_MB = 1024 * 1024


def _cuda(arch: str, shared_mem: int = 49152, regs: int = 65536, **extra: Any) -> dict[str, Any]:
    return {"kind": "cuda", "keys": ["cuda", "gpu"], "arch": arch,
            "max_shared_memory_per_block": shared_mem, "max_threads_per_block": 1024,
            "thread_warp_size": 32, "registers_per_block": regs, **extra}


def _jetson(arch: str, mcpu: str, num_cores: int, regs: int = 65536) -> dict[str, Any]:
    cfg = _cuda(arch, regs=regs)
    cfg["host"] = {"kind": "c", "mcpu": mcpu}
    JETSON_HOSTS[arch + ":" + mcpu] = {"mtriple": "aarch64-linux-gnu", "mcpu": mcpu,
                                       "num-cores": num_cores}
    return cfg


JETSON_HOSTS: dict[str, dict[str, Any]] = {}

# fmt: off
TAGS: dict[str, dict[str, Any]] = {
    # -- datacenter: Blackwell, Hopper, Ampere, Turing, Volta, Pascal, Maxwell, Kepler, Fermi ----
    "nvidia/nvidia-b200":            _cuda("sm_100a", l2_cache_size_bytes=126 * _MB),
    "nvidia/nvidia-b100":            _cuda("sm_100a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-gb200":           _cuda("sm_100a", l2_cache_size_bytes=126 * _MB),
    "nvidia/nvidia-h200":            _cuda("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-h100":            _cuda("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-h800":            _cuda("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-gh200":           _cuda("sm_90a", l2_cache_size_bytes=52428800),
    "nvidia/nvidia-l40s":            _cuda("sm_89", l2_cache_size_bytes=96 * _MB),
    "nvidia/nvidia-l40":             _cuda("sm_89", l2_cache_size_bytes=96 * _MB),
    "nvidia/nvidia-l4":              _cuda("sm_89", l2_cache_size_bytes=48 * _MB),
    "nvidia/nvidia-a100":            _cuda("sm_80", l2_cache_size_bytes=41943040),
    "nvidia/nvidia-a800":            _cuda("sm_80", l2_cache_size_bytes=41943040),
    "nvidia/nvidia-a40":             _cuda("sm_86"),
    "nvidia/nvidia-a30":             _cuda("sm_80"),
    "nvidia/nvidia-a16":             _cuda("sm_86"),
    "nvidia/nvidia-a10g":            _cuda("sm_86"),
    "nvidia/nvidia-a10":             _cuda("sm_86"),
    "nvidia/nvidia-a2":              _cuda("sm_86"),
    "nvidia/nvidia-t4":              _cuda("sm_75"),
    "nvidia/nvidia-v100":            _cuda("sm_70"),
    "nvidia/tesla-v100":             _cuda("sm_70"),
    "nvidia/tesla-p100":             _cuda("sm_60"),
    "nvidia/tesla-p40":              _cuda("sm_61"),
    "nvidia/tesla-p4":               _cuda("sm_61"),
    "nvidia/tesla-m60":              _cuda("sm_52"),
    "nvidia/tesla-m40":              _cuda("sm_52"),
    "nvidia/tesla-k80":              _cuda("sm_37"),
    "nvidia/tesla-k40":              _cuda("sm_35"),
    "nvidia/tesla-k20":              _cuda("sm_35"),
    "nvidia/tesla-c2075":            _cuda("sm_20", regs=32768),
    "nvidia/tesla-c2050":            _cuda("sm_20", regs=32768),
    "nvidia/tesla-c2070":            _cuda("sm_20", regs=32768),
    # -- workstation ---------------------------------------------------------------------------
    "nvidia/rtx-pro-6000-blackwell": _cuda("sm_120", l2_cache_size_bytes=128 * _MB),
    "nvidia/rtx-6000-ada":           _cuda("sm_89", l2_cache_size_bytes=96 * _MB),
    "nvidia/rtx-a6000":              _cuda("sm_86"),
    "nvidia/rtx-a5000":              _cuda("sm_86"),
    "nvidia/rtx-a4000":              _cuda("sm_86"),
    "nvidia/quadro-rtx-8000":        _cuda("sm_75"),
    "nvidia/quadro-rtx-6000":        _cuda("sm_75"),
    "nvidia/quadro-rtx-5000":        _cuda("sm_75"),
    "nvidia/quadro-rtx-4000":        _cuda("sm_75"),
    "nvidia/quadro-gv100":           _cuda("sm_70"),
    "nvidia/quadro-gp100":           _cuda("sm_60"),
    "nvidia/quadro-p6000":           _cuda("sm_61"),
    "nvidia/quadro-k6000":           _cuda("sm_35"),
    # -- GeForce 50 series (Blackwell) -------------------------------------------------------
    "nvidia/geforce-rtx-5090":       _cuda("sm_120", l2_cache_size_bytes=96 * _MB),
    "nvidia/geforce-rtx-5080":       _cuda("sm_120", l2_cache_size_bytes=64 * _MB),
    "nvidia/geforce-rtx-5070-ti":    _cuda("sm_120", l2_cache_size_bytes=48 * _MB),
    "nvidia/geforce-rtx-5070":       _cuda("sm_120", l2_cache_size_bytes=48 * _MB),
    "nvidia/geforce-rtx-5060-ti":    _cuda("sm_120", l2_cache_size_bytes=33554432),
    "nvidia/geforce-rtx-5060":       _cuda("sm_120", l2_cache_size_bytes=32 * _MB),
    # -- GeForce 40 series (Ada) ---------------------------------------------------------------
    "nvidia/geforce-rtx-4090":       _cuda("sm_89", l2_cache_size_bytes=75497472),
    "nvidia/geforce-rtx-4080-super": _cuda("sm_89", l2_cache_size_bytes=64 * _MB),
    "nvidia/geforce-rtx-4080":       _cuda("sm_89", l2_cache_size_bytes=64 * _MB),
    "nvidia/geforce-rtx-4070-ti":    _cuda("sm_89", l2_cache_size_bytes=48 * _MB),
    "nvidia/geforce-rtx-4070":       _cuda("sm_89", l2_cache_size_bytes=36 * _MB),
    "nvidia/geforce-rtx-4060-ti":    _cuda("sm_89", l2_cache_size_bytes=32 * _MB),
    "nvidia/geforce-rtx-4060":       _cuda("sm_89", l2_cache_size_bytes=24 * _MB),
    # -- GeForce 30 series (Ampere) ------------------------------------------------------------
    "nvidia/geforce-rtx-3090-ti":    _cuda("sm_86"),
    "nvidia/geforce-rtx-3090":       _cuda("sm_86"),
    "nvidia/geforce-rtx-3080-ti":    _cuda("sm_86"),
    "nvidia/geforce-rtx-3080":       _cuda("sm_86"),
    "nvidia/geforce-rtx-3070-ti":    _cuda("sm_86"),
    "nvidia/geforce-rtx-3070":       _cuda("sm_86"),
    "nvidia/geforce-rtx-3060-ti":    _cuda("sm_86"),
    "nvidia/geforce-rtx-3060":       _cuda("sm_86"),
    "nvidia/geforce-rtx-3050":       _cuda("sm_86"),
    # -- GeForce 20 and 16 series (Turing) -----------------------------------------------------
    "nvidia/geforce-rtx-2080-ti":    _cuda("sm_75"),
    "nvidia/geforce-rtx-2080-super": _cuda("sm_75"),
    "nvidia/geforce-rtx-2080":       _cuda("sm_75"),
    "nvidia/geforce-rtx-2070-super": _cuda("sm_75"),
    "nvidia/geforce-rtx-2070":       _cuda("sm_75"),
    "nvidia/geforce-rtx-2060":       _cuda("sm_75"),
    "nvidia/titan-rtx":              _cuda("sm_75"),
    "nvidia/geforce-gtx-1660-ti":    _cuda("sm_75"),
    "nvidia/geforce-gtx-1650":       _cuda("sm_75"),
    # -- GeForce 10 series and older -----------------------------------------------------------
    "nvidia/geforce-gtx-1080-ti":    _cuda("sm_61"),
    "nvidia/geforce-gtx-1080":       _cuda("sm_61"),
    "nvidia/geforce-gtx-1070":       _cuda("sm_61"),
    "nvidia/geforce-gtx-1060":       _cuda("sm_61"),
    "nvidia/geforce-gtx-1050":       _cuda("sm_61"),
    "nvidia/titan-v":                _cuda("sm_70"),
    "nvidia/titan-xp":               _cuda("sm_61"),
    "nvidia/geforce-gtx-980-ti":     _cuda("sm_52"),
    "nvidia/geforce-gtx-980":        _cuda("sm_52"),
    "nvidia/geforce-gtx-970":        _cuda("sm_52"),
    "nvidia/geforce-gtx-titan-x":    _cuda("sm_52"),
    "nvidia/geforce-gtx-780-ti":     _cuda("sm_35"),
    "nvidia/geforce-gtx-titan":      _cuda("sm_35"),
    "nvidia/geforce-gtx-580":        _cuda("sm_20", regs=32768),
    "nvidia/geforce-gtx-480":        _cuda("sm_20", regs=32768),
    # -- Jetson modules ------------------------------------------------------------------------
    "nvidia/jetson-agx-thor":        _jetson("sm_110", "neoverse-v3ae", 14),
    "nvidia/jetson-agx-orin-64gb":   _jetson("sm_87", "cortex-a78", 12),
    "nvidia/jetson-agx-orin-32gb":   _jetson("sm_87", "cortex-a78", 8),
    "nvidia/jetson-orin-nx":         _jetson("sm_87", "cortex-a78", 8),
    "nvidia/jetson-orin-nano":       _jetson("sm_87", "carmel", 6),
    "nvidia/jetson-agx-xavier":      _jetson("sm_72", "carmel", 8),
    "nvidia/jetson-xavier-nx":       _jetson("sm_72", "carmel", 6),
    "nvidia/jetson-tx2":             _jetson("sm_62", "cortex-a57", 4),
    "nvidia/jetson-nano":            _jetson("sm_53", "cortex-a57", 4),
}
# fmt: on


# -- the target kind -----------------------------------------------------------------------------

_ARCH = re.compile(r"^sm_(\d{2,3})(a?)$")


def validate_arch(arch: str) -> str:
    """Check a CUDA arch string: ``sm_XX`` or ``sm_XXa`` (the ``a`` suffix from sm_90 on)."""
    m = _ARCH.match(arch) if isinstance(arch, str) else None
    if m is None:
        raise ValueError(f"invalid CUDA arch {arch!r}: expected 'sm_XX' or 'sm_XXa' "
                         "(e.g. 'sm_80', 'sm_90a', 'sm_100a')")
    if m.group(2) and int(m.group(1)) < 90:
        raise ValueError(f"invalid CUDA arch {arch!r}: the 'a' suffix exists from sm_90 on "
                         f"(use 'sm_{m.group(1)}')")
    return arch


def _validate(attrs: dict[str, Any]) -> None:
    if "arch" in attrs:
        validate_arch(attrs["arch"])
    for key in ("max_shared_memory_per_block", "max_threads_per_block", "thread_warp_size",
                "registers_per_block", "max_num_threads"):
        if attrs.get(key, 1) <= 0:
            raise ValueError(f"{key} must be positive, got {attrs[key]}")
    if attrs.get("l2_cache_size_bytes", 0) < 0:
        raise ValueError(f"l2_cache_size_bytes must be >= 0, got {attrs['l2_cache_size_bytes']}")
    if attrs["max_num_threads"] > attrs["max_threads_per_block"]:
        raise ValueError(f"max_num_threads ({attrs['max_num_threads']}) exceeds "
                         f"max_threads_per_block ({attrs['max_threads_per_block']})")


KINDS = [
    TargetKind(
        "cuda",
        attrs={
            "arch": Attr(str, doc="SM architecture: sm_XX or sm_XXa (default: the GPU's own when "
                                  "one is present at build time, else sm_80)"),
            "max_shared_memory_per_block": Attr(int, 49152, "shared memory per block without "
                                                            "opt-in, bytes"),
            "max_threads_per_block": Attr(int, 1024, "threads per block at most"),
            "thread_warp_size": Attr(int, 32, "threads per warp"),
            "registers_per_block": Attr(int, 65536, "32-bit registers per block"),
            "l2_cache_size_bytes": Attr(int, doc="L2 cache size in bytes"),
            "max_num_threads": Attr(int, 1024, "threads per block the compiler assumes"),
            "libs": Attr(tuple, doc="extra libraries (unused; kept for seed configs)"),
        },
        default_keys=("cuda", "gpu"),
        device_type="cuda",
        validate=_validate,
        doc="NVIDIA GPUs through CUDA C++ and NVRTC.",
    )
]
