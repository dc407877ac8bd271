"""The CPU features that choose the embedding path, read cheaply and without torch:
/proc/cpuinfo on Linux, one ``sysctl`` call on macOS, the Windows API's feature probe on
Windows. What cannot be read counts as absent, so an unknown CPU gets the path that is
exact and fast everywhere (float32 on onnxruntime)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

# Instructions that multiply int8 vectors and sum into int32 in one step (x86 VNNI and
# AMX, arm64's SDOT/UDOT): where onnxruntime's int8 kernels run about 2x float32. Without
# them, x86 int8 goes through AVX2's pairwise 16-bit products (7-bit weights keep those
# exact), ~1.4x float32: measured on the AMX Xeon with everything past AVX2 hidden
# (bench/avx2_only.sh; an earlier int8 recipe ran 1.54-1.58x plain encode on an AVX2 EPYC).
# Older x86 and arm64 without SDOT are unmeasured.
INT8_DOT_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8", "asimddp")
INT8_PAIRED_FLAG = "avx2"
# Flags that make bfloat16 native: torch's autocast then runs ~1.9x float32.
BF16_FLAGS = ("amx_bf16", "avx512_bf16")
# Flags worth printing beside a speed figure: they decide which path runs and how fast.
SPEED_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile", "amx_bf16",
               "amx_int8", "asimd", "asimddp", "i8mm", "bf16", "sme")
# macOS names (``sysctl hw.optional`` on Apple silicon, ``machdep.cpu.*features`` on
# Intel Macs) mapped to the Linux flag names used above.
MACOS_FLAGS = {"hw.optional.arm.FEAT_DotProd": "asimddp", "hw.optional.arm.FEAT_I8MM": "i8mm",
               "hw.optional.arm.FEAT_BF16": "bf16", "hw.optional.neon": "asimd", "AVX2": "avx2", "FMA": "fma",
               "AVX512F": "avx512f", "AVX512VNNI": "avx512_vnni"}
MACOS_SYSCTL = ("machdep.cpu.brand_string", "machdep.cpu.features", "machdep.cpu.leaf7_features", "hw.optional",
                "sysctl.proc_translated")  # hw.optional holds hw.optional.arm64 and, from macOS 12, the FEAT_ names
# IsProcessorFeaturePresent's codes for arm64's dot product (PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE)
# and x86's AVX2 (PF_AVX2_INSTRUCTIONS_AVAILABLE; an older Windows answers no). Windows offers
# no such probe for VNNI, so x86 Windows counts as without it and builds 7-bit int8 weights.
# arm64 cores by /proc/cpuinfo's ``CPU implementer`` and ``CPU part`` (the kernel's cputype.h),
# those of the clouds' and boards' CPUs VecBook is likely to meet.
ARM_CORES = {("0x41", "0xd03"): "Arm Cortex-A53", ("0x41", "0xd08"): "Arm Cortex-A72",
             ("0x41", "0xd0b"): "Arm Cortex-A76", ("0x41", "0xd0c"): "Arm Neoverse-N1",
             ("0x41", "0xd40"): "Arm Neoverse-V1", ("0x41", "0xd49"): "Arm Neoverse-N2",
             ("0x41", "0xd4f"): "Arm Neoverse-V2", ("0x41", "0xd8e"): "Arm Neoverse-N3",
             ("0x41", "0xd84"): "Arm Neoverse-V3", ("0xc0", "0xac3"): "Ampere-1"}
WINDOWS_ARM_DOT_PRODUCT = 43
WINDOWS_AVX2 = 40
WINDOWS_ARM64_MACHINE = 0xAA64  # IMAGE_FILE_MACHINE_ARM64, as IsWow64Process2 names the native CPU


@dataclass(frozen=True)
class CpuInfo:
    """A CPU's model name, its feature flags (Linux's names), and where they were read."""

    name: str
    flags: frozenset[str]
    source: str  # "/proc/cpuinfo", "sysctl", "windows" or "none"


def detect() -> CpuInfo:
    """This machine's CPU (read once per process)."""
    return _detect()


