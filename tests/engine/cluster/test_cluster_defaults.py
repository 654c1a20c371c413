"""A cluster's topology defaults (``defaults.yaml``, and scheduler.yaml's ``topology.*`` /
``heron.resources.*`` keys), without a cluster: read and checked naming the file and key;
the lowest precedence (cluster defaults < the project's config.json env options <
Topology.config < ``-o``), in the compiled config and in the submission every node
compiles the topology from; and sized by them, a container fits a node of 1,000 MB with
no ``-o``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.common.cluster.config import ClusterConfigError, load_cluster
from engine.common.launch import Submission
from engine.common.submission import load_topology
from engine.packing import pack
from engine.scheduler.slurm.sizing import container_resources
from engine.submitter.submitter import cluster_default_options, with_cluster_defaults
from tests.engine.cluster.test_cluster_config import SLURM, write_cluster

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"

SMALL_NODES = ("heron.resources.instance.ram: 134217728\n"
               "heron.resources.instance.cpu: 0.5\n"
               "topology.container.padding.ram: 268435456\n"
               "topology.container.padding.cpu: 1\n")


def slurm(tmp_path: Path, defaults: str | None = None, scheduler_extra: str = "",
          name: str = "slurm"):
    files = dict(SLURM)
    files["scheduler"] += scheduler_extra
    if defaults is not None:
        files["defaults"] = defaults
    write_cluster(tmp_path, name, **files)
    return load_cluster(tmp_path, name)


def project(tmp_path: Path, env_options: dict, topology_config: dict) -> Path:
    """examples/wordcount with config.json env options and a Topology.config of its own."""
    root = tmp_path / "project"
    shutil.copytree(WORDCOUNT, root)
    config = json.loads((root / "config.json").read_text())
    config["envs"]["prod"]["options"] = env_options
    (root / "config.json").write_text(json.dumps(config))
    topology = root / "topologies" / "wordcount.py"
    topology.write_text(topology.read_text() + f"    config = {topology_config!r}\n")
    return root


def loaded_and_submission(root: Path, options: dict, **flags):
    loaded = load_topology(root, name="wordcount", cli_options=options, **flags)
    return loaded, Submission.of(root, "wordcount", env=loaded.env, config_file=None,
                                 options=dict(options), ackers=flags.get("ackers"),
                                 workers=flags.get("workers"))


# -- reading -----------------------------------------------------------------------------
def test_defaults_yaml_and_scheduler_yaml_s_topology_keys_are_the_defaults(tmp_path):
    assert slurm(tmp_path, name="none").topology_defaults == {}
    config = slurm(tmp_path, SMALL_NODES + "topology.message.timeout.secs: 60\n",
                   scheduler_extra="topology.workers: 2\n")
    assert config.topology_defaults == {
        "heron.resources.instance.ram": 134217728, "heron.resources.instance.cpu": 0.5,
        "topology.container.padding.ram": 268435456, "topology.container.padding.cpu": 1,
        "topology.message.timeout.secs": 60, "topology.workers": 2}
    # the scheduler's own keys are not topology defaults
    assert "heron.slurm.job.time.limit" not in config.topology_defaults
    # scheduler.yaml alone may size the containers too
    alone = slurm(tmp_path, scheduler_extra=SMALL_NODES, name="alone")
    assert alone.topology_defaults["topology.container.padding.ram"] == 268435456


def test_a_local_cluster_directory_may_have_defaults(tmp_path):
    write_cluster(tmp_path, "local", defaults="topology.workers: 3\n")
    config = load_cluster(tmp_path, "local")
    assert config.is_local and config.topology_defaults == {"topology.workers": 3}


@pytest.mark.parametrize("defaults, extra, message", [
    ("heron.slurm.partition: debug\n", "",
     r"defaults.yaml: heron.slurm.partition describes the cluster.*scheduler.yaml"),
    ("heron.statefulstorage.localfs.root.path: /x\n", "",
     r"defaults.yaml: heron.statefulstorage.localfs.root.path .*stateful.yaml"),
    ("heron.class.scheduler: local\n", "", r"defaults.yaml: heron.class.scheduler"),
    ("heron.resources.instance.ram: 128MB\n", "",
     r"defaults.yaml: heron.resources.instance.ram must be a whole number of bytes"),
    ("heron.resources.instance.ram: 0\n", "", r"heron.resources.instance.ram must be"),
    ("heron.resources.instance.cpu: 0\n", "", r"heron.resources.instance.cpu must be a number"),
    ("", "topology.container.padding.cpu: lots\n",
     r"scheduler.yaml: topology.container.padding.cpu must be a number of cores"),
    ("topology.workers: 2\n", "topology.workers: 3\n",
     r"topology.workers is also set, differently"),
    ("- a list\n", "", r"defaults.yaml: expected a map"),
])
def test_mistakes_name_the_file_and_the_key(tmp_path, defaults, extra, message):
    with pytest.raises(ClusterConfigError, match=message):
        slurm(tmp_path, defaults, scheduler_extra=extra)


def test_fractional_cpus_and_a_zero_padding_are_accepted(tmp_path):
    config = slurm(tmp_path, "heron.resources.instance.cpu: 0.25\n"
                             "topology.container.padding.cpu: 0.5\n"
                             "topology.container.padding.ram: 0\n")
    assert config.topology_defaults["heron.resources.instance.cpu"] == 0.25


# -- precedence ----------------------------------------------------------------------------
def test_precedence_cluster_defaults_lt_env_options_lt_topology_config_lt_o(
        tmp_path, isolated_imports):
    cluster = slurm(tmp_path, "x.cluster: cluster\nx.env: cluster\nx.topology: cluster\n"
                              "x.cli: cluster\ntopology.workers: 2\n")
    root = project(tmp_path, env_options={"x.env": "env", "x.topology": "env", "x.cli": "env"},
                   topology_config={"x.topology": "topology", "x.cli": "topology"})
    loaded, submission = loaded_and_submission(root, {"x.cli": "cli"})
    assert cluster_default_options(cluster, loaded, submission) == {
        "x.cluster": "cluster", "topology.workers": 2}
    loaded, submission = with_cluster_defaults(cluster, loaded, submission)
    config = loaded.plan.config
    assert [config[f"x.{k}"] for k in ("cluster", "env", "topology", "cli")] == [
        "cluster", "env", "topology", "cli"]
    # the engine's own fallback (one worker) is no setting: the cluster's default wins it
    assert config["topology.workers"] == 2
    # every node compiles the topology from the submission: it carries the defaults
    assert submission.options == {"x.cluster": "cluster", "topology.workers": 2, "x.cli": "cli"}
    again = load_topology(submission.project, name="wordcount", env=submission.env,
                          cli_options=submission.options)
    assert dict(again.plan.config) == dict(config)


def test_flags_that_set_keys_win_over_the_cluster_s_defaults(tmp_path, isolated_imports):
    cluster = slurm(tmp_path, "topology.workers: 2\ntopology.acker.executors: 0\n")
    root = project(tmp_path, {}, {})
    loaded, submission = loaded_and_submission(root, {}, workers=3, ackers=2)
    loaded, submission = with_cluster_defaults(cluster, loaded, submission)
    assert loaded.plan.config["topology.workers"] == 3
    assert loaded.plan.config["topology.acker.executors"] == 2


def test_a_cluster_without_defaults_leaves_the_submission_alone(tmp_path, isolated_imports):
    cluster = slurm(tmp_path)
    loaded, submission = loaded_and_submission(WORDCOUNT, {})
    assert with_cluster_defaults(cluster, loaded, submission) == (loaded, submission)


# -- sizing ---------------------------------------------------------------------------------
def test_sized_by_the_cluster_s_defaults_a_container_fits_a_1000_mb_node(
        tmp_path, isolated_imports):
    cluster = slurm(tmp_path, SMALL_NODES)
    loaded, submission = loaded_and_submission(WORDCOUNT, {}, workers=2)
    scheduler = cluster.values
    # without them: Heron's 2 GiB padding, which no 1,000 MB node holds
    plain = pack(loaded.plan)
    assert container_resources(plain, 1, loaded.plan.config, scheduler)[1] > 1000
    loaded, submission = with_cluster_defaults(cluster, loaded, submission)
    packing = pack(loaded.plan)
    sizes = {c.id: container_resources(packing, c.id, loaded.plan.config, scheduler)
             for c in packing.containers}
    sizes[0] = container_resources(packing, 0, loaded.plan.config, scheduler)
    # three instances over two containers, each sized like the larger: 2 x 128 MiB +
    # 256 MiB, 2 x 0.5 + 1 CPUs; container 0 the padding alone
    assert sorted(len(c.instances) for c in packing.containers) == [1, 2]
    assert sizes == {0: (1, 256), 1: (2, 512), 2: (2, 512)}
    assert all(mb <= 1000 for _, mb in sizes.values())
    # fractions add up and the job's total is rounded up: 2 x 0.3 + 0.5 = 1.1 -> 2 CPUs
    thin = slurm(tmp_path, SMALL_NODES.replace("cpu: 0.5", "cpu: 0.3").replace(
        "padding.cpu: 1", "padding.cpu: 0.5"), name="thin")
    loaded, submission = loaded_and_submission(WORDCOUNT, {}, workers=2)
    loaded, submission = with_cluster_defaults(thin, loaded, submission)
    assert container_resources(pack(loaded.plan), 1, loaded.plan.config, scheduler) == (2, 512)
    assert container_resources(pack(loaded.plan), 0, loaded.plan.config, scheduler) == (1, 256)
    # -o still wins over the cluster
    loaded, submission = loaded_and_submission(
        WORDCOUNT, {"topology.container.padding.ram": 536870912}, workers=2)
    loaded, _ = with_cluster_defaults(cluster, loaded, submission)
    assert container_resources(pack(loaded.plan), 0, loaded.plan.config, scheduler) == (1, 512)


def test_a_flux_file_takes_the_defaults_its_config_does_not_set_and_keeps_its_values(
        tmp_path, isolated_imports):
    """A Flux topology: its own ``config`` section wins over the cluster's defaults, and
    the topology compiled again with them is rebuilt with the recorded ``${...}`` values
    (the filter file is gone by then, as on a node)."""
    flux = tmp_path / "flux"
    shutil.copytree(REPO / "examples" / "flux_wordcount", flux,
                    ignore=shutil.ignore_patterns("logs", "__pycache__"))
    properties = tmp_path / "dev.properties"
    shutil.copy(flux / "dev.properties", properties)
    yaml_file = flux / "wordcount.yaml"
    loaded = load_topology(yaml_file, filter_file=properties)
    submission = Submission.of(yaml_file, loaded.plan.name, env=None, config_file=None,
                               options={}, ackers=None, workers=None, flux=loaded.flux)
    properties.unlink()
    cluster = slurm(tmp_path, defaults="topology.workers: 3\ntopology.max.spout.pending: 7\n"
                                       "topology.message.timeout.secs: 45\n")
    again, submission = with_cluster_defaults(cluster, loaded, submission)
    config = again.plan.config
    assert config["topology.workers"] == 1  # the Flux file's own config wins
    assert config["topology.max.spout.pending"] == 100  # ${max.spout.pending}, recorded
    assert config["topology.message.timeout.secs"] == 45  # not set by it: the default
    assert again.plan.components["count"].parallelism == 2  # ${count.parallelism}
    assert submission.options == {"topology.message.timeout.secs": 45}
