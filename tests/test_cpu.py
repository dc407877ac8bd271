"""CPU detection (issue 29): the records path ``precision = "auto"`` takes is decided from
recorded /proc/cpuinfo and sysctl outputs of real CPU kinds (tests/data/cpuinfo/, written
from those CPUs' published flag lists; epyc-avx2.txt is this project's CI machine, and
xeon-kvm-amx.txt the first processor of the /proc/cpuinfo of the 2-core KVM guest, with AMX and
VNNI, that the int8 recipe was measured on; the Raspberry Pis' from their Cortex cores' flags and the
Pi's own Model line), without torch; an unreadable CPU gets float32."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vecbook import cpu
from conftest import DATA, ROOT

CPUINFO = DATA / "cpuinfo"

# file, name, int8 dot products, native bfloat16, the path auto takes
KINDS = [
    ("epyc-avx2.txt", "AMD EPYC", False, False, "int8"),  # AVX2's paired products, 7-bit weights
    ("epyc-zen4.txt", "AMD EPYC 9R14 96-Core Processor", True, True, "int8"),
    ("xeon-sapphire-rapids.txt", "Intel(R) Xeon(R) Platinum 8488C", True, True, "int8"),
    ("xeon-kvm-amx.txt", "Intel(R) Xeon(R) Processor", True, True, "int8"),
    ("core-alder-lake.txt", "12th Gen Intel(R) Core(TM) i7-1260P", True, False, "int8"),
    ("graviton3-arm64.txt", "Arm Neoverse-V1", True, False, "int8"),
    ("raspberry-pi-5.txt", "Raspberry Pi 5 Model B Rev 1.0 (Arm Cortex-A76)", True, False, "int8"),
    ("raspberry-pi-4.txt", "Raspberry Pi 4 Model B Rev 1.4 (Arm Cortex-A72)", False, False, "float32"),  # no SDOT
    ("xeon-sandy-bridge.txt", "Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz", False, False, "float32"),  # AVX only
]


@pytest.mark.parametrize("file, name, int8_dot, bf16, auto", KINDS)
def test_linux_cpu_kinds_are_read_from_proc_cpuinfo(file: str, name: str, int8_dot: bool, bf16: bool,
                                                    auto: str) -> None:
    info = cpu.parse_cpuinfo((CPUINFO / file).read_text(encoding="utf-8"))
    assert (info.name, info.source) == (name, "/proc/cpuinfo")
    assert cpu.has_int8_dot(info) is int8_dot
    assert cpu.native_bf16(info) is bf16


@pytest.mark.parametrize("file, name, int8_dot, bf16, auto", KINDS)
def test_auto_takes_int8_only_where_int8_is_fast_and_the_recipe_passed_the_gate(
        file: str, name: str, int8_dot: bool, bf16: bool, auto: str) -> None:
    info = cpu.parse_cpuinfo((CPUINFO / file).read_text(encoding="utf-8"))
    assert cpu.auto_precision(info, int8_passes_gate=True) == auto
    assert cpu.auto_precision(info, int8_passes_gate=False) == "float32"  # never bfloat16, on any CPU


@pytest.mark.parametrize("file, name, flags", [
    ("macos-apple-m1.txt", "Apple M1", {"asimddp", "asimd"}),
    ("macos-intel-coffee-lake.txt", "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", {"avx2", "fma"}),
])
def test_macos_cpus_are_read_from_sysctl(file: str, name: str, flags: set[str]) -> None:
    info = cpu._from_sysctl((CPUINFO / file).read_text(encoding="utf-8"))
    assert (info.name, info.flags, info.source) == (name, flags, "sysctl")
    assert cpu.has_int8_dot(info) is ("asimddp" in flags)
    assert cpu.auto_precision(info, int8_passes_gate=True) == "int8"  # dot products; AVX2 with 7-bit weights


def test_apple_silicon_on_macos_11_which_names_no_feat_entries_has_dot_products() -> None:
    """macOS 11 answers ``hw.optional.arm64`` and ``neon`` but no ``hw.optional.arm.FEAT_*``
    (macOS 12 added them); every Apple silicon core (M1 on) has SDOT/UDOT."""
    big_sur = "machdep.cpu.brand_string: Apple M1\nhw.optional.neon: 1\nhw.optional.arm64: 1\n"
    info = cpu._from_sysctl(big_sur)
    assert info.flags == {"asimd", "asimddp"} and cpu.auto_precision(info, int8_passes_gate=True) == "int8"
    # macOS 12 on names them: a FEAT_DotProd of 0 is believed
    assert cpu._from_sysctl(big_sur + "hw.optional.arm.FEAT_DotProd: 0\n").flags == {"asimd"}
    assert "asimddp" not in cpu._from_sysctl(big_sur.replace("arm64: 1", "arm64: 0")).flags


def test_an_x86_python_under_rosetta_counts_every_feature_as_absent() -> None:
    """Rosetta answers AVX2 on recent macOS, but how fast int8 runs translated was never measured."""
    text = (CPUINFO / "macos-intel-coffee-lake.txt").read_text(encoding="utf-8")
    assert cpu._from_sysctl(text + "sysctl.proc_translated: 0\n").flags == {"avx2", "fma"}
    info = cpu._from_sysctl(text + "sysctl.proc_translated: 1\n")
    assert info.flags == frozenset() and cpu.auto_precision(info, int8_passes_gate=True) == "float32"


def test_macos_runs_sysctl_by_its_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started by Claude Desktop or launchd gets a PATH without /usr/sbin, where sysctl
    is: looked up by name there, an M1 would count as featureless, and its MCP server would embed
    in float32 beside a shell's int8."""
    ran: list[str] = []

    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        ran.append(argv[0])
        return subprocess.CompletedProcess(argv, 0, (CPUINFO / "macos-apple-m1.txt").read_text(encoding="utf-8"), "")

    monkeypatch.setattr(cpu.subprocess, "run", run)
    monkeypatch.setattr(cpu.os.path, "exists", lambda path: path == "/usr/sbin/sysctl")
    assert cpu.has_int8_dot(cpu._from_sysctl(cpu._run_sysctl())) and ran == ["/usr/sbin/sysctl"]


