"""The package of a Flux topology: its YAML, ``resources/``, includes (beside it, above
it, relative to the working directory), project files and Python sources, and nothing
else; a node that unpacks it rebuilds the submitter's plan with no file of the
submitter's left; what cannot be carried is refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
from pathlib import Path

import pytest

from engine.common.cluster.package import MANIFEST, PackageError, flux_contents, unpack_package
from engine.common.launch import LaunchSpec, Submission
from engine.common.submission import load_topology, shell_dir_of
from engine.executor.remote import launch_manifest, unpacked_submission
from engine.submitter.upload import build_topology_package

SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"

TOPOLOGY = f"""\
name: "${{topology.name}}"
includes:
  - file: "parts/bolts.yaml"
  - file: "../common/config.yaml"
  - file: "extra/from_cwd.yaml"
  - file: "../beside_work.yaml"
  - file: "/inc.yaml"
    resource: true
spouts:
  - id: "sentences"
    className: "{SHELL_SPOUT}"
    constructorArgs: [["python3", "spout.py", "${{rounds}}"], ["sentence"]]
    parallelism: ${{spout.parallelism}}
  - id: "numbers"
    className: "flux_numbers:Numbers"
streams:
  - {{from: sentences, to: split, grouping: {{type: SHUFFLE}}}}
  - {{from: split, to: count, grouping: {{type: FIELDS, args: [word]}}}}
  - {{from: numbers, to: count, grouping: {{type: SHUFFLE}}}}
"""
BOLTS = f"""\
bolts:
  - id: "split"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "split.py"], ["word"]]
    parallelism: 2
  - id: "count"
    className: "{SHELL_BOLT}"
    constructorArgs: [["python3", "count.py"]]
