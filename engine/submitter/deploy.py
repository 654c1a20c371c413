"""Submitting a compiled topology: pack it, write its launch file and its state.

Heron's submit order (LaunchRunner): the topology, then the packing plan, then the
execution state; a failed step removes what the earlier ones wrote, so a half-submitted
topology never blocks the name. The submitter (every cluster's ``heron submit``) and
``heron run --engine heron`` share it.
"""

from __future__ import annotations

import getpass
import time
import uuid
from pathlib import Path

from engine.common.cluster.config import ClusterRef
from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.process.restart_policy import RestartPolicy
from engine.common.security.keys import TopologyKeys, keys_belong_in, plaintext_requested
from engine.common.submission import LoadedTopology
from engine.messages import execution_state_pb2, topology_pb2
from engine.packing import pack
from engine.spi.statemgr import StateManager


class TopologyExistsError(Exception):
    """A topology of this name is already running (its state exists)."""


def deploy(loaded: LoadedTopology, *, state: StateManager, state_spec: StateManagerSpec,
           working_dir: Path,
           submission: Submission, deactivated: bool = False, multilang: bool = False,
           multilang_serializer: str = "json", capture_all: bool = False,
           capture_all_streams: bool = False, cluster: str = "local") -> LaunchSpec:
    """Write the launch file and the topology's state; returns the launch spec."""
    plan = loaded.plan
    name = plan.name
    if state.get("topologies", name) is not None:
        raise TopologyExistsError(f"topology {name!r} is already running; "
                                  f"`heron kill {name}` first")
    packing = pack(plan)
    topology_id = f"{name}-{uuid.uuid4().hex[:12]}"
    spec = LaunchSpec(topology_name=name, topology_id=topology_id,
                      working_dir=str(Path(working_dir).resolve()), submission=submission,
                      state=state_spec, cluster=cluster, multilang=multilang,
                      multilang_serializer=multilang_serializer,
                      shell_cwd=str(loaded.shell_dir), capture_all=capture_all,
                      capture_all_streams=capture_all_streams)
    spec.set_restart_policy(RestartPolicy.from_config(plan.config))
    spec.save()
    # The topology's key pair, made here and nowhere else: owner-only beside the launch
    # file for the processes the executors start, and in the state manager (owner-only
    # files, or a digest-ACL'd znode) for command-line clients and the tracker.
    keys = TopologyKeys.generate(name, topology_id,
                                 plaintext=plaintext_requested(dict(plan.config)))
    keys.save(spec.home)
    topology = plan.to_proto(topology_id=topology_id)
    topology.state = topology_pb2.PAUSED if deactivated else topology_pb2.RUNNING
    role, environ = getpass.getuser(), loaded.env or ""
    if cluster != "local":
        # the submit's CLUSTER/ROLE/ENV says where it runs, not the project's config.json
        # env (which chose the topology's options)
        ref = ClusterRef.parse(cluster)
        role, environ = ref.role, ref.environ
    execution = execution_state_pb2.ExecutionState(
        topology_name=name, topology_id=topology_id, submission_time=int(time.time()),
        submission_user=getpass.getuser(), cluster=cluster, environ=environ, role=role)
    written: list[str] = []
    try:
        nodes = [("topologies", topology), ("packingplans", packing.to_proto()),
                 ("executionstate", execution)]
        if keys_belong_in(state):
            nodes.insert(0, ("keys", keys.to_proto()))
        for kind, message in nodes:
            state.create(kind, name, message)
            written.append(kind)
    except BaseException:
        for kind in reversed(written):
            try:
                state.delete(kind, name)
            except Exception:
                pass
        raise
    return spec
