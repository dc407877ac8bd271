"""The package: pyproject.toml agrees with requirements.txt, and the command runs as
``python -m vecbook`` with ``--version``."""

from __future__ import annotations

import subprocess
import sys

from pathlib import Path

import vecbook
from conftest import ROOT
from vecbook.config import tomllib

TEST_TOOLS = {"pytest", "hypothesis", "pandas", "selenium"}


def requirement_lines() -> list[str]:
    """requirements.txt without comments and blank lines."""
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def name_of(requirement: str) -> str:
    for stop in "=<>!~; [":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower()


def project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]


def test_the_package_depends_on_requirements_txt_without_the_test_tools() -> None:
    """One source of truth: the same pins, in the same order, in both files."""
    runtime = [line for line in requirement_lines() if name_of(line) not in TEST_TOOLS]
    assert [d.replace(" ", "") for d in project()["dependencies"]] == [r.replace(" ", "") for r in runtime]


def test_the_test_tools_are_an_extra_with_the_same_pins() -> None:
    tools = [line for line in requirement_lines() if name_of(line) in TEST_TOOLS]
    assert project()["optional-dependencies"]["test"] == tools and {name_of(t) for t in tools} == TEST_TOOLS


def test_the_command_is_vecbook_cli_main() -> None:
    assert project()["scripts"] == {"vecbook": "vecbook.cli:main"}


def test_python_m_vecbook_prints_the_version() -> None:
    out = subprocess.run([sys.executable, "-m", "vecbook", "--version"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"vecbook {vecbook.__version__}"


def test_every_data_file_the_package_reads_is_shipped_in_it() -> None:
    """The int8 build calibrates on vecbook/calibration.txt: a wheel without it could not build;
    keyword folding reads traditional Chinese as simplified from vecbook/ts_characters.txt, and
    Japanese new forms as them from vecbook/jp_characters.txt."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        shipped = tomllib.load(handle)["tool"]["setuptools"]["package-data"]["vecbook"]
    data = sorted(p.name for p in (ROOT / "vecbook").iterdir() if p.is_file() and p.suffix not in (".py", ".pyc"))
    assert data == sorted(s for s in shipped if "/" not in s) == ["calibration.txt", "jp_characters.txt",
                                                                 "ts_characters.LICENSE.txt",
                                                                 "ts_characters.txt"]  # the page: below
    from vecbook import han_variants, onnx_int8

    assert onnx_int8.CALIBRATION_FILE.is_file() and len(onnx_int8._calibration_texts()) >= 50
    assert han_variants.TS_CHARACTERS.is_file() and len(han_variants.simplified()) > 4000
    assert han_variants.JP_CHARACTERS.is_file() and len(han_variants.japanese()) > 200


def test_the_wheel_ships_the_search_page(tmp_path: Path) -> None:
    """`pip install .` builds a wheel: the page's files must be in it, or `serve --http` serves 404s."""
    import zipfile

    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    names = zipfile.ZipFile(next(tmp_path.glob("vecbook-*.whl"))).namelist()
    from vecbook.server import PAGE, STATIC_TYPES

    assert sorted(p.name for p in PAGE.iterdir() if not p.name.startswith(".")) == sorted(["index.html", *STATIC_TYPES])
    for name in ["index.html", *STATIC_TYPES]:
        assert f"vecbook/page/{name}" in names
    assert {"vecbook/calibration.txt", "vecbook/ts_characters.txt", "vecbook/ts_characters.LICENSE.txt",
            "vecbook/jp_characters.txt", "vecbook/server.py"} <= set(names)


def test_uv_takes_torch_from_the_cpu_index_on_linux() -> None:
    """`uv tool install .` builds a venv of its own, where a CPU torch installed beforehand
    cannot help; PyPI's Linux torch is a multi-GB CUDA build, so the project names the CPU index
    for uv (pip ignores ``tool.uv``)."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        uv = tomllib.load(handle)["tool"]["uv"]
    [index] = [i for i in uv["index"] if i["name"] == uv["sources"]["torch"][0]["index"]]
    assert index == {"name": "pytorch-cpu", "url": "https://download.pytorch.org/whl/cpu", "explicit": True}
    assert uv["sources"]["torch"][0]["marker"] == "sys_platform == 'linux'"


def test_every_tracked_file_can_be_checked_out_on_windows() -> None:
    """A clone (and `pip install git+URL`, which clones) on Windows stops at a path Git for
    Windows refuses: a name holding < > : " | ? * or a control character, ending in a dot or a
    space, or a reserved device name (CON, NUL, COM1...)."""
    import re

    import pytest

    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    bad = re.compile(r'[<>:"|?*\\\x00-\x1f]|[. ]$|^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$', re.IGNORECASE)
    refused = [path for path in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if path
               and any(bad.search(part) for part in path.split("/"))]
    assert refused == []
