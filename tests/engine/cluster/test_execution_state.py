"""What a submission records as where it runs: the ``CLUSTER/ROLE/ENV`` the submit named
(the tracker and ``heron list`` show it), not the project's config.json env, which only
chose the topology's options; a local run keeps its config.json env."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from engine.common.launch import StateManagerSpec, Submission
from engine.common.submission import load_topology
from engine.submitter.deploy import deploy

pytestmark = pytest.mark.timeout(60)

PROJECT = Path(__file__).resolve().parents[3] / "examples" / "wordcount"


@pytest.mark.parametrize("cluster, role, environ", [
    ("mycluster/ops/staging", "ops", "staging"),
    ("mycluster", getpass.getuser(), "default"),
    ("local", getpass.getuser(), "prod"),
])
def test_the_execution_state_names_the_submit_s_role_and_environment(
        tmp_path, isolated_imports, cluster, role, environ):
    spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    loaded = load_topology(PROJECT, name="wordcount", env="prod")
    assert loaded.env == "prod"
    with spec.open() as state:
        deploy(loaded, state=state, state_spec=spec, cluster=cluster,
               working_dir=tmp_path / "home" / "topologies" / "wordcount",
               submission=Submission(project=str(PROJECT), name="wordcount", options={}))
        execution = state.get("executionstate", "wordcount")
    assert (execution.cluster, execution.role, execution.environ) == (cluster, role, environ)
