"""Bad heronpy input to ``heron run|submit``: one line naming the problem and the file,
exit 2, no traceback, nothing started (a topology file that raises at import, a main
that never calls ``build_and_submit()``, an unsupported heronpy API, a pex without
``__main__.py``, a missing file)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SPOUT = '''\
from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream


class Words(Spout):
    outputs = ['word']

    def next_tuple(self):
        self.emit(['w'])
'''

RAISES = '''\
import sys
from heronpy.api.topology import TopologyBuilder
import lib_spout
raise ValueError("no broker configured")
'''

NEVER_BUILDS = '''\
import sys
from heronpy.api.topology import TopologyBuilder
from lib_spout import Words

if __name__ == '__main__':
    builder = TopologyBuilder(name=sys.argv[1])
    builder.add_spout("words", Words, par=1)
'''

UNSUPPORTED = '''\
import sys
from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream
from heronpy.api.topology import TopologyBuilder


class Direct(Spout):
    outputs = [Stream(fields=['word'], name='direct', direct=True)]


if __name__ == '__main__':
    builder = TopologyBuilder(name=sys.argv[1])
    builder.add_spout("words", Direct, par=1)
    builder.build_and_submit()
'''


def _heron(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.tools.cli.main", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HERON_HOME": str(home)})


def _one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    return line


def _file(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / "lib_spout.py").write_text(SPOUT)
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("dash", [(), ("-", "Named")], ids=["file", "file-dash"])
def test_a_topology_file_that_raises_at_import(tmp_path, dash):
    path = _file(tmp_path, "raises.py", RAISES)
    line = _one_line(_heron("run", str(path), "--engine", "storm", *dash, home=tmp_path))
    assert f"{path}:4:" in line and "ValueError: no broker configured" in line


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("dash", [(), ("-", "Named")], ids=["file", "file-dash"])
def test_a_main_that_never_calls_build_and_submit(tmp_path, dash):
    path = _file(tmp_path, "never_builds.py", NEVER_BUILDS)
    line = _one_line(_heron("run", str(path), "--engine", "storm", *dash, home=tmp_path))
    assert str(path) in line and "never called build_and_submit()" in line


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_an_unsupported_heronpy_api_is_named(tmp_path):
    path = _file(tmp_path, "direct.py", UNSUPPORTED)
    line = _one_line(_heron("run", str(path), "--engine", "storm", "-", "Direct", home=tmp_path))
    assert f"{path}:8:" in line and "Direct stream is not supported yet" in line


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_pex_without_main_is_refused_by_run_and_submit(tmp_path):
    pex = tmp_path / "no_main.pex"
    with zipfile.ZipFile(pex, "w") as archive:
        archive.writestr("lib_spout.py", SPOUT)
    for command in (("run", str(pex), "-", "X"), ("submit", "local", str(pex), "-", "X")):
        line = _one_line(_heron(*command, home=tmp_path / "home"))
        assert line == (f"heron: error: {pex}: not a runnable pex: no __main__.py at its "
                        "root (build it with `python -m zipapp DIR -m module:main`, or give "
                        "the topology's class: FILE.pex module.ClassName)")
    assert not (tmp_path / "home" / "topologies").exists()


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [("run", "gone.pex", "-", "X"), ("run", "gone.py"),
                                     ("submit", "local", "gone.py", "-", "X")])
def test_a_missing_file(tmp_path, command):
    missing = tmp_path / next(word for word in command if word.startswith("gone"))
    args = [str(missing) if word.startswith("gone") else word for word in command]
    line = _one_line(_heron(*args, home=tmp_path))
    assert line == f"heron: error: {missing}: no such topology file"


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_refused_submit_keeps_no_definition(tmp_path):
    from tests.heronpy.test_submit_heron_layout import build_pex, heron_tree

    tree = heron_tree(tmp_path / "heron")
    pex = build_pex(tree.parents[3], "examples.src.python.word_count_topology",
                    tmp_path / "wc.pex")
    home = tmp_path / "home"
    proc = _heron("submit", "local", "--allow-missing-state", str(pex), "-", "WC", home=home)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "heron: error: --allow-missing-state goes with --from-savepoint")
    assert not any((home / "definitions").iterdir())  # the main ran, and wrote one
    assert not (home / "topologies" / "WC").exists()
