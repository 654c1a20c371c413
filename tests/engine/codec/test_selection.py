"""Which tuple path a process runs, decided in a fresh interpreter each time, as every
engine process decides it: HERON_PURE_PYTHON, HERON_REQUIRE_COMPILED, a missing build and
a stale one (its embedded source hash differs from the sources beside it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROBE = ("import logging, sys; logging.basicConfig(stream=sys.stdout, format='%(levelname)s "
         "%(message)s', level=logging.INFO); import engine.common.codec as f; f.log_tuple_path(); "
         "print('module', f.tuple_codec.__name__, f.tuple_codec.COMPILED)")


def probe(root: Path, **env: str) -> subprocess.CompletedProcess:
    """Run the selection in a new interpreter importing ``engine`` from ``root`` only."""
    child = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "HERON_PURE_PYTHON", "HERON_REQUIRE_COMPILED")}
    child.update(env)
    child["PYTHONPATH"] = str(root)
    return subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=child,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture()
def tree(tmp_path: Path, compiled) -> Path:
    """A copy of ``engine`` with its compiled build, to make stale or take the build from."""
    shutil.copytree(REPO / "engine", tmp_path / "engine",
                    ignore=shutil.ignore_patterns("__pycache__", "ui", "tracker"))
    return tmp_path


def test_default_is_the_compiled_path_when_built(compiled) -> None:
    out = probe(REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("INFO tuple path: compiled (")
    assert "module engine.common.codec._codec True" in out.stdout


def test_heron_pure_python_selects_the_twin_even_when_built(compiled) -> None:
    out = probe(REPO, HERON_PURE_PYTHON="1", HERON_REQUIRE_COMPILED="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "INFO tuple path: pure Python (HERON_PURE_PYTHON=1)"
    assert "module engine.common.codec.codec False" in out.stdout


def test_heron_pure_python_0_is_not_pure(compiled) -> None:
    assert "module engine.common.codec._codec True" in probe(REPO, HERON_PURE_PYTHON="0").stdout


def stale(tree: Path) -> None:
    source = tree / "engine" / "common" / "codec" / "_codec.pyx"
    source.write_text(source.read_text() + "\n# changed after the build\n")


def test_a_stale_build_is_refused_with_a_warning(tree: Path) -> None:
    stale(tree)
    out = probe(tree)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("WARNING tuple path: pure Python (StaleExtensionError: ")
    assert "rebuild it with `python3 -m pip install -e .`" in first
    assert "module engine.common.codec.codec False" in out.stdout


def test_a_stale_build_is_an_error_when_the_compiled_path_is_required(tree: Path) -> None:
    stale(tree)
    out = probe(tree, HERON_REQUIRE_COMPILED="1")
    assert out.returncode != 0
    assert ("engine.common.codec.selection.StaleExtensionError: the compiled tuple path"
            in out.stderr)


def test_a_missing_build_gives_the_pure_path_with_a_note(tree: Path) -> None:
    for built in (tree / "engine" / "common" / "codec").glob("_codec*.so"):
        built.unlink()
    out = probe(tree)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith(
        "INFO tuple path: pure Python (no compiled extension is built")


def test_a_missing_build_is_an_error_when_the_compiled_path_is_required(tree: Path) -> None:
    for built in (tree / "engine" / "common" / "codec").glob("_codec*.so"):
        built.unlink()
    out = probe(tree, HERON_REQUIRE_COMPILED="1")
    assert out.returncode != 0
    assert ("engine.common.codec.selection.ExtensionMissingError: HERON_REQUIRE_COMPILED=1"
            in out.stderr)


def test_the_engine_passes_the_choice_to_every_process_it_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine processes are started by ``spawn`` with the parent's environment (plus
    the code root and the parent pid): nothing strips the two variables on the way."""
    from engine.common.process.spawn import spawn
    from engine.common.process.spec import ProcessSpec

    monkeypatch.setenv("HERON_PURE_PYTHON", "1")
    monkeypatch.setenv("HERON_REQUIRE_COMPILED", "1")
    log = tmp_path / "child.log"
    code = ("import os; print(os.environ['HERON_PURE_PYTHON'], "
            "os.environ['HERON_REQUIRE_COMPILED'])")
    proc = spawn(ProcessSpec(name="child", argv=[sys.executable, "-c", code], log_path=log))
    assert proc.wait(timeout=30) == 0
    assert log.read_text().strip() == "1 1"


def test_a_stale_stream_manager_build_refuses_the_whole_compiled_path(tree: Path) -> None:
    """Every compiled module is checked: a stale ``_routing`` alone gives the pure path for
    the tuple codec too (a process never runs a mix)."""
    source = tree / "engine" / "stmgr" / "_routing.pyx"
    source.write_text(source.read_text() + "\n# changed after the build\n")
    out = probe(tree)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("WARNING tuple path: pure Python (StaleExtensionError: ")
    assert "_routing" in first
    assert "module engine.common.codec.codec False" in out.stdout
    required = probe(tree, HERON_REQUIRE_COMPILED="1")
    assert required.returncode != 0
    assert "StaleExtensionError: the compiled tuple path" in required.stderr


def test_a_missing_stream_manager_build_gives_the_pure_path_for_all(tree: Path) -> None:
    for built in (tree / "engine" / "stmgr").glob("_routing*.so"):
        built.unlink()
    out = probe(tree)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith(
        "INFO tuple path: pure Python (no compiled extension is built")
    assert "module engine.common.codec.codec False" in out.stdout
    required = probe(tree, HERON_REQUIRE_COMPILED="1")
    assert required.returncode != 0
    assert "ExtensionMissingError: HERON_REQUIRE_COMPILED=1" in required.stderr
    assert "engine.stmgr._routing" in required.stderr


def test_heron_says_in_one_line_that_a_required_compiled_path_is_stale(tmp_path: Path,
                                                                        compiled) -> None:
    """The ``heron`` console script under HERON_REQUIRE_COMPILED=1 with a stale build:
    the refusal, not a traceback from the import of the tuple path."""
    shutil.copytree(REPO / "engine", tmp_path / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "compat", tmp_path / "compat",
                    ignore=shutil.ignore_patterns("__pycache__"))
    stale(tmp_path)
    child = {k: v for k, v in os.environ.items()
             if k not in ("PYTHONPATH", "HERON_PURE_PYTHON", "HERON_REQUIRE_COMPILED")}
    child.update(PYTHONPATH=str(tmp_path), HERON_REQUIRE_COMPILED="1")
    out = subprocess.run([sys.executable, "-m", "engine.tools.cli.entry_point", "list"],
                         cwd=tmp_path, env=child, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    (line,) = out.stderr.splitlines()
    assert line.startswith("heron: error: the compiled tuple path ")
    assert "rebuild it with `python3 -m pip install -e .`" in line
    assert "unset HERON_REQUIRE_COMPILED" in line
    child.pop("HERON_REQUIRE_COMPILED")
    fine = subprocess.run([sys.executable, "-m", "engine.tools.cli.entry_point", "--help"],
                          cwd=tmp_path, env=child, capture_output=True, text=True, timeout=60)
    assert fine.returncode == 0 and "Usage: " in fine.stdout