"""
NUMBERS = ("from compat.storm_api import Spout\n\n\nclass Numbers(Spout):\n"
           "    outputs = ['word']\n\n    def next_tuple(self):\n        pass\n")


def flux_project(tmp: Path) -> tuple[Path, Path, Path]:
    """``(yaml, properties, cwd)``: a Flux project under ``tmp/tree/flux`` with an
    include above it, two found relative to ``tmp/work`` (one above it), a resource
    include, and files a package must leave out."""
    tree, work = tmp / "tree", tmp / "work"
    files = {
        "tree/flux/topology.yaml": TOPOLOGY,
        "tree/flux/parts/bolts.yaml": BOLTS,
        "tree/common/config.yaml": "config:\n  topology.max.spout.pending: 7\n",
        "work/extra/from_cwd.yaml": "config:\n  from.cwd: 1\n",
        "beside_work.yaml": "config:\n  beside.work: 2\n",
        "tree/flux/resources/inc.yaml": "config:\n  from.resource: 3\n",
        "tree/flux/resources/spout.py": "# a multilang spout\n",
        "tree/flux/resources/split.py": "# a multilang bolt\n",
        "tree/flux/resources/count.py": "# a multilang bolt\n",
        "tree/flux/resources/__pycache__/spout.cpython-311.pyc": "",
        "tree/flux/src/flux_numbers.py": NUMBERS,
        "tree/flux/config.json": json.dumps(
            {"envs": {"prod": {"options": {"from.config.json": 4}}}}
        ),
        "tree/flux/virtualenvs/topology.txt": "",
        # not needed on a node: left out
        "tree/flux/other.yaml": "name: other\n",
        "tree/flux/notes.txt": "notes\n",
        "tree/flux/logs/old.log": "",
        "tree/flux/topologies/old.py": "",
        "tree/flux/dev.properties": "",
        "tree/unrelated.yaml": "",
        "work/unrelated.yaml": "",
    }
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    props = tree / "flux" / "dev.properties"
    props.write_text("topology.name = flux-package\nrounds = 3\nspout.parallelism: 2\n")
    return tree / "flux" / "topology.yaml", props, work


def members(archive: Path) -> tuple[set[str], set[str]]:
    with tarfile.open(archive) as tar:
        return ({m.name for m in tar.getmembers() if m.isfile()},
                {m.name for m in tar.getmembers() if m.isdir()})


def submitted(tmp: Path) -> tuple:
    """The loaded topology, its launch spec and its package, as `heron submit` builds
    them from ``tmp/work``."""
    yaml, props, work = flux_project(tmp)
    loaded = load_topology(yaml, filter_file=props, flux_cwd=work)
    submission = Submission.of(yaml, loaded.plan.name, env=None, config_file=None,
                               options={}, ackers=None, workers=None, flux=loaded.flux)
    spec = LaunchSpec(topology_name=loaded.plan.name, topology_id="flux-package-1",
                      working_dir=str(tmp / "home"), submission=submission)
    package = build_topology_package(loaded, spec, tmp / "out")
    return loaded, spec, package


def test_the_package_of_a_flux_project_holds_what_it_reads_and_nothing_else(
        tmp_path, isolated_imports):
    _loaded, _spec, package = submitted(tmp_path)
    files, dirs = members(package.path)
    # the package's root is tree/ (the farthest ../ of an include beside the YAML);
    # includes found relative to the working directory are under flux-cwd/
    assert files == {MANIFEST, "flux/topology.yaml", "flux/parts/bolts.yaml",
                     "common/config.yaml", "flux/resources/inc.yaml",
                     "flux/resources/spout.py", "flux/resources/split.py",
                     "flux/resources/count.py", "flux/src/flux_numbers.py", "flux/config.json",
                     "flux/virtualenvs/topology.txt", "flux-cwd/work/extra/from_cwd.yaml",
                     "flux-cwd/beside_work.yaml"}
    assert dirs == {"flux/resources", "flux-cwd", "flux-cwd/work"}
    with tarfile.open(package.path) as tar:
        manifest = json.load(tar.extractfile(MANIFEST))
    submission = manifest["submission"]
    assert (submission["project"], submission["flux_cwd"]) == ("flux/topology.yaml",
                                                               "flux-cwd/work")
    assert submission["flux_values"] == {"topology.name": "flux-package", "rounds": "3",
                                         "spout.parallelism": "2"}
    assert manifest["flux"]["includes"]["flux-cwd/beside_work.yaml"] == str(
        tmp_path / "beside_work.yaml")


def test_a_node_rebuilds_the_same_plan_from_the_unpacked_package_alone(
        tmp_path, monkeypatch, isolated_imports):
    loaded, spec, package = submitted(tmp_path)
    node = tmp_path / "node" / "project"
    node.parent.mkdir()
    manifest = unpack_package(package.path, package.sha256, node)
    # nothing of the submitter's is left: not the project, its includes or the filter
    gone = tmp_path / "gone"
    gone.mkdir()
    for name in ("tree", "work", "beside_work.yaml"):
        shutil.move(tmp_path / name, gone / name)
    sys.modules.pop("flux_numbers", None)
    sys.path[:] = [p for p in sys.path if not p.startswith(str(tmp_path / "tree"))]
    monkeypatch.chdir(tmp_path / "node")
    submission = unpacked_submission(manifest, node)
    assert submission.project == str(node / "flux" / "topology.yaml")
    again = LaunchSpec(topology_name=spec.topology_name, topology_id=spec.topology_id,
                       working_dir=str(tmp_path / "node-work"), submission=submission)
    rebuilt = again.load_topology()
    assert rebuilt.plan.to_proto(topology_id="x") == loaded.plan.to_proto(topology_id="x")
    assert rebuilt.plan.config["from.cwd"] == 1 and rebuilt.plan.config["beside.work"] == 2
    assert rebuilt.plan.config["from.config.json"] == 4
    assert sys.modules["flux_numbers"].__file__ == str(node / "flux" / "src" /
                                                          "flux_numbers.py")
    assert rebuilt.shell_dir == node / "flux" / "resources"
    assert shell_dir_of(submission.project) == node / "flux" / "resources"


def test_an_absolute_include_is_refused_in_one_line(tmp_path, isolated_imports):
    yaml, props, work = flux_project(tmp_path)
    yaml.write_text(yaml.read_text().replace('"../beside_work.yaml"',
                                             f'"{tmp_path / "beside_work.yaml"}"'))
    loaded = load_topology(yaml, filter_file=props, flux_cwd=work)
    with pytest.raises(PackageError, match=r"topology.yaml:6: include '/.*beside_work.yaml' "
                                           r"is an absolute path, which a cluster's nodes do "
                                           r"not have; name it relative to the YAML file"):
        flux_contents(loaded.flux)


@pytest.mark.parametrize("where", ["resources/spout.py", "parts/bolts.yaml"])
def test_a_symbolic_link_is_refused_in_one_line(where, tmp_path, isolated_imports):
    yaml, props, work = flux_project(tmp_path)
    link = yaml.parent / where
    target = tmp_path / "real"
    link.rename(target)
    os.symlink(target, link)
    loaded = load_topology(yaml, filter_file=props, flux_cwd=work)
    with pytest.raises(PackageError, match="symbolic link") as caught:
        flux_contents(loaded.flux)
    assert "\n" not in str(caught.value) and str(link.name) in str(caught.value)


def test_a_streamparse_submission_is_not_packed_as_a_flux_one(tmp_path, isolated_imports):
    _loaded, spec, _package = submitted(tmp_path)
    with pytest.raises(PackageError, match="a Flux submission is packed with its Flux files"):
        launch_manifest(spec)
