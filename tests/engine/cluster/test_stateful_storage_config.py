"""A cluster's ``stateful.yaml`` (where effectively-once checkpoints go) and what the
submitter does with it, without a cluster: the keys are read (flat, or nested as Heron
writes them) and checked naming the file; an EFFECTIVELY_ONCE topology that sets no
storage keys of its own gets the cluster's, in its compiled config and in the submission
every node compiles it from; its own keys win; a remote cluster with no root anywhere
is refused before anything is written; other topologies are left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.common.cluster.config import ClusterConfigError, ClusterRef, load_cluster
from engine.common.launch import Submission
from engine.common.submission import load_topology
from engine.config.checkpointing import checkpointing
from engine.config.keys import SAVEPOINTS_KEY, STORAGE_CLASS_KEY, STORAGE_ROOT_KEY
from engine.submitter.checkpoints import storage_options, with_cluster_storage
from engine.submitter.errors import SubmitterError
from engine.submitter.submitter import Submitter
from tests.engine.cluster.test_cluster_config import SLURM, write_cluster

REPO = Path(__file__).resolve().parents[3]
STATEFUL = REPO / "tests" / "e2e" / "heron" / "projects" / "stateful"
WORDCOUNT = REPO / "examples" / "wordcount"
RETAIN_KEY = "heron.statefulstorage.localfs.max.checkpoints"


def slurm(tmp_path: Path, stateful: str | None = None, name: str = "slurm"):
    files = dict(SLURM)
    if stateful is not None:
        files["stateful"] = stateful
    write_cluster(tmp_path, name, **files)
    return load_cluster(tmp_path, name)


def loaded_and_submission(project: Path, name: str, **options):
    loaded = load_topology(project, name=name, cli_options=options)
    return loaded, Submission.of(project, name, env=loaded.env, config_file=None,
                                 options=dict(options), ackers=None, workers=None)


# -- stateful.yaml ----------------------------------------------------------------------
def test_stateful_yaml_is_optional_and_its_keys_are_read(tmp_path):
    assert slurm(tmp_path, name="without").stateful_storage == {}
    config = slurm(tmp_path, "heron.statefulstorage.classname: "
                             "org.apache.heron.statefulstorage.localfs.LocalFileSystemStorage\n"
                             "heron.statefulstorage.localfs.root.path: /shared/checkpoints\n"
                             "heron.statefulstorage.localfs.max.checkpoints: 3\n")
    assert config.stateful_storage == {STORAGE_CLASS_KEY: "localfs",
                                       STORAGE_ROOT_KEY: "/shared/checkpoints", RETAIN_KEY: 3}


def test_heron_s_nested_form_is_read_too(tmp_path):
    config = slurm(tmp_path, "heron.statefulstorage.classname: localfs\n"
                             "heron.statefulstorage.config:\n"
                             "  heron.statefulstorage.localfs.root.path: ~/checkpoints\n")
    assert config.stateful_storage == {STORAGE_CLASS_KEY: "localfs",
                                       STORAGE_ROOT_KEY: "~/checkpoints"}


@pytest.mark.parametrize("text, message", [
    ("heron.statefulstorage.classname: hdfs\n",
     r"stateful.yaml: heron.statefulstorage.classname: 'hdfs' is not one of localfs"),
    ("heron.statefulstorage.localfs.root.path: checkpoints\n",
     r"stateful.yaml: heron.statefulstorage.localfs.root.path must be an absolute path"),
    ("heron.statefulstorage.localfs.root.path: 7\n",
     r"stateful.yaml: heron.statefulstorage.localfs.root.path must be a directory path"),
    ("heron.statefulstorage.localfs.max.checkpoints: 0\n",
     r"stateful.yaml: heron.statefulstorage.localfs.max.checkpoints must be a positive"),
    ("heron.statefulstorage.config: /x\n",
     r"stateful.yaml: heron.statefulstorage.config must be a map"),
    ("heron.statefulstorage.localfs.root.path: /a\nheron.statefulstorage.config:\n"
     "  heron.statefulstorage.localfs.root.path: /b\n",
     r"stateful.yaml: heron.statefulstorage.localfs.root.path is set twice"),
])
def test_mistakes_name_stateful_yaml_and_the_key(tmp_path, text, message):
    with pytest.raises(ClusterConfigError, match=message):
        slurm(tmp_path, text)


def test_a_local_cluster_directory_s_stateful_yaml_is_checked_and_read(tmp_path):
    write_cluster(tmp_path, "local", stateful="heron.statefulstorage.localfs.root.path: /ck\n")
    config = load_cluster(tmp_path, "local")
    assert config.is_local and config.stateful_storage == {STORAGE_ROOT_KEY: "/ck"}


# -- the submitter ----------------------------------------------------------------------
def test_an_effectively_once_topology_gets_the_cluster_s_root_where_nodes_compile_it(
        tmp_path, isolated_imports):
    cluster = slurm(tmp_path, "heron.statefulstorage.localfs.root.path: /shared/ck\n"
                              "heron.statefulstorage.localfs.max.checkpoints: 2\n")
    loaded, submission = loaded_and_submission(STATEFUL, "stateful_wordcount")
    assert STORAGE_ROOT_KEY not in loaded.plan.config
    loaded, submission = with_cluster_storage(cluster, loaded, submission)
    # savepoints go beside the checkpoints, where every node reads them too
    assert submission.options == {STORAGE_ROOT_KEY: "/shared/ck", RETAIN_KEY: 2,
                                  SAVEPOINTS_KEY: "/shared/ck/savepoints"}
    settings = checkpointing(loaded.plan.config)
    assert (settings.root, settings.retained) == ("/shared/ck", 2)
    assert settings.savepoints == "/shared/ck/savepoints"
    # what every instance compiles on its node, from the submission alone
    again = load_topology(submission.project, name=submission.name,
                          cli_options=submission.options)
    assert dict(again.plan.config) == dict(loaded.plan.config)


def test_the_topology_s_own_keys_win(tmp_path, isolated_imports):
    cluster = slurm(tmp_path, "heron.statefulstorage.localfs.root.path: /shared/ck\n"
                              "heron.statefulstorage.localfs.max.checkpoints: 2\n")
    loaded, submission = loaded_and_submission(STATEFUL, "stateful_wordcount",
                                               **{STORAGE_ROOT_KEY: "/mine"})
    assert storage_options(cluster, "stateful_wordcount", loaded.plan.config) == {
        RETAIN_KEY: 2, SAVEPOINTS_KEY: "/mine/savepoints"}
    loaded, submission = with_cluster_storage(cluster, loaded, submission)
    assert loaded.plan.config[STORAGE_ROOT_KEY] == "/mine"
    assert submission.options == {STORAGE_ROOT_KEY: "/mine", RETAIN_KEY: 2,
                                  SAVEPOINTS_KEY: "/mine/savepoints"}


def test_other_reliability_modes_are_left_alone(tmp_path, isolated_imports):
    cluster = slurm(tmp_path, "heron.statefulstorage.localfs.root.path: /shared/ck\n")
    loaded, submission = loaded_and_submission(WORDCOUNT, "wordcount")
    assert with_cluster_storage(cluster, loaded, submission) == (loaded, submission)
    # and with no root at all, nothing is refused: they save nothing
    assert storage_options(slurm(tmp_path, name="bare"), "wordcount", loaded.plan.config) == {}


def test_a_remote_cluster_with_no_root_refuses_before_anything_is_written(
        tmp_path, isolated_imports):
    cluster = slurm(tmp_path)
    loaded, submission = loaded_and_submission(STATEFUL, "stateful_wordcount")
    work = tmp_path / "work"
    submitter = Submitter(cluster, ClusterRef.parse("slurm"), lambda name: work / name)
    with pytest.raises(SubmitterError) as caught:
        # no ZooKeeper is reachable at 10.0.0.1: the refusal must come before it is tried
        submitter.submit(loaded, submission)
    message = str(caught.value)
    assert caught.value.code == 2
    assert "\n" not in message
    assert "EFFECTIVELY_ONCE" in message and STORAGE_ROOT_KEY in message
    assert str(tmp_path / "conf" / "slurm" / "stateful.yaml") in message
    assert not work.exists()
    # the topology's own root is enough
    loaded, submission = loaded_and_submission(STATEFUL, "stateful_wordcount",
                                               **{STORAGE_ROOT_KEY: "/shared/mine"})
    assert storage_options(cluster, "stateful_wordcount", loaded.plan.config) == {
        SAVEPOINTS_KEY: "/shared/mine/savepoints"}


def test_local_keeps_its_default_root_without_stateful_yaml(tmp_path, isolated_imports):
    cluster = load_cluster(tmp_path, "local")
    loaded, submission = loaded_and_submission(STATEFUL, "stateful_wordcount")
    assert with_cluster_storage(cluster, loaded, submission) == (loaded, submission)
