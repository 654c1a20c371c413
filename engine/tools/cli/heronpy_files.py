"""``heron run|submit FILE.pex|FILE.py - [ARGS]`` and ``... module.ClassName [NAME]``: the
topology's definition, written the way Heron's CLI gets it.

Heron's ``submit`` makes a directory, names it in ``HERON_OPTIONS``
(``cmdline.topologydefn.tmpdirectory``) and runs the pex's main (``-``), or loads a
``Topology`` subclass and calls ``write()`` (a class path); then it launches the
definition it finds there, under the name the definition gives. This does the same in a
process of its own (engine/tools/cli/heronpy_main.py) and keeps the result where the topology's
processes can rebuild it for as long as it runs: ``BASE/<id>/NAME.defn`` beside a copy of
the pex (a directory that is then the topology's "project"), with the code's location
recorded in it (heronpy/api/definition.py). engine/common/plan/discovery.py reads it.

Every failure is one line (``ProjectError``, exit 2) naming the file: a missing file, a
pex without ``__main__.py``, a main that raises, exits or never calls
``build_and_submit()``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import click

from compat.storm_api.project import ProjectError
from engine.common.security.private import private_dir
from engine.tools.cli.topology_args import MainForm
from heronpy.api import heron_options
from heronpy.api.definition import load_document, save_document
from heronpy.api.definition_writer import SUFFIX

#: how long a topology's main may take to write its definition
MAIN_TIMEOUT_SECS = 120.0
_BOOTSTRAP = ("import sys; del sys.path[0]; from engine.tools.cli.heronpy_main import main; "
              "sys.exit(main(sys.argv[1:]))")


def is_heronpy_submission(path: Path, form: MainForm | None) -> bool:
    """A pex, or a file given with Heron's ``-``/class form, goes through a definition."""
    return form is not None or path.suffix == ".pex"


def write_definition(file: Path, form: MainForm | None, base: Path, *,
                     deactivated: bool = False, show_traceback: bool = False) -> Path:
    """Run ``file``'s main (or write its class) under ``HERON_OPTIONS``; the definition's
    path under ``base``. A bare ``FILE.pex`` runs its main with the file's stem as the
    only argument, as ``heron run FILE.py`` passes a builder script its name."""
    form = form or MainForm("-", [file.stem])
    _check_file(file, form)
    # owner-only: every instance unpickles what is kept here
    directory = Path(tempfile.mkdtemp(prefix="heronpy-", dir=private_dir(base)))
    try:
        return _write(file.resolve(), form, directory, deactivated, show_traceback)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise


def _check_file(file: Path, form: MainForm) -> None:
    if not file.is_file():
        raise ProjectError(f"{file}: no such topology file")
    if file.suffix not in (".pex", ".py"):
        raise ProjectError(f"{file}: Heron's `FILE {form.form} ...` form takes a .pex "
                           "(a zipapp) or a .py file")
    if file.suffix != ".pex":
        return
    if not zipfile.is_zipfile(file):
        raise ProjectError(f"{file}: not a pex (not a zip archive)")
    with zipfile.ZipFile(file) as archive:
        names = set(archive.namelist())
    if form.form == "-" and "__main__.py" not in names:
        raise ProjectError(f"{file}: not a runnable pex: no __main__.py at its root "
                           "(build it with `python -m zipapp DIR -m module:main`, or give "
                           "the topology's class: FILE.pex module.ClassName)")
    if any(name.startswith("heronpy/") for name in names):
        click.echo(f"note: {file} bundles its own heronpy; this project's heronpy is the one "
                   "imported (docs/heronpy.md, Submitting)", err=True)


def _write(file: Path, form: MainForm, directory: Path, deactivated: bool,
           show_traceback: bool) -> Path:
    options = {heron_options.TMPDIR_KEY: str(directory),
               heron_options.INITIAL_STATE_KEY: "PAUSED" if deactivated else "RUNNING"}
    if form.form != "-" and form.args:
        options[heron_options.NAME_KEY] = form.args[0]  # Heron's class form: NAME first
    env = {**os.environ, heron_options.ENV_VAR: heron_options.format_options(options)}
    if show_traceback:
        from engine.tools.cli.heronpy_main import TRACEBACK_ENV

        env[TRACEBACK_ENV] = "1"
    # not `-m`: that puts the working directory first on sys.path, and a Heron checkout
    # there (heronpy/, heron/) would replace this project's heronpy before the guard
    command = [sys.executable, "-c", _BOOTSTRAP, str(file), form.form, *form.args]
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=MAIN_TIMEOUT_SECS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ProjectError(f"{file}: the topology's main did not finish within "
                           f"{MAIN_TIMEOUT_SECS:.0f} s") from None
    error = directory / ".error"
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr).strip().splitlines()
        if error.is_file():
            said = f" (its last output: {output[-1].strip()!r})" if output else ""
            raise ProjectError(error.read_text(encoding="utf-8").strip() + said)
        last = (output or ["no output"])[-1]
        raise ProjectError(f"{file}: running the topology's main failed "
                           f"(exit {proc.returncode}): {last}")
    for text in (proc.stdout, proc.stderr):  # the main's own output, kept off stdout
        if text.strip():
            click.echo(text.rstrip("\n"), err=True)
    written = sorted(directory.glob(f"*{SUFFIX}"))
    if not written:
        raise ProjectError(
            f"{file}: the topology's main never called build_and_submit() (no topology "
            f"definition was written into {heron_options.TMPDIR_KEY})")
    if len(written) > 1:
        raise ProjectError(f"{file}: the topology's main wrote {len(written)} topology "
                           f"definitions ({', '.join(p.stem for p in written)}); submit one")
    return _finish(written[0], file)


def _finish(path: Path, file: Path) -> Path:
    """Record where the code is: a copy of the pex (the topology keeps running if the
    file is replaced), named relative to the definition so the directory can travel in a
    cluster's package, or the ``.py`` file's directory and import roots."""
    from engine.common.plan.discovery import import_roots

    document = load_document(path)
    if file.suffix == ".pex":
        copy = path.with_suffix(".pex")
        shutil.copyfile(file, copy)
        document["sys_path"], document["source"] = [copy.name], copy.name
    else:
        roots = [str(file.parent), *map(str, import_roots(file))]
        document["sys_path"], document["source"] = list(dict.fromkeys(roots)), str(file)
    save_document(path, document)
    return path


def kept_definition(home: Path, working_dir: Path) -> Path | None:
    """The directory of the definition a submitted topology was launched from, when
    ``heron submit`` kept one under ``HOME/definitions/`` (its launch file names it);
    None for any other topology. ``heron kill`` removes it once the topology is gone."""
    from engine.common.launch import LaunchError, LaunchSpec  # deferred: CLI start-up time

    try:
        project = Path(LaunchSpec.load(working_dir).submission.project)
    except LaunchError:
        return None
    directory = project.parent
    kept = (home / "definitions").resolve()
    if (project.suffix == SUFFIX and directory.name.startswith("heronpy-")
            and directory.parent == kept and directory.is_dir()):
        return directory
    return None


def remove_kept_definition(directory: Path | None) -> None:
    """Remove a killed topology's kept definition (and its pex copy)."""
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
