"""A machine with no C compiler installs the project and runs the pure-Python tuple path:
the tree is copied, installed with ``CC=false`` into a fresh virtual environment (which
sees this machine's packages, so nothing is downloaded), and the install exits 0 with the
one-line note; ``heron run`` then says it runs pure Python in its first line."""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.so", "_codec.c", "_routing.c", "_xor.c",
                                "_acking.c", "_api.c", "build", "logs", "*.egg-info",
                                ".pytest_cache", "virtualenvs", ".venv")


def clean_env(venv_dir: Path) -> dict[str, str]:
    """This environment minus what would choose the path or find the tree's own code."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "HERON_PURE_PYTHON", "HERON_REQUIRE_COMPILED",
                        "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["CC"] = "false"  # every compile fails, as with no compiler at all
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_install_without_a_compiler_runs_the_pure_path(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(REPO, tree, ignore=IGNORE)
    venv_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(venv_dir)
    python = venv_dir / "bin" / "python"
    env = clean_env(venv_dir)
    # this machine's pip, setuptools and Cython (system site packages): no download; -v
    # so setup.py's own output (the note) is shown
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-v", "--no-deps", "--no-build-isolation",
         str(tree)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    output = install.stdout + install.stderr
    assert ("the compiled tuple path was not built" in output
            and "the pure-Python tuple path will be used" in output), output[-3000:]
    site = subprocess.run([str(python), "-c", "import engine.common.codec as f, sys; "
                           "print(f.__file__); print(f.selected().describe())"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert site.returncode == 0, site.stderr
    where, described = site.stdout.splitlines()[:2]
    assert where.startswith(str(venv_dir)), where  # the copy installed here, not this tree
    assert not list(Path(where).parent.glob("_codec*.so"))
    assert not list((Path(where).parent.parent / "stmgr").glob("_routing*.so"))
    assert described.startswith("tuple path: pure Python (no compiled extension is built")
    project = tmp_path / "wordcount"
    shutil.copytree(tree / "examples" / "wordcount", project)
    run = subprocess.run([str(venv_dir / "bin" / "heron"), "run", "--time", "3"], cwd=project,
                         env={**env, "COLUMNS": "200"}, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert run.returncode == 0, "\n".join(lines[-30:])
    assert "tuple path: pure Python (no compiled extension is built" in lines[0], lines[:3]
