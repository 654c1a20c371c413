"""load_topology_class finds topologies in project files the way sparse does."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import streamparse

from engine.common.plan import compile_topology, discovery, errors, load_topology_class

QUICKSTART = Path(streamparse.__file__).parent / "bootstrap" / "project"


@pytest.fixture(autouse=True)
def isolated_imports():
    """Each test imports its own bolts/spouts/topology modules; forget them afterwards."""
    modules, path, loaded = set(sys.modules), list(sys.path), dict(discovery._LOADED)
    yield
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    sys.path[:] = path
    discovery._LOADED.clear()
    discovery._LOADED.update(loaded)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project `sparse quickstart` creates: src/{bolts,spouts}, topologies/wordcount.py."""
    root = tmp_path / "wordcount_project"
    for part in ("src", "topologies"):
        shutil.copytree(
            QUICKSTART / part, root / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    return root


def test_quickstart_topology_is_found_and_compiles(project):
    topology_cls = load_topology_class(project / "topologies" / "wordcount.py")

    assert topology_cls.__name__ == "WordCount"
    plan = compile_topology(topology_cls, name="wordcount").plan
    assert plan.components["count_bolt"].python_class == "bolts.wordcount:WordCountBolt"
    assert plan.components["word_spout"].python_class == "spouts.words:WordSpout"
    assert plan.components["count_bolt"].inputs[0].fields == ("word",)


def test_project_src_and_topology_dirs_are_appended_to_sys_path(project):
    load_topology_class(project / "topologies" / "wordcount.py")
    appended = {str(Path(p).resolve()) for p in sys.path[-2:]}
    assert appended == {str((project / "src").resolve()), str((project / "topologies").resolve())}


def test_first_topology_subclass_in_the_file_wins(project):
    (project / "topologies" / "two.py").write_text(
        "from streamparse import Topology\n"
        "from spouts.words import WordSpout\n"
        "class First(Topology):\n"
        "    words = WordSpout.spec()\n"
        "class Second(Topology):\n"
        "    words = WordSpout.spec()\n"
    )
    assert load_topology_class(project / "topologies" / "two.py").__name__ == "First"


def test_compat_storm_api_topologies_are_found(project):
    (project / "topologies" / "ours.py").write_text(
        "from compat.storm_api.dsl import Topology\n"
        "from compat.storm_api.spout import Spout\n"
        "class Numbers(Spout):\n"
        "    outputs = ['n']\n"
        "    def next_tuple(self):\n"
        "        pass\n"
        "class Ours(Topology):\n"
        "    numbers = Numbers.spec()\n"
    )
    assert load_topology_class(project / "topologies" / "ours.py").__name__ == "Ours"


def test_missing_file_is_reported_with_its_path(tmp_path):
    missing = tmp_path / "topologies" / "nope.py"
    with pytest.raises(errors.TopologyFileNotFoundError, match="nope.py does not exist"):
        load_topology_class(missing)


def test_syntax_error_is_reported_with_file_and_line(project):
    broken = project / "topologies" / "broken.py"
    broken.write_text("from streamparse import Topology\n\nclass Broken(Topology)\n    pass\n")
    with pytest.raises(errors.TopologyImportError) as caught:
        load_topology_class(broken)
    assert f"{broken.resolve()}:3" in str(caught.value)
    assert "SyntaxError" in str(caught.value)


def test_import_error_inside_the_project_points_at_the_failing_line(project):
    (project / "src" / "bolts" / "bad.py").write_text("X = 1\nraise RuntimeError('no database')\n")
    topology = project / "topologies" / "uses_bad.py"
    topology.write_text("from streamparse import Topology\nimport bolts.bad\n")
    with pytest.raises(errors.TopologyImportError) as caught:
        load_topology_class(topology)
    message = str(caught.value)
    assert "bad.py:2" in message and "RuntimeError: no database" in message


def test_missing_module_error_names_the_module_and_hints_at_src(project):
    topology = project / "topologies" / "missing_dep.py"
    topology.write_text("from bolts.nothere import Gone\n")
    with pytest.raises(errors.TopologyImportError) as caught:
        load_topology_class(topology)
    message = str(caught.value)
    assert "missing_dep.py:1" in message and "'bolts.nothere'" in message and "src/" in message


def test_file_without_a_topology_class_is_reported(project):
    empty = project / "topologies" / "empty.py"
    empty.write_text("from streamparse import Topology\nVALUE = 1\n")
    with pytest.raises(errors.NoTopologyClassError, match="empty.py defines no Topology subclass"):
        load_topology_class(empty)


def test_failed_import_leaves_no_half_imported_module(project):
    broken = project / "topologies" / "half.py"
    broken.write_text("raise ValueError('boom')\n")
    with pytest.raises(errors.TopologyImportError):
        load_topology_class(broken)
    assert "half" not in sys.modules


def test_file_named_like_an_already_imported_module_is_refused(project):
    clash = project / "topologies" / "pytest.py"
    clash.write_text("from streamparse import Topology\n")
    with pytest.raises(errors.TopologyImportError, match="module name 'pytest'.*Rename"):
        load_topology_class(clash)


def test_same_stem_in_another_project_replaces_the_previous_topology(project, tmp_path):
    first = load_topology_class(project / "topologies" / "wordcount.py")
    other = tmp_path / "other" / "topologies"
    other.mkdir(parents=True)
    (other / "wordcount.py").write_text(
        "from streamparse import Topology\n"
        "from spouts.words import WordSpout\n"
        "class OtherCount(Topology):\n"
        "    words = WordSpout.spec()\n"
    )
    second = load_topology_class(other / "wordcount.py")
    assert (first.__name__, second.__name__) == ("WordCount", "OtherCount")