@lru_cache(maxsize=1)
def _detect() -> CpuInfo:
    if sys.platform == "darwin":
        return _from_sysctl(_run_sysctl())
    if sys.platform == "win32":
        return _from_windows()
    try:
        return parse_cpuinfo(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return CpuInfo(platform.processor() or platform.machine(), frozenset(), "none")


def parse_cpuinfo(text: str) -> CpuInfo:
    """The first processor's name and flags from /proc/cpuinfo's text (x86 ``flags``, arm64 ``Features``)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())  # the first processor's (a board's Model comes last)
    flags = frozenset(fields.get("flags", fields.get("Features", "")).split())
    return CpuInfo(fields.get("model name") or _arm_name(fields) or platform.machine(), flags, "/proc/cpuinfo")


def _arm_name(fields: dict[str, str]) -> str:
    """An arm64 CPU's name, which its /proc/cpuinfo leaves out: the board's (a Raspberry Pi's
    ``Model``) and the core's, from its implementer and part numbers ('' where neither is known)."""
    implementer, part = fields.get("CPU implementer", "").lower(), fields.get("CPU part", "").lower()
    core = ARM_CORES.get((implementer, part)) or (f"CPU implementer {implementer} part {part}" if part else "")
    board = fields.get("Model") or fields.get("Hardware", "")
    return f"{board} ({core})" if board and core else board or core


def _run_sysctl() -> str:
    """The macOS sysctl entries that name the CPU and its features ('' where sysctl fails)."""
    try:
        # One call (~5 ms); an unknown name (leaf7 on Apple silicon) is reported on stderr only.
        # By its full path: a GUI app's or launchd's PATH may leave /usr/sbin out.
        command = "/usr/sbin/sysctl" if os.path.exists("/usr/sbin/sysctl") else "sysctl"
        return subprocess.run([command, *MACOS_SYSCTL], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _from_sysctl(text: str) -> CpuInfo:
    """CpuInfo from ``sysctl`` output: ``name: value`` lines. An x86 Python translated by Rosetta
    counts as having no features: how fast its AVX2 runs there was never measured. Apple silicon
    on macOS 11, which names no ``hw.optional.arm.FEAT_*`` (macOS 12 added them), counts as having
    dot products: every Apple silicon core (M1 on) has SDOT/UDOT."""
    name, flags, translated, apple_silicon, named = "", set(), False, False, False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        named = named or key.startswith("hw.optional.arm.FEAT_")
        if key == "machdep.cpu.brand_string":
            name = value
        elif key in ("machdep.cpu.features", "machdep.cpu.leaf7_features"):
            flags.update(MACOS_FLAGS[word] for word in value.split() if word in MACOS_FLAGS)
        elif key in MACOS_FLAGS and value == "1":
            flags.add(MACOS_FLAGS[key])
        elif key == "sysctl.proc_translated":
            translated = value == "1"
        elif key == "hw.optional.arm64":
            apple_silicon = value == "1"
    if apple_silicon and not named:
        flags.add("asimddp")
    return CpuInfo(name or platform.machine(), frozenset() if translated else frozenset(flags), "sysctl")


def _from_windows() -> CpuInfo:
    """Windows: the processor string, and whether it has arm64's dot product or x86's AVX2. An
    x86 Python emulated on arm64 counts as having neither: its AVX2 speed was never measured."""
    name, flags = _windows_cpu_name() or platform.processor() or platform.machine(), set()
    arm = platform.machine().lower() in ("arm64", "aarch64")
    code, flag = (WINDOWS_ARM_DOT_PRODUCT, "asimddp") if arm else (WINDOWS_AVX2, INT8_PAIRED_FLAG)
    try:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        if kernel32.IsProcessorFeaturePresent(code) and (arm or not _emulated_on_arm64(kernel32)):
            flags.add(flag)
    except (OSError, AttributeError):
        pass
    return CpuInfo(name, frozenset(flags), "windows")


def _windows_cpu_name() -> str:
    """The CPU's name as Windows shows it (``Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz``), from the
    registry: ``platform.processor()`` there is CPUID's family string. '' where it cannot be read."""
    try:
        import winreg

        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0") as key:
            return str(winreg.QueryValueEx(key, "ProcessorNameString")[0]).strip()
    except (ImportError, OSError):
        return ""


def _emulated_on_arm64(kernel32: Any) -> bool:
    """Whether this (x86) process runs on an arm64 CPU, by IsWow64Process2's native machine
    (Windows 10 1709 and later; an older Windows has no arm64 emulation of x64)."""
    import ctypes

    process, native = ctypes.c_ushort(), ctypes.c_ushort()
    try:
        if not kernel32.IsWow64Process2(kernel32.GetCurrentProcess(), ctypes.byref(process), ctypes.byref(native)):
            return False
    except AttributeError:
        return False
    return native.value == WINDOWS_ARM64_MACHINE


def has_int8_dot(info: CpuInfo) -> bool:
    """True when the CPU multiplies int8 vectors into int32 in one instruction."""
    return any(flag in info.flags for flag in INT8_DOT_FLAGS)


def native_bf16(info: CpuInfo | None = None) -> bool:
    """True when the CPU runs bfloat16 natively (AMX or AVX512-BF16)."""
    return any(flag in (info or detect()).flags for flag in BF16_FLAGS)


def fast_int8(info: CpuInfo) -> bool:
    """True where onnxruntime's int8 kernels were measured faster than its float32 ones: int8
    dot products (~1.9x), or x86 AVX2 (~1.4x, with 7-bit weights)."""
    return has_int8_dot(info) or INT8_PAIRED_FLAG in info.flags


def auto_precision(info: CpuInfo, int8_passes_gate: bool) -> str:
    """The records path ``precision = "auto"`` takes on this CPU: int8 where its int8 kernels
    are fast (``fast_int8``) and the int8 recipe passed the quality gate, else float32 (both
    on onnxruntime). bfloat16 on torch is never automatic: on both CPU kinds with native
    bfloat16 where it was measured (an AMX Xeon, a Zen 4 EPYC) int8 indexed faster, and
    bfloat16 brings torch's import (~5 s) and memory (~300 MB) into the process."""
    return "int8" if fast_int8(info) and int8_passes_gate else "float32"


def cpu_description(info: CpuInfo | None = None) -> str:
    """The CPU's name, the flags that decide embedding speed and the records path
    ``precision = "auto"`` takes on it, for benchmark reports."""
    from .onnx_model import RECIPE_PASSES_GATE  # numpy only: cheap, and onnx_model imports this module

    info = info or detect()
    flags = " ".join(sorted(set(SPEED_FLAGS) & info.flags)) or "unknown"
    path = auto_precision(info, RECIPE_PASSES_GATE)
    if path == "int8" and not has_int8_dot(info):
        path = "int8, 7-bit weights"  # onnx_model.recipe: AVX2's paired 16-bit sums
    return f"{info.name} ({os.cpu_count()} logical cores; flags: {flags}; precision auto: {path})"
