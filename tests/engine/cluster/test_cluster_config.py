"""A cluster described in ~/.heron/conf/CLUSTER/: what is read, and every mistake named
with its file (and line, for YAML) before anything is submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.common.cluster.config import ClusterConfigError, ClusterRef, load_cluster


def write_cluster(home: Path, name: str, **files: str) -> Path:
    directory = home / "conf" / name
    directory.mkdir(parents=True)
    for file, text in files.items():
        (directory / f"{file}.yaml").write_text(text)
    return directory


SLURM = dict(
    scheduler="heron.class.scheduler: slurm\nheron.slurm.job.time.limit: '0'\n",
    statemgr="heron.class.state.manager: zookeeper\n"
             "heron.statemgr.connection.string: 10.0.0.1:2181\n"
             "heron.statemgr.root.path: /heron-prod\n",
    uploader="heron.class.uploader: localfs\n"
             "heron.uploader.localfs.file.system.directory: /shared/packages\n")


def test_cluster_role_env_default_to_the_user_and_default():
    ref = ClusterRef.parse("slurm")
    assert (ref.cluster, ref.environ) == ("slurm", "default") and ref.role
    assert str(ClusterRef.parse("slurm/ana/prod")) == "slurm/ana/prod"
    for bad in ("", "a//b", "a/b/c/d", "sl urm", "../x"):
        with pytest.raises(ClusterConfigError):
            ClusterRef.parse(bad)


def test_a_slurm_cluster_is_read_from_its_three_files(tmp_path):
    write_cluster(tmp_path, "slurm", **SLURM)
    config = load_cluster(tmp_path, "slurm")
    assert (config.scheduler, config.state_manager, config.uploader) == (
        "slurm", "zookeeper", "localfs")
    assert (config.zk_hosts, config.zk_root) == ("10.0.0.1:2181", "/heron-prod")
    assert config.get("heron.slurm.job.time.limit") == "0"


def test_heron_class_names_are_understood(tmp_path):
    write_cluster(
        tmp_path,
        "c",
        **{
            **SLURM,
            "scheduler": "heron.class.scheduler: org.apache.heron.scheduler.slurm.SlurmScheduler\n",
            "uploader": "heron.class.uploader: org.apache.heron.uploader.http.HttpUploader\n"
            "heron.uploader.http.uri: http://10.0.0.1:8080/p\n",
        },
    )
    config = load_cluster(tmp_path, "c")
    assert (config.scheduler, config.uploader) == ("slurm", "http")


def test_local_needs_no_directory(tmp_path):
    config = load_cluster(tmp_path, "local")
    assert config.is_local and config.directory is None


def test_a_missing_cluster_directory_is_named(tmp_path):
    with pytest.raises(ClusterConfigError, match=r"no cluster 'prod': .*conf/prod does not exist"):
        load_cluster(tmp_path, "prod")


def test_a_remote_scheduler_with_local_files_state_is_refused(tmp_path):
    write_cluster(tmp_path, "s", **{**SLURM, "statemgr": "heron.class.state.manager: local\n"})
    with pytest.raises(ClusterConfigError, match=r"statemgr.yaml: the slurm scheduler .* must be "
                                                 r"zookeeper"):
        load_cluster(tmp_path, "s")


def test_mistakes_name_the_file_and_key(tmp_path):
    write_cluster(tmp_path, "a", **{**SLURM, "uploader": "heron.class.uploader: ftp\n"})
    with pytest.raises(ClusterConfigError, match=r"uploader.yaml: heron.class.uploader: 'ftp'"):
        load_cluster(tmp_path, "a")
    write_cluster(tmp_path, "b", **{**SLURM, "uploader": "heron.class.uploader: localfs\n"})
    with pytest.raises(ClusterConfigError,
                       match=r"heron.uploader.localfs.file.system.directory is required"):
        load_cluster(tmp_path, "b")
    write_cluster(tmp_path, "c", **{**SLURM, "scheduler": "heron.class.scheduler: [slurm\n"})
    with pytest.raises(ClusterConfigError, match=r"scheduler.yaml:\d+: not valid YAML"):
        load_cluster(tmp_path, "c")
    write_cluster(tmp_path, "d", **{**SLURM, "scheduler": SLURM["scheduler"]
                                    + "heron.statemgr.root.path: /other\n"})
    with pytest.raises(ClusterConfigError, match=r"heron.statemgr.root.path is also set, "
                                                 r"differently"):
        load_cluster(tmp_path, "d")
    write_cluster(tmp_path, "e", **{**SLURM, "statemgr": "heron.class.state.manager: zookeeper\n"})
    with pytest.raises(ClusterConfigError, match=r"connection.string is required"):
        load_cluster(tmp_path, "e")