def test_macos_without_sysctl_counts_every_feature_as_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("sysctl")

    monkeypatch.setattr(cpu.subprocess, "run", missing)
    info = cpu._from_sysctl(cpu._run_sysctl())
    assert info.flags == frozenset() and cpu.auto_precision(info, int8_passes_gate=True) == "float32"


@pytest.mark.parametrize("machine, present, flags", [("AMD64", True, {"avx2"}), ("AMD64", False, set()),
                                                     ("ARM64", True, {"asimddp"}), ("ARM64", False, set())])
def test_windows_reads_arm64s_dot_product_or_x86s_avx2_from_the_feature_probe(
        monkeypatch: pytest.MonkeyPatch, machine: str, present: bool, flags: set[str]) -> None:
    asked: list[int] = []

    class Kernel32:
        @staticmethod
        def IsProcessorFeaturePresent(code: int) -> int:  # noqa: N802 - the Windows API's name
            asked.append(code)
            return int(present)

    monkeypatch.setattr(cpu.platform, "machine", lambda: machine)
    monkeypatch.setattr(ctypes, "windll", type("WinDLL", (), {"kernel32": Kernel32}), raising=False)
    info = cpu._from_windows()
    assert (info.flags, info.source) == (flags, "windows")
    assert asked == [cpu.WINDOWS_ARM_DOT_PRODUCT if machine == "ARM64" else cpu.WINDOWS_AVX2]
    assert cpu.auto_precision(info, int8_passes_gate=True) == ("int8" if present else "float32")


@pytest.mark.parametrize("registry, name", [
    ("Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU  ",
     "Snapdragon(R) X Elite - X1E78100 - Qualcomm(R) Oryon(TM) CPU"),
    (None, "ARMv8 (64-bit) Family 8 Model 1 Revision 201, Qualcomm Technologies Inc"),  # no registry value
])
def test_windows_names_the_cpu_by_the_registry_s_processor_name(monkeypatch: pytest.MonkeyPatch,
                                                               registry: str | None, name: str) -> None:
    """platform.processor() on Windows is the CPUID family string, not the CPU's name, which a
    benchmark line must carry; the registry holds the name the system shows."""
    import types

    def query(key: object, value: str) -> tuple[str, int]:
        assert value == "ProcessorNameString"
        if registry is None:
            raise FileNotFoundError(value)
        return registry, 1

    opened: list[str] = []
    winreg = types.SimpleNamespace(HKEY_LOCAL_MACHINE="HKLM", QueryValueEx=query,
                                   OpenKey=lambda root, path: opened.append(f"{root}\\{path}") or contextlib.nullcontext())
    monkeypatch.setitem(sys.modules, "winreg", winreg)
    monkeypatch.setattr(cpu.platform, "processor", lambda: "ARMv8 (64-bit) Family 8 Model 1 Revision 201, "
                                                          "Qualcomm Technologies Inc")
    monkeypatch.setattr(ctypes, "windll", type("WinDLL", (), {}), raising=False)  # no feature probe
    assert cpu._from_windows().name == name
    assert opened == ["HKLM\\HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0"]


