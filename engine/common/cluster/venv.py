"""A project's virtual environment on a node, built once per requirements file.

streamparse projects declare their Python dependencies in ``virtualenvs/<name>.txt``;
``sparse submit`` builds that environment on every worker. We do the same on each node
that runs one of the topology's containers, keyed by the file's SHA-256 so that every
topology with the same requirements shares one environment, and with
``--system-site-packages`` so the engine installed on the node stays importable from it.
A build runs under a file lock (two containers on one node build it once) into a folder
that is marked complete only at the end: a build killed halfway is redone, never used.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

COMPLETE = ".heron-complete"
#: a pip install that takes longer than this is reported as failed
BUILD_TIMEOUT_SECS = 900.0


class VirtualenvError(Exception):
    """The environment could not be built; the text names the requirements file and
    ends with pip's last lines."""


def requirements_file(project: Path, topology: str) -> Path | None:
    """``virtualenvs/<topology>.txt``, or the only ``virtualenvs/*.txt``, as sparse picks."""
    folder = Path(project) / "virtualenvs"
    named = folder / f"{topology}.txt"
    if named.is_file():
        return named
    found = sorted(folder.glob("*.txt")) if folder.is_dir() else []
    return found[0] if len(found) == 1 else None


def ensure_virtualenv(requirements: Path, cache_root: Path, *,
                      base_python: str = sys.executable) -> Path:
    """The Python of the environment for ``requirements``, built under ``cache_root``
    when missing. Returns ``<env>/bin/python``."""
    digest = hashlib.sha256(Path(requirements).read_bytes()).hexdigest()[:16]
    cache_root = Path(cache_root)
    cache_root.mkdir(parents=True, exist_ok=True)
    env = cache_root / f"venv-{digest}"
    python = env / "bin" / "python"
    if (env / COMPLETE).exists():
        return python
    with open(cache_root / f"venv-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (env / COMPLETE).exists():
            return python
        shutil.rmtree(env, ignore_errors=True)  # an earlier build that did not finish
        _run([base_python, "-m", "venv", "--system-site-packages", str(env)], requirements)
        _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
              "-r", str(requirements)], requirements)
        (env / COMPLETE).write_text(str(requirements) + "\n")
    return python


def _run(argv: list[str], requirements: Path) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_TIMEOUT_SECS,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise VirtualenvError(f"{requirements}: building the environment took longer than "
                              f"{BUILD_TIMEOUT_SECS:g}s ({' '.join(argv[:4])} ...)") from None
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise VirtualenvError(f"{requirements}: {' '.join(argv[1:4])} failed "
                              f"(exit {done.returncode}): {tail}")
