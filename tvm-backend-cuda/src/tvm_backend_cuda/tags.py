"""NVIDIA target tags, as data: one line per tag.

The first block is the seed's tag file, tag for tag, in its order and with its exact configs
(240 GPUs and 4 Jetson modules with an LLVM host); our additions follow. Every config is a
literal; ``_CUDA`` holds the attributes all desktop/server tags share::

    {"kind": "cuda", "keys": ["cuda", "gpu"], "max_shared_memory_per_block": 49152,
     "max_threads_per_block": 1024, "thread_warp_size": 32, "registers_per_block": 65536}

Fermi-class parts (sm_20, sm_21) and the first Jetsons have 32768 registers per block
(``_REGS32K``). Jetson modules with an ARM host (``_JETSON``, no ``keys``) name their CPU as an
``llvm`` host target, as the seed does. To add a GPU, add a line.
"""

from __future__ import annotations

import re
from typing import Any

from tvm.backend.sdk import check_thread_counts
from tvm.error import TargetError
from tvm.target import Attr, TargetKind

__all__ = ["EXTRA_TAGS", "KIND", "KINDS", "SEED_TAGS", "TAGS", "check_arch", "parse_arch",
           "sm_version", "validate_arch"]

_CUDA: dict[str, Any] = {
    "kind": "cuda", "keys": ["cuda", "gpu"], "max_shared_memory_per_block": 49152,
    "max_threads_per_block": 1024, "thread_warp_size": 32, "registers_per_block": 65536,
}
_REGS32K: dict[str, Any] = {**_CUDA, "registers_per_block": 32768}
_JETSON: dict[str, Any] = {
    "kind": "cuda", "max_shared_memory_per_block": 49152, "max_threads_per_block": 1024,
    "thread_warp_size": 32, "registers_per_block": 65536,
}
_ARM64_LINUX: dict[str, Any] = {"kind": "llvm", "mtriple": "aarch64-linux-gnu"}
_MB = 1024 * 1024

