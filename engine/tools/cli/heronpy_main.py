"""Runs a heronpy topology's main the way Heron's CLI does, in a process of its own.

``heron run|submit FILE - ARGS`` calls :func:`main` with ``FILE - ARGS`` in a new Python
process (without the working directory on ``sys.path``) with ``HERON_OPTIONS`` set
(engine/tools/cli/heronpy_files.py): this imports the project's own
``heronpy`` first, so a pex that bundles another ``heronpy`` cannot replace it, puts the
code on ``sys.path`` (the pex, as Heron's instance does; a ``.py`` file's import roots,
engine/common/plan/discovery.py) and runs the file's main with ``sys.argv = [FILE, *ARGS]``; the
main's ``build_and_submit()`` writes the definition. ``FILE module.ClassName [NAME]``
imports that ``Topology`` subclass and calls its ``write()``, as Heron's ``heron_pex``.

A failure is one line in ``<definition dir>/.error`` and exit code 2; the CLI shows it.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
import traceback
from pathlib import Path

import heronpy.api.topology  # noqa: F401  (this project's heronpy, before any pex)
from heronpy.api.heron_options import TMPDIR_KEY, options_from_env

ERROR_FILE = ".error"
TRACEBACK_ENV = "HERON_SUBMIT_TRACEBACK"
_OWN = tuple(str(Path(__file__).resolve().parents[3] / pkg) for pkg in
             ("heronpy", "compat", "engine"))


class MainError(Exception):
    """What went wrong, in one line."""


def main(argv: list[str]) -> int:
    """``FILE FORM [ARGS]``; exit code 0, or 2 with the error line written."""
    error_file = Path(options_from_env()[TMPDIR_KEY]) / ERROR_FILE
    file, form, args = Path(argv[0]), argv[1], argv[2:]
    try:
        _put_code_on_path(file)
        if form == "-":
            _run_main(file, args)
        else:
            _write_class(file, form)
    except MainError as exc:
        error_file.write_text(str(exc), encoding="utf-8")
        return 2
    return 0


def _put_code_on_path(file: Path) -> None:
    if file.suffix == ".pex":
        sys.path.insert(0, str(file))
        return
    from engine.common.plan.discovery import import_roots

    for entry in (file.parent, *import_roots(file)):
        if str(entry) not in sys.path:
            sys.path.append(str(entry))


def _run_main(file: Path, args: list[str]) -> None:
    sys.argv = [str(file), *args]
    try:
        runpy.run_path(str(file), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise MainError(f"{file}: the topology's main exited ({exc.code!r}) "
                            "before writing its definition") from None
    except Exception as exc:
        _show_traceback(exc)
        raise MainError(f"{_location(exc, file)}: running {file}'s main failed: "
                        f"{type(exc).__name__}: {exc}") from None


def _write_class(file: Path, class_path: str) -> None:
    from heronpy.api.topology import Topology

    module_name, _, class_name = class_path.rpartition(".")
    if not module_name:
        raise MainError(f"{file}: {class_path!r} is not a class path (module.ClassName)")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        _show_traceback(exc)
        raise MainError(f"{_location(exc, file)}: importing {module_name} from {file} "
                        f"failed: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Topology) and cls is not Topology):
        raise MainError(f"{file}: {class_path} is not a heronpy Topology subclass")
    try:
        cls.write()
    except Exception as exc:
        raise MainError(f"{file}: {class_path}.write() failed: {type(exc).__name__}: "
                        f"{exc}") from None


def _location(exc: BaseException, file: Path) -> str:
    """file:line of the error in the user's code (not this project's)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<") and not f.filename.startswith(_OWN)
              and "/runpy.py" not in f.filename and "importlib" not in f.filename]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else str(file)


def _show_traceback(exc: BaseException) -> None:
    if os.environ.get(TRACEBACK_ENV):
        traceback.print_exception(exc)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