@pytest.mark.parametrize("native, flags", [(0x8664, {"avx2"}), (cpu.WINDOWS_ARM64_MACHINE, set())])
def test_an_x86_python_emulated_on_windows_arm64_counts_avx2_as_absent(
        monkeypatch: pytest.MonkeyPatch, native: int, flags: set[str]) -> None:
    class Kernel32:
        @staticmethod
        def IsProcessorFeaturePresent(code: int) -> int:  # noqa: N802 - the Windows API's name
            return 1

        @staticmethod
        def GetCurrentProcess() -> int:  # noqa: N802
            return -1

        @staticmethod
        def IsWow64Process2(handle: int, process: Any, machine: Any) -> int:  # noqa: N802
            machine._obj.value = native
            return 1

    monkeypatch.setattr(cpu.platform, "machine", lambda: "AMD64")
    monkeypatch.setattr(ctypes, "windll", type("WinDLL", (), {"kernel32": Kernel32}), raising=False)
    assert cpu._from_windows().flags == flags


def test_a_linux_without_proc_cpuinfo_gets_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu.sys, "platform", "linux")
    monkeypatch.setattr(cpu.Path, "read_text", lambda *a, **k: (_ for _ in ()).throw(PermissionError("denied")))
    cpu._detect.cache_clear()
    try:
        info = cpu.detect()
    finally:
        cpu._detect.cache_clear()
    assert (info.flags, info.source) == (frozenset(), "none")
    assert cpu.auto_precision(info, int8_passes_gate=True) == "float32"


def test_an_arm64_cpu_is_named_by_its_core_where_proc_cpuinfo_has_no_model_name() -> None:
    """arm64's /proc/cpuinfo names no model, only the core's implementer and part numbers; a
    benchmark line must say which CPU it ran on, not ``0xd40``. An unknown part keeps its number."""
    info = cpu.parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n")
    assert info.name == "CPU implementer 0x61 part 0x022"
    assert cpu.parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd\n").name == cpu.platform.machine()


def test_cpu_description_names_the_cpu_and_only_its_speed_flags() -> None:
    info = cpu.parse_cpuinfo((CPUINFO / "xeon-sapphire-rapids.txt").read_text(encoding="utf-8"))
    assert cpu.cpu_description(info).startswith("Intel(R) Xeon(R) Platinum 8488C (")
    assert cpu.cpu_description(info).endswith(
        "flags: amx_bf16 amx_int8 amx_tile avx2 avx512_bf16 avx512_vnni avx512f avx_vnni fma; precision auto: int8)")


@pytest.mark.parametrize("file, path", [("epyc-avx2.txt", "int8, 7-bit weights"), ("graviton3-arm64.txt", "int8"),
                                        ("xeon-sandy-bridge.txt", "float32")])
def test_cpu_description_says_which_path_auto_takes_so_every_benchmark_line_does(file: str, path: str) -> None:
    """A figure from another machine is read against the path it ran: the CPU line says it."""
    info = cpu.parse_cpuinfo((CPUINFO / file).read_text(encoding="utf-8"))
    assert cpu.cpu_description(info).endswith(f"; precision auto: {path})")


def test_detection_never_imports_torch() -> None:
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from vecbook import cpu; cpu.detect(); "
            "cpu.auto_precision(cpu.detect(), True); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False"], out.stderr


def _can_hide_cpu_features() -> bool:
    """Whether bench/avx2_only.sh can run here: Linux as root (allowed a mount namespace), gcc,
    and a CPU with more than AVX2 that offers CPUID faulting."""
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("gcc") is None or shutil.which("unshare") is None:
        return False
    if not cpu.has_int8_dot(cpu.detect()) or "cpuid_fault" not in Path("/proc/cpuinfo").read_text(encoding="utf-8"):
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(not _can_hide_cpu_features(),
                    reason="needs Linux, root with mount namespaces, gcc, and a CPU with int8 dot products and CPUID "
                           "faulting")
def test_avx2_only_hides_the_newer_features_from_vecbook_numpy_and_the_cpuid_instruction() -> None:
    """bench/avx2_only.sh, which the AVX2 figures come from: both ways of reading the CPU agree."""
    code = ("import sys; from vecbook import cpu; from numpy._core._multiarray_umath import __cpu_features__ as f; "
            "info = cpu.detect(); print(sorted(set(cpu.SPEED_FLAGS) & info.flags), f['AVX2'], f['AVX512F'], "
            "f['AVX512VNNI'], cpu.auto_precision(info, True))")
    out = subprocess.run([str(ROOT / "bench" / "avx2_only.sh"), sys.executable, "-c", code], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split() == ["['avx2',", "'fma']", "True", "False", "False", "int8"], out.stderr