# fmt: off
SEED_TAGS: dict[str, dict[str, Any]] = {
    # -- data center / Tesla -----------------------------------------------------------------
    "nvidia/nvidia-a100":               {**_CUDA, "arch": "sm_80", "l2_cache_size_bytes": 41943040},
    "nvidia/nvidia-h100":               {**_CUDA, "arch": "sm_90a", "l2_cache_size_bytes": 52428800},
    "nvidia/nvidia-b100":               {**_CUDA, "arch": "sm_100a", "l2_cache_size_bytes": 52428800},
    "nvidia/nvidia-a40":                {**_CUDA, "arch": "sm_86"},
    "nvidia/nvidia-a30":                {**_CUDA, "arch": "sm_80"},
    "nvidia/nvidia-a10":                {**_CUDA, "arch": "sm_86"},
    "nvidia/nvidia-a10g":               {**_CUDA, "arch": "sm_86"},
    "nvidia/nvidia-a16":                {**_CUDA, "arch": "sm_86"},
    "nvidia/nvidia-a2":                 {**_CUDA, "arch": "sm_86"},
    "nvidia/nvidia-t4":                 {**_CUDA, "arch": "sm_75"},
    "nvidia/nvidia-v100":               {**_CUDA, "arch": "sm_70"},
    "nvidia/tesla-p100":                {**_CUDA, "arch": "sm_60"},
    "nvidia/tesla-p40":                 {**_CUDA, "arch": "sm_61"},
    "nvidia/tesla-p4":                  {**_CUDA, "arch": "sm_61"},
    "nvidia/tesla-m60":                 {**_CUDA, "arch": "sm_52"},
    "nvidia/tesla-m40":                 {**_CUDA, "arch": "sm_52"},
    "nvidia/tesla-k80":                 {**_CUDA, "arch": "sm_37"},
    "nvidia/tesla-k40":                 {**_CUDA, "arch": "sm_35"},
    "nvidia/tesla-k20":                 {**_CUDA, "arch": "sm_35"},
    "nvidia/tesla-k10":                 {**_CUDA, "arch": "sm_30"},
    "nvidia/tesla-c2075":               {**_REGS32K, "arch": "sm_20"},
    "nvidia/tesla-c2050":               {**_REGS32K, "arch": "sm_20"},
    "nvidia/tesla-c2070":               {**_REGS32K, "arch": "sm_20"},
    # -- Quadro / RTX professional desktop ---------------------------------------------------
    "nvidia/rtx-a6000":                 {**_CUDA, "arch": "sm_86"},
    "nvidia/quadro-rtx-8000":           {**_CUDA, "arch": "sm_75"},
    "nvidia/quadro-rtx-6000":           {**_CUDA, "arch": "sm_75"},
    "nvidia/quadro-rtx-5000":           {**_CUDA, "arch": "sm_75"},
    "nvidia/quadro-rtx-4000":           {**_CUDA, "arch": "sm_75"},
    "nvidia/quadro-gv100":              {**_CUDA, "arch": "sm_70"},
    "nvidia/quadro-gp100":              {**_CUDA, "arch": "sm_60"},
    "nvidia/quadro-p6000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p5000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p4000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p2200":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p2000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p1000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p620":               {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p600":               {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p400":               {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-m6000-24gb":         {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-m6000":              {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-k6000":              {**_CUDA, "arch": "sm_35"},
    "nvidia/quadro-m5000":              {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-k5200":              {**_CUDA, "arch": "sm_35"},
    "nvidia/quadro-k5000":              {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m4000":              {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-k4200":              {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k4000":              {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m2000":              {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-k2200":              {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k2000":              {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k2000d":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k1200":              {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k620":               {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k600":               {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k420":               {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-410":                {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-plex-7000":          {**_REGS32K, "arch": "sm_20"},
    # -- Quadro / RTX professional mobile (Turing) -------------------------------------------
    "nvidia/rtx-5000":                  {**_CUDA, "arch": "sm_75"},
    "nvidia/rtx-4000":                  {**_CUDA, "arch": "sm_75"},
    "nvidia/rtx-3000":                  {**_CUDA, "arch": "sm_75"},
    "nvidia/t2000":                     {**_CUDA, "arch": "sm_75"},
    "nvidia/t1000":                     {**_CUDA, "arch": "sm_75"},
    "nvidia/p620":                      {**_CUDA, "arch": "sm_61"},
    "nvidia/p520":                      {**_CUDA, "arch": "sm_61"},
    # -- Quadro professional mobile (Pascal / Maxwell) ---------------------------------------
    "nvidia/quadro-p5200":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p4200":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p3200":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p3000":              {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-p500":               {**_CUDA, "arch": "sm_61"},
    "nvidia/quadro-m5500m":             {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-m2200":              {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-m1200":              {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-m620":               {**_CUDA, "arch": "sm_52"},
    "nvidia/quadro-m520":               {**_CUDA, "arch": "sm_50"},
    # -- Quadro professional mobile (Kepler / Maxwell) ---------------------------------------
    "nvidia/quadro-k6000m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k5200m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k5100m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m5000m":             {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k500m":              {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k4200m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k4100m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m4000m":             {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k3100m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m3000m":             {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k2200m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-k2100m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m2000m":             {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k1100m":             {**_CUDA, "arch": "sm_30"},
    "nvidia/quadro-m1000m":             {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k620m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k610m":              {**_CUDA, "arch": "sm_35"},
    "nvidia/quadro-m600m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/quadro-k510m":              {**_CUDA, "arch": "sm_35"},
    "nvidia/quadro-m500m":              {**_CUDA, "arch": "sm_50"},
    # -- NVS ---------------------------------------------------------------------------------
    "nvidia/nvidia-nvs-810":            {**_CUDA, "arch": "sm_50"},
    "nvidia/nvidia-nvs-510":            {**_CUDA, "arch": "sm_30"},
    "nvidia/nvidia-nvs-315":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/nvidia-nvs-310":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/nvs-5400m":                 {**_REGS32K, "arch": "sm_21"},
    "nvidia/nvs-5200m":                 {**_REGS32K, "arch": "sm_21"},
    "nvidia/nvs-4200m":                 {**_REGS32K, "arch": "sm_21"},
    # -- GeForce RTX 50 / 40 / 30 series desktop ---------------------------------------------
    "nvidia/geforce-rtx-5060-ti":       {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 33554432},
    "nvidia/geforce-rtx-4090":          {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 75497472},
    "nvidia/geforce-rtx-3090-ti":       {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3090":          {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3080-ti":       {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3080":          {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3070-ti":       {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3070":          {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3060":          {**_CUDA, "arch": "sm_86"},
    # -- GeForce RTX 20 series / TITAN (Turing) ----------------------------------------------
    "nvidia/nvidia-titan-rtx":          {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-rtx-2080-ti":       {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-rtx-2080":          {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-rtx-2070":          {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-rtx-2060":          {**_CUDA, "arch": "sm_75"},
    # -- GeForce TITAN / GTX 10 series (Volta / Pascal) --------------------------------------
    "nvidia/nvidia-titan-v":            {**_CUDA, "arch": "sm_70"},
    "nvidia/nvidia-titan-xp":           {**_CUDA, "arch": "sm_61"},
    "nvidia/nvidia-titan-x":            {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1080-ti":       {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1080":          {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1070-ti":       {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1070":          {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1060":          {**_CUDA, "arch": "sm_61"},
    "nvidia/geforce-gtx-1050":          {**_CUDA, "arch": "sm_61"},
    # -- GeForce GTX 900 / 700 series desktop (Maxwell / Kepler) -----------------------------
    "nvidia/geforce-gtx-titan-x":       {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-titan-z":       {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gtx-titan-black":   {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gtx-titan":         {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gtx-980-ti":        {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-980":           {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-970":           {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-960":           {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-950":           {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-780-ti":        {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gtx-780":           {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gtx-770":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-760":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-750-ti":        {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-gtx-750":           {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-gtx-690":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-680":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-670":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-660-ti":        {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-660":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-650-ti-boost":  {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-650-ti":        {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-650":           {**_CUDA, "arch": "sm_30"},
    # -- GeForce GTX 500 / 400 series desktop (Fermi) ----------------------------------------
    "nvidia/geforce-gtx-560-ti":        {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-550-ti":        {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-460":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gts-450":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-590":           {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-gtx-580":           {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-gtx-570":           {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-gtx-480":           {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-gtx-470":           {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-gtx-465":           {**_REGS32K, "arch": "sm_20"},
    # -- GeForce GT desktop (Kepler / Fermi) -------------------------------------------------
    "nvidia/geforce-gt-740":            {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-730":            {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gt-730-ddr3,128bit": {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-720":            {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gt-705":            {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gt-640-gddr5":      {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-gt-640-gddr3":      {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-630":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-620":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-610":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-520":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-440":            {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-430":            {**_REGS32K, "arch": "sm_21"},
    # -- GeForce notebook (Maxwell / Kepler) -------------------------------------------------
    "nvidia/geforce-gtx-980m":          {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-970m":          {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-965m":          {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-960m":          {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-gtx-950m":          {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-940m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-930m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-920m":              {**_CUDA, "arch": "sm_35"},
    "nvidia/geforce-910m":              {**_CUDA, "arch": "sm_52"},
    "nvidia/geforce-gtx-880m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-870m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-860m-sm-30":    {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-860m-sm-50":    {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-gtx-850m":          {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-840m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-830m":              {**_CUDA, "arch": "sm_50"},
    "nvidia/geforce-820m":              {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-800m":              {**_REGS32K, "arch": "sm_21"},
    # -- GeForce notebook (Kepler / Fermi, older) --------------------------------------------
    "nvidia/geforce-gtx-780m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-770m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-765m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-760m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-680mx":         {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-680m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-675mx":         {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-675m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-670mx":         {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gtx-670m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-660m":          {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-755m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-750m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-650m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-745m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-645m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-740m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-730m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-640m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-640m-le":        {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-735m":           {**_CUDA, "arch": "sm_30"},
    "nvidia/geforce-gt-635m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-630m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-625m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-720m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-620m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-710m":              {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-705m":              {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-610m":              {**_REGS32K, "arch": "sm_21"},
    # -- GeForce notebook (Fermi, GTX 5xxM / 4xxM) -------------------------------------------
    "nvidia/geforce-gtx-580m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-570m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-560m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-555m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-550m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-540m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-525m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-520mx":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-520m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-485m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-470m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-460m":          {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-445m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-435m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-420m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gt-415m":           {**_REGS32K, "arch": "sm_21"},
    "nvidia/geforce-gtx-480m":          {**_REGS32K, "arch": "sm_20"},
    "nvidia/geforce-410m":              {**_REGS32K, "arch": "sm_21"},
    # -- Jetson / Tegra boards without a host target -----------------------------------------
    "nvidia/jetson-nano":               {**_REGS32K, "arch": "sm_53"},
    "nvidia/jetson-tx2":                {**_REGS32K, "arch": "sm_62"},
    "nvidia/jetson-tx1":                {**_REGS32K, "arch": "sm_53"},
    "nvidia/tegra-x1":                  {**_REGS32K, "arch": "sm_53"},
    # -- Jetson modules with their ARM host --------------------------------------------------
    "nvidia/jetson-agx-xavier":    {**_JETSON, "arch": "sm_72",
                                    "host": {**_ARM64_LINUX, "mcpu": "carmel", "num-cores": 8}},
    "nvidia/jetson-orin-nano":     {**_JETSON, "arch": "sm_87",
                                    "host": {**_ARM64_LINUX, "mcpu": "carmel", "num-cores": 6}},
    "nvidia/jetson-agx-orin-32gb": {**_JETSON, "arch": "sm_87",
                                    "host": {**_ARM64_LINUX, "mcpu": "cortex-a78", "num-cores": 8}},
    "nvidia/jetson-agx-orin-64gb": {**_JETSON, "arch": "sm_87",
                                    "host": {**_ARM64_LINUX, "mcpu": "cortex-a78", "num-cores": 12}},
}

# Ours, beyond the seed: newer parts, and the older spellings of three TITAN tags that this
# project used before it took the seed's (nvidia/nvidia-titan-*).
EXTRA_TAGS: dict[str, dict[str, Any]] = {
    "nvidia/nvidia-b200":               {**_CUDA, "arch": "sm_100a", "l2_cache_size_bytes": 126 * _MB},
    "nvidia/nvidia-gb200":              {**_CUDA, "arch": "sm_100a", "l2_cache_size_bytes": 126 * _MB},
    "nvidia/nvidia-h200":               {**_CUDA, "arch": "sm_90a", "l2_cache_size_bytes": 52428800},
    "nvidia/nvidia-h800":               {**_CUDA, "arch": "sm_90a", "l2_cache_size_bytes": 52428800},
    "nvidia/nvidia-gh200":              {**_CUDA, "arch": "sm_90a", "l2_cache_size_bytes": 52428800},
    "nvidia/nvidia-l40s":               {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 96 * _MB},
    "nvidia/nvidia-l40":                {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 96 * _MB},
    "nvidia/nvidia-l4":                 {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 48 * _MB},
    "nvidia/nvidia-a800":               {**_CUDA, "arch": "sm_80", "l2_cache_size_bytes": 41943040},
    "nvidia/tesla-v100":                {**_CUDA, "arch": "sm_70"},
    "nvidia/rtx-pro-6000-blackwell":    {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 128 * _MB},
    "nvidia/rtx-6000-ada":              {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 96 * _MB},
    "nvidia/rtx-a5000":                 {**_CUDA, "arch": "sm_86"},
    "nvidia/rtx-a4000":                 {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-5090":          {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 96 * _MB},
    "nvidia/geforce-rtx-5080":          {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 64 * _MB},
    "nvidia/geforce-rtx-5070-ti":       {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 48 * _MB},
    "nvidia/geforce-rtx-5070":          {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 48 * _MB},
    "nvidia/geforce-rtx-5060":          {**_CUDA, "arch": "sm_120", "l2_cache_size_bytes": 32 * _MB},
    "nvidia/geforce-rtx-4080-super":    {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 64 * _MB},
    "nvidia/geforce-rtx-4080":          {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 64 * _MB},
    "nvidia/geforce-rtx-4070-ti":       {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 48 * _MB},
    "nvidia/geforce-rtx-4070":          {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 36 * _MB},
    "nvidia/geforce-rtx-4060-ti":       {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 32 * _MB},
    "nvidia/geforce-rtx-4060":          {**_CUDA, "arch": "sm_89", "l2_cache_size_bytes": 24 * _MB},
    "nvidia/geforce-rtx-3060-ti":       {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-3050":          {**_CUDA, "arch": "sm_86"},
    "nvidia/geforce-rtx-2080-super":    {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-rtx-2070-super":    {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-gtx-1660-ti":       {**_CUDA, "arch": "sm_75"},
    "nvidia/geforce-gtx-1650":          {**_CUDA, "arch": "sm_75"},
    "nvidia/titan-rtx":                 {**_CUDA, "arch": "sm_75"},
    "nvidia/titan-v":                   {**_CUDA, "arch": "sm_70"},
    "nvidia/titan-xp":                  {**_CUDA, "arch": "sm_61"},
    "nvidia/jetson-agx-thor":      {**_JETSON, "arch": "sm_110a", "max_shared_memory_per_block": 232448,
                                    "l2_cache_size_bytes": 33554432,
                                    "host": {**_ARM64_LINUX, "mcpu": "neoverse-v3ae", "num-cores": 14}},
    "nvidia/jetson-orin-nx":       {**_JETSON, "arch": "sm_87",
                                    "host": {**_ARM64_LINUX, "mcpu": "cortex-a78", "num-cores": 8}},
    "nvidia/jetson-xavier-nx":     {**_JETSON, "arch": "sm_72",
                                    "host": {**_ARM64_LINUX, "mcpu": "carmel", "num-cores": 6}},
}
# fmt: on

TAGS: dict[str, dict[str, Any]] = {**SEED_TAGS, **EXTRA_TAGS}


# -- the target kind (data, and the check of a target's attributes) -----------------------------------------------------------------------------

_ARCH = re.compile(r"^sm_(\d{2,3})(a?)$")
_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")  # what NVRTC compiles for: 'f' too


def parse_arch(arch: str) -> tuple[int, str]:
    """``"sm_90a"`` -> ``(90, "a")``. Raises TargetError for anything else."""
    m = _ARCH_RE.match(arch) if isinstance(arch, str) else None
    if m is None:
        raise TargetError(
            f"invalid CUDA arch {arch!r}: expected 'sm_XX' or 'sm_XXa' (e.g. 'sm_80', 'sm_90a', "
            "'sm_100a')"
        )
    major_minor, suffix = int(m.group(1)), m.group(2)
    if suffix and major_minor < 90:
        raise TargetError(
            f"invalid CUDA arch {arch!r}: the '{suffix}' suffix exists from sm_90 on "
            f"(use 'sm_{major_minor}')"
        )
    return major_minor, suffix


def sm_version(target: Any) -> int | None:
    """80 for sm_80, 90 for sm_90a, ...; None when the target names no arch."""
    arch = target.attrs.get("arch") if target is not None else None
    if not arch:
        return None
    digits = "".join(ch for ch in str(arch)[3:] if ch.isdigit())
    return int(digits) if digits else None


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


# Shared memory per block with opt-in, by compute capability (CUDA C++ Programming Guide,
# "Technical Specifications per Compute Capability"); earlier archs: 48 KB.
OPTIN_SHARED_MEMORY = {70: 98304, 72: 98304, 75: 65536, 80: 166912, 86: 101376, 87: 166912,
                        89: 101376, 90: 232448, 100: 232448, 101: 232448, 103: 232448,
                        110: 232448, 120: 101376, 121: 101376}


# Archs with CTA pairs (tcgen05 ``cta_group::2``): the datacenter Blackwells, with their
# arch-specific ('a') or family ('f') suffix. sm_120 (consumer Blackwell) has no tcgen05.
CTA_PAIR_ARCHS = (100, 101, 103, 110)


def _validate(attrs: dict[str, Any]) -> dict[str, Any]:
    if "arch" in attrs:
        validate_arch(attrs["arch"])
        num, suffix = parse_arch(attrs["arch"])
        if "max_dynamic_shared_memory_per_block" not in attrs:
            attrs["max_dynamic_shared_memory_per_block"] = OPTIN_SHARED_MEMORY.get(num, 49152)
        if "cta_pairs" not in attrs:
            attrs["cta_pairs"] = num in CTA_PAIR_ARCHS and bool(suffix)
    for key in ("max_shared_memory_per_block", "max_threads_per_block", "thread_warp_size",
                "registers_per_block", "max_num_threads"):
        if attrs.get(key, 1) <= 0:
            raise ValueError(f"{key} must be positive, got {attrs[key]}")
    if attrs.get("l2_cache_size_bytes", 0) < 0:
        raise ValueError(f"l2_cache_size_bytes must be >= 0, got {attrs['l2_cache_size_bytes']}")
    check_thread_counts(attrs)
    return attrs


KIND = "cuda"
KINDS = [
    TargetKind(
        KIND,
        attrs={
            "arch": Attr(str, doc="SM architecture: sm_XX or sm_XXa (default: the GPU's own when "
                                  "one is present at build time, else sm_80)"),
            "max_shared_memory_per_block": Attr(int, 49152, "shared memory per block without "
                                                            "opt-in, bytes"),
            "max_threads_per_block": Attr(int, 1024, "threads per block at most"),
            "thread_warp_size": Attr(int, 32, "threads per warp"),
            "registers_per_block": Attr(int, 65536, "32-bit registers per block"),
            "max_grid_dims": Attr(tuple, (2**31 - 1, 65535, 65535), "blocks per grid along x, "
                                                                     "y and z"),
            "max_block_dims": Attr(tuple, (1024, 1024, 64), "threads per block along x, y "
                                                             "and z"),
            "max_dynamic_shared_memory_per_block": Attr(
                int, doc="shared memory per block with opt-in (static and dynamic), bytes "
                         "(default: the arch's)"),
            "l2_cache_size_bytes": Attr(int, doc="L2 cache size in bytes"),
            "cta_pairs": Attr(bool, doc="whether clusters have CTA pairs (T.cta_id_in_pair; "
                                        "default: from the arch, sm_100a and its family)"),
            "max_num_threads": Attr(int, 1024, "threads per block the compiler assumes"),
            "libs": Attr(tuple, doc="extra libraries (unused; kept for seed configs)"),
        },
        default_keys=("cuda", "gpu"),
        device_type="cuda",
        validate=_validate,
        doc="NVIDIA GPUs through CUDA C++ and NVRTC.",
        vector_bytes=16,  # the widest load or store of one thread: 128 bits (float4)
        arch_attr="arch",  # Target("sm_90a") is Target("cuda -arch=sm_90a")
        arch_pattern=r"sm_\d{2,3}[af]?",
    )
]


def check_arch(arch: str | None, device_id: int, major: int, minor: int) -> None:
    """Refuse code built for ``arch`` on device ``device_id`` of compute capability
    ``major.minor`` when that device cannot run it (the GPU's loader, and the CUDA emulator's
    for its emulated device); None: built for whatever loads it."""
    if not arch:
        return
    num, suffix = parse_arch(arch)
    dev_num = major * 10 + minor
    # 'a' cubins run only on that exact chip; plain and 'f' ones on later minors of the major
    ok = num == dev_num if suffix == "a" else (num // 10 == major and num <= dev_num)
    if not ok:
        raise RuntimeError(
            f"this cubin was built for {arch} and cannot run on device {device_id} "
            f"(compute capability {major}.{minor}); compile for sm_{dev_num}"
            + ("a" if dev_num >= 90 else "")
        )
